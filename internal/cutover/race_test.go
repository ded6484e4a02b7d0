package cutover

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// publishAs syncs owner's weighted member of app.example.com with the given target, weight
// and TTL, as `crossfade sync` would.
func publishAs(p provider.Provider, owner, ip string, weight, ttl int64) (*controller.Report, error) {
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		return nil, err
	}
	e := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{ip}, TTL: endpoint.TTL(ttl),
		SetIdentifier: owner, Policy: endpoint.WeightedPolicy(weight), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	return (&controller.Syncer{Provider: p, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), []*endpoint.Endpoint{e})
}

// records reads the zone's record sets of app.example.com and its ownership and
// authority records, by key.
func (e *env) records(t *testing.T) map[endpoint.Key]*endpoint.Endpoint {
	t.Helper()
	zones, _ := e.DNS.Zones(context.Background())
	recs, err := e.DNS.Records(context.Background(), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[endpoint.Key]*endpoint.Endpoint{}
	for _, r := range recs {
		out[r.Key()] = r
	}
	return out
}

// authorityOf reads the authority record of app.example.com.
func (e *env) authorityOf(t *testing.T) (registry.Authority, bool) {
	t.Helper()
	return registry.ParseAuthority(e.records(t)[endpoint.Key{Name: "_crossfade-weights.app.example.com", Type: "TXT"}])
}

// startToken reads the runner token a cutover's journal started with.
func startToken(t *testing.T, dir string) string {
	t.Helper()
	entries, err := journal.Read(PathsFor(dir, "app").Journal)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Kind == kindStart {
			return e.Token
		}
	}
	t.Fatalf("journal in %s has no start entry", dir)
	return ""
}

// TestLowerTTLMovesTheWholeGroup: app.example.com has a third weighted member, purple's,
// beside the two the cutover moves. Route 53 gives every weighted set of a name and type
// one TTL (the sandbox refuses a set created beside others with another TTL), so the
// TTL lowering and the restore must move purple's member too, in the same batch; its
// weight is never touched.
func TestLowerTTLMovesTheWholeGroup(t *testing.T) {
	e := newEnv(t, 100, 0)
	if rep, err := publishAs(e.DNS, "purple", "127.0.0.30", 10, 1); err != nil || rep.Err() != nil {
		t.Fatalf("publish purple: %v", errors.Join(err, rep.Err()))
	}
	e.SetTTL(t, 2)
	p := testPlan(t)
	p.Steps = p.Steps[2:]
	p.LowerTTL = 1
	cfg := e.config(p)
	// `cutover plan` shows purple's member in the TTL batches, exactly as they are sent.
	pv, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lower := string(pv.Writes[0].Batch); !strings.Contains(lower, `"SetIdentifier": "purple"`) || pv.Writes[0].Changes != 7 {
		t.Errorf("the TTL lowering renders %d changes, want purple's among the 7:\n%s", pv.Writes[0].Changes, lower)
	}
	if owners := strings.Join(pv.Owners, "\n"); !strings.Contains(owners, "app.example.com A [purple] owned by purple") {
		t.Errorf("plan's owners:\n%s\nwant purple's member, whose TTL moves", owners)
	}
	var holds int
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase != PhaseHolding {
			return
		}
		holds++
		for key, ttl := range e.TTLs(t) {
			if ttl != 1 {
				t.Errorf("while step %d holds: %s has TTL %d, want the lowered 1", ev.Step+1, key, ttl)
			}
		}
	})
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v", err)
	}
	if holds == 0 {
		t.Fatal("no step held")
	}
	ttls := e.TTLs(t)
	if len(ttls) != 3 {
		t.Fatalf("A sets %v, want blue's, green's and purple's", ttls)
	}
	for key, ttl := range ttls {
		if ttl != 2 {
			t.Errorf("%s TTL %d after the cutover, want the group's 2 restored", key, ttl)
		}
	}
	recs := e.records(t)
	if w := recs[endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "purple"}].Policy.Weight; w != 10 {
		t.Errorf("purple's weight %d, want its 10 untouched", w)
	}
	if a, txt := e.Weights(t); a["green"] != 100 || txt["purple"] != 10 {
		t.Errorf("weights A %v TXT %v", a, txt)
	}
}

