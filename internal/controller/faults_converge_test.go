package controller

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// Faults converge (issue 12): two owners, each with a realistic desired set, sync through a
// Route 53 that fails a fifth of all calls (throttled, PriorRequestNotComplete, 500, and
// the change committed but its answer lost: a 500, or a dropped connection). Repeated syncs
// must reach the zone a fault-free run reaches, never losing a record on the way and never
// touching one that is not theirs.

const (
	// faultRate is the fraction of API calls that fail, split evenly over the kinds.
	faultRate = 0.2
	// maxFaultSyncs bounds each owner's syncs: a sync that never converges fails the test
	// rather than hanging it.
	maxFaultSyncs = 30
)

// faultConfig fails rate of every call, split over five kinds. The injector draws the kinds
// one after another, so each gets the per-kind rate p with 1-(1-p)^5 = rate.
func faultConfig(rate float64) faults.Config {
	p := 1 - math.Pow(1-rate, 1.0/5)
	return faults.Config{ThrottleRate: p, PriorRequestRate: p, ServerErrorRate: p, CommitThenFailRate: p, CommitThenDropRate: p}
}

// putFaults sets the sandbox's faults through its admin API, as a test harness would.
func putFaults(tb testing.TB, sb *sandbox.Sandbox, cfg faults.Config) {
	tb.Helper()
	body, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	sandboxtest.SetFaults(tb, sb, string(body))
}

// faultOwner is one cluster and what its sources want at each step: step 0 is synced
// fault-free, the later ones with faults.
type faultOwner struct {
	name  string
	steps [][]*endpoint.Endpoint
}

// faultSteps is how many times the desired sets change under faults.
const faultSteps = 6

