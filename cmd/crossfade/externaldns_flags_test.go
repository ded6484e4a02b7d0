package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// externalDNSVersions are the releases whose every flag `crossfade controller` accepts
// (testdata/external-dns-VERSION-flags.txt).
var externalDNSVersions = []string{"v0.21.0", "v0.23.0"}

// edFlag is one flag of external-dns.
type edFlag struct {
	name    string
	boolean bool
}

// externalDNSFlagList reads testdata/external-dns-VERSION-flags.txt.
func externalDNSFlagList(t *testing.T, version string) []edFlag {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "external-dns-"+version+"-flags.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []edFlag
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out = append(out, edFlag{name: fields[0], boolean: len(fields) > 1 && fields[1] == "bool"})
	}
	if err := lines.Err(); err != nil || len(out) < 150 {
		t.Fatalf("%s: %d flags, %v", f.Name(), len(out), err)
	}
	return out
}

// controllerFlags are `crossfade controller`'s flags (its own and inherited): for each,
// whether it is an external-dns flag accepted and ignored.
func controllerFlags(t *testing.T) map[string]bool {
	t.Helper()
	c, _, err := newRootCmd().Find([]string{"controller"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			_, ignored := f.Annotations[cli.ExternalDNSOnly]
			out[f.Name] = ignored
		})
	}
	return out
}

// ignoredArgs is every flag of list that crossfade does not define itself, as external-dns
// takes it (a boolean one bare, any other with a value), and their names.
func ignoredArgs(list []edFlag, defined map[string]bool) (args, names []string) {
	for _, f := range list {
		if ignored, ok := defined[f.name]; ok && !ignored {
			continue
		}
		names = append(names, "--"+f.name)
		if f.boolean {
			args = append(args, "--"+f.name)
		} else {
			args = append(args, "--"+f.name+"=1")
		}
	}
	return args, names
}

// TestExternalDNSFlagLists: every flag of external-dns v0.21.0 and v0.23.0 is one
// `crossfade controller` either defines (with external-dns's meaning) or accepts with a
// warning, a boolean one in kingpin's --no- form too, and a command line carrying all of
// them at once parses; every flag accepted and ignored is one of theirs.
func TestExternalDNSFlagLists(t *testing.T) {
	defined := controllerFlags(t)
	known := map[string]bool{}
	for _, v := range externalDNSVersions {
		list := externalDNSFlagList(t, v)
		var noForms []string
		for _, f := range list {
			known[f.name] = true
			if _, ok := defined[f.name]; !ok {
				t.Errorf("external-dns %s flag --%s: neither defined nor accepted by crossfade controller", v, f.name)
			}
			if ignored := defined[f.name]; f.boolean && ignored {
				known["no-"+f.name] = true
				noForms = append(noForms, "--no-"+f.name)
				if !defined["no-"+f.name] {
					t.Errorf("external-dns %s flag --no-%s is not accepted", v, f.name)
				}
			}
		}
		args, _ := ignoredArgs(list, defined)
		line := slices.Concat(ctlLine, args, noForms)
		if code, _, stderr := runLine(t, line); code != cli.ExitFailure || !strings.Contains(stderr, errRan.Error()) {
			t.Errorf("external-dns %s: every flag on one line: exited %d, stderr:\n%s\nwant it to reach the command", v, code, stderr)
		}
	}
	for name, ignored := range defined {
		if ignored && !known[name] {
			t.Errorf("--%s is accepted as an external-dns flag, but neither release defines it", name)
		}
	}
	// Every --source value of external-dns v0.23.0 (its source/types.All): the kinds
	// crossfade does not read are skipped with a warning, not refused.
	line := slices.Clone(ctlLine)
	for _, s := range []string{"node", "service", "ingress", "pod", "gateway-httproute", "gateway-grpcroute", "gateway-tlsroute",
		"gateway-tcproute", "gateway-udproute", "istio-gateway", "istio-virtualservice", "ambassador-host", "contour-httpproxy",
		"gloo-proxy", "traefik-proxy", "openshift-route", "fake", "empty", "connector", "crd", "skipper-routegroup",
		"kong-tcpingress", "f5-virtualserver", "f5-transportserver", "unstructured"} {
		line = append(line, "--source="+s)
	}
	if code, _, stderr := runLine(t, line); code != cli.ExitFailure || !strings.Contains(stderr, errRan.Error()) {
		t.Errorf("every --source of external-dns v0.23.0: exited %d, stderr:\n%s\nwant it to reach the command", code, stderr)
	}
}

// TestControllerWarnsOncePerExternalDNSFlag runs the real binary with every flag of
// external-dns v0.21.0 and of v0.23.0 that crossfade does not define, all on the command
// line of `crossfade controller --dry-run --once` against a real kube-apiserver and the
// sandbox: it runs its one reconcile and exits 0, and logs exactly one warning per flag,
// naming it, and none for another.
func TestControllerWarnsOncePerExternalDNSFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts kube-apiserver")
	}
	cluster := kubetest.Start(t)
	sb := sandboxtest.Start(t)
	bin := filepath.Join(t.TempDir(), "crossfade")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	defined := controllerFlags(t)
	for _, v := range externalDNSVersions {
		t.Run(v, func(t *testing.T) {
			args, names := ignoredArgs(externalDNSFlagList(t, v), defined)
			base := []string{"--log-format=json", "controller", "--dry-run", "--once", "--source=service", "--txt-owner-id=blue",
				"--kubeconfig=" + cluster.Kubeconfig, "--aws-endpoint=" + sb.APIURL(), "--aws-region=us-east-1", "--metrics-address=127.0.0.1:0"}
			cmd := exec.CommandContext(t.Context(), bin, slices.Concat(base, args)...)
			cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("exited: %v; stderr:\n%s", err, stderr.String())
			}
			warned := map[string]int{}
			for line := range strings.SplitSeq(stderr.String(), "\n") {
				var rec struct{ Level, Msg, Flag string }
				if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "flag accepted for external-dns compatibility and ignored" {
					continue
				}
				if rec.Level != "WARN" {
					t.Errorf("%s logged at %s, want WARN", rec.Flag, rec.Level)
				}
				warned[rec.Flag]++
			}
			for _, n := range names {
				if warned[n] != 1 {
					t.Errorf("%s: warned %d times, want once", n, warned[n])
				}
				delete(warned, n)
			}
			for n, k := range warned {
				t.Errorf("%s: warned %d times, but it was not given", n, k)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
	}
}
