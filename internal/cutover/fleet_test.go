package cutover_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// fleetFixture is a sandbox with several zones, each with weighted members of blue and
// green for its names, each cluster's published by its own owner as `crossfade sync`
// publishes them, TTL 1 s: what a plan of several zones (spec.zones) moves.
type fleetFixture struct {
	sb    *sandbox.Sandbox
	dns   *route53.Provider
	zones []string
	// names are every zone's names, by zone.
	names map[string][]string
}

// newFleet starts a sandbox configured by cfg with zones z0.example.com … (and
// extra zones), perZone names in each, blue at weight 100 and green at 0.
func newFleet(tb testing.TB, cfg sandbox.Config, zones []string, perZone int) *fleetFixture {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a sandbox")
	}
	sb := sandboxtest.StartWith(tb, cfg)
	f := &fleetFixture{sb: sb, dns: route53test.New(tb, sb), zones: zones, names: map[string][]string{}}
	for _, z := range zones {
		if _, _, err := sb.Store().CreateZone(z, "ref-"+z, "", false); err != nil {
			tb.Fatalf("create zone %s: %v", z, err)
		}
		for i := range perZone {
			f.names[z] = append(f.names[z], fmt.Sprintf("app%03d.%s", i, z))
		}
	}
	f.publish(tb, "blue", "127.0.0.10", 100, nil)
	f.publish(tb, "green", "127.0.0.20", 0, nil)
	return f
}

// publish syncs owner's member (set identifier owner) of every name at weight w, ip
// being its value, as `crossfade sync` publishes a cluster's names; edit, when set,
// changes some members first.
func (f *fleetFixture) publish(tb testing.TB, owner, ip string, w int64, edit func(e *endpoint.Endpoint)) {
	tb.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		tb.Fatal(err)
	}
	var eps []*endpoint.Endpoint
	for _, z := range f.zones {
		for _, n := range f.names[z] {
			e := &endpoint.Endpoint{Name: n, Type: "A", Targets: endpoint.Targets{ip}, TTL: 1, SetIdentifier: owner,
				Policy: endpoint.WeightedPolicy(w), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/" + strings.Split(n, ".")[0]}}
			if edit != nil {
				edit(e)
			}
			eps = append(eps, e)
		}
	}
	rep, err := (&controller.Syncer{Provider: f.dns, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), eps)
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		tb.Fatalf("publish %s: %v", owner, err)
	}
}

