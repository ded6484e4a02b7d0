// Package levertest starts the in-process sandbox and builds each cutover lever against it
// through the real AWS SDK v2 clients: a Route 53 zone with two published weighted
// members (Zone), an ALB listener and rule (ALB), a Cloud Map service with custom health
// (CloudMap, Owner), and the authority-tag harness the ALB and Cloud Map levers share
// (TagLever). The levers' own tests, the engine's tests and the crash trial use them, so
// that each sandbox is set up in one place.
package levertest

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
)

// Runner is the runner the levers' tests read and write as.
var Runner = albtest.Runner

// Env is a lever.WriteEnv for a test that drives a lever alone: no log, nothing kept
// before a send.
func Env() lever.WriteEnv {
	return lever.WriteEnv{What: "step", Log: slog.New(slog.DiscardHandler), BeforeSend: func(lever.Snapshot) error { return nil }}
}

// Calls is what a lever's counting API double keeps (CountingELB, CountingSD): the calls
// a runner makes through the real client, counted and in order; hooks that hold its first
// tag call and its first read of the tags after one (to line two runners up); and an
// error for its calls that remove tags.
type Calls struct {
	mu    sync.Mutex
	calls map[string]int
	order []string
	// BeforeTag, when set, runs once before the first tag call; BeforeVerify once before
	// the first read of the tags after a tag call.
	BeforeTag, BeforeVerify func()
	tagged                  bool
	// FailUntag makes the calls that remove tags fail.
	FailUntag error
}

// NewCalls returns an empty Calls.
func NewCalls() *Calls { return &Calls{calls: map[string]int{}} }

// Count counts a call of op.
func (c *Calls) Count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
	c.order = append(c.order, op)
}

// N is how many calls of op were counted.
func (c *Calls) N(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// First is the index of op's first call, -1 when none.
func (c *Calls) First(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Index(c.order, op)
}

// String renders the counts and the order, for failures.
func (c *Calls) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%v in order %v", c.calls, c.order)
}

// onTag counts the tag call op, and runs BeforeTag the first time.
func (c *Calls) onTag(op string) {
	c.Count(op)
	c.mu.Lock()
	hook := c.BeforeTag
	c.BeforeTag, c.tagged = nil, true
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// onUntag counts the untag call op, and returns the error it is to fail with.
func (c *Calls) onUntag(op string) error {
	c.Count(op)
	return c.FailUntag
}

// onVerify counts the tag read op, and runs BeforeVerify at the first after a tag call.
func (c *Calls) onVerify(op string) {
	c.Count(op)
	c.mu.Lock()
	hook := c.BeforeVerify
	if c.tagged && hook != nil {
		c.BeforeVerify = nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// WaitGroupTimeout waits for wg, at most d (a runner that never reaches the barrier must
// not hang the test).
func WaitGroupTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
