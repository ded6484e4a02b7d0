package cutover

import "github.com/crossfade-io/crossfade/internal/atomicfile"

// writeFileAtomic writes data under the name tmp and renames it to path, so that a reader
// (the runner polling for commands, a tool reading the report) sees the whole file or
// none of it, and so that a command or report that was written is still there, whole,
// after a power loss (the file is fsynced before the rename, its directory after). tmp
// must be in path's directory.
func writeFileAtomic(tmp, path string, data []byte) error {
	return atomicfile.WriteFile(tmp, path, data, 0o644)
}
