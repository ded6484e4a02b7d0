// Package journal is the cutover's crash-safe record of what it did: an append-only file
// of JSON lines, each one synced to disk before the call returns, and a lock that keeps
// two runners off one cutover.
//
// Why a local file, not a Kubernetes object: a cutover runs from an SRE's terminal or a CI
// job against Route 53, and must work when neither cluster's API server is reachable (one
// of them may be the thing being retired). A line is written before every change is sent
// and after it is acknowledged, so a runner killed at any moment finds, on resume, either
// an intent it must finish (weights are absolute, so sending them again is safe) or a
// completed action.
//
// The engine reaches the journal and the lock only through Store (store.go): Files is
// this package's files, Memory keeps them in memory as an API object would, so that
// another store (a Kubernetes object and a Lease) can replace the files.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/crossfade-io/crossfade/internal/atomicfile"
)

// Entry is one line of the journal. Kind says which of the other fields matter.
type Entry struct {
	// Seq numbers entries from 1, so that a reader can tell a gap from a torn tail.
	Seq int `json:"seq"`
	// Time is when the entry was written.
	Time time.Time `json:"time"`
	// Kind is what happened, e.g. "start", "intent", "written", "insync", "step-passed".
	Kind string `json:"kind"`
	// Step is the step index the entry is about; -1 for none.
	Step int `json:"step"`
	// Weights are set identifier → weight, for entries that write or record weights.
	Weights map[string]int64 `json:"weights,omitempty"`
	// ChangeID is the provider's change id after a write.
	ChangeID string `json:"changeID,omitempty"`
	// By is who acted: user@host for commands, "runner" for the engine.
	By string `json:"by,omitempty"`
	// Detail is free text for people: a gate result, a reason.
	Detail string `json:"detail,omitempty"`
	// Data carries structured details (gate results, start state) for the report.
	Data json.RawMessage `json:"data,omitempty"`
	// TTL is a TTL in seconds the entry records: the members' TTL at the start, so that a
	// resumed runner waits out the TTL resolvers may still hold, and restores it at the end.
	TTL int64 `json:"ttl,omitempty"`
	// PlanHash identifies the plan a start entry began with; a resume with another refuses.
	PlanHash string `json:"planHash,omitempty"`
	// ID identifies a control command, so that one read twice (a crash between journaling
	// and removing it) acts once.
	ID string `json:"id,omitempty"`
	// Token is, in a start entry, the runner token the cutover's authority records carry:
	// made once when the cutover starts and kept here, so that every resume (after a
	// crash, in another process) is the same runner, and any other is refused. Journals
	// from before tokens have none.
	Token string `json:"token,omitempty"`
}

// Journal appends entries to one file. It is not safe for concurrent use; the lock keeps
// other processes away.
type Journal struct {
	f   *os.File
	seq int
	// size is the length of the file's whole entries: a failed append is cut back to it.
	size int64
	now  func() time.Time
	// Cut is the length of the torn last line Open cut off (0 when there was none), for
	// the caller to report: a crash mid-write left it, and its action was never taken.
	Cut int64
}

// Open opens (creating if needed) the journal at path for appending, after reading what it
// holds. A torn last line, left by a crash mid-write, is cut off (and its length kept in
// Cut). A journal it creates has its directory synced too: without that, a crash can lose
// the new file's name, and with it every entry synced into it.
func Open(path string) (*Journal, []Entry, error) {
	entries, good, _, err := read(path)
	created := errors.Is(err, os.ErrNotExist)
	if err != nil && !created {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s: cut torn tail: %w", path, err)
	}
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("journal %s: sync its directory: %w", path, err)
		}
	}
	j := &Journal{f: f, size: good, now: time.Now, Cut: max(fi.Size()-good, 0)}
	if n := len(entries); n > 0 {
		j.seq = entries[n-1].Seq
	}
	return j, entries, nil
}

// syncDir fsyncs the directory dir, so that a file created in it survives a crash (a
// variable: tests see it called).
var syncDir = atomicfile.SyncDir

// Read returns the entries of the journal at path, without the torn tail a crash may
// leave. It does not need the lock: `status` reads a running cutover's journal.
func Read(path string) ([]Entry, error) {
	entries, _, _, err := read(path)
	return entries, err
}

// ReadTail is Read, also returning the length of the torn last line it left out (0 when
// the journal ends with a whole entry), for `status` to report. The length is that of the
// bytes read, not of the file afterwards: a runner appending meanwhile (status reads a
// running cutover's journal) must not make a healthy journal look torn.
func ReadTail(path string) ([]Entry, int64, error) {
	entries, good, size, err := read(path)
	if err != nil {
		return entries, 0, err
	}
	return entries, size - good, nil
}

