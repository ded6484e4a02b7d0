package controller

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/source"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// TestDeleteGuardHolds is the guard's rule, per zone and owner: all of an owner's
// records, or more than the ratio of them and at least the minimum.
func TestDeleteGuardHolds(t *testing.T) {
	for _, tc := range []struct {
		name           string
		guard          DeleteGuard
		owned, deletes int
		want           bool
	}{
		{"nothing deleted", DeleteGuard{}, 20, 0, false},
		{"nothing deleted of nothing", DeleteGuard{}, 0, 0, false},
		{"3 of 20", DeleteGuard{}, 20, 3, false},
		{"all: 1 of 1", DeleteGuard{}, 1, 1, true},
		{"all: 5 of 5, below the minimum", DeleteGuard{}, 5, 5, true},
		{"all: 10000 of 10000", DeleteGuard{}, 10000, 10000, true},
		{"more than counted owned is all", DeleteGuard{}, 0, 2, true},
		{"12 of 20: above half, at least 10", DeleteGuard{}, 20, 12, true},
		{"10 of 20: exactly half goes", DeleteGuard{}, 20, 10, false},
		{"11 of 20", DeleteGuard{}, 20, 11, true},
		{"9 of 10: above half but below the minimum", DeleteGuard{}, 10, 9, false},
		{"10 of 19", DeleteGuard{}, 19, 10, true},
		{"ratio 0.2: 5 of 20 below min", DeleteGuard{MaxRatio: 0.2}, 20, 5, false},
		{"ratio 0.2, min 5: 5 of 20", DeleteGuard{MaxRatio: 0.2, Min: 5}, 20, 5, true},
		{"ratio 1: 99 of 100 goes", DeleteGuard{MaxRatio: 1}, 100, 99, false},
		{"ratio 1: 100 of 100 held", DeleteGuard{MaxRatio: 1}, 100, 100, true},
		{"min 1: 2 of 3", DeleteGuard{Min: 1}, 3, 2, true},
		{"min 1: 1 of 2 (exactly half)", DeleteGuard{Min: 1}, 2, 1, false},
		{"allow: all", DeleteGuard{Allow: true}, 1, 1, false},
		{"allow: 12 of 20", DeleteGuard{Allow: true}, 20, 12, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.guard.Holds(tc.owned, tc.deletes); got != tc.want {
				t.Errorf("%+v.Holds(owned %d, deletes %d) = %v, want %v", tc.guard, tc.owned, tc.deletes, got, tc.want)
			}
		})
	}
}

func TestHeldDeletionsMessage(t *testing.T) {
	h := &HeldDeletions{Owner: "blue", Owned: 20, Deletes: 12, MaxRatio: 0.5, Min: 10}
	msg := h.Message("example.com")
	for _, w := range []string{"zone example.com", "held 12 deletions of the 20 records owner blue owned there before the guard first held them", "more than 50% and at least 10", "--allow-mass-delete"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q: %s", w, msg)
		}
	}
	dry := (&HeldDeletions{Owner: "blue", Owned: 20, Deletes: 12, MaxRatio: 0.5, Min: 10, DryRun: true}).Message("example.com")
	for _, w := range []string{"the deletion guard would hold 12 deletions", "those records would stay, creates and updates would be written;"} {
		if !strings.Contains(dry, w) {
			t.Errorf("dry-run message lacks %q: %s", w, dry)
		}
	}
	if strings.Contains(dry, "were written") {
		t.Errorf("dry-run message says something was written: %s", dry)
	}
	one := (&HeldDeletions{Owner: "blue", Owned: 1, Deletes: 1, MaxRatio: 0.25, Min: 3}).Message("example.com")
	if !strings.Contains(one, "held 1 deletion of the 1 record owner blue") || !strings.Contains(one, "more than 25% and at least 3") {
		t.Errorf("message: %s", one)
	}
}

// records returns n owned-to-be A records, one Service each.
func records(n int, prefix string) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for i := range n {
		d := svc(fmt.Sprintf("%s%02d.example.com", prefix, i), fmt.Sprintf("192.0.2.%d", i+1), "", 0)
		d.Labels = endpoint.Labels{endpoint.ResourceLabel: fmt.Sprintf("service/default/%s%02d", prefix, i)}
		out = append(out, d)
	}
	return out
}