// TestLowerTTLRefusesAnUnownedMember: a third weighted member nobody owns would have to be
// rewritten to lower the group's TTL (safety rule 1: never overwrite what this owner
// does not own), so `plan` and `run` refuse, naming it, and write nothing. Without
// spec.ttl.lower the member is never touched, and the cutover runs.
func TestLowerTTLRefusesAnUnownedMember(t *testing.T) {
	e := newEnv(t, 100, 0)
	zones, _ := e.DNS.Zones(context.Background())
	stray := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"127.0.0.40"}, TTL: 1,
		SetIdentifier: "stray", Policy: endpoint.WeightedPolicy(1)}
	if err := e.DNS.Apply(context.Background(), zones[0], changes.Batch{{Action: changes.Create, Endpoint: stray}}); err != nil {
		t.Fatal(err)
	}
	e.SetTTL(t, 2)
	p := testPlan(t)
	p.Steps = p.Steps[2:]
	p.LowerTTL = 1
	const want = "app.example.com A [stray]: has no ownership TXT record"
	if _, err := DryRun(context.Background(), e.config(p)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("plan: %v, want a refusal naming the stray member", err)
	}
	if _, err := Run(context.Background(), e.config(p), false); !errors.As(err, new(*NotReadyError)) || !strings.Contains(err.Error(), want) {
		t.Fatalf("run: %v, want a refusal naming the stray member", err)
	}
	for key, ttl := range e.TTLs(t) {
		if ttl != 2 {
			t.Errorf("%s TTL %d after a refused run, want 2", key, ttl)
		}
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("a refused run wrote its authority record")
	}

	p.LowerTTL = 0
	p.Steps[0].Pause, p.Steps[1].Pause = 2*time.Second, 2*time.Second
	cfg := e.config(p)
	cfg.StateDir = t.TempDir()
	if rep, err := Run(context.Background(), cfg, false); err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run without ttl.lower: %v", err)
	}
	got := e.records(t)[stray.Key()]
	if got == nil || got.TTL != 2 || got.Policy.Weight != 1 {
		t.Errorf("the stray member after the cutover: %+v, want it untouched", got)
	}
}

// recordingDNS counts the batches a runner got applied.
type recordingDNS struct {
	DNS
	applied atomic.Int64
}

func (d *recordingDNS) ApplyChange(ctx context.Context, z provider.Zone, b changes.Batch, comment string) (string, error) {
	id, err := d.DNS.ApplyChange(ctx, z, b, comment)
	if err == nil {
		d.applied.Add(1)
	}
	return id, err
}

// TestTwoRunnersOneWins starts two runners of the same cutover at once, with different
// state directories (two machines: their flock locks do not see each other), each
// moving other weights. In every iteration exactly one runs the cutover to its end; the
// other is refused, naming the winner's runner token, having written nothing, so that
// the zone only ever holds weights the winner wrote. Without the runner token in the
// authority record and its CREATE-then-compare-and-swap, both ran, writing over each
// other's steps; with the token but an UPSERT of the record, both wrote their first
// batch.
func TestTwoRunnersOneWins(t *testing.T) {
	const iterations = 20
	// All at once, each on its own sandbox: a run mostly waits out its holds, and
	// t.Parallel would run only GOMAXPROCS of them at a time.
	var all sync.WaitGroup
	for i := range iterations {
		all.Add(1)
		go t.Run(fmt.Sprint(i), func(t *testing.T) {
			defer all.Done()
			e := newEnv(t, 100, 0)
			type runner struct {
				dir   string
				plan  *spec.Plan
				dns   *recordingDNS
				err   error
				final map[string]int64
			}
			var runners [2]*runner
			// Both begin with a step that moves no weight, so their first batches hold
			// nothing but the authority record: the record alone must settle the race.
			for k, steps := range [2][]int64{{0, 30, 60}, {0, 20, 80}} {
				p := testPlan(t)
				p.Steps = nil
				for _, pct := range steps {
					p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}, Pause: time.Second})
				}
				runners[k] = &runner{dir: t.TempDir(), plan: p, dns: &recordingDNS{DNS: e.DNS},
					final: map[string]int64{"blue": 100 - steps[2], "green": steps[2]}}
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for _, r := range runners {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cfg := e.config(r.plan)
					cfg.StateDir, cfg.Levers = r.dir, e.Levers(r.dns)
					<-start
					_, r.err = Run(context.Background(), cfg, false)
				}()
			}
			close(start)
			wg.Wait()
			var won, lost []*runner
			for _, r := range runners {
				if r.err == nil {
					won = append(won, r)
				} else {
					lost = append(lost, r)
				}
			}
			if len(won) != 1 {
				t.Fatalf("%d runners completed (errors %v, %v), want exactly one", len(won), runners[0].err, runners[1].err)
			}
			winner, loser := won[0], lost[0]
			token := startToken(t, winner.dir)
			var held *HeldError
			if !errors.As(loser.err, &held) || held.Holder.Token != token || !strings.Contains(loser.err.Error(), "runner "+token+"@") {
				t.Errorf("the loser's error: %v; want a HeldError naming runner %s", loser.err, token)
			}
			if n := loser.dns.applied.Load(); n != 0 {
				t.Errorf("the loser got %d batches applied, want none", n)
			}
			if a, txt := e.Weights(t); a["blue"] != winner.final["blue"] || a["green"] != winner.final["green"] || txt["green"] != winner.final["green"] {
				t.Errorf("weights A %v TXT %v, want the winner's %v", a, txt, winner.final)
			}
			if a, ok := e.authorityOf(t); !ok || a.Runner.Token != token {
				t.Errorf("authority record %+v, want the winner's token %s", a, token)
			}
		})
	}
	all.Wait()
}

