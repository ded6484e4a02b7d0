package controller

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// TestListStateLogsOncePerClass: the reflector retries a refused list with backoff and
// calls the watch error handler at every retry; the refusal is logged once, a different
// failure is logged again, and watch closes are not failures at all. Synced's message
// names the resource, the reason and what to grant.
func TestListStateLogsOncePerClass(t *testing.T) {
	forbidden := fmt.Errorf("failed to list *v1.Service: %w",
		apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New(`User "x" cannot list resource "services"`)))
	refused := fmt.Errorf("Get \"https://127.0.0.1:1/api/v1/services\": %w", syscall.ECONNREFUSED)
	tests := []struct {
		name    string
		errs    []error
		logged  int
		synced  string // Synced's message after errs, "" for "not listed yet"
		refused bool
	}{
		{name: "one refusal retried", errs: []error{forbidden, forbidden, forbidden}, logged: 1,
			synced: "cannot list services: forbidden: services is forbidden: User \"x\" cannot list resource \"services\" (the ClusterRole lacks list/watch on services; with --cloudmap", refused: true},
		{name: "refusal then connection refused", errs: []error{forbidden, refused, refused}, logged: 2,
			synced: "cannot list services: " + refused.Error()},
		{name: "watch closes", errs: []error{io.EOF, io.ErrUnexpectedEOF}, logged: 0, synced: "services not listed yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := &Watcher{log: slog.New(slog.NewTextHandler(&buf, nil))}
			inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Service{}, 0, cache.Indexers{}) // never run: never synced
			l := w.track("services", forbiddenHint("services", true), inf)
			for _, err := range tt.errs {
				l.observe(w.log, err)
			}
			if got := strings.Count(buf.String(), "\n"); got != tt.logged {
				t.Errorf("logged %d lines, want %d:\n%s", got, tt.logged, buf.String())
			}
			if got := l.notSynced().Error(); !strings.HasPrefix(got, tt.synced) {
				t.Errorf("notSynced = %q, want it to begin %q", got, tt.synced)
			}
			if got := l.refused(); got != tt.refused {
				t.Errorf("refused = %v, want %v", got, tt.refused)
			}
		})
	}
}

// TestNotSyncedReasonsSkipsSynced: the informers found pending a moment ago may have
// synced since; joining their reasons leaves those out rather than calling Error on nil
// (which crashed a controller stopped just as its caches synced).
func TestNotSyncedReasonsSkipsSynced(t *testing.T) {
	w := &Watcher{log: slog.New(slog.DiscardHandler)}
	never := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})
	synced := syncedInformer{cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Service{}, 0, cache.Indexers{})}
	ls := []*listState{w.track("services", "", synced), w.track("pods", "", never)}
	if got := notSyncedReasons(ls); got != "pods not listed yet" {
		t.Errorf("notSyncedReasons = %q, want only the unsynced informer's reason", got)
	}
}

// syncedInformer is an informer that has synced.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }
