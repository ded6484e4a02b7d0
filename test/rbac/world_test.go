package rbac_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

const alpha = "external-dns.alpha.kubernetes.io/"

// caseLabel marks the objects of one world; the controller of that world reads only
// them (--label-filter), so worlds sharing one apiserver never see each other's.
const caseLabel = "crossfade-rbac-case"

// nodeIP is the external address of the one Node all worlds share: NodePort Services
// publish it.
const nodeIP = "203.0.113.5"

// shared is what every world runs against: one apiserver and one sandbox.
type shared struct {
	kc    *kubetest.Cluster
	admin kubernetes.Interface
	dyn   dynamic.Interface
	sb    *sandbox.Sandbox
	dns   provider.Provider
	// cm is a Cloud Map client of the sandbox, as the person creating namespaces and
	// services (crossfade creates neither) uses it.
	cm *sd.Client
}

// world is one case's slice of the shared cluster and sandbox: a namespace holding the
// release's ServiceAccount, Lease and one publishing object of every kind, a hosted zone
// of its own, and RBAC objects of its own (possibly short of one grant).
type world struct {
	*shared
	ns     string // namespace, label value and txt owner id
	domain string // the world's hosted zone
	zone   provider.Zone
	lease  string
	// kubeconfig authenticates as the world's ServiceAccount only.
	kubeconfig string
	// cloudMapService is the id of the Cloud Map service the world's Service "api"
	// registers into, "" unless the release enables Cloud Map; cloudMapArgs are the
	// controller's Cloud Map flags then.
	cloudMapService string
	cloudMapArgs    []string
	// cutoverArgs are the controller's --cutovers flags, limited to the world's
	// namespace, when rel's Deployment runs Cutovers (addCutover); nil otherwise.
	cutoverArgs []string
	// registryArgs are the controller's --registry crd flags, its DNSRecords in the
	// world's namespace, when rel's Deployment runs the CRD registry (addCRDRegistry).
	registryArgs []string
}

// cloudMapAddr is the ready endpoint of the world's Service "api": its Cloud Map instance.
const cloudMapAddr = "10.3.0.1"

