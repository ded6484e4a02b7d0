package metrics

import (
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/crossfade-io/crossfade/internal/changes"
)

// TestScrapeShowsEveryMetric sets every metric through the typed API and reads it back
// the way Prometheus does: over HTTP on loopback, parsed by expfmt.
func TestScrapeShowsEveryMetric(t *testing.T) {
	m := New()
	at := time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	m.now = func() time.Time { return at }

	m.SetRecords(map[string]int{"example.com": 12, "example.org": 4})
	m.AddChanges(map[changes.Action]int{changes.Create: 3, changes.Delete: 1})
	m.AddChanges(map[changes.Action]int{changes.Create: 2, changes.Upsert: 5})
	m.ObserveReconcile(40*time.Millisecond, nil)
	m.ObserveReconcile(2*time.Second, errors.New("zone example.com: throttled"))
	m.SetCacheAges(func() map[string]time.Duration { return map[string]time.Duration{"example.com": 90 * time.Second} })
	m.SetInvalid(map[InvalidKey]int{{Kind: "Service", Reason: "aws-weight"}: 2, {Kind: "Ingress", Reason: "set-identifier"}: 1})
	m.SetConflicts(3, 1)
	m.SetLeader(true)

	fams := scrape(t, serve(t, m.Handler(nil)))
	for _, tc := range []struct {
		name   string
		typ    dto.MetricType
		labels []string
		want   float64
	}{
		{NameRecordsManaged, dto.MetricType_GAUGE, []string{"zone", "example.com"}, 12},
		{NameRecordsManaged, dto.MetricType_GAUGE, []string{"zone", "example.org"}, 4},
		{NameChangesApplied, dto.MetricType_COUNTER, []string{"action", "create"}, 5},
		{NameChangesApplied, dto.MetricType_COUNTER, []string{"action", "delete"}, 1},
		{NameChangesApplied, dto.MetricType_COUNTER, []string{"action", "upsert"}, 5},
		{NameReconciles, dto.MetricType_COUNTER, []string{"result", "ok"}, 1},
		{NameReconciles, dto.MetricType_COUNTER, []string{"result", "error"}, 1},
		{NameReconcileDuration, dto.MetricType_HISTOGRAM, nil, 2},
		{NameLastSuccess, dto.MetricType_GAUGE, nil, 1772366400.5},
		{NameZoneCacheAge, dto.MetricType_GAUGE, []string{"zone", "example.com"}, 90},
		{NameInvalidObjects, dto.MetricType_GAUGE, []string{"kind", "Service", "reason", "aws-weight"}, 2},
		{NameInvalidObjects, dto.MetricType_GAUGE, []string{"kind", "Ingress", "reason", "set-identifier"}, 1},
		{NameConflicts, dto.MetricType_GAUGE, nil, 3},
		{NameRefused, dto.MetricType_GAUGE, nil, 1},
		{NameLeader, dto.MetricType_GAUGE, nil, 1},
	} {
		s, ok := fams.sample(tc.name, tc.labels...)
		if !ok {
			t.Errorf("%s%v: no sample", tc.name, tc.labels)
			continue
		}
		if typ := fams[tc.name].GetType(); typ != tc.typ {
			t.Errorf("%s: type %s, want %s", tc.name, typ, tc.typ)
		}
		if got := value(s); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}

	// The histogram's buckets place 40 ms and 2 s where they belong.
	h, _ := fams.sample(NameReconcileDuration)
	if got, want := h.GetHistogram().GetSampleSum(), 2.04; math.Abs(got-want) > 1e-9 {
		t.Errorf("duration sum = %v, want %v", got, want)
	}
	cum := map[float64]uint64{}
	for _, b := range h.GetHistogram().GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for bound, want := range map[float64]uint64{0.001: 0, 0.025: 0, 0.05: 1, 1: 1, 2.5: 2, 30: 2} {
		if got, ok := cum[bound]; !ok || got != want {
			t.Errorf("duration bucket le=%v = %d (present %t), want %d", bound, got, ok, want)
		}
	}
	// The registry carries the process collector: peak RSS is a benchmark goal.
	if _, ok := fams["process_resident_memory_bytes"]; !ok {
		t.Error("no process_resident_memory_bytes")
	}
}

