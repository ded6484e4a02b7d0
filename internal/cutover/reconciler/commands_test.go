package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/objectstatus"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// recordEvents makes the reconcilers f builds from now on record Events on the API
// server, as the controller does.
func (f *fixture) recordEvents(t *testing.T) {
	t.Helper()
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: f.kc.Clientset(t).CoreV1().Events("")})
	t.Cleanup(b.Shutdown)
	f.events = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "crossfade"})
}

// annotate sets the Cutover's annotation key to value, as `kubectl annotate` does.
func (f *fixture) annotate(t *testing.T, name, key, value string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err := f.c.Cutovers.Patch(types.MergePatchType).Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).Body(patch).Do(t.Context()).Error(); err != nil {
		t.Fatalf("annotate Cutover %s/%s with %s: %v", f.ns, name, patch, err)
	}
}

// command sends req in crossfade.io/command.
func (f *fixture) command(t *testing.T, name string, req v1alpha1.CommandRequest) {
	t.Helper()
	v, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	f.annotate(t, name, v1alpha1.CommandAnnotation, string(v))
}

// result waits for the answer to the command id in crossfade.io/command-result.
func (f *fixture) result(t *testing.T, name, id string) (v1alpha1.CommandResult, *v1alpha1.Cutover) {
	t.Helper()
	var res v1alpha1.CommandResult
	c := f.waitFor(t, name, "answered "+id, func(c *v1alpha1.Cutover) bool {
		v := c.Annotations[v1alpha1.ResultAnnotation]
		if v == "" {
			return false
		}
		r, err := v1alpha1.ParseCommandResult(v)
		if err != nil {
			t.Fatalf("result annotation %q: %v", v, err)
		}
		res = r
		return r.ID == id
	})
	if _, ok := c.Annotations[v1alpha1.CommandAnnotation]; ok {
		t.Errorf("command annotation still there after its answer: %q", c.Annotations[v1alpha1.CommandAnnotation])
	}
	return res, c
}

// controlEntries are the journal's control entries with the ID id.
func controlEntries(en []journal.Entry, id string) []journal.Entry {
	var out []journal.Entry
	for _, e := range en {
		if e.Kind == "control" && e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// gone waits until the Cutover named name no longer exists.
func (f *fixture) gone(t *testing.T, name string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		c := &v1alpha1.Cutover{}
		err := f.c.Cutovers.Get().Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).Do(t.Context()).Into(c)
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatalf("read Cutover %s/%s: %v", f.ns, name, err)
		}
		if time.Now().After(end) {
			c.Status.Journal = nil
			t.Fatalf("cutover %s/%s: still there %s after its deletion: finalizers %v, status %+v", f.ns, name, deadline, c.Finalizers, c.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// remove deletes the Cutover named name, as `kubectl delete` does.
func (f *fixture) remove(t *testing.T, name string) {
	t.Helper()
	if err := f.c.Cutovers.Delete().Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).Do(t.Context()).Error(); err != nil {
		t.Fatalf("delete Cutover %s/%s: %v", f.ns, name, err)
	}
}

// authority reads the zone's authority record of app.example.com.
func (f *fixture) authority(t *testing.T) (registry.Authority, bool) {
	t.Helper()
	ctx := context.Background()
	zones, err := f.z.DNS.Zones(ctx)
	if err != nil || len(zones) == 0 {
		t.Fatalf("zones: %v", err)
	}
	recs, err := f.z.DNS.Records(ctx, zones[0])
	if err != nil {
		t.Fatalf("records: %v", err)
	}
	for _, r := range recs {
		if r.Key() == (endpoint.Key{Name: "_crossfade-weights.app.example.com", Type: "TXT"}) {
			return registry.ParseAuthority(r)
		}
	}
	return registry.Authority{}, false
}

// eventReasons waits until the Events recorded on the Cutover named name include every
// reason of want, and returns them all by reason.
func (f *fixture) eventReasons(t *testing.T, name string, want ...string) map[string][]corev1.Event {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		list, err := f.kc.Clientset(t).CoreV1().Events(f.ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			t.Fatalf("list events of %s/%s: %v", f.ns, name, err)
		}
		got := map[string][]corev1.Event{}
		for _, e := range list.Items {
			got[e.Reason] = append(got[e.Reason], e)
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(r string) bool { return len(got[r]) > 0 })
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(end) {
			var have []string
			for _, e := range list.Items {
				have = append(have, e.Type+" "+e.Reason+": "+e.Message)
			}
			t.Fatalf("events of %s/%s: missing %v; recorded %q", f.ns, name, missing, have)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failedMidRun runs the Cutover name (steps 50, 100, each held an hour) to its first step
// with a replica that then dies, waits for its Lease to expire, and writes the status of a
// run stopped for good there (Failed, as Project makes it of a stuck run's error), so that
// no replica runs it.
func (f *fixture) failedMidRun(t *testing.T, name string) {
	t.Helper()
	stopA := run(t, f.reconciler(t, "replica-a", 2*time.Second))
	f.create(t, name, steps+"  steps: [50, 100]\n  pause: 1h\n")
	f.waitFor(t, name, "holding step 0", holding(0))
	stopA()
	for end := time.Now().Add(deadline); statusstore.New(f.c, f.ns, name).Held() != nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the dead replica's Lease did not expire")
		}
	}
	c := f.get(t, name)
	plan, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	objectstatus.Project(c, c.Status.Entries(), plan, time.Now(), errors.New("stopped for good (test)"))
	if err := f.c.Cutovers.Put().Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).SubResource("status").Body(c).Do(t.Context()).Error(); err != nil {
		t.Fatalf("write Failed status: %v", err)
	}
	if c.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("phase %s, want Failed", c.Status.Phase)
	}
	f.wantWeights(t, 50, 50)
}

