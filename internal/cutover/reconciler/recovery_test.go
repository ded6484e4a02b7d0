package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// downDNS is the zone's Route 53 provider failing every call while fail is set, as
// Route 53 unreachable (or every permission taken away) does.
type downDNS struct {
	lr53.DNS
	fail atomic.Bool
}

// down is the error of a call made while fail is set.
func (d *downDNS) down() error {
	if !d.fail.Load() {
		return nil
	}
	return errors.New("AccessDenied: not authorized to call Route 53 (test)")
}

// Zones fails while fail is set.
func (d *downDNS) Zones(ctx context.Context) ([]provider.Zone, error) {
	if err := d.down(); err != nil {
		return nil, err
	}
	return d.DNS.Zones(ctx)
}

// Records fails while fail is set.
func (d *downDNS) Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error) {
	if err := d.down(); err != nil {
		return nil, err
	}
	return d.DNS.Records(ctx, zone)
}

// ApplyChange fails while fail is set.
func (d *downDNS) ApplyChange(ctx context.Context, zone provider.Zone, batch changes.Batch, comment string) (string, error) {
	if err := d.down(); err != nil {
		return "", err
	}
	return d.DNS.ApplyChange(ctx, zone, batch, comment)
}

// expireLease writes the Cutover's Lease as a process of the replica identity that died
// left it: held by it, expired (or, with d > 0, for d from now, as just after it died).
func (f *fixture) expireLease(t *testing.T, name, identity string, d time.Duration) {
	t.Helper()
	leases := f.kc.Clientset(t).CoordinationV1().Leases(f.ns)
	l, err := leases.Get(t.Context(), statusstore.LeaseName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read the Lease of %s: %v", name, err)
	}
	now := metav1.NewMicroTime(time.Now())
	if d <= 0 {
		now = metav1.NewMicroTime(time.Now().Add(-2 * time.Hour))
		d = time.Hour
	}
	secs := int32(d / time.Second)
	holder, err := json.Marshal(journal.Holder{By: "controller/" + identity, PID: 1, Host: identity, Since: now.Time, Cutover: name})
	if err != nil {
		t.Fatal(err)
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[statusstore.HolderAnnotation] = string(holder)
	l.Spec.HolderIdentity = &identity
	l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseDurationSeconds = &now, &now, &secs
	if _, err := leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the Lease of %s: %v", name, err)
	}
}

