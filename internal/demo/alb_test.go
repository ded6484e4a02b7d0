package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestALBDemo runs `crossfade demo --lever alb` in process, with short steps and --keep:
// the cutover completes with every step passed, the rule and the listener end at
// blue=0 green=100, not one client request fails, and the request share moves with the
// weights step by step, as the clients saw it and as the traffic gate read it from
// CloudWatch. The dashboard's state shows the ALB view (weights, both shares, both
// groups' health), and the --keep hint's commands work as printed: curl through the
// listener reaches green, and Debian's AWS CLI reads the rule's final weights.
func TestALBDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the ALB demo end to end")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &lines{ch: make(chan string, 1000)}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, Config{Lever: LeverALB, Keep: true, Pause: time.Second, Clients: 8, Interval: 50 * time.Millisecond, Out: out})
		done <- outcome{res, err}
	}()
	var printed []string
	hint := map[string]string{}
	for hint["plan file"] == "" {
		select {
		case l := <-out.ch:
			printed = append(printed, l)
			if after, ok := strings.CutPrefix(l, "  "); ok && len(after) > 12 {
				hint[strings.TrimSpace(after[:12])] = after[12:]
			}
		case o := <-done:
			t.Fatalf("the demo ended before its --keep hint: %v\n%s", o.err, strings.Join(printed, "\n"))
		case <-ctx.Done():
			t.Fatalf("no --keep hint:\n%s", strings.Join(printed, "\n"))
		}
	}
	ranFor := time.Since(began)
	go func() {
		for range out.ch {
		}
	}()
	text := strings.Join(printed, "\n")
	t.Logf("the demo, up to its --keep hint (%s):\n%s", ranFor.Round(time.Millisecond), text)
	for _, want := range []string{"no DNS zone", "registered by the cluster itself into target group app-blue",
		"target group app-green (cluster green): 2 healthy of 2 targets", "cutover demo-alb: completed",
		"GREEN BY CLOUDWATCH", "demo: OK — every step passed, the final split is blue=0 green=100 on the rule and the listener"} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}

	t.Run("curl", func(t *testing.T) {
		testenv.LookPath(t, "curl", "curl")
		if body := string(runPrinted(t, ctx, hint["ALB"])); body != "app v2 from cluster green\n" {
			t.Errorf("curl through the listener: %q, want green's app", body)
		}
	})
	t.Run("status", func(t *testing.T) {
		checkStatusAsPrinted(t, hint["status"], "demo-alb", hint["plan file"], hint["state dir"])
	})
	t.Run("aws", func(t *testing.T) {
		testenv.File(t, debianAWS, "the AWS CLI is not installed: install the Debian package awscli (scripts/deps.sh test does)")
		var rules struct {
			Rules []struct {
				Actions []struct {
					ForwardConfig struct {
						TargetGroups []struct {
							TargetGroupArn string
							Weight         int
						}
					}
				}
			}
		}
		if err := json.Unmarshal(runPrinted(t, ctx, hint["weights"]), &rules); err != nil || len(rules.Rules) != 1 || len(rules.Rules[0].Actions) != 1 {
			t.Fatalf("describe-rules as printed: %v %+v", err, rules)
		}
		got := map[string]int{}
		for _, g := range rules.Rules[0].Actions[0].ForwardConfig.TargetGroups {
			got[g.TargetGroupArn[strings.Index(g.TargetGroupArn, "/")+1:strings.LastIndex(g.TargetGroupArn, "/")]] = g.Weight
		}
		if len(got) != 2 || got["app-blue"] != 0 || got["app-green"] != 100 {
			t.Errorf("the rule's weights as the AWS CLI reads them: %v, want app-blue 0 and app-green 100", got)
		}
	})

	cancel()
	o := <-done
	if o.err != nil {
		t.Fatalf("the demo: %v", o.err)
	}
	res := o.res
	if res.Failures != 0 || res.Report == nil || res.Report.Outcome != "completed" || res.Report.Lever != cutover.LeverALB {
		t.Fatalf("failures %d, report %+v", res.Failures, res.Report)
	}
	if res.FinalWeights["blue"] != 0 || res.FinalWeights["green"] != 100 {
		t.Errorf("final weights %v, want blue=0 green=100", res.FinalWeights)
	}

	// The share moved with the weights, as the clients saw it and as CloudWatch counted it.
	var clients, cloudWatch []float64
	for _, s := range res.PerStep {
		want := float64(s.Weights["green"]) / float64(s.Weights["blue"]+s.Weights["green"])
		n := total(s.Requests)
		got := float64(s.Requests["green"]) / float64(max(n, 1))
		tol := math.Max(0.05, 5*math.Sqrt(want*(1-want)/float64(max(n, 1))))
		cw, ok := s.CloudWatch["green"]
		t.Logf("%s %s: clients saw green %.1f%% of %d requests, CloudWatch %.1f%% (want %.0f%%)", s.Step,
			cutover.FormatWeights(s.Weights), 100*got, n, 100*cw, 100*want)
		if n < 50 || math.Abs(got-want) > tol {
			t.Errorf("%s: the clients saw green answer %.3f of %d requests, want %.2f ± %.3f", s.Step, got, n, want, tol)
		}
		// The gate judged CloudWatch's share within its tolerance (0.1) to pass the step.
		if !ok || math.Abs(cw-want) > 0.1+1e-9 {
			t.Errorf("%s: CloudWatch share of green %v (read %v), want %.2f ± 0.1", s.Step, cw, ok, want)
		}
		clients, cloudWatch = append(clients, got), append(cloudWatch, cw)
	}
	if len(res.PerStep) != 4 || !slices.IsSorted(clients) || !slices.IsSorted(cloudWatch) || clients[0] != 0 || clients[3] < 0.99 {
		t.Errorf("%d steps; green's share per step: clients %v, CloudWatch %v; want 4 steps moving from 0 to 1", len(res.PerStep), clients, cloudWatch)
	}

	d := res.Dashboard
	if d.Lever != cutover.LeverALB || len(d.Series.DNSShares) != 0 || len(d.Series.ALBShares) < 4 || len(d.Series.ClientShares) == 0 {
		t.Errorf("dashboard: lever %q, %d DNS, %d CloudWatch and %d client share points; want alb, 0, ≥ 4, > 0",
			d.Lever, len(d.Series.DNSShares), len(d.Series.ALBShares), len(d.Series.ClientShares))
	}
	if n := len(d.Series.Weights); n == 0 || d.Series.Weights[n-1].Values["green"] != 100 {
		t.Errorf("dashboard: weights series %+v, want it to end at green 100 %%", d.Series.Weights)
	}
	health := map[string]dashboard.GroupHealth{}
	for _, h := range d.TargetHealth {
		health[h.Group] = h
	}
	for _, id := range []string{"blue", "green"} {
		if h := health[id]; h.Healthy != albPods || h.Targets != albPods || h.Gate != "healthy" {
			t.Errorf("dashboard: %s's target health %+v, want %d of %d healthy from gate healthy", id, h, albPods, albPods)
		}
	}
	t.Logf("%d requests, %d failed; the demo took %s to its --keep hint", total(res.Requests), res.Failures, ranFor.Round(time.Millisecond))
}

