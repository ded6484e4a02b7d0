package controller_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// cutoverEnv is a kube-apiserver with the Cutover CRD and a sandbox zone example.com
// whose app.example.com and web.example.com have blue's member at 100 and green's at 0,
// each published by its owner as `crossfade sync` publishes them.
type cutoverEnv struct {
	kc   *kubetest.Cluster
	c    *statusstore.Client
	zone *levertest.Zone
}

func startCutoverEnv(t *testing.T) *cutoverEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a kube-apiserver")
	}
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, "../../deploy/crds/cutovers.crossfade.io.yaml")
	c, err := statusstore.NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	for _, m := range []struct {
		owner, ip string
		weight    int64
	}{{"blue", "127.0.0.10", 100}, {"green", "127.0.0.20", 0}} {
		publishMember(t, z.DNS, "web.example.com", m.owner, m.ip, m.weight)
	}
	return &cutoverEnv{kc: kc, c: c, zone: z}
}

// publishMember syncs owner's weighted member of name as `crossfade sync` would.
func publishMember(t *testing.T, dns *route53.Provider, name, owner, ip string, weight int64) {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	e := &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.Targets{ip}, TTL: 1, SetIdentifier: owner,
		Policy: endpoint.WeightedPolicy(weight), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/" + strings.Split(name, ".")[0]}}
	rep, err := (&controller.Syncer{Provider: dns, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), []*endpoint.Endpoint{e})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatalf("%s's sync of %s at weight %d: %v", owner, name, weight, err)
	}
}

// controller starts `crossfade controller --cutovers` as the pod named pod, publishing
// nothing (no Service in the cluster) and running the Cutovers of every namespace.
func (e *cutoverEnv) controller(t *testing.T, pod string) *proc {
	t.Helper()
	return controllertest.Start(t, controllertest.Options{Name: pod, Kubeconfig: e.kc.Kubeconfig, Route53URL: e.zone.SB.APIURL(),
		Args: []string{"--cutovers", "--source=service", "--txt-owner-id=ctl", "--dns-server=" + e.zone.SB.DNSAddr()},
		Env:  []string{"POD_NAME=" + pod}})
}

// planDoc is the plan file of the Cutover name moving record from one cluster to the
// other in steps, holding each for pause: with no namespace, as `cutover run` reads it
// and `kubectl apply -n` takes it.
func planDoc(name, record, from, to, steps, pause string) string {
	return `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: ` + name + `
spec:
  zone: example.com
  records:
    - name: ` + record + `
  from: ` + from + `
  to: ` + to + `
  steps: ` + steps + `
  pause: ` + pause + `
`
}

// apply creates the Cutover name moving record from blue to green in steps, holding each
// for pause, as `kubectl apply -f` of the plan file would.
func (e *cutoverEnv) apply(t *testing.T, name, record, steps, pause string) {
	t.Helper()
	e.applyDoc(t, planDoc(name, record, "blue", "green", steps, pause))
}

// applyDoc creates the Cutover of the plan file doc.
func (e *cutoverEnv) applyDoc(t *testing.T, doc string) {
	t.Helper()
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Cutovers.Post().Namespace("default").Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Error(); err != nil {
		t.Fatalf("create Cutover %s: %v", c.Name, err)
	}
}

// get reads the Cutover name.
func (e *cutoverEnv) get(t *testing.T, name string) *v1alpha1.Cutover {
	t.Helper()
	out := &v1alpha1.Cutover{}
	if err := e.c.Cutovers.Get().Namespace("default").Resource(v1alpha1.Resource).Name(name).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("read Cutover %s: %v", name, err)
	}
	return out
}

// waitPhase waits (up to d) until the Cutover name's status.phase is want, and returns it.
func (e *cutoverEnv) waitPhase(t *testing.T, name string, want v1alpha1.Phase, d time.Duration) *v1alpha1.Cutover {
	t.Helper()
	var c *v1alpha1.Cutover
	eventually(t, d, fmt.Sprintf("Cutover %s %s", name, want), func() (bool, string) {
		c = e.get(t, name)
		return c.Status.Phase == want, fmt.Sprintf("phase %q, progress %q, weights %v, conditions %v", c.Status.Phase, c.Status.Progress, c.Status.Weights, c.Status.Conditions)
	})
	return c
}

