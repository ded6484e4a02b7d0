package controller_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// cloudMapClient is an aws-sdk-go-v2 Cloud Map client for the sandbox, as a foreign
// registrar and the clients use it. DiscoverInstances' "data-" host prefix is turned off by
// a middleware inside the client's stack: the client clears the stack values of the
// caller's context, so smithyhttp.DisableEndpointHostPrefix set there would be lost.
func cloudMapClient(sb *sandbox.Sandbox) *sd.Client {
	return sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}}})
}

// cloudMapCluster is one cluster publishing into Cloud Map.
type cloudMapCluster struct {
	id, version string
	addrs       []string
	kc          *kubetest.Cluster
	client      kubernetes.Interface
	ctl         *proc
}

// ids are the instance ids of the cluster's endpoints at addrs.
func (c *cloudMapCluster) ids(addrs ...string) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, cloudmap.InstanceID(c.id, "default", "api", a, 8080))
	}
	slices.Sort(out)
	return out
}

// TestCloudMapTwoClustersAndAForeignRegistrar: two clusters (two API servers, a
// controller each, owner ids blue and green) register the ready endpoints of their
// Service "api" into one Cloud Map service, mesh.local/api, beside instances a third,
// foreign registrar wrote there directly: one with no owner, one whose id and
// attributes look like blue's, and one under exactly the id blue's third endpoint would
// get. Then:
//
//   - DiscoverInstances with QueryParameters cluster=blue answers blue's instances only,
//     cluster=green green's only, each carrying its version and the Service's attributes;
//   - the foreign instances are never changed or deregistered; the one under blue's id is
//     a conflict: a Warning event on blue's Service, an error log line, the conflicts
//     metric, and that endpoint not registered;
//   - an endpoint going unready, and one going away, deregisters that instance only;
//   - a restarted controller makes no Cloud Map write.
func TestCloudMapTwoClustersAndAForeignRegistrar(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two kube-apiservers")
	}
	sb := sandboxtest.Start(t)
	api := cloudMapClient(sb)
	ctx := context.Background()
	svcID := aws.ToString(sandboxtest.CloudMapService(t, api, "mesh.local", "vpc-1", sd.CreateServiceInput{Name: aws.String("api"),
		DnsConfig: &sdtypes.DnsConfig{DnsRecords: []sdtypes.DnsRecord{{Type: sdtypes.RecordTypeA, TTL: aws.Int64(10)}, {Type: sdtypes.RecordTypeSrv, TTL: aws.Int64(10)}}}}).Id)

	blue := &cloudMapCluster{id: "blue", version: "v1-20", addrs: []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}}
	green := &cloudMapCluster{id: "green", version: "v1-21", addrs: []string{"10.2.0.1", "10.2.0.2"}}
	// The foreign registrar's instances, registered before any controller starts.
	foreign := map[string]map[string]string{
		"legacy-1": {cloudmap.AttrIPv4: "10.9.0.1", cloudmap.AttrPort: "8080", "env": "prod", cloudmap.AttrCluster: "legacy"},
		// Its id and attributes look like blue's: same prefix, same resource, an owner
		// that starts like blue's.
		"blue-" + strings.Repeat("0", 24): {cloudmap.AttrIPv4: "10.9.0.2", cloudmap.AttrPort: "8080", cloudmap.AttrCluster: "blue-legacy",
			cloudmap.AttrOwner: "blue-legacy", cloudmap.AttrResource: "service/default/api", "env": "prod"},
		// Exactly the id blue's endpoint 10.1.0.3 gets.
		blue.ids("10.1.0.3")[0]: {cloudmap.AttrIPv4: "10.9.0.3", cloudmap.AttrPort: "8080", cloudmap.AttrCluster: "legacy"},
	}
	for id, attrs := range foreign {
		if _, err := api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(svcID), InstanceId: aws.String(id), Attributes: attrs}); err != nil {
			t.Fatalf("foreign registration %s: %v", id, err)
		}
	}

	for _, c := range []*cloudMapCluster{blue, green} {
		c.kc = kubetest.Start(t)
		c.client = c.kc.Clientset(t)
		apiService(t, c.client, c.version)
		apiSlice(t, c.client, c.addrs, nil)
		c.ctl = startCloudMapController(t, c, sb)
	}

	discover := func(cluster string) (map[string]map[string]string, error) {
		out, err := api.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("mesh.local"), ServiceName: aws.String("api"),
			QueryParameters: map[string]string{cloudmap.AttrCluster: cluster}, HealthStatus: sdtypes.HealthStatusFilterAll})
		if err != nil {
			return nil, err
		}
		got := map[string]map[string]string{}
		for _, in := range out.Instances {
			got[aws.ToString(in.InstanceId)] = in.Attributes
		}
		return got, nil
	}
	// answers waits until discovery by cluster answers exactly want's ids.
	answers := func(what, cluster string, want []string) map[string]map[string]string {
		t.Helper()
		var got map[string]map[string]string
		eventually(t, 30*time.Second, what, func() (bool, string) {
			var err error
			if got, err = discover(cluster); err != nil {
				return false, err.Error()
			}
			ids := slices.Sorted(maps.Keys(got))
			return slices.Equal(ids, want), fmt.Sprintf("cluster=%s answers %v, want %v", cluster, ids, want)
		})
		return got
	}
	foreignUnchanged := func(when string) {
		t.Helper()
		for id, attrs := range foreign {
			out, err := api.GetInstance(ctx, &sd.GetInstanceInput{ServiceId: aws.String(svcID), InstanceId: aws.String(id)})
			if err != nil {
				t.Errorf("%s: foreign instance %s: %v", when, id, err)
				continue
			}
			if !maps.Equal(out.Instance.Attributes, attrs) {
				t.Errorf("%s: foreign instance %s changed: %v, was %v", when, id, out.Instance.Attributes, attrs)
			}
		}
	}

	got := answers("blue's instances discovered by cluster=blue (its third endpoint's id is taken)", "blue", blue.ids("10.1.0.1", "10.1.0.2"))
	want := map[string]string{cloudmap.AttrIPv4: "10.1.0.1", cloudmap.AttrPort: "8080", cloudmap.AttrCluster: "blue", cloudmap.AttrVersion: "v1-20",
		"env": "prod", cloudmap.AttrOwner: "blue", cloudmap.AttrResource: "service/default/api"}
	if a := got[blue.ids("10.1.0.1")[0]]; !maps.Equal(a, want) {
		t.Errorf("blue's instance of 10.1.0.1 carries %v, want %v", a, want)
	}
	got = answers("green's instances discovered by cluster=green", "green", green.ids("10.2.0.1", "10.2.0.2"))
	if a := got[green.ids("10.2.0.2")[0]]; a[cloudmap.AttrVersion] != "v1-21" || a[cloudmap.AttrIPv4] != "10.2.0.2" {
		t.Errorf("green's instance of 10.2.0.2 carries %v", a)
	}
	// Selecting on both attributes, as a client pinned to a version does.
	out, err := api.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("mesh.local"), ServiceName: aws.String("api"),
		QueryParameters: map[string]string{cloudmap.AttrVersion: "v1-21", "env": "prod"}})
	if err != nil || len(out.Instances) != 2 {
		t.Errorf("version=v1-21,env=prod: %v instances, %v; want green's two", out, err)
	}

	// The conflict is reported, not resolved.
	eventually(t, 20*time.Second, "conflict event on blue's Service", func() (bool, string) {
		events, err := blue.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range events.Items {
			seen = append(seen, e.Reason+" "+e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+": "+e.Message)
			if e.Reason == "CloudMapInstanceConflict" && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == "api" &&
				strings.Contains(e.Message, blue.ids("10.1.0.3")[0]) && strings.Contains(e.Message, "another registrar") {
				return true, ""
			}
		}
		return false, strings.Join(seen, "\n")
	})
	if n := blue.ctl.Metric(t, cloudmap.NameConflicts); n != 1 {
		t.Errorf("%s on blue = %v, want 1", cloudmap.NameConflicts, n)
	}
	if n := green.ctl.Metric(t, cloudmap.NameConflicts); n != 0 {
		t.Errorf("%s on green = %v, want 0", cloudmap.NameConflicts, n)
	}
	if !strings.Contains(blue.ctl.Log(), `"msg":"cloud map conflict"`) {
		t.Errorf("blue logged no error line for the conflict")
	}
	if n := blue.ctl.Metric(t, cloudmap.NameInstances+`{namespace="mesh.local",service="api"}`); n != 3 {
		t.Errorf("%s on blue = %v, want 3 (its ready endpoints)", cloudmap.NameInstances, n)
	}
	foreignUnchanged("after both clusters registered")

	// Blue's 10.1.0.2 goes unready; green's 10.2.0.2 goes away.
	apiSlice(t, blue.client, blue.addrs, map[string]bool{"10.1.0.2": true})
	apiSlice(t, green.client, green.addrs[:1], nil)
	answers("blue's unready endpoint deregistered", "blue", blue.ids("10.1.0.1"))
	answers("green's gone endpoint deregistered", "green", green.ids("10.2.0.1"))
	foreignUnchanged("after endpoints went")

	// Restart blue's controller (and let green's run on): no Cloud Map write at all.
	writes := func() int {
		c := sandboxtest.APICalls(t, sb)
		return c["RegisterInstance ok"] + c["RegisterInstance error"] + c["DeregisterInstance ok"] + c["DeregisterInstance error"]
	}
	time.Sleep(2 * time.Second) // both controllers settle: each reconciles every second
	before, lists := writes(), sandboxtest.APICalls(t, sb)["ListInstances ok"]
	blue.ctl.Stop(t)
	blue.ctl = startCloudMapController(t, blue, sb)
	blue.ctl.WaitReconciles(t, 3, 30*time.Second)
	if after := writes(); after != before {
		t.Errorf("%d Cloud Map writes after blue's controller restarted", after-before)
	}
	if n := sandboxtest.APICalls(t, sb)["ListInstances ok"]; n <= lists {
		t.Errorf("the restarted controller never listed the service (ListInstances %d, before %d)", n, lists)
	}
	if n := blue.ctl.Metric(t, cloudmap.NameConflicts); n != 1 {
		t.Errorf("after the restart %s on blue = %v, want 1 (the conflict stands)", cloudmap.NameConflicts, n)
	}
	answers("blue's instances after the restart", "blue", blue.ids("10.1.0.1"))
	answers("green's instances after the restart", "green", green.ids("10.2.0.1"))
	foreignUnchanged("after the restart")
}