// TestKnownSeriesStartAtZero: rate() must see the first change and the first failed
// reconcile, which needs their series present, at 0, from the start.
func TestKnownSeriesStartAtZero(t *testing.T) {
	fams := scrape(t, serve(t, New().Handler(nil)))
	for _, s := range [][]string{
		{NameChangesApplied, "action", "create"}, {NameChangesApplied, "action", "delete"},
		{NameChangesApplied, "action", "upsert"}, {NameReconciles, "result", "ok"},
		{NameReconciles, "result", "error"}, {NameLastSuccess}, {NameLeader}, {NameConflicts},
	} {
		got, ok := fams.sample(s[0], s[1:]...)
		if !ok {
			t.Errorf("%v: no sample before any event", s)
		} else if value(got) != 0 {
			t.Errorf("%v = %v before any event, want 0", s, value(got))
		}
	}
}

func TestObserveReconcileErrorKeepsLastSuccess(t *testing.T) {
	m := New()
	first := time.Unix(1000, 0)
	m.now = func() time.Time { return first }
	m.ObserveReconcile(time.Millisecond, nil)
	m.now = func() time.Time { return first.Add(time.Hour) }
	m.ObserveReconcile(time.Millisecond, errors.New("boom"))

	fams := scrape(t, serve(t, m.Handler(nil)))
	if s, _ := fams.sample(NameLastSuccess); s == nil || value(s) != 1000 {
		t.Errorf("last success after a failure = %v, want 1000 (the success before it)", s)
	}
}

func TestSetRecordsRemovesZonesNoLongerManaged(t *testing.T) {
	m := New()
	m.SetRecords(map[string]int{"a.example": 1, "b.example": 2})
	m.SetRecords(map[string]int{"a.example": 3})

	fams := scrape(t, serve(t, m.Handler(nil)))
	if s, ok := fams.sample(NameRecordsManaged, "zone", "a.example"); !ok || value(s) != 3 {
		t.Errorf("a.example = %v, want 3", s)
	}
	if _, ok := fams.sample(NameRecordsManaged, "zone", "b.example"); ok {
		t.Error("b.example is still reported after it left the set")
	}
}

func TestSetInvalidDropsFixedProblemsToZero(t *testing.T) {
	m := New()
	weight := InvalidKey{Kind: "Service", Reason: "aws-weight"}
	ttl := InvalidKey{Kind: "DNSEndpoint", Reason: "spec.endpoints[].recordTTL"}
	m.SetInvalid(map[InvalidKey]int{weight: 2, ttl: 1})
	m.SetInvalid(map[InvalidKey]int{weight: 1})

	fams := scrape(t, serve(t, m.Handler(nil)))
	for _, tc := range []struct {
		k    InvalidKey
		want float64
	}{{weight, 1}, {ttl, 0}} {
		s, ok := fams.sample(NameInvalidObjects, "kind", tc.k.Kind, "reason", tc.k.Reason)
		if !ok {
			t.Errorf("%v: no sample", tc.k)
		} else if value(s) != tc.want {
			t.Errorf("%v = %v, want %v", tc.k, value(s), tc.want)
		}
	}
}

// TestCacheAgesAreReadAtScrape: between reconciles nothing sets the age, yet it grows.
func TestCacheAgesAreReadAtScrape(t *testing.T) {
	m := New()
	age := 5 * time.Second
	m.SetCacheAges(func() map[string]time.Duration { return map[string]time.Duration{"example.com": age} })
	base := serve(t, m.Handler(nil))

	for _, want := range []float64{5, 65} {
		s, ok := scrape(t, base).sample(NameZoneCacheAge, "zone", "example.com")
		if !ok || value(s) != want {
			t.Errorf("cache age = %v, want %v", s, want)
		}
		age += time.Minute
	}
	m.SetCacheAges(nil)
	if _, ok := scrape(t, base)[NameZoneCacheAge]; ok {
		t.Error("cache age still reported after SetCacheAges(nil)")
	}
}

