package lbc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// runBound bounds one `crossfade cutover run`; a failure bound (the plan takes about ten
// seconds), so that a hang ends the test with the output so far.
const runBound = 3 * time.Minute

// cutoverPlan writes the plan moving the rule and the listener from blue to green in
// 1 → 10 → 50 → 100 % steps held for pause each, gated on target health (two healthy
// targets in each group that has weight) and on the traffic CloudWatch counts.
func cutoverPlan(t *testing.T, a *cutovertest.ALB, name, pause string) string {
	t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: %s
spec:
  alb:
    listenerRules: [%s, %s]
    from: blue
    to: green
    cloudWatch: {delay: 0s}
  steps: [1, 10, 50, 100]
  pause: %s
  gates:
    - name: healthy
      targetHealth: {minHealthy: 2}
    - name: traffic
      albTraffic: {period: 1, tolerance: 0.1, minRequests: 50, maxErrorRate: 0.01, maxResponseTime: 500ms}
`, name, a.Rule, a.Listener, pause)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cutoverCmd is `crossfade cutover ARGS` against the sandbox with throw-away credentials
// and no instance metadata, not yet started; its output goes to the returned buffer.
func cutoverCmd(t *testing.T, sb *sandbox.Sandbox, state string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	args = append([]string{"cutover"}, append(args, "--state-dir", state, "--aws-endpoint", sb.APIURL(), "--log-level", "warn")...)
	cmd := exec.Command(controllertest.Binary(t), args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// running is a started crossfade command, killed and waited for when the test ends if it
// is still running then (a test that fails half-way leaves nothing behind).
type running struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
	err  error
}

// start starts cmd, whose output goes to out.
func start(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) *running {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start crossfade %v: %v", cmd.Args[1:], err)
	}
	r := &running{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait waits for the command to end (killing it after runBound) and returns its exit code.
func (r *running) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(runBound):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("crossfade %v did not finish within %s:\n%s", r.cmd.Args[1:], runBound, r.out)
	}
	return r.cmd.ProcessState.ExitCode()
}

// blueGreen is the field report's setup: the ALB made outside, two clusters each with
// the real controller binding its two pods into its own group, every target healthy.
type blueGreen struct {
	sb    *sandbox.Sandbox
	alb   *cutovertest.ALB
	addr  string
	be    *backends
	green *cluster
}

func newBlueGreen(t *testing.T) *blueGreen {
	t.Helper()
	sb := startSandbox(t)
	api := elbClient(sb)
	a, addr := newALB(t, api, sb)
	be := newBackends(t, sb)
	be.add("blue", "192.0.2.11", "192.0.2.12")
	be.add("green", "192.0.2.21", "192.0.2.22", "192.0.2.23", "192.0.2.24")
	blue, green := newCluster(t, "blue", sb.APIURL()), newCluster(t, "green", sb.APIURL())
	for _, c := range []struct {
		cl  *cluster
		ips []string
	}{{blue, []string{"192.0.2.11", "192.0.2.12"}}, {green, []string{"192.0.2.21", "192.0.2.22"}}} {
		c.cl.service(t, "shop", false)
		c.cl.scale(t, "shop", c.ips...)
		c.cl.binding(t, "shop", "shop", a.Groups[c.cl.name], "ip", false)
	}
	waitHealth(t, api, "blue", a.Groups["blue"], "192.0.2.11:8080=healthy", "192.0.2.12:8080=healthy")
	waitHealth(t, api, "green", a.Groups["green"], "192.0.2.21:8080=healthy", "192.0.2.22:8080=healthy")
	return &blueGreen{sb: sb, alb: a, addr: addr, be: be, green: green}
}

// TestCutoverWithController: `crossfade cutover run` with the ALB lever, the target-health
// and the ALB traffic gates moves the rule's and the listener's weights from blue=100
// green=0 to blue=0 green=100 over targets the real controller registered from two real
// clusters, under live requests, with no failed request. Green scaled up (an EndpointSlice
// change) before the run is registered by its controller and counted by the target-health
// gate (`cutover plan` says so); scaled up again during the run, the new pod is registered
// and turns healthy too.
func TestCutoverWithController(t *testing.T) {
	began := time.Now()
	bg := newBlueGreen(t)
	l := cutovertest.StartLoad(t, bg.addr, groupHeader, 4, 5*time.Millisecond)
	// CloudWatch answers whole periods only: the traffic gate's first read must find the
	// loop's requests in a second that has ended.
	for l.Total() < 100 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	state := t.TempDir()
	planFile := cutoverPlan(t, bg.alb, "shop", "2s")
	// Green scales up before the cutover: its controller registers the new pod, and the
	// target-health gate counts it once its health checks pass.
	bg.green.scale(t, "shop", "192.0.2.21", "192.0.2.22", "192.0.2.23")
	waitHealth(t, bg.alb.API, "green", bg.alb.Groups["green"], "192.0.2.21:8080=healthy", "192.0.2.22:8080=healthy", "192.0.2.23:8080=healthy")
	cmd, out := cutoverCmd(t, bg.sb, state, "plan", planFile)
	if code := start(t, cmd, out).wait(t); code != 0 {
		t.Fatalf("cutover plan exited %d:\n%s", code, out)
	}
	for _, want := range []string{"current weights blue=100 green=0", "target group green: 3 healthy of 3 targets", "gate healthy (targetHealth) now: pass"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cutover plan does not say %q:\n%s", want, out)
		}
	}
	cmd, out = cutoverCmd(t, bg.sb, state, "run", planFile)
	runStart := time.Now()
	run := start(t, cmd, out)
	// And again while the weights move.
	bg.green.scale(t, "shop", "192.0.2.21", "192.0.2.22", "192.0.2.23", "192.0.2.24")
	code := run.wait(t)
	runTook := time.Since(runStart)
	waitHealth(t, bg.alb.API, "green", bg.alb.Groups["green"], "192.0.2.21:8080=healthy", "192.0.2.22:8080=healthy", "192.0.2.23:8080=healthy", "192.0.2.24:8080=healthy")
	l.Halt()
	if code != 0 {
		t.Fatalf("cutover run exited %d:\n%s", code, out)
	}
	l.Check(t)
	if rule, listener := bg.alb.Weights(t); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("final weights: rule %s, listener %s; want blue=0 green=100 on both", rule, listener)
	}
	if !strings.Contains(out.String(), "cutover shop: completed") {
		t.Errorf("cutover run did not say it completed:\n%s", out)
	}
	t.Logf("cutover run took %s, the whole test %s", runTook.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// TestCutoverWithControllerRollsBack: one of green's two pods starts failing its health
// check once the first step (1 %) is in effect; the ALB's health checks mark it unhealthy,
// the target-health gate (two healthy wanted) fails the second step during its hold, and
// the cutover rolls the rule and the listener back to blue=100 green=0, with no failed
// request on the way (the ALB stops sending to the unhealthy target). The steps' pause is
// long (a failure bound): the gate fails the step as soon as DescribeTargetHealth says
// unhealthy, whenever that is, and a step that passed instead would fail the test.
func TestCutoverWithControllerRollsBack(t *testing.T) {
	bg := newBlueGreen(t)
	l := cutovertest.StartLoad(t, bg.addr, groupHeader, 4, 5*time.Millisecond)
	for l.Total() < 100 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	state := t.TempDir()
	cmd, out := cutoverCmd(t, bg.sb, state, "run", cutoverPlan(t, bg.alb, "shop-fails", "2m"))
	run := start(t, cmd, out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	broke := make(chan bool, 1)
	go func() {
		// Owned by this test: ends once green is broken or the run has ended (cancel).
		for {
			entries, _ := journal.Read(cutover.PathsFor(state, "shop-fails").Journal)
			for _, e := range entries {
				if e.Kind == "insync" && e.Step == 0 {
					bg.be.unhealthy["192.0.2.21"].Store(true)
					broke <- true
					return
				}
			}
			select {
			case <-ctx.Done():
				broke <- false
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	code := run.wait(t)
	cancel()
	reached := <-broke
	l.Halt()
	if !reached {
		t.Fatalf("the run never had its first step in effect (exit %d):\n%s", code, out)
	}
	if code == 0 {
		t.Fatalf("cutover run exited 0, want a rollback:\n%s", out)
	}
	l.Check(t)
	if rule, listener := bg.alb.Weights(t); rule != "blue=100 green=0" || listener != "blue=100 green=0" {
		t.Errorf("weights after the rollback: rule %s, listener %s; want blue=100 green=0 on both", rule, listener)
	}
	for _, want := range []string{"gate healthy", "green: 1 healthy of 2 targets"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cutover run does not say %q:\n%s", want, out)
		}
	}
	waitHealth(t, bg.alb.API, "green", bg.alb.Groups["green"], "192.0.2.21:8080=unhealthy", "192.0.2.22:8080=healthy")
	t.Logf("cutover run:\n%s", out)
}
