package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listDir names the entries of dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	slices.Sort(names)
	return names
}

func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  string // "" = no file before
		data string
	}{
		{name: "new file", data: "{\"a\":1}\n"},
		{name: "replaces an existing file", old: strings.Repeat("old content\n", 100), data: "new\n"},
		{name: "empty content", old: "old\n", data: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.json")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path+".tmp", path, []byte(tc.data), 0o640); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.data {
				t.Errorf("content = %q, want %q", got, tc.data)
			}
			if names := listDir(t, dir); !slices.Equal(names, []string{"report.json"}) {
				t.Errorf("directory holds %v, want only report.json (no temporary file left)", names)
			}
		})
	}
}

// syncRecorder replaces fsync for one test, recording what was synced and failing on
// the names in fail.
func syncRecorder(t *testing.T, fail map[string]error, onSync func(name string)) *[]string {
	t.Helper()
	var synced []string
	orig := fsync
	fsync = func(f *os.File) error {
		synced = append(synced, f.Name())
		if onSync != nil {
			onSync(f.Name())
		}
		if err := fail[f.Name()]; err != nil {
			return err
		}
		return orig(f)
	}
	t.Cleanup(func() { fsync = orig })
	return &synced
}

// The file is synced before the rename makes it visible under path, and the directory
// after it: a crash at any moment leaves path's old content or the whole new content.
func TestWriteFileSyncsFileBeforeRenameAndDirectoryAfter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	tmp := filepath.Join(dir, ".tmp-c")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	synced := syncRecorder(t, nil, func(name string) {
		b, _ := os.ReadFile(path)
		seen[name] = string(b)
	})
	if err := WriteFile(tmp, path, []byte("new"), 0o644); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if want := []string{tmp, dir}; !slices.Equal(*synced, want) {
		t.Fatalf("synced %v, want %v (the file, then its directory)", *synced, want)
	}
	if seen[tmp] != "old" {
		t.Errorf("when the file was synced %s held %q, want %q: the sync must come before the rename", path, seen[tmp], "old")
	}
	if seen[dir] != "new" {
		t.Errorf("when the directory was synced %s held %q, want %q: the directory's sync must come after the rename", path, seen[dir], "new")
	}
}

func TestWriteFileFailures(t *testing.T) {
	errSync := errors.New("injected sync failure")
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns the temporary name to use and the failures to inject.
		setup    func(t *testing.T, dir, path string) (tmp string, fail map[string]error)
		wantErr  string
		wantFile string // path's content after the failure; "" = absent
		wantLeft []string
	}{
		{
			name: "file sync fails: old content kept, temporary file removed",
			setup: func(t *testing.T, dir, path string) (string, map[string]error) {
				tmp := filepath.Join(dir, ".tmp")
				return tmp, map[string]error{tmp: errSync}
			},
			wantErr: "injected sync failure", wantFile: "old", wantLeft: []string{"f.json"},
		},
		{
			name: "directory sync fails: reported although the file is in place",
			setup: func(t *testing.T, dir, path string) (string, map[string]error) {
				return filepath.Join(dir, ".tmp"), map[string]error{dir: errSync}
			},
			wantErr: "sync directory", wantFile: "new", wantLeft: []string{"f.json"},
		},
		{
			name: "rename fails: temporary file removed",
			setup: func(t *testing.T, dir, path string) (string, map[string]error) {
				// A non-empty directory cannot be replaced by a file.
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, ".tmp"), nil
			},
			wantErr: "f.json", wantLeft: []string{"f.json"},
		},
		{
			name: "temporary file in another directory: refused, nothing written",
			setup: func(t *testing.T, dir, path string) (string, map[string]error) {
				return filepath.Join(t.TempDir(), ".tmp"), nil
			},
			wantErr: "not in the same directory", wantFile: "old", wantLeft: []string{"f.json"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			tmp, fail := tc.setup(t, dir, path)
			syncRecorder(t, fail, nil)
			err := WriteFile(tmp, path, []byte("new"), 0o644)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("WriteFile error = %v, want one naming %s and containing %q", err, path, tc.wantErr)
			}
			if tc.wantFile != "" {
				got, rerr := os.ReadFile(path)
				if rerr != nil || string(got) != tc.wantFile {
					t.Errorf("%s = %q (%v), want %q", path, got, rerr, tc.wantFile)
				}
			}
			if names := listDir(t, dir); !slices.Equal(names, tc.wantLeft) {
				t.Errorf("directory holds %v, want %v", names, tc.wantLeft)
			}
		})
	}
}

func TestSyncDirMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	err := SyncDir(dir)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("SyncDir(%s) = %v, want an error naming the directory", dir, err)
	}
}