// plan is a plan of every zone selecting every weighted name, moving to green in steps.
func (f *fleetFixture) plan(tb testing.TB, name string, steps ...int) *spec.Plan {
	tb.Helper()
	var st []string
	for _, s := range steps {
		st = append(st, fmt.Sprint(s))
	}
	p, err := spec.Parse(fmt.Appendf(nil, `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata: {name: %s}
spec:
  zones: [%s]
  select: {allWeighted: true}
  from: blue
  to: green
  steps: [%s]
  pause: 1s
  onDrift: rollback
  timeouts: {inSync: 10s}
`, name, strings.Join(f.zones, ", "), strings.Join(st, ", ")), "plan.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// config runs p over dns (the fixture's provider, or a wrapper of it).
func (f *fleetFixture) config(tb testing.TB, p *spec.Plan, dns lr53.DNS) cutover.Config {
	reg, err := registry.New(registry.Config{OwnerID: "cutover"})
	if err != nil {
		tb.Fatal(err)
	}
	return cutover.Config{Plan: p, Levers: levers.New(levers.Env{DNS: func() (lr53.DNS, error) { return dns, nil }, Registry: reg}),
		StateDir: tb.TempDir(), By: "test@host", DNSServers: []string{f.sb.DNSAddr()},
		CheckInterval: 50 * time.Millisecond, PollInterval: 10 * time.Millisecond}
}

// records reads zone's record sets.
func (f *fleetFixture) records(tb testing.TB, zone string) []*endpoint.Endpoint {
	tb.Helper()
	zones, err := f.dns.Zones(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	z, err := provider.FindZone(zones, zone, "")
	if err != nil {
		tb.Fatal(err)
	}
	recs, err := f.dns.Records(context.Background(), z)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// weights reads, in every zone, name → "blue=… green=…" of the A members, and of their
// ownership records.
func (f *fleetFixture) weights(tb testing.TB) (a, txt map[string]string) {
	tb.Helper()
	am, tm := map[string]map[string]int64{}, map[string]map[string]int64{}
	for _, z := range f.zones {
		for _, r := range f.records(tb, z) {
			m := am
			name := r.Name
			if r.Type == endpoint.TypeTXT {
				if r.SetIdentifier == "" {
					continue
				}
				m = tm
				// The ownership record of app001.z: a-app001.z; compare by the member's name.
				name = strings.TrimPrefix(name, "a-")
			}
			if m[name] == nil {
				m[name] = map[string]int64{}
			}
			m[name][r.SetIdentifier] = r.Policy.Weight
		}
	}
	a, txt = map[string]string{}, map[string]string{}
	for n, w := range am {
		a[n] = lever.FormatWeights(w)
	}
	for n, w := range tm {
		txt[n] = lever.FormatWeights(w)
	}
	return a, txt
}

// zoneDNS counts, per zone, the batches sent, and lets a test act before a zone's
// batch is sent (before) or lose its answer (lose).
type zoneDNS struct {
	lr53.DNS
	mu      sync.Mutex
	batches map[string]int
	sizes   map[string][]int
	before  func(zone string, n int)
	lose    func(zone string, n int) bool
	fail    func(zone string, n int) error
	// read, when set, fails a listing of zone with what it returns.
	read func(zone string) error
}

// Records lists zone, unless read fails it.
func (d *zoneDNS) Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error) {
	d.mu.Lock()
	read := d.read
	d.mu.Unlock()
	if read != nil {
		if err := read(zone.Name); err != nil {
			return nil, err
		}
	}
	return d.DNS.Records(ctx, zone)
}

// ApplyChange counts the batch, then sends it.
func (d *zoneDNS) ApplyChange(ctx context.Context, zone provider.Zone, b changes.Batch, comment string) (string, error) {
	d.mu.Lock()
	if d.batches == nil {
		d.batches, d.sizes = map[string]int{}, map[string][]int{}
	}
	d.batches[zone.Name]++
	d.sizes[zone.Name] = append(d.sizes[zone.Name], len(b))
	n := d.batches[zone.Name]
	before, lose, fail := d.before, d.lose, d.fail
	d.mu.Unlock()
	if before != nil {
		before(zone.Name, n)
	}
	if fail != nil {
		if err := fail(zone.Name, n); err != nil {
			return "", err
		}
	}
	id, err := d.DNS.ApplyChange(ctx, zone, b, comment)
	if err == nil && lose != nil && lose(zone.Name, n) {
		return "", nil // landed; its answer lost on the way back
	}
	return id, err
}

// count is the batches sent to zone.
func (d *zoneDNS) count(zone string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.batches[zone]
}

// writtenEntries are the journal's written entries.
func writtenEntries(tb testing.TB, cfg cutover.Config) []journal.Entry {
	tb.Helper()
	entries, err := journal.Read(cutover.PathsFor(cfg.StateDir, cfg.Plan.Name).Journal)
	if err != nil {
		tb.Fatal(err)
	}
	var out []journal.Entry
	for _, e := range entries {
		if e.Kind == "written" {
			out = append(out, e)
		}
	}
	return out
}

// changeIDs are the change ids a written entry's data keeps.
func changeIDs(tb testing.TB, e journal.Entry) []string {
	tb.Helper()
	var d lr53.WrittenData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		tb.Fatalf("written entry's data %s: %v", e.Data, err)
	}
	return d.ChangeIDs
}

// wantAllAt fails unless every name of every zone, and its ownership records, stand at w.
func (f *fleetFixture) wantAllAt(t testing.TB, w string) {
	t.Helper()
	a, txt := f.weights(t)
	for _, z := range f.zones {
		for _, n := range f.names[z] {
			if a[n] != w || txt[n] != w {
				t.Errorf("%s: members %q, ownership records %q; want %q", n, a[n], txt[n], w)
			}
		}
	}
}

// TestFleetOneBatchPerZonePerStep: a plan of three zones (one the parent of another)
// selects every weighted name of each, from the zone it is in, and moves them all; each
// step sends exactly one batch per zone, the journal keeps every change id of a write,
// and the members' ownership records move with them.
func TestFleetOneBatchPerZonePerStep(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com", "example.com"}, 4)
	dns := &zoneDNS{DNS: f.dns}
	cfg := f.config(t, f.plan(t, "fleet", 50, 100), dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	f.wantAllAt(t, "blue=0 green=100")
	written := writtenEntries(t, cfg)
	if len(written) != 2 {
		t.Fatalf("%d written entries, want 2 (one per step)", len(written))
	}
	for _, z := range f.zones {
		if got := dns.count(z); got != len(written) {
			t.Errorf("zone %s: %d batches, want %d (one per step)", z, got, len(written))
		}
	}
	for _, e := range written {
		ids := changeIDs(t, e)
		if len(ids) != 3 || e.ChangeID != ids[0] || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 3 {
			t.Errorf("written entry of step %d: changeID %q, data %s; want the three zones' changes, the first as changeID", e.Step, e.ChangeID, e.Data)
		}
	}
	// The parent zone's selection holds its own names only, not its children's.
	for _, r := range f.records(t, "example.com") {
		if strings.HasSuffix(r.Name, ".a.example.com") || strings.HasSuffix(r.Name, ".b.example.com") {
			t.Errorf("the parent zone holds %s: the cutover wrote a child zone's name in it", r.Key())
		}
	}
}

// TestFleetSplitsAZoneOverTheLimits: a zone whose changes exceed one change batch (32,000
// value characters: the ownership and authority records' values) is written in several,
// each within Route 53's limits (the sandbox refuses a batch beyond them), each name's
// changes in one of them; the zone that fits is written in one.
func TestFleetSplitsAZoneOverTheLimits(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"big.example.com", "small.example.com"}, 0)
	for i := range 120 {
		f.names["big.example.com"] = append(f.names["big.example.com"], fmt.Sprintf("app%03d.big.example.com", i))
	}
	f.names["small.example.com"] = []string{"app.small.example.com"}
	f.publish(t, "blue", "127.0.0.10", 100, nil)
	f.publish(t, "green", "127.0.0.20", 0, nil)
	dns := &zoneDNS{DNS: f.dns}
	cfg := f.config(t, f.plan(t, "split", 100), dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	f.wantAllAt(t, "blue=0 green=100")
	if got := dns.count("big.example.com"); got < 2 {
		t.Errorf("big.example.com: %d batches (%v changes), want it split", got, dns.sizes["big.example.com"])
	}
	if got := dns.count("small.example.com"); got != 1 {
		t.Errorf("small.example.com: %d batches, want 1", got)
	}
	w := writtenEntries(t, cfg)
	if len(w) != 1 || len(changeIDs(t, w[0])) != dns.count("big.example.com")+1 {
		t.Errorf("written entries %+v: want one with a change id per batch", w)
	}
}

// TestFleetRetriesOnlyTheZoneThatChanged: blue's publisher changes a member's value in
// zone b between the cutover's read and its write. Zone b's batch, a compare-and-swap of
// what was read, is refused and built again from a fresh read of zone b, the publisher's
// value kept; zone a's batch lands once.
func TestFleetRetriesOnlyTheZoneThatChanged(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 2)
	var once sync.Once
	dns := &zoneDNS{DNS: f.dns}
	dns.before = func(zone string, n int) {
		if zone == "b.example.com" && n == 1 {
			once.Do(func() {
				f.publish(t, "blue", "127.0.0.10", 100, func(e *endpoint.Endpoint) {
					if e.Name == "app001.b.example.com" {
						e.Targets = endpoint.Targets{"127.0.0.11"}
					}
				})
			})
		}
	}
	cfg := f.config(t, f.plan(t, "cas", 100), dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	f.wantAllAt(t, "blue=0 green=100")
	if a, b := dns.count("a.example.com"), dns.count("b.example.com"); a != 1 || b != 2 {
		t.Errorf("batches: zone a %d, zone b %d; want 1 and 2 (b refused once, sent again)", a, b)
	}
	for _, r := range f.records(t, "b.example.com") {
		if r.Name == "app001.b.example.com" && r.Type == "A" && r.SetIdentifier == "blue" && !slices.Equal(r.Targets, endpoint.Targets{"127.0.0.11"}) {
			t.Errorf("blue's member of app001.b.example.com is %v: the cutover reverted its publisher's value 127.0.0.11", r.Targets)
		}
	}
}

// TestFleetRecoversALostChangeID: zone b's batch lands but its answer, and change id, is
// lost: its authority records are written again to have a change to follow to INSYNC, and
// the run ends with every zone moved.
func TestFleetRecoversALostChangeID(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 2)
	dns := &zoneDNS{DNS: f.dns, lose: func(zone string, n int) bool { return zone == "b.example.com" && n == 1 }}
	cfg := f.config(t, f.plan(t, "lost", 100), dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	f.wantAllAt(t, "blue=0 green=100")
	if b := dns.count("b.example.com"); b != 2 {
		t.Errorf("zone b: %d batches, want 2 (the lost one, and its authority records again)", b)
	}
	if w := writtenEntries(t, cfg); len(w) != 1 || len(changeIDs(t, w[0])) != 2 || slices.Contains(changeIDs(t, w[0]), "") {
		t.Errorf("written %+v: want both zones' change ids", w)
	}
}

// TestFleetPartialWriteResumes: zone b refuses the step's batch for good (access denied)
// after zone a's landed. The run stops saying which zones have the new weights and how to
// go on; `run --resume` writes the step again and ends with every zone moved.
func TestFleetPartialWriteResumes(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 2)
	dns := &zoneDNS{DNS: f.dns, fail: func(zone string, n int) error {
		if zone == "b.example.com" && n == 1 {
			return errors.New("AccessDenied: not authorized to change zone b")
		}
		return nil
	}}
	// Zone a lands before zone b is sent: one zone in flight at a time is not what this
	// tests, so zone b waits for zone a's batch.
	var aSent sync.WaitGroup
	aSent.Add(1)
	dns.before = func(zone string, n int) {
		if zone == "b.example.com" && n == 1 {
			aSent.Wait()
		}
	}
	dns.lose = func(zone string, n int) bool {
		if zone == "a.example.com" && n == 1 {
			defer aSent.Done()
		}
		return false
	}
	cfg := f.config(t, f.plan(t, "partial", 100), dns)
	_, err := cutover.Run(context.Background(), cfg, false)
	var pw *lr53.PartialWriteError
	if !errors.As(err, &pw) || !slices.Equal(pw.Written, []string{"a.example.com"}) || !slices.Equal(pw.Failed, []string{"b.example.com"}) ||
		!strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "`crossfade cutover run --resume` writes the step again") {
		t.Fatalf("run: %v; want a partial write naming zone a written and zone b not", err)
	}
	a, _ := f.weights(t)
	if a["app000.a.example.com"] != "blue=0 green=100" || a["app000.b.example.com"] != "blue=100 green=0" {
		t.Fatalf("after the partial write: %v", a)
	}
	if _, err := cutover.Run(context.Background(), cfg, true); err != nil {
		t.Fatalf("run --resume: %v", err)
	}
	f.wantAllAt(t, "blue=0 green=100")
}

