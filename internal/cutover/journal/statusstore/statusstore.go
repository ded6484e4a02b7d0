// Package statusstore keeps a cutover's journal in its Cutover object's status and its
// lock in a coordination.k8s.io/v1 Lease: the journal.Store of the in-cluster controller,
// so that a cutover survives the replica running it. Kubernetes (its API server and etcd)
// carries the journal, the lock and the leader.
//
// The journal is status.journal, appended through the status subresource with the
// resourceVersion last read: an append is a compare-and-swap that re-reads on a conflict
// and never overwrites an entry another writer appended. The lock is a Lease named after
// the Cutover, owned by it (so it goes with it), renewed by its holder while held and
// taken over by a standby once it expires.
//
// It cannot live in package journal: the API types (v1alpha1) import journal.
package statusstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// MaxEntries is the most entries status.journal holds (the CRD's maxItems): an append
// past it is refused with *FullError, never made by dropping an entry a resume needs.
const MaxEntries = 2048

// DefaultLeaseDuration is how long a Lease stays its holder's without a renewal: the
// issue wants a dead leader's standby to resume within 15 s.
const DefaultLeaseDuration = 15 * time.Second

// LeasePrefix starts the name of a Cutover's Lease: "crossfade-cutover-NAME".
const LeasePrefix = "crossfade-cutover-"

// HolderAnnotation is the Lease annotation that records its holder (journal.Holder as
// JSON), so that a refused runner is told who runs the cutover, as a lock file tells it.
const HolderAnnotation = "crossfade.io/holder"

// maxConflictRetries bounds the re-reads of an append whose conflicts were all foreign
// changes (spec.paused, labels, other status fields): a writer outpaced that often gives
// up with an error rather than spin.
const maxConflictRetries = 16

// Client is what a Store talks to: the Cutovers (through their status subresource) and
// the Leases of one API server.
type Client struct {
	// Cutovers is a REST client for crossfade.io/v1alpha1 (NewClient builds one).
	Cutovers rest.Interface
	// Leases reaches coordination.k8s.io/v1 Leases.
	Leases coordinationclient.LeasesGetter
}

// NewClient builds a Client from a rest.Config: a typed REST client for
// crossfade.io/v1alpha1 decoding into v1alpha1.Cutover, and the coordination client.
func NewClient(cfg *rest.Config) (*Client, error) {
	rc, err := v1alpha1.RESTClient(cfg, rest.DefaultKubernetesUserAgent())
	if err != nil {
		return nil, fmt.Errorf("statusstore: %w", err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("statusstore: client for %s: %w", cfg.Host, err)
	}
	return &Client{Cutovers: rc, Leases: kc.CoordinationV1()}, nil
}

// Option configures a Store.
type Option func(*Store)

// WithStatus runs fn on the object before each status write, after the entry is added to
// status.journal: the reconciler projects phase, steps and conditions from the journal in
// the same update, so that status never disagrees with its journal. fn must not change
// status.journal (an append whose hook did is refused).
func WithStatus(fn func(*v1alpha1.Cutover)) Option {
	return func(s *Store) { s.hook = fn }
}

// WithIdentity sets the Lease's holderIdentity (e.g. the pod's name, which the caller
// reads from its environment). The default is host_pid_random, unique per Store.
func WithIdentity(id string) Option {
	return func(s *Store) { s.identity = id }
}

// WithLeaseDuration sets how long the Lease stays the holder's without a renewal; the
// holder renews it every third of it. Default DefaultLeaseDuration.
func WithLeaseDuration(d time.Duration) Option {
	return func(s *Store) { s.leaseDuration = d }
}

// WithContext sets the context of the Store's API calls and of its lease renewal: once it
// is cancelled, the holder stops renewing (without releasing), so its Lease expires and a
// standby takes over.
func WithContext(ctx context.Context) Option {
	return func(s *Store) { s.ctx = ctx }
}

// WithLogger sets where the lease renewal logs its failures and a lost lease; default
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}

