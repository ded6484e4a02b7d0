package cutover

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// Retrying a write that failed transiently (see transient).
const (
	// defaultWriteRetryFor is Config.WriteRetryFor's default: long enough to ride out a
	// throttling burst of the account (a 30-minute cutover should not end on one), short
	// enough that an SRE watching a run that cannot write hears of it.
	defaultWriteRetryFor = 5 * time.Minute
	// defaultWriteRetryBackoff is Config.WriteRetryBackoff's default: the first wait.
	defaultWriteRetryBackoff = time.Second
	// maxWriteRetryBackoff caps the wait between two attempts.
	maxWriteRetryBackoff = 30 * time.Second
)

// writeTry is what the attempts of one write share.
type writeTry struct {
	// intent is set once the write's intent is journaled: once per write, not per attempt.
	intent bool
	// sentOn is the snapshot the current attempt built a request on; nil until it sends.
	sentOn Snapshot
	// landed are, by member key, weights a failed attempt may have left (mayHaveLanded).
	landed map[string][]int64
}

// send has the lever write c (see write), and retries it after a backoff (retryWait) when
// it fails transiently, each attempt on a fresh read: the write is absolute weights and
// TTLs, so sending it again is safe whatever an earlier attempt left. A forward write
// gives up once it has failed for Config.WriteRetryFor, and the run ends with its error
// (`run --resume` continues it). A rollback's never gives up: it runs when something is
// already wrong, often with AWS itself, and stopping it half-way would leave traffic on
// the cluster that failed its gate; only ctx (Ctrl-C, SIGTERM) ends it.
func (r *runner) send(ctx context.Context, step int, c Change, ttl int64, what string, ev Event) (Written, error) {
	began := time.Now()
	t := &writeTry{}
	for attempt := 1; ; attempt++ {
		t.sentOn = nil
		wr, err := r.attempt(ctx, step, c, ttl, what, ev, t)
		if err == nil {
			if attempt > 1 {
				r.log.Info("write went through after transient failures", "step", what, "attempts", attempt,
					"failing_for", time.Since(began).Round(time.Millisecond))
			}
			return wr, nil
		}
		if ctx.Err() != nil || !transient(err) {
			return Written{}, err
		}
		bound := r.cfg.WriteRetryFor
		failing := time.Since(began)
		if !r.rollingBack {
			switch {
			case bound < 0:
				return Written{}, err
			case failing >= bound:
				return Written{}, fmt.Errorf("gave up after %s of transient failures (%d attempts; a forward write is retried for %s): %w",
					failing.Round(time.Millisecond), attempt, bound, err)
			}
		}
		if t.sentOn != nil {
			t.landed = r.mayHaveLanded(ctx, t.sentOn, c, t.landed)
		}
		wait := retryWait(r.cfg.WriteRetryBackoff, attempt)
		until := "a rollback retries until it lands"
		if !r.rollingBack {
			// The last attempt is made when the bound is reached, not a backoff past it.
			wait = min(wait, bound-failing)
			until = fmt.Sprintf("gives up after %s", bound)
		}
		r.log.Warn("write failed transiently; retrying", "step", what, "attempt", attempt, "failing_for", failing.Round(time.Millisecond),
			"retry_in", wait.Round(time.Millisecond), "err", err)
		re := Event{Phase: ev.Phase, Step: ev.Step, Total: ev.Total, Weights: c.Weights, Retrying: true,
			Message: fmt.Sprintf("%s: write failed transiently (AWS throttling or errors beyond the SDK's retries) at attempt %d, failing for %s: retrying in %s (%s)",
				what, attempt, roughly(failing), roughly(wait), until)}
		r.cfg.Progress.Event(re)
		if err := r.waitRetry(ctx, wait, !r.rollingBack && (step >= 0 || step == stepTTLLower)); err != nil {
			return Written{}, err
		}
	}
}

// errAbortedWriting ends the retries of a forward write when an abort arrives during
// them: the caller rolls back as for an abort between steps.
var errAbortedWriting = errors.New("aborted while the write was being retried")

// waitRetry waits d before the next attempt of a write. With abortable (a step's write,
// or lowering the TTL, before anything of the cutover is final), it also reads the
// control commands every check, and an abort ends the wait with errAbortedWriting:
// retries may last minutes, and an SRE who aborts wants the rollback now, not once AWS
// lets the forward write through. A pause is journaled and acts once the write lands,
// as a pause between steps would.
func (r *runner) waitRetry(ctx context.Context, d time.Duration, abortable bool) error {
	if !abortable {
		return sleep(ctx, d)
	}
	for end := time.Now().Add(d); ; {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		if err := sleep(ctx, min(left, r.cfg.CheckInterval)); err != nil {
			return err
		}
		if err := r.poll(); err != nil {
			return err
		}
		if r.aborted {
			return errAbortedWriting
		}
	}
}

