package albproxy

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkProxy compares a GET straight to a backend with the same GET through the
// proxy (rule matching, weighted choice, round-robin, counting, reverse proxying), over
// keep-alive connections on loopback. "serial" is one client at a time and reports the
// latency percentiles; "parallel" is GOMAXPROCS clients and measures throughput.
func BenchmarkProxy(b *testing.B) {
	be := newBackend(b, "a")
	tg := tgOf("g", 0, be)
	tg.HealthCheck.Interval, tg.HealthCheck.Timeout = 5*time.Second, time.Second
	p := startProxy(b, oneListener(forward("g", 1, "g2", 0), []Rule{
		{ID: "r", Priority: 1, Conditions: []Condition{{Field: FieldPathPattern, Values: []string{"/api/*"}}}, Action: forward("g2", 1)},
	}, tg, TargetGroup{ID: "g2", HealthCheck: tg.HealthCheck}))
	waitHealth(b, p, "g", StateHealthy, be.addr())

	for _, tc := range []struct{ name, url string }{
		{"direct", "http://" + be.addr() + "/"},
		{"proxy", "http://" + p.Addr("l1") + "/"},
	} {
		b.Run(tc.name+"/serial", func(b *testing.B) {
			c := newClient(b)
			lat := make([]time.Duration, 0, 1<<16)
			for b.Loop() {
				start := time.Now()
				if r := get(c, tc.url, ""); r.status != http.StatusOK {
					b.Fatalf("%+v", r)
				}
				if len(lat) < cap(lat) {
					lat = append(lat, time.Since(start))
				}
			}
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			}
		})
		b.Run(tc.name+"/parallel", func(b *testing.B) {
			c := newClient(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if r := get(c, tc.url, ""); r.status != http.StatusOK {
						b.Errorf("%+v", r)
						return
					}
				}
			})
		})
	}
}
