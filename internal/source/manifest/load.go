package manifest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crossfade-io/crossfade/internal/source"
)

// Loaded is what a set of manifests holds.
type Loaded struct {
	// Snapshot holds every object of a kind crossfade reads.
	Snapshot *source.Snapshot
	// Errors are the malformed documents, in file and document order.
	Errors []*DocumentError
	// Ignored are the documents of other kinds (Deployments, ConfigMaps, ...).
	Ignored []Ignored
	// Files are the files read, in order.
	Files []string
}

// Load reads a manifest file, or every *.yaml, *.yml and *.json file below a directory in
// lexical order. The error is for I/O failures, and for a directory that holds no such
// file: read as an empty cluster, it would ask a sync to delete every record it owns. A
// directory whose manifest files hold no object of the kinds read is not an error (the
// deletion guard stands behind it). Bad documents are in Loaded.Errors.
func Load(path string) (*Loaded, error) {
	l := &Loaded{Snapshot: &source.Snapshot{}}
	// The errors name the file (the os errors do) and no more: the caller names what
	// the path is (sync: --manifests), and "manifest:" on top said it twice.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return l, l.readFile(path)
	}
	var others []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !isManifest(p) {
			if rel, err := filepath.Rel(path, p); err == nil {
				p = rel
			}
			others = append(others, p)
			return nil
		}
		return l.readFile(p)
	})
	if err != nil {
		return nil, err
	}
	if len(l.Files) == 0 {
		return nil, noManifests(path, others)
	}
	return l, nil
}

// noManifests is the error of a directory without a manifest file: others are the files
// it holds that are not one.
func noManifests(dir string, others []string) error {
	held := "it is empty"
	if len(others) > 0 {
		shown := others[:min(len(others), 3)]
		files := "files"
		if len(others) == 1 {
			files = "file"
		}
		held = fmt.Sprintf("it holds %d other %s: %s", len(others), files, strings.Join(shown, ", "))
		if len(others) > len(shown) {
			held += ", …"
		}
	}
	return fmt.Errorf("directory %s holds no manifest: no *.yaml, *.yml or *.json file below it (%s); "+
		"an empty directory would read as a cluster without objects and delete every record the owner published", dir, held)
}

func isManifest(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (l *Loaded) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	l.Files = append(l.Files, path)
	return l.decode(f, path)
}
