package levertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// CloudMap is a Cloud Map service with custom health on a sandbox started for the test:
// blue-1, blue-2 HEALTHY and green-1, green-2 UNHEALTHY, each registered by its cluster's
// controller.
type CloudMap struct {
	// SB is the sandbox.
	SB *sandbox.Sandbox
	// API is the sandbox's Cloud Map client (the real JSON protocol through aws-sdk-go-v2).
	API *sd.Client
	// SvcID and ARN are the service's; Name names it as the lever's messages do:
	// "service apps/orders".
	SvcID, ARN, Name string
}

// NewCloudMap starts a sandbox and sets up the service on it; it skips in -short.
func NewCloudMap(t *testing.T) *CloudMap {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	m := &CloudMap{SB: sb, API: cloudMapClient(sb.APIURL()), Name: "service apps/orders"}
	ctx := context.Background()
	svc := sandboxtest.CloudMapService(t, m.API, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	m.SvcID, m.ARN = aws.ToString(svc.Id), aws.ToString(svc.Arn)
	for i, c := range []string{"blue", "blue", "green", "green"} {
		id := fmt.Sprintf("%s-%d", c, i%2+1)
		if _, err := m.API.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.SvcID), InstanceId: aws.String(id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": fmt.Sprintf("10.0.0.%d", i+1), "cluster": c, cloudmap.OwnerAttribute: c + "-ctl"}}); err != nil {
			t.Fatalf("levertest: register instance %s: %v", id, err)
		}
	}
	m.Restore(t)
	return m
}

// cloudMapClient is a Cloud Map client of the sandbox at url.
func cloudMapClient(url string) *sd.Client {
	return cloudmap.NewServiceDiscovery(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, url)
}

// Restore makes blue HEALTHY and green UNHEALTHY again.
func (m *CloudMap) Restore(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"blue-1", "blue-2", "green-1", "green-2"} {
		st := sdtypes.CustomHealthStatusHealthy
		if strings.HasPrefix(id, "green") {
			st = sdtypes.CustomHealthStatusUnhealthy
		}
		if _, err := m.API.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(m.SvcID),
			InstanceId: aws.String(id), Status: st}); err != nil {
			t.Fatalf("levertest: status of instance %s: %v", id, err)
		}
	}
}

// Plan moves orders from blue to green in 50 and 100 % steps.
func (m *CloudMap) Plan(name string) *spec.Plan { return CloudMapPlan(name) }

