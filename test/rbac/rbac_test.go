// Package rbac_test proves the Helm chart's RBAC sufficient and minimal, as issue 15 asks:
// `crossfade controller` runs against a real kube-apiserver (internal/kubetest) with
// nothing but a token of the chart's ServiceAccount, bound to the chart's ClusterRole and
// leader-election Role, and the sandbox's Route 53 API.
//
// Sufficient: with every source enabled it publishes one object of every kind, reports
// an invalid object and a conflict with Warning events (and repeats one, which client-go
// patches), leads through the Lease while a second replica stands by, hands the Lease
// over on SIGTERM, and logs no "forbidden"; stopping it deletes no record.
//
// Minimal: for every grant of every rule (one verb on one resource), the same scenario
// run without that grant makes the controller log the API server's refusal of exactly
// it. So no rule, and no verb of one, is there without being used.
//
// Per source: the chart renders rules only for the sources enabled. For each source
// alone, the controller with that source and the rules rendered for it alone publishes
// that source's records without a refusal, and loses a grant only with a refusal of it.
//
// Cloud Map: with cloudMap.enabled and sources [ingress] (which reads no Service), the
// controller run with the rendered rules and the rendered --cloudmap flags registers an
// annotated Service's ready endpoint as a Cloud Map instance in the sandbox, and publishes
// the Ingress's record, without a refusal; without any grant it meets a refusal of it.
//
// Cutovers: with cutovers.enabled, the controller run with the rendered --cutovers and
// rules runs a Cutover to Completed, takes and answers a release command, and lets the
// deleted Cutover go (its finalizer removed), without a refusal; without any grant
// cutovers.enabled adds, it meets a refusal of it (cutovers_test.go).
//
// The cases share one API server and sandbox; each has its own namespace, hosted zone,
// owner id, label filter, ServiceAccount and roles, so they run side by side.
package rbac_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// releaseNamespace is the namespace the chart is rendered for; the sufficient case runs
// in it, with the rendered objects as they are.
const releaseNamespace = "crossfade-system"

