package source

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func manyServices(n int) *Snapshot {
	snap := &Snapshot{Services: make([]*corev1.Service, n)}
	for i := range n {
		ann := map[string]string{
			PrefixAlpha + "hostname":                           fmt.Sprintf("svc-%d.example.com", i),
			PrefixAlpha + "ttl":                                "60",
			PrefixAlpha + "set-identifier":                     "blue",
			PrefixAlpha + "aws-weight":                         "10",
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Service"}`,
		}
		snap.Services[i] = lbService(fmt.Sprintf("svc-%d", i), ann, host(fmt.Sprintf("lb-%d.elb.amazonaws.com", i)))
	}
	return snap
}

// TestTenThousandServices converts a large cluster completely; its speed is measured by
// BenchmarkServices10k, not asserted.
func TestTenThousandServices(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	snap := manyServices(10000)
	src := mustNew(t, Config{})
	r := src.Endpoints(snap)
	if len(r.Endpoints) != 10000 || len(r.Invalid) != 0 {
		t.Fatalf("endpoints %d invalid %d", len(r.Endpoints), len(r.Invalid))
	}
}

func BenchmarkServices10k(b *testing.B) {
	snap := manyServices(10000)
	src := mustNew(b, Config{})
	b.ReportAllocs()
	for b.Loop() {
		src.Endpoints(snap)
	}
}
