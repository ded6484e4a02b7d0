package levers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestNew: the plan's lever kind picks the lever and its gates' clients, in one place;
// building one calls nothing (the endpoints are a closed loopback port), and the AWS
// configuration is loaded only for a plan whose lever needs it.
func TestNew(t *testing.T) {
	const closed = "http://127.0.0.1:1"
	loads := 0
	env := Env{
		AWS: func() (aws.Config, error) {
			loads++
			return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}, nil
		},
		ELBv2: closed, CloudWatch: closed, ServiceDiscovery: closed,
	}
	cm := &spec.CloudMap{Namespace: "apps", Service: "orders"}
	for _, tc := range []struct {
		name  string
		plan  *spec.Plan
		kind  string
		loads int
		check func(gc lever.GateClients) bool
	}{
		{"records", &spec.Plan{Name: "web"}, lever.Route53, 0,
			func(gc lever.GateClients) bool {
				return gc.ELB == nil && gc.CloudWatch == nil && gc.ServiceDiscovery == nil
			}},
		{"alb", &spec.Plan{Name: "shop", ALB: &spec.ALB{}, CloudWatchDelay: 3 * time.Minute}, lever.ALB, 1,
			func(gc lever.GateClients) bool {
				return gc.ELB != nil && gc.CloudWatch != nil && gc.CloudWatchDelay == 3*time.Minute && gc.ServiceDiscovery == nil
			}},
		{"cloud map", &spec.Plan{Name: "orders", CloudMap: cm}, lever.CloudMap, 1,
			func(gc lever.GateClients) bool {
				return gc.ServiceDiscovery != nil && gc.CloudMap == cm && gc.ELB == nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loads = 0
			if k := Kind(tc.plan); k != tc.kind {
				t.Errorf("kind %q, want %q", k, tc.kind)
			}
			lv, gc, err := New(env)(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			if lv.Kind() != tc.kind || !tc.check(gc) {
				t.Errorf("lever %s, gate clients %+v; want the %s lever's", lv.Kind(), gc, tc.kind)
			}
			if loads != tc.loads {
				t.Errorf("AWS configuration loaded %d times, want %d", loads, tc.loads)
			}
		})
	}

	// Without an AWS configuration only a Route 53 plan is pulled; a failing one is
	// named with the plan and the lever.
	if _, _, err := New(Env{})(&spec.Plan{Name: "shop", ALB: &spec.ALB{}}); err == nil || !strings.Contains(err.Error(), "cutover shop pulls the alb lever (spec.alb), and no AWS configuration is given") {
		t.Errorf("alb plan without AWS: %v", err)
	}
	bad := Env{AWS: func() (aws.Config, error) { return aws.Config{}, errors.New("no region") }}
	if _, _, err := New(bad)(&spec.Plan{Name: "orders", CloudMap: cm}); err == nil || !strings.Contains(err.Error(), "cutover orders: cloudmap lever: AWS configuration: no region") {
		t.Errorf("cloud map plan with a failing AWS configuration: %v", err)
	}
	dnsErr := Env{DNS: func() (route53.DNS, error) { return nil, errors.New("no credentials") }}
	if _, _, err := New(dnsErr)(&spec.Plan{Name: "web"}); err == nil || !strings.Contains(err.Error(), "cutover web: route53 lever: no credentials") {
		t.Errorf("route53 plan with a failing provider: %v", err)
	}
}