// attempt is one attempt of send: read, compare, journal the intent (on the first attempt
// that gets that far), and have the lever send c.
func (r *runner) attempt(ctx context.Context, step int, c Change, ttl int64, what string, ev Event, t *writeTry) (Written, error) {
	w := c.Weights
	// Read the members afresh: a publisher may have changed their targets since, and a
	// writer that ignores the authority record their weights (drift: nothing is sent).
	l, err := r.read(ctx, c)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", what, err)
	}
	if d := r.driftIn(l, w, t.landed); d != nil {
		return Written{}, d
	}
	if !t.intent {
		if _, err := r.append(journal.Entry{Kind: kindIntent, Step: step, Weights: w, TTL: ttl, Detail: what}); err != nil {
			return Written{}, err
		}
		t.intent = true
		ev.Weights = w
		if ev.Message == "" {
			ev.Message = what
		}
		r.cfg.Progress.Event(ev)
	}
	env := WriteEnv{What: what, Comment: fmt.Sprintf("crossfade cutover %s: %s", r.p.Name, what), Log: r.log,
		Read: func(ctx context.Context) (Snapshot, error) { return r.read(ctx, c) },
		Drift: func(s Snapshot) error {
			if d := r.driftIn(s, w, t.landed); d != nil {
				return d
			}
			return nil
		},
		BeforeSend: func(s Snapshot) error {
			t.sentOn = s
			r.live = s
			return r.noteTakeover(s)
		},
	}
	return r.lever.Write(ctx, l, c, env)
}

// transient reports whether err is a failure that the AWS SDK judged retryable and gave
// up on: it retried until it ran out of attempts (*retry.MaxAttemptsError: throttling,
// PriorRequestNotComplete, 5xx, network errors), or its client-side retry quota refused a
// retry (ratelimit.QuotaExceededError, returned by value; crossfade's own clients have no
// quota, an embedder's may). Every lever wraps the SDK's errors with %w (a read's in
// *ReadError, an ALB or Cloud Map write stopped part way in its partial-write error), so
// either is found whichever call failed. Anything else (a refused change, *HeldError,
// *DriftError, *NotReadyError, AccessDenied, a validation error) is an answer that
// another attempt would not change.
func transient(err error) bool {
	var attempts *retry.MaxAttemptsError
	var quota ratelimit.QuotaExceededError
	var quotaPtr *ratelimit.QuotaExceededError
	return errors.As(err, &attempts) || errors.As(err, &quota) || errors.As(err, &quotaPtr)
}

// retryWait is the wait before retry number attempt (from 1) of a write that failed
// transiently: base doubled at each retry, capped at maxWriteRetryBackoff, ±20 % jitter
// (runners of several cutovers throttled together do not retry in step), never more than
// the cap.
func retryWait(base time.Duration, attempt int) time.Duration {
	d := doubled(base, attempt, maxWriteRetryBackoff)
	d = d - d/5 + rand.N(2*d/5+1)
	return min(d, maxWriteRetryBackoff)
}

// doubled is base doubled for each try after the first (try counts from 1), capped at
// limit: the pause before the next try of something that keeps failing.
func doubled(base time.Duration, try int, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < try && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// roughly rounds d for people: to the millisecond below a second, the tenth of a second
// below a minute, the second above.
func roughly(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// mayHaveLanded adds to landed (member key → weights) what an attempt built on s, which
// failed, may have left: a transient failure does not say whether the request was applied
// (Route 53 may have committed a batch whose answer was lost), and an ALB or Cloud Map
// write is one call per rule or instance, so part of it may stand. The next attempt's read
// then takes such a weight for the write's own, not for drift.
func (r *runner) mayHaveLanded(ctx context.Context, s Snapshot, c Change, landed map[string][]int64) map[string][]int64 {
	if c.Weights == nil {
		return landed // a write of TTLs alone compares no weights
	}
	rd, err := r.lever.DryRun(ctx, s, c)
	if err != nil || rd.After == nil {
		r.log.Warn("could not tell what the failed write would have left: a weight it did leave will read as drift at the next attempt", "err", err)
		return landed
	}
	if landed == nil {
		landed = map[string][]int64{}
	}
	for _, m := range rd.After.Members() {
		if !slices.Contains(landed[m.Key], m.Weight) {
			landed[m.Key] = append(landed[m.Key], m.Weight)
		}
	}
	return landed
}
