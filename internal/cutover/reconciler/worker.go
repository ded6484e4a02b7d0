package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/objectstatus"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// PausedBy is who a pause or resume the reconciler sends for spec.paused is journaled as.
const PausedBy = "kubectl (spec.paused)"

// Backoff of a run that ended with an error the next run may get past (the API server or
// AWS unreachable for longer than the engine retries, a zone not ready yet): doubled from
// retryMin at each failure in a row up to retryMax.
const (
	retryMin = 5 * time.Second
	retryMax = 5 * time.Minute
)

// idle is the delay of a worker with nothing to do until its object changes.
const idle time.Duration = -1

// loop looks at the object until ctx ends, waiting between looks as each look says.
func (w *worker) loop(ctx context.Context) {
	w.log.Info("cutover seen: worker started")
	defer w.log.Info("worker stopped")
	failures := 0
	for ctx.Err() == nil {
		delay, err := w.once(ctx)
		// backingOff is the fingerprint of the object as it failed, while the loop backs
		// off from that failure; "" otherwise.
		backingOff := ""
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failures++
			delay = min(retryMin<<min(failures-1, 10), retryMax)
			w.log.Error("cutover run stopped; trying again", "err", err, "retryIn", delay, "failuresInARow", failures)
			backingOff = w.fingerprint(ctx)
		default:
			failures = 0
		}
		if delay == 0 {
			continue
		}
		var timer <-chan time.Time
		t := time.NewTimer(max(delay, 0))
		if delay > 0 {
			timer = t.C
		}
	wait:
		for {
			select {
			case <-ctx.Done():
			case <-w.pokes:
				// A failed look's own status write, and the informer's resync, poke too:
				// ending the backoff on those would retry at once, against Route 53 or
				// appending to the journal each time. Only what a person changed ends it.
				if backingOff != "" && w.fingerprint(ctx) == backingOff {
					continue
				}
			case <-timer:
			}
			break wait
		}
		t.Stop()
	}
}

// fingerprint is what a person controls of the object (its generation, deletion,
// finalizers and annotations), as JSON: a change of it ends a backoff early. A read that
// fails says "unreadable", which equals the fingerprint of a failure to read: the backoff
// keeps on; a deleted object's is "gone", which ends it.
func (w *worker) fingerprint(ctx context.Context) string {
	c, err := w.get(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return "gone"
	}
	if err != nil {
		return "unreadable"
	}
	b, err := json.Marshal(struct {
		Generation  int64             `json:"g"`
		Deleted     bool              `json:"d"`
		Finalizers  []string          `json:"f"`
		Annotations map[string]string `json:"a"`
	}{c.Generation, c.DeletionTimestamp != nil, c.Finalizers, c.Annotations})
	if err != nil {
		return "unreadable"
	}
	return string(b)
}

// standbyEvery is how often a standby replica tries to take a Cutover's Lease: a tenth
// of its duration. A dead holder's Lease expires between two thirds of its duration and
// its whole duration after the kill (it renews every third); trying every tenth takes the
// run over within a tenth of the duration after that (15 s and 1.5 s by default), where
// half of it would leave the traffic unwatched up to 7.5 s longer. Each try is one read
// of the Lease.
func standbyEvery(lease time.Duration) time.Duration { return max(lease/10, 100*time.Millisecond) }