// cloudMapClient is an aws-sdk-go-v2 Cloud Map client of the sandbox.
func cloudMapClient(sb *sandbox.Sandbox) *sd.Client {
	return sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

// addCloudMap, when rel's Deployment runs the Cloud Map publisher, gives the world a
// Cloud Map namespace of its own (<ns>.local, so that worlds sharing the sandbox never
// share a service) holding the service "api", and a Service "api" annotated to register
// its one ready endpoint there; the world's controller runs with rel's Cloud Map flags,
// limited to that namespace.
func (w *world) addCloudMap(t *testing.T, rel *release) {
	t.Helper()
	if len(rel.cloudMapArgs) == 0 {
		return
	}
	ctx, ns, name := t.Context(), w.ns, w.ns+".local"
	svc := sandboxtest.CloudMapService(t, w.cm, name, "", sd.CreateServiceInput{Name: aws.String("api")})
	w.cloudMapService = aws.ToString(svc.Id)
	w.cloudMapArgs = append(slices.Clone(rel.cloudMapArgs), "--cloudmap-namespace="+name)
	core := w.admin.CoreV1()
	if _, err := core.Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns, Labels: map[string]string{caseLabel: ns},
			Annotations: map[string]string{cloudmap.AnnotationService: name + "/api"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "api"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Service %s/api: %v", ns, err)
	}
	ready := true
	if _, err := w.admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "api-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "api"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{cloudMapAddr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "api-0", Namespace: ns}}},
		Ports: []discoveryv1.EndpointPort{{Name: aws.String("http"), Port: aws.Int32(8080)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("EndpointSlice %s/api-1: %v", ns, err)
	}
}

// cloudMapInstances renders the instances of the world's Cloud Map service as
// "owner address:port" lines, sorted.
func (w *world) cloudMapInstances(ctx context.Context) ([]string, error) {
	out, err := w.cm.ListInstances(ctx, &sd.ListInstancesInput{ServiceId: aws.String(w.cloudMapService)})
	if err != nil {
		return nil, fmt.Errorf("Cloud Map service %s: %w", w.cloudMapService, err)
	}
	var lines []string
	for _, in := range out.Instances {
		a := in.Attributes
		lines = append(lines, a[cloudmap.AttrOwner]+" "+a[cloudmap.AttrIPv4]+":"+a[cloudmap.AttrPort])
	}
	slices.Sort(lines)
	return lines, nil
}

// published lists what the world's objects publish, as records renders them, when the
// controller reads sources: at least one record per source kind.
func (w *world) published(sources []string) []string {
	d := w.domain
	on := func(s ...string) bool {
		return slices.ContainsFunc(s, func(s string) bool { return slices.Contains(sources, s) })
	}
	var out []string
	if on(controller.SourceService) {
		out = append(out,
			"web."+d+" A 192.0.2.10", // LoadBalancer Service
			"np."+d+" A "+nodeIP,     // NodePort Service: the Node's address
			"db."+d+" A 10.1.0.1")    // headless Service: its EndpointSlice
	}
	if on(controller.SourceIngress) {
		out = append(out, "shop."+d+" A 192.0.2.30")
	}
	if on(controller.SourceCRD) {
		out = append(out, "api."+d+" A 192.0.2.20")
	}
	if on(controller.SourceIstioGateway) {
		out = append(out,
			"mesh."+d+" A 198.51.100.7", // through the Service its selector matches
			"edge."+d+" A 192.0.2.30")   // through the Ingress its annotation names
	}
	if on(controller.SourceIstioVirtualService) {
		out = append(out,
			"cart2."+d+" A 198.51.100.8", // through a Gateway with a target annotation
			"cart."+d+" A 198.51.100.7")  // through the Service a Gateway's selector matches

	}
	if on(controller.SourceHTTPRoute) {
		out = append(out, "orders.gw."+d+" A 192.0.2.40") // through the Gateway API Gateway
	}
	if on(controller.SourceGRPCRoute) {
		out = append(out, "rpc.gw."+d+" A 192.0.2.40")
	}
	return out
}

// takenTXT is another owner's ownership record of taken.<domain>.
const takenTXT = `"heritage=external-dns,external-dns/owner=someone-else,external-dns/resource=service/elsewhere/taken"`

// newWorld creates namespace ns with everything of the world but its RBAC.
func newWorld(ctx context.Context, s *shared, ns, lease string) (*world, error) {
	w := &world{shared: s, ns: ns, domain: ns + ".test", lease: lease}
	out, err := route53test.Client(s.sb).CreateHostedZone(ctx, &awsr53.CreateHostedZoneInput{
		Name: aws.String(w.domain), CallerReference: aws.String(ns)})
	if err != nil {
		return nil, fmt.Errorf("zone %s: %w", w.domain, err)
	}
	zones, err := s.dns.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("zones: %w", err)
	}
	for _, z := range zones {
		if strings.HasSuffix(aws.ToString(out.HostedZone.Id), z.ID) {
			w.zone = z
		}
	}
	if w.zone.ID == "" {
		return nil, fmt.Errorf("zone %s not listed after create", w.domain)
	}
	// Another owner's record the world's Service "taken" asks for: a conflict.
	txt := "a-taken." + w.domain
	if _, err := route53test.Client(s.sb).ChangeResourceRecordSets(ctx, &awsr53.ChangeResourceRecordSetsInput{
		HostedZoneId: out.HostedZone.Id,
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{
			{Action: r53types.ChangeActionCreate, ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String("taken." + w.domain),
				Type: r53types.RRTypeA, TTL: aws.Int64(300), ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.99")}}}},
			{Action: r53types.ChangeActionCreate, ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String(txt),
				Type: r53types.RRTypeTxt, TTL: aws.Int64(300), ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(takenTXT)}}}},
		}},
	}); err != nil {
		return nil, fmt.Errorf("zone %s: another owner's record: %w", w.domain, err)
	}
	if err := w.createObjects(ctx); err != nil {
		return nil, fmt.Errorf("world %s: %w", ns, err)
	}
	return w, nil
}

