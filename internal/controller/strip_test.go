package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripKeepsWhatSourcesRead: strip drops what no source reads (managedFields,
// kubectl's last-applied copy, a Node's heartbeat and images, an Ingress's paths) and
// keeps what they do; a Node update that only moved its heartbeat triggers nothing.
func TestStripKeepsWhatSourcesRead(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "x", Namespace: "default", UID: "u1",
			Annotations:   map[string]string{lastApplied: "{…}", "external-dns.alpha.kubernetes.io/hostname": "x.example.com"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}
	}
	node := func(heartbeat int64) *corev1.Node {
		return &corev1.Node{ObjectMeta: meta(),
			Spec: corev1.NodeSpec{Unschedulable: true, PodCIDR: "10.1.0.0/24"},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.1"}},
				Images:     []corev1.ContainerImage{{Names: []string{"big"}}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, LastHeartbeatTime: metav1.Unix(heartbeat, 0)}},
			}}
	}
	got, err := strip(node(1))
	if err != nil {
		t.Fatal(err)
	}
	n := got.(*corev1.Node)
	if n.ManagedFields != nil || n.Annotations[lastApplied] != "" || n.Status.Images != nil || n.Status.Conditions != nil || n.Spec.PodCIDR != "" {
		t.Errorf("strip kept what no source reads: %+v", n)
	}
	if n.UID != "u1" || n.Annotations["external-dns.alpha.kubernetes.io/hostname"] == "" || !n.Spec.Unschedulable || len(n.Status.Addresses) != 1 {
		t.Errorf("strip dropped what sources read: %+v", n)
	}
	older, _ := strip(node(1))
	newer, _ := strip(node(2))
	if !sameForSources(older, newer) {
		t.Error("a heartbeat-only Node update would trigger a reconcile")
	}
	moved := node(2)
	moved.Status.Addresses[0].Address = "192.0.2.2"
	movedStripped, _ := strip(moved)
	if sameForSources(older, movedStripped) {
		t.Error("a Node whose address changed compares equal")
	}

	ing := &networkingv1.Ingress{ObjectMeta: meta(), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
		Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/"}}}}}}}}
	got, _ = strip(ing)
	if i := got.(*networkingv1.Ingress); i.Spec.Rules[0].Host != "shop.example.com" || i.Spec.Rules[0].HTTP != nil {
		t.Errorf("Ingress after strip: %+v", i.Spec)
	}
}
