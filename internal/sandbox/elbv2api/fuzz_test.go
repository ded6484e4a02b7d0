package elbv2api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
)

// fuzzActions are the actions FuzzQueryForms sends forms to: the ones crossfade's ALB
// lever calls (weights, authority tags) and the target registration the AWS Load Balancer
// Controller makes.
var fuzzActions = []string{"ModifyRule", "AddTags", "RegisterTargets", "RemoveTags", "DeregisterTargets", "ModifyListener"}

// FuzzQueryForms feeds arbitrary form bodies to ELBv2's query protocol, against a store
// holding a load balancer, two target groups (blue with two targets), a listener
// forwarding 90/10 and a rule forwarding 50/50. An op below len(fuzzActions) puts
// Action=<that action>&Version=2015-12-01& in front of the body; any other sends the body
// alone, so that the fuzzer reaches the Action and Version checks too. In a body, $LB,
// $BLUE, $GREEN, $LISTENER, $RULE and $DEFAULT stand for the load balancer's, the target
// groups', the listener's, the rule's and the default rule's ARNs. The API must never
// panic nor answer 5xx; a refusal is a 4xx in ELBv2's XML error shape (ErrorResponse,
// Error Type Sender, a Code and a Message, and the RequestId), and leaves the store's
// snapshot, version and all, as it was; an answer is the action's XML response.
func FuzzQueryForms(f *testing.F) {
	for _, s := range []struct {
		op   int
		body string
	}{
		{0, "RuleArn=$RULE&Actions.member.1.Type=forward&Actions.member.1.ForwardConfig.TargetGroups.member.1.TargetGroupArn=$BLUE&Actions.member.1.ForwardConfig.TargetGroups.member.1.Weight=10&Actions.member.1.ForwardConfig.TargetGroups.member.2.TargetGroupArn=$GREEN&Actions.member.1.ForwardConfig.TargetGroups.member.2.Weight=90"},
		{0, "RuleArn=$RULE&Actions.member.1.Type=forward&Actions.member.1.ForwardConfig.TargetGroups.member.1.TargetGroupArn=$BLUE&Actions.member.1.ForwardConfig.TargetGroups.member.1.Weight=1000"},
		{0, "RuleArn=$RULE&Actions.member.1.Type=forward&Actions.member.1.ForwardConfig.TargetGroups.member.1.TargetGroupArn=$BLUE&Actions.member.1.ForwardConfig.TargetGroups.member.1.Weight=x"},
		{0, "RuleArn=$RULE&Actions.member.1.Type=forward&Actions.member.1.ForwardConfig.TargetGroupStickinessConfig.Enabled=true&Actions.member.1.ForwardConfig.TargetGroupStickinessConfig.DurationSeconds=300&Actions.member.1.ForwardConfig.TargetGroups.member.1.TargetGroupArn=$GREEN&Actions.member.1.ForwardConfig.TargetGroups.member.1.Weight=1"},
		{0, "RuleArn=$RULE&Conditions.member.1.Field=path-pattern&Conditions.member.1.PathPatternConfig.Values.member.1=/api/*"},
		{0, "RuleArn=$RULE&Conditions=&Actions.member.2.Type=fixed-response&Actions.member.2.FixedResponseConfig.StatusCode=503"},
		{0, "RuleArn=$DEFAULT&Actions.member.1.Type=forward&Actions.member.1.TargetGroupArn=$GREEN"},
		{0, "RuleArn=$RULE&Actions.member.0.Type=forward&Actions.member.-1.Type=redirect&Actions.member.99999999999999999999.Type=x"},
		{0, "RuleArn=$RULE&Transforms.member.1.Type=host-header-rewrite"},
		{0, "RuleArn=$RULE&ResetTransforms=maybe"},
		{0, "RuleArn="},
		{1, "ResourceArns.member.1=$RULE&Tags.member.1.Key=crossfade.io/cutover/shop/0a1b2c3d4e5f6a7b&Tags.member.1.Value=0a1b2c3d4e5f6a7b@laptop.local:4242"},
		{1, "ResourceArns.member.1=$RULE&ResourceArns.member.2=$LISTENER&Tags.member.1.Key=k&Tags.member.1.Value=v"},
		{1, "ResourceArns.member.1=$BLUE&Tags.member.1.Key=aws:reserved&Tags.member.1.Value=v"},
		{1, "ResourceArns.member.1=$LB&Tags.member.1.Key=&Tags.member.1.Value="},
		{1, "ResourceArns.member.1=arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/web/x/y/z&Tags.member.1.Key=k"},
		{1, "ResourceArns.member.1=$RULE&Tags="},
		{2, "TargetGroupArn=$BLUE&Targets.member.1.Id=10.0.0.3&Targets.member.1.Port=8080"},
		{2, "TargetGroupArn=$GREEN&Targets.member.1.Id=10.0.1.1&Targets.member.2.Id=10.0.1.2&Targets.member.2.Port=8081&Targets.member.2.AvailabilityZone=all"},
		{2, "TargetGroupArn=$BLUE&Targets.member.1.Id=10.0.0.3&Targets.member.1.Port=70000"},
		{2, "TargetGroupArn=$BLUE&Targets.member.1.Id=i-0123456789abcdef0"},
		{2, "TargetGroupArn=$BLUE&Targets="},
		{2, "TargetGroupArn=$BLUE&Targets.member.1.Port=80"},
		{3, "ResourceArns.member.1=$LB&TagKeys.member.1=team"},
		{4, "TargetGroupArn=$BLUE&Targets.member.1.Id=10.0.0.1&Targets.member.1.Port=8080"},
		{5, "ListenerArn=$LISTENER&Port=8080&DefaultActions.member.1.Type=forward&DefaultActions.member.1.TargetGroupArn=$GREEN"},
		{5, "ListenerArn=$LISTENER&Protocol=HTTPS"},
		{255, "Action=ModifyRule&Version=2015-12-01&RuleArn=$RULE"},
		{255, "Action=ModifyRule&Version=2012-06-01&RuleArn=$RULE"},
		{255, "Action=SetSubnets&Version=2015-12-01"},
		{255, "Action=%zz"},
		{255, ""},
	} {
		f.Add(uint8(s.op), s.body)
	}
	f.Fuzz(func(t *testing.T, op uint8, body string) {
		fx := newFuzzStore(t)
		body = fx.placeholders.Replace(body)
		action := ""
		if int(op) < len(fuzzActions) {
			action = fuzzActions[op]
			body = "Action=" + action + "&Version=" + Version + "&" + body
		}
		before := fx.store.Snapshot()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		rec := httptest.NewRecorder()
		fx.api.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			var resp struct {
				XMLName  xml.Name
				Metadata struct {
					RequestID string `xml:"RequestId"`
				} `xml:"ResponseMetadata"`
			}
			if err := xml.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Metadata.RequestID == "" ||
				(action != "" && resp.XMLName.Local != action+"Response") {
				t.Fatalf("answer is not the %s response (%v): %s", action, err, rec.Body)
			}
			return
		case rec.Code >= 400 && rec.Code < 500:
			var e errorResponse
			if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Type != "Sender" || e.Error.Code == "" ||
				e.Error.Message == "" || e.RequestID == "" || e.Xmlns != Namespace {
				t.Fatalf("status %d without ELBv2's error shape (%v): %s", rec.Code, err, rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if after := fx.store.Snapshot(); !reflect.DeepEqual(before, after) {
			t.Fatalf("refused request (%d %s) changed the store:\nbefore %+v\nafter  %+v", rec.Code, rec.Body, before, after)
		}
	})
}

// fuzzStore is the store FuzzQueryForms sends its forms to.
type fuzzStore struct {
	api          *API
	store        *elb.Store
	placeholders *strings.Replacer
}

func newFuzzStore(t *testing.T) *fuzzStore {
	t.Helper()
	store, err := elb.Open(elb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	api, err := New(Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	lb, err := store.CreateLoadBalancer(elb.CreateLoadBalancerInput{Name: "web", Subnets: []string{"subnet-1", "subnet-2"},
		Tags: []elb.Tag{{Key: "team", Value: "web"}}})
	check(err)
	num := func(n int) *int { return &n }
	tg := func(name string) string {
		out, err := store.CreateTargetGroup(elb.CreateTargetGroupInput{Name: name, Protocol: "HTTP", Port: num(8080), VPCID: "vpc-1", TargetType: "ip"})
		check(err)
		return out.ARN
	}
	blue, green := tg("blue"), tg("green")
	check(store.RegisterTargets("", blue, []elb.TargetInput{{ID: "10.0.0.1"}, {ID: "10.0.0.2"}}))
	weights := func(wBlue, wGreen int) []elb.ActionInput {
		return []elb.ActionInput{{Type: "forward", Forward: &elb.ForwardInput{TargetGroups: []elb.WeightInput{
			{TargetGroupARN: blue, Weight: num(wBlue)}, {TargetGroupARN: green, Weight: num(wGreen)}}}}}
	}
	l, err := store.CreateListener(elb.CreateListenerInput{LoadBalancerARN: lb.ARN, Protocol: "HTTP", Port: num(80), DefaultActions: weights(90, 10)})
	check(err)
	rule, err := store.CreateRule(elb.CreateRuleInput{ListenerARN: l.ARN, Priority: num(10),
		Conditions: []elb.ConditionInput{{Field: "host-header", HostHeaderConfig: []string{"api.example.com"}}}, Actions: weights(50, 50)})
	check(err)
	def := ""
	for _, r := range store.Snapshot().ListenerRules(l.ARN) {
		if r.IsDefault {
			def = r.ARN
		}
	}
	if def == "" {
		t.Fatal("no default rule")
	}
	return &fuzzStore{api: api, store: store, placeholders: strings.NewReplacer(
		"$LB", lb.ARN, "$BLUE", blue, "$GREEN", green, "$LISTENER", l.ARN, "$RULE", rule.ARN, "$DEFAULT", def)}
}
