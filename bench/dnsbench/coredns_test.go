package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestWriteCorefile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := writeCorefile(path, "/tmp/x/bench.test.zone", 18053); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One server block for the zone on loopback, the file plugin without reloads, and no
	// other plugin on the query path.
	want := `# Written by dnsbench; removed with its temp dir.
bench.test.:18053 {
    bind 127.0.0.1
    file "/tmp/x/bench.test.zone" {
        reload 0
    }
}
`
	if string(got) != want {
		t.Errorf("Corefile:\n%s\nwant:\n%s", got, want)
	}
}

// TestZoneFile parses the zone file Knot and CoreDNS serve: SOA and NS at the apex, then
// exactly the benchmark names, each one A record 127.0.0.1.
func TestZoneFile(t *testing.T) {
	for _, names := range []int{1, 3, 1000} {
		path := filepath.Join(t.TempDir(), "bench.test.zone")
		if err := writeZoneFile(path, names); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		zp := dns.NewZoneParser(f, "", path)
		var soa, ns int
		var as []string
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			switch rr := rr.(type) {
			case *dns.SOA:
				soa++
			case *dns.NS:
				ns++
			case *dns.A:
				if rr.A.String() != "127.0.0.1" || rr.Hdr.Ttl != 60 {
					t.Errorf("names %d: %s: want A 127.0.0.1 TTL 60", names, rr)
				}
				as = append(as, rr.Hdr.Name)
			default:
				t.Errorf("names %d: unexpected record %s", names, rr)
			}
		}
		f.Close()
		if err := zp.Err(); err != nil {
			t.Fatalf("names %d: %v", names, err)
		}
		if soa != 1 || ns != 1 || len(as) != names {
			t.Fatalf("names %d: %d SOA, %d NS, %d A; want 1, 1, %d", names, soa, ns, len(as), names)
		}
		for i, name := range as {
			if name != hostName(i) {
				t.Fatalf("names %d: A record %d is %s, want %s", names, i, name, hostName(i))
			}
		}
	}
}

func TestCheckCoreDNS(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "coredns-exe")
	plain := filepath.Join(dir, "coredns-plain")
	for path, mode := range map[string]os.FileMode{exe: 0o755, plain: 0o644} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path string
		missing    bool     // errors.Is(err, errNoCoreDNS)
		want       []string // in the message; none: no error
	}{
		{name: "executable", path: exe},
		{name: "missing", path: filepath.Join(dir, "nope"), missing: true,
			want: []string{filepath.Join(dir, "nope"), "scripts/deps.sh bench", "v1.11.3", "-no-coredns"}},
		{name: "not executable", path: plain, want: []string{plain, "not an executable file"}},
		{name: "directory", path: dir, want: []string{dir, "not an executable file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCoreDNS(tc.path)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("checkCoreDNS: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("checkCoreDNS: no error")
			}
			if errors.Is(err, errNoCoreDNS) != tc.missing {
				t.Errorf("errors.Is(%v, errNoCoreDNS) = %v, want %v", err, !tc.missing, tc.missing)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDefaultCoreDNSPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if got, want := defaultCoreDNS(), "/cache/crossfade/bin/coredns-v1.11.3"; got != want {
		t.Errorf("defaultCoreDNS() = %s, want %s (where scripts/deps.sh build_coredns puts it)", got, want)
	}
}

// TestCheckAnswers runs checkAnswers against the real sandbox (in-process) with each zone
// shape as each sandbox role: a plain-records round must not be measured on weighted
// records, nor the weighted round on plain ones.
func TestCheckAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandboxes")
	}
	const names = 10
	ctx := context.Background()
	addr := map[zoneShape]string{}
	for _, shape := range []zoneShape{weightedPairs, plainA} {
		sb := sandboxtest.Start(t)
		if _, err := populateAPI(ctx, sb.APIURL(), names, shape, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("populate %s: %v", shape, err)
		}
		addr[shape] = sb.DNSAddr()
	}
	for _, tc := range []struct {
		shape zoneShape
		role  role
		want  string // error substring; "": passes
	}{
		{shape: plainA, role: rolePlain},
		{shape: weightedPairs, role: roleWeighted},
		{shape: weightedPairs, role: rolePlain, want: "want 127.0.0.1"},
		{shape: plainA, role: roleWeighted, want: "green share 0%"},
	} {
		tgt := &target{name: "sandbox", role: tc.role, kind: tc.shape.String(), addr: addr[tc.shape]}
		err := checkAnswers(ctx, []*target{tgt}, names)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s zone as role %d: %v", tc.shape, tc.role, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s zone as role %d: error %v, want one containing %q", tc.shape, tc.role, err, tc.want)
		}
	}
}

// TestCoreDNSServesZone starts the CoreDNS that scripts/deps.sh bench builds with the
// Corefile and zone file dnsbench writes, and checks it answers every name as Knot does.
func TestCoreDNSServesZone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts CoreDNS")
	}
	bin := defaultCoreDNS()
	if err := checkCoreDNS(bin); err != nil {
		// scripts/deps.sh test builds it (as bench does): missing is a failure under CI=true.
		testenv.Missingf(t, "%v", err)
	}
	const names = 50
	ctx := context.Background()
	cd, err := startCoreDNS(ctx, bin, t.TempDir(), names, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopChild(cd.Process, slog.New(slog.DiscardHandler)) })
	tgt := &target{name: "coredns", role: roleCoreDNS, kind: "plain A", addr: cd.addr}
	if err := checkAnswers(ctx, []*target{tgt}, names); err != nil {
		t.Fatal(err)
	}
	for i := range names {
		if ip, err := answerA(ctx, cd.addr, hostName(i)); err != nil || ip != "127.0.0.1" {
			t.Fatalf("%s: %s, %v; want 127.0.0.1", hostName(i), ip, err)
		}
	}
	// A name beyond the list is not there: the zone holds exactly the benchmark names.
	if _, err := answerA(ctx, cd.addr, hostName(names)); err == nil || !strings.Contains(err.Error(), "NXDOMAIN") {
		t.Errorf("%s: %v, want NXDOMAIN", hostName(names), err)
	}
}
