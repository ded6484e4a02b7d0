// Package elb is the sandbox's Elastic Load Balancing v2 model: Application Load Balancers,
// target groups and their targets, listeners and listener rules with weighted forward
// actions, and tags, validated and refused with ELBv2's own error codes and messages.
//
// The store does not move traffic. The sandbox's weighted proxy does, from the Snapshot the
// store publishes to its subscribers after every change (Subscribe), and it tells the store
// how targets fare through a HealthSource (SetHealthSource), which DescribeTargetHealth reads.
package elb

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Quotas of an ALB that the sandbox enforces (AWS's defaults; the per-action one is fixed).
const (
	maxTargetGroupsPerAction  = 5
	maxRulesPerLoadBalancer   = 100
	maxListenersPerBalancer   = 50
	maxTargetsPerTargetGroup  = 1000
	maxTagsPerResource        = 50
	maxDescribeTargetGroups   = 20
	maxResourcesPerTagRequest = 20
	maxPageSize               = 400
)

// Options configures a Store.
type Options struct {
	// DB keeps the state in buckets of an open bbolt file (the sandbox shares the zones'
	// file); nil keeps it in memory. The store does not close it.
	DB *bolt.DB
	// AccountID is the account ARNs name; empty means DefaultAccountID.
	AccountID string
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Store is the ELBv2 state. Writers are serialised; each write is validated in full, then
// persisted in one bbolt transaction, then published: it happens wholly or not at all.
type Store struct {
	account string
	now     func() time.Time
	log     *slog.Logger
	db      *boltState

	writeMu sync.Mutex // serialises writers and the delivery of their snapshots
	subs    []*subscriber
	nextSub int
	drain   *time.Timer
	drainAt time.Time
	closed  bool

	mu   sync.RWMutex // guards st and snap; write-locked only to publish a change
	st   state
	snap Snapshot

	health atomic.Pointer[healthHolder]

	// instMu guards instUnsub, the cancel of the subscription to the EC2 instances
	// SetInstances set (nil: none).
	instMu    sync.Mutex
	instUnsub func()
}

// state is every record by ARN. Published records are immutable.
type state struct {
	lbs       map[string]*LoadBalancer
	tgs       map[string]*TargetGroup
	listeners map[string]*Listener
	rules     map[string]*Rule
	seq       uint64
}

type subscriber struct {
	id int
	fn func(Snapshot)
}

// Open returns a store, loading any state kept in opts.DB.
func Open(opts Options) (*Store, error) {
	s := &Store{
		account: opts.AccountID,
		now:     opts.Now,
		log:     opts.Logger,
		st: state{
			lbs: map[string]*LoadBalancer{}, tgs: map[string]*TargetGroup{},
			listeners: map[string]*Listener{}, rules: map[string]*Rule{},
		},
	}
	if s.account == "" {
		s.account = DefaultAccountID
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.DB != nil {
		b, err := openBolt(opts.DB)
		if err != nil {
			return nil, err
		}
		if err := b.load(&s.st); err != nil {
			return nil, fmt.Errorf("elbv2 state: %w", err)
		}
		s.db = b
	}
	s.snap = s.buildSnapshotLocked()
	// Drains that ended while the sandbox was down end now; the others are timed again.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.expireDrainsLocked(); err != nil {
		return nil, err
	}
	s.scheduleDrainLocked()
	return s, nil
}

// Close stops the drain timer and following the EC2 instances. It does not close
// Options.DB.
func (s *Store) Close() error {
	s.instMu.Lock()
	if s.instUnsub != nil {
		s.instUnsub()
		s.instUnsub = nil
	}
	s.instMu.Unlock()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.closed = true
	if s.drain != nil {
		s.drain.Stop()
	}
	return nil
}

// Snapshot returns the current state.
func (s *Store) Snapshot() Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap
}

// Subscribe calls fn with the current snapshot at once and then with every later one, in
// version order. fn runs on the goroutine that made the change, before the API call that
// made it returns: a client that sees ModifyRule succeed knows the proxy already has the
// new weights, as ALB applies a weight change to new requests at once. So fn must be quick
// (swap a pointer) and must not call the store's write methods or the returned cancel,
// which would deadlock.
func (s *Store) Subscribe(fn func(Snapshot)) (cancel func()) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.nextSub++
	sub := &subscriber{id: s.nextSub, fn: fn}
	s.subs = append(s.subs, sub)
	fn(s.Snapshot())
	return func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		s.subs = slices.DeleteFunc(s.subs, func(x *subscriber) bool { return x.id == sub.id })
	}
}

