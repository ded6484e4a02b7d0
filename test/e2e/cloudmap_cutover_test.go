package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// cmPerCluster is how many instances each cluster registers: with 9 and 9, the steps 10,
// 50 and 100 % are exactly 1 of 10, 9 of 18 and 9 of 9 healthy instances of green.
const cmPerCluster = 9

// cutCloudMap is a sandbox with one HTTP namespace and one service with custom health,
// into which blue and green each register cmPerCluster instances (cluster attribute), and
// a foreign instance of another environment that the clients' query does not select.
type cutCloudMap struct {
	t     *testing.T
	sb    *sandbox.Sandbox
	c     *sd.Client
	svcID string
}

// newSDClient is an aws-sdk-go-v2 Cloud Map client for sb, the "data-" host prefix of
// DiscoverInstances turned off inside the client's stack.
func newSDClient(sb *sandbox.Sandbox) *sd.Client {
	return sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}}})
}

func newCutCloudMap(t *testing.T, healthDelay time.Duration) *cutCloudMap {
	t.Helper()
	sb := startSandbox(t, sandbox.Config{CloudMapHealthDelay: healthDelay})
	m := &cutCloudMap{t: t, sb: sb, c: newSDClient(sb)}
	ctx := context.Background()
	m.svcID = aws.ToString(sandboxtest.CloudMapService(t, m.c, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}}).Id)
	register := func(id, cluster, env string, ip int) {
		t.Helper()
		if _, err := m.c.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.svcID), InstanceId: aws.String(id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": fmt.Sprintf("10.0.0.%d", ip), "AWS_INSTANCE_PORT": "50051",
				"cluster": cluster, "env": env, "crossfade.io/owner": cluster}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cmPerCluster {
		register(fmt.Sprintf("blue-%d", i+1), "blue", "prod", 10+i)
		register(fmt.Sprintf("green-%d", i+1), "green", "prod", 100+i)
	}
	register("canary-1", "blue", "staging", 200)
	// Before the cutover, green's instances are registered but out of the answers.
	for i := range cmPerCluster {
		m.setHealth(fmt.Sprintf("green-%d", i+1), "UNHEALTHY")
	}
	m.waitHealth(map[string]int{"blue": cmPerCluster, "green": 0})
	return m
}

func (m *cutCloudMap) setHealth(id, status string) {
	m.t.Helper()
	if _, err := m.c.UpdateInstanceCustomHealthStatus(context.Background(), &sd.UpdateInstanceCustomHealthStatusInput{
		ServiceId: aws.String(m.svcID), InstanceId: aws.String(id), Status: sdtypes.CustomHealthStatus(status)}); err != nil {
		m.t.Fatal(err)
	}
}

// healthy counts the HEALTHY instances of env=prod by cluster, as in effect.
func (m *cutCloudMap) healthy() map[string]int {
	m.t.Helper()
	out, err := m.c.DiscoverInstances(context.Background(), &sd.DiscoverInstancesInput{NamespaceName: aws.String("apps"), ServiceName: aws.String("orders"),
		HealthStatus: sdtypes.HealthStatusFilterHealthy, QueryParameters: map[string]string{"env": "prod"}, MaxResults: aws.Int32(1000)})
	if err != nil {
		m.t.Fatal(err)
	}
	got := map[string]int{"blue": 0, "green": 0}
	for _, i := range out.Instances {
		got[i.Attributes["cluster"]]++
	}
	return got
}

