package statusstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// acquireTries bounds Acquire's compare-and-swaps lost to other acquirers before it
// reports the cutover as held by whoever won.
const acquireTries = 3

// releaseTimeout bounds Release's API calls: it runs after the store's context may have
// been cancelled (a shutting-down replica), and clearing the holder lets a standby take
// over at once rather than after the lease expires.
const releaseTimeout = 10 * time.Second

// errTaken marks a renewal that found the Lease held by another (or deleted).
var errTaken = errors.New("lease taken by another holder")

// Lease is a held lock on a Cutover: its Lease, renewed by a goroutine this Lease owns
// until Release or the Store's context is cancelled. It is the journal.Releaser Acquire
// returns.
type Lease struct {
	s      *Store
	cancel context.CancelFunc
	// done is closed when the renewal goroutine has returned.
	done chan struct{}
	// lost is closed once the holder can no longer count on the Lease (see Lost).
	lost     chan struct{}
	lostOnce sync.Once
	released sync.Once

	mu sync.Mutex
	// obj is the Lease as last written by this holder: its resourceVersion is the CAS token.
	obj *coordinationv1.Lease
}

var _ journal.Releaser = (*Lease)(nil)

// Lost is closed once this holder can no longer count on the Lease, so that its runner
// stops writing: another holder took it over (after an expiry, or by force), it was
// deleted, renewals failed for two thirds of the lease duration (after which a standby
// may take it at any moment), the Store's context was cancelled (nobody renews it any
// more), or it was released. Appends through the same Store fail with *LostError from
// then on.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// isLost reports whether Lost is closed.
func (l *Lease) isLost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