// TestChartRBAC renders the chart's RBAC and proves it sufficient and minimal, with
// every source and with each source alone.
func TestChartRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-apiserver and the controller")
	}
	helm := kubetest.Helm(t)
	began := time.Now()
	rel := render(t, helm, releaseNamespace, controller.Sources...)
	checkRules(t, rel)
	controllertest.Binary(t) // built once, before any case's clock starts

	s := &shared{kc: kubetest.Start(t), sb: sandboxtest.Start(t)}
	s.admin = s.kc.Clientset(t)
	s.dyn = dynamic.NewForConfigOrDie(s.kc.Config())
	s.dns = route53test.New(t, s.sb)
	s.cm = cloudMapClient(s.sb)
	s.kc.InstallCRDs(t, "../../deploy/crds", "testdata/crds.yaml")
	if err := createNode(t.Context(), s.admin); err != nil {
		t.Fatal(err)
	}
	// The API server holds creates of a kind whose CRD is younger than two seconds
	// (kubetest.InstallCRDs); the worlds' objects are created after that.
	time.Sleep(2 * time.Second)
	t.Logf("setup (render, build, apiserver, CRDs): %s", time.Since(began).Round(100*time.Millisecond))

	t.Run("sufficient", func(t *testing.T) { sufficient(t, s, rel) })
	t.Run("minimal", func(t *testing.T) {
		var cases []testCase
		for i, a := range grants(rel, true) {
			cases = append(cases, testCase{a.String(), func(t *testing.T) time.Duration {
				return minimalCase(t, s, rel, controller.Sources, a, fmt.Sprintf("min-%02d", i))
			}})
		}
		runCases(t, cases)
	})
	t.Run("per-source", func(t *testing.T) {
		var cases []testCase
		for _, src := range controller.Sources {
			one := render(t, helm, releaseNamespace, src)
			sources := []string{src}
			cases = append(cases, testCase{src + "/sufficient", func(t *testing.T) time.Duration {
				return sufficientCase(t, s, one, sources, src+"-ok")
			}})
			// Events and the Lease do not depend on the sources: "minimal" proved them.
			for i, a := range grants(one, false) {
				if a.resource == "events" && a.group == "" {
					continue
				}
				cases = append(cases, testCase{src + "/" + a.String(), func(t *testing.T) time.Duration {
					return minimalCase(t, s, one, sources, a, fmt.Sprintf("%s-%02d", src, i))
				}})
			}
		}
		runCases(t, cases)
	})
	t.Run("cloudmap", func(t *testing.T) {
		// A source that reads neither Services nor EndpointSlices: only cloudMap.enabled
		// can grant what the publisher reads.
		sources := []string{controller.SourceIngress}
		one := renderWith(t, helm, releaseNamespace, sources, "--set", "cloudMap.enabled=true", "--set", "cloudMap.clusterId=rbac")
		if !slices.Contains(one.cloudMapArgs, "--cloudmap") {
			t.Fatalf("cloudMap.enabled rendered no --cloudmap: Cloud Map args %q", one.cloudMapArgs)
		}
		cases := []testCase{{"sufficient", func(t *testing.T) time.Duration {
			return sufficientCase(t, s, one, sources, "cm-ok")
		}}}
		// Events do not depend on Cloud Map (the publisher's conflicts are events like the
		// sources'): "minimal" proved them.
		for i, a := range grants(one, false) {
			if a.resource == "events" && a.group == "" {
				continue
			}
			cases = append(cases, testCase{a.String(), func(t *testing.T) time.Duration {
				return minimalCase(t, s, one, sources, a, fmt.Sprintf("cm-%02d", i))
			}})
		}
		runCases(t, cases)
	})
	t.Run("cutovers", func(t *testing.T) { runCases(t, cutoverCases(t, s, helm)) })
	t.Run("crd-registry", func(t *testing.T) { runCases(t, crdRegistryCases(t, s, helm)) })
	t.Logf("total: %s", time.Since(began).Round(100*time.Millisecond))
}

// grants lists the atoms of the ClusterRole's rules, and of the Role's if withRole.
func grants(rel *release, withRole bool) []atom {
	out := atoms("ClusterRole", rel.clusterRole.Rules)
	if withRole {
		out = append(out, atoms("Role", rel.roleRules())...)
	}
	return out
}

// checkRules fails on a wildcard anywhere in the rules: a grant of "*" cannot be proven
// minimal, and fails a security review.
func checkRules(t *testing.T, rel *release) {
	t.Helper()
	check := func(role string, rules []rbacv1.PolicyRule) {
		for i, r := range rules {
			for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.NonResourceURLs} {
				if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
					t.Errorf("%s rule %d grants a wildcard: %+v", role, i, r)
				}
			}
		}
	}
	check("ClusterRole", rel.clusterRole.Rules)
	check("Role", rel.roleRules())
}

// forbidden matches the API server's refusal, as client-go logs it (klog may escape the
// quotes) or the controller's JSON log quotes it.
var forbidden = regexp.MustCompile(`(?i)forbidden`)

// forbiddenLines returns the log lines that mention "forbidden".
func forbiddenLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if forbidden.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// refusal matches the API server's refusal of exactly a's grant: `User "…" cannot list
// resource "services" in API group ""`, quotes possibly escaped by the logger.
func refusal(a atom) *regexp.Regexp {
	q := `\\*"`
	if a.resource == "" {
		return regexp.MustCompile(`cannot ` + regexp.QuoteMeta(a.verb) + ` path ` + q + regexp.QuoteMeta(a.url) + q)
	}
	return regexp.MustCompile(`cannot ` + regexp.QuoteMeta(a.verb) + ` resource ` + q + regexp.QuoteMeta(a.resource) + q +
		` in API group ` + q + regexp.QuoteMeta(a.group) + q)
}

