package chart_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/controllertest"
)

// owner is the txtOwnerId every case sets: the chart requires one.
const owner = "blue"

// repository is the image.repository every case sets: no image is published, so the
// chart has no default and requires one.
const repository = "registry.example/crossfade"

// chartCase is one set of values and what its rendering must hold beyond the invariants
// every rendering keeps (checkInvariants).
type chartCase struct {
	name string
	// values are helm's value flags, after --set txtOwnerId=blue and image.repository.
	values []string
	// fullname is the objects' name when the values change it (default cf-crossfade).
	fullname string
	check    func(t *testing.T, r rendered, d *appsv1.Deployment)
}

// allSources is every --source the controller reads, as a --set-json list.
var allSources = `["` + strings.Join(controller.Sources, `","`) + `"]`

// cases is the values matrix: lint, template, the binary's flag parsing and the API
// server's dry-run all run over it.
var cases = []chartCase{
	{
		name: "defaults",
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			want := []string{"ClusterRole/" + fullname, "ClusterRoleBinding/" + fullname, "Deployment/" + fullname,
				"Service/" + fullname, "ServiceAccount/" + fullname}
			if got := r.kinds(); !slices.Equal(got, want) {
				t.Errorf("objects = %v, want %v", got, want)
			}
			wantArgs := []string{"controller", "--log-level=info", "--log-format=text", "--provider=route53",
				"--source=service", "--source=ingress", "--policy=upsert-only", "--registry=txt",
				"--txt-owner-id=blue", "--interval=1m", "--metrics-address=:7979", "--leader-elect=false"}
			if got := container(t, d).Args; !slices.Equal(got, wantArgs) {
				t.Errorf("args = %q\nwant %q", got, wantArgs)
			}
			if got := container(t, d).Image; got != repository+":0.1.0" {
				t.Errorf("image = %q, want image.repository with the chart's appVersion as tag", got)
			}
			checkPodEnv(t, container(t, d).Env)
			if env := container(t, d).Env; len(env) != 3 {
				t.Errorf("env = %v, want only POD_NAME, POD_NAMESPACE and POD_UID", env)
			}
			if got, want := ruleList(t, r), []string{"/events: create,patch", "/services: list,watch", "/nodes: list,watch",
				"discovery.k8s.io/endpointslices: list,watch", "networking.k8s.io/ingresses: list,watch"}; !slices.Equal(got, want) {
				t.Errorf("ClusterRole rules = %q\nwant %q", got, want)
			}
			if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("replicas %d, strategy %q: want 1 and Recreate (no two writers without a Lease)", *d.Spec.Replicas, d.Spec.Strategy.Type)
			}
			var sa corev1.ServiceAccount
			r.typed("ServiceAccount", fullname, &sa)
			if len(sa.Annotations) != 0 {
				t.Errorf("ServiceAccount annotations = %v, want none", sa.Annotations)
			}
		},
	},
	{
		name:   "replicas 2: leader election, Lease Role, PodDisruptionBudget",
		values: []string{"--set", "replicas=2"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := container(t, d).Args
			for _, a := range []string{"--leader-elect=true", "--leader-election-namespace=" + namespace, "--leader-election-id=" + fullname} {
				if !slices.Contains(args, a) {
					t.Errorf("args %q lack %s", args, a)
				}
			}
			if *d.Spec.Replicas != 2 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
				d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
				t.Errorf("replicas %d, strategy %+v: want 2, RollingUpdate with maxUnavailable 0", *d.Spec.Replicas, d.Spec.Strategy)
			}
			var role rbacv1.Role
			r.typed("Role", fullname+"-leader-election", &role)
			want := []rbacv1.PolicyRule{
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{fullname}, Verbs: []string{"get", "update"}},
			}
			if fmt.Sprint(role.Rules) != fmt.Sprint(want) {
				t.Errorf("Role rules = %+v\nwant %+v", role.Rules, want)
			}
			var rb rbacv1.RoleBinding
			r.typed("RoleBinding", fullname+"-leader-election", &rb)
			if rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 || rb.Subjects[0].Name != fullname || rb.Subjects[0].Namespace != namespace {
				t.Errorf("RoleBinding = %+v, want Role %s bound to ServiceAccount %s/%s", rb, role.Name, namespace, fullname)
			}
			var pdb policyv1.PodDisruptionBudget
			r.typed("PodDisruptionBudget", fullname, &pdb)
			if pdb.Spec.MaxUnavailable.IntValue() != 1 || !maps.Equal(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
				t.Errorf("PodDisruptionBudget spec = %+v, want maxUnavailable 1 over the Deployment's pods", pdb.Spec)
			}
		},
	},
	{
		name:   "replicas 3 without a PodDisruptionBudget",
		values: []string{"--set", "replicas=3", "--set", "podDisruptionBudget.enabled=false"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if r.find("PodDisruptionBudget", fullname) != nil {
				t.Error("PodDisruptionBudget rendered though disabled")
			}
		},
	},
	{
		name: "IRSA and a region",
		values: []string{"--set", `serviceAccount.annotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::111122223333:role/crossfade`,
			"--set", "aws.region=eu-west-1"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			var sa corev1.ServiceAccount
			r.typed("ServiceAccount", fullname, &sa)
			if got := sa.Annotations["eks.amazonaws.com/role-arn"]; got != "arn:aws:iam::111122223333:role/crossfade" {
				t.Errorf("role-arn annotation = %q", got)
			}
			if got := envValue(container(t, d), "AWS_REGION"); got != "eu-west-1" {
				t.Errorf("AWS_REGION = %q, want eu-west-1", got)
			}
		},
	},
	{
		name: "ServiceMonitor",
		values: []string{"--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.interval=30s",
			"--set", "serviceMonitor.additionalLabels.release=prometheus"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			sm := r.find("ServiceMonitor", fullname)
			if sm == nil {
				t.Fatalf("no ServiceMonitor; got %v", r.kinds())
			}
			if sm.GetLabels()["release"] != "prometheus" {
				t.Errorf("ServiceMonitor labels = %v, want release=prometheus added", sm.GetLabels())
			}
			var svc corev1.Service
			r.typed("Service", fullname, &svc)
			sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			if len(sel) == 0 || !subset(sel, svc.Labels) {
				t.Errorf("ServiceMonitor selector %v does not select the Service (labels %v)", sel, svc.Labels)
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			want := map[string]any{"port": "http", "path": "/metrics", "interval": "30s"}
			if len(eps) != 1 || fmt.Sprint(eps[0]) != fmt.Sprint(want) {
				t.Errorf("endpoints = %v, want [%v]", eps, want)
			}
			if svc.Spec.Ports[0].Name != "http" || svc.Spec.Ports[0].Port != 7979 {
				t.Errorf("Service ports = %+v, want http 7979", svc.Spec.Ports)
			}
		},
	},
	{
		name: "rbac.create false with an existing ServiceAccount",
		values: []string{"--set", "rbac.create=false", "--set", "serviceAccount.create=false",
			"--set", "serviceAccount.name=dns-controller", "--set", "replicas=2"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			want := []string{"Deployment/" + fullname, "PodDisruptionBudget/" + fullname, "Service/" + fullname}
			if got := r.kinds(); !slices.Equal(got, want) {
				t.Errorf("objects = %v, want %v (no ServiceAccount, ClusterRole, Role or binding)", got, want)
			}
			if d.Spec.Template.Spec.ServiceAccountName != "dns-controller" {
				t.Errorf("serviceAccountName = %q, want dns-controller", d.Spec.Template.Spec.ServiceAccountName)
			}
		},
	},
	{
		name:   "extraArgs as a list",
		values: []string{"--set-json", `extraArgs=["--aws-prefer-cname","--txt-wildcard-replacement=any"]`},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := container(t, d).Args
			if got := args[len(args)-2:]; !slices.Equal(got, []string{"--aws-prefer-cname", "--txt-wildcard-replacement=any"}) {
				t.Errorf("last args = %q, want the extraArgs in order", got)
			}
		},
	},
	{
		name: "extraArgs as external-dns's map",
		values: []string{"--set-json",
			`extraArgs={"aws-prefer-cname":null,"annotation-prefix":["crossfade.io/","external-dns.alpha.kubernetes.io/"],"debounce":"2s","aws-max-retries":5}`},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := container(t, d).Args
			want := []string{"--annotation-prefix=crossfade.io/", "--annotation-prefix=external-dns.alpha.kubernetes.io/",
				"--aws-max-retries=5", "--aws-prefer-cname", "--debounce=2s"}
			if got := args[len(args)-len(want):]; !slices.Equal(got, want) {
				t.Errorf("last args = %q, want %q", got, want)
			}
		},
	},
	{
		name: "env",
		values: []string{"--set", "aws.region=us-west-2", "--set-json",
			`env=[{"name":"AWS_STS_REGIONAL_ENDPOINTS","value":"regional"},{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]`},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			env := container(t, d).Env
			var names []string
			for _, e := range env {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, []string{"POD_NAME", "POD_NAMESPACE", "POD_UID", "AWS_REGION", "AWS_STS_REGIONAL_ENDPOINTS", "NODE"}) {
				t.Fatalf("env = %v", names)
			}
			checkPodEnv(t, env)
			if env[5].ValueFrom == nil || env[5].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
				t.Errorf("env NODE = %+v, want its fieldRef kept", env[5])
			}
		},
	},
	{
		name:   "every source",
		values: []string{"--set-json", "sources=" + allSources},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			var got []string
			for _, a := range container(t, d).Args {
				if s, ok := strings.CutPrefix(a, "--source="); ok {
					got = append(got, s)
				}
			}
			if !slices.Equal(got, controller.Sources) {
				t.Errorf("--source flags = %v, want %v", got, controller.Sources)
			}
		},
	},
	{
		name: "external-dns's publishing values",
		values: []string{"--set", "provider.name=aws", "--set", "policy=sync", "--set", "interval=30s",
			"--set-json", `domainFilters=["example.com","example.org"]`, "--set-json", `excludeDomains=["internal.example.com"]`,
			"--set", "txtPrefix=%{record_type}-", "--set", "aws.zoneType=public", "--set-json", `aws.zoneIdFilters=["Z0123456789ABC"]`,
			"--set", "labelFilter=team=web", "--set", "annotationFilter=kubernetes.io/ingress.class in (alb)",
			"--set-json", `managedRecordTypes=["A","AAAA","CNAME","TXT"]`, "--set", "logLevel=debug", "--set", "logFormat=json"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := container(t, d).Args
			for _, a := range []string{"--provider=aws", "--policy=sync", "--interval=30s", "--domain-filter=example.com",
				"--domain-filter=example.org", "--exclude-domains=internal.example.com", "--txt-prefix=%{record_type}-",
				"--aws-zone-type=public", "--zone-id-filter=Z0123456789ABC", "--label-filter=team=web",
				"--annotation-filter=kubernetes.io/ingress.class in (alb)", "--managed-record-types=TXT",
				"--log-level=debug", "--log-format=json"} {
				if !slices.Contains(args, a) {
					t.Errorf("args %q lack %q", args, a)
				}
			}
		},
	},
	{
		name: "pod placement and metadata",
		values: []string{"--set", "podAnnotations.team=dns", "--set", "podLabels.tier=platform",
			"--set", "priorityClassName=system-cluster-critical", "--set", "nodeSelector.kubernetes\\.io/os=linux",
			"--set-json", `tolerations=[{"key":"CriticalAddonsOnly","operator":"Exists"}]`,
			"--set-json", `resources={"requests":{"cpu":"50m","memory":"64Mi"},"limits":{"memory":"256Mi"}}`,
			"--set", "image.tag=v1.2.3", "--set-json", `imagePullSecrets=[{"name":"regcred"}]`,
			"--set-string", "commonLabels.cost-center=42"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			p := d.Spec.Template
			if p.Annotations["team"] != "dns" || p.Labels["tier"] != "platform" || p.Spec.PriorityClassName != "system-cluster-critical" ||
				p.Spec.NodeSelector["kubernetes.io/os"] != "linux" || len(p.Spec.Tolerations) != 1 ||
				p.Spec.ImagePullSecrets[0].Name != "regcred" || !strings.HasSuffix(p.Spec.Containers[0].Image, ":v1.2.3") ||
				p.Spec.Containers[0].Resources.Requests.Memory().String() != "64Mi" {
				t.Errorf("pod template = %+v", p)
			}
			for _, o := range r.objs {
				if o.GetLabels()["cost-center"] != "42" {
					t.Errorf("%s/%s lacks commonLabels", o.GetKind(), o.GetName())
				}
			}
		},
	},
	{
		// Off (as by default): no Cloud Map flag, and with sources [ingress] no rule but
		// the events' and the Ingresses'.
		name:   "cloudMap off with sources [ingress]",
		values: []string{"--set", "cloudMap.enabled=false", "--set", "cloudMap.clusterId=blue-1", "--set-json", `sources=["ingress"]`},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			for _, a := range container(t, d).Args {
				if strings.HasPrefix(a, "--cloudmap") {
					t.Errorf("arg %q with cloudMap.enabled false", a)
				}
			}
			if got, want := ruleList(t, r), []string{"/events: create,patch", "networking.k8s.io/ingresses: list,watch"}; !slices.Equal(got, want) {
				t.Errorf("ClusterRole rules = %q\nwant %q", got, want)
			}
		},
	},
	{
		// On with sources [ingress]: every Cloud Map flag, and list and watch of what the
		// publisher reads, Services and EndpointSlices, though no source reads them (the
		// controller's informers would never sync without them: nothing published).
		name: "cloudMap on with sources [ingress]",
		values: []string{"--set", "cloudMap.enabled=true", "--set", "cloudMap.clusterId=blue-1",
			"--set-json", `cloudMap.namespaces=["mesh.local","apps.example"]`, "--set", "cloudMap.endpoint=https://servicediscovery.eu-west-1.amazonaws.com",
			"--set", "cloudMap.operationTimeout=90s", "--set-json", `sources=["ingress"]`},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			var got []string
			for _, a := range container(t, d).Args {
				if strings.HasPrefix(a, "--cloudmap") {
					got = append(got, a)
				}
			}
			want := []string{"--cloudmap", "--cloudmap-cluster-id=blue-1", "--cloudmap-namespace=mesh.local", "--cloudmap-namespace=apps.example",
				"--cloudmap-endpoint=https://servicediscovery.eu-west-1.amazonaws.com", "--cloudmap-operation-timeout=90s"}
			if !slices.Equal(got, want) {
				t.Errorf("Cloud Map args = %q\nwant %q", got, want)
			}
			if got, want := ruleList(t, r), []string{"/events: create,patch", "/services: list,watch", "discovery.k8s.io/endpointslices: list,watch",
				"networking.k8s.io/ingresses: list,watch"}; !slices.Equal(got, want) {
				t.Errorf("ClusterRole rules = %q\nwant %q", got, want)
			}
		},
	},
	{
		// On with only the defaults of its other keys: the flag alone (the controller
		// defaults the cluster id to the owner id), and no rule twice beside the service
		// source's.
		name:   "cloudMap on with every source",
		values: []string{"--set", "cloudMap.enabled=true", "--set-json", "sources=" + allSources},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			var got []string
			for _, a := range container(t, d).Args {
				if strings.HasPrefix(a, "--cloudmap") {
					got = append(got, a)
				}
			}
			if !slices.Equal(got, []string{"--cloudmap"}) {
				t.Errorf("Cloud Map args = %q, want [--cloudmap]", got)
			}
			rules := ruleList(t, r)
			seen := map[string]bool{}
			for _, rule := range rules {
				res, _, _ := strings.Cut(rule, ":")
				if seen[res] {
					t.Errorf("%s granted by two rules: %q", res, rules)
				}
				seen[res] = true
			}
			for _, res := range []string{"/services", "discovery.k8s.io/endpointslices", "/nodes"} {
				if !seen[res] {
					t.Errorf("no rule for %s: %q", res, rules)
				}
			}
		},
	},
	{
		// The Cutover CRD, on the API server's dry-run with the rest of the matrix; the
		// controller runs Cutovers, with their RBAC and scratch volume, and nothing more.
		name:   "cutovers.enabled: the Cutover CRD, --cutovers, its RBAC and scratch",
		values: []string{"--set", "cutovers.enabled=true"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			checkCutoverCRD(t, r.objs, true)
			if got, want := cutoverArgs(container(t, d).Args), []string{"--cutovers"}; !slices.Equal(got, want) {
				t.Errorf("cutover args = %q, want %q", got, want)
			}
			if got, want := ruleList(t, r), append([]string{"/events: create,patch", "/services: list,watch", "/nodes: list,watch",
				"discovery.k8s.io/endpointslices: list,watch", "networking.k8s.io/ingresses: list,watch"}, cutoverRules...); !slices.Equal(got, want) {
				t.Errorf("ClusterRole rules = %q\nwant %q", got, want)
			}
			checkCutoverScratch(t, d, true)
		},
	},
	{
		// Every cutover runner flag, and two replicas: the ClusterRole's Leases cover the
		// leader-election Lease, and no Role is rendered for it.
		name: "cutovers.enabled with its flags and two replicas",
		values: []string{"--set", "cutovers.enabled=true", "--set", "replicas=2",
			"--set-json", `cutovers.dnsServers=["ns-1.awsdns-01.com:53","192.0.2.53"]`,
			"--set", "cutovers.elbv2Endpoint=https://elasticloadbalancing.eu-west-1.amazonaws.com",
			"--set", "cutovers.cloudwatchEndpoint=https://monitoring.eu-west-1.amazonaws.com"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			want := []string{"--cutovers", "--dns-server=ns-1.awsdns-01.com:53", "--dns-server=192.0.2.53",
				"--elbv2-endpoint=https://elasticloadbalancing.eu-west-1.amazonaws.com",
				"--cloudwatch-endpoint=https://monitoring.eu-west-1.amazonaws.com"}
			if got := cutoverArgs(container(t, d).Args); !slices.Equal(got, want) {
				t.Errorf("cutover args = %q, want %q", got, want)
			}
			if !slices.Contains(container(t, d).Args, "--leader-elect=true") {
				t.Errorf("args = %q, want leader election", container(t, d).Args)
			}
			if got := ruleList(t, r); !slices.Equal(got[len(got)-len(cutoverRules):], cutoverRules) {
				t.Errorf("ClusterRole rules = %q, want the Cutovers' %q last", got, cutoverRules)
			}
			if r.find("Role", fullname+"-leader-election") != nil || r.find("RoleBinding", fullname+"-leader-election") != nil {
				t.Errorf("objects %v: a leader-election Role beside the ClusterRole's Leases, a grant twice", r.kinds())
			}
			checkCutoverScratch(t, d, true)
		},
	},
	{
		// Off: the defaults' rules and args (the "defaults" case) say it too; here
		// explicitly, with the runner values set, which configure nothing then.
		name:   "cutovers off: no CRD, flag, rule or volume",
		values: []string{"--set", "cutovers.enabled=false", "--set-json", `cutovers.dnsServers=["192.0.2.53"]`, "--set", "replicas=2"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			checkCutoverCRD(t, r.objs, false)
			if got := cutoverArgs(container(t, d).Args); len(got) != 0 {
				t.Errorf("cutover args = %q without cutovers.enabled, want none", got)
			}
			for _, rule := range ruleList(t, r) {
				if slices.Contains(cutoverRules, rule) {
					t.Errorf("ClusterRole rule %q without cutovers.enabled", rule)
				}
			}
			if r.find("Role", fullname+"-leader-election") == nil {
				t.Errorf("objects %v: want the leader-election Role (two replicas, no cutovers)", r.kinds())
			}
			checkCutoverScratch(t, d, false)
		},
	},
	{
		name:   "registry crd: DNSRecord rules, DNSRecords in the release namespace",
		values: []string{"--set", "registry=crd"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			args := container(t, d).Args
			i := slices.Index(args, "--registry=crd")
			if i < 0 || i+1 >= len(args) || args[i+1] != "--crd-registry-namespace="+namespace {
				t.Errorf("args %q: want --registry=crd then --crd-registry-namespace=%s", args, namespace)
			}
			rules := ruleList(t, r)
			for _, want := range dnsRecordRules {
				if !slices.Contains(rules, want) {
					t.Errorf("ClusterRole rules %q lack %q", rules, want)
				}
			}
		},
	},
	{
		name:   "registry crd in crdRegistryNamespace",
		values: []string{"--set", "registry=crd", "--set", "crdRegistryNamespace=dns-ownership"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if args := container(t, d).Args; !slices.Contains(args, "--crd-registry-namespace=dns-ownership") {
				t.Errorf("args %q lack --crd-registry-namespace=dns-ownership", args)
			}
		},
	},
	{
		name:   "registry txt: no DNSRecord rule nor flag",
		values: []string{"--set", "registry=txt", "--set", "crdRegistryNamespace=dns-ownership"},
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			for _, a := range container(t, d).Args {
				if strings.HasPrefix(a, "--crd-registry-namespace") {
					t.Errorf("arg %q with registry txt", a)
				}
			}
			for _, rule := range ruleList(t, r) {
				if slices.Contains(dnsRecordRules, rule) {
					t.Errorf("ClusterRole rule %q with registry txt", rule)
				}
			}
		},
	},
	{
		name:     "fullnameOverride",
		values:   []string{"--set", "fullnameOverride=dns", "--set", "replicas=2"},
		fullname: "dns",
		check: func(t *testing.T, r rendered, d *appsv1.Deployment) {
			if !slices.Contains(container(t, d).Args, "--leader-election-id=dns") || r.find("Role", "dns-leader-election") == nil {
				t.Errorf("objects %v, args %q: want everything named dns", r.kinds(), container(t, d).Args)
			}
		},
	},
}

