package albproxy

import (
	"maps"
	"sync"
	"time"
)

// Counts are the cumulative totals of one target group since the proxy first routed to it.
type Counts struct {
	// Requests is every request routed to the group, whatever its outcome (RequestCount).
	Requests uint64
	// Target2XX … Target5XX count the responses the targets sent (HTTPCode_Target_NXX_Count).
	Target2XX, Target3XX, Target4XX, Target5XX uint64
	// ELB502, ELB503 and ELB504 count the errors the proxy answered itself for the
	// group: target connection failed, no target, target timed out.
	ELB502, ELB503, ELB504 uint64
	// ClientClosed counts requests the client gave up on before the target answered
	// (ALB logs them with status 460; they are neither ELB nor target 5xx).
	ClientClosed uint64
	// TargetResponseTime is the summed time from sending a request to a target until its
	// response headers arrived, over TargetResponses responses.
	TargetResponseTime time.Duration
	TargetResponses    uint64
	// PerTarget counts the requests sent to each target address.
	PerTarget map[string]uint64
}

// ELB5XX is HTTPCode_ELB_5XX_Count: the 5xx answers the proxy generated itself.
func (c Counts) ELB5XX() uint64 { return c.ELB502 + c.ELB503 + c.ELB504 }

func (c *Counts) add(o Counts) {
	c.Requests += o.Requests
	c.Target2XX += o.Target2XX
	c.Target3XX += o.Target3XX
	c.Target4XX += o.Target4XX
	c.Target5XX += o.Target5XX
	c.ELB502 += o.ELB502
	c.ELB503 += o.ELB503
	c.ELB504 += o.ELB504
	c.ClientClosed += o.ClientClosed
	c.TargetResponseTime += o.TargetResponseTime
	c.TargetResponses += o.TargetResponses
	for t, n := range o.PerTarget {
		if c.PerTarget == nil {
			c.PerTarget = map[string]uint64{}
		}
		c.PerTarget[t] += n
	}
}

// SeriesKey names a metric series the way CloudWatch's AWS/ApplicationELB dimensions do:
// LoadBalancer alone, or TargetGroup together with LoadBalancer.
type SeriesKey struct {
	LoadBalancer string
	// TargetGroup is empty for the load balancer's own series.
	TargetGroup string
}

// Bucket is one second of one series: the AWS/ApplicationELB metrics a consumer
// aggregates into any period of whole seconds.
type Bucket struct {
	// Start is the first instant of the second.
	Start                          time.Time
	RequestCount                   uint64
	HTTPCodeTarget2XX              uint64
	HTTPCodeTarget3XX              uint64
	HTTPCodeTarget4XX              uint64
	HTTPCodeTarget5XX              uint64
	HTTPCodeELB502, HTTPCodeELB503 uint64
	HTTPCodeELB504                 uint64
	// TargetResponseTime statistics over TargetResponseTimeCount responses; Min and Max
	// are zero when the count is.
	TargetResponseTimeSum   time.Duration
	TargetResponseTimeCount uint64
	TargetResponseTimeMin   time.Duration
	TargetResponseTimeMax   time.Duration
}

// HTTPCodeELB5XX is HTTPCode_ELB_5XX_Count for the second.
func (b Bucket) HTTPCodeELB5XX() uint64 {
	return b.HTTPCodeELB502 + b.HTTPCodeELB503 + b.HTTPCodeELB504
}

// outcome is what one request did, as the metrics see it.
type outcome struct {
	status  int    // the status the client got (460 when it went away)
	fromELB bool   // the proxy generated the status, not a target
	target  string // the target address it went to, if any
	rt      time.Duration
	hasRT   bool // a target answered, so rt is a TargetResponseTime sample
}

// series is one SeriesKey's counters: cumulative totals and a ring of per-second buckets
// covering the retention window.
type series struct {
	mu     sync.Mutex
	window int // seconds
	ring   []bucket
	totals Counts
	last   int64 // the newest second written
}

// bucket is a Bucket in the ring; sec tells whether it is current or a stale leftover.
type bucket struct {
	sec int64
	b   Bucket
}

func newSeries(window time.Duration) *series {
	w := int(window / time.Second)
	if w < 1 {
		w = 1
	}
	return &series{window: w}
}

func (s *series) record(now time.Time, o outcome) {
	sec := now.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ring == nil {
		// Allocated on first use: a series nothing is routed to costs nothing.
		s.ring = make([]bucket, s.window)
	}
	slot := &s.ring[sec%int64(s.window)]
	if slot.sec != sec {
		*slot = bucket{sec: sec, b: Bucket{Start: time.Unix(sec, 0)}}
	}
	if sec > s.last {
		s.last = sec
	}
	b, t := &slot.b, &s.totals
	b.RequestCount++
	t.Requests++
	if o.target != "" {
		if t.PerTarget == nil {
			t.PerTarget = map[string]uint64{}
		}
		t.PerTarget[o.target]++
	}
	switch {
	case o.fromELB && o.status == 502:
		b.HTTPCodeELB502++
		t.ELB502++
	case o.fromELB && o.status == 503:
		b.HTTPCodeELB503++
		t.ELB503++
	case o.fromELB && o.status == 504:
		b.HTTPCodeELB504++
		t.ELB504++
	case o.fromELB: // 460: the client went away
		t.ClientClosed++
	case o.status >= 500:
		b.HTTPCodeTarget5XX++
		t.Target5XX++
	case o.status >= 400:
		b.HTTPCodeTarget4XX++
		t.Target4XX++
	case o.status >= 300:
		b.HTTPCodeTarget3XX++
		t.Target3XX++
	case o.status >= 200:
		b.HTTPCodeTarget2XX++
		t.Target2XX++
	}
	if o.hasRT {
		if b.TargetResponseTimeCount == 0 || o.rt < b.TargetResponseTimeMin {
			b.TargetResponseTimeMin = o.rt
		}
		if o.rt > b.TargetResponseTimeMax {
			b.TargetResponseTimeMax = o.rt
		}
		b.TargetResponseTimeSum += o.rt
		b.TargetResponseTimeCount++
		t.TargetResponseTime += o.rt
		t.TargetResponses++
	}
}

// buckets returns the non-empty seconds in [from, to) that are still retained, oldest first.
func (s *series) buckets(from, to time.Time) []Bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ring == nil {
		return nil
	}
	lo, hi := from.Unix(), to.Unix()
	if from.After(time.Unix(lo, 0)) {
		lo++ // a second that started before from is only partly inside [from, to)
	}
	if oldest := s.last - int64(s.window) + 1; lo < oldest {
		lo = oldest
	}
	var out []Bucket
	for sec := lo; sec < hi && sec <= s.last; sec++ {
		if slot := s.ring[sec%int64(s.window)]; slot.sec == sec {
			out = append(out, slot.b)
		}
	}
	return out
}

func (s *series) counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.totals
	c.PerTarget = maps.Clone(c.PerTarget)
	return c
}
