package reconciler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestSendToKeepsTheID: a command taken from crossfade.io/command reaches the run under
// the ID its sender waits for in the journal; an ID that is not a plain file name is
// refused rather than written elsewhere, or skipped as a temporary file.
func TestSendToKeepsTheID(t *testing.T) {
	dir := t.TempDir()
	paths := cutover.PathsFor(dir, "app")
	store := journal.Files(paths.Journal, paths.Lock)
	j, _, _, err := store.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(journal.Entry{Kind: "start", Step: -1, By: "runner"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	for _, tc := range []struct {
		id, wantFile, wantErr string
	}{
		{"k-0a1b", "k-0a1b.json", ""},
		{"delete-5d2c1c3e-8a0b-4f5e-9c1d-0123456789ab", "delete-5d2c1c3e-8a0b-4f5e-9c1d-0123456789ab.json", ""},
		{"../escape", "", `id "../escape": want a plain file name`},
		{"a/b", "", `id "a/b": want a plain file name`},
		{".hidden", "", `id ".hidden": want a plain file name`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			sent, err := cutover.SendTo(store, paths, cutover.Command{ID: tc.id, Command: cutover.CommandPromote, By: "alice"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SendTo with id %q: %v, want an error containing %q", tc.id, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sent.ID != tc.id {
				t.Errorf("sent with id %q, want %q", sent.ID, tc.id)
			}
			if _, err := os.Stat(filepath.Join(paths.Control, tc.wantFile)); err != nil {
				t.Errorf("command file: %v", err)
			}
		})
	}
	if sent, err := cutover.SendTo(store, paths, cutover.Command{Command: cutover.CommandPause, By: "alice"}); err != nil || sent.ID == "" {
		t.Errorf("SendTo without an id: %+v, %v: want one made up", sent, err)
	}
}
