package cutover

import "os"

// writeFileAtomic writes data under the name tmp and renames it to path, so that a reader
// (the runner polling for commands, a tool reading the report) sees the whole file or
// none of it. tmp must be on path's file system.
func writeFileAtomic(tmp, path string, data []byte) error {
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
