// Package e2e runs crossfade's end-to-end tests against real programs: the AWS CLI, dig
// and the crossfade binary itself. `make test` installs them; `go test -short` skips these.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox"
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

// startSandbox runs a sandbox on free loopback ports for the test's lifetime.
func startSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	if cfg.APIAddr == "" {
		cfg.APIAddr = "127.0.0.1:0"
	}
	if cfg.DNSAddr == "" {
		cfg.DNSAddr = "127.0.0.1:0"
	}
	sb, err := sandbox.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb
}

// cli runs the real AWS CLI against a sandbox with throw-away credentials.
type cli struct {
	t        *testing.T
	endpoint string
	home     string
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
