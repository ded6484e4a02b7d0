package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

// cutoverZone publishes blue's and green's weighted members of app.example.com (TTL 1 s)
// with `crossfade sync`, as their two clusters would.
func cutoverZone(t *testing.T, blueWeight, greenWeight int) (*sandbox.Sandbox, *cli, string) {
	t.Helper()
	sb, aws, zone := exampleZone(t)
	syncMember(t, sb, "blue", blueWeight)
	syncMember(t, sb, "green", greenWeight)
	return sb, aws, zone
}

// cutoverPlan writes a plan moving app.example.com from → to in 0/10/50/100 % steps of
// 1 s, gated on the authoritative answers.
func cutoverPlan(t *testing.T, sb *sandbox.Sandbox, name, from, to string) string {
	t.Helper()
	return cutovertest.DNSPlan(t, name, from, to, sb.DNSAddr())
}

// cutoverCmd is `crossfade cutover ARGS` against sb, not yet started.
func cutoverCmd(t *testing.T, sb *sandbox.Sandbox, stateDir string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	args = append([]string{"cutover"}, append(args, "--state-dir", stateDir, "--aws-endpoint", sb.APIURL(), "--log-level", "warn")...)
	return crossfadeCmd(context.Background(), t, args...)
}

// runCutover runs `crossfade cutover ARGS` to its end and returns its output and exit code.
func runCutover(t *testing.T, sb *sandbox.Sandbox, stateDir string, args ...string) (string, int) {
	t.Helper()
	cmd, out := cutoverCmd(t, sb, stateDir, args...)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("crossfade cutover %v did not finish:\n%s", args, out)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// weightsOf lists app.example.com's A weights by set identifier with the AWS CLI.
func (c *cli) weightsOf(zone string) map[string]int {
	c.t.Helper()
	var out struct {
		ResourceRecordSets []struct {
			Name, Type, SetIdentifier string
			Weight                    *int
		}
	}
	c.must(&out, "route53", "list-resource-record-sets", "--hosted-zone-id", zone)
	w := map[string]int{}
	for _, s := range out.ResourceRecordSets {
		if s.Name == "app.example.com." && s.Type == "A" && s.Weight != nil {
			w[s.SetIdentifier] = *s.Weight
		}
	}
	return w
}

// TestCutoverCLI drives plan, run, status, promote and the refusal of a bad plan file
// through the binary.
func TestCutoverCLI(t *testing.T) {
	sb, aws, zone := cutoverZone(t, 100, 0)
	state := t.TempDir()
	planFile := cutoverPlan(t, sb, "app", "blue", "green")

	out, code := runCutover(t, sb, state, "plan", planFile, "--batches")
	if code != 0 || !strings.Contains(out, "step 3 of 4: blue=50 green=50") || !strings.Contains(out, `"Weight": 50`) ||
		!strings.Contains(out, "owned by blue") {
		t.Fatalf("plan exited %d:\n%s", code, out)
	}
	if w := aws.weightsOf(zone); w["blue"] != 100 {
		t.Fatalf("plan changed the zone: %v", w)
	}

	// promote skips the remaining pauses: a plan with 10 s pauses ends within seconds.
	slow := strings.Replace(readFile(t, planFile), "pause: 1s", "pause: 10s", 1)
	writeFile(t, planFile, slow)
	ui := freeLoopbackAddr(t)
	cmd, runOut := cutoverCmd(t, sb, state, "run", planFile, "--ui", ui)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(2 * time.Second)
	// The live view serves the run's state while it runs.
	if resp, err := http.Get("http://" + ui + "/api/v1/state"); err != nil {
		t.Errorf("run --ui: %v", err)
	} else {
		var st struct {
			Cutover string
			Current struct{ Phase string }
		}
		err := json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || st.Cutover != "app" || st.Current.Phase == "" {
			t.Errorf("run --ui state: %+v, %v", st, err)
		}
	}
	if out, code := runCutover(t, sb, state, "status", planFile); code != 0 || !strings.Contains(out, "cutover app: unfinished") {
		t.Errorf("status while running (%d):\n%s", code, out)
	}
	if out, code := runCutover(t, sb, state, "promote", planFile); code != 0 || !strings.Contains(out, "promote sent") {
		t.Fatalf("promote (%d): %s", code, out)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("run after promote: %v\n%s", err, runOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("promoted run did not end:\n%s", runOut)
	}
	if w := aws.weightsOf(zone); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("weights after promote %v", w)
	}
	if !strings.Contains(runOut.String(), "promote by") {
		t.Errorf("report lacks the promote:\n%s", runOut)
	}
	// An ended cutover takes no more commands, and one that never ran here none either.
	if out, code := runCutover(t, sb, state, "pause", planFile); code == 0 || !strings.Contains(out, "has ended (completed)") {
		t.Errorf("pause after the end (%d): %s", code, out)
	}
	if out, code := runCutover(t, sb, t.TempDir(), "pause", planFile); code == 0 || !strings.Contains(out, "has not run here") {
		t.Errorf("pause of a cutover never run (%d): %s", code, out)
	}
	// A damaged journal is reported as such, not taken for a cutover that never ran.
	damaged := t.TempDir()
	writeFile(t, filepath.Join(damaged, "app.journal"), "{not json}\n{\"seq\":2}\n")
	if out, code := runCutover(t, sb, damaged, "pause", planFile); code == 0 || !strings.Contains(out, "entry after seq 0") || strings.Contains(out, "has not run here") {
		t.Errorf("pause with a damaged journal (%d): %s", code, out)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, bad, strings.Replace(readFile(t, planFile), "steps: [0, 10, 50, 100]", "steps: [0, 10, 500]", 1))
	if out, code := runCutover(t, sb, state, "plan", bad); code == 0 || !strings.Contains(out, "spec.steps[2]") || !strings.Contains(out, "500") {
		t.Errorf("bad plan (%d):\n%s", code, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// freeLoopbackAddr returns a loopback address with a port nobody listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestCutoverWriteRetryFlag: the binary retries a step's write that Route 53 keeps
// throttling past the SDK's own attempts for as long as `run --write-retry-for` says, no
// longer, then stops with the error and leaves the journal for `run --resume`, which
// completes once the throttling is over.
func TestCutoverWriteRetryFlag(t *testing.T) {
	sb, aws, zone := cutoverZone(t, 100, 0)
	state := t.TempDir()
	planFile := cutoverPlan(t, sb, "app", "blue", "green")
	sandboxtest.SetFaults(t, sb, `{"throttleRate":1,"operations":["ChangeResourceRecordSets"]}`)
	out, code := runCutover(t, sb, state, "run", planFile, "--write-retry-for", "2s")
	if code == 0 {
		t.Fatalf("run completed with every write throttled:\n%s", out)
	}
	// The SDK's own 4 attempts back off for seconds, so the bound is reached on the first
	// or second engine attempt; the engine's retries themselves are internal/cutover's
	// tests.
	mustContain(t, "run output", out, "gave up after", "a forward write is retried for 2s", "Throttling")
	if w := aws.weightsOf(zone); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("weights after the run gave up: %v, want blue=100 green=0", w)
	}
	sandboxtest.SetFaults(t, sb, `{}`)
	if out, code := runCutover(t, sb, state, "run", planFile, "--resume"); code != 0 {
		t.Fatalf("resume after the throttling (%d):\n%s", code, out)
	}
	if w := aws.weightsOf(zone); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("weights after the resume: %v, want blue=0 green=100", w)
	}
}
