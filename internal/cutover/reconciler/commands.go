package reconciler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/objectstatus"
)

// answerTimeout bounds taking, sending and answering one command.
const answerTimeout = 30 * time.Second

// CommandBy is who a command of crossfade.io/command that names nobody (no "by") is
// journaled as.
const CommandBy = "kubectl (crossfade.io/command)"

// jsonPatch sends ops, whose first is a test of what the caller read, to the object as a
// JSON patch. A conflict, or a refusal (422) of an object that no longer holds what was
// read (asRead says whether it does), is errChanged: the caller looks again. The API
// server's answer to a failed test op says no more than "an error in our request", so
// the object is read again to tell that from a patch refused for another reason, which
// is an error (looking again at once would loop).
func (w *worker) jsonPatch(ctx context.Context, what string, ops []map[string]any, asRead func(*v1alpha1.Cutover) bool) error {
	body, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("cutover %s/%s: %s: encode patch: %w", w.namespace, w.name, what, err)
	}
	err = w.r.client.Cutovers.Patch(types.JSONPatchType).Namespace(w.namespace).Resource(v1alpha1.Resource).Name(w.name).Body(body).Do(ctx).Error()
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return errChanged
	case apierrors.IsInvalid(err):
		cur, gerr := w.get(ctx)
		if errors.Is(gerr, fs.ErrNotExist) || gerr == nil && !asRead(cur) {
			w.log.Info("cutover changed before the patch: looking again", "patch", what)
			return errChanged
		}
		if gerr != nil {
			return errors.Join(fmt.Errorf("cutover %s/%s: %s: %w", w.namespace, w.name, what, err), gerr)
		}
	}
	return fmt.Errorf("cutover %s/%s: %s: %w", w.namespace, w.name, what, err)
}

// take takes the command raw from the object's CommandAnnotation: a JSON patch that
// tests the annotation still holds exactly raw, then removes it, so that of the
// replicas that read it one takes it, once. It reports whether this one did.
func (w *worker) take(ctx context.Context, raw string) (bool, error) {
	p := v1alpha1.AnnotationPath(v1alpha1.CommandAnnotation)
	err := w.jsonPatch(ctx, "take "+v1alpha1.CommandAnnotation, []map[string]any{
		{"op": "test", "path": p, "value": raw},
		{"op": "remove", "path": p},
	}, func(c *v1alpha1.Cutover) bool { return c.Annotations[v1alpha1.CommandAnnotation] == raw })
	if errors.Is(err, errChanged) {
		return false, nil
	}
	return err == nil, err
}

// answer writes res in the object's ResultAnnotation, within answerTimeout of the call
// whatever the state of ctx: a command taken is answered, even after a shutdown began.
func (w *worker) answer(ctx context.Context, res v1alpha1.CommandResult) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	if res.At.IsZero() {
		res.At = time.Now().UTC()
	}
	v, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("cutover %s/%s: encode %s: %w", w.namespace, w.name, v1alpha1.ResultAnnotation, err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.ResultAnnotation: string(v)}}})
	if err != nil {
		return err
	}
	err = w.r.client.Cutovers.Patch(types.MergePatchType).Namespace(w.namespace).Resource(v1alpha1.Resource).Name(w.name).Body(patch).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("cutover %s/%s: write %s for command %s (id %s): %w", w.namespace, w.name, v1alpha1.ResultAnnotation, res.Command, res.ID, err)
	}
	return nil
}

// refuse answers req as refused (why), with a Warning Event and a log line.
func (w *worker) refuse(ctx context.Context, req v1alpha1.CommandRequest, why string) error {
	w.log.Warn("command refused", "command", req.Command, "id", req.ID, "by", req.By, "why", why)
	w.record(event{corev1.EventTypeWarning, ReasonCommandRefused, fmt.Sprintf("%s by %s (id %s) refused: %s", orUnknown(req.Command), req.By, req.ID, why)})
	return w.answer(ctx, v1alpha1.CommandResult{ID: req.ID, Command: req.Command, By: req.By, Refused: why})
}

// acted answers req as acted on (detail), with a Normal Event and a log line.
func (w *worker) acted(ctx context.Context, req v1alpha1.CommandRequest, detail string) error {
	w.log.Info("command taken", "command", req.Command, "id", req.ID, "by", req.By, "detail", detail)
	w.record(event{corev1.EventTypeNormal, ReasonCommandTaken, fmt.Sprintf("%s by %s (id %s): %s", req.Command, req.By, req.ID, detail)})
	return w.answer(ctx, v1alpha1.CommandResult{ID: req.ID, Command: req.Command, By: req.By, Detail: detail})
}

// orUnknown is s, or "command" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "command"
	}
	return s
}