// Reapply hands the current snapshot to every subscriber again, in order with the writes
// (under the write lock), for a change outside the ELBv2 state that changes how it is
// served: an EC2 instance that stopped, started or changed its IP (SetInstances). It
// returns once every subscriber has it.
func (s *Store) Reapply() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return
	}
	snap := s.Snapshot()
	for _, sub := range s.subs {
		sub.fn(snap)
	}
}

// txn collects one operation's writes over the published state: a nil record deletes.
type txn struct {
	s         *Store
	lbs       map[string]*LoadBalancer
	tgs       map[string]*TargetGroup
	listeners map[string]*Listener
	rules     map[string]*Rule
}

// begin starts a write; s.writeMu must be held, so the published state cannot change
// underneath it.
func (s *Store) begin() *txn {
	return &txn{s: s, lbs: map[string]*LoadBalancer{}, tgs: map[string]*TargetGroup{},
		listeners: map[string]*Listener{}, rules: map[string]*Rule{}}
}

func lookup[T any](over, base map[string]*T, arn string) *T {
	if v, ok := over[arn]; ok {
		return v
	}
	return base[arn]
}

// merged lists base with over applied, deleted records left out.
func merged[T any](base, over map[string]*T) []*T {
	out := make([]*T, 0, len(base)+len(over))
	for k, v := range base {
		if _, ok := over[k]; !ok {
			out = append(out, v)
		}
	}
	for _, v := range over {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

func (t *txn) lb(arn string) *LoadBalancer   { return lookup(t.lbs, t.s.st.lbs, arn) }
func (t *txn) tg(arn string) *TargetGroup    { return lookup(t.tgs, t.s.st.tgs, arn) }
func (t *txn) listener(arn string) *Listener { return lookup(t.listeners, t.s.st.listeners, arn) }
func (t *txn) rule(arn string) *Rule         { return lookup(t.rules, t.s.st.rules, arn) }
func (t *txn) allLBs() []*LoadBalancer       { return merged(t.s.st.lbs, t.lbs) }
func (t *txn) allTGs() []*TargetGroup        { return merged(t.s.st.tgs, t.tgs) }
func (t *txn) allListeners() []*Listener     { return merged(t.s.st.listeners, t.listeners) }
func (t *txn) allRules() []*Rule             { return merged(t.s.st.rules, t.rules) }
func (t *txn) empty() bool                   { return len(t.lbs)+len(t.tgs)+len(t.listeners)+len(t.rules) == 0 }
func (t *txn) nextSeq() uint64               { t.s.st.seq++; return t.s.st.seq }
func (t *txn) listenerRules(arn string) []*Rule {
	return filter(t.allRules(), func(r *Rule) bool { return r.ListenerARN == arn })
}
func (t *txn) lbListeners(arn string) []*Listener {
	return filter(t.allListeners(), func(l *Listener) bool { return l.LoadBalancerARN == arn })
}

func filter[T any](in []T, keep func(T) bool) []T {
	var out []T
	for _, v := range in {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// commit persists t in one bbolt transaction, publishes it and hands the new snapshot to
// every subscriber; s.writeMu must be held. Nothing is published if persisting fails.
func (s *Store) commit(t *txn) error {
	if t.empty() {
		return nil
	}
	if s.db != nil {
		if err := s.db.write(t); err != nil {
			return fmt.Errorf("elbv2 state: %w", err)
		}
	}
	s.mu.Lock()
	apply(s.st.lbs, t.lbs)
	apply(s.st.tgs, t.tgs)
	apply(s.st.listeners, t.listeners)
	apply(s.st.rules, t.rules)
	s.snap = s.buildSnapshotLocked()
	snap := s.snap
	s.mu.Unlock()
	for _, sub := range s.subs {
		sub.fn(snap)
	}
	s.scheduleDrainLocked()
	return nil
}

func apply[T any](base, over map[string]*T) {
	for k, v := range over {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
}

// buildSnapshotLocked assembles the next snapshot; s.mu must be write-locked (or the store
// unpublished).
func (s *Store) buildSnapshotLocked() Snapshot {
	snap := Snapshot{Version: s.snap.Version + 1}
	for _, lb := range sortedBySeq(s.st.lbs, func(lb *LoadBalancer) uint64 { return lb.Seq }) {
		snap.LoadBalancers = append(snap.LoadBalancers, *lb)
	}
	for _, l := range sortedBySeq(s.st.listeners, func(l *Listener) uint64 { return l.Seq }) {
		snap.Listeners = append(snap.Listeners, *l)
		for _, r := range evaluationOrder(s.st.rules, l.ARN) {
			snap.Rules = append(snap.Rules, *r)
		}
	}
	for _, tg := range sortedBySeq(s.st.tgs, func(tg *TargetGroup) uint64 { return tg.Seq }) {
		snap.TargetGroups = append(snap.TargetGroups, *tg)
	}
	return snap
}

func sortedBySeq[T any](m map[string]*T, seq func(*T) uint64) []*T {
	out := make([]*T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *T) int { return cmp.Compare(seq(a), seq(b)) })
	return out
}

// evaluationOrder is a listener's rules by priority, the default rule last.
func evaluationOrder(rules map[string]*Rule, listenerARN string) []*Rule {
	var out []*Rule
	for _, r := range rules {
		if r.ListenerARN == listenerARN {
			out = append(out, r)
		}
	}
	sortRules(out)
	return out
}

func sortRules(rules []*Rule) {
	slices.SortFunc(rules, func(a, b *Rule) int {
		if a.IsDefault != b.IsDefault {
			if a.IsDefault {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.ARN, b.ARN))
	})
}

// scheduleDrainLocked sets the timer for the earliest end of a drain; s.writeMu must be
// held.
func (s *Store) scheduleDrainLocked() {
	if s.closed {
		return
	}
	var next time.Time
	for _, tg := range s.st.tgs {
		for _, tr := range tg.Targets {
			if tr.Draining() && (next.IsZero() || tr.DrainUntil.Before(next)) {
				next = tr.DrainUntil
			}
		}
	}
	if next.Equal(s.drainAt) && s.drain != nil {
		return
	}
	if s.drain != nil {
		s.drain.Stop()
		s.drain = nil
	}
	s.drainAt = next
	if next.IsZero() {
		return
	}
	s.drain = time.AfterFunc(max(0, next.Sub(s.now())), func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if s.closed {
			return
		}
		s.drain, s.drainAt = nil, time.Time{}
		if err := s.expireDrainsLocked(); err != nil {
			s.log.Error("elbv2: ending target drains", "err", err)
		}
		s.scheduleDrainLocked()
	})
}

// expireDrainsLocked forgets the targets whose drain has ended; s.writeMu must be held.
func (s *Store) expireDrainsLocked() error {
	now := s.now()
	t := s.begin()
	for _, tg := range s.st.tgs {
		kept := slices.DeleteFunc(slices.Clone(tg.Targets), func(tr Target) bool {
			return tr.Draining() && !tr.DrainUntil.After(now)
		})
		if len(kept) != len(tg.Targets) {
			n := *tg
			n.Targets = kept
			t.tgs[tg.ARN] = &n
			s.log.Info("elbv2: targets drained", "target_group", tg.Name, "removed", len(tg.Targets)-len(kept))
		}
	}
	return s.commit(t)
}
