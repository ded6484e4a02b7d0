package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/source"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestKubeDemoAppliesACutover runs demo --kube (its controllers the crossfade binary
// built from this tree): the plan is applied as a Cutover object, which the green
// cluster's controller (--cutovers) runs to Completed, each step journaled in its status;
// the dashboard, following that status, shows every step passed with its gates, the run
// done at 0/100, and the clients' traffic; and the demo's own checks pass (0 failed
// requests, the zone at blue=0 green=100).
func TestKubeDemoAppliesACutover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two kube-apiservers and controllers")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if fi, err := os.Stat(filepath.Join(kubetest.BinDir(), name)); err != nil || fi.Mode()&0o111 == 0 {
			testenv.Missingf(t, "%s not built in %s: `make test` builds it (scripts/deps.sh test)", name, kubetest.BinDir())
		}
	}
	bin := controllertest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure bound
	defer cancel()
	var out syncBuffer
	res, err := Run(ctx, Config{Kube: &KubeConfig{Crossfade: bin}, Pause: time.Second, Clients: 4, Out: &out})
	if err != nil {
		t.Fatalf("demo --kube: %v\n%s", err, out.String())
	}
	text := out.String()
	if !strings.Contains(text, "Cutover shop/demo applied") {
		t.Errorf("the demo does not say it applied the Cutover:\n%s", text)
	}
	c := res.Cutover
	if c == nil {
		t.Fatal("no Cutover object in the result")
	}
	if c.Namespace != "shop" || c.Name != "demo" || c.Status.Phase != v1alpha1.PhaseCompleted {
		t.Errorf("Cutover %s/%s is %q, want shop/demo Completed", c.Namespace, c.Name, c.Status.Phase)
	}
	passed := map[int]bool{}
	for _, e := range c.Status.Journal {
		if e.Kind == "step-passed" {
			passed[e.Step] = true
		}
	}
	if len(passed) != 4 {
		t.Errorf("the object's journal has steps %v passed, want all 4", passed)
	}

	d := res.Dashboard
	var steps []string
	for _, st := range d.Timeline {
		if st.Kind == "step" {
			steps = append(steps, st.Name+" "+st.Outcome+" "+fmt.Sprint(st.Weights["green"]))
		}
	}
	if want := []string{"step 1/4 passed 0", "step 2/4 passed 10", "step 3/4 passed 50", "step 4/4 passed 100"}; !slices.Equal(steps, want) {
		t.Errorf("the dashboard's steps %q, want %q", steps, want)
	}
	if cur := d.Current; !cur.Done || cur.RolledBack || cur.Step != 4 || cur.Total != 4 || cur.Weights["blue"] != 0 || cur.Weights["green"] != 100 {
		t.Errorf("the dashboard's current %+v, want done at step 4/4, blue=0 green=100", cur)
	}
	for _, g := range []string{"http", "answers"} {
		if !slices.ContainsFunc(d.Gates, func(r dashboard.GateResult) bool { return r.Gate == g && r.Pass }) {
			t.Errorf("the dashboard shows no passed gate %s: %+v", g, d.Gates)
		}
	}
	if d.RequestsSource != dashboard.SourceClients || len(d.Series.ClientShares) == 0 {
		t.Errorf("the dashboard shows no client traffic: source %q, %d share points", d.RequestsSource, len(d.Series.ClientShares))
	}
	if res.Report == nil || res.Report.Outcome != "completed" || res.FinalWeights["green"] != 100 || res.Failures != 0 {
		t.Errorf("report %+v, final weights %v, %d failed requests", res.Report, res.FinalWeights, res.Failures)
	}
}

