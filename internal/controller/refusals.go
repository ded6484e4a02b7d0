package controller

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
)

// Defaults of Refusals: a refused change is sent again after a minute, then after two,
// four, … up to an hour.
const (
	DefaultRefusalBackoff    = time.Minute
	DefaultMaxRefusalBackoff = time.Hour
)

// Refusals remembers the changes the provider refused as invalid, so that a controller
// reconciling every few seconds does not send the same doomed change (and list the zone
// again after it) every time: each refused name is held back for a delay that doubles
// with each refusal, and sent at once when what it would write changes (the object was
// fixed). A refusal that says another writer moved the zone is not held back: the next
// reconcile re-reads the zone and plans the name again.
type Refusals struct {
	// Min and Max bound the delay; 0 means the Default* values.
	Min, Max time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	byUnit  map[string]*refusalState
	touched map[string]bool
}

type refusalState struct {
	zoneID string
	until  time.Time
	delay  time.Duration
	reason string
	// moved counts the refusals in a row that said the zone moved under the write.
	moved int
}

// movedRepeats is how many times in a row the very same change may be refused as "the
// zone moved" before it is held back like any refusal. After such a refusal the zone is
// listed again, so a change planned from what truly moved differs from the refused one;
// the same change refused again and again means the listing and Route 53 disagree (a
// stale read path, a writer fighting over the name), and resending it, with a listing
// of the whole zone each time, at every reconcile for months helps nobody.
const movedRepeats = 3

func (r *Refusals) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// fingerprint identifies a unit by what it would write to which zone.
func fingerprint(zoneID string, u changes.Unit) string {
	var b strings.Builder
	b.WriteString(zoneID)
	for _, c := range u.Changes {
		e := c.Endpoint
		fmt.Fprintf(&b, "\x00%s %s %d %v %v %v", c.Action, e, e.TTL, e.Policy, e.Labels, e.ProviderSpecific)
	}
	return b.String()
}

// held reports whether u was refused recently and must not be sent yet, with the
// earlier refusal's reason and when it will be sent again.
func (r *Refusals) held(zoneID string, u changes.Unit) (bool, string, time.Time) {
	if r == nil {
		return false, "", time.Time{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fp := fingerprint(zoneID, u)
	if r.touched == nil {
		r.touched = map[string]bool{}
	}
	r.touched[fp] = true
	f, ok := r.byUnit[fp]
	if !ok || !r.now().Before(f.until) {
		return false, "", time.Time{}
	}
	return true, f.reason, f.until
}

// refused records that u was refused for reason, and returns when it will be sent again:
// zero when it is not held back (no Refusals, or the zone moved under the write, which the
// next sync plans again from what it reads, unless the same change was refused so
// movedRepeats times in a row).
func (r *Refusals) refused(zoneID string, u changes.Unit, reason string) time.Time {
	if r == nil {
		return time.Time{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byUnit == nil {
		r.byUnit = map[string]*refusalState{}
	}
	if r.touched == nil {
		r.touched = map[string]bool{}
	}
	fp := fingerprint(zoneID, u)
	f, ok := r.byUnit[fp]
	if !ok {
		f = &refusalState{zoneID: zoneID}
		r.byUnit[fp] = f
	}
	r.touched[fp] = true
	if Moved(reason) {
		if f.moved++; f.moved < movedRepeats {
			return time.Time{}
		}
	} else {
		f.moved = 0
	}
	minDelay, maxDelay := orDefault(r.Min, DefaultRefusalBackoff), orDefault(r.Max, DefaultMaxRefusalBackoff)
	f.delay = min(max(2*f.delay, minDelay), maxDelay)
	f.until, f.reason = r.now().Add(f.delay), reason
	return f.until
}

// prune forgets the refusals of units no sync since the last prune planned: their
// object changed or went, so the change they remember will never be sent again. The
// refusals of the zones in unplanned (by id) are kept: their listing failed, so no unit
// of theirs was planned, and forgetting would send a refused name again at the next sync
// with its backoff started over.
func (r *Refusals) prune(unplanned map[string]bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for fp, f := range r.byUnit {
		if !r.touched[fp] && !unplanned[f.zoneID] {
			delete(r.byUnit, fp)
		}
	}
	r.touched = nil
}
