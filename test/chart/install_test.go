package chart_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// serviceMonitorCRD is prometheus-operator's real CRD: the chart's ServiceMonitor is
// created against its schema rather than only rendered.
const serviceMonitorCRD = "testdata/monitoring.coreos.com_servicemonitors.yaml"

// TestOnAPIServer runs the chart against a real kube-apiserver: every rendering of the
// values matrix is created with dry-run and strict field validation, then the chart is
// installed, its Deployment's command run (as the kubelet would) until it publishes,
// upgraded twice and uninstalled.
func TestOnAPIServer(t *testing.T) {
	h := newHelm(t)
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, serviceMonitorCRD)
	client := kc.Clientset(t)
	ctx := t.Context()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(kc.Config())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("dry-run", func(t *testing.T) { dryRunMatrix(t, h, client, dyn) })
	t.Run("install, upgrade, uninstall", func(t *testing.T) { installUpgradeUninstall(t, h, kc, client, dyn) })
	t.Run("Cutover CRD kept", func(t *testing.T) { cutoverCRDKept(t, h, kc, dyn) })
}

// cutoverPlan is a valid plan file: as a Cutover object, what the CRD must accept.
const cutoverPlan = "../../internal/cutover/spec/testdata/minimal.yaml"

// cutoverCRDKept installs the chart with cutovers.enabled, creates a Cutover from a plan
// file, then turns cutovers.enabled off and uninstalls: the CRD, and so the Cutover,
// outlive both (helm.sh/resource-policy: keep), and the same release installed again
// takes the CRD back while another release is refused it.
func cutoverCRDKept(t *testing.T, h *helm, kc *kubetest.Cluster, dyn dynamic.Interface) {
	ctx := t.Context()
	const release = "cutovers"
	helmAt := func(args ...string) string {
		t.Helper()
		return h.must(t, append(args, "--kubeconfig", kc.Kubeconfig, "--namespace", namespace)...)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	const crdName = "cutovers.crossfade.io"
	if _, err := crds.Get(ctx, crdName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("CRD %s before the install: %v, want none", crdName, err)
	}
	helmAt(slices.Concat([]string{"install", release, chartDir}, required(), []string{"--set", "cutovers.enabled=true"})...)

	doc, err := os.ReadFile(cutoverPlan)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("%s: %v", cutoverPlan, err)
	}
	plan := &unstructured.Unstructured{}
	if err := plan.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s as an object: %v", cutoverPlan, err)
	}
	plan.SetNamespace(namespace)
	cutovers := dyn.Resource(v1alpha1.GroupVersionResource).Namespace(namespace)
	// Helm does not wait for a templated CRD to be established before it returns.
	controllertest.Eventually(t, 30*time.Second, "Cutover "+plan.GetName()+" created", func() (bool, string) {
		_, err := cutovers.Create(ctx, plan, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		return err == nil, fmt.Sprint(err)
	})

	kept := func(after string) {
		t.Helper()
		crd, err := crds.Get(ctx, crdName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after %s, CRD %s: %v", after, crdName, err)
		}
		if crd.GetDeletionTimestamp() != nil {
			t.Errorf("after %s, CRD %s is being deleted", after, crdName)
		}
		if _, err := cutovers.Get(ctx, plan.GetName(), metav1.GetOptions{}); err != nil {
			t.Errorf("after %s, Cutover %s/%s: %v", after, namespace, plan.GetName(), err)
		}
	}
	kept("install")
	helmAt("upgrade", release, chartDir, "--reuse-values", "--set", "cutovers.enabled=false")
	kept("an upgrade to cutovers.enabled=false")
	helmAt("uninstall", release)
	kept("uninstall")

	// The kept CRD still carries this release's ownership: another release may not take
	// it (Helm refuses before creating anything), the same one may again.
	args := slices.Concat([]string{"install", "other", chartDir, "--kubeconfig", kc.Kubeconfig, "--namespace", namespace},
		required(), []string{"--set", "cutovers.enabled=true"})
	want := []string{"CustomResourceDefinition", crdName, "invalid ownership metadata"}
	if out, err := h.run(args...); err == nil || !inOrder(err.Error(), want) {
		t.Errorf("helm install of another release with cutovers.enabled: %v\n%s\nwant an error with %q", err, out, want)
	}
	helmAt(slices.Concat([]string{"install", release, chartDir}, required(), []string{"--set", "cutovers.enabled=true"})...)
	kept("installing the release again")
	helmAt("uninstall", release)
	kept("the second uninstall")
}

