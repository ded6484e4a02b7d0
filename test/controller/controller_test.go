package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestControllerPublishesLiveObjects: the controller publishes from live Services, follows
// an annotation change, keeps the record of an object that turned invalid and says so
// with a Warning event on it, picks up a CRD installed after it started, deletes the
// record of a deleted object, and makes no Route 53 call while nothing changes.
func TestControllerPublishesLiveObjects(t *testing.T) {
	e := setup(t)
	kc, client, sb, dns, z := e.kc, e.client, e.sb, e.dns, e.zone

	lbService(t, client, "web", "192.0.2.10", map[string]string{alpha + "hostname": "web.example.com", alpha + "ttl": "60"})
	ctl := startController(t, "controller", kc.Kubeconfig, sb, "--source", "service", "--source", "crd",
		"--txt-owner-id", "blue", "--leader-elect=false", "--crd-poll-interval", "1s", "--debounce", "100ms", "--interval", "1s")

	eventually(t, 20*time.Second, "first sync publishes web", hasRecord(t, dns, z, "web.example.com A 192.0.2.10"))

	// An annotation change is followed.
	annotate(t, client, "web", alpha+"hostname", "www.example.com")
	eventually(t, 10*time.Second, "renamed record", func() (bool, string) {
		got := records(t, dns, z)
		s := strings.Join(got, "\n")
		return strings.Contains(s, "www.example.com A 192.0.2.10") && !strings.Contains(s, "web.example.com A"), s
	})

	// The object turns invalid: its record stays, and a Warning event on it names the
	// annotation and the value.
	annotate(t, client, "web", alpha+"ttl", "soon")
	eventually(t, 10*time.Second, "warning event on the Service", func() (bool, string) {
		evs, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Type+" "+e.Reason+" "+e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+": "+e.Message)
			if e.Type == corev1.EventTypeWarning && e.Reason == "InvalidDNSInput" && e.InvolvedObject.Name == "web" &&
				e.InvolvedObject.UID != "" && strings.Contains(e.Message, alpha+"ttl") && strings.Contains(e.Message, `"soon"`) {
				return true, ""
			}
		}
		return false, strings.Join(seen, "\n")
	})
	if got := records(t, dns, z); !strings.Contains(strings.Join(got, "\n"), "www.example.com A 192.0.2.10") {
		t.Fatalf("the invalid object's record was not kept: %q", got)
	}
	if !strings.Contains(ctl.Log(), `"msg":"invalid object"`) {
		t.Errorf("no error log line for the invalid object")
	}
	eventually(t, 5*time.Second, "invalid object counted", func() (bool, string) {
		v := ctl.Metric(t, `crossfade_invalid_objects{kind="Service",reason="ttl"}`)
		return v == 1, fmt.Sprint(v)
	})
	annotate(t, client, "web", alpha+"ttl", "60")

	// A CRD installed after the start is picked up without a restart.
	kc.InstallCRDs(t, "../../deploy/crds")
	time.Sleep(2 * time.Second) // the API server refuses objects of a CRD younger than this (kubetest.InstallCRDs)
	dyn := dynamic.NewForConfigOrDie(kc.Config())
	de := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": "api", "namespace": "default"},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": "api.example.com", "recordType": "A", "targets": []any{"192.0.2.20"}, "recordTTL": int64(60)}}},
	}}
	gvr := schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(context.Background(), de, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "DNSEndpoint published", hasRecord(t, dns, z, "api.example.com A 192.0.2.20"))

	// Idle: no Route 53 call at all while nothing changes.
	time.Sleep(time.Second) // let the last reconcile finish
	before := sandboxtest.APICalls(t, sb)
	time.Sleep(5 * time.Second)
	after := sandboxtest.APICalls(t, sb)
	for op, n := range after {
		if n != before[op] && !strings.Contains(op, "/_sandbox") {
			t.Errorf("idle: %s went from %d to %d calls", op, before[op], n)
		}
	}

	// Operability: ready, leading, and the Route 53 calls counted by operation.
	if code, body := ctl.Get(t, "/readyz"); code != 200 || body != "ok" {
		t.Errorf("/readyz = %d %q, want 200 ok", code, body)
	}
	if code, _ := ctl.Get(t, "/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	for series, want := range map[string]float64{
		"crossfade_leader": 1,
		`crossfade_invalid_objects{kind="Service",reason="ttl"}`: 0,
		`crossfade_records_managed{zone="example.com"}`:          2,
	} {
		if got := ctl.Metric(t, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	for _, series := range []string{
		`crossfade_provider_api_calls_total{operation="ListResourceRecordSets",result="ok"}`,
		`crossfade_provider_api_calls_total{operation="ChangeResourceRecordSets",result="ok"}`,
		`crossfade_changes_applied_total{action="create"}`,
		`crossfade_zone_cache_age_seconds{zone="example.com"}`,
		"crossfade_last_successful_reconcile_timestamp_seconds",
	} {
		if got := ctl.Metric(t, series); got <= 0 {
			t.Errorf("%s = %v, want > 0", series, got)
		}
	}

	// A deleted object's record goes.
	if err := client.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "deleted Service's record removed", func() (bool, string) {
		s := strings.Join(records(t, dns, z), "\n")
		return !strings.Contains(s, "www.example.com"), s
	})
}