// takeCommand takes the command c carries, if any: ok when this replica took a valid
// one (its ID and By filled in). One that does not parse is taken and refused here.
func (w *worker) takeCommand(ctx context.Context, c *v1alpha1.Cutover) (req v1alpha1.CommandRequest, ok bool, err error) {
	raw := c.Annotations[v1alpha1.CommandAnnotation]
	if raw == "" {
		return req, false, nil
	}
	taken, err := w.take(ctx, raw)
	if err != nil || !taken {
		return req, false, err
	}
	req, perr := v1alpha1.ParseCommandRequest(raw)
	if perr != nil {
		// Answer under whatever id and by it carries, so that its sender sees why.
		var loose v1alpha1.CommandRequest
		_ = json.Unmarshal([]byte(raw), &loose)
		loose.By = byOf(loose.By)
		return req, false, w.refuse(ctx, loose, perr.Error())
	}
	if req.ID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		req.ID = "c-" + hex.EncodeToString(b[:])
	}
	req.By = byOf(req.By)
	return req, true, nil
}

// byOf is by, or CommandBy when empty.
func byOf(by string) string {
	if by == "" {
		return CommandBy
	}
	return by
}

// runBy is who this replica's runs are by: the journal.Holder its Leases name.
func (w *worker) runBy() string { return "controller/" + w.r.cfg.Identity }

// holding reports whether this process holds the cutover's Lease: its run is going, and
// it alone acts on the run's commands. The Lease names the replica (the pod), so a Lease
// of the same name is this process's only while its own run says it acquired it
// (w.leased): after a container restart in the same pod the dead process's Lease names
// this replica too, until it expires.
func (w *worker) holding(store *statusstore.Store) (bool, error) {
	if !w.leased.Load() {
		return false, nil
	}
	err := store.Held()
	var locked *journal.LockedError
	if errors.As(err, &locked) {
		return locked.Holder.By == w.runBy(), nil
	}
	return false, err
}

// runningCommand acts on the command c carries while this replica's run of it is going
// (it holds the Lease): a promote or an abort goes to the run through its control
// directory with the command's ID and By, which the engine journals; a release waits
// for the end.
func (w *worker) runningCommand(ctx context.Context, store *statusstore.Store, paths cutover.Paths, c *v1alpha1.Cutover) error {
	if c.Annotations[v1alpha1.CommandAnnotation] == "" {
		return nil
	}
	if c.Status.Phase.Final() {
		// The run has ended and is about to return: its worker takes the command once it
		// has (idleCommand), where a release of an ended cutover runs.
		return nil
	}
	if mine, err := w.holding(store); err != nil || !mine {
		return err
	}
	// Once taken, the command is answered even when the run ends meanwhile (which stops
	// the follower's context): a sender is never left waiting for a command taken.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	req, ok, err := w.takeCommand(ctx, c)
	if err != nil || !ok {
		return err
	}
	if req.Command == v1alpha1.RequestRelease {
		return w.refuse(ctx, req, fmt.Sprintf("it is running (phase %s): release hands the weights of an ended cutover (Completed or RolledBack) back to the publishers", orPhase(c.Status.Phase)))
	}
	if req.Command == v1alpha1.RequestResume {
		if why := resumeRefused(c); why != "" {
			return w.refuse(ctx, req, why)
		}
	}
	sent, err := cutover.SendTo(store, paths, cutover.Command{ID: req.ID, Command: req.Command, By: req.By, SkipGates: req.SkipGates})
	var refused *cutover.CommandRefusedError
	switch {
	case errors.As(err, &refused):
		return w.refuse(ctx, req, refused.Why)
	case err != nil:
		// Taken and not sent: say so, rather than leave its sender waiting.
		return errors.Join(err, w.refuse(ctx, req, "not sent to the run: "+err.Error()))
	}
	w.log.Info("command sent to the run", "command", req.Command, "id", sent.ID, "by", req.By)
	w.record(event{corev1.EventTypeNormal, ReasonCommandTaken, fmt.Sprintf("%s by %s (id %s): sent to the run", cmdDetail(req), req.By, req.ID)})
	return nil
}

// resumeRefused says why a resume command cannot go to c's run, "" when it can: the
// command lifts a pause on drift only. A pause of spec.paused is lifted by clearing it
// (a resume sent beside it would be undone by the level at once), and a run that is not
// paused has nothing to resume.
func resumeRefused(c *v1alpha1.Cutover) string {
	if c.Spec.Paused {
		return "spec.paused is true: the run stays paused while it is; clear it (kubectl crossfade resume " + c.Name + ", or kubectl patch … -p '{\"spec\":{\"paused\":false}}')"
	}
	view := c.DeepCopy()
	objectstatus.Project(view, c.Status.Entries(), nil, time.Now(), nil)
	if view.Status.Phase != v1alpha1.PhasePaused || !meta.IsStatusConditionTrue(view.Status.Conditions, v1alpha1.ConditionStalled) {
		return fmt.Sprintf("the run is not paused on drift (phase %s): the resume command lifts a pause on drift only; a pause of spec.paused is lifted by clearing it", orPhase(view.Status.Phase))
	}
	return ""
}

// cmdDetail names req as the journal does.
func cmdDetail(req v1alpha1.CommandRequest) string {
	if req.SkipGates {
		return req.Command + " --skip-gates"
	}
	return req.Command
}

// orPhase is p, or Pending when the status has none yet.
func orPhase(p v1alpha1.Phase) v1alpha1.Phase {
	if p == "" {
		return v1alpha1.PhasePending
	}
	return p
}

