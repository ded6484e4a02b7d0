package e2e

import (
	"sync"
	"testing"
	"time"
)

// queryLoop calls ask back to back, a gap apart, until halted, and counts the calls: the
// body of the DNS probes that run while a test changes the zone. ask records what it saw
// under mu, which also guards queries.
type queryLoop struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	queries int
}

// start runs ask(i) for i = 0, 1, … until halt; the test's cleanup halts it.
func (l *queryLoop) start(t *testing.T, gap time.Duration, ask func(i int)) {
	t.Helper()
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		for i := 0; ; i++ {
			// The gap leaves the machine's two cores to the processes under test.
			select {
			case <-l.stop:
				return
			case <-time.After(gap):
			}
			ask(i)
			l.mu.Lock()
			l.queries++
			l.mu.Unlock()
		}
	}()
	t.Cleanup(l.halt)
}

// halt stops the loop and waits until it has.
func (l *queryLoop) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// count returns the queries made so far.
func (l *queryLoop) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queries
}

// waitQueries blocks until the loop has made n more queries, so that it provably ran
// between two steps of the test; the 30 s bound is a failure bound, not a measurement.
func (l *queryLoop) waitQueries(t *testing.T, n int) {
	t.Helper()
	target := l.count() + n
	deadline := time.Now().Add(30 * time.Second)
	for l.count() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the DNS probe made %d queries in 30s, want %d", l.count(), target)
		}
		time.Sleep(time.Millisecond)
	}
}
