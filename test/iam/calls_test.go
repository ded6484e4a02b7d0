package iam_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/route53api"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// The phases whose Route 53 calls are observed, each a principal with its own policy.
const (
	phaseSync       = "crossfade sync"
	phaseController = "crossfade controller"
	phaseHandover   = "crossfade handover"
	phaseCutover    = "crossfade cutover"
	phaseVerify     = "crossfade verify"
)

// TestPoliciesMatchObservedCalls runs every part of crossfade that talks to Route 53
// against one sandbox, over HTTP, as the real binary: `crossfade sync` from manifests
// (dry run, creates, a routing-policy replacement, a delete), `crossfade controller` on a
// real kube-apiserver (create, update, rename, delete, SIGTERM), `crossfade handover`
// (dry run and real), and a cutover (plan, run, status, release) and `crossfade verify`.
// The sandbox counts every call by operation, whatever its result (IAM authorizes a call
// before Route 53 judges it). Then:
//
//   - the operations of sync, controller and handover together are exactly the actions
//     of deploy/iam-policy.json;
//   - the cutover's are exactly those of deploy/iam-policy-cutover.json, a policy of its
//     own because the runner is another principal (an operator or a CI job, not the
//     controller's service account);
//   - verify's are granted by both (it reads only);
//   - the changes each group's batches carried (CREATE, DELETE) are exactly those its
//     policy's route53:ChangeResourceRecordSetsActions condition lets through: crossfade
//     never sends an UPSERT, so the policies refuse one.
//
// A new operation in the code, or an action in a policy that nothing calls, fails it.
// The test sets up its zone through the sandbox's store, not its API, so that every call
// counted is crossfade's.
func TestPoliciesMatchObservedCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary, a sandbox and a kube-apiserver")
	}
	kc := kubetest.Start(t) // first: it skips (or fails under CI) when not built
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "iam-test", "", false)
	if err != nil {
		t.Fatal(err)
	}
	obs := newObserver(sb)
	e := &env{t: t, sb: sb, zoneID: z.ID}

	// sync: each cluster's own members of a weighted name, a simple record that later
	// becomes weighted (DELETE + CREATE in one batch), an alias to a load balancer that
	// later goes (DELETE), and a record of an owner that hands over below.
	blue := manifests(t,
		service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "100", "ttl", "1"),
		service("www", "192.0.2.1", "hostname", "www.example.com"),
		lbService("lb", "k8s-shop-lb-1234567890.us-east-1.elb.amazonaws.com", "hostname", "lb.example.com", "alias", "true"))
	obs.during(t, phaseSync, func() {
		e.mustRun("sync", "--manifests", blue, "--txt-owner-id", "blue", "--domain-filter", "example.com", "--dry-run")
		e.mustRun("sync", "--manifests", blue, "--txt-owner-id", "blue", "--domain-filter", "example.com")
		e.mustRun("sync", "--manifests", manifests(t,
			service("app", "127.0.0.20", "hostname", "app.example.com", "set-identifier", "green", "aws-weight", "0", "ttl", "1")),
			"--txt-owner-id", "green", "--domain-filter", "example.com")
		e.mustRun("sync", "--manifests", manifests(t, service("old", "192.0.2.9", "hostname", "old.example.com")),
			"--txt-owner-id", "legacy", "--domain-filter", "example.com")
		e.mustRun("sync", "--manifests", manifests(t,
			service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "100", "ttl", "1"),
			service("www", "192.0.2.1", "hostname", "www.example.com", "set-identifier", "blue", "aws-weight", "1")),
			"--txt-owner-id", "blue", "--domain-filter", "example.com")
	})
	e.wantSets("after the syncs", []string{
		"app.example.com. A [blue] w=100 127.0.0.10",
		"app.example.com. A [green] w=0 127.0.0.20",
		"old.example.com. A 192.0.2.9",
		"www.example.com. A [blue] w=1 192.0.2.1",
	}, []string{"lb.example.com. A"})

	// controller: publishes a live Service, follows a TTL change and a rename, deletes
	// the record of the deleted Service, and stops on SIGTERM.
	obs.during(t, phaseController, func() { e.controller(kc) })

	// handover: legacy's record goes to blue, dry run first.
	obs.during(t, phaseHandover, func() {
		e.mustRun("handover", "--zone", "example.com", "--from", "legacy", "--to", "blue", "--dry-run")
		e.mustRun("handover", "--zone", "example.com", "--from", "legacy", "--to", "blue")
	})
	e.wantOwner("old.example.com", "blue")

	// cutover: blue → green in four steps gated on the sandbox's answers; then each
	// cluster's publisher asks for the weights the cutover left, and the cutover releases
	// them.
	planFile := e.cutoverPlan()
	state := t.TempDir()
	obs.during(t, phaseCutover, func() {
		e.mustRun("cutover", "plan", planFile, "--state-dir", state)
		e.mustRun("cutover", "run", planFile, "--state-dir", state)
		e.mustRun("cutover", "status", planFile, "--state-dir", state)
	})
	obs.during(t, phaseSync, func() {
		for _, m := range []struct{ owner, ip, weight string }{{"blue", "127.0.0.10", "0"}, {"green", "127.0.0.20", "100"}} {
			e.mustRun("sync", "--manifests", manifests(t, service("app", m.ip, "hostname", "app.example.com",
				"set-identifier", m.owner, "aws-weight", m.weight, "ttl", "1")), "--txt-owner-id", m.owner, "--domain-filter", "example.com")
		}
	})
	obs.during(t, phaseCutover, func() { e.mustRun("cutover", "release", planFile, "--state-dir", state) })
	e.wantSets("after the cutover", []string{
		"app.example.com. A [blue] w=0 127.0.0.10",
		"app.example.com. A [green] w=100 127.0.0.20",
	}, nil)

	obs.during(t, phaseVerify, func() {
		e.mustRun("verify", "app.example.com", "--dns-server", sb.DNSAddr(), "--queries", "100")
	})

	for _, phase := range slices.Sorted(maps.Keys(obs.seen)) {
		t.Logf("%s called: %v; its batches carried: %v", phase, obs.seen[phase], obs.changes[phase])
	}
	if ops := obs.ops(phaseSync, phaseController, phaseHandover, phaseCutover, phaseVerify); slices.Contains(ops, "Unknown") {
		t.Errorf("crossfade called an operation the sandbox does not serve (counted as Unknown): %v", obs.seen)
	}
	for _, c := range []struct {
		policy string
		phases []string
	}{
		{publishPolicyFile, []string{phaseSync, phaseController, phaseHandover}},
		{cutoverPolicyFile, []string{phaseCutover}},
	} {
		pol := loadPolicy(t, c.policy)
		if sent, allowed := obs.changeActions(c.phases...), pol.changeActions(); !slices.Equal(sent, allowed) {
			t.Errorf("%s sent changes %v; %s lets ChangeResourceRecordSets carry %v: make its %s condition say %v",
				strings.Join(c.phases, ", "), sent, c.policy, allowed, changeActionsKey, sent)
		}
		granted := pol.actions()
		called := obs.ops(c.phases...)
		for _, op := range called {
			if !slices.Contains(granted, op) {
				t.Errorf("%s calls %s, which %s does not grant: add route53:%s (and its resource type to this test's table)",
					strings.Join(c.phases, ", "), op, c.policy, op)
			}
		}
		for _, op := range granted {
			if !slices.Contains(called, op) {
				t.Errorf("%s grants route53:%s, which %s never called: remove it (or exercise the path that calls it here)",
					c.policy, op, strings.Join(c.phases, ", "))
			}
		}
	}
	for _, path := range []string{publishPolicyFile, cutoverPolicyFile} {
		granted := loadPolicy(t, path).actions()
		for _, op := range obs.ops(phaseVerify) {
			if !slices.Contains(granted, op) {
				t.Errorf("crossfade verify calls %s, which %s does not grant", op, path)
			}
		}
	}
}

