package route53

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// scriptDNS answers each ApplyChange with the next of its outcomes, and counts them.
type scriptDNS struct {
	DNS
	outcomes []outcome
	sent     int
}

// outcome is one answer of scriptDNS: a change id, or an error.
type outcome struct {
	id  string
	err error
}

func (d *scriptDNS) ApplyChange(_ context.Context, _ provider.Zone, _ changes.Batch, _ string) (string, error) {
	o := d.outcomes[min(d.sent, len(d.outcomes)-1)]
	d.sent++
	return o.id, o.err
}

// movedZone is zoneOf(1) with blue's member of app0 at another value, read n: what a
// publisher changing it between the read and the write leaves.
func movedZone(n int) *live {
	l := zoneOf(1)
	ep := l.members[0].ep.Clone()
	ep.Targets = endpoint.Targets{fmt.Sprintf("127.0.1.%d", n)}
	l.members[0].ep = ep
	return l
}

var (
	refused   = &provider.RejectedError{Code: "InvalidChangeBatch", Messages: []string{"Tried to delete resource record set but it was not found"}}
	errDenied = errors.New("AccessDenied: not authorized")
	errRead   = errors.New("zone unreadable")
	errDrift  = &lever.DriftError{Members: []lever.Drift{{Member: "blue", Found: 5, Wrote: 100}}}
)

// casRun is what one write did: its result, error, logs and calls.
type casRun struct {
	id, err, logs       string
	sent, reads, before int
	drift               bool
}

