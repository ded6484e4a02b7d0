package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	r53 "github.com/aws/aws-sdk-go-v2/service/route53"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestKeepHint: the --keep hint's commands carry everything they need on their line, and
// dig gets the DNS server's port as -p (also for an IPv6 address).
func TestKeepHint(t *testing.T) {
	for _, tc := range []struct {
		name, dnsAddr string
		want          []string
	}{
		{"ipv4", "127.0.0.1:10053", []string{
			"  dashboard   http://127.0.0.1:8080/\n",
			" --endpoint-url http://127.0.0.1:10080 route53 list-resource-record-sets --hosted-zone-id ZDEMO123\n",
			"AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_DEFAULT_REGION=us-east-1 " + awsCLI() + " --endpoint-url",
			"  DNS         dig @127.0.0.1 -p 10053 app.demo.crossfade.test\n",
			"  state dir   /tmp/crossfade-demo-1/state\n",
			"  status      crossfade cutover status /tmp/plan.yaml --state-dir /tmp/crossfade-demo-1/state\n",
			"  plan file   /tmp/plan.yaml\n",
		}},
		{"ipv6", "[::1]:10053", []string{"dig @::1 -p 10053 app.demo.crossfade.test\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keepHint("http://127.0.0.1:8080/", "http://127.0.0.1:10080", "ZDEMO123", tc.dnsAddr, "/tmp/plan.yaml", "/tmp/crossfade-demo-1/state")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hint lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "<id>") {
				t.Errorf("hint has a placeholder:\n%s", got)
			}
		})
	}
}