// markLost closes Lost once.
func (l *Lease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// leaseDurationOf is the Lease's duration, the store's default when it records none.
func (s *Store) leaseDurationOf(l *coordinationv1.Lease) time.Duration {
	if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
		return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return s.leaseDuration
}

// heldBy returns the Lease's holder identity when it is held and not expired (its
// renewTime, or acquireTime before any renewal, plus its duration is still ahead), and ""
// when nobody holds it: released, or expired (its holder died or lost the API).
func (s *Store) heldBy(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return ""
	}
	last := l.Spec.RenewTime
	if last == nil {
		last = l.Spec.AcquireTime
	}
	if last == nil || !last.Add(s.leaseDurationOf(l)).After(s.now()) {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// lockedError names l's holder, from its HolderAnnotation (or its identity when another
// tool wrote it).
func (s *Store) lockedError(l *coordinationv1.Lease) *journal.LockedError {
	var h journal.Holder
	if err := json.Unmarshal([]byte(l.Annotations[HolderAnnotation]), &h); err != nil || h.By == "" {
		h = journal.Holder{By: *l.Spec.HolderIdentity, Cutover: s.name}
		if l.Spec.AcquireTime != nil {
			h.Since = l.Spec.AcquireTime.UTC()
		}
	}
	return &journal.LockedError{Path: "lease " + s.namespace + "/" + l.Name, Holder: h}
}

// Held returns *journal.LockedError when someone holds the Cutover's Lease (not expired),
// and nil when nobody does or there is no Lease. It takes nothing.
func (s *Store) Held() error {
	l, err := s.c.Leases.Leases(s.namespace).Get(s.ctx, LeaseName(s.name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease %s/%s of %s: read: %w", s.namespace, LeaseName(s.name), s.Where(), err)
	}
	if s.heldBy(l) == "" {
		return nil
	}
	return s.lockedError(l)
}

// Acquire takes the Cutover's Lease for h without waiting, or returns
// *journal.LockedError naming who holds it. A Lease released, or expired because its
// holder stopped renewing it, is taken over; every write is a compare-and-swap on the
// Lease's resourceVersion, so of two acquirers one wins. The store fills in h's PID, Host
// and Since. The returned *Lease renews the Lease until Release or the Store's context is
// cancelled; the caller must do one of them.
func (s *Store) Acquire(h journal.Holder) (journal.Releaser, error) {
	h.PID = os.Getpid()
	if h.Cutover == "" {
		h.Cutover = s.name
	}
	if h.Host == "" {
		h.Host, _ = os.Hostname()
	}
	if h.Since.IsZero() {
		h.Since = s.now().UTC()
	}
	holder, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("lease of %s: encode holder %s: %w", s.Where(), h, err)
	}
	leases := s.c.Leases.Leases(s.namespace)
	name := LeaseName(s.name)
	secs := int32((s.leaseDuration + time.Second - 1) / time.Second)
	take := func(l *coordinationv1.Lease) {
		now := metav1.NewMicroTime(s.now())
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[HolderAnnotation] = string(holder)
		l.Spec.HolderIdentity = &s.identity
		l.Spec.LeaseDurationSeconds = &secs
		l.Spec.AcquireTime = &now
		l.Spec.RenewTime = &now
	}
	for range acquireTries {
		cur, err := leases.Get(s.ctx, name, metav1.GetOptions{})
		var out *coordinationv1.Lease
		switch {
		case apierrors.IsNotFound(err):
			// The Lease goes with its Cutover: an owner reference needs its uid.
			c, err := s.get()
			if err != nil {
				return nil, fmt.Errorf("lease %s/%s: %w", s.namespace, name, err)
			}
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Cutover", Name: c.Name, UID: c.UID}}}}
			take(l)
			out, err = leases.Create(s.ctx, l, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lease %s/%s of %s: create: %w", s.namespace, name, s.Where(), err)
			}
		case err != nil:
			return nil, fmt.Errorf("lease %s/%s of %s: read: %w", s.namespace, name, s.Where(), err)
		case s.heldBy(cur) != "":
			return nil, s.lockedError(cur)
		default:
			prev := ""
			if cur.Spec.HolderIdentity != nil {
				prev = *cur.Spec.HolderIdentity
			}
			take(cur)
			if prev != "" {
				// An expired holder's lease taken over: a transition, as leader election counts them.
				t := int32(1)
				if cur.Spec.LeaseTransitions != nil {
					t = *cur.Spec.LeaseTransitions + 1
				}
				cur.Spec.LeaseTransitions = &t
			}
			out, err = leases.Update(s.ctx, cur, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lease %s/%s of %s: take over from %q: %w", s.namespace, name, s.Where(), prev, err)
			}
		}
		return s.hold(out), nil
	}
	// Lost every race: whoever won holds it.
	if err := s.Held(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("lease %s/%s of %s: changed under %d attempts to take it", s.namespace, name, s.Where(), acquireTries)
}

// hold starts renewing the Lease l this store just took, and makes it the one its
// writers check.
func (s *Store) hold(l *coordinationv1.Lease) *Lease {
	ctx, cancel := context.WithCancel(s.ctx)
	lease := &Lease{s: s, cancel: cancel, done: make(chan struct{}), lost: make(chan struct{}), obj: l}
	s.mu.Lock()
	s.held = lease
	s.mu.Unlock()
	go lease.renewLoop(ctx)
	return lease
}

// renewLoop renews the Lease every third of its duration until ctx is done, the Lease is
// taken, or renewals have failed for two thirds of the duration: past that, a standby may
// take it before the next renewal lands, so the holder is told (Lost) while it is still
// the only one.
func (l *Lease) renewLoop(ctx context.Context) {
	defer close(l.done)
	defer l.markLost()
	d := l.s.leaseDuration
	interval := d / 3
	t := time.NewTicker(interval)
	defer t.Stop()
	lastOK := l.s.now()
	log := l.s.log.With("lease", l.s.namespace+"/"+LeaseName(l.s.name), "journal", l.s.Where())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := l.s.now()
		err := l.renew(ctx)
		switch {
		case err == nil:
			lastOK = sent
		case errors.Is(err, errTaken):
			log.Warn("lease lost: another holder has it", "err", err)
			return
		case ctx.Err() != nil:
			return
		default:
			log.Warn("lease renewal failed", "err", err, "since", lastOK)
			if l.s.now().Sub(lastOK) >= d-interval {
				log.Error("lease not renewed for two thirds of its duration: giving it up", "duration", d)
				return
			}
		}
	}
}

// renew writes a new renewTime with the resourceVersion last written. A conflict re-reads
// the Lease: still this holder's (someone changed a label), it is retried once on the new
// version; another's, or deleted, it is errTaken.
func (l *Lease) renew(ctx context.Context) error {
	leases := l.s.c.Leases.Leases(l.s.namespace)
	l.mu.Lock()
	obj := l.obj.DeepCopy()
	l.mu.Unlock()
	for range 2 {
		now := metav1.NewMicroTime(l.s.now())
		obj.Spec.RenewTime = &now
		out, err := leases.Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			l.mu.Lock()
			l.obj = out
			l.mu.Unlock()
			return nil
		}
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("lease %s/%s: deleted: %w", l.s.namespace, obj.Name, errTaken)
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("lease %s/%s: renew: %w", l.s.namespace, obj.Name, err)
		}
		cur, err := leases.Get(ctx, obj.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("lease %s/%s: deleted: %w", l.s.namespace, obj.Name, errTaken)
		}
		if err != nil {
			return fmt.Errorf("lease %s/%s: re-read after a conflict: %w", l.s.namespace, obj.Name, err)
		}
		if !l.ours(cur) {
			return fmt.Errorf("lease %s/%s: now held by %q: %w", l.s.namespace, obj.Name, deref(cur.Spec.HolderIdentity), errTaken)
		}
		obj = cur
	}
	return fmt.Errorf("lease %s/%s: renew: changed twice in a row", l.s.namespace, obj.Name)
}

