package changes

import (
	"fmt"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// BenchmarkCalculate100k plans a zone of 100,000 owned records (plus their 100,000
// ownership TXT records) where 1 % of the desired records changed target: the figure
// BENCHMARKS.md quotes (goal < 250 ms).
func BenchmarkCalculate100k(b *testing.B) {
	const n = 100_000
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	current := make([]*endpoint.Endpoint, 0, 2*n)
	desired := make([]*endpoint.Endpoint, 0, n)
	for i := range n {
		name := fmt.Sprintf("svc%06d.apps.example.com", i)
		res := fmt.Sprintf("service/default/svc%06d", i)
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		cur := weighted(rec(name, "A", ip), "blue", 1)
		lab := cur.Clone()
		lab.Labels = endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: res}
		current = append(current, cur)
		current = append(current, reg.For(lab)...)
		want := from(weighted(rec(name, "A", ip), "blue", 1), res)
		if i%100 == 0 {
			want.Targets = endpoint.NewTargets("192.0.2.1")
		}
		desired = append(desired, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := Calculate(Input{Desired: desired, Current: current, Registry: reg})
		if p.Summary.Update != n/100 {
			b.Fatalf("planned %d updates, want %d", p.Summary.Update, n/100)
		}
	}
}
