package cutovertest

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sample is one request of a Load: when it was sent and answered, whether it carried the
// rule's Host, and the backend group that answered.
type Sample struct {
	Sent, Done time.Time
	Rule       bool
	Group      string
}

// Load sends requests through a listener from several goroutines until halted,
// alternately with the rule's Host (ALBHost) and without. A request that got no response,
// or a response the proxy made itself (no backend named in the group header), is a
// failure; a backend's own 500 is an answer.
type Load struct {
	header   string
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	samples  []Sample
	failures []string
	total    atomic.Int64
}

// StartLoad starts workers request loops against addr, each pausing between requests;
// header is the response header naming the backend group. The test's cleanup halts it.
func StartLoad(t testing.TB, addr, header string, workers int, pause time.Duration) *Load {
	l := &Load{header: header, stop: make(chan struct{})}
	for w := range workers {
		tr := &http.Transport{MaxIdleConnsPerHost: 2}
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		l.wg.Go(func() {
			defer tr.CloseIdleConnections()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.one(client, addr, (i+w)%2 == 0)
				time.Sleep(pause)
			}
		})
	}
	t.Cleanup(l.Halt)
	return l
}

func (l *Load) one(client *http.Client, addr string, rule bool) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if rule {
		req.Host = ALBHost
	}
	s := Sample{Sent: time.Now(), Rule: rule}
	resp, err := client.Do(req)
	var fail string
	if err != nil {
		fail = err.Error()
	} else {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Group = resp.Header.Get(l.header)
		switch {
		case rerr != nil:
			fail = "reading the body: " + rerr.Error()
		case s.Group == "":
			fail = fmt.Sprintf("%s from the proxy: %q", resp.Status, body)
		}
	}
	s.Done = time.Now()
	l.total.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if fail != "" {
		l.failures = append(l.failures, s.Sent.Format("15:04:05.000")+" "+fail)
		return
	}
	l.samples = append(l.samples, s)
}

// Halt stops the loops and waits for their requests to end; a second call does nothing.
func (l *Load) Halt() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	l.wg.Wait()
}

// Total is the number of requests sent so far, failed or not.
func (l *Load) Total() int64 { return l.total.Load() }

// Failures are the failed requests so far, each with the time it was sent.
func (l *Load) Failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.failures...)
}

// WaitRequests waits until the loops have sent n requests, failing t after 10 s.
func (l *Load) WaitRequests(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.total.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("request loop: %d requests after 10 s", l.total.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Share counts the answered requests sent at or after from and answered by to, through
// the rule or not, and the share of them that group answered.
func (l *Load) Share(from, to time.Time, rule bool, group string) (float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, hit := 0, 0
	for _, s := range l.samples {
		if s.Rule != rule || s.Sent.Before(from) || s.Done.After(to) {
			continue
		}
		n++
		if s.Group == group {
			hit++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(hit) / float64(n), n
}

// ByGroup counts the answered requests by the group that answered.
func (l *Load) ByGroup() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string]int{}
	for _, s := range l.samples {
		by[s.Group]++
	}
	return by
}

// Check fails t if any request failed, and logs the counts by group.
func (l *Load) Check(t testing.TB) {
	t.Helper()
	if f := l.Failures(); len(f) > 0 {
		t.Errorf("%d of %d requests failed; first: %s", len(f), l.Total(), f[0])
	}
	t.Logf("%d requests through the listener, answered by group: %v", l.Total(), l.ByGroup())
}
