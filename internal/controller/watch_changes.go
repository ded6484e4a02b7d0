package controller

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// ObjectChanges are the objects changed since the last TakeChanges: what a controller's
// incremental reconcile re-reads (Config.Incremental).
type ObjectChanges struct {
	// Services are the Services ("namespace/name") that changed or whose EndpointSlices
	// changed, sorted.
	Services []string
	// All is true when some change is not among Services (an object of another kind),
	// or nothing was taken before: everything must be read again.
	All bool
}

// changeLog collects the objects the informers' events touched.
type changeLog struct {
	mu       sync.Mutex
	services map[string]bool
	// followed is whether every change since the last take is in services; false until
	// the first take, when nothing is known of what came before.
	followed bool
}

// touched notes obj as changed and wakes the reconciler.
func (w *Watcher) touched(obj any) {
	w.changes.add(obj)
	w.notify()
}

// all notes that more changed than the log can say: the next take reads everything.
func (l *changeLog) all() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.followed = false
}

func (l *changeLog) add(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.followed {
		// Everything is read again at the next take (or never taken, without an
		// incremental controller): nothing to note, nor to keep growing.
		return
	}
	key := ""
	switch o := obj.(type) {
	case *corev1.Service:
		key = o.Namespace + "/" + o.Name
	case *discoveryv1.EndpointSlice:
		// A slice is read for the Service its label names, and not at all without one.
		name := o.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			return
		}
		key = o.Namespace + "/" + name
	default:
		l.followed = false
		return
	}
	if l.services == nil {
		l.services = map[string]bool{}
	}
	l.services[key] = true
}

// TakeChanges returns the objects changed since the last call and forgets them. A
// controller takes them before it reads the objects, so that a change that comes while it
// reads is taken again next time.
func (w *Watcher) TakeChanges() ObjectChanges { return w.changes.take() }

func (l *changeLog) take() ObjectChanges {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := ObjectChanges{All: !l.followed}
	for k := range l.services {
		if l.followed {
			out.Services = append(out.Services, k)
		}
	}
	slices.Sort(out.Services)
	clear(l.services)
	l.followed = true
	return out
}

// Service returns the cached Service namespace/name, if any.
func (w *Watcher) Service(key string) (*corev1.Service, bool) {
	if w.lists.services == nil {
		return nil, false
	}
	obj, ok, err := w.lists.services.GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	svc, ok := obj.(*corev1.Service)
	return svc, ok
}

// Complete reports what Snapshot's complete would: every kind's objects are known.
func (w *Watcher) Complete() bool {
	for _, l := range w.typed {
		if !l.inf.HasSynced() {
			return false
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.crds {
		switch {
		case k.informer != nil:
			if !k.informer.HasSynced() {
				return false
			}
		case k.unknown != nil || !k.absent:
			return false
		}
	}
	return true
}

// FollowsServices reports whether a Service's records can be read again from the Service
// alone when it changes: Services are a source, and nothing else reads them (Istio
// Gateways select Services; the Cloud Map publisher reads them with their slices).
func (w *Watcher) FollowsServices() bool {
	if w.lists.services == nil || w.cfg.CloudMap || !slices.Contains(w.cfg.Sources, SourceService) {
		return false
	}
	return !slices.Contains(w.cfg.Sources, SourceIstioGateway) && !slices.Contains(w.cfg.Sources, SourceIstioVirtualService)
}
