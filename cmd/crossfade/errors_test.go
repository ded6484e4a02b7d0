package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// buildCrossfade builds the binary into a temporary directory and returns its path.
func buildCrossfade(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crossfade")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBinary runs bin with args in dir, with static AWS credentials and the instance
// metadata service off (nothing leaves loopback), and returns its exit status and output.
func runBinary(t *testing.T, bin, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// errorPlan is a valid plan for the zone TestErrorMessages publishes; the cases write
// variants of it.
const errorPlan = `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: app
spec:
  zone: example.com
  records:
    - name: app.example.com
    - name: app.example.com
      type: AAAA
  from: blue
  to: green
  steps: [50, 100]
`

// variable are the parts of an answer that change from run to run, and what they are
// replaced with before the comparison.
var variable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`RequestID: [0-9a-f-]+`), "RequestID: ID"},
	// The DNS server binds UDP, then TCP: with one UDP socket UDP fails first on a port
	// taken, with SO_REUSEPORT's several (one per CPU) TCP does.
	{regexp.MustCompile(`listen udp (\S+): bind`), "listen tcp $1: bind"},
}

// TestErrorMessages runs the real binary over the errors a user meets (plan, manifests,
// flag values, zone lookup, cutover refusals, verify, the sandbox's listeners and state
// file) and compares its whole standard error: each names its object (file, flag, zone,
// record, gate, service) once, with no context said twice.
func TestErrorMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a sandbox")
	}
	bin := buildCrossfade(t)
	sb := sandboxtest.Start(t)
	route53test.Zone(t, sb, "example.com")
	api := sb.APIURL()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Blue and green publish app.example.com as weighted aliases to load balancers the
	// sandbox has no addresses for.
	for _, c := range []string{"blue", "green"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", c, "app.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		write(c+"/app.yaml", string(b))
		if code, out, errOut := runBinary(t, bin, dir, "sync", "--manifests", c, "--txt-owner-id", c, "--aws-endpoint", api); code != 0 {
			t.Fatalf("sync %s: exit %d\n%s%s", c, code, out, errOut)
		}
	}
	write("plan.yaml", errorPlan)
	write("unknown.yaml", errorPlan+"  stepz: [10]\n")
	write("gate.yaml", errorPlan+"  gates:\n    - dns:\n        bogus: 1\n")
	write("otherzone.yaml", strings.ReplaceAll(errorPlan, "example.com", "example.org"))
	write("unpublished.yaml", strings.Replace(errorPlan, "from: blue", "from: red", 1))
	write("nozone/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n  annotations:\n"+
		"    external-dns.alpha.kubernetes.io/hostname: web.example.org\nspec:\n  type: LoadBalancer\n"+
		"status:\n  loadBalancer:\n    ingress:\n      - ip: 192.0.2.10\n")
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A port another listener holds.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	state := filepath.Join(dir, "state")
	for _, tc := range []struct {
		name string
		args []string
		code int
		// stderr is the whole standard error; {DIR}, {API}, {DNS} and {BUSY} stand for
		// the test's directory, the sandbox's API URL and DNS address, and the held port.
		stderr string
	}{
		// Plan files: the file, then the field.
		{"plan: no such file", []string{"cutover", "plan", "missing.yaml", "--aws-endpoint", api}, 1,
			"crossfade: cutover plan: open missing.yaml: no such file or directory\n"},
		{"plan: unknown field", []string{"cutover", "plan", "unknown.yaml", "--aws-endpoint", api}, 1,
			"crossfade: unknown.yaml: spec.stepz: unknown field; did you mean \"steps\"?\n"},
		{"plan: gate field", []string{"cutover", "plan", "gate.yaml", "--aws-endpoint", api}, 1,
			"crossfade: gate.yaml: spec.gates[0].dns.bogus: unknown field; want one of servers, samples, tolerance, sampleNames\n"},
		// Zone lookup and a zone that does not hold the plan's members.
		{"plan: no such zone", []string{"cutover", "plan", "otherzone.yaml", "--aws-endpoint", api}, 1,
			"crossfade: zone example.org: not found among the 1 zones the provider manages\n"},
		{"plan: member not published", []string{"cutover", "plan", "unpublished.yaml", "--aws-endpoint", api}, 1,
			"crossfade: the zone is not ready for this cutover:\n" +
				"  app.example.com A [red]: no such record set in zone example.com: the member must be published before a cutover moves it\n" +
				"  app.example.com AAAA [red]: no such record set in zone example.com: the member must be published before a cutover moves it\n"},
		// Cutover refusals: the cutover and its journal, once.
		{"status: never ran", []string{"cutover", "status", "plan.yaml", "--state-dir", state}, 1,
			"crossfade: cutover app has not run here: no journal at {DIR}/state/app.journal (is --state-dir the one its run used?)\n"},
		{"abort: never ran", []string{"cutover", "abort", "plan.yaml", "--state-dir", state, "--aws-endpoint", api}, 1,
			"crossfade: cutover app: abort refused: it has not run here: no journal at {DIR}/state/app.journal (is --state-dir the one its run used?)\n"},
		// Manifests: the flag, then the file.
		{"sync: no such manifests", []string{"sync", "--manifests", "missing", "--txt-owner-id", "blue", "--aws-endpoint", api}, 1,
			"crossfade: --manifests: stat missing: no such file or directory\n"},
		{"sync: empty manifests directory", []string{"sync", "--manifests", "empty", "--txt-owner-id", "blue", "--aws-endpoint", api}, 1,
			"crossfade: --manifests: directory empty holds no manifest: no *.yaml, *.yml or *.json file below it (it is empty); " +
				"an empty directory would read as a cluster without objects and delete every record the owner published\n"},
		{"sync --strict: a name without a zone", []string{"sync", "--manifests", "nozone", "--txt-owner-id", "web", "--aws-endpoint", api, "--strict"}, 1,
			"crossfade: --strict: 1 finding (listed above)\n"},
		// Flag values: the command, the flag and the value.
		{"sync: bad policy", []string{"sync", "--manifests", "blue", "--txt-owner-id", "blue", "--policy", "bogus"}, 2,
			"crossfade sync: --policy \"bogus\": want sync, upsert-only or create-only\nRun 'crossfade sync --help' for usage.\n"},
		{"verify: bad type", []string{"verify", "--type", "MX", "--dns-server", "{DNS}", "app.example.com"}, 2,
			"crossfade verify: --type \"MX\": want A, AAAA or CNAME\nRun 'crossfade verify --help' for usage.\n"},
		// verify: the record set (or the Cloud Map service) once.
		{"verify: alias target unresolved", []string{"verify", "app.example.com", "--dns-server", "{DNS}", "--aws-endpoint", api, "--queries", "10"}, 1,
			"crossfade: verify app.example.com/A: member blue is an alias to k8s-shop-appblue-1234567890.us-east-1.elb.amazonaws.com, " +
				"which could not be resolved to attribute its answers: resolve A k8s-shop-appblue-1234567890.us-east-1.elb.amazonaws.com: " +
				"{DNS} refuses it, and a loopback server is not followed by the system resolver\n"},
		{"verify: no such record set", []string{"verify", "www.example.com", "--dns-server", "{DNS}", "--aws-endpoint", api}, 1,
			"crossfade: verify www.example.com A: zone example.com has no weighted record set of that name and type\n"},
		{"verify: no zone", []string{"verify", "app.example.org", "--dns-server", "{DNS}", "--aws-endpoint", api}, 1,
			"crossfade: verify app.example.org: no zone among the 1 the provider manages holds this name\n"},
		{"verify: no such Cloud Map namespace", []string{"verify", "--cloudmap-service", "apps.local/api", "--cloudmap-endpoint", api}, 1,
			"crossfade: verify: discover instances of apps.local/api: operation error ServiceDiscovery: DiscoverInstances, " +
				"https response error StatusCode: 400, RequestID: ID, NamespaceNotFound: No namespace exists with the specified name: apps.local\n"},
		// The controller's Kubernetes configuration: the flag and the file once, or what
		// was looked for when no file was named.
		{"controller: no such kubeconfig", []string{"controller", "--txt-owner-id", "blue", "--source", "service", "--kubeconfig", "missing.yaml"}, 1,
			"crossfade: --kubeconfig: stat missing.yaml: no such file or directory\n"},
		{"controller: no kubeconfig at all", []string{"controller", "--txt-owner-id", "blue", "--source", "service"}, 1,
			"crossfade: no --kubeconfig given and not in a cluster: invalid configuration: no configuration has been provided, " +
				"try setting KUBERNETES_MASTER environment variable\n"},
		// The sandbox: the listener or the state file, and its address or path once.
		{"sandbox: API port taken", []string{"sandbox", "--api", "{BUSY}", "--dns", "127.0.0.1:0"}, 1,
			"crossfade: --api: listen tcp {BUSY}: bind: address already in use\n"},
		{"sandbox: DNS port taken", []string{"sandbox", "--api", "127.0.0.1:0", "--dns", "{DNS}"}, 1,
			"crossfade: --dns: listen tcp {DNS}: bind: address already in use\n"},
		{"sandbox: state file's directory missing", []string{"sandbox", "--api", "127.0.0.1:0", "--dns", "127.0.0.1:0", "--state", "missing/state.db"}, 1,
			"crossfade: state file: open missing/state.db: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expand := strings.NewReplacer("{DIR}", dir, "{API}", api, "{DNS}", sb.DNSAddr(), "{BUSY}", busy.Addr().String())
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = expand.Replace(a)
			}
			code, _, stderr := runBinary(t, bin, dir, args...)
			for _, v := range variable {
				stderr = v.re.ReplaceAllString(stderr, v.with)
			}
			if want := expand.Replace(tc.stderr); code != tc.code || stderr != want {
				t.Errorf("crossfade %s: exit %d, want %d\nstderr:\n%s\nwant:\n%s", strings.Join(args, " "), code, tc.code, stderr, want)
			}
		})
	}
}