// guarded syncs desired as owner with guard, failing the test on any error.
func (e *env) guarded(t *testing.T, owner string, guard DeleteGuard, dryRun bool, desired ...*endpoint.Endpoint) *Report {
	t.Helper()
	s := e.syncer(t, owner, changes.Sync)
	s.Guard, s.DryRun = guard, dryRun
	return mustSync(t, s, owner, desired)
}

// aNames returns the names of the zone's A record sets, sorted.
func (e *env) aNames(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, s := range e.state(t) {
		if f := strings.Fields(s); f[1] == "A" {
			out = append(out, f[0])
		}
	}
	return out
}

func names(eps []*endpoint.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func keys(eps []*endpoint.Endpoint) []endpoint.Key {
	var out []endpoint.Key
	for _, e := range eps {
		out = append(out, e.Key())
	}
	slices.SortFunc(out, cmpKeys)
	return out
}

// TestSyncDeleteGuard syncs an owner's records into a sandbox zone through the real SDK,
// then syncs fewer: ordinary deletions go, mass deletions are held (nothing of them is
// sent, creates still go) unless allowed.
func TestSyncDeleteGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	for _, tc := range []struct {
		name         string
		owned, keep  int
		create       int
		guard        DeleteGuard
		dryRun       bool
		held         bool
		wantSummary  string
		wantDeletes  int
		wantReported int
	}{
		{name: "3 of 20 go", owned: 20, keep: 17, wantDeletes: 3},
		{name: "all (1 of 1) held, the create goes", owned: 1, keep: 0, create: 1, held: true},
		{name: "12 of 20 held", owned: 20, keep: 8, held: true},
		{name: "10 of 20 (exactly half) go", owned: 20, keep: 10, wantDeletes: 10},
		{name: "9 of 10, below the minimum, go", owned: 10, keep: 1, wantDeletes: 9},
		{name: "all (20 of 20) held", owned: 20, keep: 0, create: 2, held: true},
		{name: "allowed: all go", owned: 20, keep: 0, create: 1, guard: DeleteGuard{Allow: true}, wantDeletes: 20},
		{name: "ratio 0.1, min 2: 3 of 20 held", owned: 20, keep: 17, guard: DeleteGuard{MaxRatio: 0.1, Min: 2}, held: true},
		{name: "dry run: held and reported", owned: 20, keep: 0, create: 1, dryRun: true, held: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			all := records(tc.owned, "svc")
			e.sync(t, "blue", changes.Sync, all...)
			// Another owner's records are not blue's to count.
			e.sync(t, "green", changes.Sync, records(5, "green")...)
			before := e.aNames(t)
			desired := slices.Concat(all[:tc.keep], records(tc.create, "new"))
			rep := e.guarded(t, "blue", tc.guard, tc.dryRun, desired...)
			z := rep.Zones[0]
			after := e.aNames(t)
			gone := all[tc.keep:]
			if !tc.held {
				if z.HeldDeletions != nil || rep.DeletionsHeld() != 0 {
					t.Fatalf("held %+v, want nothing held", z.HeldDeletions)
				}
				want := slices.Concat(names(all[:tc.keep]), names(records(5, "green")), names(records(tc.create, "new")))
				slices.Sort(want)
				if !slices.Equal(after, want) {
					t.Errorf("zone holds %q, want %q", after, want)
				}
				if z.Changes.Summary.Delete != tc.wantDeletes {
					t.Errorf("summary %+v, want %d deletes", z.Changes.Summary, tc.wantDeletes)
				}
				return
			}
			h := z.HeldDeletions
			if h == nil {
				t.Fatalf("nothing held; zone now %q", after)
			}
			if h.Owner != "blue" || h.Owned != tc.owned || h.Deletes != len(gone) || !slices.Equal(h.Records, keys(gone)) {
				t.Errorf("held %+v, want owner blue, %d owned, %d deletes of %v", h, tc.owned, len(gone), keys(gone))
			}
			if rep.DeletionsHeld() != len(gone) {
				t.Errorf("DeletionsHeld() = %d, want %d", rep.DeletionsHeld(), len(gone))
			}
			want := slices.Concat(before, names(records(tc.create, "new")))
			if tc.dryRun {
				want = before
			}
			slices.Sort(want)
			if !slices.Equal(after, want) {
				t.Errorf("zone holds %q, want %q: held records kept, creates written", after, want)
			}
			// Ownership records of the held records stay too: they are still blue's.
			for _, k := range h.Records {
				if !slices.ContainsFunc(e.state(t), func(s string) bool {
					return strings.HasPrefix(s, "a-"+k.Name+" TXT") && strings.Contains(s, "owner=blue")
				}) {
					t.Errorf("ownership record of %s is gone", k)
				}
			}
			s := z.Changes.Summary
			if s.Delete != 0 || s.Kept != 0 || s.Create != tc.create || len(z.Changes.Kept) != 0 {
				t.Errorf("summary %+v, kept %v: want %d creates, no delete, nothing kept for unreadable input", s, z.Changes.Kept, tc.create)
			}
			if line := z.Summary(); !strings.Contains(line, fmt.Sprintf("%d delete held by the deletion guard", len(gone))) {
				t.Errorf("summary line: %s", line)
			}
			if tc.dryRun {
				for _, b := range z.Changes.Batches {
					for _, c := range b {
						if c.Action == changes.Delete {
							t.Errorf("dry-run batch deletes %s", c.Endpoint.Key())
						}
					}
				}
			}
		})
	}
}