// TestFleetStopsSendingAfterAFailure: once one zone's batch fails, no zone not yet sent
// is written: 12 zones, at most 10 in flight, the first refused; the zones still waiting
// for a slot (z10, z11) keep their weights, and the partial write names them as failed.
func TestFleetStopsSendingAfterAFailure(t *testing.T) {
	zones := make([]string, 12)
	for i := range zones {
		zones[i] = fmt.Sprintf("z%02d.example.com", i)
	}
	f := newFleet(t, sandbox.Config{}, zones, 1)
	failed := make(chan struct{})
	// sending is closed once another zone than z00 is being sent: z00 fails only then,
	// so that the write is partial (had z00 failed before any other zone passed the
	// stop check, nothing else would be sent, and the run's error would be z00's alone).
	sending := make(chan struct{})
	var once sync.Once
	dns := &zoneDNS{DNS: f.dns, fail: func(zone string, n int) error {
		if zone == "z00.example.com" {
			defer close(failed)
			<-sending
			return errors.New("AccessDenied: not authorized to change zone z00")
		}
		return nil
	}}
	dns.before = func(zone string, n int) {
		if zone != "z00.example.com" {
			once.Do(func() { close(sending) })
			// The zones in flight beside z00 land after its failure has been seen: a
			// slot frees only then, and what starts in it must not be sent.
			<-failed
			time.Sleep(100 * time.Millisecond)
		}
	}
	cfg := f.config(t, f.plan(t, "stop", 100), dns)
	_, err := cutover.Run(context.Background(), cfg, false)
	var pw *lr53.PartialWriteError
	if !errors.As(err, &pw) {
		t.Fatalf("run: %v; want a partial write", err)
	}
	a, _ := f.weights(t)
	for _, z := range []string{"z10.example.com", "z11.example.com"} {
		if got := a["app000."+z]; got != "blue=100 green=0" {
			t.Errorf("%s: %s after another zone's batch failed; want it not written (blue=100 green=0)", z, got)
		}
		if !slices.Contains(pw.Failed, z) {
			t.Errorf("partial write names %v failed; want %s among them", pw.Failed, z)
		}
	}
}