// TestInstancesAreIndependent: each Metrics has its own registry, so tests (and a
// process) may make many; with the global registry the second New would panic.
func TestInstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.SetLeader(true)
	a.AddChanges(map[changes.Action]int{changes.Create: 1})

	fams := scrape(t, serve(t, b.Handler(nil)))
	if s, _ := fams.sample(NameLeader); s == nil || value(s) != 0 {
		t.Errorf("b's leader = %v, want 0", s)
	}
	if s, _ := fams.sample(NameChangesApplied, "action", "create"); s == nil || value(s) != 0 {
		t.Errorf("b's creates = %v, want 0", s)
	}
}

// TestBadInputDoesNotPanic: label values come from objects and zones the controller does
// not control, and counts from its own arithmetic.
func TestBadInputDoesNotPanic(t *testing.T) {
	m := New()
	bad := "bad\xffzone"
	m.SetRecords(map[string]int{bad: 1})
	m.SetRecords(map[string]int{}) // and removes it again
	m.SetInvalid(map[InvalidKey]int{{Kind: "Service", Reason: "x\xfe"}: 1})
	m.SetCacheAges(func() map[string]time.Duration { return map[string]time.Duration{bad: time.Second} })
	m.AddChanges(map[changes.Action]int{changes.Create: -1, changes.Delete: 0})

	fams := scrape(t, serve(t, m.Handler(nil)))
	if s, ok := fams.sample(NameInvalidObjects, "kind", "Service", "reason", "x\uFFFD"); !ok || value(s) != 1 {
		t.Errorf("invalid-UTF-8 reason: %v, want 1 under x\\uFFFD", s)
	}
	if s, ok := fams.sample(NameZoneCacheAge, "zone", "bad\uFFFDzone"); !ok || value(s) != 1 {
		t.Errorf("invalid-UTF-8 zone's cache age: %v, want 1", s)
	}
	if _, ok := fams[NameRecordsManaged]; ok {
		t.Error("records of the removed zone still reported")
	}
	if s, _ := fams.sample(NameChangesApplied, "action", "create"); s == nil || value(s) != 0 {
		t.Errorf("creates after a negative count = %v, want 0", s)
	}
}

// TestGoRuntimeLiveHeapServed: the soak benchmark (issue 32) judges leaks by the heap the
// last collection found live, which client_golang's default Go collector does not serve;
// the series the soak read before stay served beside it.
func TestGoRuntimeLiveHeapServed(t *testing.T) {
	m := New()
	runtime.GC() // at least one finished collection, so the live heap is measured
	fams := scrape(t, serve(t, m.Handler(nil)))
	for _, tc := range []struct {
		name string
		typ  dto.MetricType
	}{
		{NameGoHeapLive, dto.MetricType_GAUGE},
		{NameGoGCCycles, dto.MetricType_COUNTER},
		{"go_goroutines", dto.MetricType_GAUGE},
		{"go_memstats_heap_alloc_bytes", dto.MetricType_GAUGE},
		{"go_memstats_heap_inuse_bytes", dto.MetricType_GAUGE},
		{"go_memstats_next_gc_bytes", dto.MetricType_GAUGE},
		{"go_gc_duration_seconds", dto.MetricType_SUMMARY},
		{"process_resident_memory_bytes", dto.MetricType_GAUGE},
	} {
		fam, ok := fams[tc.name]
		if !ok {
			t.Errorf("%s: not served", tc.name)
			continue
		}
		if fam.GetType() != tc.typ {
			t.Errorf("%s: type %s, want %s", tc.name, fam.GetType(), tc.typ)
		}
	}
	for _, name := range []string{NameGoHeapLive, NameGoGCCycles} {
		if s, ok := fams.sample(name); !ok {
			t.Errorf("%s: no unlabelled sample", name)
		} else if value(s) <= 0 {
			t.Errorf("%s = %v after a collection, want more than 0", name, value(s))
		}
	}
}