// syncBuffer is a bytes.Buffer the demo's goroutines may write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCutoverObject: the demo's plan, filled in, is a valid Cutover object in the app's
// namespace, the very plan the plan file loads to.
func TestCutoverObject(t *testing.T) {
	r := strings.NewReplacer("{{PAUSE}}", "1s", "{{PORT}}", "8080", "{{DNS}}", "127.0.0.1:10053",
		"{{BLUE}}", "http://127.0.0.2:8080/", "{{GREEN}}", "http://127.0.0.3:8080/")
	text := r.Replace(planTemplate)
	c, err := cutoverObject(text)
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "shop" || c.Name != "demo" {
		t.Errorf("object %s/%s, want shop/demo", c.Namespace, c.Name)
	}
	obj, err := spec.PlanOf(&spec.Cutover{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Cutover", Metadata: spec.Metadata{Name: c.Name}, Spec: c.Spec})
	if err != nil {
		t.Fatalf("the object's plan: %v", err)
	}
	file, err := loadPlan(filepath.Join(t.TempDir(), "demo.yaml"), text)
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Steps) != 4 || len(obj.Steps) != len(file.Steps) || obj.Name != file.Name || obj.From != file.From || obj.To != file.To {
		t.Errorf("the object's plan (%d steps, %s %s→%s) is not the file's (%d steps, %s %s→%s)",
			len(obj.Steps), obj.Name, obj.From, obj.To, len(file.Steps), file.Name, file.From, file.To)
	}
}

// TestKubeWithoutBinaries: without etcd and kube-apiserver in the cache, demo --kube
// fails at once with an error that says `make test` (scripts/deps.sh test) builds them,
// before it starts or prints anything.
func TestKubeWithoutBinaries(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, Config{Kube: &KubeConfig{Crossfade: "crossfade"}, Out: &out})
	if !errors.Is(err, kubetest.ErrNotBuilt) {
		t.Fatalf("Run = %v, want kubetest.ErrNotBuilt", err)
	}
	for _, want := range []string{"`make test` builds them", "scripts/deps.sh test", "etcd and kube-apiserver not built in " + kubetest.BinDir()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Count(err.Error(), "not built in") != 1 {
		t.Errorf("the error repeats itself per cluster: %v", err)
	}
	if out.Len() > 0 {
		t.Errorf("the demo started something before finding the binaries missing:\n%s", out.String())
	}
}

// TestAppServicePublishesItsMember: each cluster's Service, read by the source every
// controller runs, asks for exactly the member the demo then waits for — once its
// controller owns it — and memberProblem names what differs when the zone holds
// anything else.
func TestAppServicePublishesItsMember(t *testing.T) {
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*cluster{
		{id: "blue", ip: "127.0.0.2", port: 8080, weight: 100},
		{id: "green", ip: "127.0.0.3", port: 8080, weight: 0},
	} {
		t.Run(c.id, func(t *testing.T) {
			svc := appService(c)
			if svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts {
				t.Errorf("spec.allocateLoadBalancerNodePorts = %v, want false", svc.Spec.AllocateLoadBalancerNodePorts)
			}
			res := src.Endpoints(&source.Snapshot{Services: []*corev1.Service{svc}})
			if len(res.Invalid) > 0 {
				t.Fatalf("the source finds the Service invalid: %+v", res.Invalid)
			}
			if len(res.Endpoints) != 1 {
				t.Fatalf("the Service yields %d records, want 1: %+v", len(res.Endpoints), res.Endpoints)
			}
			e := res.Endpoints[0]
			e.Labels[endpoint.OwnerLabel] = c.id // what its controller adds
			if p := memberProblem(e, c); p != "" {
				t.Errorf("the Service's record is not the member the demo waits for: %s (%+v)", p, e)
			}
			if e.TTL != ttl {
				t.Errorf("TTL %d, want the demo's %d", e.TTL, ttl)
			}
		})
	}
}

// TestMemberProblem: the zone's member counts as published by c's controller from c's
// Service only when every part matches.
func TestMemberProblem(t *testing.T) {
	c := &cluster{id: "blue", ip: "127.0.0.2", weight: 100}
	good := func() *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: appName, Type: endpoint.TypeA, SetIdentifier: "blue", Targets: endpoint.Targets{"127.0.0.2"},
			TTL: ttl, Policy: endpoint.WeightedPolicy(100),
			Labels: endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/shop/app"}}
	}
	for _, tc := range []struct {
		name   string
		change func(*endpoint.Endpoint) *endpoint.Endpoint
		want   string // in the problem; "" for none
	}{
		{"published", func(e *endpoint.Endpoint) *endpoint.Endpoint { return e }, ""},
		{"absent", func(*endpoint.Endpoint) *endpoint.Endpoint { return nil }, "no member blue yet"},
		{"other owner", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Labels[endpoint.OwnerLabel] = "green"; return e }, `owned by "green"`},
		{"no owner", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Labels = nil; return e }, `owned by ""`},
		{"other Service", func(e *endpoint.Endpoint) *endpoint.Endpoint {
			e.Labels[endpoint.ResourceLabel] = "service/default/app"
			return e
		}, `comes from "service/default/app"`},
		{"other address", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Targets = endpoint.Targets{"127.0.0.3"}; return e }, "not at the Service's load balancer 127.0.0.2"},
		{"other weight", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Policy = endpoint.WeightedPolicy(90); return e }, "not weight 100"},
		{"not weighted", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Policy = endpoint.RoutingPolicy{}; return e }, "not weight 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memberProblem(tc.change(good()), c)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("memberProblem = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestKubeKeepHint: demo --kube's --keep hint names the Cutover object (kubectl get, and
// the `cutover dashboard` that follows it, both at green's kubeconfig) and, its journal
// being the object's status, no state dir or `cutover status` command, which would find
// nothing.
func TestKubeKeepHint(t *testing.T) {
	k := &kube{clusters: []*kubeCluster{
		{id: "blue", api: &kubetest.Cluster{Kubeconfig: "/d/blue/kubeconfig"}},
		{id: "green", api: &kubetest.Cluster{Kubeconfig: "/d/green/kubeconfig"}},
	}}
	got := keepHint("http://127.0.0.1:8080/", "http://127.0.0.1:10080", "ZDEMO123", "127.0.0.1:10053", "/d/demo-cutover.yaml", "") + k.hint()
	for _, want := range []string{
		"  plan file   /d/demo-cutover.yaml\n",
		"  Cutover     kubectl --kubeconfig /d/green/kubeconfig --namespace shop get cutover demo -o yaml\n",
		"  follow      crossfade cutover dashboard --kubeconfig /d/green/kubeconfig -n shop demo\n",
		"  blue        kubectl --kubeconfig /d/blue/kubeconfig --namespace shop describe service app\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hint lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"state dir", "cutover status"} {
		if strings.Contains(got, not) {
			t.Errorf("hint names %q, which demo --kube does not keep:\n%s", not, got)
		}
	}
}