// TestFleetReleasesEveryZone: `cutover release --force` after a fleet cutover deletes the
// authority records of every zone, one batch per zone, and says how many.
func TestFleetReleasesEveryZone(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 2)
	cfg := f.config(t, f.plan(t, "release", 100), f.dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	held := func() (n int) {
		for _, z := range f.zones {
			for _, r := range f.records(t, z) {
				if _, ok := registry.ParseAuthority(r); ok {
					n++
				}
			}
		}
		return n
	}
	if n := held(); n != 4 {
		t.Fatalf("%d authority records after the run, want 4 (one per name)", n)
	}
	rel, err := cutover.Release(context.Background(), cfg, cutover.ReleaseOptions{Force: true})
	if err != nil || rel.Records != 4 {
		t.Fatalf("release --force: %+v, %v; want 4 records released", rel, err)
	}
	if n := held(); n != 0 {
		t.Errorf("%d authority records left after release", n)
	}
}

// TestFleetPartialReleaseSaysSo: a release whose batch lands in one zone and is refused
// in the other reads the zones again; when that read fails, the error still says how
// many authority records the first attempt released, and in which change: those weights
// are the publishers' again, whatever stopped the rest.
func TestFleetPartialReleaseSaysSo(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 2)
	dns := &zoneDNS{DNS: f.dns}
	cfg := f.config(t, f.plan(t, "partial-release", 100), dns)
	if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
		t.Fatalf("run: %v", err)
	}
	var refusedOnce atomic.Bool
	dns.mu.Lock()
	dns.fail = func(zone string, n int) error {
		if zone == "b.example.com" {
			refusedOnce.Store(true)
			return &provider.RejectedError{Zone: provider.Zone{Name: zone}, Code: "InvalidChangeBatch",
				Messages: []string{"Tried to delete resource record set but it was not found"}, Err: errors.New("InvalidChangeBatch")}
		}
		return nil
	}
	dns.read = func(zone string) error {
		if refusedOnce.Load() {
			return errors.New("Throttling: Rate exceeded")
		}
		return nil
	}
	dns.mu.Unlock()
	_, err := cutover.Release(context.Background(), cfg, cutover.ReleaseOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "release: 2 authority records released (changes /change/") ||
		!strings.Contains(err.Error(), "the others not: ") || !strings.Contains(err.Error(), "Rate exceeded") {
		t.Fatalf("release: %v; want it to say that 2 authority records were released, and the read's error", err)
	}
}