// idleCommand acts on the command c carries when no run of it is going: the cutover has
// not started, or has ended (Completed, RolledBack, Failed), and nobody holds its Lease.
// A release of an ended one runs here (any replica: the take decides which); an abort of
// one that started and stopped unended (Failed mid-run) rolls it back with the engine's
// Abort; anything else is refused, saying why. Commands for a cutover being run are left
// for its runner. held reports a command left because someone holds the Lease (a run
// ending elsewhere, or a holder that died): the worker looks again once it may expire.
func (w *worker) idleCommand(ctx context.Context, c *v1alpha1.Cutover) (held bool, err error) {
	if c.Annotations[v1alpha1.CommandAnnotation] == "" {
		return false, nil
	}
	rep := cutover.BuildReport(c.Name, c.Status.Entries())
	if !rep.NotStarted && !c.Status.Phase.Final() {
		return false, nil // a run goes, or will at once: its holder takes it
	}
	store := statusstore.New(w.r.client, w.namespace, w.name, statusstore.WithContext(ctx), statusstore.WithLogger(w.log))
	if err := store.Held(); err != nil {
		var locked *journal.LockedError
		if errors.As(err, &locked) {
			return true, nil // someone holds it: theirs to take, or it expires
		}
		return false, err
	}
	// Once taken, the command is answered even when the worker stops meanwhile (a
	// shutdown, the object deleted): a sender is never left waiting for a command taken.
	// The release or abort itself runs on the worker's ctx; the take and the answer do
	// not end with it (answer bounds its own write by answerTimeout).
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	req, ok, err := w.takeCommand(tctx, c)
	if err != nil || !ok {
		return false, err
	}
	return false, w.idleAct(ctx, context.WithoutCancel(ctx), c, rep, req)
}

// idleAct acts on req, taken from c, whose run does not go (rep is its journal's): a
// release or abort runs on ctx, the answer is written on actx.
func (w *worker) idleAct(ctx, actx context.Context, c *v1alpha1.Cutover, rep *cutover.Report, req v1alpha1.CommandRequest) error {
	phase := orPhase(c.Status.Phase)
	switch {
	case rep.NotStarted:
		why := "it has not started: nothing to " + req.Command + " (delete the Cutover, or set spec.paused, to keep it from starting)"
		if req.Command == v1alpha1.RequestPromote {
			why = "it has not started: a promote moves a running cutover on (a promote left for it would turn its start into an instant flip)"
		}
		return w.refuse(actx, req, why)
	case rep.Outcome != "" && req.Command == v1alpha1.RequestRelease:
		return w.release(ctx, actx, c, req)
	case rep.Outcome != "":
		return w.refuse(actx, req, fmt.Sprintf("it has ended (%s, phase %s)", rep.Outcome, phase))
	case req.Command == v1alpha1.RequestAbort:
		// Failed mid-run: nobody runs it, the traffic where the run stopped. The engine's
		// abort rolls it back to the start weights from the journal.
		if _, err := w.abortIdle(ctx, c, req.By); err != nil {
			return w.refuse(actx, req, "abort failed: "+err.Error())
		}
		return w.acted(actx, req, "rolled back: nobody was running it (phase "+string(phase)+"), so the controller ran the abort itself")
	case req.Command == v1alpha1.RequestRelease:
		return w.refuse(actx, req, fmt.Sprintf("it is unfinished (phase %s, stopped mid-run): abort it first, or `crossfade cutover release %s --force` from a CLI", phase, c.Name))
	default:
		return w.refuse(actx, req, fmt.Sprintf("nobody runs it (phase %s, stopped mid-run): a promote moves a running cutover on; abort it, or fix the cause and apply a new Cutover", phase))
	}
}

// release runs the engine's Release for req on an ended cutover and answers with what it
// did (the records deleted) or why it refused: the release runs on ctx, the answer is
// written on actx.
func (w *worker) release(ctx, actx context.Context, c *v1alpha1.Cutover, req v1alpha1.CommandRequest) error {
	plan, err := c.Plan()
	if err != nil {
		return w.refuse(actx, req, err.Error())
	}
	if err := w.mkStateDir(); err != nil {
		return w.refuse(actx, req, err.Error())
	}
	rel, err := cutover.Release(ctx, w.engineConfig(ctx, plan, req.By), cutover.ReleaseOptions{Force: req.Force, Wait: 0})
	var refused *lever.ReleaseRefusedError
	switch {
	case errors.As(err, &refused):
		return w.refuse(actx, req, refused.Error())
	case err != nil:
		return w.refuse(actx, req, "release failed: "+err.Error())
	}
	detail := fmt.Sprintf("released: %d authority records deleted", rel.Records)
	if len(rel.TakenOver) > 0 || len(rel.Changes) > 0 || len(rel.Gone) > 0 || len(rel.Unconfirmed) > 0 {
		detail += fmt.Sprintf(" (forced: %d taken over, %d weights to change, %d sets gone, %d unconfirmed)", len(rel.TakenOver), len(rel.Changes), len(rel.Gone), len(rel.Unconfirmed))
	}
	return w.acted(actx, req, detail)
}
