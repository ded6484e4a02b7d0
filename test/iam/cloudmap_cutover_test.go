package iam_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// cloudMapCutoverPolicyFile is for the runner of a Cloud Map cutover (spec.cloudMap).
const cloudMapCutoverPolicyFile = "../../deploy/iam-policy-cutover-cloudmap.json"

// phaseCloudMapCutover is the runner of a Cloud Map cutover: its own principal.
const phaseCloudMapCutover = "crossfade cutover (cloudmap)"

// TestCloudMapCutoverPolicyMatchesObservedCalls runs a Cloud Map cutover as the real
// binary against the sandbox's Cloud Map API, with every call path the lever and its gate
// have: the namespace and service found (ListNamespaces, ListServices, GetService), the
// instances and their health read (ListInstances, GetInstancesHealthStatus), statuses set
// (UpdateInstanceCustomHealthStatus), the service's authority tag added, read and removed
// (TagResource, ListTagsForResource, UntagResource), the cloudMapDiscovery gate
// (DiscoverInstances); then `cutover status`. The operations called are exactly the actions of
// deploy/iam-policy-cutover-cloudmap.json, and none is a Route 53 one.
func TestCloudMapCutoverPolicyMatchesObservedCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary and a sandbox")
	}
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	api := cloudmap.NewServiceDiscovery(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, sb.APIURL())
	svc := sandboxtest.CloudMapService(t, api, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	svcID := aws.ToString(svc.Id)
	for i, c := range []string{"blue", "blue", "green", "green"} {
		id := fmt.Sprintf("%s-%d", c, i)
		if _, err := api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(svcID), InstanceId: aws.String(id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": fmt.Sprintf("10.0.0.%d", i+1), "cluster": c, "crossfade.io/owner": c + "-ctl"}}); err != nil {
			t.Fatal(err)
		}
		if c == "green" {
			if _, err := api.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(svcID),
				InstanceId: aws.String(id), Status: sdtypes.CustomHealthStatusUnhealthy}); err != nil {
				t.Fatal(err)
			}
		}
	}
	plan := `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: iam-cloudmap
spec:
  cloudMap: {namespace: apps, service: orders}
  from: blue
  to: green
  steps: [50, 100]
  pause: 1s
  gates:
    - cloudMapDiscovery: {}
`
	planFile := writePlan(t, "iam-cloudmap", plan)
	obs := newObserver(sb)
	e := &env{t: t, sb: sb}
	state := t.TempDir()
	var runOut string
	began := time.Now()
	obs.during(t, phaseCloudMapCutover, func() {
		e.mustRun("cutover", "plan", planFile, "--state-dir", state)
		runOut = e.mustRun("cutover", "run", planFile, "--state-dir", state)
		e.mustRun("cutover", "status", planFile, "--state-dir", state)
	})
	if !strings.Contains(runOut, "cutover iam-cloudmap: completed") {
		t.Errorf("cutover run's output:\n%s", runOut)
	}
	t.Logf("%s called: %v (%s)", phaseCloudMapCutover, obs.seen[phaseCloudMapCutover], time.Since(began).Round(time.Millisecond))
	called := obs.ops(phaseCloudMapCutover)
	for _, op := range called {
		if _, ok := resourceTypes["route53:"+op]; ok || op == "Unknown" {
			t.Errorf("the Cloud Map cutover called %s: it must call no Route 53 operation (and none the sandbox does not serve)", op)
		}
	}
	granted := loadPolicy(t, cloudMapCutoverPolicyFile).actions()
	if !slices.Equal(called, granted) {
		t.Errorf("the Cloud Map cutover called %v; %s grants %v: they must be equal", called, cloudMapCutoverPolicyFile, granted)
	}
}

// TestCloudMapCutoverPolicyCoversLeverAPI: the policy grants exactly the methods of the
// lever's client interface (cloudmap.ServiceDiscovery, which embeds the gate's
// DiscoverInstances), and each statement names one resource type of the table.
func TestCloudMapCutoverPolicyCoversLeverAPI(t *testing.T) {
	api := reflect.TypeFor[cloudmap.ServiceDiscovery]()
	var methods []string
	for i := range api.NumMethod() {
		methods = append(methods, api.Method(i).Name)
	}
	slices.Sort(methods)
	p := loadPolicy(t, cloudMapCutoverPolicyFile)
	if granted := p.actions(); !slices.Equal(granted, methods) {
		t.Errorf("%s grants %v; cloudmap.ServiceDiscovery has %v", cloudMapCutoverPolicyFile, granted, methods)
	}
	for i, st := range p.Statement {
		var types []string
		for _, a := range st.Action {
			typ, ok := resourceTypes[a]
			if !ok || !strings.HasPrefix(a, "servicediscovery:") {
				t.Errorf("Statement[%d]: %s: not a Cloud Map action of the table", i, a)
			}
			types = append(types, typ)
		}
		slices.Sort(types)
		if types = slices.Compact(types); len(types) != 1 {
			t.Errorf("Statement[%d] (%s): mixes resource types %v", i, st.Sid, types)
			continue
		}
		want := []string{"*"}
		if types[0] == "service" {
			want = []string{"arn:aws:servicediscovery:*:*:service/*"}
		}
		if !slices.Equal(st.Resource, want) {
			t.Errorf("Statement[%d] (%s): Resource %v, want %v", i, st.Sid, st.Resource, want)
		}
	}
}
