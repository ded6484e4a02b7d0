package controller

import (
	"math/rand/v2"
	"time"
)

// Defaults of the backoff after failed reconciles (Config.BackoffBase, Config.BackoffMax).
const (
	// DefaultBackoffBase is the longest wait after one failed reconcile: a single throttled
	// call costs about a second, no more than a burst of changes already waits
	// (DefaultDebounce up to DefaultMaxDelay).
	DefaultBackoffBase = time.Second
	// DefaultBackoffMax caps the wait, as Kubernetes caps CrashLoopBackOff: a controller
	// facing a Route 53 that is down lists each zone at most once every 2.5 to 5 minutes,
	// a few requests against the account's 5 per second, and is at most 5 minutes late
	// once Route 53 is back. Since the wait doubles, it is never much longer than the
	// failures have lasted, so a short outage is followed by a short wait.
	DefaultBackoffMax = 5 * time.Minute
)

// backoff is the wait between a failed reconcile and the next: up to Base after the first
// failure, doubling with each failure in a row up to Max, back to nothing after a success.
// Each wait is drawn at random from the upper half of its ceiling ("equal jitter"), so
// that controllers of several clusters throttled by the same account at the same time
// spread their retries instead of coming back together, while each wait stays at least
// half its ceiling, which is what bounds the listings of a zone that keeps failing.
type backoff struct {
	base, max time.Duration
	// rand returns a number in [0, 1); tests fix it.
	rand func() float64
	// failures counts the failed reconciles in a row.
	failures int
}

// newBackoff returns a backoff from base up to ceil (their defaults when not above 0; ceil
// at least base), drawing its jitter from rnd (math/rand/v2 when nil).
func newBackoff(base, ceil time.Duration, rnd func() float64) *backoff {
	if base <= 0 {
		base = DefaultBackoffBase
	}
	if ceil <= 0 {
		ceil = DefaultBackoffMax
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	return &backoff{base: base, max: max(ceil, base), rand: rnd}
}

// ceiling returns the longest wait after n failures in a row (n >= 1): base·2^(n-1),
// capped at max. It doubles step by step so that no count of failures can overflow it.
func (b *backoff) ceiling(n int) time.Duration {
	d := b.base
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// floor returns the shortest wait after n failures in a row: half the ceiling.
func (b *backoff) floor(n int) time.Duration { return b.ceiling(n) / 2 }

// fail counts a failed reconcile and returns how long to wait before the next one: a draw
// in [ceiling/2, ceiling).
func (b *backoff) fail() time.Duration {
	b.failures++
	c := b.ceiling(b.failures)
	half := c / 2
	return half + time.Duration(b.rand()*float64(c-half))
}

// succeed ends the failures in a row: the next failure waits up to base again.
func (b *backoff) succeed() { b.failures = 0 }

// maxStarts returns the most reconciles that can start within window once they all fail,
// the first at its start: each wait lasts at least floor of its failure count. It is the
// bound on how often a failing zone is listed (once per reconcile at most).
func (b *backoff) maxStarts(window time.Duration) int {
	n := 1
	for elapsed := time.Duration(0); ; n++ {
		elapsed += max(b.floor(n), 1) // a floor of 0 (a 1 ns ceiling) would never end
		if elapsed > window {
			return n
		}
	}
}