// dnsRecordRules are the ClusterRole rules registry: crd adds (ruleList's form).
var dnsRecordRules = []string{"externaldns.k8s.io/dnsrecords: list,create,update,delete", "externaldns.k8s.io/dnsrecords/status: update"}

// flags returns the case's helm value flags, the owner id and the image repository first.
func (c chartCase) flags() []string {
	return append(required(), c.values...)
}

// required are the value flags of what the chart requires: the owner id and the image
// repository.
func required() []string {
	return []string{"--set", "txtOwnerId=" + owner, "--set", "image.repository=" + repository}
}

// objectName returns the name of the case's objects.
func (c chartCase) objectName() string {
	if c.fullname != "" {
		return c.fullname
	}
	return fullname
}

// render renders the case with h and returns the rendering and its Deployment; a helm
// failure fails the test.
func (c chartCase) render(t *testing.T, h *helm) (rendered, *appsv1.Deployment) {
	t.Helper()
	objs, err := h.template(c.flags()...)
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{t: t, objs: objs}
	var d appsv1.Deployment
	r.typed("Deployment", c.objectName(), &d)
	return r, &d
}

// TestTemplate lints and renders the chart over the values matrix and checks each
// rendering: the invariants every rendering keeps, then the case's own.
func TestTemplate(t *testing.T) {
	h := newHelm(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.must(t, append([]string{"lint", "--strict", chartDir}, c.flags()...)...)
			r, d := c.render(t, h)
			checkInvariants(t, r, d, c.objectName())
			c.check(t, r, d)
		})
	}
}

