package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"text/template"

	"github.com/crossfade-io/crossfade/internal/child"
)

// coreDNSVersion is the CoreDNS release scripts/deps.sh (build_coredns) builds from the Go
// module proxy; it is part of the binary's file name, so a cache holding another version is
// not picked up by mistake.
const coreDNSVersion = "v1.11.3"

// coreDNS is a running CoreDNS child serving bench.test. with its file plugin.
type coreDNS struct {
	*child.Process
	addr string
}

// corefile serves the zone with the file plugin and nothing else a query passes through:
// bind keeps it on loopback, and reload 0 stops the file plugin's once-a-minute SOA check of
// the zone file (nothing changes it). No cache, log or errors plugin: the zone is served as
// the file plugin serves it, the shape the figures were taken with.
var corefile = template.Must(template.New("Corefile").Parse(`# Written by dnsbench; removed with its temp dir.
{{.Zone}}:{{.Port}} {
    bind 127.0.0.1
    file "{{.ZoneFile}}" {
        reload 0
    }
}
`))

// binDir is where scripts/deps.sh builds its tools: ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin,
// spelled as the script spells it (os.UserCacheDir differs from it outside Linux).
func binDir() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "crossfade", "bin")
}

// defaultCoreDNS is the path build_coredns writes the binary to.
func defaultCoreDNS() string { return filepath.Join(binDir(), "coredns-"+coreDNSVersion) }

// errNoCoreDNS marks a CoreDNS binary that is not there, as opposed to one that failed.
var errNoCoreDNS = errors.New("coredns not built")

// checkCoreDNS says whether path is an executable file, and if not how to get one: the run
// measures CoreDNS unless told not to (-no-coredns), so its absence is an error, not a skip.
func checkCoreDNS(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("-coredns %s: %w: `scripts/deps.sh bench` (or `make bench`) builds CoreDNS %s from the Go module proxy there; -no-coredns runs without it", path, errNoCoreDNS, coreDNSVersion)
	case err != nil:
		return fmt.Errorf("-coredns %s: %w", path, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("-coredns %s: not an executable file (mode %s)", path, fi.Mode())
	}
	return nil
}

// startCoreDNS writes a Corefile and the zone file into the temp dir, starts CoreDNS and
// waits until it answers the zone's SOA.
func startCoreDNS(ctx context.Context, binary, dir string, names int, log *slog.Logger) (*coreDNS, error) {
	cdir := filepath.Join(dir, "coredns")
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	zoneFile := filepath.Join(cdir, "bench.test.zone")
	if err := writeZoneFile(zoneFile, names); err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	conf := filepath.Join(cdir, "Corefile")
	if err := writeCorefile(conf, zoneFile, port); err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	// -quiet: no banner; -conf: never the Corefile of the working directory.
	c, err := startChild("coredns", filepath.Join(cdir, "coredns.log"), binary, "-conf", conf, "-quiet")
	if err != nil {
		return nil, err
	}
	cd := &coreDNS{Process: c, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := waitZone(ctx, c, cd.addr); err != nil {
		stopChild(c, log)
		return nil, fmt.Errorf("coredns: %w", err)
	}
	log.Info("coredns ready", "dns", cd.addr, "conf", conf)
	return cd, nil
}

// writeCorefile writes the Corefile serving zoneFile as bench.test. on 127.0.0.1:port.
func writeCorefile(path, zoneFile string, port int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("coredns config: %w", err)
	}
	data := struct {
		Zone, ZoneFile string
		Port           int
	}{Zone: zoneName, ZoneFile: zoneFile, Port: port}
	if err := corefile.Execute(f, data); err != nil {
		f.Close()
		return fmt.Errorf("coredns config %s: %w", path, err)
	}
	return f.Close()
}