// startController runs a replica of w's controller with the chart's grants.
func startController(t *testing.T, name string, w *world, args []string) *controllertest.Process {
	t.Helper()
	return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: w.kubeconfig, Route53URL: w.sb.APIURL(), Args: args})
}

// sufficient: two replicas with the chart's RBAC as rendered do all of the scenario
// without one refusal, hand the Lease over on SIGTERM, and delete nothing on the way out.
func sufficient(t *testing.T, s *shared, rel *release) {
	ctx := t.Context()
	began := time.Now()
	w, err := newWorld(ctx, s, rel.namespace, rel.leaseName)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.grant(ctx, rel, rel.clusterRole.Rules, rel.roleRules(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// A Lease far longer than the test: the standby can only take over this soon if the
	// leader released the Lease on SIGTERM.
	args := w.controllerArgs(controller.Sources, "--leader-election-lease-duration", "60s",
		"--leader-election-renew-deadline", "40s", "--leader-election-retry-period", "500ms")
	a := startController(t, "replica-a", w, args)
	refused := func() bool { return forbidden.MatchString(a.Log()) }
	if err := w.run(ctx, controller.Sources, time.Minute, refused); err != nil {
		if errors.Is(err, errAborted) {
			t.Fatalf("the controller was refused with the chart's RBAC:\n%s", strings.Join(forbiddenLines(a.Log()), "\n"))
		}
		t.Fatal(err)
	}
	t.Logf("replica-a: every source published, events sent and repeated, Lease held and renewed in %s", time.Since(began).Round(100*time.Millisecond))

	const leading, standing = `"msg":"leading: this replica writes"`, `"msg":"standing by: another replica leads"`
	b := startController(t, "replica-b", w, args)
	waitLog(t, b, standing, 20*time.Second)
	if strings.Contains(b.Log(), leading) {
		t.Fatalf("replica-b leads while replica-a holds the Lease")
	}
	before, err := w.records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(before, "taken."+w.domain+" A 192.0.2.99") {
		t.Errorf("another owner's record was overwritten:\n%s", strings.Join(before, "\n"))
	}

	stopped := time.Now()
	terminate(t, a)
	if code := a.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("replica-a: exit status %d after SIGTERM, want 0", code)
	}
	waitLog(t, b, leading, 20*time.Second)
	t.Logf("replica-b leads %s after replica-a's SIGTERM (the Lease lasts 60s: it was released)", time.Since(stopped).Round(100*time.Millisecond))
	b.WaitReconciles(t, 1, 20*time.Second)
	terminate(t, b)
	if code := b.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("replica-b: exit status %d after SIGTERM, want 0", code)
	}
	if h, _, err := w.holder(ctx); err != nil || h != "" {
		t.Errorf("Lease after the last replica's SIGTERM: holder %q (%v), want released", h, err)
	}
	for _, p := range []*controllertest.Process{a, b} {
		if lines := forbiddenLines(p.Log()); len(lines) > 0 {
			t.Errorf("refused with the chart's RBAC:\n%s", strings.Join(lines, "\n"))
		}
	}

	// Stopping (as `helm uninstall` does) deletes nothing: the zone is as it was.
	after, err := w.records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Errorf("records changed when the controllers stopped:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
	for _, r := range w.published(controller.Sources) {
		if !slices.Contains(after, r) {
			t.Errorf("record %s gone after the controllers stopped", r)
		}
	}
	t.Logf("sufficient: %s", time.Since(began).Round(100*time.Millisecond))
}

// terminate sends p SIGTERM, as the kubelet stops a pod, and waits for its exit.
func terminate(t *testing.T, p *controllertest.Process) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done:
	case <-time.After(40 * time.Second):
		t.Fatalf("no exit 40s after SIGTERM:\n%s", p.Log())
	}
}

