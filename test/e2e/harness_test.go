// Package e2e runs crossfade's end-to-end tests against real programs: the AWS CLI, dig
// and the crossfade binary itself. `make test` installs them; `go test -short` skips these.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// awsBin is Debian's AWS CLI v2; an older pyenv aws 1.x may come first on PATH.
const awsBin = "/usr/bin/aws"

func needTool(t *testing.T, path, pkg string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("%s not found: install Debian package %s (scripts/deps.sh test does)", path, pkg)
	}
}

func TestMain(m *testing.M) { controllertest.Main(m) }

// crossfadeBinary builds cmd/crossfade once per test run.
func crossfadeBinary(t *testing.T) string { return controllertest.Binary(t) }

// crossfadeEnv is the environment the crossfade binary runs in against a sandbox:
// throw-away credentials, and no shared config or instance metadata, so that nothing of
// the machine's own AWS setup can reach a real account.
func crossfadeEnv() []string {
	return append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
}

// crossfadeCmd is `crossfade ARGS` in crossfadeEnv, not yet started, its stdout and
// stderr both written to the returned buffer.
func crossfadeCmd(ctx context.Context, t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, crossfadeBinary(t), args...)
	cmd.Env = crossfadeEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// runResult is the output and exit status of one crossfade process.
type runResult struct {
	out  string
	exit int
}

// runCrossfade runs `crossfade ARGS` to its end (2 minutes at the most); a non-zero exit
// is returned, not fatal.
func runCrossfade(t *testing.T, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, out := crossfadeCmd(ctx, t, args...)
	err := cmd.Run()
	if testing.Verbose() {
		t.Logf("crossfade %s:\n%s", strings.Join(args, " "), out.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return runResult{out: out.String(), exit: exit.ExitCode()}
	case err != nil:
		t.Fatalf("crossfade %s: %v: %s", args[0], err, out.String())
	}
	return runResult{out: out.String()}
}

// writeFile writes content to path, failing the test if it cannot.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// writePlan writes a cutover plan as NAME.yaml in a fresh directory and returns its path.
func writePlan(t *testing.T, name, plan string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, path, plan)
	return path
}

// demoRun is a running `crossfade demo`: its stdout line by line, and its end.
type demoRun struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	lines  chan string // stdout, closed when it ends
	exited chan error  // the process's end, after lines is closed
}

// startDemo runs `crossfade demo ARGS` as CI does (CI=true); it is killed when the test ends.
func startDemo(t *testing.T, args ...string) *demoRun {
	t.Helper()
	cmd := exec.Command(crossfadeBinary(t), append([]string{"demo"}, args...)...)
	cmd.Env = append(os.Environ(), "CI=true")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &demoRun{cmd: cmd, stderr: &bytes.Buffer{}, lines: make(chan string, 1000), exited: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
		d.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return d
}

// interrupt sends the demo Ctrl-C, as a person stops it, and fails the test unless it
// then exits 0 within bound (a failure bound, not a measurement).
func (d *demoRun) interrupt(t *testing.T, bound time.Duration) {
	t.Helper()
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range d.lines {
		}
	}()
	select {
	case err := <-d.exited:
		if err != nil {
			t.Errorf("the demo after Ctrl-C: %v", err)
		}
	case <-time.After(bound):
		t.Fatal("the demo did not stop after Ctrl-C")
	}
}

// startSandbox runs a sandbox on free loopback ports for the test's lifetime.
func startSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	return sandboxtest.StartWith(t, cfg)
}

// cli runs the real AWS CLI against a sandbox with throw-away credentials.
type cli struct {
	t        *testing.T
	endpoint string
	home     string
	env      []string // added to the CLI's environment
}

func newCLI(t *testing.T, sb *sandbox.Sandbox) *cli {
	needTool(t, awsBin, "awscli")
	return &cli{t: t, endpoint: sb.APIURL(), home: t.TempDir()}
}

// run returns stdout, or the CLI's stderr as the error.
func (c *cli) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, awsBin, append(args, "--endpoint-url", c.endpoint, "--output", "json")...)
	cmd.Env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE="+filepath.Join(c.home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(c.home, "credentials"),
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
	cmd.Env = append(cmd.Env, c.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func (c *cli) must(into any, args ...string) {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(out), into); err != nil {
			c.t.Fatalf("aws %s: decode %q: %v", strings.Join(args, " "), out, err)
		}
	}
}

func (c *cli) createZone(name string) string {
	c.t.Helper()
	var out struct{ HostedZone struct{ Id string } }
	c.must(&out, "route53", "create-hosted-zone", "--name", name, "--caller-reference", name+"-"+fmt.Sprint(time.Now().UnixNano()))
	return strings.TrimPrefix(out.HostedZone.Id, "/hostedzone/")
}

// batchFile writes a change batch for file:// use.
func (c *cli) batchFile(batch string) string {
	c.t.Helper()
	f, err := os.CreateTemp(c.home, "batch-*.json")
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := f.WriteString(batch); err != nil {
		c.t.Fatal(err)
	}
	f.Close()
	return "file://" + f.Name()
}

// dig runs dig against the sandbox's DNS server.
func dig(t *testing.T, sb *sandbox.Sandbox, args ...string) string {
	t.Helper()
	needTool(t, "dig", "bind9-dnsutils")
	host, port, _ := net.SplitHostPort(sb.DNSAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dig", append([]string{"@" + host, "-p", port, "+time=2", "+tries=1"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %v: %v: %s", args, err, out)
	}
	return string(out)
}
