package rbac_test

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// chartDir is the chart under test, from this package's directory.
const chartDir = "../../deploy/chart/crossfade"

// kubeVersion is the kube-apiserver internal/kubetest runs (scripts/deps.sh pins it).
const kubeVersion = "v1.31.4"

// release is what the chart renders that RBAC is made of, for one release namespace.
type release struct {
	namespace      string
	serviceAccount *corev1.ServiceAccount
	clusterRole    *rbacv1.ClusterRole
	clusterBinding *rbacv1.ClusterRoleBinding
	// role and roleBinding grant the leader-election Lease in the release namespace; nil
	// with cutovers.enabled, whose ClusterRole grants every namespace's Leases.
	role        *rbacv1.Role
	roleBinding *rbacv1.RoleBinding
	// leaseName is the Lease the rendered Deployment's controller contends for.
	leaseName string
	// cloudMapArgs are the rendered Deployment's Cloud Map flags (--cloudmap…), in order.
	cloudMapArgs []string
	// cutoverArgs are the rendered Deployment's --cutovers and its runner flags, in order.
	cutoverArgs []string
	// registryArgs are the rendered Deployment's --registry=crd and
	// --crd-registry-namespace flags; nil with registry: txt.
	registryArgs []string
}

// roleRules are the leader-election Role's rules; none when the chart renders no Role.
func (r *release) roleRules() []rbacv1.PolicyRule {
	if r.role == nil {
		return nil
	}
	return r.role.Rules
}

// render runs `helm template` over the chart with sources enabled and two replicas, in
// release namespace ns, and returns its RBAC objects.
func render(t *testing.T, helm, ns string, sources ...string) *release {
	t.Helper()
	return renderWith(t, helm, ns, sources)
}

// renderWith is render with more of helm's value flags (--set …).
func renderWith(t *testing.T, helm, ns string, sources []string, values ...string) *release {
	t.Helper()
	list := `["` + strings.Join(sources, `","`) + `"]`
	// --kube-version: the API server the test runs (helm template assumes an older one,
	// which the chart's kubeVersion refuses).
	args := []string{"template", "crossfade", chartDir, "--namespace", ns, "--kube-version", kubeVersion,
		// Two replicas: leader election, and with it the Lease's Role, is on only then.
		"--set", "rbac.create=true", "--set", "serviceAccount.create=true", "--set", "replicas=2",
		"--set", "txtOwnerId=rbac-test", "--set", "image.repository=crossfade", "--set-json", "sources=" + list}
	cmd := exec.Command(helm, append(args, values...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	rel, err := decodeRelease(out, ns)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	return rel
}

// decodeRelease picks the RBAC objects (and the Lease name) out of rendered manifests.
func decodeRelease(manifests []byte, ns string) (*release, error) {
	rel := &release{namespace: ns, leaseName: "crossfade-controller"}
	objs, err := kubetest.DecodeManifests(bytes.NewReader(manifests))
	if err != nil {
		return nil, err
	}
	for doc, u := range objs {
		obj, kind := u.Object, u.GetKind()
		var into any
		switch kind {
		case "ServiceAccount":
			rel.serviceAccount = &corev1.ServiceAccount{}
			into = rel.serviceAccount
		case "ClusterRole":
			rel.clusterRole = &rbacv1.ClusterRole{}
			into = rel.clusterRole
		case "ClusterRoleBinding":
			rel.clusterBinding = &rbacv1.ClusterRoleBinding{}
			into = rel.clusterBinding
		case "Role":
			rel.role = &rbacv1.Role{}
			into = rel.role
		case "RoleBinding":
			rel.roleBinding = &rbacv1.RoleBinding{}
			into = rel.roleBinding
		case "Deployment":
			if id := deploymentArg(obj, "--leader-election-id"); id != "" {
				rel.leaseName = id
			}
			for _, a := range deploymentArgs(obj) {
				if strings.HasPrefix(a, "--cloudmap") {
					rel.cloudMapArgs = append(rel.cloudMapArgs, a)
				}
				if slices.ContainsFunc([]string{"--cutovers", "--dns-server=", "--elbv2-endpoint=", "--cloudwatch-endpoint="},
					func(f string) bool { return a == f || (strings.HasSuffix(f, "=") && strings.HasPrefix(a, f)) }) {
					rel.cutoverArgs = append(rel.cutoverArgs, a)
				}
				if a == "--registry=crd" || strings.HasPrefix(a, "--crd-registry-namespace=") {
					rel.registryArgs = append(rel.registryArgs, a)
				}
			}
			continue
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into); err != nil {
			return nil, fmt.Errorf("object %d (%s): %w", doc+1, kind, err)
		}
	}
	var missing []string
	// With --cutovers the ClusterRole grants every namespace's Leases, the leader
	// election's among them: a Role for it would grant it twice.
	leaseRole := len(rel.cutoverArgs) == 0
	for name, ok := range map[string]bool{"ServiceAccount": rel.serviceAccount != nil, "ClusterRole": rel.clusterRole != nil,
		"ClusterRoleBinding": rel.clusterBinding != nil, "Role (the leader-election Lease)": rel.role != nil || !leaseRole,
		"RoleBinding (the leader-election Lease)": rel.roleBinding != nil || !leaseRole} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("the chart renders no %s", strings.Join(missing, ", no "))
	}
	if !leaseRole && (rel.role != nil || rel.roleBinding != nil) {
		return nil, errors.New("the chart renders a leader-election Role beside --cutovers, whose ClusterRole grants every Lease already")
	}
	return rel, nil
}

// deploymentArg returns the value of flag in the Deployment's first container's args
// ("--flag=value" or "--flag value"), "" when absent.
func deploymentArg(obj map[string]any, flag string) string {
	args := deploymentArgs(obj)
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// deploymentArgs returns the Deployment's first container's command and args.
func deploymentArgs(obj map[string]any) []string {
	var d struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &d) != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	c := d.Spec.Template.Spec.Containers[0]
	return append(slices.Clone(c.Command), c.Args...)
}

// atom is the smallest grant of an RBAC rule: one verb on one resource of one API group
// (or on one non-resource URL), under the rule's resource names if it has any.
type atom struct {
	// role is "ClusterRole" or "Role": which of the two the rule is in.
	role     string
	rule     int
	group    string
	resource string // "" for a non-resource URL
	url      string
	verb     string
}

func (a atom) String() string {
	what := a.url
	if a.resource != "" {
		what = a.resource
		if a.group != "" {
			what = a.group + "/" + a.resource
		}
	}
	return a.role + "/" + what + "/" + a.verb
}

// atoms lists every atom of rules, in rule order.
func atoms(role string, rules []rbacv1.PolicyRule) []atom {
	var out []atom
	for i, r := range rules {
		for _, v := range r.Verbs {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out = append(out, atom{role: role, rule: i, group: g, resource: res, verb: v})
				}
			}
			for _, u := range r.NonResourceURLs {
				out = append(out, atom{role: role, rule: i, url: u, verb: v})
			}
		}
	}
	return out
}