func faultA(name, ip string, ttl int64, owner string) *endpoint.Endpoint {
	first, _, _ := strings.Cut(name, ".")
	return &endpoint.Endpoint{Name: name, Type: endpoint.TypeA, Targets: endpoint.NewTargets(ip), TTL: endpoint.TTL(ttl),
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/" + owner + "/" + first}}
}

// faultOwners builds blue's and green's desired sets, about 50 names each: 45 names of
// their own and 10 weighted names they share, each owning its own member there. From one
// step to the next most names change, as a busy day's deployments would change them: new
// addresses, a TTL, a routing-policy transition (simple <-> weighted), an alias and back,
// a name that goes and comes back; and every shared weight moves.
func faultOwners() []*faultOwner {
	var out []*faultOwner
	for oi, o := range []string{actorBlue, actorGreen} {
		fo := &faultOwner{name: o}
		for step := range faultSteps + 1 {
			var want []*endpoint.Endpoint
			for i := range 45 {
				name := fmt.Sprintf("%s-svc%02d.example.com", o, i)
				ip1, ip2 := fmt.Sprintf("10.%d.0.%d", oi, i+1), fmt.Sprintf("10.%d.1.%d", oi, i+1)
				e := faultA(name, ip1, 300, o)
				switch (i*7 + step*3) % 9 {
				case 0:
					continue // not wanted at this step
				case 1:
				case 2:
					e.Targets = endpoint.NewTargets(ip2)
				case 3:
					e.TTL = 60
				case 4:
					e.SetIdentifier, e.Policy, e.TTL = o, endpoint.WeightedPolicy(1), 60
				case 5:
					e.SetIdentifier, e.Policy, e.TTL = o, endpoint.WeightedPolicy(2), 60
					e.Targets = endpoint.NewTargets(ip1, ip2)
				case 6, 7:
					e.Type, e.Targets, e.TTL = endpoint.TypeCNAME, endpoint.NewTargets("lb.example.com"), 0
					e.SetProp(endpoint.PropAlias, "true")
					if i%2 == 1 {
						e.SetIdentifier, e.Policy = o, endpoint.WeightedPolicy(3)
					}
				case 8:
					e.Targets = endpoint.NewTargets(ip1, ip2)
				}
				want = append(want, e)
			}
			for i := range 10 {
				e := faultA(fmt.Sprintf("shared%02d.example.com", i), fmt.Sprintf("10.%d.3.%d", oi, i+1), 60, o)
				e.SetIdentifier, e.Policy = o, endpoint.WeightedPolicy(int64((i+step+2*oi)%4))
				want = append(want, e)
			}
			fo.steps = append(fo.steps, want)
		}
		out = append(out, fo)
	}
	return out
}

// faultZone is one sandbox with the zone the owners share, the foreign records in it, and
// both owners' desired records of the first phase synced.
type faultZone struct {
	sb   *sandbox.Sandbox
	zone provider.Zone
	// syncers are blue's and green's controllers, each with its own client.
	syncers map[string]*Syncer
	// foreign are the record sets neither owner wrote: the apex, a third party's records
	// and red's (an owner whose controller is not running).
	foreign zoneSets
}

// newFaultZone starts the sandbox; the owners' clients retry as route53.Config.MaxRetries
// says (0: the default, -1: never, so that every fault reaches the sync).
func newFaultZone(tb testing.TB, owners []*faultOwner, retries int) *faultZone {
	tb.Helper()
	sb, z := startPropZone(tb)
	fz := &faultZone{sb: sb, zone: provider.Zone{ID: z.ID, Name: propZone}, syncers: map[string]*Syncer{}}
	red, err := registry.New(registry.Config{OwnerID: actorRed})
	if err != nil {
		tb.Fatal(err)
	}
	redMember := faultA("shared09.example.com", "203.0.113.9", 60, actorRed)
	redMember.SetIdentifier, redMember.Policy = actorRed, endpoint.WeightedPolicy(1)
	redMember.Labels[endpoint.OwnerLabel] = actorRed
	manual := &endpoint.Endpoint{Name: "shared03.example.com", Type: endpoint.TypeA, TTL: 60, SetIdentifier: "manual",
		Policy: endpoint.WeightedPolicy(0), Targets: endpoint.NewTargets("198.51.100.3")}
	foreign := append([]*endpoint.Endpoint{
		{Name: propZone, Type: endpoint.TypeTXT, TTL: 300, Targets: endpoint.Targets{`"v=spf1 include:_spf.example.net -all"`}},
		{Name: propZone, Type: endpoint.TypeMX, TTL: 300, Targets: endpoint.Targets{"10 mail.example.net."}},
		{Name: "lb.example.com", Type: endpoint.TypeA, TTL: 60, Targets: endpoint.NewTargets("192.0.2.10", "192.0.2.11")},
		{Name: "legacy.example.com", Type: endpoint.TypeA, TTL: 300, Targets: endpoint.NewTargets("198.51.100.7")},
		{Name: "blue-svc35.example.com", Type: endpoint.TypeTXT, TTL: 300, Targets: endpoint.Targets{`"google-site-verification=abc"`}},
		manual, redMember,
	}, red.For(redMember)...)
	if err := route53test.New(tb, sb).Apply(syncCtx, fz.zone, batchOf(changes.Create, foreign...)); err != nil {
		tb.Fatal(err)
	}
	fz.foreign = readZone(tb, sb, z.ID)
	for _, o := range owners {
		reg, err := registry.New(registry.Config{OwnerID: o.name})
		if err != nil {
			tb.Fatal(err)
		}
		// A small backoff keeps the test quick: the sandbox needs no time to recover.
		p, err := route53.New(syncCtx, route53.Config{Endpoint: sb.APIURL(), Region: "us-east-1", MaxRetries: retries,
			MaxBackoff: 5 * time.Millisecond, Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		if err != nil {
			tb.Fatal(err)
		}
		fz.syncers[o.name] = &Syncer{Provider: p, Registry: reg, Policy: changes.Sync}
	}
	for _, o := range owners {
		fz.converge(tb, o, o.steps[0])
	}
	return fz
}

func (fz *faultZone) close(tb testing.TB) {
	if err := fz.sb.Close(); err != nil {
		tb.Errorf("close sandbox: %v", err)
	}
}

// converge syncs o fault-free and checks that it is done in one sync: no conflicts, no
// errors, and a second sync with nothing to do.
func (fz *faultZone) converge(tb testing.TB, o *faultOwner, desired []*endpoint.Endpoint) {
	tb.Helper()
	for i := 1; i <= 2; i++ {
		rep, err := fz.syncers[o.name].Sync(syncCtx, desired)
		if err != nil {
			tb.Fatalf("%s, fault-free sync %d: %v", o.name, i, err)
		}
		if err := rep.Err(); err != nil || len(rep.Conflicts()) > 0 {
			tb.Fatalf("%s, fault-free sync %d: err %v, conflicts %v", o.name, i, err, rep.Conflicts())
		}
		if i == 2 && plannedBatches(rep) != 0 {
			tb.Fatalf("%s: a second fault-free sync plans:\n%s", o.name, renderBatches(rep))
		}
	}
}

// sumCalls adds up API-call counters: every attempt, failed or not.
func sumCalls(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// faultResult is what converging under faults cost, over every step.
type faultResult struct {
	// syncs per owner until one planned nothing, that one included, summed over the steps;
	// the fault-free run takes 2 a step.
	syncs map[string]int
	// maxSyncs is the most syncs one owner took for one step.
	maxSyncs int
	// calls are the API calls of the faulty steps by "operation result"; baseline the
	// fault-free run's.
	calls, baseline map[string]int
	// refused counts changes reported refused under faults: with no other writer, each is
	// a lost answer taken for a refusal.
	refused int
}

// runFaultScenario syncs both owners' step-0 sets into two sandboxes, then each later step:
// fault-free into one (the baseline), with cfg's faults and the owners' clients retrying
// as retries says (see newFaultZone) into the other, sync after sync
// until each owner's sync plans nothing. After every faulty sync it checks that no foreign
// record set changed and that no wanted name that answered stopped answering; after each
// step, that both zones are the same.
func runFaultScenario(tb testing.TB, cfg faults.Config, retries int) faultResult {
	tb.Helper()
	owners := faultOwners()
	clean, faulty := newFaultZone(tb, owners, 0), newFaultZone(tb, owners, retries)
	defer clean.close(tb)
	defer faulty.close(tb)
	res := faultResult{syncs: map[string]int{}, calls: map[string]int{}, baseline: map[string]int{}}
	add := func(into, now, start map[string]int) {
		for k, v := range diffCalls(now, start) {
			into[k] += v
		}
	}
	for step := 1; step <= faultSteps; step++ {
		start := sandboxtest.APICalls(tb, clean.sb)
		for _, o := range owners {
			clean.converge(tb, o, o.steps[step])
		}
		add(res.baseline, sandboxtest.APICalls(tb, clean.sb), start)

		start = sandboxtest.APICalls(tb, faulty.sb)
		putFaults(tb, faulty.sb, cfg)
		done := map[string]bool{}
		for _, o := range owners {
			for n := 1; n <= maxFaultSyncs && !done[o.name]; n++ {
				before := readZone(tb, faulty.sb, faulty.zone.ID)
				rep, err := faulty.syncers[o.name].Sync(syncCtx, o.steps[step])
				res.syncs[o.name]++
				res.maxSyncs = max(res.maxSyncs, n)
				faulty.checkSync(tb, o, owners, step, before, readZone(tb, faulty.sb, faulty.zone.ID))
				if err != nil {
					continue // the zones could not be listed: the next sync tries again
				}
				for _, z := range rep.Zones {
					res.refused += len(z.Refused)
				}
				done[o.name] = rep.Err() == nil && len(rep.Zones) == 1 && rep.Zones[0].Changes != nil && plannedBatches(rep) == 0
			}
		}
		putFaults(tb, faulty.sb, faults.Config{})
		add(res.calls, sandboxtest.APICalls(tb, faulty.sb), start)

		want := readZone(tb, clean.sb, clean.zone.ID).render(propZone, clean.zone.ID)
		got := readZone(tb, faulty.sb, faulty.zone.ID).render(propZone, faulty.zone.ID)
		if len(done) < len(owners) || slices.Contains(slices.Collect(maps.Values(done)), false) {
			tb.Fatalf("step %d: not converged after %d syncs of each owner (done: %v); zone against the fault-free run's (- fault-free only, + faulty only):\n%s", step, maxFaultSyncs, done, lineDiff(got, want))
		}
		if !slices.Equal(got, want) {
			tb.Fatalf("step %d: converged to another zone than the fault-free run (- fault-free only, + faulty only):\n%s", step, lineDiff(got, want))
		}
	}
	return res
}

func diffCalls(now, start map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range now {
		if d := v - start[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// checkSync checks one faulty sync of o: every foreign set is byte-identical, and every
// name either owner wants at this step that answered before still answers (a transition or
// a retry never leaves a name without its record, not even between two syncs).
func (fz *faultZone) checkSync(tb testing.TB, o *faultOwner, owners []*faultOwner, step int, before, after zoneSets) {
	tb.Helper()
	for k, v := range fz.foreign {
		if after[k] != v {
			tb.Errorf("%s's sync changed foreign record set %s:\n  was: %s\n  now: %s", o.name, k, v, orGone(after, k))
		}
	}
	for _, ow := range owners {
		for _, name := range answering(before, ow, step) {
			if !slices.Contains(answering(after, ow, step), name) {
				tb.Errorf("%s's sync left %s without %s's record (lost)", o.name, name, ow.name)
			}
		}
	}
}

// answering returns the names the owner wants at step that hold one of its A or CNAME
// sets: a simple set at its own names, its member at a shared name.
func answering(z zoneSets, o *faultOwner, step int) []string {
	var out []string
	for _, e := range o.steps[step] {
		for k := range z {
			if k.Name == e.Name && (k.Type == endpoint.TypeA || k.Type == endpoint.TypeCNAME) && (k.SetIdentifier == "" || k.SetIdentifier == o.name) {
				out = append(out, e.Name)
				break
			}
		}
	}
	return out
}

// faultFigures renders a result as the line BENCHMARKS.md takes its figures from.
func faultFigures(res faultResult) string {
	failed := map[string]int{}
	for k, v := range res.calls {
		if _, result, _ := strings.Cut(k, " "); result != "ok" {
			failed[result] += v
		}
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(failed)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, failed[k]))
	}
	return fmt.Sprintf("%d steps; syncs to converge: blue %d, green %d, at most %d for one step (fault-free: %d each); API calls: %d (%d failed: %s), fault-free %d; ChangeResourceRecordSets calls: %d, fault-free %d; changes reported refused: %d",
		faultSteps, res.syncs[actorBlue], res.syncs[actorGreen], res.maxSyncs, 2*faultSteps, sumCalls(res.calls), sumCalls(failed), strings.Join(kinds, ", "),
		sumCalls(res.baseline), opCalls(res.calls, "ChangeResourceRecordSets"), opCalls(res.baseline, "ChangeResourceRecordSets"), res.refused)
}

func opCalls(m map[string]int, op string) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, op+" ") {
			n += v
		}
	}
	return n
}

func opResult(m map[string]int, result string) int {
	n := 0
	for k, v := range m {
		if strings.HasSuffix(k, " "+result) {
			n += v
		}
	}
	return n
}

// TestFaultsConverge: with Route 53 failing calls, repeated syncs of two owners reach the
// zone a fault-free run reaches, losing and touching nothing on the way. With a fifth of
// all calls failing (mixed kinds, drawn at random) the figures vary from run to run; with
// every change's answer lost, the run is deterministic and a lost answer must cost no
// extra sync and never be taken for a refusal.
func TestFaultsConverge(t *testing.T) {
	change := []string{"ChangeResourceRecordSets"}
	cases := []struct {
		name    string
		cfg     faults.Config
		retries int
		// exact: the faults are not random, so the syncs are known and nothing may be
		// reported refused.
		exact bool
	}{
		{"a fifth of all calls fail", faultConfig(faultRate), 0, false},
		{"a fifth of all calls fail, no SDK retries", faultConfig(faultRate), -1, false},
		{"every change commits and answers 500", faults.Config{CommitThenFailRate: 1, Operations: change}, 0, true},
		{"every change commits and drops the connection", faults.Config{CommitThenDropRate: 1, Operations: change}, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runFaultScenario(t, c.cfg, c.retries)
			t.Logf("%s", faultFigures(res))
			if !c.exact {
				return
			}
			if res.refused > 0 {
				t.Errorf("%d changes were reported refused; nobody else writes, so each is a lost answer taken for a refusal", res.refused)
			}
			for _, o := range []string{actorBlue, actorGreen} {
				if res.syncs[o] != 2*faultSteps {
					t.Errorf("%s took %d syncs for %d steps, want %d: a lost answer cost a sync", o, res.syncs[o], faultSteps, 2*faultSteps)
				}
			}
		})
	}
}

// BenchmarkFaultsConverge reports, per run of faultSteps steps with a fifth of all calls
// failing, the syncs and API calls it takes to converge, and the fault-free baseline, with
// the SDK's retries and without them:
// `go test -run '^$' -bench FaultsConverge -benchtime 20x ./internal/controller/`.
func BenchmarkFaultsConverge(b *testing.B) {
	for _, bc := range []struct {
		name    string
		retries int
	}{{"sdk-retries", 0}, {"no-sdk-retries", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			var syncs, calls, failed, baseline, changes, baseChanges, refused float64
			n := 0
			for b.Loop() {
				res := runFaultScenario(b, faultConfig(faultRate), bc.retries)
				n++
				syncs += float64(res.syncs[actorBlue] + res.syncs[actorGreen])
				calls += float64(sumCalls(res.calls))
				failed += float64(sumCalls(res.calls) - opResult(res.calls, "ok"))
				baseline += float64(sumCalls(res.baseline))
				changes += float64(opCalls(res.calls, "ChangeResourceRecordSets"))
				baseChanges += float64(opCalls(res.baseline, "ChangeResourceRecordSets"))
				refused += float64(res.refused)
			}
			per := func(v float64) float64 { return v / float64(n) }
			b.ReportMetric(per(syncs)/2/faultSteps, "syncs/owner/step")
			b.ReportMetric(per(calls), "calls")
			b.ReportMetric(per(failed), "failed-calls")
			b.ReportMetric(per(baseline), "fault-free-calls")
			b.ReportMetric(per(changes), "change-calls")
			b.ReportMetric(per(baseChanges), "fault-free-change-calls")
			b.ReportMetric(per(refused), "refused")
		})
	}
}