// refusingDNS is the zone's Route 53 provider refusing every change while fail is set, as
// an account whose permissions were taken away does.
type refusingDNS struct {
	lr53.DNS
	fail atomic.Bool
}

// ApplyChange refuses while fail is set.
func (d *refusingDNS) ApplyChange(ctx context.Context, zone provider.Zone, batch changes.Batch, comment string) (string, error) {
	if d.fail.Load() {
		return "", errors.New("AccessDenied: not authorized to perform route53:ChangeResourceRecordSets (test)")
	}
	return d.DNS.ApplyChange(ctx, zone, batch, comment)
}

// TestCommands steers Cutover objects through crossfade.io/command, spec.paused with
// crossfade.io/paused-by, and deletion, on a real kube-apiserver with the reconciler and
// the Route 53 lever on the in-process sandbox.
func TestCommands(t *testing.T) {
	e := start(t)

	// A promote in the annotation is taken by the replica running the cutover (of two),
	// journaled once with its id and sender, and passes the steps left; a promote sent
	// once it has Completed is answered as refused. Every step, the command and the end
	// are Events on the object.
	t.Run("promote via the annotation", func(t *testing.T) {
		f := e.fixture(t, "cmd-promote")
		f.recordEvents(t)
		run(t, f.reconciler(t, "replica-a", 0))
		run(t, f.reconciler(t, "replica-b", 0))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		f.command(t, "app", v1alpha1.CommandRequest{Command: "promote", ID: "k-promote", By: "alice"})
		c := f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.wantWeights(t, 0, 100)
		got := controlEntries(c.Status.Entries(), "k-promote")
		if len(got) != 1 || got[0].By != "alice" || got[0].Detail != "promote" {
			t.Errorf("control entries with id k-promote: %+v, want one promote by alice", got)
		}
		if a := c.Status.LastAction; a == nil || a.Command != "promote" || a.By != "alice" || a.ID != "k-promote" {
			t.Errorf("lastAction %+v: want promote by alice, id k-promote", a)
		}
		if _, ok := c.Annotations[v1alpha1.CommandAnnotation]; ok {
			t.Errorf("command annotation still there: %q", c.Annotations[v1alpha1.CommandAnnotation])
		}

		f.command(t, "app", v1alpha1.CommandRequest{Command: "promote", ID: "k-late", By: "alice"})
		res, c := f.result(t, "app", "k-late")
		if res.Command != "promote" || res.By != "alice" || !strings.Contains(res.Refused, "it has ended (completed") {
			t.Errorf("answer %+v: want the promote refused, the cutover having ended", res)
		}
		if n := len(controlEntries(c.Status.Entries(), "k-late")); n != 0 {
			t.Errorf("the refused promote was journaled %d times", n)
		}
		ev := f.eventReasons(t, "app", ReasonStepStarted, ReasonStepPassed, ReasonCommandTaken, ReasonPromoted, ReasonCompleted, ReasonCommandRefused)
		if s := ev[ReasonStepStarted][0]; s.Type != corev1.EventTypeNormal || !strings.Contains(s.Message, "weights") {
			t.Errorf("StepStarted event %s %q: want Normal with the weights", s.Type, s.Message)
		}
		if p := ev[ReasonPromoted][0]; p.Type != corev1.EventTypeNormal || !strings.Contains(p.Message, "promote by alice") {
			t.Errorf("Promoted event %s %q: want Normal naming alice", p.Type, p.Message)
		}
		if r := ev[ReasonCommandRefused][0]; r.Type != corev1.EventTypeWarning || !strings.Contains(r.Message, "k-late") {
			t.Errorf("CommandRefused event %s %q: want Warning naming k-late", r.Type, r.Message)
		}
	})

	// A run paused on drift (another writer moved the weights mid-hold) is not resumed
	// by spec.paused: the resume command lifts it, journaled with its id and sender,
	// once a person has looked. The same command is refused while spec.paused is set,
	// and for a run that is not paused on drift.
	t.Run("resume after a pause on drift", func(t *testing.T) {
		f := e.fixture(t, "cmd-drift")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))

		f.command(t, "app", v1alpha1.CommandRequest{Command: "resume", ID: "k-early", By: "dave"})
		if res, _ := f.result(t, "app", "k-early"); !strings.Contains(res.Refused, "not paused on drift") {
			t.Errorf("answer %+v: want the resume of a run not paused refused", res)
		}

		f.foreignWeight(t, "blue", 30)
		stalled := func(c *v1alpha1.Cutover) bool {
			return c.Status.Phase == v1alpha1.PhasePaused && meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionStalled)
		}
		f.waitFor(t, "app", "paused on drift", stalled)

		f.setPaused(t, "app", true)
		f.command(t, "app", v1alpha1.CommandRequest{Command: "resume", ID: "k-level", By: "dave"})
		if res, _ := f.result(t, "app", "k-level"); !strings.Contains(res.Refused, "spec.paused is true") {
			t.Errorf("answer %+v: want the resume refused while spec.paused is set", res)
		}
		f.setPaused(t, "app", false)
		if c := f.get(t, "app"); !stalled(c) {
			t.Fatalf("clearing spec.paused lifted the pause on drift: phase %s, %v", c.Status.Phase, c.Status.Conditions)
		}

		f.command(t, "app", v1alpha1.CommandRequest{Command: "resume", ID: "k-drift", By: "dave"})
		c := f.waitFor(t, "app", "resumed", func(c *v1alpha1.Cutover) bool { return len(controlEntries(c.Status.Entries(), "k-drift")) > 0 })
		if got := controlEntries(c.Status.Entries(), "k-drift"); len(got) != 1 || got[0].By != "dave" || got[0].Detail != "resume" {
			t.Errorf("control entries with id k-drift: %+v, want one resume by dave", got)
		}
		f.waitFor(t, "app", "going on after the resume", func(c *v1alpha1.Cutover) bool { return c.Status.Phase == v1alpha1.PhaseProgressing })
	})

	// An abort in the annotation rolls the run back, journaled with its id and sender; a
	// release then refused (the publishers ask for other weights) is answered with why,
	// and one forced is run, answered with what it deleted, and shown as the last action.
	t.Run("abort and release via the annotation", func(t *testing.T) {
		f := e.fixture(t, "cmd-abort")
		f.recordEvents(t)
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		f.command(t, "app", v1alpha1.CommandRequest{Command: "abort", ID: "k-abort", By: "bob"})
		c := f.waitFor(t, "app", "RolledBack", phase(v1alpha1.PhaseRolledBack))
		f.wantWeights(t, 100, 0)
		if got := controlEntries(c.Status.Entries(), "k-abort"); len(got) != 1 || got[0].By != "bob" || got[0].Detail != "abort" {
			t.Errorf("control entries with id k-abort: %+v, want one abort by bob", got)
		}
		ev := f.eventReasons(t, "app", ReasonAborted, ReasonRolledBack)
		if a := ev[ReasonAborted][0]; a.Type != corev1.EventTypeWarning || !strings.Contains(a.Message, "abort by bob") {
			t.Errorf("Aborted event %s %q: want Warning naming bob", a.Type, a.Message)
		}

		// Rolled back, the zone is at the weights the publishers ask for: once they have
		// confirmed the hold (synced), a release hands it back without force.
		if err := f.z.PublishBoth(100, 0); err != nil {
			t.Fatal(err)
		}
		f.command(t, "app", v1alpha1.CommandRequest{Command: "release", ID: "k-release", By: "carol"})
		res, c := f.result(t, "app", "k-release")
		if res.Refused != "" || !strings.Contains(res.Detail, "authority records deleted") {
			t.Errorf("answer %+v: want the release done, saying what it deleted", res)
		}
		if a := c.Status.LastAction; a == nil || a.Command != "release" || a.By != "carol" {
			t.Errorf("lastAction %+v: want release by carol", a)
		}
		if _, ok := f.authority(t); ok {
			t.Error("the authority record is still there after the release")
		}
	})

	// A release of a Completed cutover whose publishers still ask for the start weights
	// is refused (it would move traffic at their next sync), and the answer says so.
	t.Run("release refused", func(t *testing.T) {
		f := e.fixture(t, "cmd-release")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 100]\n  pause: 1s\n")
		f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		// The publishers sync, still asking for the start weights.
		if err := f.z.PublishBoth(100, 0); err != nil {
			t.Fatal(err)
		}
		f.command(t, "app", v1alpha1.CommandRequest{Command: "release", ID: "k-release", By: "carol"})
		res, _ := f.result(t, "app", "k-release")
		if !strings.Contains(res.Refused, "release would change traffic") || res.Detail != "" {
			t.Errorf("answer %+v: want the release refused, saying why", res)
		}
		if _, ok := f.authority(t); !ok {
			t.Error("a refused release deleted the authority record")
		}
		f.wantWeights(t, 0, 100)
	})

	// An abort of a cutover that stopped mid-run (Failed) and that nobody runs is run by
	// the controller itself: back to the start weights, journaled as its sender's, and
	// answered.
	t.Run("abort of a Failed mid-run cutover", func(t *testing.T) {
		f := e.fixture(t, "cmd-stuck")
		f.failedMidRun(t, "app")
		run(t, f.reconciler(t, "replica-b", 2*time.Second))
		f.command(t, "app", v1alpha1.CommandRequest{Command: "abort", ID: "k-stuck", By: "frank"})
		res, _ := f.result(t, "app", "k-stuck")
		if res.Refused != "" || !strings.Contains(res.Detail, "rolled back") {
			t.Errorf("answer %+v: want the abort done", res)
		}
		c := f.waitFor(t, "app", "RolledBack", phase(v1alpha1.PhaseRolledBack))
		f.wantWeights(t, 100, 0)
		if a := c.Status.LastAction; a == nil || a.Command != "abort" || a.By != "frank" {
			t.Errorf("lastAction %+v: want abort by frank", a)
		}
		// A promote of it now is refused: it has ended.
		f.command(t, "app", v1alpha1.CommandRequest{Command: "promote", ID: "k-promote", By: "frank"})
		if res, _ := f.result(t, "app", "k-promote"); !strings.Contains(res.Refused, "it has ended (rolled-back") {
			t.Errorf("answer %+v: want the promote refused", res)
		}
	})

	// A Cutover deleted when it stopped mid-run (Failed) is aborted by the controller,
	// then goes.
	t.Run("deleted when Failed mid-run rolls back then goes", func(t *testing.T) {
		f := e.fixture(t, "del-stuck")
		f.failedMidRun(t, "app")
		run(t, f.reconciler(t, "replica-b", 2*time.Second))
		f.remove(t, "app")
		f.gone(t, "app")
		f.wantWeights(t, 100, 0)
	})

	// A Cutover deleted when it stopped mid-run (Failed) whose abort cannot run (Route 53
	// refuses every change) keeps its finalizer: Stalled says why and how to remove it by
	// hand, with a Warning Event. Once the abort can run, it rolls back and goes.
	t.Run("deleted when its abort cannot run keeps the finalizer", func(t *testing.T) {
		f := e.fixture(t, "del-blocked")
		f.recordEvents(t)
		f.failedMidRun(t, "app")
		refuse := &refusingDNS{DNS: f.z.DNS}
		refuse.fail.Store(true)
		f.dns = &levertest.CountingDNS{DNS: refuse}
		run(t, f.reconciler(t, "replica-b", 2*time.Second))
		f.remove(t, "app")
		c := f.waitFor(t, "app", "Stalled naming the finalizer", func(c *v1alpha1.Cutover) bool {
			st := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled)
			return st != nil && st.Status == metav1.ConditionTrue && strings.Contains(st.Message, "kubectl patch cutover app -n del-blocked --type json")
		})
		if !slices.Contains(c.Finalizers, v1alpha1.Finalizer) || c.Status.Phase != v1alpha1.PhaseFailed {
			t.Errorf("finalizers %v, phase %s: want the finalizer kept, Failed", c.Finalizers, c.Status.Phase)
		}
		f.wantWeights(t, 50, 50)
		ev := f.eventReasons(t, "app", ReasonFinalizerStuck)
		if b := ev[ReasonFinalizerStuck][0]; b.Type != corev1.EventTypeWarning || !strings.Contains(b.Message, "remove it by hand") {
			t.Errorf("DeleteBlocked event %s %q", b.Type, b.Message)
		}
		refuse.fail.Store(false)
		f.gone(t, "app")
		f.wantWeights(t, 100, 0)
	})

	// Taking a command is a test-and-remove: of two takers of one command one gets it;
	// a command changed since it was read, or already taken, is not taken, and is no
	// error (nothing to back off from).
	t.Run("take is a test-and-remove", func(t *testing.T) {
		f := e.fixture(t, "cmd-take")
		r := f.reconciler(t, "replica-a", 0)
		f.create(t, "app", steps+"  steps: [0, 100]\n  paused: true\n")
		c := f.get(t, "app")
		w := &worker{r: r, namespace: f.ns, name: "app", uid: c.UID, log: r.log}
		f.annotate(t, "app", v1alpha1.CommandAnnotation, `{"command":"abort","id":"k-2"}`)
		for _, tc := range []struct {
			raw  string
			want bool
		}{
			{`{"command":"abort","id":"k-1"}`, false}, // read before it changed
			{`{"command":"abort","id":"k-2"}`, true},
			{`{"command":"abort","id":"k-2"}`, false}, // taken already
		} {
			got, err := w.take(t.Context(), tc.raw)
			if err != nil || got != tc.want {
				t.Errorf("take %s: %t, %v; want %t, no error", tc.raw, got, err, tc.want)
			}
		}
		if v, ok := f.get(t, "app").Annotations[v1alpha1.CommandAnnotation]; ok {
			t.Errorf("command annotation %q still there", v)
		}
	})

	// A command taken is answered even when the worker's context has ended (a shutdown
	// between the take and the answer).
	t.Run("answer outlives the worker's context", func(t *testing.T) {
		f := e.fixture(t, "cmd-shutdown")
		r := f.reconciler(t, "replica-a", 0)
		f.create(t, "app", steps+"  steps: [0, 100]\n  paused: true\n")
		c := f.get(t, "app")
		w := &worker{r: r, namespace: f.ns, name: "app", uid: c.UID, log: r.log}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := w.refuse(ctx, v1alpha1.CommandRequest{Command: "promote", ID: "k-down", By: "alice"}, "test"); err != nil {
			t.Fatalf("answer after the context ended: %v", err)
		}
		if res, _ := f.result(t, "app", "k-down"); res.Refused != "test" {
			t.Errorf("answer %+v", res)
		}
	})

	// A command that does not parse is taken and answered with why.
	t.Run("malformed command refused", func(t *testing.T) {
		f := e.fixture(t, "cmd-bad")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 100]\n  pause: 1s\n")
		f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.annotate(t, "app", v1alpha1.CommandAnnotation, `{"command":"pause","id":"k-bad","by":"erin"}`)
		res, _ := f.result(t, "app", "k-bad")
		if !strings.Contains(res.Refused, "spec.paused") || res.By != "erin" {
			t.Errorf("answer %+v: want refused, pointing at spec.paused", res)
		}
	})

	// spec.paused with crossfade.io/paused-by is journaled as theirs.
	t.Run("paused-by journaled", func(t *testing.T) {
		f := e.fixture(t, "cmd-pausedby")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 50, 100]\n  pause: 2s\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		patch := `{"metadata":{"annotations":{"` + v1alpha1.PausedByAnnotation + `":"dave"}},"spec":{"paused":true}}`
		if err := f.c.Cutovers.Patch(types.MergePatchType).Namespace(f.ns).Resource(v1alpha1.Resource).Name("app").Body([]byte(patch)).Do(t.Context()).Error(); err != nil {
			t.Fatal(err)
		}
		c := f.waitFor(t, "app", "Paused", phase(v1alpha1.PhasePaused))
		if a := c.Status.LastAction; a == nil || a.Command != "pause" || a.By != "dave" {
			t.Errorf("lastAction %+v: want pause by dave", a)
		}
		// Consumed by the pause it named dave for: a later change of spec.paused alone is
		// not dave's.
		f.waitFor(t, "app", "paused-by removed", func(c *v1alpha1.Cutover) bool {
			_, ok := c.Annotations[v1alpha1.PausedByAnnotation]
			return !ok
		})
		f.setPaused(t, "app", false)
		c = f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		var by []string
		for _, en := range c.Status.Entries() {
			if en.Kind == "control" {
				by = append(by, en.Detail+" by "+en.By)
			}
		}
		if want := []string{"pause by dave", "resume by " + PausedBy}; !slices.Equal(by, want) {
			t.Errorf("control entries %q, want %q", by, want)
		}
	})

	// A Cutover deleted mid-run is aborted (journaled by the finalizer) and rolled back
	// before it goes.
	t.Run("deleted mid-run rolls back then goes", func(t *testing.T) {
		f := e.fixture(t, "del-midrun")
		f.recordEvents(t)
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		c := f.waitFor(t, "app", "holding step 0", holding(0))
		if !slices.Contains(c.Finalizers, v1alpha1.Finalizer) {
			t.Fatalf("finalizers %v of a running cutover: want %s", c.Finalizers, v1alpha1.Finalizer)
		}
		f.wantWeights(t, 50, 50)
		f.remove(t, "app")
		f.gone(t, "app")
		f.wantWeights(t, 100, 0)
		f.eventReasons(t, "app", ReasonFinalizerAborting, ReasonRolledBack, ReasonFinalizerRemoved)
	})

	// A Cutover deleted once Completed goes at once; the weights and the zone's authority
	// record stay.
	t.Run("deleted when Completed goes at once", func(t *testing.T) {
		f := e.fixture(t, "del-completed")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 100]\n  pause: 1s\n")
		c := f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		if !slices.Contains(c.Finalizers, v1alpha1.Finalizer) {
			t.Fatalf("finalizers %v: want %s", c.Finalizers, v1alpha1.Finalizer)
		}
		batches := f.dns.Count()
		f.remove(t, "app")
		f.gone(t, "app")
		f.wantWeights(t, 0, 100)
		if _, ok := f.authority(t); !ok {
			t.Error("the authority record is gone with the Completed Cutover; want it kept until a release")
		}
		if n := f.dns.Count(); n != batches {
			t.Errorf("%d change batches sent after the deletion of a Completed cutover, want none", n-batches)
		}
	})

	// A Cutover whose zone does not exist cannot start: its status says why in a
	// condition, and a Warning Event does.
	t.Run("refused start is a condition", func(t *testing.T) {
		f := e.fixture(t, "refused")
		f.recordEvents(t)
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", "  zone: nosuch.example.org\n  records:\n    - name: app.nosuch.example.org\n  from: blue\n  to: green\n  steps: [0, 100]\n  pause: 1s\n")
		// A missing zone may be created yet: the start is retried, Pending, Reconciling
		// saying why (not Stalled, not Failed).
		c := f.waitFor(t, "app", "refused with a reason", func(c *v1alpha1.Cutover) bool {
			cd := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReconciling)
			return cd != nil && strings.Contains(cd.Message, "nosuch.example.org")
		})
		rc := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReconciling)
		if c.Status.Phase != v1alpha1.PhasePending || rc.Status != metav1.ConditionTrue || rc.Reason != ReasonStartRefused {
			t.Errorf("phase %s, Reconciling %+v: want Pending, Reconciling True with reason %s", c.Status.Phase, rc, ReasonStartRefused)
		}
		if st := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled); st != nil && st.Status == metav1.ConditionTrue {
			t.Errorf("Stalled %+v: want not stalled, the start retried", st)
		}
		if n := f.dns.Count(); n != 0 {
			t.Errorf("%d change batches sent, want none", n)
		}
		ev := f.eventReasons(t, "app", ReasonStartRefused)
		if s := ev[ReasonStartRefused][0]; s.Type != corev1.EventTypeWarning || !strings.Contains(s.Message, "nosuch.example.org") {
			t.Errorf("StartRefused event %s %q: want Warning naming the zone", s.Type, s.Message)
		}
	})
}

// foreignWeight sets member's weight of app.example.com as a writer that ignores the
// authority record would: its record set deleted as read and created with weight.
func (f *fixture) foreignWeight(t *testing.T, member string, weight int64) {
	t.Helper()
	zones, err := f.z.DNS.Zones(t.Context())
	if err != nil || len(zones) == 0 {
		t.Fatalf("zones: %v", err)
	}
	recs, err := f.z.DNS.Records(t.Context(), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == "A" && r.Name == "app.example.com" && r.SetIdentifier == member {
			c := r.Clone()
			c.Policy = endpoint.WeightedPolicy(weight)
			if err := f.z.DNS.Apply(t.Context(), zones[0], changes.Batch{{Action: changes.Delete, Endpoint: r}, {Action: changes.Create, Endpoint: c}}); err != nil {
				t.Fatalf("set %s's weight to %d: %v", member, weight, err)
			}
			return
		}
	}
	t.Fatalf("no A member %s of app.example.com", member)
}