// checkInvariants checks what holds for every set of values: labels, names and
// namespaces; the selector; the hardened security context; the probes; no volume (the
// controller writes no file); and leader election on exactly when replicas > 1, with
// its Lease granted by a Role of the same name.
func checkInvariants(t *testing.T, r rendered, d *appsv1.Deployment, name string) {
	t.Helper()
	for _, o := range r.objs {
		if o.GetKind() == "CustomResourceDefinition" {
			// deploy/crds's file as generated, with no chart label: checkCutoverCRD
			// compares it whole.
			continue
		}
		l := o.GetLabels()
		if l["app.kubernetes.io/name"] != "crossfade" || l["app.kubernetes.io/instance"] != releaseName ||
			l["app.kubernetes.io/managed-by"] != "Helm" || l["helm.sh/chart"] != "crossfade-0.1.0" {
			t.Errorf("%s/%s labels = %v", o.GetKind(), o.GetName(), l)
		}
		clusterScoped := o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding"
		if clusterScoped != (o.GetNamespace() == "") || (!clusterScoped && o.GetNamespace() != namespace) {
			t.Errorf("%s/%s namespace = %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}

	sel := d.Spec.Selector.MatchLabels
	want := map[string]string{"app.kubernetes.io/name": "crossfade", "app.kubernetes.io/instance": releaseName}
	if !maps.Equal(sel, want) || !subset(sel, d.Spec.Template.Labels) {
		t.Errorf("selector %v, pod labels %v: want %v, on the pods", sel, d.Spec.Template.Labels, want)
	}
	var svc corev1.Service
	r.typed("Service", name, &svc)
	if !maps.Equal(svc.Spec.Selector, sel) {
		t.Errorf("Service selector %v, want the Deployment's %v", svc.Spec.Selector, sel)
	}

	pod := d.Spec.Template.Spec
	psc := pod.SecurityContext
	if psc == nil || !isTrue(psc.RunAsNonRoot) || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %+v, want non-root with seccomp RuntimeDefault", psc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("containers = %d, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || !isTrue(sc.RunAsNonRoot) || sc.RunAsUser == nil || *sc.RunAsUser != 65532 || !isTrue(sc.ReadOnlyRootFilesystem) ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged == nil || *sc.Privileged ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container securityContext = %+v", sc)
	}
	if (len(pod.Volumes) != 0 || len(c.VolumeMounts) != 0) && !slices.Contains(c.Args, "--cutovers") {
		t.Errorf("volumes %v, mounts %v: want none, the controller writes no file without --cutovers", pod.Volumes, c.VolumeMounts)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 7979 ||
		!slices.Contains(c.Args, "--metrics-address=:7979") {
		t.Errorf("ports %+v, args %q: want http 7979 serving the metrics address", c.Ports, c.Args)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET %s on port http", p.name, p.probe, p.path)
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "controller" || !slices.Contains(c.Args, "--txt-owner-id="+owner) {
		t.Errorf("args = %q, want `controller … --txt-owner-id=%s`", c.Args, owner)
	}

	sa := pod.ServiceAccountName
	if r.find("ServiceAccount", sa) == nil && r.find("ServiceAccount", name) != nil {
		t.Errorf("pods run as %q, not the rendered ServiceAccount", sa)
	}
	if crb := r.find("ClusterRoleBinding", name); crb != nil {
		var b rbacv1.ClusterRoleBinding
		r.typed("ClusterRoleBinding", name, &b)
		if b.RoleRef.Name != name || len(b.Subjects) != 1 || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != namespace {
			t.Errorf("ClusterRoleBinding = %+v, want ClusterRole %s bound to %s/%s", b, name, namespace, sa)
		}
	}

	leader := *d.Spec.Replicas > 1
	if got := slices.Contains(c.Args, "--leader-elect=true"); got != leader || slices.Contains(c.Args, "--leader-elect=false") == leader {
		t.Errorf("replicas %d, args %q: want leader election exactly when replicas > 1", *d.Spec.Replicas, c.Args)
	}
	if role := r.find("Role", name+"-leader-election"); role != nil {
		var rl rbacv1.Role
		r.typed("Role", role.GetName(), &rl)
		if !leader || !slices.Contains(c.Args, "--leader-election-id="+rl.Rules[1].ResourceNames[0]) {
			t.Errorf("Role %v with replicas %d, args %q: want it only with leader election, for the Lease named in the args",
				rl.Rules, *d.Spec.Replicas, c.Args)
		}
	} else if leader && r.find("ClusterRole", name) != nil && !slices.Contains(c.Args, "--cutovers") {
		// With --cutovers, the ClusterRole's Leases grant it (the cutovers cases check).
		t.Errorf("leader election with rbac.create but no Role for its Lease; got %v", r.kinds())
	}
}

// cutoverRules are the ClusterRole's rules for `controller --cutovers`, as ruleList
// renders them: what test/rbac proves sufficient and minimal.
var cutoverRules = []string{"crossfade.io/cutovers: get,list,watch,patch", "crossfade.io/cutovers/status: update",
	"coordination.k8s.io/leases: get,create,update"}

// cutoverArgs returns the args that configure `controller --cutovers`, in order.
func cutoverArgs(args []string) []string {
	var out []string
	for _, a := range args {
		for _, f := range []string{"--cutovers", "--dns-server", "--elbv2-endpoint", "--cloudwatch-endpoint"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				out = append(out, a)
			}
		}
	}
	return out
}

// checkCutoverScratch checks the Deployment's volumes: with cutovers, exactly one
// emptyDir mounted writable at /tmp (the reconciler's state directory is made under
// os.TempDir(); the image has no /tmp and the root filesystem is read-only), and the
// root filesystem still read-only; without, no volume.
func checkCutoverScratch(t *testing.T, d *appsv1.Deployment, want bool) {
	t.Helper()
	pod, c := d.Spec.Template.Spec, container(t, d)
	if !want {
		if len(pod.Volumes) != 0 || len(c.VolumeMounts) != 0 {
			t.Errorf("volumes %+v, mounts %+v without cutovers.enabled, want none", pod.Volumes, c.VolumeMounts)
		}
		return
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].EmptyDir == nil || len(c.VolumeMounts) != 1 ||
		c.VolumeMounts[0].Name != pod.Volumes[0].Name || c.VolumeMounts[0].MountPath != "/tmp" || c.VolumeMounts[0].ReadOnly {
		t.Errorf("volumes %+v, mounts %+v: want one emptyDir mounted writable at /tmp", pod.Volumes, c.VolumeMounts)
	}
	if tmp := envValue(c, "TMPDIR"); tmp != "" && tmp != "/tmp" && !strings.HasPrefix(tmp, "/tmp/") {
		t.Errorf("TMPDIR = %q: the state directory would be made outside the emptyDir", tmp)
	}
	if sc := c.SecurityContext; sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) {
		t.Errorf("container securityContext %+v: want the root filesystem read-only still", sc)
	}
}

// TestControllerAcceptsRenderedArgs runs the controller binary with each rendering's
// arguments (pointed at a kubeconfig that does not exist): every flag parses, none is
// unknown to it (it would only warn about one), the values pass its own checks, and it
// gets as far as reading the kubeconfig.
func TestControllerAcceptsRenderedArgs(t *testing.T) {
	h := newHelm(t)
	bin := controllertest.Binary(t)
	missing := t.TempDir() + "/no-kubeconfig"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, d := c.render(t, h)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(container(t, d).Args, "--kubeconfig", missing)...)
			cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=") // never in-cluster
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("exited 0 without a kubeconfig:\n%s", out)
			}
			if !strings.Contains(string(out), "--kubeconfig: stat "+missing+": no such file or directory") {
				t.Errorf("did not get as far as the kubeconfig:\n%s", out)
			}
			if s := string(out); strings.Contains(s, "unknown flag") || strings.Contains(s, "not supported") {
				t.Errorf("a rendered flag is unknown to the controller:\n%s", out)
			}
		})
	}
}

