package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// listGrace is how long Run waits, once every built-in kind's informer has either its
// first list or the API's refusal to list (Forbidden: the ClusterRole lacks the kind), before
// it goes on without the refused ones. The snapshot stays incomplete until they list, so
// nothing is deleted meanwhile; but the kinds that did list still publish.
const listGrace = 5 * time.Second

// discoveryFailPolls is how many polls in a row must fail to tell whether a kind is
// served before /readyz fails and a Warning event says so. At the default CRDPoll that is
// a minute: longer than an API server's restart, so that a routine one raises nothing.
const discoveryFailPolls = 3

// confirmPoll bounds the poll interval while a kind's absence is being confirmed
// (unservedPolls answers of 404 in a row): the answers are spread over 2×confirmPoll,
// longer than an API server that just restarted answers 404 for CRD groups, yet a kind
// whose CRD is truly not installed counts as absent 20 seconds after start, not
// unservedPolls×CRDPoll, and until then nothing at all is deleted.
const confirmPoll = 10 * time.Second

// Reasons of the Warning events a Watcher sends through WatchConfig.Warn.
const (
	// ReasonDiscoveryFailing: the cluster cannot say whether it serves a kind the
	// sources read, for discoveryFailPolls polls in a row.
	ReasonDiscoveryFailing = "DiscoveryFailing"
	// ReasonCannotList: the API refuses to list a kind the sources read.
	ReasonCannotList = "CannotList"
)

// listState follows one informer's list and watch errors, caught by client-go's watch
// error handler, so that Synced can say why the informer has not listed and Run need not
// wait for it forever.
type listState struct {
	// resource names what is listed as RBAC does: "services",
	// "dnsendpoints.externaldns.k8s.io".
	resource string
	// hint says what to grant when the list is forbidden.
	hint string
	inf  cache.SharedIndexInformer

	mu       sync.Mutex
	err      error     // the last list or watch error
	loggedAs string    // the class of error last logged, so that retries do not log again
	loggedAt time.Time // when it was logged
}

// relogAfter is how long an error of the class last logged stays unlogged: the same
// failure an hour later is news again.
const relogAfter = 10 * time.Minute

// track makes inf report its errors to a new listState.
func (w *Watcher) track(resource, hint string, inf cache.SharedIndexInformer) *listState {
	l := &listState{resource: resource, hint: hint, inf: inf}
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		l.observe(w.log, err)
	})
	return l
}

// observe records err, and logs it unless an error of its class was the last logged:
// the reflector retries with backoff, and every retry would log the same refusal.
func (l *listState) observe(log *slog.Logger, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return // a watch closed as watches do; the reflector resumes it
	}
	class := string(apierrors.ReasonForError(err))
	if class == "" {
		class = "transport"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
	if l.loggedAs == class && time.Since(l.loggedAt) < relogAfter {
		return
	}
	l.loggedAs, l.loggedAt = class, time.Now()
	if l.inf.HasSynced() {
		log.Warn("watch failed: retrying; the cache keeps what it last saw", "resource", l.resource, "err", err)
		return
	}
	log.Error("cannot list: retrying; no record is deleted until it lists", "resource", l.resource, "err", err)
}

// lastErr returns the last list or watch error, nil when none.
func (l *listState) lastErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// refused reports whether the informer has not listed because the API refused it, an
// answer retrying alone does not change (unlike a connection error or a timeout).
func (l *listState) refused() bool {
	err := l.lastErr()
	return !l.inf.HasSynced() && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err))
}

// notSyncedReasons joins why each of ls has no full list yet. ls was taken a moment
// ago: an informer that has synced since has no reason, and is left out.
func notSyncedReasons(ls []*listState) string {
	var why []string
	for _, l := range ls {
		if err := l.notSynced(); err != nil {
			why = append(why, err.Error())
		}
	}
	return strings.Join(why, "; ")
}

// notSynced returns why the informer has no full list yet, nil when it has.
func (l *listState) notSynced() error {
	if l.inf.HasSynced() {
		return nil
	}
	err := l.lastErr()
	if err == nil {
		return fmt.Errorf("%s not listed yet", l.resource)
	}
	msg := err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		msg = st.Status().Message
	}
	if reason := apierrors.ReasonForError(err); reason != "" {
		msg = strings.ToLower(string(reason)) + ": " + msg
	}
	if apierrors.IsForbidden(err) && l.hint != "" {
		msg += " (" + l.hint + ")"
	}
	return fmt.Errorf("cannot list %s: %s", l.resource, msg)
}

// forbiddenHint says what to grant when listing resource is forbidden.
func forbiddenHint(resource string, cloudMap bool) string {
	h := "the ClusterRole lacks list/watch on " + resource
	if cloudMap && (resource == "services" || resource == "endpointslices") {
		h += "; with --cloudmap the controller reads Services and EndpointSlices whatever --source says"
	}
	return h
}

// waitTyped waits until every built-in kind's informer has its first list, or until those
// that have not were refused by the API for listGrace in a row; it fails only when ctx
// ends first.
func (w *Watcher) waitTyped(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var since time.Time // when every informer not listed had last been refused
	for {
		var pending, refused []*listState
		for _, l := range w.typed {
			if l.inf.HasSynced() {
				continue
			}
			pending = append(pending, l)
			if l.refused() {
				refused = append(refused, l)
			}
		}
		switch {
		case len(pending) == 0:
			return nil
		case len(refused) < len(pending):
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= listGrace:
			msg := notSyncedReasons(refused)
			w.log.Error("going on without kinds the API refuses to list: their records are published once they list, and no record is deleted until then", "why", msg)
			w.warn(ReasonCannotList, msg+": no record is deleted until they list")
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("watch: caches not synced (%s): %w", notSyncedReasons(pending), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// warn sends a Warning event through WatchConfig.Warn, if set.
func (w *Watcher) warn(reason, message string) {
	if w.cfg.Warn != nil {
		w.cfg.Warn(reason, message)
	}
}