// targetIP is the address the racing publisher's source asks for at index n: blue's
// original address, then 127.1.x.y.
func targetIP(n int64) string {
	if n == 0 {
		return "127.0.0.10"
	}
	return fmt.Sprintf("127.1.%d.%d", n/256, n%256)
}

// targetIndex reverses targetIP; -1 for an address it never gives.
func targetIndex(ip string) int64 {
	if ip == "127.0.0.10" {
		return 0
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() || a.As4()[0] != 127 || a.As4()[1] != 1 {
		return -1
	}
	b := a.As4()
	return int64(b[2])*256 + int64(b[3])
}

// parking makes the racing publisher wait between reading the zone and writing its plan.
type parking struct {
	parked, release, done chan struct{}
}

// parkingProvider is the publisher's provider: its next Records call, once asked, returns
// only when released, so that the sync plans on a read the cutover then outdates.
type parkingProvider struct {
	*route53.Provider
	mu   sync.Mutex
	next *parking
}

func (p *parkingProvider) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := p.Provider.Records(ctx, z)
	p.mu.Lock()
	pk := p.next
	p.next = nil
	p.mu.Unlock()
	if pk != nil {
		close(pk.parked)
		<-pk.release
	}
	return recs, err
}

// racingPublisher is blue's publisher, syncing back to back while a cutover moves blue's
// weight: its source keeps asking for weight 100 (blue's before the cutover) and, every
// few syncs, a new target. A cutover's write can also ask it to write a new target at
// once (bump), or to read the zone and wait before writing (park).
type racingPublisher struct {
	prov   *parkingProvider
	syncer *controller.Syncer
	// cur is the target index the source asks for; only the loop touches it.
	cur int64
	// acked is the highest target index a sync has confirmed in the zone: written, or
	// found there. Only this publisher writes blue's targets, so from then on the zone
	// holds it or a later one, unless someone else writes an older one back.
	acked atomic.Int64
	bump  chan chan struct{}
	park  chan *parking
	syncs atomic.Int64
}

func newRacingPublisher(t *testing.T, e *env) *racingPublisher {
	t.Helper()
	prov := &parkingProvider{Provider: e.DNS}
	return &racingPublisher{prov: prov, syncer: &controller.Syncer{Provider: prov, Registry: mustRegistry(t, "blue"), Policy: changes.Sync},
		bump: make(chan chan struct{}), park: make(chan *parking)}
}

// run syncs until ctx ends.
func (p *racingPublisher) run(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		select {
		case done := <-p.bump:
			p.cur++
			for tries := 0; !p.sync(ctx) && tries < 50 && ctx.Err() == nil; tries++ {
			}
			close(done)
			continue
		case pk := <-p.park:
			p.cur++
			p.prov.mu.Lock()
			p.prov.next = pk
			p.prov.mu.Unlock()
			p.sync(ctx)
			close(pk.done)
			continue
		default:
		}
		if i%5 == 4 {
			p.cur++
		}
		p.sync(ctx)
	}
}

