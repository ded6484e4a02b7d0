package spec

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	testRule     = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
	testListener = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shop/50dc6c495c0c9188/0467ef3c8400ae65"
	testBlueTG   = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/shop-blue/73e2d6bc24d8a067"
)

// albPlan is testdata/alb.yaml resolved.
func albPlan() *Plan {
	g := Gate{Name: "shop-green-http", HTTP: &HTTPGate{Clusters: map[string]string{"eks-green": "http://green.internal.example.com/healthz"},
		Requests: DefaultHTTPRequests, Timeout: Duration{DefaultHTTPTimeout}, MinSuccessRatio: ptr(1.0), LatencySlack: ptr(DefaultLatencySlack)}}
	health := Gate{Name: "healthy", TargetHealth: &TargetHealthGate{MinHealthy: 2}}
	traffic := Gate{Name: "traffic", ALBTraffic: &ALBTrafficGate{Tolerance: ptr(0.05), MinRequests: 500, MaxErrorRate: ptr(0.01),
		MaxResponseTime: &Duration{250 * time.Millisecond}, Period: 60, Window: Duration{5 * time.Minute}}}
	step := func(from, to int64) PlanStep {
		return PlanStep{Weights: Weights{From: from, To: to}, Pause: 5 * time.Minute, PauseField: "spec.pause", Gates: []Gate{g, health, traffic}}
	}
	return &Plan{
		Name:          "shop-alb-blue-to-green",
		ALB:           &ALB{ListenerRules: []string{testRule, testListener}, From: testBlueTG, To: "shop-green"},
		From:          "eks-blue",
		To:            "eks-green",
		Steps:         []PlanStep{step(100, 0), step(90, 10), step(1, 1), step(0, 100)},
		Rollback:      PlanRollback{Mode: RollbackImmediate},
		OnDrift:       DriftPause,
		InSyncTimeout: DefaultInSyncTimeout,
		StepTimeout:   DefaultStepTimeout,
		Retire:        &Retire{CloudWatch: &RetireCloudWatch{Period: 60}, Window: Duration{10 * time.Minute}, Timeout: Duration{20 * time.Minute}},
		// Not in ALB: how the metrics are read may change across a resume.
		CloudWatchDelay: 2 * time.Minute,
	}
}