// TestFleetRefusals: what the lever of one zone refuses is refused in any zone of a
// fleet, named: members whose weights differ between zones, and a listed record missing
// from its zone.
func TestFleetRefusals(t *testing.T) {
	f := newFleet(t, sandbox.Config{}, []string{"a.example.com", "b.example.com"}, 1)
	// Blue's member in zone b at 50: the cutover would start from two weights.
	f.publish(t, "blue", "127.0.0.10", 100, func(e *endpoint.Endpoint) {
		if e.Name == "app000.b.example.com" {
			e.Policy = endpoint.WeightedPolicy(50)
		}
	})
	cfg := f.config(t, f.plan(t, "differ", 100), f.dns)
	_, err := cutover.DryRun(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "app000.a.example.com A [blue] has weight 100 but app000.b.example.com A [blue] has 50") {
		t.Errorf("weights differing between zones: %v", err)
	}
	p := f.plan(t, "ghost", 100)
	p.SelectAllWeighted = false
	p.Records = []spec.Record{{Name: "app000.a.example.com", Type: "A"}, {Name: "ghost.b.example.com", Type: "A"}}
	_, err = cutover.DryRun(context.Background(), f.config(t, p, f.dns))
	if err == nil || !strings.Contains(err.Error(), "ghost.b.example.com A [blue]: no such record set in zone b.example.com") {
		t.Errorf("a record missing from its zone: %v", err)
	}
}