func (m *cutCloudMap) waitHealth(want map[string]int) {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := m.healthy()
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("healthy instances %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// plan writes a Cloud Map plan from → to in steps of pause each, gated on what
// DiscoverInstances answers; extra is appended to spec.
func (m *cutCloudMap) plan(name, from, to, steps, pause, extra string) string {
	m.t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: %s
spec:
  cloudMap:
    namespace: apps
    service: orders
    queryParameters: {env: prod}
    healthStatus: HEALTHY_OR_ELSE_ALL
  from: %s
  to: %s
  steps: %s
  pause: %s
  timeouts: {inSync: 1m}
  gates:
    - name: discovery
      cloudMapDiscovery: {tolerance: 0.02}
%s`, name, from, to, steps, pause, extra)
	return writePlan(m.t, name, plan)
}

// cmSample is one DiscoverInstances answer of the client loop.
type cmSample struct {
	at          time.Time
	healthyOnly bool
	blue, green int
}

// cmClients call DiscoverInstances for env=prod continuously from several goroutines,
// alternately with HEALTHY_OR_ELSE_ALL (as the plan's clients) and HEALTHY (which an
// empty healthy set would answer with nothing), and record every answer; an empty answer
// or an error is a failure.
type cmClients struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	samples  []cmSample
	failures []string
	total    atomic.Int64
}

func startCMClients(t *testing.T, sb *sandbox.Sandbox, workers int) *cmClients {
	l := &cmClients{stop: make(chan struct{})}
	c := newSDClient(sb)
	for w := range workers {
		l.wg.Go(func() {
			healthyOnly := w%2 == 1
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				hs := sdtypes.HealthStatusFilterHealthyOrElseAll
				if healthyOnly {
					hs = sdtypes.HealthStatusFilterHealthy
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				out, err := c.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("apps"), ServiceName: aws.String("orders"),
					HealthStatus: hs, QueryParameters: map[string]string{"env": "prod"}, MaxResults: aws.Int32(1000)})
				cancel()
				s := cmSample{at: time.Now(), healthyOnly: healthyOnly}
				l.mu.Lock()
				switch {
				case err != nil:
					l.failures = append(l.failures, fmt.Sprintf("%s: %v", s.at.Format(time.RFC3339Nano), err))
				case len(out.Instances) == 0:
					l.failures = append(l.failures, fmt.Sprintf("%s: empty answer (%s)", s.at.Format(time.RFC3339Nano), hs))
				default:
					for _, i := range out.Instances {
						switch i.Attributes["cluster"] {
						case "blue":
							s.blue++
						case "green":
							s.green++
						}
					}
					l.samples = append(l.samples, s)
				}
				l.mu.Unlock()
				l.total.Add(1)
			}
		})
	}
	return l
}

func (l *cmClients) halt() {
	close(l.stop)
	l.wg.Wait()
}

func (l *cmClients) waitAnswers(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for l.total.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the client loop made %d calls in 30s", l.total.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// share is green's share of the instances answered between from and to, and the number
// of answers it is over.
func (l *cmClients) share(from, to time.Time) (float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var blue, green, n int
	for _, s := range l.samples {
		if s.at.Before(from) || s.at.After(to) {
			continue
		}
		blue, green, n = blue+s.blue, green+s.green, n+1
	}
	if blue+green == 0 {
		return math.NaN(), n
	}
	return float64(green) / float64(blue+green), n
}

// TestCloudMapCutover moves a Cloud Map service's traffic from blue to green by custom
// health status, 10 → 50 → 100 %, with `crossfade cutover plan` and `run`, while clients
// call DiscoverInstances throughout: not one answer is empty (neither HEALTHY_OR_ELSE_ALL
// nor HEALTHY), every step's answers hold green's share exactly (1 of 10, 9 of 18, 9 of
// 9 instances), the staging instance the query does not select keeps its status, and the
// gate reads the same. Custom health takes 300 ms to apply, as Cloud Map's 30 s would.
func TestCloudMapCutover(t *testing.T) {
	m := newCutCloudMap(t, 300*time.Millisecond)
	load := startCMClients(t, m.sb, 4)
	load.waitAnswers(t, 50)
	state := t.TempDir()
	planFile := m.plan("orders", "blue", "green", "[10, 50, 100]", "1s", "")
	out, code := runCutover(t, m.sb, state, "plan", planFile, "--batches")
	if code != 0 {
		t.Fatalf("cutover plan exited %d:\n%s", code, out)
	}
	mustContain(t, "cutover plan", out, "Cloud Map: current weights (HEALTHY instances) blue=9 green=0",
		"cluster blue: 9 HEALTHY of 9 instances", "cluster green: 0 HEALTHY of 9 instances",
		"gate discovery (cloudMapDiscovery) now: pass",
		"aws servicediscovery update-instance-custom-health-status --service-id "+m.svcID+" --instance-id 'green-1' --status HEALTHY")
	out, code = runCutover(t, m.sb, state, "run", planFile)
	load.halt()
	if code != 0 {
		t.Fatalf("cutover run exited %d:\n%s", code, out)
	}
	if len(load.failures) > 0 {
		t.Errorf("%d of %d DiscoverInstances calls failed or were empty; first: %s", len(load.failures), load.total.Load(), load.failures[0])
	}
	if got := m.healthy(); got["blue"] != 0 || got["green"] != cmPerCluster {
		t.Errorf("healthy after the cutover: %v, want blue 0 green %d", got, cmPerCluster)
	}
	canary, err := m.c.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.svcID), Instances: []string{"canary-1"}})
	if err != nil || canary.Status["canary-1"] != sdtypes.HealthStatusHealthy {
		t.Errorf("the staging instance: %v, %v; want HEALTHY, untouched", canary, err)
	}
	mustContain(t, "cutover run", out, "cutover orders: completed", "starting weights: blue=9 green=0")
	windows := cutStepWindows(t, state, "orders")
	for i, want := range []float64{0.1, 0.5, 1} {
		w := windows[i]
		if w[0].IsZero() || w[1].IsZero() {
			t.Fatalf("step %d: no in-effect or passed entry in the journal: %v", i+1, windows)
		}
		got, n := load.share(w[0], w[1])
		if n < 10 || math.Abs(got-want) > 1e-9 {
			t.Errorf("step %d: green had %.3f of the instances in %d answers, want %.2f", i+1, got, n, want)
		}
		t.Logf("step %d: green %.1f%% of the instances in %d answers", i+1, got*100, n)
	}
	rep := readCutReport(t, state, "orders")
	for _, s := range rep.Steps {
		for _, g := range s.Gates {
			if g.Gate == "discovery" && !g.Pass {
				t.Errorf("%s: gate failed: %s", s.Name, g.Detail)
			}
		}
	}
	t.Logf("%d DiscoverInstances calls, %d failed or empty", load.total.Load(), len(load.failures))

	// verify reads the same: green's 9 answer, blue's 9 do not, the staging one is not selected.
	verifyCM := func(expect string) (string, int) {
		r := runCrossfade(t, "verify", "--cloudmap-service", "apps/orders", "--query", "env=prod", "--expect", expect,
			"--aws-endpoint", m.sb.APIURL(), "--log-level", "warn")
		return r.out, r.exit
	}
	out, code = verifyCM("blue=0,green=100")
	if code != 0 {
		t.Fatalf("verify exited %d:\n%s", code, out)
	}
	mustContain(t, "verify", out, "Cloud Map apps/orders, query env=prod, HEALTHY_OR_ELSE_ALL: 9 instances answered",
		"blue     9         0         0.0%", "green    9         9         100.0%", "ok: HEALTHY_OR_ELSE_ALL answers 9 instances (green 9)")
	out, code = verifyCM("blue=100,green=0")
	if code != 1 || !strings.Contains(out, "MISMATCH: ") {
		t.Errorf("verify against the starting weights exited %d, want 1 with a mismatch:\n%s", code, out)
	}
	t.Logf("verify:\n%s", out)
}

// TestCloudMapCutoverRollsBack: an http gate starts failing once the 100 % step is in
// effect; the run rolls back to blue's 9 healthy instances. The rollback both raises
// blue's instances and lowers green's: it waits for blue's to be HEALTHY before it sends
// green's UNHEALTHY, so that HEALTHY clients are never answered with no instance even
// while custom health takes a second to apply.
func TestCloudMapCutoverRollsBack(t *testing.T) {
	m := newCutCloudMap(t, time.Second)
	var failing atomic.Bool
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(probe.Close)
	load := startCMClients(t, m.sb, 4)
	load.waitAnswers(t, 50)
	state := t.TempDir()
	planFile := m.plan("orders-fails", "blue", "green", "[50, 100]", "2s", fmt.Sprintf(`    - name: app
      http: {clusters: {green: %q}, requests: 2}
`, probe.URL))
	cmd, out := cutoverCmd(t, m.sb, state, "run", planFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	broke := make(chan struct{})
	go func() {
		defer close(broke)
		for range 6000 {
			entries, _ := journal.Read(cutover.PathsFor(state, "orders-fails").Journal)
			for _, e := range entries {
				if e.Kind == "insync" && e.Step == 1 {
					failing.Store(true)
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code := waitCmd(t, cmd, out)
	<-broke
	load.halt()
	if code == 0 || !failing.Load() {
		t.Fatalf("cutover run exited %d (gate failing: %v), want a rollback from step 2:\n%s", code, failing.Load(), out)
	}
	if len(load.failures) > 0 {
		t.Errorf("%d of %d DiscoverInstances calls failed or were empty; first: %s", len(load.failures), load.total.Load(), load.failures[0])
	}
	if got := m.healthy(); got["blue"] != cmPerCluster || got["green"] != 0 {
		t.Errorf("healthy after the rollback: %v, want blue %d green 0", got, cmPerCluster)
	}
	mustContain(t, "cutover run", out.String(), "cutover orders-fails: rolled-back", "rolled back: gate app")
	t.Logf("%d DiscoverInstances calls, none empty", load.total.Load())
}

// authority lists the service's authority tags, "KEY=VALUE" (ListTagsForResource on the
// service's ARN).
func (m *cutCloudMap) authority() []string {
	m.t.Helper()
	ctx := context.Background()
	svc, err := m.c.GetService(ctx, &sd.GetServiceInput{Id: aws.String(m.svcID)})
	if err != nil {
		m.t.Fatal(err)
	}
	out, err := m.c.ListTagsForResource(ctx, &sd.ListTagsForResourceInput{ResourceARN: svc.Service.Arn})
	if err != nil {
		m.t.Fatal(err)
	}
	var got []string
	for _, tg := range out.Tags {
		if strings.HasPrefix(aws.ToString(tg.Key), authority.TagPrefix) {
			got = append(got, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
		}
	}
	return got
}

// TestCloudMapCutoverTwoRunners runs `crossfade cutover run` of one Cloud Map plan twice
// at the same moment from two state directories (two machines: their flock locks cannot
// see each other), several times over: each time exactly one moves the instances to its
// end, and the other exits 1 naming the winner's runner token, its journal showing no
// write; the winner's authority tag is gone from the service when it ends. Then machine A
// runs a cutover and holds the service: a runner from machine C is refused naming A;
// machine B, whose journal of the cutover started with another token, aborts it, takes
// the service over from A (and says so) and rolls it back; A stops at its next read
// without writing over B's rollback, and no tag is left. Clients call DiscoverInstances
// the whole time; no answer is empty.
func TestCloudMapCutoverTwoRunners(t *testing.T) {
	m := newCutCloudMap(t, 100*time.Millisecond)
	load := startCMClients(t, m.sb, 4)
	load.waitAnswers(t, 50)
	const races = 4
	for i := range races {
		from, to := "blue", "green"
		if i%2 == 1 {
			from, to = to, from
		}
		name := fmt.Sprintf("cm-race-%02d", i)
		planFile := m.plan(name, from, to, "[50, 100]", "1s", "")
		token, _ := raceRunners(t, m.sb, name, planFile)
		if got := m.healthy(); got[from] != 0 || got[to] != cmPerCluster {
			t.Fatalf("race %d: healthy %v, want %s 0 and %s %d", i, got, from, to, cmPerCluster)
		}
		if tags := m.authority(); len(tags) > 0 {
			t.Errorf("race %d: authority tags left after the winner ended: %q", i, tags)
		}
		t.Logf("race %d: %s → %s, runner %s won", i, from, to, token)
	}

	// The takeover. After an even number of races blue holds the traffic again.
	planFile := m.plan("cm-takeover", "blue", "green", "[50, 100]", "1h", "")
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	cmdA, outA := cutoverCmd(t, m.sb, dirA, "run", planFile)
	if err := cmdA.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmdA.Process.Kill(); _ = cmdA.Wait() })
	waitJournal(t, dirA, "cm-takeover", "insync")
	tokenA := journalToken(t, dirA, "cm-takeover")
	if tags := m.authority(); len(tags) != 1 || !strings.HasPrefix(tags[0], authority.TagPrefix+"cm-takeover/"+tokenA+"="+tokenA+"@") {
		t.Fatalf("A's authority tags: %q, want its token on the service", tags)
	}
	// A third machine without a journal is refused, naming A.
	out, code := runCutover(t, m.sb, dirC, "run", planFile)
	if code != 1 || !strings.Contains(out, "held by another runner, runner "+tokenA+"@") ||
		!strings.Contains(out, "(tag "+authority.TagPrefix+"cm-takeover/"+tokenA+" on service apps/orders)") {
		t.Fatalf("run from C exited %d, want 1 naming A's runner and tag:\n%s", code, out)
	}
	for _, e := range journalEntries(t, dirC, "cm-takeover") {
		if e["kind"] == "written" || e["kind"] == "intent" {
			t.Errorf("C journaled %v", e)
		}
	}
	// Machine B's journal of the cutover, as a runner that started there left it.
	start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":{"blue":%d,"green":0},"token":"b0b0b0b0b0b0b0b0"}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), cmPerCluster)
	writeFile(t, filepath.Join(dirB, "cm-takeover.journal"), start)
	out, code = runCutover(t, m.sb, dirB, "abort", planFile)
	if code != 0 || !strings.Contains(out, "took the weights over from runner "+tokenA+"@") || !strings.Contains(out, "rolled-back") {
		t.Fatalf("abort from B exited %d, want a rollback that says it took over from runner %s:\n%s", code, tokenA, out)
	}
	if got := m.healthy(); got["blue"] != cmPerCluster || got["green"] != 0 {
		t.Fatalf("after B's abort: healthy %v, want blue %d green 0", got, cmPerCluster)
	}
	// A stops at its next read: B's tag in place of its own, or, B having ended, none.
	code = waitCmd(t, cmdA, outA)
	if code != 1 || !(strings.Contains(outA.String(), "held by another runner, runner b0b0b0b0b0b0b0b0@") ||
		strings.Contains(outA.String(), "another runner took them over and ended (cutover abort elsewhere)")) {
		t.Fatalf("A after the takeover exited %d, want 1, stopped by B's takeover:\n%s", code, outA)
	}
	for _, e := range journalEntries(t, dirA, "cm-takeover") {
		if e["kind"] == "intent" && e["step"] == float64(1) {
			t.Errorf("A went on to step 2 after B's takeover: %v", e)
		}
	}
	if got := m.healthy(); got["blue"] != cmPerCluster || got["green"] != 0 {
		t.Errorf("after A stopped: healthy %v, want B's rollback kept", got)
	}
	if tags := m.authority(); len(tags) > 0 {
		t.Errorf("authority tags left: %q", tags)
	}
	// B's cutover has ended: its release speaks of the service's tags, not of DNS records.
	if out, code = runCutover(t, m.sb, dirB, "release", planFile); code != 0 || !strings.Contains(out, "cutover cm-takeover: authority tags removed from 0 Cloud Map services") {
		t.Errorf("release after the abort exited %d, want 0 in Cloud Map's words:\n%s", code, out)
	}
	load.halt()
	if len(load.failures) > 0 {
		t.Errorf("%d of %d DiscoverInstances calls failed or were empty; first: %s", len(load.failures), load.total.Load(), load.failures[0])
	}
	t.Logf("%d DiscoverInstances calls, none empty", load.total.Load())
}