// once looks at the object and does what it says: nothing for an ended cutover, a
// Pending or Failed status for one that has not started, a run for one to run. It returns
// how long to wait before the next look (idle: until the object changes), or the error a
// failed run ended with (the loop backs off).
func (w *worker) once(ctx context.Context) (time.Duration, error) {
	c, err := w.get(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return idle, nil // deleted: Run stops this worker
	}
	if err != nil {
		return 0, err
	}
	if c.DeletionTimestamp != nil {
		d, run, err := w.deleting(ctx, c)
		if !run {
			return again(d, err)
		}
	} else if held, err := w.idleCommand(ctx, c); err != nil {
		return again(0, err)
	} else if held && c.Status.Phase.Final() {
		// A command waits for a Lease someone holds: look again once it may have expired.
		return w.r.cfg.LeaseDuration / 2, nil
	}
	if c.Status.Phase.Final() {
		return idle, nil
	}
	plan, perr := c.Plan()
	en := c.Status.Entries()
	if perr != nil {
		// An invalid spec does not get better by retrying: Failed, naming the fields,
		// until a person deletes the object and applies a valid one.
		w.log.Error("invalid cutover spec: not run", "err", perr)
		return again(idle, w.writeStatus(ctx, c, en, nil, perr))
	}
	if c.DeletionTimestamp == nil && !hasFinalizer(c) {
		// Before the first step is written: a Cutover deleted mid-run is aborted before
		// it goes.
		if err := w.addFinalizer(ctx, c); err != nil {
			return again(0, err)
		}
		return 0, nil
	}
	if cutover.BuildReport(c.Name, en).NotStarted {
		// Nothing journaled yet: status says Pending (paused before its start when
		// spec.paused), for this generation.
		if err := w.writeStatus(ctx, c, en, plan, nil); err != nil {
			return again(0, err)
		}
		if c.Spec.Paused {
			w.log.Info("cutover paused before its first step (spec.paused): waiting")
			return idle, nil
		}
	}
	return w.run(ctx, c, plan)
}

// writeStatus projects c's status from its journal (with failure, when not nil) and
// writes it through the status subresource, unless it is already what status says. A
// conflict means the object changed: the caller looks again.
func (w *worker) writeStatus(ctx context.Context, c *v1alpha1.Cutover, en []journal.Entry, plan *spec.Plan, failure error) error {
	next := c.DeepCopy()
	objectstatus.Project(next, en, plan, time.Now(), failure)
	if failure == nil && w.startErr != nil && next.Status.Phase == v1alpha1.PhasePending && !c.Spec.Paused {
		refusedStart(&next.Status, w.startErr)
	}
	if equality.Semantic.DeepEqual(next.Status, c.Status) {
		return nil
	}
	err := w.r.client.Cutovers.Put().Namespace(w.namespace).Resource(v1alpha1.Resource).Name(w.name).SubResource("status").Body(next).Do(ctx).Error()
	switch {
	case apierrors.IsConflict(err):
		w.log.Info("cutover changed while its status was written: looking again")
		return errChanged
	case err != nil:
		return fmt.Errorf("cutover %s/%s: write status (phase %s): %w", w.namespace, w.name, next.Status.Phase, err)
	}
	w.log.Info("cutover status", "phase", next.Status.Phase)
	w.emit(&c.Status, &next.Status)
	return nil
}

// refusedStart makes a Pending status say why its run could not start (err, retried):
// Reconciling stays True (kstatus: still in progress, as a retried error is), with the
// error as its message and reason StartRefused, and Ready False the same.
func refusedStart(st *v1alpha1.CutoverStatus, err error) {
	msg := fmt.Sprintf("pending: the start was refused, retrying: %v", err)
	for _, t := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling} {
		cd := meta.FindStatusCondition(st.Conditions, t)
		if cd == nil {
			continue
		}
		cd.Reason, cd.Message = ReasonStartRefused, msg
	}
}

// errChanged is a status write refused because the object changed since it was read:
// the worker looks again at once.
var errChanged = errors.New("cutover changed since read")

// get reads the object from the API server (not the cache: what to run is decided on
// the object as it is); a missing one wraps fs.ErrNotExist.
func (w *worker) get(ctx context.Context) (*v1alpha1.Cutover, error) {
	c := &v1alpha1.Cutover{}
	err := w.r.client.Cutovers.Get().Namespace(w.namespace).Resource(v1alpha1.Resource).Name(w.name).Do(ctx).Into(c)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cutover %s/%s: %w", w.namespace, w.name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("cutover %s/%s: read: %w", w.namespace, w.name, err)
	}
	if c.UID != w.uid {
		// Deleted and created again: this worker's object is gone; Run starts another.
		return nil, fmt.Errorf("cutover %s/%s: uid %s, not %s: %w", w.namespace, w.name, c.UID, w.uid, fs.ErrNotExist)
	}
	return c, nil
}