// startCloudMapController runs a controller for c publishing into Cloud Map only.
func startCloudMapController(t *testing.T, c *cloudMapCluster, sb *sandbox.Sandbox) *proc {
	t.Helper()
	return startController(t, c.id, c.kc.Kubeconfig, sb, "--source", "service", "--txt-owner-id", c.id, "--cloudmap",
		"--leader-elect=false", "--interval", "1s", "--debounce", "100ms")
}

// apiService creates the ClusterIP Service "api" published into mesh.local/api, its
// version label set.
func apiService(t *testing.T, kc kubernetes.Interface, version string) {
	t.Helper()
	_, err := kc.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default",
			Labels:      map[string]string{cloudmap.LabelVersion: version},
			Annotations: map[string]string{cloudmap.AnnotationService: "mesh.local/api", cloudmap.AnnotationAttributes: "env=prod"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "api"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// apiSlice creates or replaces the EndpointSlice of "api" as the EndpointSlice controller
// (which does not run here) writes it: its labels, the port 8080 named after the
// Service's, one endpoint per address on a node, ready unless unready says otherwise.
func apiSlice(t *testing.T, kc kubernetes.Interface, addrs []string, unready map[string]bool) {
	t.Helper()
	ctx := context.Background()
	var eps []discoveryv1.Endpoint
	for i, a := range addrs {
		node := fmt.Sprintf("node-%d", i%2)
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}, NodeName: &node,
			Conditions: discoveryv1.EndpointConditions{Ready: aws.Bool(!unready[a]), Serving: aws.Bool(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "api-" + strings.ReplaceAll(a, ".", "-")}})
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "api-abcde", Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelServiceName: "api", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: aws.String("http"), Port: aws.Int32(8080), Protocol: new(corev1.ProtocolTCP)}},
	}
	cur, err := kc.DiscoveryV1().EndpointSlices("default").Get(ctx, slice.Name, metav1.GetOptions{})
	if err == nil {
		slice.ResourceVersion = cur.ResourceVersion
		_, err = kc.DiscoveryV1().EndpointSlices("default").Update(ctx, slice, metav1.UpdateOptions{})
	} else {
		_, err = kc.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}