// sync publishes the source's current ask once; true when the zone then holds it.
func (p *racingPublisher) sync(ctx context.Context) bool {
	e := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{targetIP(p.cur)}, TTL: 1,
		SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(100), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}}
	rep, err := p.syncer.Sync(ctx, []*endpoint.Endpoint{e})
	p.syncs.Add(1)
	// A sync cut short by the end of the test writes nothing, and says nothing of it.
	if err != nil || rep.Err() != nil || rep.Refused() > 0 || ctx.Err() != nil {
		return false
	}
	p.acked.Store(p.cur)
	return true
}

// racedDNS is the cutover's DNS. Before the first attempt of each write that changes
// blue's member it lets the publisher race it (before); once the write has landed (after
// any attempts the race made it refuse) it lets the publisher go on (after). It checks
// every batch it gets applied: blue's member must never be written with a target older
// than one the publisher had confirmed before the batch was sent.
type racedDNS struct {
	DNS
	pub           *racingPublisher
	before, after func()
	// pending is after, owed since before ran; the test calls it should the run end first.
	pending func()
	mu      sync.Mutex
	seen    map[string]bool
	reverts []string
	refused int
}

var blueKey = endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"}

func (d *racedDNS) ApplyChange(ctx context.Context, z provider.Zone, b changes.Batch, comment string) (string, error) {
	touches := false
	for _, c := range b {
		touches = touches || c.Endpoint.Key() == blueKey
	}
	d.mu.Lock()
	first := touches && !d.seen[comment]
	d.seen[comment] = true
	d.mu.Unlock()
	if first && d.before != nil {
		d.before()
		d.pending = d.after
	}
	acked := d.pub.acked.Load()
	id, err := d.DNS.ApplyChange(ctx, z, b, comment)
	refused := errors.As(err, new(*provider.RejectedError))
	if !refused && d.pending != nil {
		d.pending()
		d.pending = nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if refused {
		d.refused++
	}
	if err == nil {
		for _, c := range b {
			if c.Action != changes.Delete && c.Endpoint.Key() == blueKey {
				if n := targetIndex(c.Endpoint.Targets[0]); n < acked {
					d.reverts = append(d.reverts, fmt.Sprintf("%s wrote blue's target %s back over the publisher's %s", comment, c.Endpoint.Targets[0], targetIP(acked)))
				}
			}
		}
	}
	return id, err
}

// TestPublisherRace runs a cutover while blue's publisher syncs back to back (its source
// asking for blue's original weight and, now and then, new targets), and forces, at every
// write that moves blue's weight, the interleaving each side must survive:
//
//   - cutover-stale: the cutover has read the zone, then the publisher writes a new target
//     before the cutover's batch lands. Every cutover write is a compare-and-swap, so
//     that batch is refused and built again from a fresh read: the publisher's target
//     change is never reverted.
//   - publisher-stale: the publisher has read the zone, then the cutover's step lands
//     before the publisher's write. The publisher must not write its stale weight back
//     over the step (the planner's side: its updates must be compare-and-swaps too):
//     after every step's INSYNC, and after the cutover completes, the zone holds the
//     cutover's weights.
func TestPublisherRace(t *testing.T) {
	cases := []struct {
		name string
		// setup wires the forced interleaving into the cutover's DNS.
		setup func(d *racedDNS)
		// weights: check the weights at every step and the end (the publisher's side);
		// else the targets (the cutover's side).
		weights bool
	}{
		{"cutover-stale: the cutover never reverts the publisher's targets", func(d *racedDNS) {
			d.before = func() {
				done := make(chan struct{})
				d.pub.bump <- done
				<-done
			}
		}, false},
		{"publisher-stale: the publisher never reverts the cutover's weights", func(d *racedDNS) {
			var pk *parking
			d.before = func() {
				pk = &parking{parked: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
				d.pub.park <- pk
				<-pk.parked
			}
			d.after = func() {
				close(pk.release)
				<-pk.done
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 100, 0)
			pub := newRacingPublisher(t, e)
			d := &racedDNS{DNS: e.DNS, pub: pub, seen: map[string]bool{}}
			tc.setup(d)
			p := testPlan(t)
			p.Steps = p.Steps[1:] // 10, 50, 100 %: every step moves blue's weight
			cfg := e.config(p)
			cfg.Levers = e.Levers(d)
			held := map[int]bool{}
			cfg.Progress = progressHook(func(ev Event) {
				if !tc.weights || ev.Phase != PhaseHolding || held[ev.Step] {
					return
				}
				held[ev.Step] = true // the first check of the hold: right after INSYNC
				want := p.Steps[ev.Step].Weights
				if a, txt := e.Weights(t); a["blue"] != want.From || a["green"] != want.To || txt["blue"] != want.From {
					t.Errorf("step %d after INSYNC: weights A %v TXT %v, want blue %d green %d: a publisher wrote over the cutover", ev.Step+1, a, txt, want.From, want.To)
				}
			})
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); pub.run(ctx) }()
			rep, err := Run(context.Background(), cfg, false)
			if d.pending != nil {
				d.pending()
			}
			stop()
			<-done
			if err != nil || rep.Outcome != outcomeCompleted {
				t.Fatalf("run: %v", err)
			}
			t.Logf("%d publisher syncs, last target %s; %d cutover batches refused and written again", pub.syncs.Load(), targetIP(pub.acked.Load()), d.refused)
			if tc.weights {
				if a, txt := e.Weights(t); a["blue"] != 0 || a["green"] != 100 || txt["blue"] != 0 {
					t.Errorf("after the cutover: weights A %v TXT %v, want blue 0 green 100", a, txt)
				}
				return
			}
			for _, r := range d.reverts {
				t.Error(r)
			}
			if d.refused == 0 {
				t.Error("no cutover batch was refused: the forced race did not happen")
			}
			// Unlike the publisher, the cutover must not have changed blue's target.
			if got := e.records(t)[blueKey]; got == nil || targetIndex(got.Targets[0]) < pub.acked.Load() {
				t.Errorf("blue's member after the cutover: %v, want the publisher's latest target %s", got, targetIP(pub.acked.Load()))
			}
		})
	}
}

