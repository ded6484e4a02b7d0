package cutover

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The engine tests' names for levertest's harnesses (the sandboxes each lever is built
// against, set up once there).

// testRunner is the runner the levers' tests read and write as.
var testRunner = levertest.Runner

// testEnv is a WriteEnv for a test that drives a lever alone.
func testEnv() WriteEnv { return levertest.Env() }

// sandboxALB is levertest's ALB under the names write_retry_test.go uses.
type sandboxALB struct {
	*levertest.ALB
	api            *elbv2.Client
	rule, listener string
}

// albOn sets up levertest's load balancer on sb, its client retrying with retryer.
func albOn(t *testing.T, sb *sandbox.Sandbox, retryer aws.Retryer) *sandboxALB {
	t.Helper()
	a := levertest.ALBOn(t, sb, retryer)
	return &sandboxALB{ALB: a, api: a.API, rule: a.Rule, listener: a.Listener}
}

// weights renders the rule's and the listener's forward weights.
func (a *sandboxALB) weights(t *testing.T) (rule, listener string) {
	t.Helper()
	return a.Weights(t)
}

// sandboxCM is levertest's Cloud Map service under the names member_gone_resume_test.go
// uses.
type sandboxCM struct {
	*levertest.CloudMap
	api   *sd.Client
	svcID string
}

// newSandboxCM starts levertest's Cloud Map service; it skips in -short.
func newSandboxCM(t *testing.T) *sandboxCM {
	t.Helper()
	m := levertest.NewCloudMap(t)
	return &sandboxCM{CloudMap: m, api: m.API, svcID: m.SvcID}
}

// plan moves orders from blue to green in 50 and 100 % steps.
func (m *sandboxCM) plan(name string) *spec.Plan { return m.Plan(name) }

// healthy renders the HEALTHY instances as in effect: "blue=2 green=0".
func (m *sandboxCM) healthy(t *testing.T) string {
	t.Helper()
	return m.Healthy(t)
}