// TestSchemaRejects: values.schema.json refuses a misspelled key or a mistyped value,
// and the templates' own checks refuse what the schema cannot say, each with a message
// naming the key, in `helm template`, `helm lint` and `helm install` alike (they share
// the validation; template and lint are run here).
func TestSchemaRejects(t *testing.T) {
	h := newHelm(t)
	bad := []struct {
		name   string
		values []string // helm's value flags, after the required ones (required()) unless noRequired
		want   []string // fragments of helm's error, in order
		// templateOnly marks a check made by a template (required, fail), not the schema:
		// `helm lint` only logs those, and so accepts the values.
		templateOnly bool
		noRequired   bool
	}{
		{name: "no owner id", noRequired: true, values: []string{"--set", "image.repository=" + repository},
			want: []string{"(root): txtOwnerId is required"}},
		// No image is published: a default would pull a name no one publishes to (or
		// anyone could), so the chart wants the one the user pushed.
		{name: "no image repository", noRequired: true, values: []string{"--set", "txtOwnerId=" + owner},
			want: []string{"image: repository is required"}},
		{name: "empty image repository", values: []string{"--set", "image.repository="},
			want: []string{"image.repository", "String length must be greater than or equal to 1"}},
		{name: "neither owner id nor image", noRequired: true,
			want: []string{"(root): txtOwnerId is required", "image: repository is required"}},
		{name: "empty owner id", values: []string{"--set", "txtOwnerId="},
			want: []string{"txtOwnerId", "String length must be greater than or equal to 1"}},
		{name: "misspelled top-level key", values: []string{"--set-json", `domainFilter=["example.com"]`},
			want: []string{"Additional property domainFilter is not allowed"}},
		{name: "misspelled nested key", values: []string{"--set", "serviceAccount.annotation.x=y"},
			want: []string{"serviceAccount", "Additional property annotation is not allowed"}},
		{name: "replicas a string", values: []string{"--set-string", "replicas=two"},
			want: []string{"replicas", "Invalid type. Expected: integer, given: string"}},
		{name: "replicas zero", values: []string{"--set", "replicas=0"},
			want: []string{"replicas", "greater than or equal to 1"}},
		{name: "unknown policy", values: []string{"--set", "policy=delete-all"},
			want: []string{"policy", `must be one of the following: "sync", "upsert-only", "create-only"`}},
		{name: "unknown source", values: []string{"--set-json", `sources=["service","node"]`},
			want: []string{"sources.1", `must be one of the following: "service"`}},
		{name: "no source", values: []string{"--set-json", `sources=[]`},
			want: []string{"sources", "Array must have at least 1 items"}},
		{name: "interval not a duration", values: []string{"--set", "interval=often"},
			want: []string{"interval", "Does not match pattern"}},
		{name: "interval a number", values: []string{"--set", "interval=60"},
			want: []string{"interval", "Invalid type. Expected: string, given: integer"}},
		{name: "external-dns's log level name", values: []string{"--set", "logLevel=warning"},
			want: []string{"logLevel", `must be one of the following: "debug", "info", "warn", "error"`}},
		{name: "provider as external-dns's old string", values: []string{"--set", "provider=aws"},
			want: []string{"provider", "Invalid type. Expected: object, given: string"}},
		{name: "unknown provider", values: []string{"--set", "provider.name=google"},
			want: []string{"provider.name", `must be one of the following: "route53", "aws"`}},
		{name: "registry", values: []string{"--set", "registry=dynamodb"},
			want: []string{"registry", `must be one of the following: "txt"`}},
		{name: "extraArgs entry without --", values: []string{"--set-json", `extraArgs=["aws-prefer-cname"]`},
			want: []string{"extraArgs.0", "Does not match pattern"}},
		{name: "rbac misspelled", values: []string{"--set", "rbac.enabled=true"},
			want: []string{"rbac", "Additional property enabled is not allowed"}},
		{name: "serviceMonitor labels under another name", values: []string{"--set", "serviceMonitor.labels.release=p"},
			want: []string{"serviceMonitor", "Additional property labels is not allowed"}},
		{name: "zone type", values: []string{"--set", "aws.zoneType=both"},
			want: []string{"aws.zoneType", `must be one of the following: "", "public", "private"`}},
		{name: "service port out of range", values: []string{"--set", "service.port=70000"},
			want: []string{"service.port", "less than or equal to 65535"}},
		{name: "label value not a string", values: []string{"--set", "podLabels.tier=1"},
			want: []string{"podLabels.tier", "Invalid type. Expected: string, given: integer"}},
		{name: "prefix and suffix", values: []string{"--set", "txtPrefix=p-", "--set", "txtSuffix=-s"},
			want: []string{"txtPrefix and txtSuffix are mutually exclusive"}, templateOnly: true},
		{name: "cloudMap.enabled a string", values: []string{"--set-string", "cloudMap.enabled=yes"},
			want: []string{"cloudMap.enabled", "Invalid type. Expected: boolean, given: string"}},
		{name: "cloudMap.namespaces a string", values: []string{"--set", "cloudMap.namespaces=x"},
			want: []string{"cloudMap.namespaces", "Invalid type. Expected: array, given: string"}},
		{name: "cloudMap namespace with a comma", values: []string{"--set-json", `cloudMap.namespaces=["a.local,b.local"]`},
			want: []string{"cloudMap.namespaces.0", "Does not match pattern"}},
		{name: "cloudMap namespace twice", values: []string{"--set-json", `cloudMap.namespaces=["a.local","a.local"]`},
			want: []string{"cloudMap.namespaces", "must be unique"}},
		{name: "cloudMap key misspelled", values: []string{"--set", "cloudMap.clusterID=blue"},
			want: []string{"cloudMap", "Additional property clusterID is not allowed"}},
		{name: "cloudMap cluster id starting with a space", values: []string{"--set", "cloudMap.clusterId= blue"},
			want: []string{"cloudMap.clusterId", "Does not match pattern"}},
		{name: "cloudMap endpoint not a URL", values: []string{"--set", "cloudMap.endpoint=servicediscovery.amazonaws.com"},
			want: []string{"cloudMap.endpoint", "Does not match pattern"}},
		{name: "cloudMap operation timeout not a duration", values: []string{"--set", "cloudMap.operationTimeout=soon"},
			want: []string{"cloudMap.operationTimeout", "Does not match pattern"}},
		{name: "cutovers.enabled a string", values: []string{"--set-string", "cutovers.enabled=yes"},
			want: []string{"cutovers.enabled", "Invalid type. Expected: boolean, given: string"}},
		{name: "cutovers key unknown", values: []string{"--set", "cutovers.foo=true"},
			want: []string{"cutovers", "Additional property foo is not allowed"}},
		{name: "cutovers as a boolean", values: []string{"--set", "cutovers=true"},
			want: []string{"cutovers", "Invalid type. Expected: object, given: boolean"}},
		{name: "cutovers.dnsServers a string", values: []string{"--set", "cutovers.dnsServers=192.0.2.53"},
			want: []string{"cutovers.dnsServers", "Invalid type. Expected: array, given: string"}},
		{name: "cutovers DNS server with a comma", values: []string{"--set-json", `cutovers.dnsServers=["192.0.2.1,192.0.2.2"]`},
			want: []string{"cutovers.dnsServers.0", "Does not match pattern"}},
		{name: "cutovers ELBv2 endpoint not a URL", values: []string{"--set", "cutovers.elbv2Endpoint=elasticloadbalancing.amazonaws.com"},
			want: []string{"cutovers.elbv2Endpoint", "Does not match pattern"}},
		{name: "cutovers CloudWatch endpoint not a URL", values: []string{"--set", "cutovers.cloudwatchEndpoint=monitoring"},
			want: []string{"cutovers.cloudwatchEndpoint", "Does not match pattern"}},
		{name: "--cutovers in extraArgs", values: []string{"--set-json", `extraArgs=["--debounce=2s","--cutovers"]`},
			want: []string{"extraArgs[1] --cutovers: set Cutovers through the cutovers value", "grants the RBAC Cutovers need"}, templateOnly: true},
		{name: "--dns-server= in extraArgs", values: []string{"--set", "cutovers.enabled=true", "--set-json", `extraArgs=["--dns-server=192.0.2.53"]`},
			want: []string{"extraArgs[0] --dns-server=192.0.2.53: set Cutovers through the cutovers value"}, templateOnly: true},
		{name: "a cutover flag in the extraArgs map", values: []string{"--set-json", `extraArgs={"cutovers":null,"debounce":"2s"}`},
			want: []string{"extraArgs.cutovers: set Cutovers through the cutovers value"}, templateOnly: true},
		{name: "registry dynamodb", values: []string{"--set", "registry=dynamodb"},
			want: []string{"registry", "registry must be one of the following"}},
		{name: "registry crd with cutovers", values: []string{"--set", "registry=crd", "--set", "cutovers.enabled=true"},
			want: []string{"registry: crd does not go with cutovers.enabled"}, templateOnly: true},
		{name: "cloudMap as a boolean", values: []string{"--set", "cloudMap=true"},
			want: []string{"cloudMap", "Invalid type. Expected: object, given: boolean"}},
		{name: "--cloudmap in extraArgs", values: []string{"--set-json", `extraArgs=["--debounce=2s","--cloudmap"]`},
			want: []string{"extraArgs[1] --cloudmap: set Cloud Map through the cloudMap value", "grants the RBAC"}, templateOnly: true},
		{name: "--cloudmap=false in extraArgs", values: []string{"--set", "cloudMap.enabled=true", "--set-json", `extraArgs=["--cloudmap=false"]`},
			want: []string{"extraArgs[0] --cloudmap=false: set Cloud Map through the cloudMap value"}, templateOnly: true},
		{name: "a Cloud Map flag in the extraArgs map", values: []string{"--set-json", `extraArgs={"cloudmap-namespace":["a.local"],"debounce":"2s"}`},
			want: []string{"extraArgs.cloudmap-namespace: set Cloud Map through the cloudMap value"}, templateOnly: true},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			values := b.values
			if !b.noRequired {
				values = append(required(), values...)
			}
			cmds := [][]string{{"template", releaseName, chartDir}, {"lint", chartDir}}
			if b.templateOnly {
				cmds = cmds[:1]
			}
			for _, cmd := range cmds {
				out, err := h.run(append(cmd, values...)...)
				if err == nil {
					t.Fatalf("helm %s accepted %v:\n%s", cmd[0], b.values, out)
				}
				if !inOrder(err.Error(), b.want) {
					t.Errorf("helm %s: error lacks %q:\n%v", cmd[0], b.want, err)
				}
			}
		})
	}
}

