package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// rewatchDelay is the pause before a watch that ended (the API server closes watches
// every few minutes, or it restarted) is started again.
const rewatchDelay = time.Second

// CutoverView is the dashboard of a Cutover object: a Recorder fed, through a Follower,
// from the journal the controller running the object keeps in its status.
type CutoverView struct {
	// Recorder is the page's state; Handler serves it.
	Recorder *Recorder
	follower *Follower
}

// NewCutoverView returns the view of c, whose plan (spec) names the cutover, its
// clusters, steps and lever; also gets every event the view shows (a terminal's
// progress), nil for none. Feed it c and every later version of it with Update.
func NewCutoverView(c *v1alpha1.Cutover, also cutover.Progress) (*CutoverView, error) {
	p, err := planOf(c)
	if err != nil {
		return nil, err
	}
	rec := NewRecorder(p.Name, p.From, p.To)
	rec.SetLever(levers.Kind(p))
	return &CutoverView{Recorder: rec, follower: NewFollower(rec, p, also)}, nil
}

// planOf is c's plan, as the controller reads it.
func planOf(c *v1alpha1.Cutover) (*spec.Plan, error) {
	p, err := c.Plan()
	if err != nil {
		return nil, fmt.Errorf("dashboard: cutover %s/%s: %w", c.Namespace, c.Name, err)
	}
	return p, nil
}

// Update feeds the entries of c's status.journal the view has not shown yet.
func (v *CutoverView) Update(c *v1alpha1.Cutover) { v.follower.Feed(c.Status.Entries()) }

// GetCutover reads the Cutover namespace/name through client, a REST client for
// crossfade.io/v1alpha1 (statusstore.NewClient's Cutovers).
func GetCutover(ctx context.Context, client rest.Interface, namespace, name string) (*v1alpha1.Cutover, error) {
	c := &v1alpha1.Cutover{}
	if err := client.Get().Namespace(namespace).Resource(v1alpha1.Resource).Name(name).Do(ctx).Into(c); err != nil {
		return nil, fmt.Errorf("cutover %s/%s: %w", namespace, name, err)
	}
	return c, nil
}

// WatchCutover calls seen with the Cutover namespace/name as it is now and with every
// later version of it, from a watch on that one object, until seen returns true (it has
// seen what it waited for), ctx ends (its error), or the object is deleted (an error
// naming it, as is a first read that fails). A watch the API server ends is started
// again from the last version seen; one whose version is too old, or that failed (the
// API server restarting), from a fresh read, retried until ctx ends. seen runs on the
// caller's goroutine.
func WatchCutover(ctx context.Context, client rest.Interface, namespace, name string, log *slog.Logger, seen func(*v1alpha1.Cutover) bool) error {
	return watchFrom(ctx, client, namespace, name, log, seen, nil)
}

// watchFrom is WatchCutover from first, the object as the caller read it and has seen
// already (nil: read it first).
func watchFrom(ctx context.Context, client rest.Interface, namespace, name string, log *slog.Logger, seen func(*v1alpha1.Cutover) bool, first *v1alpha1.Cutover) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rv, read := "", first != nil
	if read {
		rv = first.ResourceVersion
	}
	for {
		if rv == "" {
			c, err := GetCutover(ctx, client, namespace, name)
			switch {
			case err == nil:
				read = true
				if seen(c) {
					return nil
				}
				rv = c.ResourceVersion
			case !read || apierrors.IsNotFound(err) || ctx.Err() != nil:
				// Never read (a wrong name, no access) or gone: nothing to follow.
				return err
			default:
				// The API server was reachable a moment ago: keep trying until ctx ends.
				log.Warn("dashboard: read the cutover; reading again", "cutover", namespace+"/"+name, "err", err)
			}
		}
		var done bool
		next, err := rv, error(nil)
		if rv != "" {
			done, next, err = watchOnce(ctx, client, namespace, name, rv, seen)
		}
		switch {
		case done:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errDeleted):
			return fmt.Errorf("cutover %s/%s: %w", namespace, name, err)
		case apierrors.IsGone(err) || apierrors.IsResourceExpired(err):
			rv = "" // read afresh: the versions in between are gone
		case err != nil:
			log.Warn("dashboard: watch the cutover; watching again", "cutover", namespace+"/"+name, "err", err)
			rv = ""
		default:
			rv = next
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rewatchDelay):
		}
	}
}

// errDeleted is the end of a watch whose object was deleted.
var errDeleted = errors.New("deleted")

// watchOnce watches the object from resourceVersion rv until the watch ends, seen
// returns true (done), or ctx ends; next is the last version seen.
func watchOnce(ctx context.Context, client rest.Interface, namespace, name, rv string, seen func(*v1alpha1.Cutover) bool) (done bool, next string, err error) {
	opts := &metav1.ListOptions{Watch: true, ResourceVersion: rv, AllowWatchBookmarks: true,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	w, err := client.Get().Namespace(namespace).Resource(v1alpha1.Resource).VersionedParams(opts, metav1.ParameterCodec).Watch(ctx)
	if err != nil {
		return false, rv, err
	}
	defer w.Stop()
	next = rv
	for {
		select {
		case <-ctx.Done():
			return false, next, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, next, nil
			}
			switch ev.Type {
			case watch.Error:
				return false, next, apierrors.FromObject(ev.Object)
			case watch.Deleted:
				return false, next, errDeleted
			case watch.Bookmark:
				if c, ok := ev.Object.(*v1alpha1.Cutover); ok {
					next = c.ResourceVersion
				}
			case watch.Added, watch.Modified:
				c, ok := ev.Object.(*v1alpha1.Cutover)
				if !ok {
					return false, next, fmt.Errorf("watch: a %T, not a Cutover", ev.Object)
				}
				next = c.ResourceVersion
				if seen(c) {
					return true, next, nil
				}
			}
		}
	}
}

// FollowCutover serves the dashboard of the Cutover namespace/name at addr (loopback
// only, as Serve) and follows the object until ctx ends: each new journal entry in its
// status shows on the page, and on also (nil for none). It returns once the page is
// served: url is its address, view its state; wait blocks until the following has
// ended (ctx ended, or the object was deleted or could not be read) and the server has
// stopped, and returns the error that ended the following, if it was not ctx's.
func FollowCutover(ctx context.Context, client rest.Interface, namespace, name, addr string, also cutover.Progress, log *slog.Logger) (url string, view *CutoverView, wait func() error, err error) {
	c, err := GetCutover(ctx, client, namespace, name)
	if err != nil {
		return "", nil, nil, err
	}
	view, err = NewCutoverView(c, also)
	if err != nil {
		return "", nil, nil, err
	}
	// What the journal holds already shows on the page's first load.
	view.Update(c)
	ctx, cancel := context.WithCancel(ctx)
	url, waitServe, err := Serve(ctx, addr, view.Recorder.Handler())
	if err != nil {
		cancel()
		return "", nil, nil, err
	}
	followed := make(chan error, 1)
	// This goroutine owns the following; wait joins it.
	go func() {
		err := watchFrom(ctx, client, namespace, name, log, func(c *v1alpha1.Cutover) bool {
			view.Update(c)
			return false
		}, c)
		if ctx.Err() != nil {
			err = nil
		}
		followed <- err
	}()
	return url, view, func() error {
		ferr := <-followed
		cancel()
		return errors.Join(ferr, waitServe())
	}, nil
}