// weights reads the weights of name's members from the zone, by set identifier.
func (e *cutoverEnv) weights(t *testing.T, name string) map[string]int64 {
	t.Helper()
	zones, err := e.zone.DNS.Zones(t.Context())
	if err != nil || len(zones) == 0 {
		t.Fatalf("zones: %v", err)
	}
	recs, err := e.zone.DNS.Records(t.Context(), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range recs {
		if r.Name == name && r.Type == "A" {
			out[r.SetIdentifier] = r.Policy.Weight
		}
	}
	return out
}

// counts are a journal's entries of kind, by step.
func counts(journal []v1alpha1.JournalEntry, kind string) map[int]int {
	out := map[int]int{}
	for _, je := range journal {
		if je.Kind == kind {
			out[je.Step]++
		}
	}
	return out
}

// shapes renders a journal as "kind/step" for failure messages.
func shapes(journal []v1alpha1.JournalEntry) string {
	var out []string
	for _, je := range journal {
		out = append(out, fmt.Sprintf("%s/%d", je.Kind, je.Step))
	}
	return strings.Join(out, " ")
}

// TestCutoverObjects runs `crossfade controller --cutovers` as a process on a real
// kube-apiserver and the sandbox: a Cutover applied is run to Completed, its status Ready
// and its weights in the zone; and a controller killed with SIGKILL mid-step is replaced
// by another, which resumes the Cutover from its status to Completed, each step passed
// once and only the step held at the kill written again.
func TestCutoverObjects(t *testing.T) {
	e := startCutoverEnv(t)
	first := e.controller(t, "crossfade-1")

	// Applied → Completed, as `cutover run` would have run it.
	e.apply(t, "app", "app.example.com", "[0, 50, 100]", "1s")
	c := e.waitPhase(t, "app", v1alpha1.PhaseCompleted, 90*time.Second)
	if w := e.weights(t, "app.example.com"); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("app.example.com weights after Completed: %v, want blue 0, green 100", w)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("Cutover app Completed without Ready=True: %v", c.Status.Conditions)
	}
	if len(c.Status.Steps) != 3 || slices.ContainsFunc(c.Status.Steps, func(s v1alpha1.StepStatus) bool { return s.Result != v1alpha1.StepPassed }) {
		t.Errorf("Cutover app steps: %+v, want 3, each Passed", c.Status.Steps)
	}
	if w := e.weights(t, "web.example.com"); w["blue"] != 100 || w["green"] != 0 {
		t.Fatalf("web.example.com moved by the cutover of app.example.com: %v", w)
	}

	// Killed mid-step: once step 1 (green 10) is journaled as written, the controller
	// dies without a word; the standby replica resumes from status when the Lease
	// expires (the default 15 s).
	e.apply(t, "web", "web.example.com", "[0, 10, 50, 100]", "3s")
	eventually(t, 60*time.Second, "Cutover web's step 1 journaled as written", func() (bool, string) {
		c = e.get(t, "web")
		return counts(c.Status.Journal, "written")[1] > 0, shapes(c.Status.Journal)
	})
	second := e.controller(t, "crossfade-2")
	eventually(t, 60*time.Second, "crossfade-2 standing by for Cutover web", func() (bool, string) {
		return strings.Contains(second.Log(), "standing by"), ""
	})
	killedAt := time.Now()
	first.Kill()
	killed := e.get(t, "web")
	if killed.Status.Phase == v1alpha1.PhaseCompleted {
		t.Fatalf("Cutover web completed before the kill: %s", shapes(killed.Status.Journal))
	}
	atKill := e.weights(t, "web.example.com")
	if atKill["green"] != 10 && atKill["green"] != 50 {
		t.Fatalf("web.example.com at the kill: %v, want a step's weights mid-run", atKill)
	}
	// The step the dead replica held (written, not passed) is the one resumed: the
	// engine writes it again, once; every other step is written once.
	held := -1
	written, passed := counts(killed.Status.Journal, "written"), counts(killed.Status.Journal, "step-passed")
	for step := range written {
		if passed[step] == 0 {
			held = step
		}
	}

	t.Logf("killed at %v, step %d held: %s", atKill, held, shapes(killed.Status.Journal))
	c = e.waitPhase(t, "web", v1alpha1.PhaseCompleted, 120*time.Second)
	// How long the traffic went unwatched: from the kill to the standby's resumed entry
	// (BENCHMARKS.md; logged, not asserted).
	for _, je := range c.Status.Journal {
		if je.Kind == "resumed" {
			t.Logf("takeover: the standby's resumed entry %.1f s after the kill (Lease 15 s, renewed every 5 s)", je.Time.Sub(killedAt).Seconds())
			break
		}
	}
	if w := e.weights(t, "web.example.com"); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("web.example.com weights after the resume: %v, want blue 0, green 100", w)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("Cutover web Completed without Ready=True: %v", c.Status.Conditions)
	}
	if len(counts(c.Status.Journal, "resumed")) == 0 {
		t.Errorf("Cutover web completed without a resumed entry: the second replica did not continue the journal: %s", shapes(c.Status.Journal))
	}
	written, passed = counts(c.Status.Journal, "written"), counts(c.Status.Journal, "step-passed")
	for step := range 4 {
		want := 1
		if step == held {
			want = 2
		}
		if passed[step] != 1 || written[step] != want {
			t.Errorf("Cutover web step %d: passed %d times, written %d; want passed once, written %d (step %d held at the kill): %s",
				step, passed[step], written[step], want, held, shapes(c.Status.Journal))
		}
	}
	for i, je := range c.Status.Journal {
		if je.Seq != i+1 {
			t.Errorf("status.journal[%d] has seq %d, want %d: an entry lost or written twice", i, je.Seq, i+1)
		}
	}
	if got := slices.Sorted(maps.Keys(c.Status.Weights)); !slices.Equal(got, []string{"blue", "green"}) || c.Status.Weights["green"] != 100 {
		t.Errorf("Cutover web status.weights %v, want blue 0, green 100", c.Status.Weights)
	}

	// Released from a workstation: the completed Cutover app keeps its authority record
	// until `cutover release`, which has no journal of it there and so wants --force; once
	// released, a Cutover back to blue on the same record runs.
	dir := t.TempDir()
	file := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(file, []byte(planDoc("app", "app.example.com", "blue", "green", "[0, 50, 100]", "1s")), 0o644); err != nil {
		t.Fatal(err)
	}
	release := []string{"cutover", "release", file, "--state-dir", dir, "--aws-endpoint", e.zone.SB.APIURL(), "--aws-region", "us-east-1"}
	if code, out := e.cli(t, release...); code == 0 || !strings.Contains(out, "has no journal at") {
		t.Errorf("cutover release of a Cutover the controller ran, without --force: exit %d, want refused naming the missing journal:\n%s", code, out)
	}
	if code, out := e.cli(t, append(release, "--force")...); code != 0 {
		t.Fatalf("cutover release --force of Cutover app: exit %d:\n%s", code, out)
	}
	e.applyDoc(t, planDoc("app-back", "app.example.com", "green", "blue", "[0, 100]", "1s"))
	e.waitPhase(t, "app-back", v1alpha1.PhaseCompleted, 90*time.Second)
	if w := e.weights(t, "app.example.com"); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("app.example.com weights after Cutover app-back: %v, want blue 100, green 0", w)
	}
}

// cli runs the crossfade binary with args against the sandbox and returns its exit
// status and its output.
func (e *cutoverEnv) cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(controllertest.Binary(t), args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
	return exitAndOutput(t, cmd)
}

// exitAndOutput runs cmd and returns its exit status and its output (stdout and stderr);
// a command that could not run at all fails the test.
func exitAndOutput(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return 0, string(out)
}
