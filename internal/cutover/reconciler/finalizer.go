package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
)

// DeleteBy is who the abort of a Cutover deleted mid-run is journaled as.
const DeleteBy = "kubectl delete (finalizer)"

// deleteID is the ID of the abort sent for a deleted Cutover: one per object, so that a
// second look (or a takeover replica) finds it journaled, or waiting, and sends none.
func (w *worker) deleteID() string { return "delete-" + string(w.uid) }

// hasFinalizer reports whether c carries v1alpha1.Finalizer.
func hasFinalizer(c *v1alpha1.Cutover) bool { return slices.Contains(c.Finalizers, v1alpha1.Finalizer) }

// setFinalizers writes c's finalizers as fins, in a JSON patch that tests c's
// resourceVersion: a change since c was read is errChanged.
func (w *worker) setFinalizers(ctx context.Context, c *v1alpha1.Cutover, fins []string, what string) error {
	ops := []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": c.ResourceVersion}}
	if len(fins) == 0 {
		ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/finalizers"})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/finalizers", "value": fins})
	}
	return w.jsonPatch(ctx, what, ops, func(cur *v1alpha1.Cutover) bool { return cur.ResourceVersion == c.ResourceVersion })
}

// addFinalizer adds v1alpha1.Finalizer to c, before its run writes anything: a Cutover
// deleted mid-run is then aborted before it goes.
func (w *worker) addFinalizer(ctx context.Context, c *v1alpha1.Cutover) error {
	if err := w.setFinalizers(ctx, c, append(slices.Clone(c.Finalizers), v1alpha1.Finalizer), "add finalizer "+v1alpha1.Finalizer); err != nil {
		return err
	}
	w.log.Info("finalizer added", "finalizer", v1alpha1.Finalizer)
	return nil
}

// removeFinalizer removes v1alpha1.Finalizer from c, saying why in an Event.
func (w *worker) removeFinalizer(ctx context.Context, c *v1alpha1.Cutover, why string) error {
	// Once the patch lands the API server deletes the object, and the manager, seeing
	// it gone, stops this worker: possibly before the patch's answer is read. The
	// removal and its Event are seen through, not cut off by that stop.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	fins := slices.DeleteFunc(slices.Clone(c.Finalizers), func(f string) bool { return f == v1alpha1.Finalizer })
	if err := w.setFinalizers(ctx, c, fins, "remove finalizer "+v1alpha1.Finalizer); err != nil {
		return err
	}
	w.log.Info("deleted cutover: finalizer removed", "finalizer", v1alpha1.Finalizer, "why", why)
	w.record(event{corev1.EventTypeNormal, ReasonFinalizerRemoved, why})
	return nil
}

// deleting handles a Cutover with a deletionTimestamp. One that has not started, or has
// ended, loses the finalizer at once (a Completed one keeps its weights, and the zone its
// authority record, until a release). One started and unended is aborted first: run
// reports true when a run (whose pause follower sends the abort) must go on for that;
// one nobody can run any more (Failed mid-run) is aborted here with the engine's Abort,
// and, when that cannot run, keeps its finalizer for a person (Stalled, saying how).
func (w *worker) deleting(ctx context.Context, c *v1alpha1.Cutover) (d time.Duration, run bool, err error) {
	if err := w.refuseDeleting(ctx, c); err != nil {
		return 0, false, err
	}
	if !hasFinalizer(c) {
		return idle, false, nil // the API server deletes it (another finalizer may keep it)
	}
	rep := cutover.BuildReport(c.Name, c.Status.Entries())
	switch {
	case rep.NotStarted:
		d, err := again(idle, w.removeFinalizer(ctx, c, "deleted before its first step: nothing to roll back"))
		return d, false, err
	case rep.Outcome == "completed":
		msg := fmt.Sprintf("deleted when Completed: the weights stay as the last step wrote them, and the zone's authority record stays; release it before deleting it (kubectl crossfade release %s); after, only `crossfade cutover release FILE --force` from a CLI, which skips the publishers' confirmation", c.Name)
		w.log.Warn(msg)
		d, err := again(idle, w.removeFinalizer(ctx, c, msg))
		return d, false, err
	case rep.Outcome != "":
		d, err := again(idle, w.removeFinalizer(ctx, c, "deleted when "+string(orPhase(c.Status.Phase))+": the weights are back at the start"))
		return d, false, err
	}
	// Started and unended: abort it, then let it go once RolledBack.
	store := statusstore.New(w.r.client, w.namespace, w.name, statusstore.WithContext(ctx), statusstore.WithLogger(w.log))
	if err := store.Held(); err != nil {
		var locked *journal.LockedError
		if errors.As(err, &locked) {
			// Another replica runs it: its follower sends the abort.
			return w.r.cfg.LeaseDuration / 2, false, nil
		}
		return 0, false, err
	}
	if c.Status.Phase != v1alpha1.PhaseFailed {
		return 0, true, nil
	}
	if wait := time.Until(w.abortRetryAt); wait > 0 {
		// An abort that failed journals what it tried, and each entry pokes the worker:
		// without this it would try again at once, and again, filling the journal.
		return wait, false, nil
	}
	// Failed mid-run: nobody runs it; roll it back here.
	w.log.Warn("deleted mid-run, its run stopped (Failed): aborting it before the object goes")
	w.record(event{corev1.EventTypeWarning, ReasonFinalizerAborting, "deleted mid-run (Failed): aborting it, back to the start weights, before the object goes"})
	if _, aerr := w.abortIdle(ctx, c, DeleteBy); aerr != nil {
		after, gerr := w.get(ctx)
		if gerr != nil {
			return 0, false, errors.Join(aerr, gerr)
		}
		if rep := cutover.BuildReport(c.Name, after.Status.Entries()); rep.Outcome != "" {
			return 0, false, nil // ended all the same: the next look lets it go
		}
		stuckErr := fmt.Errorf("deleted mid-run, and its abort cannot run: %w; the finalizer %s stays: check the weights in the zone, then remove it by hand: kubectl patch cutover %s -n %s --type json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'",
			aerr, v1alpha1.Finalizer, c.Name, c.Namespace)
		w.record(event{corev1.EventTypeWarning, ReasonFinalizerStuck, stuckErr.Error()})
		w.abortFailures++
		backoff := min(retryMin<<min(w.abortFailures-1, 10), retryMax)
		w.abortRetryAt = time.Now().Add(backoff)
		w.log.Error("deleted mid-run: abort failed; the finalizer stays, trying again", "err", aerr, "retryIn", backoff, "failuresInARow", w.abortFailures)
		plan, _ := after.Plan()
		if werr := w.writeStatus(ctx, after, after.Status.Entries(), plan, stuckErr); werr != nil && !errors.Is(werr, errChanged) {
			return 0, false, errors.Join(stuckErr, werr)
		}
		return backoff, false, nil
	}
	w.abortFailures, w.abortRetryAt = 0, time.Time{}
	return 0, false, nil
}