// without returns rules with exactly a taken away: its rule is split into one rule per
// group and resource (or URL), each keeping its verbs and resource names, and a's verb
// is dropped from a's own. What every other atom grants is unchanged.
func without(rules []rbacv1.PolicyRule, a atom) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for i, r := range rules {
		if i != a.rule {
			out = append(out, *r.DeepCopy())
			continue
		}
		verbs := func(match bool) []string {
			if !match {
				return slices.Clone(r.Verbs)
			}
			return slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == a.verb })
		}
		add := func(rule rbacv1.PolicyRule) {
			if len(rule.Verbs) > 0 {
				out = append(out, rule)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				add(rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, ResourceNames: slices.Clone(r.ResourceNames),
					Verbs: verbs(a.url == "" && g == a.group && res == a.resource)})
			}
		}
		for _, u := range r.NonResourceURLs {
			add(rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: verbs(u == a.url)})
		}
	}
	return out
}

// TestAtomsAndWithout: the helpers above split and remove exactly one grant (no
// apiserver needed).
func TestAtomsAndWithout(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "nodes"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"x"}, Verbs: []string{"get"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}
	all := atoms("ClusterRole", rules)
	if len(all) != 6 {
		t.Fatalf("atoms: %d, want 6: %v", len(all), all)
	}
	for _, a := range all {
		rest := atoms("ClusterRole", without(rules, a))
		if len(rest) != len(all)-1 {
			t.Errorf("without %v: %d atoms left, want %d: %v", a, len(rest), len(all)-1, rest)
		}
		key := func(x atom) string { return x.group + "|" + x.resource + "|" + x.url + "|" + x.verb }
		for _, b := range rest {
			if key(b) == key(a) {
				t.Errorf("without %v: still granted", a)
			}
		}
	}
	got := without(rules, atom{role: "ClusterRole", rule: 1, group: "coordination.k8s.io", resource: "leases", verb: "get"})
	if len(got) != 2 {
		t.Errorf("removing a rule's only atom leaves the rule: %v", got)
	}
}
