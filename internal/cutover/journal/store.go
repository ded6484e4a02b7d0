package journal

import (
	"fmt"
)

// Store keeps one cutover's journal and the lock that keeps two runners off it. The
// engine reaches both only through it, so that a cutover's journal can live elsewhere
// than in files (a Kubernetes object, with its lock in a Lease) without the engine
// changing. It names no file: Where is for messages only.
//
// Errors are typed: a missing journal is an error wrapping fs.ErrNotExist (so
// errors.Is(err, os.ErrNotExist) holds), a lock someone holds is *LockedError, and an
// append that lost a race to another writer is *ConflictError.
type Store interface {
	// Open reads the journal, creating an empty one when there is none, and returns a
	// writer appending after its last whole entry, those entries, and the length of a torn
	// last entry it cut off (0 when there was none; a crash mid-write left it, and its
	// action was never taken). The caller holds the lock.
	Open() (Writer, []Entry, int64, error)
	// Read returns the journal's whole entries and the length of a torn last entry it
	// left out (0 when there is none). It takes no lock and writes nothing: `status`
	// reads a running cutover's journal.
	Read() ([]Entry, int64, error)
	// Acquire takes the lock for h without waiting, or returns *LockedError naming who
	// holds it. The store fills in h's PID, Host and Since.
	Acquire(h Holder) (Releaser, error)
	// Held returns *LockedError when someone holds the lock, and nil when nobody does. It
	// takes nothing.
	Held() error
	// Where names the journal for people: a path, or an object's namespace/name.
	Where() string
}

// Writer appends to a journal opened by Store.Open.
type Writer interface {
	// Append writes e with the next sequence number and the current time, and returns it
	// once it is durable. It is a compare-and-swap: it appends only after the last entry
	// this writer read or wrote, and fails with *ConflictError, appending nothing, when
	// another writer appended meanwhile (a store whose lock guarantees one writer, as
	// files' flock does, never reports one). Any failed append leaves the journal as it
	// was: the caller must not act on an entry that is not stored.
	Append(e Entry) (Entry, error)
	// Close lets the journal go; the lock is the caller's.
	Close() error
}

// Releaser gives up a lock taken by Store.Acquire.
type Releaser interface {
	// Release gives the lock up.
	Release() error
}

// ConflictError is returned by Writer.Append when another writer appended to the journal
// after this one last read or wrote it: the entry was not appended.
type ConflictError struct {
	// Where names the journal (Store.Where).
	Where string
	// Seq is the last sequence number the writer knew; Found the journal's.
	Seq, Found int
}

// Error names the journal and both sequence numbers.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("journal %s: another writer appended (writer at seq %d, journal at seq %d): entry not appended", e.Where, e.Seq, e.Found)
}

// Files is the Store of the journal file at journalPath, locked by an flock on the file at
// lockPath: the on-disk journal Open, Read, Acquire and Held work on.
func Files(journalPath, lockPath string) Store {
	return files{journal: journalPath, lock: lockPath}
}

// files is Files.
type files struct {
	journal, lock string
}

// Open opens the journal file (see Open).
func (s files) Open() (Writer, []Entry, int64, error) {
	j, entries, err := Open(s.journal)
	if err != nil {
		return nil, nil, 0, err
	}
	return j, entries, j.Cut, nil
}

// Read reads the journal file (see ReadTail).
func (s files) Read() ([]Entry, int64, error) { return ReadTail(s.journal) }

// Acquire flocks the lock file (see Acquire).
func (s files) Acquire(h Holder) (Releaser, error) {
	l, err := Acquire(s.lock, h)
	if err != nil {
		// A nil *Lock in a Releaser would not be a nil interface.
		return nil, err
	}
	return l, nil
}

// Held probes the lock file (see Held).
func (s files) Held() error { return Held(s.lock) }

// Where is the journal file's path.
func (s files) Where() string { return s.journal }
