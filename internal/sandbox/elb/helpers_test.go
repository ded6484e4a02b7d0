package elb

import (
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func newStore(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fixture is a load balancer with two target groups and an HTTP listener on port 80 whose
// default action forwards 99/1 to them, plus a third, unused group.
type fixture struct {
	s                    *Store
	lb                   LoadBalancer
	blue, green, spare   string
	listener, defaultARN string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{s: newStore(t, Options{})}
	f.lb = must(f.s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "alb", Subnets: []string{"subnet-a", "subnet-b"}}))(t)
	f.blue = f.tg(t, "blue")
	f.green = f.tg(t, "green")
	f.spare = f.tg(t, "spare")
	l := must(f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.lb.ARN, Port: ptr(80), DefaultActions: weighted(f.blue, 99, f.green, 1)}))(t)
	f.listener, f.defaultARN = l.ARN, l.DefaultRuleARN
	return f
}

func (f *fixture) tg(t *testing.T, name string) string {
	t.Helper()
	return must(f.s.CreateTargetGroup(CreateTargetGroupInput{Name: name, Protocol: "HTTP", Port: ptr(8080), VPCID: "vpc-1", TargetType: "ip"}))(t).ARN
}

// weighted is a forward action over arn, weight pairs.
func weighted(pairs ...any) []ActionInput {
	fwd := &ForwardInput{}
	for i := 0; i < len(pairs); i += 2 {
		fwd.TargetGroups = append(fwd.TargetGroups, WeightInput{TargetGroupARN: pairs[i].(string), Weight: ptr(pairs[i+1].(int))})
	}
	return []ActionInput{{Type: ActionForward, Forward: fwd}}
}

func hostIs(hosts ...string) []ConditionInput {
	return []ConditionInput{{Field: FieldHostHeader, HostHeaderConfig: hosts}}
}

// must unwraps a value and a nil error: must(s.CreateX(…))(t).
func must[V any](v V, err error) func(t *testing.T) V {
	return func(t *testing.T) V {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// wantErr checks that err is an *Error with code whose message contains msg.
func wantErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want %s: %s", err, err, code, msg)
	}
	if e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("error %s: %s\nwant   %s: …%s…", e.Code, e.Message, code, msg)
	}
}