// observer attributes the sandbox's API calls to phases: the counters' increase while a
// phase runs is that phase's. Phases run one after another, never at once.
type observer struct {
	sb      *sandbox.Sandbox
	seen    map[string]map[string]int // phase -> operation -> calls
	changes map[string]map[string]int // phase -> change action (CREATE, DELETE, UPSERT) -> changes applied
}

// newObserver is an observer of sb's calls with nothing seen yet.
func newObserver(sb *sandbox.Sandbox) *observer {
	return &observer{sb: sb, seen: map[string]map[string]int{}, changes: map[string]map[string]int{}}
}

// writePlan writes a cutover plan as NAME.yaml in a fresh directory and returns its path.
func writePlan(t *testing.T, name, plan string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatalf("write plan %s: %v", path, err)
	}
	return path
}

func (o *observer) during(t *testing.T, phase string, f func()) {
	t.Helper()
	calls, changes := byOperation(sandboxtest.APICalls(t, o.sb)), recordChanges(t, o.sb)
	f()
	add := func(into map[string]map[string]int, before, after map[string]int) {
		if into[phase] == nil {
			into[phase] = map[string]int{}
		}
		for k, n := range after {
			if d := n - before[k]; d > 0 {
				into[phase][k] += d
			}
		}
	}
	add(o.seen, calls, byOperation(sandboxtest.APICalls(t, o.sb)))
	add(o.changes, changes, recordChanges(t, o.sb))
}

