package reconciler

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// deadline bounds every wait of these tests: a failure deadline, far above what each
// takes, not a timed assertion.
const deadline = 120 * time.Second

// env is a real API server with the Cutover CRD installed.
type env struct {
	kc *kubetest.Cluster
	c  *statusstore.Client
}

// start runs kube-apiserver and etcd for t (skipped under -short) with the CRD installed.
func start(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver and a sandbox")
	}
	kc := kubetest.Start(t)
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	kc.InstallCRDs(t, filepath.Join(filepath.Dir(file), "..", "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	c, err := statusstore.NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &env{kc: kc, c: c}
}

// fixture is one subtest's namespace, zone (blue 100, green 0 on app.example.com) and
// Route 53 provider counting its writes.
type fixture struct {
	*env
	ns  string
	z   *levertest.Zone
	dns *levertest.CountingDNS
	// stateDir is the last reconciler's StateDir.
	stateDir string
	// events, when set, is the recorder the reconcilers built after it get.
	events record.EventRecorder
}

// fixture makes a namespace of its own (a reconciler of another subtest never sees its
// Cutovers) and a zone.
func (e *env) fixture(t *testing.T, ns string) *fixture {
	t.Helper()
	if _, err := e.kc.Clientset(t).CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	return &fixture{env: e, ns: ns, z: z, dns: &levertest.CountingDNS{DNS: z.DNS}}
}

// reconciler builds a Reconciler of f's namespace named identity, with short engine
// intervals so that a run takes seconds.
func (f *fixture) reconciler(t *testing.T, identity string, lease time.Duration) *Reconciler {
	t.Helper()
	f.stateDir = t.TempDir()
	r, err := New(Config{REST: f.kc.Config(), Namespace: f.ns, Identity: identity, Levers: f.z.Levers(f.dns),
		StateDir: f.stateDir, DNSServers: []string{f.z.SB.DNSAddr()}, LeaseDuration: lease, Events: f.events,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	r.checkInterval, r.pollInterval, r.pauseEvery = 100*time.Millisecond, 20*time.Millisecond, 200*time.Millisecond
	return r
}

// testWriter logs through t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// run runs r until the returned stop is called (or the test ends); stop waits for Run to
// return, and fails the test if it returns an error or does not return.
func run(t *testing.T, r *Reconciler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run of %s: %v", r.cfg.Identity, err)
				}
			case <-time.After(deadline):
				t.Errorf("Run of %s did not return after its context ended", r.cfg.Identity)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// create applies a Cutover named name in f's namespace with spec (YAML, indented for
// under "spec:").
func (f *fixture) create(t *testing.T, name, spec string) {
	t.Helper()
	doc := "apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata:\n  name: " + name + "\n  namespace: " + f.ns + "\nspec:\n" + spec
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	if err := f.c.Cutovers.Post().Namespace(f.ns).Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Error(); err != nil {
		t.Fatalf("create Cutover %s/%s: %v", f.ns, name, err)
	}
}

// get reads the Cutover named name.
func (f *fixture) get(t *testing.T, name string) *v1alpha1.Cutover {
	t.Helper()
	out := &v1alpha1.Cutover{}
	if err := f.c.Cutovers.Get().Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("read Cutover %s/%s: %v", f.ns, name, err)
	}
	return out
}

// setPaused sets spec.paused as `kubectl patch` does.
func (f *fixture) setPaused(t *testing.T, name string, paused bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)
	if err := f.c.Cutovers.Patch(types.MergePatchType).Namespace(f.ns).Resource(v1alpha1.Resource).Name(name).Body([]byte(patch)).Do(t.Context()).Error(); err != nil {
		t.Fatalf("patch Cutover %s/%s with %s: %v", f.ns, name, patch, err)
	}
}

// waitFor polls the Cutover until ok says it is there, and fails the test with the last
// status read if that takes longer than the deadline.
func (f *fixture) waitFor(t *testing.T, name, what string, ok func(*v1alpha1.Cutover) bool) *v1alpha1.Cutover {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		c := f.get(t, name)
		if ok(c) {
			return c
		}
		if time.Now().After(end) {
			c.Status.Journal = nil
			t.Fatalf("cutover %s/%s: not %s within %s; status %+v", f.ns, name, what, deadline, c.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// phase is a waitFor condition: the status has phase p.
func phase(p v1alpha1.Phase) func(*v1alpha1.Cutover) bool {
	return func(c *v1alpha1.Cutover) bool { return c.Status.Phase == p }
}

// holding is a waitFor condition: step i's weights were written and it has no result
// yet (it holds).
func holding(i int32) func(*v1alpha1.Cutover) bool {
	return func(c *v1alpha1.Cutover) bool {
		for _, s := range c.Status.Steps {
			if s.Index == i && len(s.Weights) > 0 && s.Result == "" {
				return true
			}
		}
		return false
	}
}

// count counts the journal's entries of kind, by step.
func count(en []journal.Entry, kind string) map[int]int {
	out := map[int]int{}
	for _, e := range en {
		if e.Kind == kind {
			out[e.Step]++
		}
	}
	return out
}

// wantWeights fails unless the zone's members have blue and green.
func (f *fixture) wantWeights(t *testing.T, blue, green int64) {
	t.Helper()
	if a, _ := f.z.Weights(t); a["blue"] != blue || a["green"] != green {
		t.Errorf("zone weights %v, want blue %d, green %d", a, blue, green)
	}
}

// steps is the spec every subtest's Cutover starts from: app.example.com, blue to green.
const steps = "  zone: example.com\n  records:\n    - name: app.example.com\n  from: blue\n  to: green\n"

// TestReconciler runs Cutover objects on a real kube-apiserver with the reconciler, the
// Route 53 lever on the in-process sandbox.
func TestReconciler(t *testing.T) {
	e := start(t)

	// (a) An applied Cutover runs to Completed: Ready, every step Passed, the weights
	// in the zone and in status.
	t.Run("applied cutover completes", func(t *testing.T) {
		f := e.fixture(t, "complete")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 10, 50, 100]\n  pause: 1s\n")
		c := f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
			t.Errorf("conditions %+v: want Ready=True", c.Status.Conditions)
		}
		if len(c.Status.Steps) != 4 {
			t.Errorf("status.steps %+v: want 4", c.Status.Steps)
		}
		for _, s := range c.Status.Steps {
			if s.Result != v1alpha1.StepPassed {
				t.Errorf("step %d: result %q, want Passed", s.Index, s.Result)
			}
		}
		if c.Status.Weights["green"] != 100 || c.Status.Weights["blue"] != 0 {
			t.Errorf("status.weights %v, want green 100", c.Status.Weights)
		}
		if c.Status.ObservedGeneration != c.Generation {
			t.Errorf("observedGeneration %d, want %d", c.Status.ObservedGeneration, c.Generation)
		}
		f.wantWeights(t, 0, 100)
		// The engine's report, as `cutover run` leaves it, and the Lease let go: both come
		// once the journal has ended, so after the status said Completed.
		report := cutover.PathsFor(filepath.Join(f.stateDir, f.ns), "app").Report
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, err := os.Stat(report)
			held := statusstore.New(f.c, f.ns, "app").Held()
			if err == nil && held == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the run: report %v, lease %v; want the report written and the lease released", err, held)
			}
		}
	})

	// An invalid spec (one the CRD's schema lets through, the plan's rules do not) is
	// Failed naming the field, and nothing is written to the zone.
	t.Run("invalid spec fails naming the field", func(t *testing.T) {
		f := e.fixture(t, "invalid")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", "  zone: example.com\n  records:\n    - name: app.example.com\n  from: blue\n  to: blue\n  steps: [0, 100]\n  pause: 1s\n")
		c := f.waitFor(t, "app", "Failed", phase(v1alpha1.PhaseFailed))
		st := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled)
		if st == nil || st.Status != metav1.ConditionTrue || !strings.Contains(st.Message, "cutover/app: spec.to") {
			t.Errorf("Stalled condition %+v: want True naming cutover/app: spec.to", st)
		}
		if n := f.dns.Count(); n != 0 {
			t.Errorf("%d change batches sent for an invalid spec, want none", n)
		}
	})

	// A Cutover applied with spec.paused gets a Pending status (paused before its start,
	// not Reconciling) and moves nothing until spec.paused is cleared.
	t.Run("paused before start stays Pending", func(t *testing.T) {
		f := e.fixture(t, "pending")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 100]\n  pause: 1s\n  paused: true\n")
		c := f.waitFor(t, "app", "Pending", phase(v1alpha1.PhasePending))
		rc := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReconciling)
		if rc == nil || rc.Status != metav1.ConditionFalse || rc.Reason != "PausedBeforeStart" {
			t.Errorf("Reconciling condition %+v: want False, PausedBeforeStart", rc)
		}
		if len(c.Status.Journal) != 0 || f.dns.Count() != 0 {
			t.Errorf("a Cutover paused before its start journaled %d entries and sent %d change batches, want none", len(c.Status.Journal), f.dns.Count())
		}
		f.setPaused(t, "app", false)
		f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.wantWeights(t, 0, 100)
	})

	// (b) A gate that fails rolls the cutover back: RolledBack, the gate's verdict and
	// what it measured in status.steps[].gates, the zone back at the start weights.
	t.Run("failing gate rolls back", func(t *testing.T) {
		f := e.fixture(t, "rollback")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "broken", http.StatusInternalServerError)
		}))
		t.Cleanup(srv.Close)
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps:\n    - 10\n    - percent: 50\n      gates:\n        - name: web\n          http:\n            url: "+srv.URL+"/healthz\n            requests: 3\n    - 100\n  pause: 1s\n")
		c := f.waitFor(t, "app", "RolledBack", phase(v1alpha1.PhaseRolledBack))
		if len(c.Status.Steps) != 2 || c.Status.Steps[0].Result != v1alpha1.StepPassed || c.Status.Steps[1].Result != v1alpha1.StepFailed {
			t.Fatalf("status.steps %+v: want step 0 Passed, step 1 Failed", c.Status.Steps)
		}
		if w := c.Status.Steps[1].Weights; w["green"] != 50 {
			t.Errorf("step 1 wrote %v, want green 50", w)
		}
		gates := c.Status.Steps[1].Gates
		if len(gates) != 1 || gates[0].Name != "web" || gates[0].Kind != "http" || gates[0].Verdict != v1alpha1.VerdictFailed || gates[0].Detail == "" || len(gates[0].Measurements) == 0 {
			t.Errorf("step 1 gates %+v: want web (http) Failed with its detail and measurements", gates)
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionStalled) {
			t.Errorf("conditions %+v: want Stalled=True", c.Status.Conditions)
		}
		f.wantWeights(t, 100, 0)
	})

	// (c) spec.paused mid-run pauses the run (Paused, not Stalled) and clearing it
	// resumes it to the end; each is journaled once, by spec.paused.
	t.Run("spec.paused pauses and resumes", func(t *testing.T) {
		f := e.fixture(t, "paused")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 50, 100]\n  pause: 3s\n")
		f.waitFor(t, "app", "holding step 1", holding(1))
		f.setPaused(t, "app", true)
		c := f.waitFor(t, "app", "Paused", phase(v1alpha1.PhasePaused))
		if !meta.IsStatusConditionFalse(c.Status.Conditions, v1alpha1.ConditionStalled) || !meta.IsStatusConditionFalse(c.Status.Conditions, v1alpha1.ConditionReconciling) {
			t.Errorf("paused conditions %+v: want Stalled=False, Reconciling=False (a person's pause)", c.Status.Conditions)
		}
		if a := c.Status.LastAction; a == nil || a.Command != cutover.CommandPause || a.By != PausedBy {
			t.Errorf("lastAction %+v: want pause by %q", a, PausedBy)
		}
		f.wantWeights(t, 50, 50)
		f.setPaused(t, "app", false)
		c = f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.wantWeights(t, 0, 100)
		sent := map[string]int{}
		for _, en := range c.Status.Entries() {
			if en.Kind == "control" {
				sent[en.Detail+" by "+en.By]++
			}
		}
		want := map[string]int{"pause by " + PausedBy: 1, "resume by " + PausedBy: 1}
		if fmt.Sprint(sent) != fmt.Sprint(want) {
			t.Errorf("control entries %v, want %v", sent, want)
		}
	})

	// (d) Two replicas: A runs the cutover and dies mid-step (its context ends: every
	// goroutine of it stops, its Lease is not released); B, a standby, takes over once
	// the Lease expires and completes it from status. Every step passed once, and every
	// change batch sent to Route 53 is journaled as written.
	t.Run("standby takes over from a dead replica", func(t *testing.T) {
		f := e.fixture(t, "takeover")
		killA := run(t, f.reconciler(t, "replica-a", 2*time.Second))
		f.create(t, "app", steps+"  steps: [0, 10, 50, 100]\n  pause: 2s\n")
		f.waitFor(t, "app", "started", phase(v1alpha1.PhaseProgressing))
		run(t, f.reconciler(t, "replica-b", 2*time.Second))
		f.waitFor(t, "app", "holding step 2", holding(2))
		killA()
		c := f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.wantWeights(t, 0, 100)
		en := c.Status.Entries()
		passed := count(en, "step-passed")
		for step := range 4 {
			if passed[step] != 1 {
				t.Errorf("step %d passed %d times, want once", step, passed[step])
			}
		}
		resumed := 0
		for _, e := range en {
			if e.Kind == "resumed" {
				resumed++
				if !strings.Contains(e.Detail, "runner") {
					t.Errorf("resumed entry %+v: want the runner named", e)
				}
			}
		}
		if resumed != 1 {
			t.Errorf("%d resumed entries, want 1 (B taking over from A)", resumed)
		}
		written := 0
		for _, n := range count(en, "written") {
			written += n
		}
		if sent := f.dns.Count(); sent != written {
			t.Errorf("%d change batches sent to Route 53, %d journaled as written", sent, written)
		}
		if by := c.Status.Journal[len(c.Status.Journal)-1]; by.Seq != len(c.Status.Journal) {
			t.Errorf("last entry has seq %d of %d entries: the journal has a gap or a duplicate", by.Seq, len(c.Status.Journal))
		}
	})

	// (e) A `cutover run` of the same plan from a laptop (file journal, its own state
	// directory) while the reconciler runs it is refused by the authority record and
	// writes nothing.
	t.Run("CLI run refused while the controller runs it", func(t *testing.T) {
		f := e.fixture(t, "cli")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 50, 100]\n  pause: 3s\n")
		c := f.waitFor(t, "app", "holding step 1", holding(1))
		plan, err := c.Plan()
		if err != nil {
			t.Fatal(err)
		}
		cli := &levertest.CountingDNS{DNS: f.z.DNS}
		dir := t.TempDir()
		_, err = cutover.Run(t.Context(), cutover.Config{Plan: plan, Levers: f.z.Levers(cli), StateDir: dir, By: "alice@laptop",
			DNSServers: []string{f.z.SB.DNSAddr()}, CheckInterval: 100 * time.Millisecond, PollInterval: 20 * time.Millisecond}, false)
		var held *lever.HeldError
		if !errors.As(err, &held) {
			t.Fatalf("CLI run while the controller runs it: %v, want refused by the authority record (*lever.HeldError)", err)
		}
		if n := cli.Count(); n != 0 {
			t.Errorf("the refused CLI run sent %d change batches, want none", n)
		}
		paths := cutover.PathsFor(dir, "app")
		if en, _, err := journal.Files(paths.Journal, paths.Lock).Read(); err != nil && !errors.Is(err, fs.ErrNotExist) || len(en) != 0 {
			t.Errorf("the refused CLI run journaled %v (%v), want nothing", en, err)
		}
		c = f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		f.wantWeights(t, 0, 100)
		if passed := count(c.Status.Entries(), "step-passed"); len(passed) != 3 {
			t.Errorf("steps passed %v, want each of 3 once", passed)
		}
	})
}