// again is (d, err), but for a status write that lost to a change of the object: the
// worker looks again at once.
func again(d time.Duration, err error) (time.Duration, error) {
	if errors.Is(err, errChanged) {
		return 0, nil
	}
	return d, err
}

// standby reports whether err says another runner holds the cutover (its Lease, or it
// appended to the journal first): this replica waits and tries again, and takes the run
// over once the holder's Lease expires.
func standby(err error) bool {
	var locked *journal.LockedError
	var lost *statusstore.LostError
	var conflict *journal.ConflictError
	return errors.As(err, &locked) || errors.As(err, &lost) || errors.As(err, &conflict)
}

// stuck reports whether err stops the run for good, for a person to decide: the journal
// is full, the API server refuses the entry as invalid (it would refuse it again: the
// status says so, Stalled, rather than Reconciling for ever), or the weights are held by
// another runner of the cutover (a `cutover run` elsewhere: starting once it ends would
// run the cutover a second time over what it left).
func stuck(err error) bool {
	var full *statusstore.FullError
	var held *lever.HeldError
	var invalid *spec.Error
	return errors.As(err, &full) || errors.As(err, &held) || errors.As(err, &invalid) || apierrors.IsInvalid(err)
}

// run runs the cutover with the engine until it ends, ctx ends, or it fails; a pause
// follower keeps the run's pause in line with spec.paused meanwhile.
func (w *worker) run(ctx context.Context, c *v1alpha1.Cutover, plan *spec.Plan) (time.Duration, error) {
	r := w.r
	resume := len(c.Status.Journal) > 0
	if err := w.mkStateDir(); err != nil {
		return 0, err
	}
	if err := w.clearStaleCommands(ctx, c); err != nil {
		return 0, err
	}
	cfg := w.engineConfig(ctx, plan, w.runBy())
	fctx, stopFollower := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		w.followPause(fctx, cutover.PathsFor(w.stateDir, c.Name))
	}()
	w.log.Info("running cutover", "resume", resume, "steps", len(plan.Steps))
	_, runErr := cutover.Run(ctx, cfg, resume)
	// Whatever became of the Lease (released, lost, left to expire), this process's run
	// no longer acts on it.
	w.leased.Store(false)
	stopFollower()
	<-followed
	if ctx.Err() != nil {
		return idle, nil
	}
	if runErr != nil && standby(runErr) {
		// Another replica (or, through the journal, another writer) runs it.
		w.log.Info("cutover run by another holder: standing by", "err", runErr)
		return standbyEvery(r.cfg.LeaseDuration), nil
	}
	// The journal, through the hook, already says how it ended; read it back.
	after, err := w.get(ctx)
	if err != nil {
		return 0, errors.Join(runErr, err)
	}
	if after.Status.Phase.Final() {
		w.log.Info("cutover ended", "phase", after.Status.Phase, "err", runErr)
		if after.DeletionTimestamp != nil || after.Annotations[v1alpha1.CommandAnnotation] != "" {
			// Deleted (the finalizer goes now), or a command came as it ended: look again.
			return 0, nil
		}
		return idle, nil
	}
	notStarted := cutover.BuildReport(after.Name, after.Status.Entries()).NotStarted
	if runErr != nil && notStarted {
		// Refused before its start (the zone said no): the status says why, not only the
		// log.
		w.record(event{corev1.EventTypeWarning, ReasonStartRefused, fmt.Sprintf("the run could not start: %v", runErr)})
	}
	w.startErr = nil
	if runErr != nil && notStarted && !stuck(runErr) {
		w.startErr = runErr
		if err := w.writeStatus(ctx, after, after.Status.Entries(), plan, nil); err != nil && !errors.Is(err, errChanged) {
			return 0, errors.Join(runErr, err)
		}
	}
	if runErr != nil && stuck(runErr) {
		w.log.Error("cutover cannot go on by itself: Failed", "err", runErr)
		return again(idle, w.writeStatus(ctx, after, after.Status.Entries(), plan, runErr))
	}
	if runErr == nil {
		// The engine returned without an end in status (it cannot, but a lost write of
		// the last entry would look so): look again.
		return 0, nil
	}
	return 0, runErr
}