// TestChartCRDIsDeployCRD: the DNSEndpoint CRD the chart installs (crds/) is the one in
// deploy/crds, byte for byte.
func TestChartCRDIsDeployCRD(t *testing.T) {
	const name = "dnsendpoints.externaldns.k8s.io.yaml"
	a, err := os.ReadFile(chartDir + "/crds/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../deploy/crds/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("deploy/chart/crossfade/crds/%s differs from deploy/crds/%s: copy it again", name, name)
	}
}

// TestChartDNSRecordCRDIsDeployCRD: the DNSRecord CRD the chart installs (crds/) is the
// one in deploy/crds (external-dns v0.23.0's), byte for byte.
func TestChartDNSRecordCRDIsDeployCRD(t *testing.T) {
	const name = "dnsrecords.externaldns.k8s.io.yaml"
	a, err := os.ReadFile(chartDir + "/crds/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../deploy/crds/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("deploy/chart/crossfade/crds/%s differs from deploy/crds/%s: copy it again", name, name)
	}
}

// cutoverCRDFile is the Cutover CRD as deploy/crds ships it.
const cutoverCRDFile = "../../deploy/crds/cutovers.crossfade.io.yaml"

// TestCutoverCRD: cutovers.enabled renders the Cutover CRD, exactly deploy/crds's file
// plus helm.sh/resource-policy: keep (so that no uninstall or upgrade deletes it, and
// every Cutover with it); without it, no CRD at all.
func TestCutoverCRD(t *testing.T) {
	h := newHelm(t)
	for _, tt := range []struct {
		name   string
		values []string
		want   bool
	}{
		{name: "default", want: false},
		{name: "false", values: []string{"--set", "cutovers.enabled=false"}, want: false},
		{name: "true", values: []string{"--set", "cutovers.enabled=true"}, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := h.template(append(required(), tt.values...)...)
			if err != nil {
				t.Fatal(err)
			}
			checkCutoverCRD(t, objs, tt.want)
		})
	}
}