// read returns the whole entries of the journal at path, the length they take (good)
// and the length of what was read (size): a torn tail is size-good.
func read(path string) ([]Entry, int64, int64, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("journal %s: %w", path, err)
	}
	size := int64(len(data))
	var entries []Entry
	var good int64
	lastSeq := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // torn tail: the write never finished, so its action was never taken
		}
		var e Entry
		if err := json.Unmarshal(data[:i], &e); err != nil {
			return entries, good, size, fmt.Errorf("journal %s: entry after seq %d (byte %d): %w", path, lastSeq, good, err)
		}
		lastSeq = e.Seq
		entries = append(entries, e)
		good += int64(i + 1)
		data = data[i+1:]
	}
	return entries, good, size, nil
}

// readFile reads a journal file (a variable: a test appends between the read and what
// follows it, as a running runner may).
var readFile = os.ReadFile

// Append writes e with the next sequence number and the current time, and returns once
// it is on disk. A failed append leaves the journal as it was, so that the caller, which
// must not act on an entry that is not on disk, can stop with the journal still whole.
func (j *Journal) Append(e Entry) (Entry, error) {
	e.Seq = j.seq + 1
	e.Time = j.now().UTC()
	line, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("journal: encode %s: %w", e.Kind, err)
	}
	line = append(line, '\n')
	if _, err := j.f.WriteAt(line, j.size); err != nil {
		return e, errors.Join(fmt.Errorf("journal %s: write %s: %w", j.f.Name(), e.Kind, err), j.f.Truncate(j.size))
	}
	if err := j.f.Sync(); err != nil {
		return e, errors.Join(fmt.Errorf("journal %s: sync %s: %w", j.f.Name(), e.Kind, err), j.f.Truncate(j.size))
	}
	j.seq, j.size = e.Seq, j.size+int64(len(line))
	return e, nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// Lock is an exclusive hold on one cutover. It is an flock(2) on a lock file: the kernel
// releases it when the holder exits, however it exits, so a runner killed with SIGKILL
// never leaves a stale lock and `run --resume` can start at once. The file also records
// who holds it, for the message a second runner gets.
type Lock struct {
	f *os.File
}

// Holder is what a lock file says about its holder.
type Holder struct {
	// By is who runs it (user@host), as the caller names them.
	By string `json:"by"`
	// PID and Host are the holding process and the machine it runs on, filled in by
	// Acquire: a lock file is only meaningful on the machine whose kernel holds the flock,
	// so whoever reads it wants to know which that is. Lock files from before hosts were
	// recorded have no host.
	PID  int    `json:"pid"`
	Host string `json:"host,omitempty"`
	// Since is when the lock was taken.
	Since   time.Time `json:"since"`
	Cutover string    `json:"cutover"`
}

// String renders the holder for people: "pid 4242 on host ci-7 (alice@ci-7) since
// 2026-01-02T03:04:05Z".
func (h Holder) String() string {
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Host != "" {
		s += " on host " + h.Host
	}
	if h.By != "" {
		s += " (" + h.By + ")"
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.Format(time.RFC3339)
	}
	return s
}

// LockedError is returned when another process holds the lock.
type LockedError struct {
	Path   string
	Holder Holder
}

// Error names the holder.
func (e *LockedError) Error() string {
	return fmt.Sprintf("cutover %s is being run by %s (lock %s)", e.Holder.Cutover, e.Holder, e.Path)
}

// Acquire takes the lock at path without waiting, or returns *LockedError.
func Acquire(path string, h Holder) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// A probe by Held holds the lock shared for an instant: try a few times before
	// calling it taken.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for try := 0; errors.Is(err, syscall.EWOULDBLOCK) && try < 5; try++ {
		time.Sleep(20 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	h.PID = os.Getpid()
	if h.Host == "" {
		h.Host, _ = os.Hostname()
	}
	if h.Since.IsZero() {
		h.Since = time.Now().UTC()
	}
	b, _ := json.Marshal(h)
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// readHolder reads who holds the lock. The holder writes its line just after taking the
// lock, so an empty file means it is about to: look again briefly.
func readHolder(f *os.File) Holder {
	var h Holder
	for range 10 {
		if _, err := f.Seek(0, 0); err == nil && json.NewDecoder(bufio.NewReader(f)).Decode(&h) == nil {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h
}

// Held returns *LockedError when a process holds the lock at path, and nil when none does
// (or there is no lock file). It takes nothing: control commands use it to say whether a
// runner will act on them now or on resume.
func Held(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &LockedError{Path: path, Holder: readHolder(f)}
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// Release gives the lock up.
func (l *Lock) Release() error {
	_ = l.f.Truncate(0)
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return errors.Join(err, l.f.Close())
}