// CloudMapPlan moves apps/orders from blue to green in 50 and 100 % steps.
func CloudMapPlan(name string) *spec.Plan {
	return &spec.Plan{Name: name, CloudMap: &spec.CloudMap{Namespace: "apps", Service: "orders", ClusterAttribute: "cluster", HealthStatus: "HEALTHY_OR_ELSE_ALL"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// Tag puts key=value on the service arn.
func (m *CloudMap) Tag(t *testing.T, arn, key, value string) {
	t.Helper()
	if _, err := m.API.TagResource(context.Background(), &sd.TagResourceInput{ResourceARN: aws.String(arn), Tags: []sdtypes.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatalf("levertest: tag %s with %s: %v", arn, key, err)
	}
}

// Tags lists the tags of the service arn.
func (m *CloudMap) Tags(t *testing.T, arn string) []authority.Tag {
	t.Helper()
	out, err := m.API.ListTagsForResource(context.Background(), &sd.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		t.Fatalf("levertest: tags of %s: %v", arn, err)
	}
	var got []authority.Tag
	for _, tg := range out.Tags {
		got = append(got, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
	}
	return got
}

// Untag removes keys from the service arn.
func (m *CloudMap) Untag(t *testing.T, arn string, keys []string) {
	t.Helper()
	if _, err := m.API.UntagResource(context.Background(), &sd.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys}); err != nil {
		t.Fatalf("levertest: untag %s: %v", arn, err)
	}
}

// Healthy renders the HEALTHY instances as in effect: "blue=2 green=0".
func (m *CloudMap) Healthy(t *testing.T) string {
	t.Helper()
	out, err := m.API.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.SvcID)})
	if err != nil {
		t.Fatalf("levertest: health of service %s: %v", m.SvcID, err)
	}
	n := map[string]int{"blue": 0, "green": 0}
	for id, st := range out.Status {
		if st != sdtypes.HealthStatusUnhealthy {
			n[strings.Split(id, "-")[0]]++
		}
	}
	return lever.FormatWeights(map[string]int64{"blue": int64(n["blue"]), "green": int64(n["green"])})
}

// Counted is the sandbox's client, counted in c when c is set.
func (m *CloudMap) Counted(c *Calls) cloudmap.ServiceDiscovery {
	if c == nil {
		return m.API
	}
	return CountingSD{Client: m.API, Calls: c}
}

// CountingSD is the real Cloud Map client with its calls counted (and ordered) in Calls.
type CountingSD struct {
	*sd.Client
	*Calls
}

// TagResource counts the call (and runs Calls.BeforeTag the first time) and sends it.
func (c CountingSD) TagResource(ctx context.Context, in *sd.TagResourceInput, o ...func(*sd.Options)) (*sd.TagResourceOutput, error) {
	c.onTag("TagResource")
	return c.Client.TagResource(ctx, in, o...)
}

// UntagResource counts the call and sends it, or fails it with Calls.FailUntag.
func (c CountingSD) UntagResource(ctx context.Context, in *sd.UntagResourceInput, o ...func(*sd.Options)) (*sd.UntagResourceOutput, error) {
	if err := c.onUntag("UntagResource"); err != nil {
		return nil, err
	}
	return c.Client.UntagResource(ctx, in, o...)
}

// ListTagsForResource counts the call (and runs Calls.BeforeVerify after a tag call) and
// sends it.
func (c CountingSD) ListTagsForResource(ctx context.Context, in *sd.ListTagsForResourceInput, o ...func(*sd.Options)) (*sd.ListTagsForResourceOutput, error) {
	c.onVerify("ListTagsForResource")
	return c.Client.ListTagsForResource(ctx, in, o...)
}

// UpdateInstanceCustomHealthStatus counts the call and sends it.
func (c CountingSD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	c.Count("UpdateInstanceCustomHealthStatus")
	return c.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
}

// Inst is an instance to register: Owner "" registers it without crossfade.io/owner.
type Inst struct {
	ID, Cluster, Owner string
	Healthy            bool
}

// Owned is the usual fixture: blue-1, blue-2 HEALTHY and green-1, green-2 UNHEALTHY, each
// registered by its cluster's controller (owner blue-ctl, green-ctl).
func Owned() []Inst {
	return []Inst{{"blue-1", "blue", "blue-ctl", true}, {"blue-2", "blue", "blue-ctl", true},
		{"green-1", "green", "green-ctl", false}, {"green-2", "green", "green-ctl", false}}
}

// Owner is a Cloud Map service with custom health on a sandbox started for the test, the
// instances given registered, the lever's UpdateInstanceCustomHealthStatus calls recorded
// (through Client).
type Owner struct {
	// API is the sandbox's client, not recorded; SvcID the service's id.
	API   *sd.Client
	SvcID string
	mu    sync.Mutex
	calls []string // "id=STATUS" in the order sent
}

// NewOwner starts a sandbox with the service and insts registered; it skips in -short.
func NewOwner(t *testing.T, insts []Inst) *Owner {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	m := &Owner{API: cloudMapClient(sb.APIURL())}
	svc := sandboxtest.CloudMapService(t, m.API, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	m.SvcID = aws.ToString(svc.Id)
	for _, in := range insts {
		m.Register(t, in)
	}
	return m
}

// Register registers in and sets its status (as its registrar would: the test's own
// client, not recorded).
func (m *Owner) Register(t *testing.T, in Inst) {
	t.Helper()
	ctx := context.Background()
	attrs := map[string]string{"AWS_INSTANCE_IPV4": "10.0.0.1", "cluster": in.Cluster}
	if in.Owner != "" {
		attrs[cloudmap.OwnerAttribute] = in.Owner
	}
	if _, err := m.API.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.SvcID), InstanceId: aws.String(in.ID), Attributes: attrs}); err != nil {
		t.Fatalf("levertest: register instance %s: %v", in.ID, err)
	}
	st := sdtypes.CustomHealthStatusHealthy
	if !in.Healthy {
		st = sdtypes.CustomHealthStatusUnhealthy
	}
	if _, err := m.API.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(m.SvcID),
		InstanceId: aws.String(in.ID), Status: st}); err != nil {
		t.Fatalf("levertest: status of instance %s: %v", in.ID, err)
	}
}

// Health reads every instance's status as in effect: id → HEALTHY/UNHEALTHY.
func (m *Owner) Health(t *testing.T) map[string]string {
	t.Helper()
	out, err := m.API.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.SvcID)})
	if err != nil {
		t.Fatalf("levertest: health of service %s: %v", m.SvcID, err)
	}
	h := map[string]string{}
	for id, st := range out.Status {
		h[id] = string(st)
	}
	return h
}

// Calls are the lever's UpdateInstanceCustomHealthStatus calls, "id=STATUS" in the
// order sent.
func (m *Owner) Calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

// Written returns the lever's UpdateInstanceCustomHealthStatus calls on id.
func (m *Owner) Written(id string) []string {
	var out []string
	for _, c := range m.Calls() {
		if strings.HasPrefix(c, id+"=") {
			out = append(out, c)
		}
	}
	return out
}

// ServiceARN reads the service's ARN.
func (m *Owner) ServiceARN(t *testing.T) string {
	t.Helper()
	out, err := m.API.GetService(context.Background(), &sd.GetServiceInput{Id: aws.String(m.SvcID)})
	if err != nil {
		t.Fatalf("levertest: service %s: %v", m.SvcID, err)
	}
	return aws.ToString(out.Service.Arn)
}

// Client is the sandbox's client with the lever's status writes recorded.
func (m *Owner) Client() cloudmap.ServiceDiscovery { return recordingSD{Client: m.API, m: m} }

// recordingSD records each UpdateInstanceCustomHealthStatus in its Owner.
type recordingSD struct {
	*sd.Client
	m *Owner
}

func (r recordingSD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	r.m.mu.Lock()
	r.m.calls = append(r.m.calls, aws.ToString(in.InstanceId)+"="+string(in.Status))
	r.m.mu.Unlock()
	return r.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
}
