package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// elbForward is a forward action over (target group ARN, weight) pairs, as the CLI's
// --actions and --default-actions JSON give it.
func elbForward(stickySeconds int, pairs ...any) string {
	var groups []string
	for i := 0; i < len(pairs); i += 2 {
		groups = append(groups, fmt.Sprintf(`{"TargetGroupArn": %q, "Weight": %d}`, pairs[i], pairs[i+1]))
	}
	sticky := `{"Enabled": false}`
	if stickySeconds > 0 {
		sticky = fmt.Sprintf(`{"Enabled": true, "DurationSeconds": %d}`, stickySeconds)
	}
	return fmt.Sprintf(`[{"Type": "forward", "ForwardConfig": {"TargetGroups": [%s], "TargetGroupStickinessConfig": %s}}]`, strings.Join(groups, ", "), sticky)
}

// elbAction is the part of a described action a test looks at.
type elbAction struct {
	Type           string
	TargetGroupArn string
	ForwardConfig  struct {
		TargetGroups []struct {
			TargetGroupArn string
			Weight         int
		}
		TargetGroupStickinessConfig struct {
			Enabled         bool
			DurationSeconds int
		}
	}
}

func (a elbAction) weights() map[string]int {
	w := map[string]int{}
	for _, g := range a.ForwardConfig.TargetGroups {
		w[g.TargetGroupArn] = g.Weight
	}
	return w
}

type elbRules struct {
	Rules []struct {
		RuleArn    string
		Priority   string
		IsDefault  bool
		Conditions []struct {
			Field            string
			HostHeaderConfig struct{ Values []string }
		}
		Actions []elbAction
	}
}

