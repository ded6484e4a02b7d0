package journal

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Memory keeps cutovers' journals and locks in memory, by cutover name. It is the Store
// a journal kept in an API object would be: entries are stored encoded, as they would be
// in the object, appends are compare-and-swaps on the journal's last sequence number (an
// object's resourceVersion), and the lock is a lease with a holder, released explicitly.
// It is for tests and embedders; nothing in it survives the process.
type Memory struct {
	mu       sync.Mutex
	journals map[string]*memJournal
	now      func() time.Time
}

// memJournal is one cutover's journal and lock in a Memory.
type memJournal struct {
	// exists is set once the journal was opened: an empty journal differs from none.
	exists bool
	lines  [][]byte
	holder *Holder
	// lease counts acquisitions, so that a stale Releaser cannot free a later holder's.
	lease int
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{journals: map[string]*memJournal{}, now: time.Now}
}

// Store returns the Store of the cutover named name.
func (m *Memory) Store(name string) Store {
	return &memStore{m: m, name: name}
}

// get returns name's journal, creating its record (not the journal: see exists). The
// caller holds m.mu.
func (m *Memory) get(name string) *memJournal {
	j := m.journals[name]
	if j == nil {
		j = &memJournal{}
		m.journals[name] = j
	}
	return j
}

// memStore is one cutover's Store in a Memory.
type memStore struct {
	m    *Memory
	name string
}

// Where names the journal: "memory:NAME".
func (s *memStore) Where() string { return "memory:" + s.name }

// decode decodes lines, naming the journal and entry in an error.
func (s *memStore) decode(lines [][]byte) ([]Entry, error) {
	var entries []Entry
	lastSeq := 0
	for _, l := range lines {
		var e Entry
		if err := json.Unmarshal(l, &e); err != nil {
			return entries, fmt.Errorf("journal %s: entry after seq %d: %w", s.Where(), lastSeq, err)
		}
		lastSeq = e.Seq
		entries = append(entries, e)
	}
	return entries, nil
}

// Open creates the journal if needed and returns a writer after its last entry. An
// encoded entry is stored whole or not at all, so there is never a torn one to cut.
func (s *memStore) Open() (Writer, []Entry, int64, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	j := s.m.get(s.name)
	j.exists = true
	entries, err := s.decode(j.lines)
	if err != nil {
		return nil, nil, 0, err
	}
	return &memWriter{s: s, seq: len(j.lines)}, entries, 0, nil
}

// Read returns the journal's entries, or an error wrapping fs.ErrNotExist when it was
// never opened.
func (s *memStore) Read() ([]Entry, int64, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	j := s.m.journals[s.name]
	if j == nil || !j.exists {
		return nil, 0, fmt.Errorf("journal %s: %w", s.Where(), fs.ErrNotExist)
	}
	entries, err := s.decode(j.lines)
	return entries, 0, err
}

// Acquire takes the lease, or returns *LockedError naming its holder.
func (s *memStore) Acquire(h Holder) (Releaser, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	j := s.m.get(s.name)
	if j.holder != nil {
		return nil, &LockedError{Path: s.Where() + ".lock", Holder: *j.holder}
	}
	h.PID = os.Getpid()
	if h.Host == "" {
		h.Host, _ = os.Hostname()
	}
	if h.Since.IsZero() {
		h.Since = s.m.now().UTC()
	}
	j.holder = &h
	j.lease++
	return &memLease{s: s, lease: j.lease}, nil
}

// Held returns *LockedError when the lease is held.
func (s *memStore) Held() error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if j := s.m.journals[s.name]; j != nil && j.holder != nil {
		return &LockedError{Path: s.Where() + ".lock", Holder: *j.holder}
	}
	return nil
}

// memLease is a held lease of a memStore.
type memLease struct {
	s     *memStore
	lease int
}

// Release frees the lease if it is still this one's: releasing twice frees nothing of a
// later holder's.
func (l *memLease) Release() error {
	l.s.m.mu.Lock()
	defer l.s.m.mu.Unlock()
	if j := l.s.m.journals[l.s.name]; j != nil && j.lease == l.lease {
		j.holder = nil
	}
	return nil
}

// memWriter appends to a memStore's journal after the seq it last saw.
type memWriter struct {
	s   *memStore
	seq int
}

// Append stores e after the writer's last entry, or returns *ConflictError when another
// writer appended since.
func (w *memWriter) Append(e Entry) (Entry, error) {
	w.s.m.mu.Lock()
	defer w.s.m.mu.Unlock()
	j := w.s.m.get(w.s.name)
	if found := len(j.lines); found != w.seq {
		return e, &ConflictError{Where: w.s.Where(), Seq: w.seq, Found: found}
	}
	e.Seq = w.seq + 1
	e.Time = w.s.m.now().UTC()
	line, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("journal %s: encode %s: %w", w.s.Where(), e.Kind, err)
	}
	j.lines = append(j.lines, line)
	w.seq = e.Seq
	return e, nil
}

// Close does nothing: a memory journal holds no resources.
func (w *memWriter) Close() error { return nil }