// TestCommandRecovery covers commands and runs across a stop of the run, a restarted
// process, a deletion, and errors, on a real kube-apiserver with the reconciler and the
// Route 53 lever on the in-process sandbox.
func TestCommandRecovery(t *testing.T) {
	e := start(t)

	// A promote written to the control directory of a run that stopped before reading it
	// (as SendTo writes it: stamped with that run's start) is not acted on by the next run
	// of this process, which answers it as refused, and removes the file.
	t.Run("stale control file answered, not acted on", func(t *testing.T) {
		f := e.fixture(t, "stale")
		f.recordEvents(t)
		r := f.reconciler(t, "replica-a", 2*time.Second)
		stateDir := f.stateDir
		stopA := run(t, r)
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		stopA()
		paths := cutover.PathsFor(filepath.Join(stateDir, f.ns), "app")
		store := statusstore.New(f.c, f.ns, "app")
		if _, err := cutover.SendTo(store, paths, cutover.Command{ID: "k-stale", Command: cutover.CommandPromote, By: "alice"}); err != nil {
			t.Fatal(err)
		}
		// A pause of spec.paused left the same way is removed without an answer.
		if _, err := cutover.SendTo(store, paths, cutover.Command{Command: cutover.CommandPause, By: PausedBy}); err != nil {
			t.Fatal(err)
		}
		f.expireLease(t, "app", "replica-a", 0)

		r2 := f.reconciler(t, "replica-a", 2*time.Second)
		r2.cfg.StateDir = stateDir
		run(t, r2)
		res, _ := f.result(t, "app", "k-stale")
		if res.Refused != staleAnswer || res.By != "alice" || res.Command != "promote" {
			t.Errorf("answer %+v: want the promote by alice refused: %q", res, staleAnswer)
		}
		f.waitFor(t, "app", "resumed by the new run", func(c *v1alpha1.Cutover) bool {
			for _, e := range c.Status.Entries() {
				if e.Kind == "resumed" {
					return true
				}
			}
			return false
		})
		if waiting, err := commandWaiting(paths.Control); err != nil || waiting {
			t.Errorf("control directory: waiting %t, %v: want the stale commands removed", waiting, err)
		}
		c := f.get(t, "app")
		for _, en := range c.Status.Entries() {
			if en.Kind == "control" {
				t.Errorf("control entry %+v journaled: want none of the stale commands acted on", en)
			}
		}
		if c.Status.Phase != v1alpha1.PhaseProgressing {
			t.Errorf("phase %s, want Progressing (holding step 0)", c.Status.Phase)
		}
		f.wantWeights(t, 50, 50)
		ev := f.eventReasons(t, "app", ReasonCommandRefused)
		if r := ev[ReasonCommandRefused][0]; r.Type != corev1.EventTypeWarning || !strings.Contains(r.Message, "k-stale") {
			t.Errorf("CommandRefused event %s %q: want Warning naming k-stale", r.Type, r.Message)
		}
	})

	// The Lease names the replica (the pod): after a container restart, the dead
	// process's Lease names this replica too, until it expires. The new process takes no
	// command meanwhile; it does once its own run holds the Lease.
	t.Run("a Lease of the same identity is not this process's", func(t *testing.T) {
		f := e.fixture(t, "restarted")
		stopA := run(t, f.reconciler(t, "replica-a", 2*time.Second))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		stopA()
		// The dead process's Lease, renewed just before it died.
		f.expireLease(t, "app", "replica-a", time.Hour)

		r := f.reconciler(t, "replica-a", 2*time.Second)
		c := f.get(t, "app")
		w := &worker{r: r, namespace: f.ns, name: "app", uid: c.UID, log: r.log, stateDir: filepath.Join(f.stateDir, f.ns)}
		store := statusstore.New(f.c, f.ns, "app")
		if mine, err := w.holding(store); err != nil || mine {
			t.Errorf("holding: %t, %v; want false: this process's run has not acquired the Lease", mine, err)
		}
		f.command(t, "app", v1alpha1.CommandRequest{Command: "promote", ID: "k-restart", By: "alice"})
		if err := w.runningCommand(t.Context(), store, cutover.PathsFor(w.stateDir, "app"), f.get(t, "app")); err != nil {
			t.Fatal(err)
		}
		if v := f.get(t, "app").Annotations[v1alpha1.CommandAnnotation]; v == "" {
			t.Fatal("the command was taken by a process whose run does not hold the Lease")
		}

		// Once the dead process's Lease expires, this process's run takes it over, and
		// the command.
		r.cfg.StateDir = f.stateDir
		run(t, r)
		f.expireLease(t, "app", "replica-a", 0)
		c = f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		if got := controlEntries(c.Status.Entries(), "k-restart"); len(got) != 1 || got[0].By != "alice" {
			t.Errorf("control entries with id k-restart: %+v, want one promote by alice", got)
		}
	})

	// A command sent to a Cutover being deleted (another finalizer keeps it) is answered
	// as refused, not left waiting.
	t.Run("command to a Cutover being deleted refused", func(t *testing.T) {
		f := e.fixture(t, "cmd-deleting")
		run(t, f.reconciler(t, "replica-a", 0))
		f.create(t, "app", steps+"  steps: [0, 100]\n  pause: 1s\n")
		f.waitFor(t, "app", "Completed", phase(v1alpha1.PhaseCompleted))
		keep := []byte(`[{"op":"add","path":"/metadata/finalizers/-","value":"test.crossfade.io/keep"}]`)
		if err := f.c.Cutovers.Patch(types.JSONPatchType).Namespace(f.ns).Resource(v1alpha1.Resource).Name("app").Body(keep).Do(t.Context()).Error(); err != nil {
			t.Fatal(err)
		}
		f.remove(t, "app")
		f.waitFor(t, "app", "our finalizer removed", func(c *v1alpha1.Cutover) bool {
			return c.DeletionTimestamp != nil && !hasFinalizer(c)
		})
		f.command(t, "app", v1alpha1.CommandRequest{Command: "release", ID: "k-deleting", By: "carol"})
		res, _ := f.result(t, "app", "k-deleting")
		if !strings.HasPrefix(res.Refused, "the Cutover is being deleted: ") || res.By != "carol" {
			t.Errorf("answer %+v: want the release refused, the Cutover being deleted", res)
		}
		drop := []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`)
		if err := f.c.Cutovers.Patch(types.JSONPatchType).Namespace(f.ns).Resource(v1alpha1.Resource).Name("app").Body(drop).Do(t.Context()).Error(); err != nil {
			t.Fatal(err)
		}
		f.gone(t, "app")
	})

	// A run that cannot go on (Route 53 fails every call) is tried again after the
	// backoff, not at each poke: the informer pokes the worker at each write of the
	// object, its own status writes (a "resumed" entry each try) among them, and every
	// resync. Here the test pokes its worker as fast as an informer could; the bound is a
	// count of tries over a fixed wait, above what the backoff allows and far below a
	// retry at each poke.
	t.Run("backoff not ended by pokes", func(t *testing.T) {
		f := e.fixture(t, "backoff")
		stopA := run(t, f.reconciler(t, "replica-a", 2*time.Second))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		stopA()
		f.expireLease(t, "app", "replica-a", 0)
		down := &downDNS{DNS: f.z.DNS}
		down.fail.Store(true)
		f.dns = &levertest.CountingDNS{DNS: down}
		r := f.reconciler(t, "replica-b", 2*time.Second)
		w := r.startWorker(context.Background(), f.get(t, "app"))
		t.Cleanup(func() {
			w.stop()
			<-w.done
		})
		resumed := func(c *v1alpha1.Cutover) int {
			n := 0
			for _, e := range c.Status.Entries() {
				if e.Kind == "resumed" {
					n++
				}
			}
			return n
		}
		f.waitFor(t, "app", "resumed by replica-b", func(c *v1alpha1.Cutover) bool { return resumed(c) > 0 })
		for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			w.poke()
		}
		// retryMin 5 s, doubling: in 8 s the first try and one retry.
		if n := resumed(f.get(t, "app")); n > 3 {
			t.Errorf("%d resumed entries in 8 s with Route 53 down: the backoff was cut short by pokes", n)
		}
		if n := f.dns.Count(); n != 0 {
			t.Errorf("%d change batches sent with Route 53 down, want none", n)
		}
	})

	// The Events of an entry are recorded once its append has landed: an append refused
	// (another writer appended first) records none.
	t.Run("events after the append lands", func(t *testing.T) {
		f := e.fixture(t, "events-landed")
		stopA := run(t, f.reconciler(t, "replica-a", 2*time.Second))
		f.create(t, "app", steps+"  steps: [50, 100]\n  pause: 1h\n")
		f.waitFor(t, "app", "holding step 0", holding(0))
		stopA()
		rec := record.NewFakeRecorder(100)
		r := f.reconciler(t, "replica-b", 2*time.Second)
		r.cfg.Events = rec
		c := f.get(t, "app")
		w := &worker{r: r, namespace: f.ns, name: "app", uid: c.UID, log: r.log, stateDir: filepath.Join(f.stateDir, f.ns)}
		plan, err := c.Plan()
		if err != nil {
			t.Fatal(err)
		}
		mine, _, _, err := w.engineConfig(t.Context(), plan, w.runBy()).Journals("app").Open()
		if err != nil {
			t.Fatal(err)
		}
		other, _, _, err := statusstore.New(f.c, f.ns, "app").Open()
		if err != nil {
			t.Fatal(err)
		}
		control := func(id, by string) journal.Entry {
			return journal.Entry{Kind: "control", Step: -1, Detail: "promote", By: by, ID: id}
		}
		if _, err := other.Append(control("k-first", "erin")); err != nil {
			t.Fatal(err)
		}
		var conflict *journal.ConflictError
		if _, err := mine.Append(control("k-lost", "mallory")); !errors.As(err, &conflict) {
			t.Fatalf("append after another writer's: %v, want a conflict", err)
		}
		if n := len(rec.Events); n != 0 {
			t.Errorf("%d Events recorded for an append refused: %q", n, <-rec.Events)
		}
		mine, _, _, err = w.engineConfig(t.Context(), plan, w.runBy()).Journals("app").Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mine.Append(control("k-landed", "alice")); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-rec.Events:
			if !strings.Contains(ev, "promote by alice") {
				t.Errorf("Event %q: want the promote by alice", ev)
			}
		default:
			t.Error("no Event recorded for an append that landed")
		}
	})
}