// checkCutoverCRD checks that objs hold no CustomResourceDefinition, or (want) exactly
// one: deploy/crds/cutovers.crossfade.io.yaml's, with helm.sh/resource-policy: keep
// added to its annotations and nothing else changed.
func checkCutoverCRD(t *testing.T, objs []*unstructured.Unstructured, want bool) {
	t.Helper()
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
	}
	if !want {
		if len(crds) != 0 {
			t.Errorf("rendered %d CRDs without cutovers.enabled, want none", len(crds))
		}
		return
	}
	if len(crds) != 1 {
		t.Fatalf("rendered %d CRDs with cutovers.enabled, want 1 (the Cutover CRD)", len(crds))
	}
	b, err := os.ReadFile(cutoverCRDFile)
	if err != nil {
		t.Fatal(err)
	}
	file, err := decode(string(b))
	if err != nil || len(file) != 1 {
		t.Fatalf("%s: %d objects, %v: want one CRD", cutoverCRDFile, len(file), err)
	}
	wantCRD := file[0]
	ann := wantCRD.GetAnnotations()
	ann["helm.sh/resource-policy"] = "keep"
	wantCRD.SetAnnotations(ann)
	if !equality.Semantic.DeepEqual(crds[0].Object, wantCRD.Object) {
		got, _ := crds[0].MarshalJSON()
		w, _ := wantCRD.MarshalJSON()
		t.Errorf("the chart's Cutover CRD is not %s with helm.sh/resource-policy: keep: run `go generate ./internal/cutover/api/...`\n got %.600s\nwant %.600s",
			cutoverCRDFile, got, w)
	}
}

