package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// followPlan is 0 → 50 → 100 % from blue to green on levertest's app.example.com, holding
// each step 1 s, with a DNS gate on the sandbox's server and an HTTP gate on each
// cluster's own URL, then a retire check of blue's request counter.
const followPlan = `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: app
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: blue
  to: green
  steps: [0, 50, 100]
  pause: 1s
  gates:
    - name: answers
      dns:
        servers: [%s]
        samples: 40
        tolerance: 0.3
    - name: up
      http:
        clusters:
          blue: %s
          green: %s
        requests: 2
  rollback:
    mode: immediate
  retire:
    metrics: %s/metrics
    counter: requests_total
    window: 1s
    timeout: 20s
`

// okServer answers every request 200, and /metrics with a request counter that stands
// still (a drained cluster).
func okServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/metrics" {
			fmt.Fprint(w, "# TYPE requests_total counter\nrequests_total 7\n")
			return
		}
		fmt.Fprintln(w, "ok")
	}))
}

// comparable is what a State says that a journal decides: where the cutover stands, its
// timeline, each gate's latest verdict, the errors and the weights charted; without
// times, and without the series only a live run has at every gate check (DNS answer
// shares, an HTTP gate's requests), which the journal keeps once per step.
func comparable(s State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cutover %s %s→%s lever %s ended %t\n", s.Cutover, s.From, s.To, s.Lever, !s.Ended.IsZero())
	fmt.Fprintf(&b, "current %+v\n", s.Current)
	for _, st := range s.Timeline {
		fmt.Fprintf(&b, "stage %s kind %s phase %s weights %v outcome %s ended %t\n", st.Name, st.Kind, st.Phase, st.Weights, st.Outcome, !st.Ended.IsZero())
	}
	for _, g := range s.Gates {
		fmt.Fprintf(&b, "gate %s kind %s pass %t pending %t detail %q err %q values %v\n", g.Gate, g.Kind, g.Pass, g.Pending, g.Detail, g.Err, g.Values)
	}
	for _, p := range s.Errors {
		fmt.Fprintf(&b, "error gate %q: %s\n", p.Gate, p.Message)
	}
	for _, p := range s.Series.Weights {
		fmt.Fprintf(&b, "weights %v\n", p.Values)
	}
	return b.String()
}

// TestFollowerMatchesLive runs real cutovers (the engine on a sandbox zone) with a live
// Recorder as their progress, then feeds their journals to a Follower: the page it makes
// says what the live one says, for a completed cutover and for one a failing gate rolled
// back; fed the journal as it grows, entries again and again, it says the same as fed
// the whole journal once.
func TestFollowerMatchesLive(t *testing.T) {
	ok := okServer()
	defer ok.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "v2 is broken", http.StatusInternalServerError)
	}))
	defer failing.Close()
	for _, tc := range []struct {
		name    string
		green   string
		outcome string
		stages  []string
	}{
		{"completed", ok.URL, "completed", []string{"step 1/3 passed", "step 2/3 passed", "step 3/3 passed", "retire passed"}},
		{"rolled back", failing.URL, "rolled-back", []string{"step 1/3 rolled back", "rollback 1/1 held"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
			path := filepath.Join(t.TempDir(), "app.yaml")
			if err := os.WriteFile(path, fmt.Appendf(nil, followPlan, z.SB.DNSAddr(), ok.URL, tc.green, ok.URL), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := spec.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			live := NewRecorder(p.Name, p.From, p.To)
			live.SetLever(levers.Kind(p))
			mem := journal.NewMemory()
			cfg := cutover.Config{Plan: p, Levers: z.Levers(z.DNS), StateDir: t.TempDir(), Journals: mem.Store, By: "test@host",
				DNSServers: []string{z.SB.DNSAddr()}, CheckInterval: 200 * time.Millisecond, PollInterval: 10 * time.Millisecond, Progress: live}
			rep, _ := cutover.Run(context.Background(), cfg, false)
			if rep == nil || rep.Outcome != tc.outcome {
				t.Fatalf("the run's report %+v, want outcome %s", rep, tc.outcome)
			}
			entries, _, err := mem.Store(p.Name).Read()
			if err != nil {
				t.Fatal(err)
			}

			follow := func(feed func(*Follower)) *Recorder {
				rec := NewRecorder(p.Name, p.From, p.To)
				rec.SetLever(levers.Kind(p))
				feed(NewFollower(rec, p, nil))
				return rec
			}
			whole := follow(func(f *Follower) {
				f.Feed(entries)
				if f.Fed() != entries[len(entries)-1].Seq {
					t.Errorf("Fed = %d, want the last entry's seq %d", f.Fed(), entries[len(entries)-1].Seq)
				}
			})
			want, got := comparable(live.State()), comparable(whole.State())
			if got != want {
				t.Errorf("the follower's page:\n%s\nthe live page:\n%s", got, want)
			}
			var stages []string
			for _, st := range whole.State().Timeline {
				if st.Kind == kindStep || st.Kind == kindRollback || st.Kind == kindRetire {
					stages = append(stages, st.Name+" "+st.Outcome)
				}
			}
			if !reflect.DeepEqual(stages, tc.stages) {
				t.Errorf("the follower's timeline %q, want %q", stages, tc.stages)
			}
			// Each stage starts when the journal says it did, not when it was read.
			for _, e := range entries {
				if e.Kind == entryIntent && e.Step == 0 {
					if got := whole.State().Timeline[0].Started; !got.Equal(e.Time) {
						t.Errorf("step 1 started at %s on the page, the journal wrote its intent at %s", got, e.Time)
					}
				}
			}

			// The journal as a watch sees it grow: every prefix, each fed in full again.
			growing := follow(func(f *Follower) {
				for n := range entries {
					f.Feed(entries[:n+1])
					f.Feed(entries[:n+1])
				}
			})
			if g := comparable(growing.State()); g != got {
				t.Errorf("fed as the journal grew:\n%s\nfed whole:\n%s", g, got)
			}
			if tl, wl := growing.State().Timeline, whole.State().Timeline; !reflect.DeepEqual(tl, wl) {
				t.Errorf("fed as the journal grew, the timeline's times differ from the journal's:\n%+v\n%+v", tl, wl)
			}
		})
	}
}