// ours reports whether cur is still this holder's: its identity and the acquire time it
// wrote (a later Acquire with the same identity is another holding).
func (l *Lease) ours(cur *coordinationv1.Lease) bool {
	l.mu.Lock()
	mine := l.obj.Spec.AcquireTime
	l.mu.Unlock()
	return deref(cur.Spec.HolderIdentity) == l.s.identity && cur.Spec.AcquireTime != nil && mine != nil && cur.Spec.AcquireTime.Equal(mine)
}

// deref is *p, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Release stops the renewal and clears the Lease's holder, if it is still this one's, so
// that a standby takes it at once. Releasing twice, or after another took the Lease,
// frees nothing of theirs.
func (l *Lease) Release() error {
	var err error
	l.released.Do(func() {
		l.cancel()
		<-l.done
		l.markLost()
		s := l.s
		s.mu.Lock()
		if s.held == l {
			s.held = nil
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), releaseTimeout)
		defer cancel()
		leases := s.c.Leases.Leases(s.namespace)
		l.mu.Lock()
		obj := l.obj.DeepCopy()
		l.mu.Unlock()
		for range acquireTries {
			if !l.ours(obj) {
				return
			}
			obj.Spec.HolderIdentity = nil
			delete(obj.Annotations, HolderAnnotation)
			_, uerr := leases.Update(ctx, obj, metav1.UpdateOptions{})
			if uerr == nil || apierrors.IsNotFound(uerr) {
				return
			}
			if !apierrors.IsConflict(uerr) {
				err = fmt.Errorf("lease %s/%s of %s: release: %w", s.namespace, obj.Name, s.Where(), uerr)
				return
			}
			cur, gerr := leases.Get(ctx, obj.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(gerr) {
				return
			}
			if gerr != nil {
				err = fmt.Errorf("lease %s/%s of %s: release: re-read: %w", s.namespace, obj.Name, s.Where(), gerr)
				return
			}
			obj = cur
		}
		err = fmt.Errorf("lease %s/%s of %s: release: changed under %d attempts", s.namespace, obj.Name, s.Where(), acquireTries)
	})
	return err
}