// ruleList returns the rendered ClusterRole's rules as "group/resource: verb,verb", one
// per resource, in order.
func ruleList(t *testing.T, r rendered) []string {
	t.Helper()
	var cr rbacv1.ClusterRole
	r.typed("ClusterRole", fullname, &cr)
	var out []string
	for _, rule := range cr.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				out = append(out, g+"/"+res+": "+strings.Join(rule.Verbs, ","))
			}
		}
	}
	return out
}

// checkPodEnv checks that env starts with POD_NAME, POD_NAMESPACE and POD_UID from the
// downward API: the controller puts its own Warning events on its Pod.
func checkPodEnv(t *testing.T, env []corev1.EnvVar) {
	t.Helper()
	want := []struct{ name, path string }{{"POD_NAME", "metadata.name"}, {"POD_NAMESPACE", "metadata.namespace"}, {"POD_UID", "metadata.uid"}}
	if len(env) < len(want) {
		t.Fatalf("env = %+v, want POD_NAME, POD_NAMESPACE and POD_UID first", env)
	}
	for i, w := range want {
		e := env[i]
		if e.Name != w.name || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != w.path {
			t.Errorf("env[%d] = %+v, want %s from the downward API's %s", i, e, w.name, w.path)
		}
	}
}

// container returns the Deployment's one container.
func container(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	if len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatal("the Deployment has no container")
	}
	return &d.Spec.Template.Spec.Containers[0]
}

// envValue returns the value of the container's environment variable name.
func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// subset reports whether every label of sub is in set.
func subset(sub, set map[string]string) bool {
	for k, v := range sub {
		if set[k] != v {
			return false
		}
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

// inOrder reports whether s holds every fragment, in order.
func inOrder(s string, fragments []string) bool {
	for _, f := range fragments {
		i := strings.Index(s, f)
		if i < 0 {
			return false
		}
		s = s[i+len(f):]
	}
	return true
}