// TestRunRefuses: a lever the demo does not know, and --kube with the DNS lever without a
// crossfade binary for its controllers, are refused before anything starts.
func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown lever", Config{Lever: "cloudmap"}, `demo: lever "cloudmap": want dns or alb`},
		{"kube dns without crossfade", Config{Lever: LeverDNS, Kube: &KubeConfig{}}, "demo --kube: no crossfade binary to run the controllers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := Run(ctx, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestALBKeepHint: the ALB demo's --keep hint names the listener's address with the
// rule's Host, and aws commands that carry everything they need on their line.
func TestALBKeepHint(t *testing.T) {
	a := &albSetup{addr: "127.0.0.1:41234", rule: "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/demo/1/2/3",
		groups: map[string]string{"green": "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/app-green/9"}}
	got := albKeepHint("http://127.0.0.1:8080/", "http://127.0.0.1:10080", a, "/tmp/plan.yaml", "/tmp/crossfade-demo-1/state")
	for _, want := range []string{
		"  dashboard   http://127.0.0.1:8080/\n",
		"  ALB         curl -s -H 'Host: app.demo.crossfade.test' http://127.0.0.1:41234/\n",
		"  weights     AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_DEFAULT_REGION=us-east-1 " + awsCLI() +
			" --endpoint-url http://127.0.0.1:10080 elbv2 describe-rules --rule-arns " + a.rule + "\n",
		" elbv2 describe-target-health --target-group-arn " + a.groups["green"] + "\n",
		"  status      crossfade cutover status /tmp/plan.yaml --state-dir /tmp/crossfade-demo-1/state\n",
		"  plan file   /tmp/plan.yaml\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hint lacks %q:\n%s", want, got)
		}
	}
}

// TestWriteTraffic: the traffic table has a CloudWatch column in the ALB demo only; the
// DNS demo's table is as it always was.
func TestWriteTraffic(t *testing.T) {
	step := func(green int64, cw map[string]float64) StepTraffic {
		return StepTraffic{Step: "step 2/4", Weights: map[string]int64{"blue": 100 - green, "green": green},
			Requests: map[string]int64{"blue": 90, "green": 10}, CloudWatch: cw}
	}
	for _, tc := range []struct {
		name      string
		steps     []StepTraffic
		want, not []string
	}{
		{"dns", []StepTraffic{step(10, nil)},
			[]string{"  STEP      WEIGHTS           BLUE (v1)    GREEN (v2)\n", "  step 2/4  blue=90 green=10   90.0% (90)   10.0% (10)\n"},
			[]string{"CLOUDWATCH"}},
		{"alb", []StepTraffic{step(10, map[string]float64{"blue": 0.885, "green": 0.115}), step(0, nil)},
			[]string{"GREEN BY CLOUDWATCH\n", "10.0% (10)   11.5%\n", "10.0% (10)       -\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeTraffic(&b, &Result{PerStep: tc.steps, Requests: map[string]int64{"blue": 90, "green": 10}})
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
