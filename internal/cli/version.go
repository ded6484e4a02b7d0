package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by `make build` and `make image`:
//
//	-ldflags "-X github.com/crossfade-io/crossfade/internal/cli.version=v0.4.0 -X github.com/crossfade-io/crossfade/internal/cli.commit=1a2b3c4…"
//
// Empty in a plain `go build` or `go run`: BuildVersion then reads what the Go toolchain
// stamped into the binary.
var (
	version string
	commit  string
)

// unknown stands for a version or commit that neither the link nor the toolchain recorded.
const unknown = "unknown"

// Version is what `crossfade version` and `crossfade --version` print.
type Version struct {
	// Version is the release (a tag, as git describe writes it), else the module version
	// the toolchain recorded ("(devel)" for a checkout).
	Version string
	// Commit is the source's revision, "-dirty" appended when the tree had changes.
	Commit string
	// Go is the Go release that built the binary.
	Go string
	// Platform is the binary's GOOS/GOARCH.
	Platform string
}

// String is the one line both forms print, e.g.
// "crossfade v0.4.0 (commit 1a2b3c4, go1.24.1 linux/amd64)".
func (v Version) String() string {
	return fmt.Sprintf("crossfade %s (commit %s, %s %s)", v.Version, v.Commit, v.Go, v.Platform)
}

// BuildVersion is this binary's Version: the link-time values, and for what they leave
// empty, the build information the Go toolchain embedded (debug.ReadBuildInfo).
func BuildVersion() Version {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, commit, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// versionOf is BuildVersion's rule, on the link-time values ldVersion and ldCommit and the
// toolchain's bi (nil when the binary has none).
func versionOf(ldVersion, ldCommit string, bi *debug.BuildInfo, goVersion, platform string) Version {
	v := Version{Version: ldVersion, Commit: ldCommit, Go: goVersion, Platform: platform}
	if bi != nil {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		if v.Commit == "" {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" && modified == "true" {
				rev += "-dirty"
			}
			v.Commit = rev
		}
		if v.Go == "" {
			v.Go = bi.GoVersion
		}
	}
	if v.Version == "" {
		v.Version = unknown
	}
	if v.Commit == "" {
		v.Commit = unknown
	}
	return v
}
