package statusstore

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// failAfter bounds the waits for what the lease does in its own time (a renewal, an
// expiry): a failure bound for a hung test, not a measure of speed.
const failAfter = 60 * time.Second

// waitAcquire retries s.Acquire(h) until it succeeds, failing the test after failAfter;
// each refusal must be a *journal.LockedError.
func waitAcquire(t *testing.T, s *Store, h journal.Holder) journal.Releaser {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		rel, err := s.Acquire(h)
		if err == nil {
			return rel
		}
		var locked *journal.LockedError
		if !errors.As(err, &locked) {
			t.Fatalf("Acquire for %s: %v, want it taken or *journal.LockedError", h.By, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Acquire for %s still refused after %s: %v", h.By, failAfter, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitClosed waits for ch to close, failing the test after failAfter.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(failAfter):
		t.Fatalf("%s: not after %s", what, failAfter)
	}
}

// TestLease: the lock is a Lease owned by the Cutover: one holder at a time, the refused
// one told who holds it; released, it is taken at once; kept renewed, it outlives its
// duration; a holder that stops renewing (dead) is replaced by a standby once the Lease
// expires; and a holder whose Lease is taken from it is told (Lost), and its store stops
// appending and does not release the new holder's Lease.
func TestLease(t *testing.T) {
	e := start(t)
	cs := e.kc.Clientset(t)
	leases := cs.CoordinationV1().Leases(namespace)

	t.Run("one holder, then the next", func(t *testing.T) {
		c := e.create(t, "one")
		a := New(e.c, namespace, "one")
		b := New(e.c, namespace, "one")
		if err := a.Held(); err != nil {
			t.Fatalf("Held before any Acquire: %v", err)
		}
		rel, err := a.Acquire(journal.Holder{By: "alice@a", Cutover: "one"})
		if err != nil {
			t.Fatal(err)
		}
		var locked *journal.LockedError
		if r, err := b.Acquire(journal.Holder{By: "bob@b", Cutover: "one"}); !errors.As(err, &locked) || r != nil ||
			locked.Holder.By != "alice@a" || locked.Holder.PID != os.Getpid() || locked.Holder.Since.IsZero() || !strings.Contains(err.Error(), "crossfade-cutover-one") {
			t.Fatalf("second Acquire: %v, %v, want *journal.LockedError naming alice@a, this pid and the lease", r, err)
		}
		if err := b.Held(); !errors.As(err, &locked) || locked.Holder.By != "alice@a" {
			t.Fatalf("Held while held: %v, want alice@a", err)
		}
		l, err := leases.Get(t.Context(), "crossfade-cutover-one", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if refs := l.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Cutover" || refs[0].UID != c.UID || refs[0].APIVersion != "crossfade.io/v1alpha1" {
			t.Errorf("lease owner references %+v, want the Cutover (uid %s)", refs, c.UID)
		}
		if err := rel.Release(); err != nil {
			t.Fatal(err)
		}
		if err := b.Held(); err != nil {
			t.Fatalf("Held after Release: %v", err)
		}
		relB, err := b.Acquire(journal.Holder{By: "bob@b", Cutover: "one"})
		if err != nil {
			t.Fatalf("Acquire after Release: %v", err)
		}
		defer relB.Release()
		// A second Release of alice's frees nothing of bob's.
		if err := rel.Release(); err != nil {
			t.Fatal(err)
		}
		if err := a.Held(); !errors.As(err, &locked) || locked.Holder.By != "bob@b" {
			t.Fatalf("Held after alice released twice: %v, want bob@b", err)
		}
	})

	t.Run("missing Cutover", func(t *testing.T) {
		if _, err := New(e.c, namespace, "nothere").Acquire(journal.Holder{By: "alice@a"}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "default/nothere") {
			t.Fatalf("Acquire for a missing Cutover: %v, want fs.ErrNotExist naming it", err)
		}
	})

	t.Run("renewed past its duration", func(t *testing.T) {
		e.create(t, "renew")
		a := New(e.c, namespace, "renew", WithLeaseDuration(2*time.Second))
		rel, err := a.Acquire(journal.Holder{By: "alice@a"})
		if err != nil {
			t.Fatal(err)
		}
		defer rel.Release()
		// Wait until the renewals carried the lease past the expiry its acquisition alone
		// would have had; then it is still alice's.
		l, err := leases.Get(t.Context(), "crossfade-cutover-renew", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expiry := l.Spec.AcquireTime.Add(2 * time.Second)
		deadline := time.Now().Add(failAfter)
		for time.Now().Before(expiry.Add(time.Second)) {
			if time.Now().After(deadline) {
				t.Fatal("clock did not pass the lease's first expiry")
			}
			time.Sleep(100 * time.Millisecond)
		}
		var locked *journal.LockedError
		if _, err := New(e.c, namespace, "renew").Acquire(journal.Holder{By: "bob@b"}); !errors.As(err, &locked) || locked.Holder.By != "alice@a" {
			t.Fatalf("Acquire past the first expiry of a renewed lease: %v, want alice@a's", err)
		}
		select {
		case <-rel.(*Lease).Lost():
			t.Fatal("Lost closed while the lease was renewed")
		default:
		}
	})

	t.Run("dead holder replaced after expiry", func(t *testing.T) {
		e.create(t, "dead")
		ctx, die := context.WithCancel(t.Context())
		a := New(e.c, namespace, "dead", WithLeaseDuration(2*time.Second), WithContext(ctx))
		rel, err := a.Acquire(journal.Holder{By: "alice@a"})
		if err != nil {
			t.Fatal(err)
		}
		b := New(e.c, namespace, "dead", WithLeaseDuration(2*time.Second))
		var locked *journal.LockedError
		if _, err := b.Acquire(journal.Holder{By: "bob@b"}); !errors.As(err, &locked) || locked.Holder.By != "alice@a" {
			t.Fatalf("standby's Acquire while alice lives: %v, want alice@a's", err)
		}
		// Alice dies: her renewals stop, and she never releases.
		die()
		waitClosed(t, rel.(*Lease).Lost(), "alice's Lost after her context was cancelled")
		relB := waitAcquire(t, b, journal.Holder{By: "bob@b"})
		defer relB.Release()
		l, err := leases.Get(t.Context(), "crossfade-cutover-dead", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions != 1 {
			t.Errorf("lease transitions %v, want 1 (alice to bob)", l.Spec.LeaseTransitions)
		}
		if err := b.Held(); !errors.As(err, &locked) || locked.Holder.By != "bob@b" {
			t.Fatalf("Held after the takeover: %v, want bob@b", err)
		}
	})

	t.Run("lost when taken by force", func(t *testing.T) {
		e.create(t, "forced")
		// Alice's clock stands still, so that her renewals never fail for long in her eyes:
		// only finding the Lease taken can tell her it is lost.
		frozen := time.Now()
		a := New(e.c, namespace, "forced", WithLeaseDuration(2*time.Second), WithClock(func() time.Time { return frozen }))
		rel, err := a.Acquire(journal.Holder{By: "alice@a"})
		if err != nil {
			t.Fatal(err)
		}
		w, _, _, err := a.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(journal.Entry{Kind: "start", Step: -1}); err != nil {
			t.Fatal(err)
		}
		// Another holder writes itself into the lease, as a replica that believed it
		// expired would.
		l, err := leases.Get(t.Context(), "crossfade-cutover-forced", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		thief := "thief"
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.AcquireTime, l.Spec.RenewTime = &thief, &now, &now
		if _, err := leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, rel.(*Lease).Lost(), "Lost after the lease was taken")
		var lost *LostError
		if _, err := w.Append(journal.Entry{Kind: "intent"}); !errors.As(err, &lost) || !strings.Contains(err.Error(), "default/forced") {
			t.Fatalf("append after the lease was lost: %v, want *LostError", err)
		}
		if err := rel.Release(); err != nil {
			t.Fatal(err)
		}
		l, err = leases.Get(t.Context(), "crossfade-cutover-forced", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "thief" {
			t.Fatalf("lease after alice's Release: %+v, %v, want the thief's still", l.Spec, err)
		}
		if n := len(e.get(t, "forced").Status.Journal); n != 1 {
			t.Errorf("journal after the lost append: %d entries, want 1", n)
		}
	})
}
