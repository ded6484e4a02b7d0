package iam_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// phaseControllerCutovers is `crossfade controller --cutovers`: the chart's controller
// with cutovers.enabled, one principal publishing and running Cutovers.
const phaseControllerCutovers = "crossfade controller --cutovers"

// TestControllerCutoversPolicyMatchesObservedCalls runs `crossfade controller --cutovers`
// as the chart runs it with cutovers.enabled (its dns gates asking the --dns-server the
// chart's cutovers.dnsServers passes) on a real kube-apiserver and the sandbox: it
// publishes a Service, runs a Route 53 Cutover (four steps, each gated on the zone's
// answers) to Completed, and, once both publishers have confirmed the hold, takes a
// release command and releases. The Route 53 operations it calls are exactly the actions
// of deploy/iam-policy-cutover.json, and its batches carry only the changes that
// policy's condition lets through: that one policy is the one to attach to the
// controller's role with cutovers.enabled (deploy/README.md), beside the ALB and Cloud
// Map cutover policies for Cutovers of those levers, whose calls are the CLI runner's
// (the same levers: TestALBPolicyMatchesObservedCalls,
// TestCloudMapCutoverPolicyMatchesObservedCalls).
func TestControllerCutoversPolicyMatchesObservedCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary, a sandbox and a kube-apiserver")
	}
	kc := kubetest.Start(t) // first: it skips (or fails under CI) when not built
	kc.InstallCRDs(t, "../../deploy/crds/cutovers.crossfade.io.yaml")
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "iam-test", "", false)
	if err != nil {
		t.Fatal(err)
	}
	obs := newObserver(sb)
	e := &env{t: t, sb: sb, zoneID: z.ID}
	members := func(blue, green string) {
		for _, m := range []struct{ owner, ip, weight string }{{"blue", "127.0.0.10", blue}, {"green", "127.0.0.20", green}} {
			e.mustRun("sync", "--manifests", manifests(t, service("app", m.ip, "hostname", "app.example.com",
				"set-identifier", m.owner, "aws-weight", m.weight, "ttl", "1")), "--txt-owner-id", m.owner, "--domain-filter", "example.com")
		}
	}
	obs.during(t, phaseSync, func() { members("100", "0") })

	client := kc.Clientset(t)
	const ann = "external-dns.alpha.kubernetes.io/"
	createService(t, client, "web", "192.0.2.30", map[string]string{ann + "hostname": "web.example.com"})
	cutovers, err := statusstore.NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	get := func() *v1alpha1.Cutover {
		c := &v1alpha1.Cutover{}
		if err := cutovers.Cutovers.Get().Namespace("default").Resource(v1alpha1.Resource).Name("iam").Do(t.Context()).Into(c); err != nil {
			t.Fatalf("read Cutover default/iam: %v", err)
		}
		return c
	}
	wait := func(what string, cond func(c *v1alpha1.Cutover) bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for c := get(); !cond(c); c = get() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 90s: phase %q, annotations %v, conditions %v; zone:\n%s", what, c.Status.Phase, c.Annotations,
					c.Status.Conditions, strings.Join(e.sets(), "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	start := func(name string) *controllertest.Process {
		return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: kc.Kubeconfig, Route53URL: sb.APIURL(),
			Args: []string{"--source", "service", "--txt-owner-id", "cluster-c", "--domain-filter", "example.com",
				"--debounce", "100ms", "--interval", "1s", "--cutovers", "--dns-server", sb.DNSAddr()},
			Env: []string{"POD_NAME=" + name}})
	}
	stop := func(ctl *controllertest.Process) {
		t.Helper()
		ctl.Stop(t)
		if code := ctl.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("controller exited %d after SIGTERM:\n%s", code, ctl.Log())
		}
	}

	obs.during(t, phaseControllerCutovers, func() {
		ctl := start("controller-0")
		e.eventually("web published", func() bool { return slices.Contains(e.sets(), "web.example.com. A 192.0.2.30") })
		var c v1alpha1.Cutover
		if err := yaml.UnmarshalStrict([]byte(controllerCutoverPlan), &c); err != nil {
			t.Fatal(err)
		}
		if err := cutovers.Cutovers.Post().Namespace("default").Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Error(); err != nil {
			t.Fatalf("create Cutover iam: %v", err)
		}
		wait("Cutover iam Completed", func(c *v1alpha1.Cutover) bool {
			if c.Status.Phase == v1alpha1.PhaseFailed || c.Status.Phase == v1alpha1.PhaseRolledBack {
				t.Fatalf("Cutover iam ended %s: %v\n%s", c.Status.Phase, c.Status.Conditions, ctl.Log())
			}
			return c.Status.Phase == v1alpha1.PhaseCompleted
		})
		stop(ctl)
	})
	// Each cluster's publisher confirms the hold at the weights the cutover left (the
	// controller stopped meanwhile, so that these calls are not counted as its own).
	obs.during(t, phaseSync, func() { members("0", "100") })
	obs.during(t, phaseControllerCutovers, func() {
		ctl := start("controller-1")
		req, err := json.Marshal(v1alpha1.CommandRequest{Command: v1alpha1.RequestRelease, ID: "iam-release", By: "test/iam", At: time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.CommandAnnotation: string(req)}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cutovers.Cutovers.Patch(types.MergePatchType).Namespace("default").Resource(v1alpha1.Resource).Name("iam").
			Body(patch).Do(t.Context()).Error(); err != nil {
			t.Fatalf("Cutover iam: send release: %v", err)
		}
		wait("release answered", func(c *v1alpha1.Cutover) bool {
			r, err := v1alpha1.ParseCommandResult(c.Annotations[v1alpha1.ResultAnnotation])
			if err != nil || r.ID != "iam-release" {
				return false
			}
			if r.Refused != "" {
				t.Fatalf("Cutover iam: release refused: %s", r.Refused)
			}
			return true
		})
		stop(ctl)
	})
	e.wantSets("after the cutover and its release", []string{
		"app.example.com. A [blue] w=0 127.0.0.10",
		"app.example.com. A [green] w=100 127.0.0.20",
		"web.example.com. A 192.0.2.30",
	}, nil)

	t.Logf("%s called: %v; its batches carried: %v", phaseControllerCutovers, obs.seen[phaseControllerCutovers], obs.changes[phaseControllerCutovers])
	pol := loadPolicy(t, cutoverPolicyFile)
	if sent, allowed := obs.changeActions(phaseControllerCutovers), pol.changeActions(); !slices.Equal(sent, allowed) {
		t.Errorf("%s sent changes %v; %s lets ChangeResourceRecordSets carry %v", phaseControllerCutovers, sent, cutoverPolicyFile, allowed)
	}
	granted, called := pol.actions(), obs.ops(phaseControllerCutovers)
	if len(called) == 0 {
		t.Fatalf("%s: no Route 53 call observed", phaseControllerCutovers)
	}
	for _, op := range called {
		if !slices.Contains(granted, op) {
			t.Errorf("%s calls %s, which %s does not grant: add route53:%s", phaseControllerCutovers, op, cutoverPolicyFile, op)
		}
	}
	for _, op := range granted {
		if !slices.Contains(called, op) {
			t.Errorf("%s grants route53:%s, which %s never called", cutoverPolicyFile, op, phaseControllerCutovers)
		}
	}
}

// controllerCutoverPlan is the Cutover the controller runs: app.example.com from blue to
// green in 0/10/50/100 % steps of 1 s, each gated on 100 answers of the zone's
// authoritative servers, which the plan does not list (the controller's --dns-server).
const controllerCutoverPlan = `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: iam
  namespace: default
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: blue
  to: green
  steps: [0, 10, 50, 100]
  pause: 1s
  gates:
    - name: answers
      dns:
        samples: 100
        tolerance: 0.25
`