// waitLog waits until p logged a line containing s.
func waitLog(t *testing.T, p *controllertest.Process, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(p.Log(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s logged within %s", s, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testCase is one subtest of a pool; it returns how long its scenario took.
type testCase struct {
	name string
	run  func(t *testing.T) time.Duration
}

// runCases runs cases as subtests, several at once: they mostly wait (on informers,
// debounce, the Lease), so more run at once than there are cores.
func runCases(t *testing.T, cases []testCase) {
	sem := make(chan struct{}, 4*runtime.GOMAXPROCS(0))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		times []time.Duration
	)
	began := time.Now()
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(c.name, func(t *testing.T) {
				d := c.run(t)
				mu.Lock()
				times = append(times, d)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	slices.Sort(times)
	if len(times) > 0 {
		t.Logf("%d cases; per case: median %s, slowest %s; all: %s", len(cases),
			times[len(times)/2].Round(100*time.Millisecond), times[len(times)-1].Round(100*time.Millisecond),
			time.Since(began).Round(100*time.Millisecond))
	}
}

// sufficientCase runs one replica reading sources, with rel's rules as rendered, through
// the scenario, and wants no refusal.
func sufficientCase(t *testing.T, s *shared, rel *release, sources []string, ns string) time.Duration {
	ctx := t.Context()
	began := time.Now()
	w, err := newWorld(ctx, s, ns, rel.leaseName)
	if err != nil {
		t.Fatal(err)
	}
	w.addCloudMap(t, rel)
	w.addCutover(t, rel)
	w.addCRDRegistry(rel)
	if err := w.grant(ctx, rel, rel.clusterRole.Rules, rel.roleRules(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	p := startController(t, ns, w, w.controllerArgs(sources))
	err = w.run(ctx, sources, scenarioTime(rel), func() bool { return forbidden.MatchString(p.Log()) })
	took := time.Since(began)
	p.Kill() // at once: the other cases need the cores
	if lines := forbiddenLines(p.Log()); len(lines) > 0 {
		t.Fatalf("refused with the rules rendered for %v:\n%s", sources, strings.Join(lines, "\n"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return took
}

// scenarioTime is how long a case's scenario may take: a Cutover's steps, its release
// and its deletion come on top of publishing with --cutovers.
func scenarioTime(rel *release) time.Duration {
	if len(rel.cutoverArgs) > 0 {
		return 90 * time.Second
	}
	return 45 * time.Second
}

// minimalCase runs the scenario with sources without grant a and returns how long it
// took to see the refusal.
func minimalCase(t *testing.T, s *shared, rel *release, sources []string, a atom, ns string) time.Duration {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	began := time.Now()
	w, err := newWorld(ctx, s, ns, rel.leaseName)
	if err != nil {
		t.Fatal(err)
	}
	w.addCloudMap(t, rel)
	w.addCutover(t, rel)
	w.addCRDRegistry(rel)
	cluster, role := rel.clusterRole.Rules, rel.roleRules()
	if a.role == "Role" {
		role = without(role, a)
	} else {
		cluster = without(cluster, a)
	}
	if err := w.grant(ctx, rel, cluster, role, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	p := startController(t, a.String(), w, w.controllerArgs(sources))
	want := refusal(a)
	err = w.run(ctx, sources, scenarioTime(rel), func() bool { return want.MatchString(p.Log()) })
	took := time.Since(began)
	p.Kill() // at once: the other cases need the cores
	switch {
	case errors.Is(err, errAborted):
		line := slices.DeleteFunc(forbiddenLines(p.Log()), func(l string) bool { return !want.MatchString(l) })[0]
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		t.Logf("refused after %s: %s", took.Round(100*time.Millisecond), line)
	case err == nil:
		t.Errorf("without %s the controller did the whole scenario: the chart grants it but nothing uses it", a)
	default:
		t.Errorf("without %s: no refusal of it (%s) in the log: %v", a, want, err)
	}
	if others := slices.DeleteFunc(forbiddenLines(p.Log()), want.MatchString); len(others) > 0 {
		t.Errorf("refusals of other grants than %s:\n%s", a, strings.Join(others, "\n"))
	}
	return took
}