// TestCompareAndSwapWrite pins what the Route 53 levers' compare-and-swap write does,
// for the lever of one zone and for the fleet's (one zone here): the lost change id
// written again, a refusal built again from a fresh read after a backoff, a refusal with
// nothing moved, the attempt limit, a read or a drift that stops the retry, and an
// error that is no refusal. Both levers share casWrite; what differs between them (the
// zone in errors, the lost id's warning, when BeforeSend is called, how a drift after a
// refusal is reported) is each lever's, as before they shared it.
func TestCompareAndSwapWrite(t *testing.T) {
	weights := lever.Change{Weights: map[string]int64{"blue": 0, "green": 100}}
	const (
		lostSingle = `level=WARN msg="write landed but its change id was lost: writing the authority record again to follow one to INSYNC" zone=example.com step="step 1" attempt=1`
		lostFleet  = `level=WARN msg="write landed but its change id was lost: writing the authority records again to follow one to INSYNC" zone=example.com step="step 1" attempt=1`
		movedLog   = `level=WARN msg="the zone changed under the write: writing again from a fresh read" zone=example.com step="step 1" attempt=%d moved="[app0.example.com A [blue]: 127.0.%s weight 100 TTL 60, now 127.0.1.%d weight 100 TTL 60]"`
		refusedLog = `level=WARN msg="write refused; the zone read again refuses the cutover" zone=example.com step="step 1" refusal="change batch rejected: InvalidChangeBatch: Tried to delete resource record set but it was not found"`
	)
	keepsMoving := func() string {
		var lines []string
		for a := 1; a < lever.CASAttempts; a++ {
			was := "0.10"
			if a > 1 {
				was = fmt.Sprintf("1.%d", a-1)
			}
			lines = append(lines, fmt.Sprintf(movedLog, a, was, a))
		}
		return strings.Join(lines, "\n")
	}
	for _, tc := range []struct {
		name     string
		outcomes []outcome
		// read is the n-th read after the first (from 1): a live, or an error.
		read  func(n int) (*live, error)
		drift error
		// want is the lever of one zone's, fleet the fleet's (only what differs).
		want, fleet casRun
	}{
		{name: "lands at once", outcomes: []outcome{{id: "C1"}},
			want:  casRun{id: "C1", sent: 1, before: 1},
			fleet: casRun{id: "C1", sent: 1, before: 1}},
		{name: "change id lost: written again from a fresh read", outcomes: []outcome{{}, {id: "C2"}},
			read:  func(int) (*live, error) { return zoneOf(1), nil },
			want:  casRun{id: "C2", sent: 2, reads: 1, before: 2, logs: lostSingle},
			fleet: casRun{id: "C2", sent: 2, reads: 1, before: 2, logs: lostFleet}},
		{name: "change id lost, the read fails", outcomes: []outcome{{}},
			read:  func(int) (*live, error) { return nil, errRead },
			want:  casRun{err: "step 1: zone unreadable", sent: 1, reads: 1, before: 1, logs: lostSingle},
			fleet: casRun{err: "step 1: zone example.com: zone unreadable", sent: 1, reads: 1, before: 1, logs: lostFleet}},
		{name: "refused, the zone moved: written again", outcomes: []outcome{{err: refused}, {id: "C2"}},
			read:  func(n int) (*live, error) { return movedZone(n), nil },
			want:  casRun{id: "C2", sent: 2, reads: 1, before: 2, logs: fmt.Sprintf(movedLog, 1, "0.10", 1)},
			fleet: casRun{id: "C2", sent: 2, reads: 1, before: 2, logs: fmt.Sprintf(movedLog, 1, "0.10", 1)}},
		{name: "refused, nothing moved", outcomes: []outcome{{err: refused}},
			read: func(int) (*live, error) { return zoneOf(1), nil },
			want: casRun{err: "step 1: write blue=0 green=100: refused, though nothing it read has changed since: " + refused.Error(),
				sent: 1, reads: 1, before: 1},
			// The fleet's BeforeSend is its re-read's, before it compares.
			fleet: casRun{err: "step 1: zone example.com: write blue=0 green=100: refused, though nothing it read has changed since: " + refused.Error(),
				sent: 1, reads: 1, before: 2}},
		{name: "the zone keeps moving: gives up after CASAttempts", outcomes: []outcome{{err: refused}},
			read: func(n int) (*live, error) { return movedZone(n), nil },
			want: casRun{err: fmt.Sprintf("step 1: write blue=0 green=100: the zone changed under the cutover before each of %d attempts landed (a publisher writing the same record sets?); last: app0.example.com A [blue]: 127.0.1.%d weight 100 TTL 60, now 127.0.1.%d weight 100 TTL 60: %s",
				lever.CASAttempts, lever.CASAttempts-1, lever.CASAttempts, refused),
				sent: lever.CASAttempts, reads: lever.CASAttempts, before: lever.CASAttempts, logs: keepsMoving()},
			fleet: casRun{err: fmt.Sprintf("step 1: zone example.com: write blue=0 green=100: the zone changed under the cutover before each of %d attempts landed (a publisher writing the same record sets?); last: app0.example.com A [blue]: 127.0.1.%d weight 100 TTL 60, now 127.0.1.%d weight 100 TTL 60: %s",
				lever.CASAttempts, lever.CASAttempts-1, lever.CASAttempts, refused),
				sent: lever.CASAttempts, reads: lever.CASAttempts, before: lever.CASAttempts + 1, logs: keepsMoving()}},
		{name: "refused, the read fails", outcomes: []outcome{{err: refused}},
			read:  func(int) (*live, error) { return nil, errRead },
			want:  casRun{err: "step 1: zone unreadable", sent: 1, reads: 1, before: 1, logs: refusedLog},
			fleet: casRun{err: "step 1: zone example.com: zone unreadable", sent: 1, reads: 1, before: 1, logs: refusedLog}},
		{name: "refused, the read shows drift", outcomes: []outcome{{err: refused}},
			read: func(n int) (*live, error) { return movedZone(n), nil }, drift: errDrift,
			// The lever of one zone returns the drift as it is; the fleet's names the zone,
			// and logs the refusal.
			want:  casRun{err: errDrift.Error(), sent: 1, reads: 1, before: 1, drift: true},
			fleet: casRun{err: "step 1: zone example.com: " + errDrift.Error(), sent: 1, reads: 1, before: 1, drift: true, logs: refusedLog}},
		{name: "an error that is no refusal", outcomes: []outcome{{err: errDenied}},
			want:  casRun{err: "step 1: write blue=0 green=100: " + errDenied.Error(), sent: 1, before: 1},
			fleet: casRun{err: "step 1: zone example.com: write blue=0 green=100: " + errDenied.Error(), sent: 1, before: 1}},
	} {
		for _, many := range []bool{false, true} {
			name, want := tc.name+"/one zone", tc.want
			if many {
				name, want = tc.name+"/fleet", tc.fleet
			}
			t.Run(name, func(t *testing.T) {
				dns := &scriptDNS{outcomes: tc.outcomes}
				var logs bytes.Buffer
				log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}}))
				var got casRun
				read := func(ctx context.Context) (*live, error) {
					got.reads++
					return tc.read(got.reads)
				}
				drift := func(*live) error { return tc.drift }
				p := &spec.Plan{Name: "app", From: "blue", To: "green"}
				var w lever.Written
				var err error
				if many {
					d := &fleetLever{p: p, dns: dns}
					w, err = d.Write(context.Background(), compose([]*live{zoneOf(1)}), weights, lever.Env[*fleet]{What: "step 1", Comment: "c", Log: log,
						Read: func(ctx context.Context) (*fleet, error) {
							l, err := read(ctx)
							if err != nil {
								return nil, err
							}
							return compose([]*live{l}), nil
						},
						Drift:      func(f *fleet) error { return drift(f.live) },
						BeforeSend: func(*fleet) error { got.before++; return nil }})
				} else {
					d := &dnsLever{p: p, dns: dns}
					w, err = d.Write(context.Background(), zoneOf(1), weights, lever.Env[*live]{What: "step 1", Comment: "c", Log: log,
						Read: read, Drift: drift, BeforeSend: func(*live) error { got.before++; return nil }})
				}
				got.id, got.sent = w.ID, dns.sent
				if err != nil {
					got.err = err.Error()
					got.drift = errors.As(err, new(*lever.DriftError))
					if !errors.Is(err, errRead) && !errors.Is(err, errDenied) && !errors.As(err, new(*provider.RejectedError)) && !got.drift {
						t.Errorf("error %v wraps none of the errors it comes from", err)
					}
				}
				got.logs = strings.TrimSpace(logs.String())
				if got != want {
					t.Errorf("write:\n got %+v\nwant %+v", got, want)
				}
			})
		}
	}
}