func TestLoadALB(t *testing.T) {
	got, err := Load("testdata/alb.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := albPlan(); !reflect.DeepEqual(got, want) {
		t.Errorf("Load(alb.yaml) =\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// TestALBDocumentsEveryField: every key of the ALB lever's schema appears in
// testdata/alb.yaml, the ALB lever's reference (example.yaml documents the Route 53 one),
// and every line with a key has a comment.
func TestALBDocumentsEveryField(t *testing.T) {
	p, err := Load("testdata/alb.yaml")
	if err != nil || p.ALB == nil {
		t.Fatalf("Load: %v", err)
	}
	raw, err := os.ReadFile("testdata/alb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	for _, typ := range []reflect.Type{reflect.TypeFor[ALB](), reflect.TypeFor[ALBCloudWatch](), reflect.TypeFor[TargetHealthGate](), reflect.TypeFor[ALBTrafficGate](), reflect.TypeFor[RetireCloudWatch]()} {
		for _, name := range jsonNames(typ) {
			if !regexp.MustCompile(`(?m)^[ -]*` + name + `:|[{,] *` + name + `:`).MatchString(data) {
				t.Errorf("alb.yaml does not use %s.%s", typ.Name(), name)
			}
		}
	}
	for _, key := range albOnlyKeys[reflect.TypeFor[Gate]()] {
		if !regexp.MustCompile(`(?m)^[ -]*` + key + `:`).MatchString(data) {
			t.Errorf("alb.yaml does not use Gate.%s", key)
		}
	}
	if !strings.Contains(data, "\n  alb:") {
		t.Error("alb.yaml does not use Spec.alb")
	}
	for i, line := range strings.Split(strings.TrimSpace(data), "\n") {
		if !strings.Contains(line, "#") {
			t.Errorf("alb.yaml line %d has no comment: %s", i+1, line)
		}
	}
}

func TestALBNames(t *testing.T) {
	for _, tc := range []struct {
		spec     kv
		from, to string
	}{
		{kv{"from": del, "to": del}, "shop-blue", "shop-green"},
		{kv{"from": "blue", "to": del}, "blue", "shop-green"},
		{kv{"from": "blue", "to": "green"}, "blue", "green"},
	} {
		over := kv{"zone": del, "records": del, "alb": "{listenerRules: [" + testRule + "], from: " + testBlueTG + ", to: shop-green}"}
		for k, v := range tc.spec {
			over[k] = v
		}
		p, err := Parse([]byte(planYAML(nil, over)), "plan.yaml")
		if err != nil {
			t.Fatalf("%v: %v", tc.spec, err)
		}
		if p.From != tc.from || p.To != tc.to || p.ALB.From != testBlueTG || p.ALB.To != "shop-green" {
			t.Errorf("%v: from %q to %q, alb %+v; want %q, %q", tc.spec, p.From, p.To, p.ALB, tc.from, tc.to)
		}
	}
	if got := TargetGroupName(testBlueTG); got != "shop-blue" {
		t.Errorf("TargetGroupName(ARN) = %q", got)
	}
	if !IsListenerARN(testListener) || IsListenerARN(testRule) {
		t.Error("IsListenerARN")
	}
}

// The NLB listener of these tests: its default action's weighted target groups.
const (
	testNLBListener     = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/db/50dc6c495c0c9188/0467ef3c8400ae65"
	testNLBListenerRule = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/net/db/50dc6c495c0c9188/0467ef3c8400ae65/9683b2d02a6cabee"
)

// TestNLBListenerPlan: an ALB plan takes a Network Load Balancer's listener (the kind is
// told by the ARN: nothing else in the plan changes) with a traffic gate on shares.
func TestNLBListenerPlan(t *testing.T) {
	p, err := Parse([]byte(planYAML(nil, kv{"zone": del, "records": del,
		"alb":    "{listenerRules: [" + testNLBListener + "], from: shop-blue, to: shop-green}",
		"gates":  `[{targetHealth: {minHealthy: 1}}, {prometheus: {url: "http://127.0.0.1:9090", query: "sum(rate(conns_total[1m]))", max: 1000}}]`,
		"retire": `{metrics: "http://127.0.0.1:9100/metrics", counter: conns_total, window: 1m}`})), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !IsNetworkListenerARN(p.ALB.ListenerRules[0]) || !IsListenerARN(p.ALB.ListenerRules[0]) || IsNetworkListenerARN(testListener) || NetworkRules(p.ALB.ListenerRules) != 1 {
		t.Errorf("rules %v: want one NLB listener", p.ALB.ListenerRules)
	}
}

func TestALBProblems(t *testing.T) {
	alb := func(rules, from, to string) string {
		return "{listenerRules: " + rules + ", from: " + from + ", to: " + to + "}"
	}
	good := alb("["+testRule+"]", "shop-blue", "shop-green")
	for _, tc := range []struct {
		name string
		over kv
		want []string
	}{
		{"zone and records beside alb", kv{"alb": good},
			[]string{`spec.zone "example.com": not with spec.alb`, "spec.records: not with spec.alb"}},
		{"ttl beside alb", kv{"zone": del, "records": del, "alb": good, "ttl": "{lower: 5}"},
			[]string{"spec.ttl: not with spec.alb"}},
		{"no rules", kv{"zone": del, "records": del, "alb": alb("[]", "a", "b")},
			[]string{"spec.alb.listenerRules: required"}},
		{"not a rule", kv{"zone": del, "records": del, "alb": alb("["+testBlueTG+", arn:aws:elasticloadbalancing:us-east-1:1:listener/gwy/n/1/2, nope]", "a", "b")},
			[]string{"spec.alb.listenerRules[0] ", ", not a targetgroup",
				"spec.alb.listenerRules[1]", "a gwy/ load balancer's forward action has no target group weights",
				`spec.alb.listenerRules[2] "nope": want the ARN`}},
		{"an NLB listener rule", kv{"zone": del, "records": del, "alb": alb("["+testNLBListenerRule+"]", "a", "b")},
			[]string{"spec.alb.listenerRules[0]", "a Network Load Balancer's weighted target groups are its listener's default action: list the listener"}},
		{"an NLB listener beside an ALB rule", kv{"zone": del, "records": del, "alb": alb("["+testRule+", "+testNLBListener+"]", "a", "b")},
			[]string{"spec.alb.listenerRules: lists Network Load Balancer listeners", "a cutover's target groups belong to one kind of load balancer"}},
		{"albTraffic on an NLB", kv{"zone": del, "records": del, "alb": alb("["+testNLBListener+"]", "a", "b"),
			"gates": "[{targetHealth: {}}, {albTraffic: {period: 1}}]"},
			[]string{"spec.gates[1].albTraffic: not on a Network Load Balancer: AWS/NetworkELB publishes flow counts per load balancer only, not per target group",
				"gate on targetHealth and the clusters' own metrics (a prometheus gate"}},
		{"albTraffic with HTTP bounds on an NLB", kv{"zone": del, "records": del, "alb": alb("["+testNLBListener+"]", "a", "b"),
			"gates": "[{albTraffic: {maxErrorRate: 0.01, maxResponseTime: 1s}}]"},
			[]string{"spec.gates[0].albTraffic: not on a Network Load Balancer"}},
		{"retire.cloudWatch on an NLB", kv{"zone": del, "records": del, "alb": alb("["+testNLBListener+"]", "a", "b"),
			"retire": `{cloudWatch: {period: 1}, window: 1m}`},
			[]string{"spec.retire.cloudWatch: not on a Network Load Balancer: AWS/NetworkELB publishes flow counts per load balancer only", "retire.metrics or retire.prometheus"}},
		{"no retire source on an NLB", kv{"zone": del, "records": del, "alb": alb("["+testNLBListener+"]", "a", "b"), "retire": `{window: 1m}`},
			[]string{"spec.retire: want metrics (with counter) or prometheus", "an NLB's is not in CloudWatch"}},
		{"duplicate rule", kv{"zone": del, "records": del, "alb": alb("["+testRule+", "+testRule+"]", "a", "b")},
			[]string{"spec.alb.listenerRules[1]", "duplicate of spec.alb.listenerRules[0]"}},
		{"bad groups", kv{"zone": del, "records": del, "alb": alb("["+testRule+"]", "-bad", "x")},
			[]string{`spec.alb.from "-bad": want a target group's ARN`}},
		{"same group", kv{"zone": del, "records": del, "alb": alb("["+testRule+"]", testBlueTG, "shop-blue"), "from": del, "to": del},
			[]string{`spec.alb.to "shop-blue": the same target group as spec.alb.from`}},
		{"a name equal to the other group's", kv{"zone": del, "records": del, "alb": good, "from": "shop-green", "to": del},
			[]string{"spec.to: required here"}},
		{"ALB weights", kv{"zone": del, "records": del, "alb": good, "steps": "[{weights: {from: 999, to: 1000}}]"},
			[]string{`spec.steps[0].weights.to "1000": want an integer 0..999`}},
		{"no dns gate", kv{"zone": del, "records": del, "alb": good, "gates": "[{dns: {}}]"},
			[]string{"spec.gates[0].dns: not with spec.alb"}},
		{"ALB gates without alb", kv{"gates": "[{targetHealth: {}}, {albTraffic: {}}]", "retire": "{cloudWatch: {}, window: 1m}"},
			[]string{"spec.gates[0].targetHealth: only with spec.alb", "spec.gates[1].albTraffic: only with spec.alb", "spec.retire.cloudWatch: only with spec.alb"}},
		{"bad ALB gates", kv{"zone": del, "records": del, "alb": good,
			"gates": "[{targetHealth: {minHealthy: 0}}, {albTraffic: {tolerance: 2, minRequests: 0, maxErrorRate: -1, maxResponseTime: 0s, period: 7, window: 0s}}]"},
			[]string{`spec.gates[0].targetHealth.minHealthy "0": want an integer 1..1000`, `spec.gates[1].albTraffic.tolerance "2": want a number 0..1`,
				`spec.gates[1].albTraffic.minRequests "0": want an integer`, `spec.gates[1].albTraffic.maxErrorRate "-1": want a number 0..1`,
				`spec.gates[1].albTraffic.maxResponseTime "0s": want a duration > 0`, `spec.gates[1].albTraffic.period "7": want a CloudWatch period`,
				`spec.gates[1].albTraffic.window "0s": want a duration > 0`}},
		{"two retire sources", kv{"zone": del, "records": del, "alb": good, "retire": `{cloudWatch: {period: 90}, metrics: "http://a/m", counter: c, window: 1m}`},
			[]string{"spec.retire: want exactly one of metrics, prometheus and cloudWatch, not metrics and cloudWatch"}},
		{"bad retire period", kv{"zone": del, "records": del, "alb": good, "retire": `{cloudWatch: {period: 90}, window: 1m}`},
			[]string{`spec.retire.cloudWatch.period "90": want a CloudWatch period`}},
		{"no retire source", kv{"zone": del, "records": del, "alb": good, "retire": `{window: 1m}`},
			[]string{"spec.retire: want cloudWatch (the from target group's RequestCount)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(planYAML(nil, tc.over)), "plan.yaml")
			wantErrs(t, err, tc.want)
		})
	}
	// Weights up to 999 are fine with alb, and both 0 is a warning there too.
	p, err := Parse([]byte(planYAML(nil, kv{"zone": del, "records": del, "alb": good, "steps": "[{weights: {from: 999, to: 1}}, {weights: {from: 0, to: 0}}]"})), "plan.yaml")
	if err != nil || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Error(), "other target groups only") {
		t.Errorf("ALB weights: %v, warnings %v", err, p.Warnings)
	}
}

// TestALBCloudWatchDelay: spec.alb.cloudWatch.delay is defaulted, bounded and named in
// errors, and checked against the pauses, the step timeout and the retire timeout that
// must leave a CloudWatch reader time to read a whole published period.
func TestALBCloudWatchDelay(t *testing.T) {
	albWith := func(cw string) string {
		return "{listenerRules: [" + testRule + "], from: shop-blue, to: shop-green" + cw + "}"
	}
	traffic := func(period int) string { return "[{albTraffic: {period: " + itoa(period) + "}}]" }
	for _, tc := range []struct {
		name     string
		over     kv
		delay    time.Duration // the plan's, when it parses
		errs     []string      // problems; none: it parses
		warnings []string
	}{
		{"default", kv{"alb": albWith("")}, DefaultCloudWatchDelay, nil, nil},
		{"0s for the sandbox", kv{"alb": albWith(", cloudWatch: {delay: 0s}"), "gates": traffic(1)}, 0, nil, nil},
		{"90s", kv{"alb": albWith(", cloudWatch: {delay: 90s}"), "gates": traffic(60), "pause": "5m"}, 90 * time.Second, nil, nil},
		{"an empty cloudWatch section", kv{"alb": albWith(", cloudWatch: {}")}, DefaultCloudWatchDelay, nil, nil},
		{"above 15m", kv{"alb": albWith(", cloudWatch: {delay: 16m}")}, 0,
			[]string{`spec.alb.cloudWatch.delay "16m": want a duration from 0s to 15m`}, nil},
		{"negative", kv{"alb": albWith(", cloudWatch: {delay: -1s}")}, 0,
			[]string{`spec.alb.cloudWatch.delay "-1s": want a duration ≥ 0`}, nil},
		{"a bare number", kv{"alb": albWith(", cloudWatch: {delay: 120}")}, 0,
			[]string{`spec.alb.cloudWatch.delay "120": want a duration such as`}, nil},
		{"a misspelt key", kv{"alb": albWith(", cloudWatch: {dealy: 1m}")}, 0,
			[]string{`spec.alb.cloudWatch.dealy: unknown field; did you mean "delay"?`}, nil},
		// The default delay against the sandbox's 1 s periods and a 1 m step timeout: a step
		// can never read a published period in time, and would always roll back.
		{"a step that can never be judged", kv{"alb": albWith(""), "gates": traffic(1), "pause": "1s", "timeouts": "{step: 1m}"}, 0,
			[]string{`spec.timeouts.step "1m": with spec.pause 1s, spec.timeouts.step 1m0s and spec.alb.cloudWatch.delay 2m0s, an albTraffic gate of period 1s first judges a step up to 2m2s after its write`}, nil},
		{"a step gate's period counts too", kv{"alb": albWith(", cloudWatch: {delay: 1m}"), "steps": "[{percent: 10, gates: " + traffic(300) + "}, 100]",
			"pause": "1m", "timeouts": "{step: 5m}"}, 0,
			[]string{`an albTraffic gate of period 300s first judges a step up to 11m0s after its write`}, nil},
		{"a pause shorter than the first verdict", kv{"alb": albWith(""), "gates": traffic(60), "pause": "1m"}, DefaultCloudWatchDelay, nil,
			[]string{`spec.steps[0] "10": holds for 1m0s (spec.pause), but its albTraffic gate reads whole published periods only and first judges up to 4m0s after the write (spec.alb.cloudWatch.delay 2m0s)`,
				`spec.steps[1] "100": holds for 1m0s`}},
		{"no warning without a delay", kv{"alb": albWith(", cloudWatch: {delay: 0s}"), "gates": traffic(60), "pause": "1m"}, 0, nil, nil},
		{"a step's own pause", kv{"alb": albWith(""), "gates": traffic(60), "pause": "5m", "steps": "[{percent: 10, pause: 30s}, 100]"}, DefaultCloudWatchDelay, nil,
			[]string{"spec.steps[0]: holds for 30s (spec.steps[0].pause)"}},
		{"a retire timeout that leaves no time to publish", kv{"alb": albWith(""), "retire": "{cloudWatch: {period: 60}, window: 3m, timeout: 5m}"}, DefaultCloudWatchDelay, nil,
			[]string{`spec.retire.timeout "5m": the first reading that can show the drain comes up to 4m0s after the last step's write (spec.alb.cloudWatch.delay 2m0s), and the rate must then stay low for the window 3m0s: allow at least 7m0s`}},
		{"a delay nothing reads", kv{"alb": albWith(", cloudWatch: {delay: 1m}")}, time.Minute, nil,
			[]string{`spec.alb.cloudWatch.delay "1m": no albTraffic gate nor retire.cloudWatch reads CloudWatch`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := kv{"zone": del, "records": del}
			for k, v := range tc.over {
				over[k] = v
			}
			p, err := Parse([]byte(planYAML(nil, over)), "plan.yaml")
			if len(tc.errs) > 0 {
				wantErrs(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.CloudWatchDelay != tc.delay {
				t.Errorf("delay %s, want %s", p.CloudWatchDelay, tc.delay)
			}
			if p.ALB.CloudWatch != nil {
				t.Errorf("the resolved plan's ALB keeps the cloudWatch section %+v: it must stay out of the plan's hash", p.ALB.CloudWatch)
			}
			var got []string
			for _, w := range p.Warnings {
				got = append(got, w.Error())
			}
			if len(got) != len(tc.warnings) {
				t.Errorf("warnings %q, want %d", got, len(tc.warnings))
			}
			for _, w := range tc.warnings {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("warnings lack %q:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
	// A Route 53 plan reads no CloudWatch: no delay, and no cloudWatch section to write.
	p, err := Parse([]byte(planYAML(nil, nil)), "plan.yaml")
	if err != nil || p.CloudWatchDelay != 0 {
		t.Errorf("Route 53 plan: delay %s, %v", p.CloudWatchDelay, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
