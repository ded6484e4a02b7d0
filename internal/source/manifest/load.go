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
// lexical order. The error is for I/O failures only; bad documents are in Loaded.Errors.
func Load(path string) (*Loaded, error) {
	l := &Loaded{Snapshot: &source.Snapshot{}}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if !info.IsDir() {
		return l, l.readFile(path)
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isManifest(p) {
			return nil
		}
		return l.readFile(p)
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return l, nil
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
		return fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	l.Files = append(l.Files, path)
	return l.decode(f, path)
}