// createObjects creates the namespace and one publishing object of every kind in it,
// with the status the controllers that are not running (cloud, Istio, Gateway API)
// would write.
func (w *world) createObjects(ctx context.Context) error {
	d, ns := w.domain, w.ns
	labels := map[string]string{caseLabel: ns}
	meta := func(name string, ann map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: ann}
	}
	host := func(h string) map[string]string { return map[string]string{alpha + "hostname": h} }
	core := w.admin.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	lb := func(m metav1.ObjectMeta, selector map[string]string, ip string) error {
		svc, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: m, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		_, err = core.Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
		return err
	}
	if err := lb(meta("web", host("web."+d)), nil, "192.0.2.10"); err != nil {
		return err
	}
	// Turns invalid (a TTL that is no number), valid, invalid again: a Warning event,
	// then the same event again, which client-go's recorder patches.
	if err := lb(meta("bad", map[string]string{alpha + "hostname": "bad." + d, alpha + "ttl": "soon"}), nil, "192.0.2.50"); err != nil {
		return err
	}
	if err := lb(meta("taken", host("taken."+d)), nil, "192.0.2.60"); err != nil {
		return err
	}
	// Istio's ingress gateway: no name of its own; its address is the Istio Gateway's.
	if err := lb(meta("istio-ingressgateway", nil), map[string]string{"istio": ns}, "198.51.100.7"); err != nil {
		return err
	}
	if _, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta("np", host("np."+d)), Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta("db", host("db."+d)), Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 5432}}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	ready := true
	if _, err := w.admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0", Namespace: ns}}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	prefix := networkingv1.PathTypePrefix
	ing, err := w.admin.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{ObjectMeta: meta("shop", nil),
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop." + d, IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.30"}}
	if _, err := w.admin.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		return err
	}

	accepted := []any{map[string]any{"parentRef": map[string]any{"name": "edge"}, "controllerName": "example.com/gateway",
		"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
			"lastTransitionTime": "2025-01-01T00:00:00Z"}}}}
	metaU := func(name string, ann ...string) map[string]any {
		m := map[string]any{"name": name, "namespace": ns, "labels": map[string]any{caseLabel: ns}}
		if len(ann) == 2 {
			m["annotations"] = map[string]any{ann[0]: ann[1]}
		}
		return m
	}
	istioGateways := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "gateways"}
	virtualServices := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
	virtualService := func(name, gateway string) map[string]any {
		return map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "metadata": metaU(name),
			"spec": map[string]any{"hosts": []any{name + "." + d}, "gateways": []any{ns + "/" + gateway},
				"http": []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": name}}}}}}}
	}
	custom := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}, map[string]any{
			"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint", "metadata": metaU("api"),
			"spec": map[string]any{"endpoints": []any{map[string]any{"dnsName": "api." + d, "recordType": "A",
				"targets": []any{"192.0.2.20"}, "recordTTL": int64(60)}}}}},
		{istioGateways, map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "Gateway", "metadata": metaU("public"),
			"spec": map[string]any{"selector": map[string]any{"istio": ns}, "servers": []any{map[string]any{
				"port": map[string]any{"number": int64(80), "name": "http", "protocol": "HTTP"},
				// "*" publishes nothing itself but lets the VirtualService bind.
				"hosts": []any{"*/mesh." + d, "*/*"}}}}}},
		{istioGateways, map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "Gateway", "metadata": metaU("via-ingress", alpha+"ingress", "shop"),
			"spec": map[string]any{"selector": map[string]any{"istio": "none"}, "servers": []any{map[string]any{
				"port": map[string]any{"number": int64(80), "name": "http", "protocol": "HTTP"}, "hosts": []any{"*/edge." + d}}}}}},
		{istioGateways, map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "Gateway", "metadata": metaU("direct", alpha+"target", "198.51.100.8"),
			"spec": map[string]any{"selector": map[string]any{"istio": "none"}, "servers": []any{map[string]any{
				"port": map[string]any{"number": int64(80), "name": "http", "protocol": "HTTP"}, "hosts": []any{"*/*"}}}}}},
		{virtualServices, virtualService("cart", "public")},
		{virtualServices, virtualService("cart2", "direct")},
		{schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}, map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": metaU("edge"),
			"spec": map[string]any{"gatewayClassName": "example", "listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(80), "hostname": "*.gw." + d,
				// Routes are admitted by their namespace's labels: Namespaces are read.
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "Selector",
					"selector": map[string]any{"matchLabels": map[string]any{caseLabel: ns}}}}}}},
			"status": map[string]any{"addresses": []any{map[string]any{"type": "IPAddress", "value": "192.0.2.40"}}}}},
		{schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}, map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": metaU("orders"),
			"spec":   map[string]any{"parentRefs": []any{map[string]any{"name": "edge"}}, "hostnames": []any{"orders.gw." + d}},
			"status": map[string]any{"parents": accepted}}},
		{schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}, map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute", "metadata": metaU("rpc"),
			"spec":   map[string]any{"parentRefs": []any{map[string]any{"name": "edge"}}, "hostnames": []any{"rpc.gw." + d}},
			"status": map[string]any{"parents": accepted}}},
	}
	for _, c := range custom {
		u := &unstructured.Unstructured{Object: c.obj}
		if _, err := w.dyn.Resource(c.gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// grant creates rel's RBAC objects for this world: the ServiceAccount, a ClusterRole
// with clusterRules bound to it, and a Role with roleRules in the world's namespace (the
// Lease). In the release namespace they are created as rendered; elsewhere the
// ClusterRole and its binding take the namespace as a prefix, so worlds never share a
// grant. Then it writes a kubeconfig holding only a token for that ServiceAccount
// (TokenRequest) in dir.
func (w *world) grant(ctx context.Context, rel *release, clusterRules, roleRules []rbacv1.PolicyRule, dir string) error {
	ns := w.ns
	sa := rel.serviceAccount.DeepCopy()
	sa.Namespace, sa.ResourceVersion = ns, ""
	if _, err := w.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("ServiceAccount: %w", err)
	}
	cr := rel.clusterRole.DeepCopy()
	cr.Rules = clusterRules
	crb := rel.clusterBinding.DeepCopy()
	if ns != rel.namespace {
		cr.Name = ns + "-" + cr.Name
		crb.Name, crb.RoleRef.Name = cr.Name, cr.Name
	}
	rebind(crb.Subjects, rel, ns)
	rbac := w.admin.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("ClusterRole: %w", err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("ClusterRoleBinding: %w", err)
	}
	// No Role with --cutovers: the ClusterRole grants the Leases (decodeRelease).
	if rel.role != nil {
		role := rel.role.DeepCopy()
		role.Namespace, role.Rules = ns, roleRules
		rb := rel.roleBinding.DeepCopy()
		rb.Namespace = ns
		rebind(rb.Subjects, rel, ns)
		if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("Role: %w", err)
		}
		if _, err := rbac.RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("RoleBinding: %w", err)
		}
	}
	hour := int64(3600)
	tok, err := w.admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("TokenRequest for %s/%s: %w", ns, sa.Name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: w.kc.URL, CertificateAuthorityData: w.kc.CA}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "sa", Namespace: ns}
	cfg.CurrentContext = "sa"
	w.kubeconfig = filepath.Join(dir, ns+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, w.kubeconfig); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}