// TestSyncDeleteGuardReplaceIsNoDeletion: a routing-policy transition deletes a set and
// creates another, but is not a deletion the guard counts: an owner's only record turning
// weighted goes through.
func TestSyncDeleteGuardReplaceIsNoDeletion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	e.sync(t, "blue", changes.Sync, svc("app.example.com", "192.0.2.1", "", 0))
	rep := e.guarded(t, "blue", DeleteGuard{}, false, svc("app.example.com", "192.0.2.1", "blue", 100))
	if h := rep.Zones[0].HeldDeletions; h != nil {
		t.Fatalf("held %+v", h)
	}
	if s := rep.Zones[0].Changes.Summary; s.Replace != 1 || s.Delete != 0 {
		t.Errorf("summary %+v", s)
	}
	want := []string{
		`a-app.example.com TXT [blue] weighted(100) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"app.example.com A [blue] weighted(100) 192.0.2.1",
	}
	if got := e.state(t); !slices.Equal(got, want) {
		t.Errorf("zone:\n got %q\nwant %q", got, want)
	}
}

// lbServices writes n LoadBalancer Services whose hostname annotation has prefix, as
// one manifest.
func lbServices(t *testing.T, n int, prefix string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata:
  name: web%02d
  namespace: default
  annotations:
    %shostname: web%02d.example.com
spec:
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
      - ip: 192.0.2.%d
`, i, prefix, i, i+1)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "services.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSyncDeleteGuardAnnotationPrefix is external-dns v0.22's upgrade: the default
// annotation prefix changed, so the very same manifests yield no record, and a sync
// would delete all of them. The guard holds them, and says so.
func TestSyncDeleteGuardAnnotationPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	dir := lbServices(t, 12, source.PrefixAlpha)
	loaded, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sync := func(cfg source.Config) *Outcome {
		src, err := source.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := &Outcome{Source: src.Endpoints(loaded.Snapshot)}
		out.Report, err = e.syncer(t, "blue", changes.Sync).SyncKeeping(context.Background(), out.Source.Endpoints, out.Keep())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := sync(source.Config{}); len(out.Source.Endpoints) != 12 || out.Report.Zones[0].Changes.Summary.Create != 12 {
		t.Fatalf("first sync: %d records, %+v", len(out.Source.Endpoints), out.Report.Zones[0].Changes.Summary)
	}
	before := e.state(t)
	out := sync(source.Config{AnnotationPrefixes: []string{"dns.example.io/"}})
	if len(out.Source.Endpoints) != 0 {
		t.Fatalf("the new prefix yields %d records, want 0", len(out.Source.Endpoints))
	}
	if got, mark := splitMarker(e.state(t)); !slices.Equal(got, before) || len(mark) != 1 {
		t.Errorf("zone changed:\n got %q\nwant %q\nand one guard marker, got %q", got, before, mark)
	}
	if n := out.Report.DeletionsHeld(); n != 12 {
		t.Errorf("DeletionsHeld() = %d, want 12", n)
	}
	var text bytes.Buffer
	if err := out.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"0 delete,", "12 delete held by the deletion guard",
		"held by the deletion guard (not deleted): 12",
		"the deletion guard held 12 deletions of the 12 records owner blue owned there before the guard first held them",
		"--allow-mass-delete",
		"    web00.example.com A\n", "    web11.example.com A\n",
	} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	for _, bad := range []string{"could not be read", "kept (no source"} {
		if strings.Contains(text.String(), bad) {
			t.Errorf("text says %q of records the guard held:\n%s", bad, text.String())
		}
	}
}