// changeActions is the sorted set of change actions the phases' batches carried.
func (o *observer) changeActions(phases ...string) []string {
	var out []string
	for _, p := range phases {
		out = slices.AppendSeq(out, maps.Keys(o.changes[p]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// recordChanges reads crossfade_sandbox_record_changes_total from the sandbox's /metrics:
// the record-set changes it applied, by action.
func recordChanges(t *testing.T, sb *sandbox.Sandbox) map[string]int {
	t.Helper()
	return sandboxtest.Counts(t, sb, route53api.RecordChangesMetric, "action")
}

// ops is the sorted set of operations the phases called.
func (o *observer) ops(phases ...string) []string {
	var out []string
	for _, p := range phases {
		out = slices.AppendSeq(out, maps.Keys(o.seen[p]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// byOperation sums sandboxtest.APICalls' "operation result" counters by operation.
func byOperation(calls map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range calls {
		op, _, _ := strings.Cut(k, " ")
		out[op] += n
	}
	return out
}

// env is the sandbox and zone the phases run against.
type env struct {
	t      *testing.T
	sb     *sandbox.Sandbox
	zoneID string
}

// mustRun runs the crossfade binary against the sandbox and requires exit status 0.
func (e *env) mustRun(args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append(args, "--aws-endpoint", e.sb.APIURL(), "--log-level", "warn")
	cmd := exec.CommandContext(ctx, controllertest.Binary(e.t), args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("crossfade %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// sets renders the zone's A sets from the store as "name A [set] w=weight values", and
// its TXT sets as "name TXT [set] values".
func (e *env) sets() []string {
	e.t.Helper()
	page, err := e.sb.Store().ListRecords(e.zoneID, "", "", "", 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, s := range page.Sets {
		if s.Type != "A" && s.Type != "TXT" {
			continue
		}
		line := s.Name + " " + s.Type
		if s.SetIdentifier != "" {
			line += " [" + s.SetIdentifier + "]"
		}
		if s.Weight != nil && s.Type == "A" {
			line += fmt.Sprintf(" w=%d", *s.Weight)
		}
		if s.Alias != nil {
			line += " alias " + s.Alias.DNSName
		}
		if len(s.Records) > 0 {
			line += " " + strings.Join(s.Records, ",")
		}
		out = append(out, line)
	}
	return out
}

// wantSets requires the zone to hold each set of want and no set starting with a prefix
// of absent: a phase that silently did nothing would observe too few calls.
func (e *env) wantSets(what string, want, absent []string) {
	e.t.Helper()
	got := e.sets()
	for _, w := range want {
		if !slices.Contains(got, w) {
			e.t.Errorf("%s: the zone lacks %q:\n%s", what, w, strings.Join(got, "\n"))
		}
	}
	for _, a := range absent {
		for _, g := range got {
			if strings.HasPrefix(g, a) {
				e.t.Errorf("%s: the zone still holds %q", what, g)
			}
		}
	}
}

// wantOwner requires every ownership TXT record of name to name owner.
func (e *env) wantOwner(name, owner string) {
	e.t.Helper()
	var txts []string
	for _, s := range e.sets() {
		if strings.Contains(s, " TXT ") && strings.Contains(s, "external-dns/resource=") && strings.Contains(s, name+". TXT") {
			txts = append(txts, s)
		}
	}
	if len(txts) == 0 {
		e.t.Fatalf("no ownership record of %s:\n%s", name, strings.Join(e.sets(), "\n"))
	}
	for _, s := range txts {
		if !strings.Contains(s, "external-dns/owner="+owner+",") {
			e.t.Errorf("ownership record of %s does not name %s: %s", name, owner, s)
		}
	}
}

// controller runs `crossfade controller` (leader election on, as deployed) on a real
// kube-apiserver through one Service's life, then stops it with SIGTERM.
func (e *env) controller(kc *kubetest.Cluster) {
	t := e.t
	client := kc.Clientset(t)
	const ann = "external-dns.alpha.kubernetes.io/"
	createService(t, client, "web", "192.0.2.30", map[string]string{ann + "hostname": "web.example.com", ann + "ttl": "60"})
	// A second record of cluster-c's stays throughout: the rename and the deletion below
	// are then one of its two records going, which the deletion guard lets through, as a
	// controller's everyday deletions are (its last record going is held: see
	// test/controller/deleteguard_test.go).
	createService(t, client, "keep", "192.0.2.31", map[string]string{ann + "hostname": "keep.example.com"})
	ctl := controllertest.Start(t, controllertest.Options{Name: "controller", Kubeconfig: kc.Kubeconfig, Route53URL: e.sb.APIURL(),
		Args: []string{"--source", "service", "--source", "ingress", "--txt-owner-id", "cluster-c", "--domain-filter", "example.com",
			"--debounce", "100ms", "--interval", "1s"}})
	e.eventually("web published", func() bool {
		s := e.sets()
		return slices.Contains(s, "web.example.com. A 192.0.2.30") && slices.Contains(s, "keep.example.com. A 192.0.2.31")
	})
	annotate(t, client, "web", ann+"ttl", "120")
	ttl := func() int64 {
		if n := e.sb.Store().LookupIn(e.zoneID, "web.example.com."); n != nil {
			for _, s := range n.Sets {
				if s.Type == "A" && s.TTL != nil {
					return *s.TTL
				}
			}
		}
		return 0
	}
	e.eventually("TTL updated", func() bool { return ttl() == 120 })
	annotate(t, client, "web", ann+"hostname", "web2.example.com")
	e.eventually("renamed", func() bool {
		s := e.sets()
		return slices.Contains(s, "web2.example.com. A 192.0.2.30") && !slices.Contains(s, "web.example.com. A 192.0.2.30")
	})
	if err := client.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("deleted", func() bool { return !slices.Contains(e.sets(), "web2.example.com. A 192.0.2.30") })
	ctl.Stop(t)
	if code := ctl.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("controller exited %d after SIGTERM:\n%s", code, ctl.Log())
	}
}

// eventually polls cond every 100 ms for up to 30 s.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within 30s; zone:\n%s", what, strings.Join(e.sets(), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cutoverPlan writes a plan moving app.example.com from blue to green in 0/10/50/100 %
// steps of 1 s (its TTL), gated on the sandbox's authoritative answers.
func (e *env) cutoverPlan() string {
	e.t.Helper()
	return cutovertest.DNSPlan(e.t, "iam", "blue", "green", e.sb.DNSAddr())
}

// service renders a LoadBalancer Service whose load balancer has address ip, with
// external-dns annotations given as key, value pairs (keys without the alpha prefix).
func service(name, ip string, annotations ...string) string {
	return kubetest.ServiceManifest(name, "ip: "+ip, annotations...)
}

// lbService is service for a load balancer known by its DNS name.
func lbService(name, hostname string, annotations ...string) string {
	return kubetest.ServiceManifest(name, "hostname: "+hostname, annotations...)
}

// manifests writes each document into its own file of a fresh directory.
func manifests(t *testing.T, docs ...string) string {
	t.Helper()
	return kubetest.WriteManifests(t, docs...)
}

// createService creates a LoadBalancer Service and sets its load balancer's address, as
// the cloud controller (which does not run here) would.
func createService(t *testing.T, kc kubernetes.Interface, name, ip string, ann map[string]string) {
	t.Helper()
	kubetest.LoadBalancerService(t, kc, name, ip, ann, nil)
}

// annotate sets one annotation on a Service, retrying on a write conflict.
func annotate(t *testing.T, kc kubernetes.Interface, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		svc, err := kc.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Annotations[key] = value
		_, err = kc.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if attempt > 3 || !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}