// TestELBv2CLI drives the sandbox's ELBv2 API with the real AWS CLI: an ALB, two target
// groups, a listener forwarding 99/1 and a host-header rule, weights moved with
// ModifyListener and ModifyRule, targets registered and drained, tags, ELBv2's errors as
// the CLI prints them, and the state kept across a restart.
func TestELBv2CLI(t *testing.T) {
	needTool(t, awsBin, "awscli")
	state := filepath.Join(t.TempDir(), "state.db")
	first, closeFirst := sandboxtest.StartStateful(t, state)
	aws := newCLI(t, first)

	var lb struct {
		LoadBalancers []struct{ LoadBalancerArn, DNSName, CanonicalHostedZoneId, Type string }
	}
	aws.must(&lb, "elbv2", "create-load-balancer", "--name", "shop", "--subnets", "subnet-a", "subnet-b", "--tags", "Key=team,Value=web")
	lbARN := lb.LoadBalancers[0].LoadBalancerArn
	if !strings.HasPrefix(lbARN, "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/shop/") ||
		lb.LoadBalancers[0].CanonicalHostedZoneId != "Z35SXDOTRQ7X7K" || !strings.HasPrefix(lb.LoadBalancers[0].DNSName, "shop-") {
		t.Fatalf("load balancer %+v", lb.LoadBalancers[0])
	}
	tgs := map[string]string{}
	for _, name := range []string{"blue", "green", "t3", "t4", "t5", "t6"} {
		var out struct {
			TargetGroups []struct{ TargetGroupArn string }
		}
		aws.must(&out, "elbv2", "create-target-group", "--name", name, "--protocol", "HTTP", "--port", "8080", "--vpc-id", "vpc-1",
			"--target-type", "ip", "--health-check-path", "/healthz", "--health-check-interval-seconds", "5", "--health-check-timeout-seconds", "2", "--healthy-threshold-count", "2")
		tgs[name] = out.TargetGroups[0].TargetGroupArn
	}
	blue, green := tgs["blue"], tgs["green"]

	var ls struct {
		Listeners []struct{ ListenerArn string }
	}
	aws.must(&ls, "elbv2", "create-listener", "--load-balancer-arn", lbARN, "--protocol", "HTTP", "--port", "80",
		"--default-actions", aws.batchFile(elbForward(600, blue, 99, green, 1)))
	listener := ls.Listeners[0].ListenerArn
	var created elbRules
	aws.must(&created, "elbv2", "create-rule", "--listener-arn", listener, "--priority", "10",
		"--conditions", `[{"Field": "host-header", "HostHeaderConfig": {"Values": ["shop.example.com"]}}]`,
		"--actions", aws.batchFile(elbForward(0, blue, 99, green, 1)))
	rule := created.Rules[0].RuleArn

	// Move the weights, as a cutover step does: the listener's default action and the rule.
	aws.must(nil, "elbv2", "modify-listener", "--listener-arn", listener, "--default-actions", aws.batchFile(elbForward(600, blue, 50, green, 50)))
	aws.must(nil, "elbv2", "modify-rule", "--rule-arn", rule, "--actions", aws.batchFile(elbForward(0, blue, 0, green, 100)))
	checkWeights := func(aws *cli) {
		t.Helper()
		var got struct {
			Listeners []struct{ DefaultActions []elbAction }
		}
		aws.must(&got, "elbv2", "describe-listeners", "--load-balancer-arn", lbARN)
		def := got.Listeners[0].DefaultActions[0]
		if w := def.weights(); w[blue] != 50 || w[green] != 50 || !def.ForwardConfig.TargetGroupStickinessConfig.Enabled || def.ForwardConfig.TargetGroupStickinessConfig.DurationSeconds != 600 {
			t.Errorf("listener default action %+v", def)
		}
		var rules elbRules
		aws.must(&rules, "elbv2", "describe-rules", "--listener-arn", listener)
		if len(rules.Rules) != 2 || rules.Rules[0].Priority != "10" || rules.Rules[1].Priority != "default" || !rules.Rules[1].IsDefault {
			t.Fatalf("rules %+v", rules.Rules)
		}
		if w := rules.Rules[0].Actions[0].weights(); w[blue] != 0 || w[green] != 100 || rules.Rules[0].Conditions[0].HostHeaderConfig.Values[0] != "shop.example.com" {
			t.Errorf("rule %+v", rules.Rules[0])
		}
		if w := rules.Rules[1].Actions[0].weights(); w[green] != 50 {
			t.Errorf("default rule does not follow the listener: %+v", rules.Rules[1].Actions)
		}
	}
	checkWeights(aws)

	// Targets: registered ones wait for their first health checks; a deregistered one
	// drains for the group's delay, unless the delay is 0.
	aws.must(nil, "elbv2", "register-targets", "--target-group-arn", green, "--targets", "Id=127.0.0.1,Port=9001", "Id=127.0.0.2", "Id=127.0.0.3")
	aws.must(nil, "elbv2", "deregister-targets", "--target-group-arn", green, "--targets", "Id=127.0.0.3")
	health := func(aws *cli) map[string]string {
		t.Helper()
		var out struct {
			TargetHealthDescriptions []struct {
				Target struct {
					Id   string
					Port int
				}
				TargetHealth struct{ State, Reason string }
			}
		}
		aws.must(&out, "elbv2", "describe-target-health", "--target-group-arn", green)
		got := map[string]string{}
		for _, d := range out.TargetHealthDescriptions {
			got[fmt.Sprintf("%s:%d", d.Target.Id, d.Target.Port)] = d.TargetHealth.State + " " + d.TargetHealth.Reason
		}
		return got
	}
	// The sandbox's ALB proxy health checks the targets of a group in use. Nothing listens
	// on 127.0.0.1:9001 or 127.0.0.2:8080: the first check (run on registration) fails,
	// which leaves them initial, and the second, an interval (5 s) later, makes them
	// unhealthy. The draining target is the store's own state, whatever the checks say.
	checkHealth := func(what string, got map[string]string) {
		t.Helper()
		failing := []string{"initial Elb.RegistrationInProgress", "initial Elb.InitialHealthChecking", "unhealthy Target.FailedHealthChecks"}
		if len(got) != 3 || !slices.Contains(failing, got["127.0.0.1:9001"]) || !slices.Contains(failing, got["127.0.0.2:8080"]) ||
			got["127.0.0.3:8080"] != "draining Target.DeregistrationInProgress" {
			t.Errorf("%s: %v", what, got)
		}
	}
	checkHealth("target health", health(aws))
	aws.must(nil, "elbv2", "modify-target-group-attributes", "--target-group-arn", blue, "--attributes", "Key=deregistration_delay.timeout_seconds,Value=0")
	aws.must(nil, "elbv2", "register-targets", "--target-group-arn", blue, "--targets", "Id=127.0.0.4")
	aws.must(nil, "elbv2", "deregister-targets", "--target-group-arn", blue, "--targets", "Id=127.0.0.4")
	var blueHealth struct{ TargetHealthDescriptions []json.RawMessage }
	aws.must(&blueHealth, "elbv2", "describe-target-health", "--target-group-arn", blue)
	if len(blueHealth.TargetHealthDescriptions) != 0 {
		t.Errorf("with a 0 s delay the target should be gone: %s", blueHealth.TargetHealthDescriptions)
	}

	// Tags on every kind of resource, one resource per add-tags and remove-tags (ELBv2
	// takes one, though the CLI takes a list), the listener's default rule included: it is
	// a rule of its own, where the ALB lever keeps a listener's authority tag.
	defaultRuleARN := func() string {
		var rules elbRules
		aws.must(&rules, "elbv2", "describe-rules", "--listener-arn", listener)
		return rules.Rules[len(rules.Rules)-1].RuleArn
	}()
	for _, arn := range []string{lbARN, blue, listener, rule} {
		aws.must(nil, "elbv2", "add-tags", "--resource-arns", arn, "--tags", "Key=env,Value=test", "Key=owner,Value=sre")
	}
	aws.must(nil, "elbv2", "remove-tags", "--resource-arns", rule, "--tag-keys", "owner", "absent")
	authority := `[{"Key": "crossfade.io/cutover/shop/0a1b2c3d4e5f6a7b", "Value": "0a1b2c3d4e5f6a7b@laptop.local:4242"}]`
	aws.must(nil, "elbv2", "add-tags", "--resource-arns", defaultRuleARN, "--tags", authority)
	var tags struct {
		TagDescriptions []struct {
			ResourceArn string
			Tags        []struct{ Key, Value string }
		}
	}
	aws.must(&tags, "elbv2", "describe-tags", "--resource-arns", lbARN, rule, defaultRuleARN)
	if len(tags.TagDescriptions) != 3 || len(tags.TagDescriptions[0].Tags) != 3 || len(tags.TagDescriptions[1].Tags) != 1 || tags.TagDescriptions[1].Tags[0].Key != "env" ||
		len(tags.TagDescriptions[2].Tags) != 1 || tags.TagDescriptions[2].Tags[0].Value != "0a1b2c3d4e5f6a7b@laptop.local:4242" {
		t.Errorf("tags %+v", tags.TagDescriptions)
	}
	// A rule at 50 tags takes new values for its keys, and no 51st key.
	var fifty []string
	for i := range 48 {
		fifty = append(fifty, fmt.Sprintf("Key=k%02d,Value=v", i))
	}
	aws.must(nil, append([]string{"elbv2", "add-tags", "--resource-arns", rule, "--tags"}, fifty...)...)
	aws.must(nil, "elbv2", "add-tags", "--resource-arns", rule, "--tags", "Key=env,Value=prod", "Key=owner,Value=sre")
	aws.must(nil, "elbv2", "add-tags", "--resource-arns", rule, "--tags", "Key=k00,Value=again")
	tagErrors := []struct {
		name string
		args []string
		want string
	}{
		{"tags on two resources", []string{"add-tags", "--resource-arns", rule, blue, "--tags", "Key=a,Value=b"},
			"(ValidationError) when calling the AddTags operation: Only one resource can be tagged at a time"},
		{"untag two resources", []string{"remove-tags", "--resource-arns", rule, blue, "--tag-keys", "env"},
			"(ValidationError) when calling the RemoveTags operation: Only one resource can be untagged at a time"},
		{"a 51st tag", []string{"add-tags", "--resource-arns", rule, "--tags", "Key=one-more,Value=x"},
			"(TooManyTags) when calling the AddTags operation: You've reached the limit on the number of tags for this resource"},
		{"a key twice", []string{"add-tags", "--resource-arns", blue, "--tags", "Key=a,Value=1", "Key=a,Value=2"},
			"(DuplicateTagKeys) when calling the AddTags operation: Tag key 'a' was specified more than once"},
		{"the aws: prefix", []string{"add-tags", "--resource-arns", blue, "--tags", "Key=aws:cloudformation:stack-name,Value=x"},
			"(ValidationError) when calling the AddTags operation: Tag key 'aws:cloudformation:stack-name' cannot start with 'aws:'"},
		{"a key of 129 characters", []string{"add-tags", "--resource-arns", blue, "--tags", "Key=" + strings.Repeat("k", 129) + ",Value=x"},
			"(ValidationError) when calling the AddTags operation: 1 validation error detected: Value '" + strings.Repeat("k", 129) + "' at 'tags.1.member.key' failed to satisfy constraint: Member must have length less than or equal to 128"},
		{"a value of 257 characters", []string{"add-tags", "--resource-arns", blue, "--tags", "Key=k,Value=" + strings.Repeat("v", 257)},
			"at 'tags.1.member.value' failed to satisfy constraint: Member must have length less than or equal to 256"},
		{"tags of a rule that is gone", []string{"describe-tags", "--resource-arns", rule + "0"},
			"(RuleNotFound) when calling the DescribeTags operation: One or more rules not found"},
		{"tag a listener that is gone", []string{"add-tags", "--resource-arns", listener + "0", "--tags", "Key=a,Value=b"},
			"(ListenerNotFound) when calling the AddTags operation: One or more listeners not found"},
	}
	for _, tc := range tagErrors {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aws.run(append([]string{"elbv2"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aws error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	aws.must(&tags, "elbv2", "describe-tags", "--resource-arns", rule, blue)
	if n := len(tags.TagDescriptions[0].Tags); n != 50 || len(tags.TagDescriptions[1].Tags) != 2 {
		t.Errorf("after the refused requests: %d tags on the rule (want 50), %d on the group (want 2)", n, len(tags.TagDescriptions[1].Tags))
	}
	var keys []string
	for i := range 48 {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	aws.must(nil, append([]string{"elbv2", "remove-tags", "--resource-arns", rule, "--tag-keys"}, keys...)...)

	// Paging by hand: for elbv2 the CLI treats --page-size as a manual paging argument
	// and turns its own pagination off, so it prints NextMarker for the next call.
	var page struct {
		TargetGroups []struct{ TargetGroupName string }
		NextMarker   string
	}
	aws.must(&page, "elbv2", "describe-target-groups", "--page-size", "4")
	if len(page.TargetGroups) != 4 || page.NextMarker == "" {
		t.Fatalf("first page: %d groups, next marker %q", len(page.TargetGroups), page.NextMarker)
	}
	marker := page.NextMarker
	page.NextMarker = ""
	aws.must(&page, "elbv2", "describe-target-groups", "--page-size", "4", "--marker", marker)
	if len(page.TargetGroups) != 2 || page.NextMarker != "" || page.TargetGroups[1].TargetGroupName != "t6" {
		t.Errorf("second page: %+v", page)
	}

	// ELBv2's errors as the CLI prints them; none changes anything.
	var six []any
	for _, n := range []string{"blue", "green", "t3", "t4", "t5", "t6"} {
		six = append(six, tgs[n], 1)
	}
	defaultRule := func() string {
		var rules elbRules
		aws.must(&rules, "elbv2", "describe-rules", "--listener-arn", listener)
		return rules.Rules[len(rules.Rules)-1].RuleArn
	}()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"six target groups", []string{"modify-rule", "--rule-arn", rule, "--actions", aws.batchFile(elbForward(0, six...))},
			"(TooManyTargetGroups) when calling the ModifyRule operation: You've reached the limit on the number of target groups per forward action"},
		{"six target groups on the listener", []string{"modify-listener", "--listener-arn", listener, "--default-actions", aws.batchFile(elbForward(0, six...))},
			"(TooManyTargetGroups) when calling the ModifyListener operation"},
		{"priority in use", []string{"create-rule", "--listener-arn", listener, "--priority", "10",
			"--conditions", "Field=path-pattern,Values=/api/*", "--actions", "Type=forward,TargetGroupArn=" + blue},
			"(PriorityInUse) when calling the CreateRule operation: Priority '10' is currently in use"},
		{"weight 1000", []string{"modify-rule", "--rule-arn", rule, "--actions", aws.batchFile(elbForward(0, blue, 1000, green, 0))},
			"(ValidationError) when calling the ModifyRule operation: The weight for each target group must be between 0 and 999, inclusive"},
		{"stickiness of a week and a second", []string{"modify-listener", "--listener-arn", listener, "--default-actions", aws.batchFile(elbForward(604801, blue, 1))},
			"(ValidationError) when calling the ModifyListener operation: Target group stickiness duration must be between 1 and 604800 seconds"},
		{"modify the default rule", []string{"modify-rule", "--rule-arn", defaultRule, "--actions", aws.batchFile(elbForward(0, blue, 1))},
			"(OperationNotPermitted) when calling the ModifyRule operation: Default rule '" + defaultRule + "' cannot be modified"},
		{"delete a group in use", []string{"delete-target-group", "--target-group-arn", green},
			"(ResourceInUse) when calling the DeleteTargetGroup operation: Target group '" + green + "' is currently in use by a listener or a rule"},
		{"second listener on port 80", []string{"create-listener", "--load-balancer-arn", lbARN, "--protocol", "HTTP", "--port", "80", "--default-actions", "Type=forward,TargetGroupArn=" + blue},
			"(DuplicateListener) when calling the CreateListener operation: A listener already exists on this port for this load balancer"},
		{"unknown target group", []string{"describe-target-health", "--target-group-arn", strings.Replace(blue, "/blue/", "/gone/", 1)},
			"(TargetGroupNotFound) when calling the DescribeTargetHealth operation: One or more target groups not found"},
		{"unknown load balancer", []string{"describe-load-balancers", "--names", "nope"},
			"(LoadBalancerNotFound) when calling the DescribeLoadBalancers operation: Load balancers '[nope]' not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aws.run(append([]string{"elbv2"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aws error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	checkWeights(aws)

	// Everything survives a restart on the same state file.
	if err := closeFirst(); err != nil {
		t.Fatal(err)
	}
	second := startSandbox(t, sandbox.Config{StatePath: state})
	aws = newCLI(t, second)
	checkWeights(aws)
	checkHealth("target health after restart", health(aws))
	aws.must(&tags, "elbv2", "describe-tags", "--resource-arns", lbARN, rule)
	if len(tags.TagDescriptions[0].Tags) != 3 {
		t.Errorf("tags after restart %+v", tags.TagDescriptions)
	}
	// And the ALB can be torn down in the order Terraform destroys it.
	aws.must(nil, "elbv2", "delete-rule", "--rule-arn", rule)
	aws.must(nil, "elbv2", "delete-listener", "--listener-arn", listener)
	for _, arn := range tgs {
		aws.must(nil, "elbv2", "delete-target-group", "--target-group-arn", arn)
	}
	aws.must(nil, "elbv2", "delete-load-balancer", "--load-balancer-arn", lbARN)
	var left struct{ LoadBalancers []json.RawMessage }
	aws.must(&left, "elbv2", "describe-load-balancers")
	if len(left.LoadBalancers) != 0 {
		t.Errorf("load balancers left: %s", left.LoadBalancers)
	}
}