// TestSyncDeleteGuardHoldsReplacementsToo: in a zone whose deletions the guard holds, a
// routing-policy transition that must delete the owner's set under another key waits too
// (no owned record goes while the input looks wrong), reported as a conflict in the
// guard's words, never as unreadable input.
func TestSyncDeleteGuardHoldsReplacementsToo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	all := records(12, "svc")
	e.sync(t, "blue", changes.Sync, all...)
	before := e.state(t)
	weighted := svc(all[0].Name, all[0].Targets[0], "blue", 100)
	weighted.Labels = all[0].Labels
	rep := e.guarded(t, "blue", DeleteGuard{}, false, weighted)
	h := rep.Zones[0].HeldDeletions
	if h == nil || h.Deletes != 11 || h.Owned != 12 || !slices.Equal(h.Records, keys(all[1:])) {
		t.Fatalf("held %+v, want 11 of 12", h)
	}
	if got, mark := splitMarker(e.state(t)); !slices.Equal(got, before) || len(mark) != 1 {
		t.Errorf("zone changed:\n got %q\nwant %q\nand one guard marker, got %q", got, before, mark)
	}
	c := rep.Conflicts()
	if len(c) != 1 || c[0].Key != weighted.Key() || !strings.Contains(c[0].Reason, "deletion guard") || strings.Contains(c[0].Reason, "could not be read") {
		t.Errorf("conflicts %v, want the transition held by the deletion guard", c)
	}
}