// followPause keeps the run's pause as spec.paused says, until ctx ends: on each change
// of the object, and every pauseEvery besides.
func (w *worker) followPause(ctx context.Context, paths cutover.Paths) {
	t := time.NewTicker(w.r.pauseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.pokes:
		case <-t.C:
		}
		if err := w.follow(ctx, paths); err != nil && ctx.Err() == nil {
			w.log.Error("following the object", "err", err)
		}
	}
}

// levelPause sends the run a pause when spec.paused is set and the run is not paused,
// and a resume when spec.paused is clear and the run is paused by a person. A run paused
// by drift is not resumed by it: the zone holds weights nobody here wrote, and a person
// decides (resume or abort). It sends nothing while a command it sent is still waiting
// for the runner, or before the run's start entry or after its end.
func (w *worker) levelPause(ctx context.Context, store *statusstore.Store, paths cutover.Paths, c *v1alpha1.Cutover) error {
	en := c.Status.Entries()
	rep := cutover.BuildReport(c.Name, en)
	if rep.NotStarted || rep.Outcome != "" || rep.RollingBack {
		return nil
	}
	view := c.DeepCopy()
	objectstatus.Project(view, en, nil, time.Now(), nil)
	byPerson := view.Status.Phase == v1alpha1.PhasePaused && meta.IsStatusConditionFalse(view.Status.Conditions, v1alpha1.ConditionStalled)
	var command string
	switch {
	case c.Spec.Paused && !rep.Paused:
		command = cutover.CommandPause
	case !c.Spec.Paused && byPerson:
		command = cutover.CommandResume
	default:
		return nil
	}
	// SendTo judges the command against the journal in status, as Send judges it against
	// a journal file, and stamps it with the run it is for.
	by := PausedBy
	if who := c.Annotations[v1alpha1.PausedByAnnotation]; who != "" {
		by = who
	}
	sent, err := cutover.SendTo(store, paths, cutover.Command{Command: command, By: by})
	if err != nil {
		return fmt.Errorf("cutover %s/%s: spec.paused is %t: send %s: %w", w.namespace, w.name, c.Spec.Paused, command, err)
	}
	w.log.Info("spec.paused: command sent to the run", "command", command, "paused", c.Spec.Paused, "id", sent.ID, "by", by)
	if who := c.Annotations[v1alpha1.PausedByAnnotation]; who != "" {
		// Consumed: it named who changed spec.paused this time. Left, it would name them
		// for the next change of spec.paused made without it. A changed value (a person
		// named again since) stays for the next send.
		p := v1alpha1.AnnotationPath(v1alpha1.PausedByAnnotation)
		err := w.jsonPatch(ctx, "remove "+v1alpha1.PausedByAnnotation, []map[string]any{
			{"op": "test", "path": p, "value": who},
			{"op": "remove", "path": p},
		}, func(cur *v1alpha1.Cutover) bool { return cur.Annotations[v1alpha1.PausedByAnnotation] == who })
		if err != nil && !errors.Is(err, errChanged) {
			return err
		}
	}
	return nil
}

