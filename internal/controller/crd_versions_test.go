package controller

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// TestWatcherFollowsCRDVersions: on a real kube-apiserver, a CRD-served kind whose CRD
// is upgraded in place (Istio's Gateway from v1alpha3 to v1, the old version no longer
// served) is watched at the new version, so later changes still arrive; a CRD that is
// removed stops its informer after a few polls and the kind counts as absent, its
// snapshot complete.
func TestWatcherFollowsCRDVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	kube.InstallCRDs(t, "testdata/istio-gateway-v1alpha3.yaml")
	time.Sleep(2 * time.Second) // the API server refuses objects of a CRD younger than this (kubetest.InstallCRDs)
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(kube.Config())
	gateways := func(v string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: "networking.istio.io", Version: v, Resource: "gateways"}).Namespace("default")
	}
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1alpha3", "kind": "Gateway",
		"metadata": map[string]any{"name": "public", "namespace": "default"},
		"spec":     map[string]any{"servers": []any{map[string]any{"hosts": []any{"a.example.com"}}}},
	}}
	if _, err := gateways("v1alpha3").Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	disc := &flakyDiscovery{DiscoveryInterface: kube.Clientset(t).Discovery(), gv: "networking.istio.io/v1alpha3"}
	w, err := NewWatcher(flakyClient{Interface: kube.Clientset(t), disc: disc}, dyn, WatchConfig{Sources: []string{SourceIstioGateway}, CRDPoll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	hosts := func() (string, bool) {
		snap, complete := w.Snapshot()
		var out []string
		for _, g := range snap.IstioGateways {
			for _, s := range g.Spec.Servers {
				out = append(out, s.Hosts...)
			}
		}
		return fmt.Sprint(out), complete
	}
	waitFor := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, complete := hosts()
			if got == want && complete {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: snapshot hosts %s (complete %v), want %s complete", what, got, complete, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("watched at v1alpha3", "[a.example.com]")
	if v := w.APIVersion("Gateway"); v != "networking.istio.io/v1alpha3" {
		t.Fatalf("APIVersion = %q", v)
	}

	// An API server that has just restarted answers 404 for a CRD group for a moment:
	// fewer polls than unservedPolls in a row keep the informer and its objects.
	w.mu.Lock()
	before := w.crds[0].informer
	w.mu.Unlock()
	disc.notFound.Store(unservedPolls - 1)
	for disc.notFound.Load() > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few more polls, answered
	w.mu.Lock()
	after := w.crds[0].informer
	w.mu.Unlock()
	if after != before {
		t.Fatalf("%d answers of 404 in a row restarted the informer", unservedPolls-1)
	}
	waitFor("after brief 404s", "[a.example.com]")

	// The upgrade: v1 served and stored, v1alpha3 no longer served.
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd, err := crds.Get(ctx, "gateways.networking.istio.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	schemaAny := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	_ = unstructured.SetNestedSlice(crd.Object, []any{
		map[string]any{"name": "v1", "served": true, "storage": true, "schema": schemaAny},
		map[string]any{"name": "v1alpha3", "served": false, "storage": false, "schema": schemaAny},
	}, "spec", "versions")
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for w.APIVersion("Gateway") != "networking.istio.io/v1" {
		if time.Now().After(deadline) {
			t.Fatalf("still watching %s after the upgrade", w.APIVersion("Gateway"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A change made through the new version arrives.
	var got *unstructured.Unstructured
	for {
		if got, err = gateways("v1").Get(ctx, "public", metav1.GetOptions{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = unstructured.SetNestedSlice(got.Object, []any{map[string]any{"hosts": []any{"b.example.com"}}}, "spec", "servers")
	if _, err := gateways("v1").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("a change after the upgrade", "[b.example.com]")

	// The CRD removed: its objects go, the informer stops, the kind is absent.
	if err := crds.Delete(ctx, "gateways.networking.istio.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the CRD removed", "[]")
	deadline = time.Now().Add(20 * time.Second)
	for {
		w.mu.Lock()
		i := slices.IndexFunc(w.crds, func(k *crdKind) bool { return k.kind == "Gateway" })
		stopped, absent := w.crds[i].informer == nil, w.crds[i].absent
		w.mu.Unlock()
		if stopped && absent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the CRD was removed: informer stopped %v, absent %v", stopped, absent)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flakyDiscovery answers 404 for gv while notFound is above zero, as an API server that
// has just restarted does for CRD groups; otherwise it asks the real one.
type flakyDiscovery struct {
	discovery.DiscoveryInterface
	gv       string
	notFound atomic.Int32
}

func (f *flakyDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if gv == f.gv && f.notFound.Add(-1) >= 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv}, "")
	}
	return f.DiscoveryInterface.ServerResourcesForGroupVersion(gv)
}

// flakyClient is a real clientset whose discovery is disc.
type flakyClient struct {
	kubernetes.Interface
	disc *flakyDiscovery
}

func (c flakyClient) Discovery() discovery.DiscoveryInterface { return c.disc }
