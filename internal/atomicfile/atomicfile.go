// Package atomicfile writes files that survive a crash whole or not at all: crossfade's
// control files and reports, and the directory entries of its state files.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// fsync makes f's content durable. A variable so that a test can make it fail: no file
// system on a test machine fails a sync on demand.
var fsync = (*os.File).Sync

// WriteFile replaces path with data so that a reader sees the old file or the whole new
// one, and so that after a power loss path holds one of the two, never a torn or empty
// file: data is written to tmp, fsynced, renamed over path, and path's directory is
// fsynced so that the rename itself is on disk. tmp must be in path's directory, under a
// name no reader takes for path; it is removed when the write fails before the rename.
// An error after the rename (the directory's sync) leaves the new file in place but not
// known to be durable, and is returned all the same.
func WriteFile(tmp, path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if filepath.Dir(tmp) != dir {
		return fmt.Errorf("write %s: temporary file %s is not in the same directory", path, tmp)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fsync(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: sync %s: %w", path, tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	renamed = true
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs the directory dir, so that a file created, renamed or removed in it is
// still there (or gone) after a power loss: a file's own fsync does not cover its name.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	if err := fsync(d); err != nil {
		d.Close()
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