// follow looks at the object for the run going: a command in crossfade.io/command, a
// deletion (abort), spec.paused. Each sends at most one command to the run per look.
func (w *worker) follow(ctx context.Context, paths cutover.Paths) error {
	// The control directory first, then the object: the runner journals a command before
	// it removes its file, so an object read after the directory showed none waiting
	// holds every command sent so far, and none is sent twice.
	waiting, err := commandWaiting(paths.Control)
	if err != nil || waiting {
		return err
	}
	c, err := w.get(ctx)
	if err != nil {
		return err
	}
	store := statusstore.New(w.r.client, w.namespace, w.name, statusstore.WithContext(ctx), statusstore.WithLogger(w.log))
	if c.DeletionTimestamp != nil {
		if mine, err := w.holding(store); err != nil || !mine {
			return err
		}
		if err := w.refuseDeleting(ctx, c); err != nil && !errors.Is(err, errChanged) {
			return err
		}
		return w.followDelete(ctx, store, paths, c)
	}
	if c.Annotations[v1alpha1.CommandAnnotation] != "" {
		err := w.runningCommand(ctx, store, paths, c)
		if errors.Is(err, errChanged) {
			return nil
		}
		return err
	}
	return w.levelPause(ctx, store, paths, c)
}

// mkStateDir creates the worker's state directory. The journal is in status; the report
// and the control files stay files here, and with no journal file nothing else creates
// the directory the engine writes them to.
func (w *worker) mkStateDir() error {
	if err := os.MkdirAll(w.stateDir, 0o755); err != nil {
		return fmt.Errorf("cutover %s/%s: state dir: %w", w.namespace, w.name, err)
	}
	return nil
}

// engineConfig is the engine's configuration for plan, acting as by, with the journal in
// the object's status (its projection, and the Events of each change, written with each
// entry) and the lock in its Lease held as this replica.
func (w *worker) engineConfig(ctx context.Context, plan *spec.Plan, by string) cutover.Config {
	r := w.r
	// The hook projects the status each append writes, and keeps the change for the
	// Events, which the journal writer (leasedStore) records once the append has landed:
	// an append refused records none. A retried append projects again: the last
	// projection is the one written.
	hook := func(obj *v1alpha1.Cutover) {
		old := obj.Status.DeepCopy()
		objectstatus.Project(obj, obj.Status.Entries(), plan, time.Now(), nil)
		seq := 0
		if n := len(obj.Status.Journal); n > 0 {
			seq = obj.Status.Journal[n-1].Seq
		}
		w.mu.Lock()
		w.pending = &pendingEvents{seq: seq, old: old, new: obj.Status.DeepCopy()}
		w.mu.Unlock()
	}
	return cutover.Config{
		Plan: plan, Levers: r.cfg.Levers, StateDir: w.stateDir, By: by,
		DNSServers: r.cfg.DNSServers, CheckInterval: r.checkInterval, PollInterval: r.pollInterval,
		Logger: w.log,
		Journals: func(name string) journal.Store {
			return leasedStore{Store: statusstore.New(r.client, w.namespace, name, statusstore.WithIdentity(r.cfg.Identity),
				statusstore.WithLeaseDuration(r.cfg.LeaseDuration), statusstore.WithStatus(hook),
				statusstore.WithContext(ctx), statusstore.WithLogger(w.log)), w: w}
		},
	}
}

// pendingEvents is the status change an append in flight writes (the status hook's), for
// the Events recorded once it lands.
type pendingEvents struct {
	seq      int
	old, new *v1alpha1.CutoverStatus
}

// leasedStore is the engine's journal store, which tells the worker when this process
// holds the Lease (a successful Acquire sets w.leased, the Release clears it), and
// records the Events of each status change once its append has landed.
type leasedStore struct {
	journal.Store
	w *worker
}

// Acquire takes the Lease through the store and, when it did, sets leased.
func (s leasedStore) Acquire(h journal.Holder) (journal.Releaser, error) {
	rel, err := s.Store.Acquire(h)
	if err != nil {
		return rel, err
	}
	s.w.leased.Store(true)
	return leasedReleaser{Releaser: rel, leased: &s.w.leased}, nil
}