// TestAbortTakesOver: a cutover runs from one machine (state directory A); from another
// (B), whose journal of the same cutover started with its own runner token (the loser of
// a race leaves one), `abort` takes the weights over, replacing A's authority record as
// read, journals it, and rolls back. A's runner, promoted, is refused at its next write
// naming B's runner, and writes nothing over B's rollback. `release` from A needs
// --force to delete B's record, and says whose it was.
func TestAbortTakesOver(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Steps = p.Steps[1:3] // 10, 50 %
	p.Steps[0].Pause = time.Hour
	cfgA := e.config(p)
	phases, done := startRun(cfgA, false)
	waitPhase(t, phases, PhaseHolding)
	tokenA := startToken(t, cfgA.StateDir)

	cfgB := e.config(p)
	cfgB.StateDir = t.TempDir()
	seedJournal(t, PathsFor(cfgB.StateDir, "app").Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, TTL: 1, Token: "b0b0b0b0b0b0b0b0", PlanHash: planHash(p)},
	})
	rep, err := Abort(context.Background(), cfgB)
	if err != nil || rep.Outcome != outcomeRolledBack {
		t.Fatalf("abort from B: %v", err)
	}
	var controls []string
	for _, c := range rep.Controls {
		controls = append(controls, c.Detail)
	}
	if got := strings.Join(controls, "; "); !strings.Contains(got, "took the weights over from runner "+tokenA+"@") {
		t.Errorf("B's report controls %q, want the takeover from A's runner", got)
	}
	if a, ok := e.authorityOf(t); !ok || a.Runner.Token != "b0b0b0b0b0b0b0b0" {
		t.Errorf("authority after the abort: %+v, want B's", a)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after B's abort %v, want 100/0", a)
	}

	if err := SendCommand(PathsFor(cfgA.StateDir, "app"), Command{Command: CommandPromote, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var held *HeldError
		if !errors.As(err, &held) || held.Holder.Token != "b0b0b0b0b0b0b0b0" {
			t.Fatalf("A's run after the takeover: %v, want a HeldError naming B's runner", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("A's runner did not stop")
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after A's refused write %v, want B's 100/0", a)
	}

	// A finished cutover elsewhere holds the record: a release here without --force
	// refuses, naming it; with --force it deletes it and says whose it was.
	cfgC := e.config(p)
	cfgC.StateDir = t.TempDir()
	seedJournal(t, PathsFor(cfgC.StateDir, "app").Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, Token: "c0c0c0c0c0c0c0c0"},
		{Kind: kindDone, Step: -1, Detail: outcomeCompleted},
	})
	if _, err := Release(context.Background(), cfgC, ReleaseOptions{}); !errors.As(err, new(*HeldError)) || !strings.Contains(err.Error(), "b0b0b0b0b0b0b0b0") {
		t.Errorf("release of another runner's record without --force: %v", err)
	}
	rel, err := Release(context.Background(), cfgC, ReleaseOptions{Force: true})
	if err != nil || rel.Records != 1 || len(rel.TakenOver) != 1 || rel.TakenOver[0].Token != "b0b0b0b0b0b0b0b0" {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("the authority record is still there after release --force")
	}
}

