// Package deploy_test checks deploy/README.md against the files it describes.
package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// deployDir is deploy/, from this package's directory.
const deployDir = "../../deploy"

// entries lists what deploy/README.md must name: every file directly under deploy/, and
// every file or directory one level below a directory of deploy/ (a directory with a
// trailing "/", e.g. "chart/crossfade/"), as paths relative to deploy/. README.md itself
// is not listed.
func entries(t *testing.T) []string {
	t.Helper()
	top, err := os.ReadDir(deployDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range top {
		if !e.IsDir() {
			if e.Name() != "README.md" {
				out = append(out, e.Name())
			}
			continue
		}
		below, err := os.ReadDir(filepath.Join(deployDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range below {
			p := e.Name() + "/" + b.Name()
			if b.IsDir() {
				p += "/"
			}
			out = append(out, p)
		}
	}
	return out
}

// tablePath is the first cell of a row of the README's table of files: a backticked path.
var tablePath = regexp.MustCompile("^\\| `([^`]+)` \\|")

// TestReadmeNamesEveryFile: deploy/README.md's table of files has a row for every file
// under deploy/ (two levels down), and no row for a file that does not exist, so that
// the policy a reader needs is never one only a directory listing shows.
func TestReadmeNamesEveryFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The table of files is the one headed "| path | what |" (the values table is another).
	_, table, found := strings.Cut(string(b), "\n| path | what |\n")
	if !found {
		t.Fatal(`deploy/README.md has no table of files headed "| path | what |"`)
	}
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if m := tablePath.FindStringSubmatch(line); m != nil {
			rows = append(rows, m[1])
		}
	}
	want := entries(t)
	if len(want) == 0 {
		t.Fatal("no file under deploy/: wrong directory?")
	}
	for _, e := range want {
		if !slices.Contains(rows, e) {
			t.Errorf("deploy/README.md's table has no row for %s: add one saying what it is for", e)
		}
	}
	for _, r := range rows {
		if _, err := os.Stat(filepath.Join(deployDir, filepath.FromSlash(r))); err != nil {
			t.Errorf("deploy/README.md's table names %s: %v", r, err)
		}
	}
}
