package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/child"
)

// knot is a running knotd child serving bench.test. from a zone file in the temp dir.
type knot struct {
	*child.Process
	addr string
}

// knotConf keeps every path knotd writes under the temp dir and makes it load the zone file
// whole and never write back (no journal, no zone-file sync), so each run starts clean.
// Workers are left at Knot's defaults (one UDP worker per CPU), its tuned configuration.
var knotConf = template.Must(template.New("knot.conf").Parse(`# Written by dnsbench; removed with its temp dir.
server:
    rundir: "{{.Dir}}/run"
    pidfile: "{{.Dir}}/run/knot.pid"
    user: {{.User}}
    listen: 127.0.0.1@{{.Port}}

control:
    listen: "{{.Dir}}/run/knot.sock"

database:
    storage: "{{.Dir}}/db"

log:
  - target: stderr
    any: warning

template:
  - id: default
    storage: "{{.Dir}}"
    semantic-checks: off
    zonefile-load: whole
    zonefile-sync: -1
    journal-content: none

zone:
  - domain: {{.Zone}}
    file: "{{.ZoneFile}}"
`))

// startKnot writes the config and zone file, starts knotd and waits until it answers.
func startKnot(ctx context.Context, dir string, names int, log *slog.Logger) (*knot, error) {
	kdir := filepath.Join(dir, "knot")
	for _, d := range []string{kdir, filepath.Join(kdir, "run"), filepath.Join(kdir, "db")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("knotd: %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("knotd: %w", err)
	}
	zoneFile := filepath.Join(kdir, "bench.test.zone")
	if err := writeZoneFile(zoneFile, names); err != nil {
		return nil, fmt.Errorf("knotd: %w", err)
	}
	conf := filepath.Join(kdir, "knot.conf")
	if err := writeKnotConf(conf, kdir, zoneFile, port); err != nil {
		return nil, fmt.Errorf("knotd: %w", err)
	}
	c, err := startChild("knotd", filepath.Join(kdir, "knotd.log"), "knotd", "-c", conf)
	if err != nil {
		return nil, err
	}
	k := &knot{Process: c, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := waitZone(ctx, c, k.addr); err != nil {
		stopChild(c, log)
		return nil, fmt.Errorf("knotd: %w", err)
	}
	log.Info("knotd ready", "dns", k.addr, "conf", conf)
	return k, nil
}

func writeKnotConf(path, dir, zoneFile string, port int) error {
	usr, err := runAsUser()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	data := struct {
		Dir, User, Zone, ZoneFile string
		Port                      int
	}{Dir: dir, User: usr, Zone: zoneName, ZoneFile: zoneFile, Port: port}
	if err := knotConf.Execute(f, data); err != nil {
		f.Close()
		return fmt.Errorf("knot.conf: %w", err)
	}
	return f.Close()
}

// runAsUser names the current user and group, so that knotd (whose default user is root)
// neither tries to switch user nor leaves root-owned files in the temp dir.
func runAsUser() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("current user: %w", err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return "", fmt.Errorf("current group %s: %w", u.Gid, err)
	}
	return u.Username + ":" + g.Name, nil
}

// writeZoneFile writes the names as plain A records: the fastest shape Knot serves, which
// the sandbox's weighted pairs are compared against.
func writeZoneFile(path string, names int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "$ORIGIN %s\n$TTL 60\n", zoneName)
	fmt.Fprintf(w, "@ 900 IN SOA ns1.bench-ns.invalid. hostmaster.bench.test. 1 7200 900 1209600 86400\n")
	fmt.Fprintf(w, "@ 172800 IN NS ns1.bench-ns.invalid.\n")
	for i := range names {
		fmt.Fprintf(w, "%s IN A 127.0.0.1\n", hostName(i))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("zone file: %w", err)
	}
	return f.Close()
}

// waitZone polls the server for the zone's SOA until it answers NOERROR: knotd binds its
// sockets before the zone is loaded and answers SERVFAIL or REFUSED until then.
func waitZone(ctx context.Context, c *child.Process, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if _, lastErr = query(ctx, addr, zoneName, dns.TypeSOA); lastErr == nil {
			return nil
		}
		select {
		case <-c.Done():
			return c.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("no SOA for %s at %s: %w (last: %v); log tail:\n%s", zoneName, addr, ctx.Err(), lastErr, c.Tail(logTailLines))
		case <-tick.C:
		}
	}
}

// knotVersion is knotd's version for the report, or "" if it cannot be read.
func knotVersion(ctx context.Context) string {
	out, err := output(ctx, "knotd", "--version")
	if err != nil {
		return ""
	}
	// "knotd (Knot DNS), version 3.2.6"
	line, _, _ := strings.Cut(out, "\n")
	_, v, _ := strings.Cut(line, "version ")
	return strings.TrimSpace(v)
}
