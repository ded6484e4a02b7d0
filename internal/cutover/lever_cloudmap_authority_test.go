package cutover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The Cloud Map lever's authority tags against the sandbox's Cloud Map API (the real JSON
// protocol through aws-sdk-go-v2, Cloud Map's tag limits and errors): the same protocol as
// the ALB lever's (authority_tags.go), on the one service the lever moves. The protocol's
// tests are authority_tags_test.go's, run for this lever through cloudMapTagLever; here
// are the lever's sandbox, its API double and its words.

// sandboxCM is a Cloud Map service with custom health on a sandbox started for the test:
// blue-1, blue-2 HEALTHY and green-1, green-2 UNHEALTHY.
type sandboxCM struct {
	api        *sd.Client
	svcID, arn string
	name       string // "service apps/orders"
}

func newSandboxCM(t *testing.T) *sandboxCM {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	m := &sandboxCM{api: cloudmap.NewServiceDiscovery(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, sb.APIURL()),
		name: "service apps/orders"}
	ctx := context.Background()
	svc := sandboxtest.CloudMapService(t, m.api, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	m.svcID, m.arn = aws.ToString(svc.Id), aws.ToString(svc.Arn)
	for i, c := range []string{"blue", "blue", "green", "green"} {
		id := fmt.Sprintf("%s-%d", c, i%2+1)
		if _, err := m.api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.svcID), InstanceId: aws.String(id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": fmt.Sprintf("10.0.0.%d", i+1), "cluster": c, "crossfade.io/owner": c + "-ctl"}}); err != nil {
			t.Fatal(err)
		}
	}
	m.restore(t)
	return m
}

// restore makes blue HEALTHY and green UNHEALTHY again.
func (m *sandboxCM) restore(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"blue-1", "blue-2", "green-1", "green-2"} {
		st := sdtypes.CustomHealthStatusHealthy
		if strings.HasPrefix(id, "green") {
			st = sdtypes.CustomHealthStatusUnhealthy
		}
		if _, err := m.api.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(m.svcID),
			InstanceId: aws.String(id), Status: st}); err != nil {
			t.Fatal(err)
		}
	}
}

// plan moves orders from blue to green in 50 and 100 % steps.
func (m *sandboxCM) plan(name string) *spec.Plan {
	return &spec.Plan{Name: name, CloudMap: &spec.CloudMap{Namespace: "apps", Service: "orders", ClusterAttribute: "cluster", HealthStatus: "HEALTHY_OR_ELSE_ALL"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// tag puts key=value on the service arn.
func (m *sandboxCM) tag(t *testing.T, arn, key, value string) {
	t.Helper()
	if _, err := m.api.TagResource(context.Background(), &sd.TagResourceInput{ResourceARN: aws.String(arn), Tags: []sdtypes.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatal(err)
	}
}

// tags lists the tags of the service arn.
func (m *sandboxCM) tags(t *testing.T, arn string) []authority.Tag {
	t.Helper()
	out, err := m.api.ListTagsForResource(context.Background(), &sd.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	var got []authority.Tag
	for _, tg := range out.Tags {
		got = append(got, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
	}
	return got
}

// untag removes keys from the service arn.
func (m *sandboxCM) untag(t *testing.T, arn string, keys []string) {
	t.Helper()
	if _, err := m.api.UntagResource(context.Background(), &sd.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys}); err != nil {
		t.Fatal(err)
	}
}

// healthy renders the HEALTHY instances as in effect: "blue=2 green=0".
func (m *sandboxCM) healthy(t *testing.T) string {
	t.Helper()
	out, err := m.api.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.svcID)})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{"blue": 0, "green": 0}
	for id, st := range out.Status {
		if st != sdtypes.HealthStatusUnhealthy {
			n[strings.Split(id, "-")[0]]++
		}
	}
	return FormatWeights(map[string]int64{"blue": int64(n["blue"]), "green": int64(n["green"])})
}

// countingSD is the real Cloud Map client with its calls counted (and ordered) in
// tagCalls.
type countingSD struct {
	*sd.Client
	*tagCalls
}

func (c countingSD) TagResource(ctx context.Context, in *sd.TagResourceInput, o ...func(*sd.Options)) (*sd.TagResourceOutput, error) {
	c.onTag("TagResource")
	return c.Client.TagResource(ctx, in, o...)
}

func (c countingSD) UntagResource(ctx context.Context, in *sd.UntagResourceInput, o ...func(*sd.Options)) (*sd.UntagResourceOutput, error) {
	if err := c.onUntag("UntagResource"); err != nil {
		return nil, err
	}
	return c.Client.UntagResource(ctx, in, o...)
}

func (c countingSD) ListTagsForResource(ctx context.Context, in *sd.ListTagsForResourceInput, o ...func(*sd.Options)) (*sd.ListTagsForResourceOutput, error) {
	c.onVerify("ListTagsForResource")
	return c.Client.ListTagsForResource(ctx, in, o...)
}

func (c countingSD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	c.count("UpdateInstanceCustomHealthStatus")
	return c.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
}

// counted is the sandbox's client, counted in c when c is set.
func (m *sandboxCM) counted(c *tagCalls) cloudmap.ServiceDiscovery {
	if c == nil {
		return m.api
	}
	return countingSD{Client: m.api, tagCalls: c}
}

// cloudMapTagLever is the Cloud Map lever for the authority-tag tests: the tag is on the
// one service it moves, whose instances' health is the weights (2 instances a cluster).
func cloudMapTagLever(t *testing.T) *tagLever {
	m := newSandboxCM(t)
	return &tagLever{
		cutover: "orders",
		res:     []tagRes{{arn: m.arn, name: m.name, releaseName: m.name}},
		tagOp:   "TagResource", untagOp: "UntagResource", readOp: "ListTagsForResource", writeOps: []string{"UpdateInstanceCustomHealthStatus"},
		notReady:  "the Cloud Map service is not ready for this cutover:\n  ",
		held:      "the service's instances",
		tooMany:   "has 50 tags, the most Cloud Map allows on a resource: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTagsException)",
		denyUntag: errors.New("AccessDeniedException: not authorized to perform servicediscovery:UntagResource"),
		atFrom:    "blue=2 green=0", atHalf: "blue=2 green=2", atTo: "blue=0 green=2",
		// restore puts the service back at 100:0 between the Run test's parts, so its
		// abort rolls back to 1:1 (both clusters HEALTHY).
		abortStart: `{"blue":1,"green":1}`, abortState: "blue=2 green=2",
		plan: m.plan,
		lever: func(p *spec.Plan, c *tagCalls) tagGuarded {
			lv := cloudmap.New(p, m.counted(c), cloudmap.Poll(5*time.Millisecond))
			return lv
		},
		config: func(p *spec.Plan, c *tagCalls, dir string) Config {
			cfg := quietConfig(p, dir)
			cfg.Levers = cloudMapLevers(m.counted(c))
			return cfg
		},
		tag: m.tag, tags: m.tags, untag: m.untag, restore: m.restore,
		state: m.healthy,
	}
}