// rebind points a binding's subjects at the world's copy of the release's ServiceAccount.
func rebind(subjects []rbacv1.Subject, rel *release, ns string) {
	for i := range subjects {
		if subjects[i].Kind == rbacv1.ServiceAccountKind && subjects[i].Namespace == rel.namespace {
			subjects[i].Namespace = ns
		}
	}
}

// controllerArgs are the flags of a world's controller: every source, its zone and
// owner, only its objects, its Lease, and short timings so that the test is quick.
func (w *world) controllerArgs(sources []string, extra ...string) []string {
	args := []string{"--txt-owner-id", w.ns, "--domain-filter", w.domain, "--label-filter", caseLabel + "=" + w.ns,
		"--leader-election-namespace", w.ns, "--leader-election-id", w.lease, "--debounce", "100ms", "--max-delay", "500ms",
		"--crd-poll-interval", "1s"}
	for _, s := range sources {
		args = append(args, "--source", s)
	}
	args = append(args, w.cloudMapArgs...)
	args = append(args, w.cutoverArgs...)
	args = append(args, w.registryArgs...)
	return append(args, extra...)
}

// records renders the world's zone as "name type targets" lines, sorted.
func (w *world) records(ctx context.Context) ([]string, error) {
	recs, err := w.dns.Records(ctx, w.zone)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		if r.Type == "SOA" || r.Type == "NS" {
			continue
		}
		out = append(out, r.Name+" "+r.Type+" "+strings.Join(r.Targets, ","))
	}
	slices.Sort(out)
	return out, nil
}

// warning returns the Warning event with reason on the world's object name, if any.
func (w *world) warning(ctx context.Context, name, reason string) (*corev1.Event, error) {
	evs, err := w.admin.CoreV1().Events(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == reason && e.InvolvedObject.Name == name {
			return &evs.Items[i], nil
		}
	}
	return nil, nil
}