// dryRunMatrix creates every object of every rendering on the API server with
// dryRun=All and fieldValidation=Strict: each must be valid for its real schema (the
// ServiceMonitor's CRD included), with no field the API does not know. Nothing is stored.
func dryRunMatrix(t *testing.T, h *helm, client kubernetes.Interface, dyn dynamic.Interface) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := h.template(c.flags()...)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				gvk := o.GroupVersionKind()
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Fatalf("%s: %v", gvk, err)
				}
				var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if o.GetNamespace() != "" {
					r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
				}
				if _, err := r.Create(t.Context(), o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll},
					FieldValidation: metav1.FieldValidationStrict}); err != nil {
					t.Errorf("%s/%s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
}

// installUpgradeUninstall installs the chart with two replicas and a ServiceMonitor, runs
// the installed Deployment's command against the sandbox until it leads and publishes a
// Service, upgrades a value (the pod template changes: a rollout), upgrades to one replica
// (the leader-election objects go), and uninstalls: every object of the release goes,
// and the published records stay.
func installUpgradeUninstall(t *testing.T, h *helm, kc *kubetest.Cluster, client kubernetes.Interface, dyn dynamic.Interface) {
	ctx := t.Context()
	sb := sandboxtest.Start(t)
	dns, zone := route53test.Zone(t, sb, "example.com")
	helmAt := func(args ...string) string {
		t.Helper()
		return h.must(t, append(args, "--kubeconfig", kc.Kubeconfig, "--namespace", namespace)...)
	}

	// Bad values are refused before anything is sent: no release, no object.
	refused := []struct {
		values []string
		want   []string
	}{
		{append(required(), "--set-json", `domainFilter=["example.com"]`),
			[]string{"INSTALLATION FAILED: values don't meet the specifications", "- (root): Additional property domainFilter is not allowed"}},
		// image.repository given: helm lists a nested key's error and a top-level one in
		// no fixed order (TestSchemaRejects covers the image alone).
		{[]string{"--set-string", "replicas=two", "--set", "image.repository=crossfade"},
			[]string{"INSTALLATION FAILED", "- (root): txtOwnerId is required",
				"- replicas: Invalid type. Expected: integer, given: string"}},
	}
	for _, r := range refused {
		args := append([]string{"install", releaseName, chartDir, "--kubeconfig", kc.Kubeconfig, "--namespace", namespace}, r.values...)
		if out, err := h.run(args...); err == nil || !inOrder(err.Error(), r.want) {
			t.Errorf("helm install %v: %v\n%s\nwant an error with %q", r.values, err, out, r.want)
		}
	}
	if out := helmAt("list", "--all", "--short"); out != "" {
		t.Errorf("releases after refused installs: %q", out)
	}
	if _, err := client.AppsV1().Deployments(namespace).Get(ctx, fullname, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after refused installs: %v", err)
	}

	began := time.Now()
	out := helmAt(slices.Concat([]string{"install", releaseName, chartDir}, required(), []string{"--set", "replicas=2",
		"--set", "serviceMonitor.enabled=true", "--set-json", `sources=["service","crd"]`,
		"--set-json", `domainFilters=["example.com"]`})...)
	t.Logf("helm install: %s\n%s", time.Since(began).Round(time.Millisecond), out)
	for _, want := range []string{"publishes service, crd to route53 as owner \"blue\" with policy upsert-only, for example.com.",
		"Lease " + namespace + "/" + fullname, "Uninstalling the chart leaves every DNS record in place"} {
		if !strings.Contains(out, want) {
			t.Errorf("helm install's notes lack %q", want)
		}
	}

	// What the release consists of, as the API server holds it.
	objects := []struct {
		gvr        schema.GroupVersionResource
		namespaced bool
		name       string
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true, fullname},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, true, fullname},
		{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true, fullname},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false, fullname},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false, fullname},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true, fullname + "-leader-election"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true, fullname + "-leader-election"},
		{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true, fullname},
		{schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}, true, fullname},
	}
	exists := func(i int) (bool, error) {
		o := objects[i]
		r := dyn.Resource(o.gvr)
		var err error
		if o.namespaced {
			_, err = r.Namespace(namespace).Get(ctx, o.name, metav1.GetOptions{})
		} else {
			_, err = r.Get(ctx, o.name, metav1.GetOptions{})
		}
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	for i, o := range objects {
		if ok, err := exists(i); !ok {
			t.Errorf("after install, %s %s: missing (%v)", o.gvr.Resource, o.name, err)
		}
	}
	// The chart's crds/ installed the DNSEndpoint CRD, which this API server lacked.
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Get(ctx, "dnsendpoints.externaldns.k8s.io", metav1.GetOptions{}); err != nil {
		t.Errorf("DNSEndpoint CRD not installed from the chart's crds/: %v", err)
	}

	// Run what the kubelet would run: the installed Deployment's arguments, as the
	// installed ServiceAccount (a kubeconfig holding a token requested for it, in place of
	// the in-cluster one), with the metrics address and log format the harness needs.
	d1 := deployment(t, client)
	ctl := controllertest.Start(t, controllertest.Options{Name: "controller (chart args)",
		Kubeconfig: serviceAccountKubeconfig(t, kc, client, d1.Spec.Template.Spec.ServiceAccountName),
		Route53URL: sb.APIURL(), Args: podArgs(t, d1)})
	kubetest.LoadBalancerService(t, client, "web", "192.0.2.10", map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web.example.com"}, nil)
	controllertest.Eventually(t, 30*time.Second, "web.example.com published", func() (bool, string) {
		got := controllertest.Records(t, dns, zone)
		return slices.Contains(got, "web.example.com A 192.0.2.10"), strings.Join(got, "\n")
	})
	lease, err := client.CoordinationV1().Leases(namespace).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease %s/%s: %v, %+v: want one held by the controller", namespace, fullname, err, lease)
	}
	controllertest.Eventually(t, 10*time.Second, "/readyz ok", func() (bool, string) {
		code, body := ctl.Get(t, "/readyz")
		return code == 200 && body == "ok", body
	})
	published := controllertest.Records(t, dns, zone)
	if log := ctl.Log(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("the controller met a refusal with the chart's RBAC:\n%s", log)
	}

	// A changed value changes the pod template: the Deployment would roll.
	helmAt("upgrade", releaseName, chartDir, "--reuse-values", "--set", "interval=30s")
	d2 := deployment(t, client)
	if d2.Generation <= d1.Generation || equality.Semantic.DeepEqual(d1.Spec.Template, d2.Spec.Template) ||
		!slices.Contains(container(t, d2).Args, "--interval=30s") {
		t.Errorf("upgrade: generation %d → %d, args %q: want a new pod template with --interval=30s",
			d1.Generation, d2.Generation, container(t, d2).Args)
	}
	// Down to one replica: no Lease, so no Role, binding or disruption budget either.
	helmAt("upgrade", releaseName, chartDir, "--reuse-values", "--set", "replicas=1")
	d3 := deployment(t, client)
	if *d3.Spec.Replicas != 1 || d3.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType ||
		!slices.Contains(container(t, d3).Args, "--leader-elect=false") {
		t.Errorf("upgrade to 1 replica: replicas %d, strategy %s, args %q", *d3.Spec.Replicas, d3.Spec.Strategy.Type, container(t, d3).Args)
	}
	for i, o := range objects {
		if o.gvr.Resource != "roles" && o.gvr.Resource != "rolebindings" && o.gvr.Resource != "poddisruptionbudgets" {
			continue
		}
		if ok, err := exists(i); ok || err != nil {
			t.Errorf("after the upgrade to 1 replica, %s %s: still there (%v)", o.gvr.Resource, o.name, err)
		}
	}
	if out := helmAt("history", releaseName, "--max", "10"); strings.Count(out, "\n") != 4 {
		t.Errorf("helm history: want 3 revisions:\n%s", out)
	}

	// Uninstall: the pod gets SIGTERM first, then the release's objects go.
	ctl.Stop(t)
	helmAt("uninstall", releaseName)
	for i, o := range objects {
		if ok, err := exists(i); ok || err != nil {
			t.Errorf("after uninstall, %s %s: still there (%v)", o.gvr.Resource, o.name, err)
		}
	}
	secrets, err := client.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + releaseName})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("helm's release records after uninstall: %v, %d left", err, len(secrets.Items))
	}
	// Helm never deletes what crds/ installed: DNSEndpoints outlive the release.
	if _, err := dyn.Resource(crds).Get(ctx, "dnsendpoints.externaldns.k8s.io", metav1.GetOptions{}); err != nil {
		t.Errorf("DNSEndpoint CRD gone after uninstall: %v", err)
	}
	// Every record stays: the controller deletes nothing when it stops.
	if got := controllertest.Records(t, dns, zone); !slices.Equal(got, published) {
		t.Errorf("records changed by stopping the controller and uninstalling:\nbefore %q\nafter  %q", published, got)
	}
	if !slices.ContainsFunc(published, func(r string) bool { return strings.HasPrefix(r, "a-web.example.com TXT ") }) {
		t.Errorf("no ownership record for web.example.com among %q", published)
	}
}

// podArgs returns the container's arguments as `crossfade controller` receives them,
// minus the command name and the flags controllertest sets itself (metrics address, log
// format and level), which would otherwise override its own.
func podArgs(t *testing.T, d *appsv1.Deployment) []string {
	t.Helper()
	var args []string
	for _, a := range container(t, d).Args[1:] {
		if strings.HasPrefix(a, "--metrics-address=") || strings.HasPrefix(a, "--log-format=") || strings.HasPrefix(a, "--log-level=") {
			continue
		}
		args = append(args, a)
	}
	return args
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as ServiceAccount
// namespace/name with a token from the TokenRequest API, as a pod's projected token does.
func serviceAccountKubeconfig(t *testing.T, kc *kubetest.Cluster, client kubernetes.Interface, name string) string {
	t.Helper()
	hour := int64(3600)
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for ServiceAccount %s/%s: %v", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: kc.URL, CertificateAuthorityData: kc.CA}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["pod"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = "pod"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// deployment returns the release's Deployment as the API server holds it.
func deployment(t *testing.T, client kubernetes.Interface) *appsv1.Deployment {
	t.Helper()
	d, err := client.AppsV1().Deployments(namespace).Get(t.Context(), fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
