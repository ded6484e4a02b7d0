package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.24.1", Main: debug.Module{Path: "github.com/crossfade-io/crossfade", Version: "(devel)"}}
		if rev != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.revision", Value: rev})
		}
		if modified != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return bi
	}
	for _, tc := range []struct {
		name                string
		ldVersion, ldCommit string
		bi                  *debug.BuildInfo
		want                string
	}{
		{"make build: the link's values win", "v0.4.0", "1a2b3c4", vcs("ffff", "true"), "crossfade v0.4.0 (commit 1a2b3c4, go1.24.1 linux/amd64)"},
		{"go build in a checkout: the toolchain's", "", "", vcs("1a2b3c4d", "false"), "crossfade (devel) (commit 1a2b3c4d, go1.24.1 linux/amd64)"},
		{"a changed tree is dirty", "", "", vcs("1a2b3c4d", "true"), "crossfade (devel) (commit 1a2b3c4d-dirty, go1.24.1 linux/amd64)"},
		{"go run: no vcs stamp", "", "", vcs("", ""), "crossfade (devel) (commit unknown, go1.24.1 linux/amd64)"},
		{"go install at a tag", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "crossfade v0.4.0 (commit unknown, go1.24.1 linux/amd64)"},
		{"no build info", "", "", nil, "crossfade unknown (commit unknown, go1.24.1 linux/amd64)"},
		{"only the version linked", "v0.4.0", "", vcs("1a2b3c4d", "false"), "crossfade v0.4.0 (commit 1a2b3c4d, go1.24.1 linux/amd64)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(tc.ldVersion, tc.ldCommit, tc.bi, "go1.24.1", "linux/amd64").String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