// TestKeepHintWorksAsPrinted runs the demo with --keep and reads the hint it prints once
// the cutover is over: the Route 53 command names the zone id the sandbox really has
// (asked of its API by another client), and, with Debian's AWS CLI installed, the command
// run as printed (sh -c) lists the zone's records with the weights the cutover left; the
// dig command, run likewise, gets the green cluster's address. Ctrl-C (ctx) then ends the
// demo cleanly.
func TestKeepHintWorksAsPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole demo")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := &lines{ch: make(chan string, 1000)}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Keep: true, Pause: time.Second, Out: out})
		done <- err
	}()
	var printed []string
	hint := map[string]string{}
	for hint["plan file"] == "" {
		select {
		case l := <-out.ch:
			printed = append(printed, l)
			if after, ok := strings.CutPrefix(l, "  "); ok && len(after) > 12 {
				hint[strings.TrimSpace(after[:12])] = after[12:]
			}
		case err := <-done:
			t.Fatalf("the demo ended before its --keep hint: %v\n%s", err, strings.Join(printed, "\n"))
		case <-ctx.Done():
			t.Fatalf("no --keep hint:\n%s", strings.Join(printed, "\n"))
		}
	}
	// Keep draining: the publishers may still print.
	go func() {
		for range out.ch {
		}
	}()
	route53Cmd, digCmd := hint["Route 53"], hint["DNS"]
	t.Logf("printed:\n  %s\n  %s", route53Cmd, digCmd)

	m := regexp.MustCompile(`--endpoint-url (\S+) .*--hosted-zone-id (\S+)$`).FindStringSubmatch(route53Cmd)
	if m == nil {
		t.Fatalf("the Route 53 hint names no endpoint and zone id: %q", route53Cmd)
	}
	endpoint, printedID := m[1], m[2]
	client := r53.New(r53.Options{BaseEndpoint: aws.String(endpoint), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	zones, err := client.ListHostedZonesByName(ctx, &r53.ListHostedZonesByNameInput{DNSName: aws.String(zoneName)})
	if err != nil {
		t.Fatalf("list the sandbox's zones at %s: %v", endpoint, err)
	}
	if len(zones.HostedZones) == 0 || aws.ToString(zones.HostedZones[0].Name) != zoneName+"." {
		t.Fatalf("the sandbox at %s has no zone %s: %+v", endpoint, zoneName, zones.HostedZones)
	}
	if realID := strings.TrimPrefix(aws.ToString(zones.HostedZones[0].Id), "/hostedzone/"); printedID != realID {
		t.Errorf("the hint names zone id %q, the sandbox's zone %s is %q", printedID, zoneName, realID)
	}

	t.Run("aws", func(t *testing.T) {
		testenv.File(t, debianAWS, "the AWS CLI is not installed: install the Debian package awscli (scripts/deps.sh test does)")
		var rs struct {
			ResourceRecordSets []struct {
				Name, Type, SetIdentifier string
				Weight                    *int64
			}
		}
		if err := json.Unmarshal(runPrinted(t, ctx, route53Cmd), &rs); err != nil {
			t.Fatalf("the aws command's output is not the JSON of list-resource-record-sets: %v", err)
		}
		got := map[string]int64{}
		for _, r := range rs.ResourceRecordSets {
			if r.Name == appName+"." && r.Type == "A" && r.Weight != nil {
				got[r.SetIdentifier] = *r.Weight
			}
		}
		if len(got) != 2 || got["blue"] != 0 || got["green"] != 100 {
			t.Errorf("the aws command lists %s A weights %v, want blue 0 and green 100", appName, got)
		}
	})
	t.Run("status", func(t *testing.T) {
		checkStatusAsPrinted(t, hint["status"], "demo", hint["plan file"], hint["state dir"])
	})
	t.Run("dig", func(t *testing.T) {
		testenv.LookPath(t, "dig", "bind9-dnsutils")
		if answer := string(runPrinted(t, ctx, digCmd)); !regexp.MustCompile(`(?m)^app\.demo\.crossfade\.test\.\s+\d+\s+IN\s+A\s+127\.0\.0\.3$`).MatchString(answer) {
			t.Errorf("dig does not answer green's address 127.0.0.3:\n%s", answer)
		}
	})

	cancel()
	if err := <-done; err != nil {
		t.Errorf("the demo after Ctrl-C: %v", err)
	}
}

// runPrinted runs a command line as a user pastes it into a shell. The AWS variables and
// the home directory (~/.aws) of whoever runs the test are left out, so that only what the
// line says counts.
func runPrinted(t *testing.T, ctx context.Context, line string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", line, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// lines is an io.Writer for the demo's output that hands each complete line to ch; the
// demo writes from several goroutines.
type lines struct {
	mu      sync.Mutex
	partial []byte
	ch      chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.ch <- string(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
}

// checkStatusAsPrinted runs the --keep hint's `cutover status` line as the command does
// (cmd/crossfade's statusCmd: load the plan file, read the status under --state-dir,
// render it) and wants it to find the demo's completed run, not "has not run here".
func checkStatusAsPrinted(t *testing.T, line, cutoverName, planFile, stateDir string) {
	t.Helper()
	args := strings.Fields(line)
	if len(args) != 6 || strings.Join(args[:3], " ") != "crossfade cutover status" || args[4] != "--state-dir" {
		t.Fatalf("the status hint is not `crossfade cutover status FILE --state-dir DIR`: %q", line)
	}
	if args[3] != planFile || args[5] != stateDir {
		t.Errorf("the status hint names %s and %s, the hint's plan file and state dir are %s and %s", args[3], args[5], planFile, stateDir)
	}
	p, err := spec.Load(args[3])
	if err != nil {
		t.Fatalf("the printed plan file: %v", err)
	}
	st, err := cutover.ReadStatus(args[5], p.Name)
	if err != nil {
		t.Fatalf("cutover status as printed: %v", err)
	}
	var out bytes.Buffer
	st.PlanFile = args[3]
	if err := render.Status(&out, st); err != nil {
		t.Fatal(err)
	}
	if p.Name != cutoverName || st.Outcome != "completed" || !strings.Contains(out.String(), "cutover "+cutoverName) {
		t.Errorf("cutover status as printed: plan %s, outcome %q, want %s completed:\n%s", p.Name, st.Outcome, cutoverName, out.String())
	}
}
