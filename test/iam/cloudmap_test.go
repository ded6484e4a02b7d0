package iam_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// cloudMapPolicyFile is for the controller's Cloud Map publisher (--cloudmap), granted to
// the controller's role beside deploy/iam-policy.json.
const cloudMapPolicyFile = "../../deploy/iam-policy-cloudmap.json"

// phaseCloudMap is the controller publishing into Cloud Map.
const phaseCloudMap = "crossfade controller --cloudmap"

// TestCloudMapPolicyMatchesObservedCalls runs `crossfade controller --cloudmap` (the real
// binary, a real kube-apiserver) against the sandbox through every Cloud Map path the
// publisher has: the namespace and service looked up, the service's instances listed,
// endpoints registered (each read first, each operation followed), one registered again
// when its version changes, one deregistered when it goes unready, and one refused because
// a foreign instance holds its id; then SIGTERM. The Cloud Map operations it called are
// exactly the actions of deploy/iam-policy-cloudmap.json; its Route 53 calls (the DNS side
// runs too) are granted by deploy/iam-policy.json. The namespace, the service and the
// foreign instance are set up before the phase, and the test reads the sandbox's store
// directly while it runs, so that every call counted is crossfade's.
func TestCloudMapPolicyMatchesObservedCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary, a sandbox and a kube-apiserver")
	}
	kc := kubetest.Start(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	api := sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	svcID := aws.ToString(sandboxtest.CloudMapService(t, api, "shop", "", sd.CreateServiceInput{Name: aws.String("orders")}).Id)
	taken := cloudmap.InstanceID("blue", "default", "orders", "10.3.0.3", 8080)
	foreign := map[string]string{cloudmap.AttrIPv4: "10.9.0.3", cloudmap.AttrPort: "8080", "team": "legacy"}
	if _, err := api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(svcID), InstanceId: aws.String(taken), Attributes: foreign}); err != nil {
		t.Fatal(err)
	}

	client := kc.Clientset(t)
	ordersService(t, client)
	ordersSlice(t, client, nil)
	obs := newObserver(sb)
	instances := func() map[string]map[string]string {
		list, _, err := sb.CloudMap().ListInstances(svcID, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]string{}
		for _, in := range list {
			out[in.ID] = in.Attributes
		}
		return out
	}
	eventually := func(what string, cond func(map[string]map[string]string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond(instances()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s; instances: %v", what, instances())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	id := func(addr string) string { return cloudmap.InstanceID("blue", "default", "orders", addr, 8080) }
	obs.during(t, phaseCloudMap, func() {
		ctl := controllertest.Start(t, controllertest.Options{Name: "controller", Kubeconfig: kc.Kubeconfig, Route53URL: sb.APIURL(),
			Args: []string{"--source", "service", "--txt-owner-id", "blue", "--cloudmap", "--debounce", "100ms", "--interval", "1s"}})
		eventually("registered", func(in map[string]map[string]string) bool {
			return in[id("10.3.0.1")][cloudmap.AttrVersion] == "v1" && in[id("10.3.0.2")][cloudmap.AttrVersion] == "v1"
		})
		setVersion(t, client, "v2")
		eventually("registered again with the new version", func(in map[string]map[string]string) bool {
			return in[id("10.3.0.1")][cloudmap.AttrVersion] == "v2" && in[id("10.3.0.2")][cloudmap.AttrVersion] == "v2"
		})
		ordersSlice(t, client, map[string]bool{"10.3.0.2": true})
		eventually("deregistered", func(in map[string]map[string]string) bool {
			_, ok := in[id("10.3.0.2")]
			return !ok
		})
		ctl.Stop(t)
		if code := ctl.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("controller exited %d after SIGTERM:\n%s", code, ctl.Log())
		}
		if !strings.Contains(ctl.Log(), `"msg":"cloud map conflict"`) {
			t.Errorf("the conflict over %s was not reported", taken)
		}
	})
	if got := instances()[taken]; !maps.Equal(got, foreign) {
		t.Errorf("the foreign instance %s changed: %v", taken, got)
	}

	r53 := route53Operations()
	var cloudMapOps, dnsOps []string
	for _, op := range obs.ops(phaseCloudMap) {
		if slices.Contains(r53, op) {
			dnsOps = append(dnsOps, op)
		} else {
			cloudMapOps = append(cloudMapOps, op)
		}
	}
	t.Logf("%s called: %v", phaseCloudMap, obs.seen[phaseCloudMap])
	if granted := loadPolicy(t, cloudMapPolicyFile).actions(); !slices.Equal(cloudMapOps, granted) {
		t.Errorf("the Cloud Map publisher called %v; %s grants %v: they must be equal (add what is called, remove what is not)",
			cloudMapOps, cloudMapPolicyFile, granted)
	}
	publish := loadPolicy(t, publishPolicyFile).actions()
	for _, op := range dnsOps {
		if !slices.Contains(publish, op) {
			t.Errorf("the controller's DNS side called %s, which %s does not grant", op, publishPolicyFile)
		}
	}
}

// TestCloudMapPolicyCoversPublisherAPI: the Cloud Map policy grants exactly the methods of
// the publisher's client interface (cloudmap.API: every Cloud Map call goes through it),
// which catches a call in a path the run above misses.
func TestCloudMapPolicyCoversPublisherAPI(t *testing.T) {
	api := reflect.TypeFor[cloudmap.API]()
	var methods []string
	for i := range api.NumMethod() {
		methods = append(methods, api.Method(i).Name)
	}
	slices.Sort(methods)
	if granted := loadPolicy(t, cloudMapPolicyFile).actions(); !slices.Equal(granted, methods) {
		t.Errorf("%s grants %v; cloudmap.API has %v", cloudMapPolicyFile, granted, methods)
	}
}

// cloudMapActions are the Cloud Map actions the publisher's policy may grant, each with
// the condition key that narrows it ("" when none), from the Service Authorization
// Reference ("Actions, resources, and condition keys for AWS Cloud Map"). The policy grants
// every one on "*": the namespace and service lists and GetOperation take no resource, and
// the instance calls are narrowed, where a deployment knows its services' ARNs, with
// servicediscovery:ServiceArn (README).
var cloudMapActions = map[string]string{
	"servicediscovery:ListNamespaces":     "",
	"servicediscovery:ListServices":       "",
	"servicediscovery:GetOperation":       "",
	"servicediscovery:ListInstances":      "servicediscovery:ServiceArn",
	"servicediscovery:GetInstance":        "servicediscovery:ServiceArn",
	"servicediscovery:RegisterInstance":   "servicediscovery:ServiceArn",
	"servicediscovery:DeregisterInstance": "servicediscovery:ServiceArn",
}

// TestCloudMapPolicyShape checks the Cloud Map policy as IAM reads it, and more strictly:
// version 2012-10-17, Allow statements with unique Sids, Cloud Map actions named in full,
// each granted once and known to this test's table, no element IAM does not know.
func TestCloudMapPolicyShape(t *testing.T) {
	p := loadPolicy(t, cloudMapPolicyFile)
	if p.Version != "2012-10-17" {
		t.Errorf("Version %q, want 2012-10-17", p.Version)
	}
	action := regexp.MustCompile(`^servicediscovery:[A-Z][A-Za-z]+$`)
	sids, granted := map[string]bool{}, map[string]bool{}
	for i, st := range p.Statement {
		where := fmt.Sprintf("Statement[%d] (Sid %q)", i, st.Sid)
		if !sidPattern.MatchString(st.Sid) || sids[st.Sid] {
			t.Errorf("%s: Sid must be unique letters and digits", where)
		}
		sids[st.Sid] = true
		if st.Effect != "Allow" || len(st.Condition) != 0 {
			t.Errorf("%s: want an Allow without conditions", where)
		}
		if !slices.Equal(st.Resource, []string{"*"}) {
			t.Errorf("%s: Resource %v, want \"*\" (see cloudMapActions)", where, st.Resource)
		}
		for _, a := range st.Action {
			if _, known := cloudMapActions[a]; !action.MatchString(a) || !known {
				t.Errorf("%s: action %q: want a servicediscovery action named in full, in this test's table", where, a)
			}
			if granted[a] {
				t.Errorf("%s: %s granted twice", where, a)
			}
			granted[a] = true
		}
	}
}

// route53Operations are the Route 53 operations crossfade can call: the provider's client
// interface.
func route53Operations() []string {
	api := reflect.TypeFor[route53.API]()
	var out []string
	for i := range api.NumMethod() {
		out = append(out, api.Method(i).Name)
	}
	return out
}

// ordersService creates the Service "orders" published into shop/orders at version v1.
func ordersService(t *testing.T, kc kubernetes.Interface) {
	t.Helper()
	_, err := kc.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "default", Labels: map[string]string{cloudmap.LabelVersion: "v1"},
			Annotations: map[string]string{cloudmap.AnnotationService: "shop/orders"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// setVersion sets the version label of "orders", retrying on a write conflict.
func setVersion(t *testing.T, kc kubernetes.Interface, v string) {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		svc, err := kc.CoreV1().Services("default").Get(ctx, "orders", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Labels[cloudmap.LabelVersion] = v
		if _, err = kc.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err == nil {
			return
		} else if attempt == 5 {
			t.Fatal(err)
		}
	}
}

// ordersSlice creates or replaces the EndpointSlice of "orders" (10.3.0.1-3 on 8080),
// ready unless unready says otherwise.
func ordersSlice(t *testing.T, kc kubernetes.Interface, unready map[string]bool) {
	t.Helper()
	ctx := context.Background()
	var eps []discoveryv1.Endpoint
	for _, a := range []string{"10.3.0.1", "10.3.0.2", "10.3.0.3"} {
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: aws.Bool(!unready[a])}})
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "orders-1", Namespace: "default",
		Labels: map[string]string{discoveryv1.LabelServiceName: "orders", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: aws.String("http"), Port: aws.Int32(8080)}}}
	slices := kc.DiscoveryV1().EndpointSlices("default")
	cur, err := slices.Get(ctx, slice.Name, metav1.GetOptions{})
	if err == nil {
		slice.ResourceVersion = cur.ResourceVersion
		_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
	} else {
		_, err = slices.Create(ctx, slice, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}