// TestResumeWithoutTokens: a journal and an authority record written before runner
// tokens (neither has one) still resume: an absent token is compatible with itself. A new
// run, whose token is fresh, does not take such a record for its own.
func TestResumeWithoutTokens(t *testing.T) {
	e := newEnv(t, 90, 10) // as the old runner's step 2 left it
	zones, _ := e.DNS.Zones(context.Background())
	old := registry.AuthorityRecord("app.example.com", []string{"A"}, "app")
	if err := e.DNS.Apply(context.Background(), zones[0], changes.Batch{{Action: changes.Create, Endpoint: old}}); err != nil {
		t.Fatal(err)
	}
	fresh := e.config(testPlan(t))
	fresh.StateDir = t.TempDir()
	if _, err := Run(context.Background(), fresh, false); !errors.As(err, new(*HeldError)) || !strings.Contains(err.Error(), "records no token") {
		t.Errorf("a new run over a token-less record of its cutover: %v, want a HeldError", err)
	}
	seedJournal(t, PathsFor(e.dir, "app").Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, TTL: 1},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
	})
	rep, err := Run(context.Background(), e.config(testPlan(t)), true)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("resume of an old journal: %v", err)
	}
	if a, _ := e.Weights(t); a["green"] != 100 {
		t.Errorf("weights %v", a)
	}
	if a, ok := e.authorityOf(t); !ok || a.Runner.Token != "" || a.Runner.PID == 0 {
		t.Errorf("authority after the resume: %+v, want no token, and where it ran", a)
	}
}

// TestWriteGivesUpWhenTheZoneKeepsMoving: a publisher changes blue's targets before every
// attempt of the cutover's write lands. The write is refused each time and built again;
// after lever.CASAttempts it fails, saying what moved, and has written nothing. A batch Route
// 53 refuses although nothing it read has moved fails at once.
func TestWriteGivesUpWhenTheZoneKeepsMoving(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Steps = p.Steps[2:3]
	cfg := e.config(p)
	n := int64(0)
	cfg.Levers = e.Levers(&hookDNS{DNS: e.DNS, before: func(changes.Batch) changes.Batch {
		n++
		if rep, err := publishAs(e.DNS, "blue", targetIP(n), 100, 1); err != nil || rep.Err() != nil {
			t.Errorf("publisher: %v", errors.Join(err, rep.Err()))
		}
		return nil
	}})
	_, err := Run(context.Background(), cfg, false)
	if !errors.As(err, new(*provider.RejectedError)) || !strings.Contains(err.Error(), fmt.Sprintf("before each of %d attempts", lever.CASAttempts)) ||
		!strings.Contains(err.Error(), "app.example.com A [blue]: "+targetIP(lever.CASAttempts-1)) {
		t.Fatalf("run: %v, want it to give up naming blue's moving target", err)
	}
	if n != lever.CASAttempts {
		t.Errorf("%d attempts, want %d", n, lever.CASAttempts)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 {
		t.Errorf("weights %v: the cutover wrote although every attempt was refused", a)
	}

	e = newEnv(t, 100, 0)
	cfg = e.config(p)
	attempts := 0
	cfg.Levers = e.Levers(&hookDNS{DNS: e.DNS, before: func(b changes.Batch) changes.Batch {
		attempts++
		gone := &endpoint.Endpoint{Name: "nothing.example.com", Type: "A", Targets: endpoint.Targets{"127.0.0.1"}, TTL: 1}
		return append(b, changes.Change{Action: changes.Delete, Endpoint: gone})
	}})
	if _, err := Run(context.Background(), cfg, false); err == nil || !strings.Contains(err.Error(), "nothing it read has changed") || attempts != 1 {
		t.Errorf("run: %v after %d attempts, want one refused attempt", err, attempts)
	}
}

// hookDNS calls before ahead of every write; a batch it returns is sent instead.
type hookDNS struct {
	DNS
	before func(changes.Batch) changes.Batch
}

func (d *hookDNS) ApplyChange(ctx context.Context, z provider.Zone, b changes.Batch, comment string) (string, error) {
	if nb := d.before(b); nb != nil {
		b = nb
	}
	return d.DNS.ApplyChange(ctx, z, b, comment)
}