// setTTL sets the TTL annotation of the world's Service "bad".
func (w *world) setTTL(ctx context.Context, ttl string) error {
	svc, err := w.admin.CoreV1().Services(w.ns).Get(ctx, "bad", metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Annotations[alpha+"ttl"] = ttl
	_, err = w.admin.CoreV1().Services(w.ns).Update(ctx, svc, metav1.UpdateOptions{})
	return err
}

// holder returns the Lease's holder and renew time ("" and zero when not held or absent).
func (w *world) holder(ctx context.Context) (string, time.Time, error) {
	l, err := w.admin.CoordinationV1().Leases(w.ns).Get(ctx, w.lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	var h string
	if l.Spec.HolderIdentity != nil {
		h = *l.Spec.HolderIdentity
	}
	var renewed time.Time
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.Time
	}
	return h, renewed, nil
}

// errAborted is run's error when abort said stop.
var errAborted = errors.New("aborted")

// run plays the scenario every world goes through, with its controller reading sources:
// every record those sources publish is published; with the service source, the conflict
// and the invalid object are reported by Warning events and the invalid object's event
// is sent again after a fix and a relapse (client-go patches a repeated event); and the
// Lease is held and renewed. It returns nil when all of it happened, errAborted as soon
// as abort reports true (checked at every poll), or an error saying what was missing
// when d ran out.
func (w *world) run(ctx context.Context, sources []string, d time.Duration, abort func() bool) error {
	deadline := time.Now().Add(d)
	wait := func(what string, cond func() (bool, string, error)) error {
		last := ""
		for {
			if abort() {
				return errAborted
			}
			ok, state, err := cond()
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if ok {
				return nil
			}
			last = state
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: not within %s; last state:\n%s", what, d, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	hasRecords := func(want ...string) func() (bool, string, error) {
		return func() (bool, string, error) {
			got, err := w.records(ctx)
			if err != nil {
				return false, "", err
			}
			for _, r := range want {
				if !slices.Contains(got, r) {
					return false, "missing " + r + "; zone holds:\n" + strings.Join(got, "\n"), nil
				}
			}
			return true, "", nil
		}
	}
	event := func(name, reason string, count int32) func() (bool, string, error) {
		return func() (bool, string, error) {
			e, err := w.warning(ctx, name, reason)
			if err != nil || e == nil {
				return false, "no event", err
			}
			return e.Count >= count, fmt.Sprintf("event %s on %s: count %d, message %q", reason, name, e.Count, e.Message), nil
		}
	}
	type step struct {
		what string
		cond func() (bool, string, error)
	}
	var held time.Time
	steps := []step{{"every source kind's record published", hasRecords(w.published(sources)...)}}
	if w.cloudMapService != "" {
		want := w.ns + " " + cloudMapAddr + ":8080"
		steps = append(steps, step{"the Service's ready endpoint registered in Cloud Map", func() (bool, string, error) {
			got, err := w.cloudMapInstances(ctx)
			return slices.Contains(got, want), "want " + want + "; instances: " + strings.Join(got, ", "), err
		}})
	}
	for _, c := range w.cutoverSteps(ctx) {
		steps = append(steps, c)
	}
	for _, c := range w.crdRegistrySteps(ctx) {
		steps = append(steps, c)
	}
	if slices.Contains(sources, controller.SourceService) {
		// The invalid and the conflicting objects are Services.
		steps = append(steps, []step{
			{"Warning event on the invalid Service", event("bad", "InvalidDNSInput", 1)},
			{"Warning event on the Service whose name another owner holds", event("taken", "DNSRecordConflict", 1)},
			{"the invalid Service fixed", func() (bool, string, error) { return true, "", w.setTTL(ctx, "60") }},
			{"the fixed Service's record", hasRecords("bad." + w.domain + " A 192.0.2.50")},
			{"the Service invalid again", func() (bool, string, error) { return true, "", w.setTTL(ctx, "soon") }},
			{"the same Warning event again (patched: count 2)", event("bad", "InvalidDNSInput", 2)},
		}...)
	}
	steps = append(steps, []step{
		{"Lease held", func() (bool, string, error) {
			h, renewed, err := w.holder(ctx)
			held = renewed
			return h != "", "holder " + h, err
		}},
		{"Lease renewed", func() (bool, string, error) {
			h, renewed, err := w.holder(ctx)
			return h != "" && renewed.After(held), fmt.Sprintf("holder %q renewed %s (held at %s)", h, renewed, held), err
		}},
	}...)
	for _, s := range steps {
		if err := wait(s.what, s.cond); err != nil {
			return err
		}
	}
	return nil
}

// createNode creates the Node NodePort Services publish, with an external address, as
// a kubelet would.
func createNode(ctx context.Context, admin kubernetes.Interface) error {
	n, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rbac-node"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: nodeIP}}
	_, err = admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}