// TestRunRefusesWithoutAccess: a cluster without the Cutover CRD, or a service account
// that may not list Cutovers, stops Run at once with an error that says what to install
// or grant; an informer retrying in silence would leave the controller reporting ready
// while no Cutover runs.
func TestRunRefusesWithoutAccess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	run := func(t *testing.T, cfg *rest.Config, ns string) error {
		t.Helper()
		r, err := New(Config{REST: cfg, Namespace: ns, Identity: "replica-a", Levers: levertest.NewZone(t, sandbox.Config{}, 100, 0).Levers(nil), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		// Without the check Run would watch until this ends, and return nil.
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		return r.Run(ctx)
	}
	t.Run("no CRD", func(t *testing.T) {
		kc := kubetest.Start(t)
		err := run(t, kc.Config(), "")
		if err == nil || !strings.Contains(err.Error(), "--cutovers: the Cutover CRD (cutovers.crossfade.io) is not installed: apply deploy/crds/cutovers.crossfade.io.yaml") {
			t.Errorf("Run without the CRD: %v", err)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		e := start(t)
		cfg := rest.CopyConfig(e.kc.Config())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:crossfade:crossfade"}
		err := run(t, cfg, "shop")
		if err == nil || !strings.Contains(err.Error(), "--cutovers: may not list cutovers.crossfade.io in namespace shop: grant get, list and watch on cutovers") {
			t.Errorf("Run without the right to list Cutovers: %v", err)
		}
	})
}