// Open opens the journal through the store, with a writer that records Events.
func (s leasedStore) Open() (journal.Writer, []journal.Entry, int64, error) {
	wr, en, torn, err := s.Store.Open()
	if err != nil {
		return wr, en, torn, err
	}
	return eventWriter{Writer: wr, w: s.w}, en, torn, nil
}

// eventWriter records, after each append that landed, the Events of the status change it
// wrote: once per entry (an entry whose change was recorded already records nothing).
type eventWriter struct {
	journal.Writer
	w *worker
}

// Append appends e, then records the Events of the status it wrote.
func (ew eventWriter) Append(e journal.Entry) (journal.Entry, error) {
	out, err := ew.Writer.Append(e)
	w := ew.w
	w.mu.Lock()
	p := w.pending
	w.pending = nil
	emit := err == nil && p != nil && p.seq == out.Seq && p.seq > w.emitted
	if emit {
		w.emitted = p.seq
	}
	w.mu.Unlock()
	if emit {
		w.emit(p.old, p.new)
	}
	return out, err
}

// leasedReleaser clears leased when the Lease is given up.
type leasedReleaser struct {
	journal.Releaser
	leased *atomic.Bool
}

// Release clears leased, then gives the Lease up.
func (r leasedReleaser) Release() error {
	r.leased.Store(false)
	return r.Releaser.Release()
}

// staleAnswer is the refusal of a command a run of this process was sent and never read.
const staleAnswer = "not acted on: the run it was sent to stopped before reading it; send it again"

// autoID matches the IDs cutover.SendTo makes up (the pause and resume of spec.paused):
// nanoseconds, pid, nonce.
var autoID = regexp.MustCompile(`^[0-9]{20}-[0-9]+-[0-9a-f]+$`)

// clearStaleCommands empties the control directory of c's run before a run starts: a
// command left there was sent to a run of this process that stopped (its Lease lost, an
// error, the send landing just after it returned) before reading it, and the next run,
// whose start stamp it may carry, would act on it, perhaps hours later. A command of
// crossfade.io/command (its ID the sender's) is answered as refused, so that its sender
// sends it again if it still means it; the pause or resume of spec.paused and the abort of
// a deletion are sent again from their levels, and are only removed. One the journal
// already holds (the runner journals before it removes the file) is only removed.
func (w *worker) clearStaleCommands(ctx context.Context, c *v1alpha1.Cutover) error {
	dir := cutover.PathsFor(w.stateDir, c.Name).Control
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cutover %s/%s: control %s: %w", w.namespace, w.name, dir, err)
	}
	journaled := map[string]bool{}
	for _, e := range c.Status.Entries() {
		if e.ID != "" {
			journaled[e.ID] = true
		}
	}
	for _, de := range des {
		n := de.Name()
		if filepath.Ext(n) != ".json" || n[0] == '.' {
			continue
		}
		path := filepath.Join(dir, n)
		var cmd cutover.Command
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &cmd)
		}
		if err != nil {
			w.log.Warn("unreadable control file left by a stopped run: removed", "file", path, "err", err)
		}
		if cmd.ID != "" && !journaled[cmd.ID] && !autoID.MatchString(cmd.ID) && cmd.ID != w.deleteID() {
			w.log.Warn("command left by a stopped run, never read: refused", "command", cmd.Command, "id", cmd.ID, "by", cmd.By)
			req := v1alpha1.CommandRequest{Command: cmd.Command, ID: cmd.ID, By: cmd.By, SkipGates: cmd.SkipGates}
			if err := w.refuse(ctx, req, staleAnswer); err != nil {
				return err // the file stays: answered at the next try
			}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cutover %s/%s: remove stale command %s: %w", w.namespace, w.name, path, err)
		}
	}
	return nil
}

// commandWaiting reports whether a command is still waiting in the control directory
// for the runner to journal it.
func commandWaiting(dir string) (bool, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("control %s: %w", dir, err)
	}
	for _, de := range des {
		if n := de.Name(); filepath.Ext(n) == ".json" && n[0] != '.' {
			return true, nil
		}
	}
	return false, nil
}