// TestOutcomeTextHeldDeletions: the text names the first records held in each zone, how
// many more there are, and the way through; a zone where nothing was held says nothing.
func TestOutcomeTextHeldDeletions(t *testing.T) {
	var held []endpoint.Key
	for i := range heldShown + 5 {
		held = append(held, endpoint.Key{Name: fmt.Sprintf("svc%02d.example.com", i), Type: "A"})
	}
	rep := &Report{Zones: []ZoneReport{
		{Zone: provider.Zone{ID: "Z1", Name: "example.com"}, Changes: &changes.Set{},
			HeldDeletions: &HeldDeletions{Owner: "blue", Owned: 30, Deletes: len(held), Records: held, MaxRatio: 0.5, Min: 10}},
		{Zone: provider.Zone{ID: "Z2", Name: "example.org"}, Changes: &changes.Set{Summary: changes.Summary{Delete: 1}}},
	}}
	var b bytes.Buffer
	if err := (&Outcome{Report: rep}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, w := range []string{
		"zone example.com (Z1): 0 create, 0 update, 0 delete, 0 replace, 0 held by policy, 0 conflicts, 0 batches, 25 delete held by the deletion guard\n",
		"zone example.org (Z2): 0 create, 0 update, 1 delete, 0 replace, 0 held by policy, 0 conflicts, 0 batches\n",
		"held by the deletion guard (not deleted): 25\n",
		"  zone example.com (Z1): the deletion guard held 25 deletions of the 30 records owner blue owned there before the guard first held them (a count the zone keeps in a crossfade-deletion-guard TXT record until a sync holds nothing) (it holds deleting all of them, or more than 50% and at least 10)",
		"pass --allow-mass-delete (sync: run again with it; controller: restart with it, and its first reconcile lets through what was held)\n",
		"    svc00.example.com A\n", "    svc19.example.com A\n", "    … and 5 more\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "svc20.example.com") || strings.Contains(text, "example.org (Z2): the deletion guard") {
		t.Errorf("text:\n%s", text)
	}
}

// TestSyncDeleteGuardRemembersItsHold: a wrong input asks for one new record and none of
// the owner's 5. The first run holds the 5 (all of them) and creates the new one; the next
// run, a new process (sync again, a restarted controller), would delete 5 of 6, under the
// minimum: the guard holds them again because the zone's marker record remembers the count
// from before the first hold. Once a run holds nothing, the marker goes, and an ordinary
// deletion goes too.
func TestSyncDeleteGuardRemembersItsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	all := records(5, "svc")
	e.sync(t, "blue", changes.Sync, all...)
	e.sync(t, "green", changes.Sync, records(2, "green")...)
	sync := func(what string, desired ...*endpoint.Endpoint) *Report {
		t.Helper()
		rep, err := e.syncer(t, "blue", changes.Sync).Sync(context.Background(), desired) // a new Syncer: a new process
		if err != nil || rep.Err() != nil {
			t.Fatalf("%s: %v, %v", what, err, rep.Err())
		}
		return rep
	}
	marker := func() []string {
		t.Helper()
		_, m := splitMarker(e.state(t))
		return m
	}
	wrong := records(1, "new")
	for i := range 3 {
		rep := sync(fmt.Sprintf("wrong input, run %d", i+1), wrong...)
		h := rep.Zones[0].HeldDeletions
		if h == nil || h.Deletes != 5 || h.Owned != 5 || h.Since != (i > 0) {
			t.Fatalf("run %d: held %+v, want the 5 records held, counted against the 5 owned before the first hold", i+1, h)
		}
		if got, want := e.aNames(t), slices.Sorted(slices.Values(slices.Concat(names(all), names(records(2, "green")), names(wrong)))); !slices.Equal(got, want) {
			t.Fatalf("run %d: zone holds %q, want %q", i+1, got, want)
		}
		if m := marker(); len(m) != 1 || !strings.Contains(m[0], "owner=blue owned=5") {
			t.Fatalf("run %d: marker %q, want one with blue's count of 5", i+1, m)
		}
		if msg := h.Message("example.com"); !strings.Contains(msg, "held 5 deletions of the 5 records owner blue owned there before the guard first held them") {
			t.Errorf("run %d: message %q", i+1, msg)
		}
	}
	// Green's sync does not disturb blue's marker, nor is it held by it.
	if rep := e.sync(t, "green", changes.Sync, records(2, "green")...); rep.Zones[0].HeldDeletions != nil || len(marker()) != 1 {
		t.Fatalf("green's sync: held %+v, marker %q", rep.Zones[0].HeldDeletions, marker())
	}
	// The input is fixed: nothing held, the marker goes; then one record really goes.
	if rep := sync("fixed", slices.Concat(all, wrong)...); rep.Zones[0].HeldDeletions != nil || len(marker()) != 0 {
		t.Fatalf("fixed input: held %+v, marker %q", rep.Zones[0].HeldDeletions, marker())
	}
	if rep := sync("one deleted", slices.Concat(all[1:], wrong)...); rep.Zones[0].HeldDeletions != nil || rep.Zones[0].Changes.Summary.Delete != 1 {
		t.Fatalf("one deletion after the fix: held %+v, summary %+v", rep.Zones[0].HeldDeletions, rep.Zones[0].Changes.Summary)
	}
}

// TestMarkerValues: the marker's values round-trip; values it did not write are ignored.
func TestMarkerValues(t *testing.T) {
	for _, tc := range []struct {
		v     string
		owner string
		n     int
		ok    bool
	}{
		{markerValue("blue", 20), "blue", 20, true},
		{markerValue("eks-green-1", 0), "eks-green-1", 0, true},
		{`"crossfade-deletion-guard owner=blue owned=-1"`, "", 0, false},
		{`"crossfade-deletion-guard owner=blue"`, "", 0, false},
		{`"v=spf1 -all"`, "", 0, false},
		{`"heritage=external-dns,external-dns/owner=blue"`, "", 0, false},
	} {
		owner, n, ok := parseMarkerValue(tc.v)
		if owner != tc.owner || n != tc.n || ok != tc.ok {
			t.Errorf("parseMarkerValue(%s) = %q, %d, %v; want %q, %d, %v", tc.v, owner, n, ok, tc.owner, tc.n, tc.ok)
		}
	}
}

// splitMarker separates the deletion guard's marker record from the rest of a zone state
// (env.state's lines).
func splitMarker(state []string) (rest, marker []string) {
	for _, r := range state {
		if strings.HasPrefix(r, MarkerName("example.com")+" ") {
			marker = append(marker, r)
		} else {
			rest = append(rest, r)
		}
	}
	return rest, marker
}
