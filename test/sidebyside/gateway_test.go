package sidebyside

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// gatewayAPIModule is the module whose standard-channel CRDs installGatewayAPI installs.
const gatewayAPIModule = "sigs.k8s.io/gateway-api"

// gatewayAPICRDs are the standard-channel CRDs of gatewayAPIModule the takeover needs, by
// plural resource name.
var gatewayAPICRDs = []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes"}

// installGatewayAPI installs the real Gateway API CRDs (standard channel) of the
// gateway-api version crossfade's go.mod requires (v1.5.1 when written; external-dns
// v0.21.0 was built against the same, v0.23.0 against v1.6.2, whose v1 kinds read these
// alike). They are read from the module cache, where `go test` has the module already (it
// compiles crossfade's source against it), rather than copied here: 760 KB of YAML that
// would drift from go.mod's version unseen; `go list -m` names the directory (cmd/go puts
// its own go first on a test's PATH).
func installGatewayAPI(t *testing.T, kube *kubetest.Cluster) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-json", gatewayAPIModule).Output()
	if err != nil {
		t.Fatalf("go list -m -json %s: %v", gatewayAPIModule, err)
	}
	var mod struct{ Version, Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go list -m -json %s: %v", gatewayAPIModule, err)
	}
	if mod.Dir == "" {
		t.Fatalf("go list -m -json %s: no Dir (vendored, or not downloaded: run go mod download)", gatewayAPIModule)
	}
	paths := make([]string, 0, len(gatewayAPICRDs))
	for _, r := range gatewayAPICRDs {
		paths = append(paths, filepath.Join(mod.Dir, "config", "crd", "standard", "gateway.networking.k8s.io_"+r+".yaml"))
	}
	t.Logf("Gateway API CRDs of %s@%s (standard channel)", gatewayAPIModule, mod.Version)
	kube.InstallCRDs(t, paths...)
}

// Gateway API fixtures: one Gateway, an HTTPRoute and a GRPCRoute attached to it.
const (
	gatewayName = "shop-gateway"
	// gatewayController is the controllerName of the implementation the fixtures pretend
	// accepted the routes (none runs here).
	gatewayController = "example.com/shop-gateway-controller"
	// httpRouteHost and grpcRouteHost are the routes' hostnames.
	httpRouteHost = "gw." + zoneName
	grpcRouteHost = "grpc." + zoneName
)

// gatewayRecords is how many record sets external-dns writes for createGatewayRoutes'
// routes: for each route's hostname an A and an AAAA (the Gateway's two addresses), each
// with its ownership TXT record under the TXT registry.
func gatewayRecords(crdRegistry bool) int {
	if crdRegistry {
		return 2 * 2
	}
	return 2 * 4
}

// createGatewayRoutes creates, in namespace, a GatewayClass, a Gateway with one HTTP
// listener for *.zoneName and, in its status (written through the status subresource, as
// a Gateway implementation does), an IPv4 and an IPv6 address; then an HTTPRoute (with a
// ttl annotation under prefix) and a GRPCRoute, each with one hostname and attached to the
// Gateway, accepted in status.parents (Accepted=True): what external-dns's
// gateway-httproute and gateway-grpcroute sources require before they publish a route.
// A GRPCRoute matches an HTTP listener for both tools (its protocol, HTTPS, is HTTP's
// kin).
func createGatewayRoutes(t *testing.T, kube *kubetest.Cluster, prefix string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(kube.Config())
	gvr := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: resource}
	}
	create := func(resource, kind, ns, name string, ann map[string]any, spec, status map[string]any) {
		t.Helper()
		meta := map[string]any{"name": name}
		if ns != "" {
			meta["namespace"] = ns
		}
		if ann != nil {
			meta["annotations"] = ann
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind, "metadata": meta, "spec": spec}}
		var ri dynamic.ResourceInterface = dyn.Resource(gvr(resource))
		if ns != "" {
			ri = dyn.Resource(gvr(resource)).Namespace(ns)
		}
		created, err := ri.Create(t.Context(), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s %s/%s: %v", kind, ns, name, err)
		}
		if status == nil {
			return
		}
		created.Object["status"] = status
		if _, err := ri.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s %s/%s: write status: %v", kind, ns, name, err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)

	create("gatewayclasses", "GatewayClass", "", "shop", nil, map[string]any{"controllerName": gatewayController}, nil)
	create("gateways", "Gateway", namespace, gatewayName, nil,
		map[string]any{"gatewayClassName": "shop", "listeners": []any{map[string]any{
			"name": "http", "protocol": "HTTP", "port": int64(80), "hostname": "*." + zoneName}}},
		map[string]any{"addresses": []any{
			map[string]any{"type": "IPAddress", "value": "192.0.2.80"},
			map[string]any{"type": "IPAddress", "value": "2001:db8::80"},
		}})
	accepted := map[string]any{"parents": []any{map[string]any{
		"parentRef":      map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gatewayName},
		"controllerName": gatewayController,
		"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted",
			"message": "accepted by the test's pretend implementation", "lastTransitionTime": now, "observedGeneration": int64(1)}},
	}}}
	parentRefs := []any{map[string]any{"name": gatewayName}}
	backend := []any{map[string]any{"backendRefs": []any{map[string]any{"name": "web", "port": int64(80)}}}}
	create("httproutes", "HTTPRoute", namespace, "shop-web", map[string]any{prefix + "ttl": "120"},
		map[string]any{"parentRefs": parentRefs, "hostnames": []any{httpRouteHost}, "rules": backend}, accepted)
	create("grpcroutes", "GRPCRoute", namespace, "shop-grpc", nil,
		map[string]any{"parentRefs": parentRefs, "hostnames": []any{grpcRouteHost}, "rules": backend}, accepted)
}
