package nlbproxy

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// SeriesKey names a series of counts: a load balancer's (TargetGroup "") or one of its
// target groups', by ARN.
type SeriesKey struct {
	LoadBalancer string
	TargetGroup  string
}

// Bucket is one second of a series, in CloudWatch's AWS/NetworkELB terms.
type Bucket struct {
	Start time.Time
	// NewFlowCount is the connections established to targets in the second.
	NewFlowCount uint64
	// ActiveFlowCount is the most connections open at once during the second.
	ActiveFlowCount uint64
	// ELBResetCount is the connections the proxy refused with a reset (no group with a
	// weight, no routable target, a target that could not be reached):
	// TCP_ELB_Reset_Count.
	ELBResetCount uint64
}

// retention is how long a series keeps its seconds.
const retention = 3 * time.Hour

type bucket struct {
	Bucket
	activeEnd uint64 // connections open at the end of the second
}

// series is one key's per-second counts.
type series struct {
	mu      sync.Mutex
	buckets map[int64]*bucket
	active  uint64
}

func newSeries() *series { return &series{buckets: map[int64]*bucket{}} }

// seriesFor returns the series of key, creating it.
func (p *Proxy) seriesFor(key SeriesKey) *series {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.series[key]
	if s == nil {
		s = newSeries()
		p.series[key] = s
	}
	return s
}

// at returns the bucket of now's second. Caller holds s.mu.
func (s *series) at(now time.Time) *bucket {
	sec := now.Unix()
	b := s.buckets[sec]
	if b == nil {
		b = &bucket{Bucket: Bucket{Start: time.Unix(sec, 0).UTC(), ActiveFlowCount: s.active}, activeEnd: s.active}
		s.buckets[sec] = b
		if len(s.buckets)%256 == 0 {
			cut := sec - int64(retention/time.Second)
			maps.DeleteFunc(s.buckets, func(k int64, _ *bucket) bool { return k < cut })
		}
	}
	return b
}

func (s *series) start(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active++
	b := s.at(now)
	b.NewFlowCount++
	b.ActiveFlowCount = max(b.ActiveFlowCount, s.active)
	b.activeEnd = s.active
}

func (s *series) end(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.at(now)
	s.active--
	b.activeEnd = s.active
}

func (s *series) reset(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at(now).ELBResetCount++
}

// between returns the seconds in [from, to) that had flows: with new or reset
// connections, or connections open (a connection open through a quiet second counts in
// its ActiveFlowCount), in time order. Seconds after now are not reported.
func (s *series) between(from, to, now time.Time) []Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end := now.Truncate(time.Second).Add(time.Second); to.After(end) {
		to = end
	}
	secs := slices.Sorted(maps.Keys(s.buckets))
	if len(secs) == 0 {
		return nil
	}
	lo := max(from.Unix(), secs[0])
	if from.After(time.Unix(lo, 0)) {
		lo++ // from is inside a second: its bucket started before from
	}
	var carry uint64
	if i, _ := slices.BinarySearch(secs, lo); i > 0 {
		carry = s.buckets[secs[i-1]].activeEnd
	}
	var out []Bucket
	for sec := lo; time.Unix(sec, 0).Before(to); sec++ {
		if b := s.buckets[sec]; b != nil {
			out = append(out, b.Bucket)
			carry = b.activeEnd
			continue
		}
		if carry > 0 {
			out = append(out, Bucket{Start: time.Unix(sec, 0).UTC(), ActiveFlowCount: carry})
		}
	}
	return out
}

// Metrics returns the seconds of key's series whose start is in [from, to).
func (p *Proxy) Metrics(key SeriesKey, from, to time.Time) []Bucket {
	p.mu.Lock()
	s := p.series[key]
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.between(from, to, time.Now())
}

// SeriesKeys lists the series the proxy has counted, sorted.
func (p *Proxy) SeriesKeys() []SeriesKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := slices.Collect(maps.Keys(p.series))
	slices.SortFunc(keys, func(a, b SeriesKey) int {
		if c := strings.Compare(a.LoadBalancer, b.LoadBalancer); c != 0 {
			return c
		}
		return strings.Compare(a.TargetGroup, b.TargetGroup)
	})
	return keys
}