// WithClock sets the clock entry times and lease times are read from; for tests.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// Store is the journal.Store of one Cutover object: its journal in status.journal, its
// lock in the Lease LeaseName(name).
type Store struct {
	c               *Client
	namespace, name string
	hook            func(*v1alpha1.Cutover)
	identity        string
	leaseDuration   time.Duration
	ctx             context.Context
	now             func() time.Time
	log             *slog.Logger

	mu sync.Mutex
	// held is the lease last acquired through this store: its writers stop appending once
	// it is lost.
	held *Lease
}

var _ journal.Store = (*Store)(nil)

// New returns the Store of the Cutover namespace/name.
func New(c *Client, namespace, name string, opts ...Option) *Store {
	s := &Store{c: c, namespace: namespace, name: name, leaseDuration: DefaultLeaseDuration, ctx: context.Background(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.leaseDuration <= 0 {
		s.leaseDuration = DefaultLeaseDuration
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.identity == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		s.identity = fmt.Sprintf("%s_%d_%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	return s
}

// Where names the journal: "cutover NAMESPACE/NAME".
func (s *Store) Where() string { return "cutover " + s.namespace + "/" + s.name }

// FullError is returned by Append when status.journal already holds MaxEntries entries:
// the entry was not appended, and none was dropped.
type FullError struct {
	// Namespace and Name name the Cutover.
	Namespace, Name string
	// Entries is how many entries its journal holds.
	Entries int
}

// Error names the object and the bound.
func (e *FullError) Error() string {
	return fmt.Sprintf("cutover %s/%s: status.journal holds %d entries, the most it can (%d): entry not appended; the run stops here rather than drop what a resume needs",
		e.Namespace, e.Name, e.Entries, MaxEntries)
}

// LostError is returned by Append once the Lease taken through the same Store was lost
// (see Lease.Lost): another runner may hold the cutover, so this one must not write.
type LostError struct {
	// Where names the journal; Lease the Lease.
	Where, Lease string
}

// Error names the journal and the Lease.
func (e *LostError) Error() string {
	return fmt.Sprintf("journal %s: lease %s lost (taken over, or not renewed in time): entry not appended", e.Where, e.Lease)
}

// get reads the Cutover; a missing one is an error wrapping fs.ErrNotExist naming it.
func (s *Store) get() (*v1alpha1.Cutover, error) {
	c := &v1alpha1.Cutover{}
	err := s.c.Cutovers.Get().Namespace(s.namespace).Resource(v1alpha1.Resource).Name(s.name).Do(s.ctx).Into(c)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("journal %s: no such Cutover: %w", s.Where(), fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: read: %w", s.Where(), err)
	}
	return c, nil
}

// updateStatus writes c's status through the status subresource, with c's
// resourceVersion: the API server refuses it with a 409 Conflict when the object changed.
func (s *Store) updateStatus(c *v1alpha1.Cutover) (*v1alpha1.Cutover, error) {
	out := &v1alpha1.Cutover{}
	err := s.c.Cutovers.Put().Namespace(s.namespace).Resource(v1alpha1.Resource).Name(s.name).SubResource("status").Body(c).Do(s.ctx).Into(out)
	return out, err
}

// lastSeq is the sequence number of the journal's last entry, 0 for none.
func lastSeq(c *v1alpha1.Cutover) int {
	if n := len(c.Status.Journal); n > 0 {
		return c.Status.Journal[n-1].Seq
	}
	return 0
}

// Open reads status.journal and returns a writer after its last entry. An object without
// a journal has an empty one (nothing is written until the first append); a missing object
// is an error wrapping fs.ErrNotExist. Entries are stored whole or not at all, so there is
// never a torn one to cut.
func (s *Store) Open() (journal.Writer, []journal.Entry, int64, error) {
	c, err := s.get()
	if err != nil {
		return nil, nil, 0, err
	}
	return &writer{s: s, obj: c}, c.Status.Entries(), 0, nil
}

// Read returns status.journal's entries; it takes nothing and writes nothing.
func (s *Store) Read() ([]journal.Entry, int64, error) {
	c, err := s.get()
	if err != nil {
		return nil, 0, err
	}
	return c.Status.Entries(), 0, nil
}

// writer appends to one Cutover's journal after the entries it last read or wrote.
type writer struct {
	s *Store
	// obj is the object as last read or written: its resourceVersion is the CAS token, and
	// its journal's length what the writer knows.
	obj *v1alpha1.Cutover
}

// Append adds e to status.journal with the next sequence number and the current time (to
// the microsecond status keeps), in one status update that also carries the WithStatus
// hook's projection. A conflict whose journal is unchanged (someone changed spec.paused,
// labels, other status fields) is retried on the new object; one whose journal changed
// returns *journal.ConflictError and appends nothing.
func (w *writer) Append(e journal.Entry) (journal.Entry, error) {
	s := w.s
	if l := s.lease(); l != nil && l.isLost() {
		return e, &LostError{Where: s.Where(), Lease: s.namespace + "/" + LeaseName(s.name)}
	}
	n := len(w.obj.Status.Journal)
	if n >= MaxEntries {
		return e, &FullError{Namespace: s.namespace, Name: s.name, Entries: n}
	}
	e.Seq = lastSeq(w.obj) + 1
	e.Time = s.now().UTC().Truncate(time.Microsecond)
	je := v1alpha1.EntryFrom(e)
	for try := 0; ; try++ {
		c := w.obj.DeepCopy()
		c.Status.Journal = append(c.Status.Journal, je)
		if s.hook != nil {
			s.hook(c)
			if len(c.Status.Journal) != n+1 || c.Status.Journal[n].Seq != e.Seq {
				return e, fmt.Errorf("journal %s: the status hook changed status.journal (%d entries, want %d): entry not appended", s.Where(), len(c.Status.Journal), n+1)
			}
		}
		out, err := s.updateStatus(c)
		if err == nil {
			w.obj = out
			return v1alpha1.EntryFrom(e).Entry(), nil
		}
		if !apierrors.IsConflict(err) {
			// The update may have landed before the error (a timeout): if the journal holds
			// this very entry, it is durable.
			if cur, gerr := s.get(); gerr == nil && len(cur.Status.Journal) == n+1 && cur.Status.Journal[n].Seq == e.Seq && cur.Status.Journal[n].Time.Equal(&je.Time) {
				w.obj = cur
				return v1alpha1.EntryFrom(e).Entry(), nil
			}
			return e, fmt.Errorf("journal %s: append %s (seq %d): %w", s.Where(), e.Kind, e.Seq, err)
		}
		cur, gerr := s.get()
		if gerr != nil {
			return e, fmt.Errorf("journal %s: append %s (seq %d): re-read after a conflict: %w", s.Where(), e.Kind, e.Seq, gerr)
		}
		if len(cur.Status.Journal) != n || lastSeq(cur) != lastSeq(w.obj) {
			// Another writer appended (or the journal was rewritten): never overwrite it.
			return e, &journal.ConflictError{Where: s.Where(), Seq: lastSeq(w.obj), Found: lastSeq(cur)}
		}
		if try+1 >= maxConflictRetries {
			return e, fmt.Errorf("journal %s: append %s (seq %d): the object changed under %d attempts in a row: %w", s.Where(), e.Kind, e.Seq, try+1, err)
		}
		w.obj = cur
	}
}

// Close does nothing: the writer holds no resources, and the lock is the caller's.
func (w *writer) Close() error { return nil }

// LeaseName is the name of the Lease that locks the Cutover named name:
// LeasePrefix+name, or, when that is longer than an object name may be, a prefix of it
// with a hash of name, so that two long names do not share a Lease.
func LeaseName(name string) string {
	n := LeasePrefix + name
	if len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(name))
	return n[:253-17] + "-" + hex.EncodeToString(sum[:8])
}

// lease is the lease last acquired through s.
func (s *Store) lease() *Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}