// BenchmarkFleet measures issue 32's fleet cutover: 10 zones × 100 weighted names
// (blue and green members, each with its ownership record), all selected. plan is
// `crossfade cutover plan`'s work (read, select, check, render every batch), step one
// step's write and INSYNC through the lever; with_change_delay_500ms the same on a
// sandbox that keeps each change PENDING for 500 ms, as Route 53 does for tens of
// seconds: the zones' changes followed in parallel, a step waits for about one delay.
func BenchmarkFleet(b *testing.B) {
	zones := make([]string, 10)
	for i := range zones {
		zones[i] = fmt.Sprintf("z%d.example.com", i)
	}
	for _, bc := range []struct {
		name  string
		delay time.Duration
	}{{"no_change_delay", 0}, {"with_change_delay_500ms", 500 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFleet(b, sandbox.Config{ChangeDelay: bc.delay}, zones, 100)
			if bc.delay == 0 {
				b.Run("plan", func(b *testing.B) { benchPlan(b, f) })
			}
			b.Run("step", func(b *testing.B) { benchStep(b, f) })
		})
	}
}

// benchPlan is `cutover plan --batches` of the fleet: DryRun and its rendering, each
// iteration with a provider of its own, as each `crossfade cutover plan` is a process of
// its own (its requests paced from a full bucket: 10 a second, 50 at once).
func benchPlan(b *testing.B, f *fleetFixture) {
	batches, calls := 0, 0
	p := f.plan(b, "bench-plan", 10, 50, 100)
	for b.Loop() {
		b.StopTimer()
		cfg := f.config(b, p, route53test.Paced(b, f.sb))
		apiBefore := apiCalls(b, f.sb)
		b.StartTimer()
		pv, err := cutover.DryRun(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := render.Preview(io.Discard, pv); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		batches, calls = 0, apiCalls(b, f.sb)-apiBefore
		for _, w := range pv.Writes {
			batches += strings.Count(string(w.Batch), "# batch ")
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(calls), "requests/plan")
	b.ReportMetric(float64(len(f.zones)*len(f.names[f.zones[0]])), "names")
	b.ReportMetric(float64(batches), "batches/plan")
}

// benchStep writes one step's weights through the fleet lever, alternately to green and
// back, and follows every change to INSYNC (asking every 250 ms; the runner's default is
// 1 s). A step of a run follows a hold of at least the records' TTL, in which the
// provider's request bucket fills again: each iteration starts from a full one (a
// provider of its own), reads as the runner reads before a write, then writes.
func benchStep(b *testing.B, f *fleetFixture) {
	p := f.plan(b, "bench-step", 100)
	lv, _, err := f.config(b, p, f.dns).Levers(p)
	if err != nil {
		b.Fatal(err)
	}
	sel, err := lv.Select(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	p.Records = sel.Records
	me := registry.Runner{Token: "bench", Host: "h", PID: 1}
	ro := lever.ReadOptions{Runner: me}
	weights := []map[string]int64{{"blue": 0, "green": 100}, {"blue": 100, "green": 0}}
	i, sent, calls := 0, 0, 0
	for b.Loop() {
		b.StopTimer()
		dns := &zoneDNS{DNS: route53test.Paced(b, f.sb)}
		lv, _, err := f.config(b, p, dns).Levers(p)
		if err != nil {
			b.Fatal(err)
		}
		env := lever.WriteEnv{What: "step", Comment: "bench", Log: discard(),
			Read:  func(ctx context.Context) (lever.Snapshot, error) { return lv.Read(ctx, ro) },
			Drift: func(lever.Snapshot) error { return nil }, BeforeSend: func(lever.Snapshot) error { return nil }}
		s, err := lv.Read(context.Background(), ro)
		if err != nil {
			b.Fatal(err)
		}
		before := dns.total()
		apiBefore := apiCalls(b, f.sb)
		b.StartTimer()
		w, err := lv.Write(context.Background(), s, lever.Change{Weights: weights[i%2]}, env)
		if err != nil {
			b.Fatal(err)
		}
		for {
			ok, err := lv.InEffect(context.Background(), w)
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		b.StopTimer()
		sent, calls = dns.total()-before, apiCalls(b, f.sb)-apiBefore
		b.StartTimer()
		ro.Held = true
		i++
	}
	b.ReportMetric(float64(sent), "batches/step")
	b.ReportMetric(float64(calls), "requests/step")
}

// apiCalls is the number of Route 53 requests the sandbox has answered.
func apiCalls(tb testing.TB, sb *sandbox.Sandbox) (n int) {
	for op, c := range sandboxtest.APICalls(tb, sb) {
		if op != "" {
			n += c
		}
	}
	return n
}

// total is the batches sent to every zone.
func (d *zoneDNS) total() (n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.batches {
		n += c
	}
	return n
}

// discard is a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