// refuseDeleting takes the command c carries, if any, and refuses it: a Cutover being
// deleted is aborted (or, ended, let go) by its finalizer, and nothing else is done with
// it; its sender is told so rather than left waiting. Of the replicas that read it, the
// one whose take lands answers it.
func (w *worker) refuseDeleting(ctx context.Context, c *v1alpha1.Cutover) error {
	if c.Annotations[v1alpha1.CommandAnnotation] == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	req, ok, err := w.takeCommand(ctx, c)
	if err != nil || !ok {
		return err
	}
	what := "it goes once its run is rolled back to the start weights"
	if rep := cutover.BuildReport(c.Name, c.Status.Entries()); rep.NotStarted || rep.Outcome != "" {
		what = "it goes as it is"
	}
	return w.refuse(ctx, req, "the Cutover is being deleted: "+what+"; nothing else is done with it")
}

// followDelete sends the run an abort, by DeleteBy, when its Cutover has been deleted
// while it runs; once per object (deleteID), and not while it already rolls back.
func (w *worker) followDelete(ctx context.Context, store *statusstore.Store, paths cutover.Paths, c *v1alpha1.Cutover) error {
	if c.DeletionTimestamp == nil || !hasFinalizer(c) {
		return nil
	}
	en := c.Status.Entries()
	rep := cutover.BuildReport(c.Name, en)
	if rep.NotStarted || rep.Outcome != "" || rep.RollingBack {
		return nil
	}
	for _, e := range en {
		if e.ID == w.deleteID() {
			return nil
		}
	}
	if mine, err := w.holding(store); err != nil || !mine {
		return err
	}
	if _, err := cutover.SendTo(store, paths, cutover.Command{ID: w.deleteID(), Command: cutover.CommandAbort, By: DeleteBy}); err != nil {
		return fmt.Errorf("cutover %s/%s: deleted mid-run: send abort: %w", w.namespace, w.name, err)
	}
	w.log.Warn("deleted mid-run: abort sent to the run; the object goes once it has rolled back")
	w.record(event{corev1.EventTypeWarning, ReasonFinalizerAborting, "deleted mid-run: aborting it, back to the start weights, before the object goes"})
	return nil
}

// abortIdle rolls back, with the engine's Abort, a cutover that started and that nobody
// runs (Failed mid-run), journaling it by by.
func (w *worker) abortIdle(ctx context.Context, c *v1alpha1.Cutover, by string) (*cutover.Report, error) {
	plan, err := c.Plan()
	if err != nil {
		return nil, err
	}
	if err := w.mkStateDir(); err != nil {
		return nil, err
	}
	rep, err := cutover.Abort(ctx, w.engineConfig(ctx, plan, by))
	if errors.Is(err, cutover.ErrAborted) {
		// What an abort that rolled back returns: done.
		err = nil
	}
	return rep, err
}
