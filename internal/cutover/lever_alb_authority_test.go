package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The ALB lever's authority tags against the sandbox's ELBv2 API (the real query
// protocol through aws-sdk-go-v2, ELBv2's tag limits and errors): who may write a
// cutover's listener rules, two runners racing for them, a takeover, and letting go.

// sandboxALB is an ALB on a sandbox started for the test: an HTTP listener whose default
// action forwards blue=100 green=0 and a host-header rule forwarding the same.
type sandboxALB struct {
	api                      *elbv2.Client
	lb, listener, rule, dflt string // dflt: the listener's default rule
	blue, green              string
	ruleName, listenerName   string
}

func newSandboxALB(t *testing.T) *sandboxALB {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	a := &sandboxALB{api: elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})}
	ctx := context.Background()
	lb, err := a.api.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	a.lb = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, g := range []*string{&a.blue, &a.green} {
		name := map[*string]string{&a.blue: "blue", &a.green: "green"}[g]
		out, err := a.api.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp})
		if err != nil {
			t.Fatal(err)
		}
		*g = aws.ToString(out.TargetGroups[0].TargetGroupArn)
	}
	fwd := []types.Action{forward(&types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}, a.blue, 100, a.green, 0)}
	l, err := a.api.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatal(err)
	}
	a.listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := a.api.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"shop.example.com"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.rule = aws.ToString(r.Rules[0].RuleArn)
	rules, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(a.listener)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules.Rules {
		if aws.ToBool(r.IsDefault) {
			a.dflt = aws.ToString(r.RuleArn)
		}
	}
	a.ruleName, a.listenerName = ruleName(a.rule), ruleName(a.listener)
	return a
}

// plan moves the rule and the listener from blue to green in 50 and 100 % steps.
func (a *sandboxALB) plan(name string) *spec.Plan {
	return &spec.Plan{Name: name, ALB: &spec.ALB{ListenerRules: []string{a.rule, a.listener}, From: "blue", To: "green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// tag puts key=value on the tag rule arn.
func (a *sandboxALB) tag(t *testing.T, arn, key, value string) {
	t.Helper()
	if _, err := a.api.AddTags(context.Background(), &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatal(err)
	}
}

// authority lists the authority tags of the rule and the default rule: "rule KEY=VALUE",
// "default KEY=VALUE", sorted.
func (a *sandboxALB) authority(t *testing.T) []string {
	t.Helper()
	out, err := a.api.DescribeTags(context.Background(), &elbv2.DescribeTagsInput{ResourceArns: []string{a.rule, a.dflt}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range out.TagDescriptions {
		which := map[string]string{a.rule: "rule", a.dflt: "default"}[aws.ToString(d.ResourceArn)]
		for _, tg := range d.Tags {
			if strings.HasPrefix(aws.ToString(tg.Key), AuthorityTagPrefix) {
				got = append(got, which+" "+aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
			}
		}
	}
	slices.Sort(got)
	return got
}

// clear removes every tag of the rule and the default rule.
func (a *sandboxALB) clear(t *testing.T) {
	t.Helper()
	out, err := a.api.DescribeTags(context.Background(), &elbv2.DescribeTagsInput{ResourceArns: []string{a.rule, a.dflt}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range out.TagDescriptions {
		var keys []string
		for _, tg := range d.Tags {
			keys = append(keys, aws.ToString(tg.Key))
		}
		if len(keys) > 0 {
			if _, err := a.api.RemoveTags(context.Background(), &elbv2.RemoveTagsInput{ResourceArns: []string{aws.ToString(d.ResourceArn)}, TagKeys: keys}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// weights renders the rule's and the listener's forward weights: "blue=50 green=50".
func (a *sandboxALB) weights(t *testing.T) (rule, listener string) {
	t.Helper()
	ctx := context.Background()
	rs, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.rule}})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := a.api.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.listener}})
	if err != nil {
		t.Fatal(err)
	}
	render := func(acts []types.Action) string {
		var parts []string
		for _, act := range acts {
			if act.ForwardConfig == nil {
				continue
			}
			for _, g := range act.ForwardConfig.TargetGroups {
				parts = append(parts, fmt.Sprintf("%s=%d", spec.TargetGroupName(aws.ToString(g.TargetGroupArn)), aws.ToInt32(g.Weight)))
			}
		}
		return strings.Join(parts, " ")
	}
	return render(rs.Rules[0].Actions), render(ls.Listeners[0].DefaultActions)
}

// countingELB counts the calls a runner makes through the real client, and can hold its
// first read of the tags after it has tagged the rules (to line two runners up).
type countingELB struct {
	*elbv2.Client
	mu    sync.Mutex
	calls map[string]int
	// beforeTag, when set, runs once before the first AddTags; beforeVerify once before
	// the first DescribeTags after an AddTags.
	beforeTag, beforeVerify func()
	tagged                  bool
	// failRemove makes RemoveTags fail.
	failRemove error
}

func newCountingELB(c *elbv2.Client) *countingELB {
	return &countingELB{Client: c, calls: map[string]int{}}
}

func (c *countingELB) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
}

func (c *countingELB) n(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

func (c *countingELB) AddTags(ctx context.Context, in *elbv2.AddTagsInput, o ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	c.count("AddTags")
	c.mu.Lock()
	hook := c.beforeTag
	c.beforeTag, c.tagged = nil, true
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return c.Client.AddTags(ctx, in, o...)
}

func (c *countingELB) RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, o ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	c.count("RemoveTags")
	if c.failRemove != nil {
		return nil, c.failRemove
	}
	return c.Client.RemoveTags(ctx, in, o...)
}

func (c *countingELB) DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, o ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	c.count("DescribeTags")
	c.mu.Lock()
	hook := c.beforeVerify
	if c.tagged && hook != nil {
		c.beforeVerify = nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return c.Client.DescribeTags(ctx, in, o...)
}

func (c *countingELB) ModifyRule(ctx context.Context, in *elbv2.ModifyRuleInput, o ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error) {
	c.count("ModifyRule")
	return c.Client.ModifyRule(ctx, in, o...)
}

func (c *countingELB) ModifyListener(ctx context.Context, in *elbv2.ModifyListenerInput, o ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error) {
	c.count("ModifyListener")
	return c.Client.ModifyListener(ctx, in, o...)
}

// TestALBAuthorityRead: what a read makes of the tags on the rules: this runner's, another
// runner's of the cutover (refused, or with a takeover noted), another cutover's, a key
// that only looks like one, this runner's gone after it held them, and a rule at ELBv2's
// limit of 50 tags.
func TestALBAuthorityRead(t *testing.T) {
	a := newSandboxALB(t)
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
	mine, bobs := authorityKey("shop", me.Token), authorityKey("shop", bob.Token)
	for _, tc := range []struct {
		name      string
		tags      map[string][2]string // rule ARN -> key, value
		many      bool                 // 50 other tags on the rule
		o         ReadOptions
		want      string // "" reads fine
		held      bool   // every rule carries this runner's key
		takenOver []registry.Runner
		start     string // a start problem
	}{
		{"no tags", nil, false, ReadOptions{Runner: me}, "", false, nil, ""},
		{"this runner's", map[string][2]string{a.rule: {mine, authorityValue(me)}, a.dflt: {mine, authorityValue(me)}}, false, ReadOptions{Runner: me}, "", true, nil, ""},
		{"another runner's, on the listener's default rule", map[string][2]string{a.dflt: {bobs, authorityValue(bob)}}, false, ReadOptions{Runner: me},
			"cutover shop: its weights are held by another runner, runner b0b0b0b0b0b0b0b0@bob-desk:22 (tag " + bobs + " on " + a.listenerName + "): a cutover runs from one place at a time", false, nil, ""},
		{"another runner's, taken over", map[string][2]string{a.rule: {bobs, authorityValue(bob)}, a.dflt: {mine, authorityValue(me)}}, false, ReadOptions{Runner: me, Takeover: true},
			"", false, []registry.Runner{bob}, ""},
		{"another runner's value edited by hand: the key's token counts", map[string][2]string{a.rule: {bobs, "someone"}}, false, ReadOptions{Runner: me},
			"runner b0b0b0b0b0b0b0b0@ (tag " + bobs, false, nil, ""},
		{"another cutover's", map[string][2]string{a.rule: {authorityKey("api", "c0c0c0c0c0c0c0c0"), "c0c0c0c0c0c0c0c0@ci:7"}}, false, ReadOptions{Runner: me, Takeover: true},
			"the listener rules are not ready for this cutover:\n  " + a.ruleName + " (" + a.rule + "): its weights are held by cutover api (tag crossfade.io/cutover/api/c0c0c0c0c0c0c0c0 = c0c0c0c0c0c0c0c0@ci:7): finish or release that cutover first", false, nil, ""},
		{"a key that only looks like one", map[string][2]string{a.rule: {"crossfade.io/cutover-shop", "x"}, a.dflt: {"crossfade.io/cutover/shop", "y"}}, false, ReadOptions{Runner: me}, "", false, nil, ""},
		{"this runner's, gone after it held them", map[string][2]string{a.rule: {mine, authorityValue(me)}}, false, ReadOptions{Runner: me, Held: true},
			"cutover shop: its authority tag " + mine + " is gone from " + a.listenerName + " (" + a.dflt + "): while this runner held the rules, another runner took them over", false, nil, ""},
		{"a rule with 50 tags", nil, true, ReadOptions{Runner: me}, "", false, nil,
			a.ruleName + " (" + a.rule + ") has 50 tags, the most ELBv2 allows on a rule: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTags)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.clear(t)
			for arn, kv := range tc.tags {
				a.tag(t, arn, kv[0], kv[1])
			}
			if tc.many {
				for i := range 50 {
					a.tag(t, a.rule, fmt.Sprintf("team-%02d", i), "x")
				}
			}
			lv := newALBLever(a.plan("shop"), a.api)
			s, err := lv.Read(context.Background(), tc.o)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("read: %v, want %q", err, tc.want)
				}
				var held *HeldError
				if strings.Contains(tc.want, "held by another runner") && (!errors.As(err, &held) || held.Holder.Token != bob.Token) {
					t.Errorf("%v is not a *HeldError naming bob", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l := s.(*albLive)
			if got := !slices.ContainsFunc(l.rules, func(r albRule) bool { return !r.held }); got != tc.held {
				t.Errorf("held %v, want %v", got, tc.held)
			}
			if !slices.Equal(s.TakenOver(), tc.takenOver) {
				t.Errorf("taken over %v, want %v", s.TakenOver(), tc.takenOver)
			}
			problems := strings.Join(lv.StartProblems(s), "\n")
			if (tc.start == "") != (problems == "") || !strings.Contains(problems, tc.start) {
				t.Errorf("start problems %q, want %q", problems, tc.start)
			}
		})
	}
}

// TestALBAuthorityWrite: the first write tags each rule (the listener's: its default rule)
// once, with one AddTags per resource, before any ModifyRule; later writes tag nothing; a
// takeover removes the other runner's key, journals it (BeforeSend), and holds alone.
func TestALBAuthorityWrite(t *testing.T) {
	a := newSandboxALB(t)
	ctx := context.Background()
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
	write := func(c *countingELB, o ReadOptions, w map[string]int64) ([]registry.Runner, error) {
		lv := newALBLever(a.plan("shop"), c)
		s, err := lv.Read(ctx, o)
		if err != nil {
			return nil, err
		}
		var noted []registry.Runner
		env := testEnv()
		env.BeforeSend = func(s Snapshot) error { noted = append(noted, s.TakenOver()...); return nil }
		_, err = lv.Write(ctx, s, Change{Weights: w}, env)
		return noted, err
	}
	c := newCountingELB(a.api)
	if _, err := write(c, ReadOptions{Runner: me}, map[string]int64{"blue": 50, "green": 50}); err != nil {
		t.Fatal(err)
	}
	if c.n("AddTags") != 2 || c.n("ModifyRule") != 1 || c.n("ModifyListener") != 1 || c.n("RemoveTags") != 0 {
		t.Errorf("first write: calls %v, want 2 AddTags (the rule, the default rule), 1 ModifyRule, 1 ModifyListener", c.calls)
	}
	value := authorityValue(me)
	if got, want := a.authority(t), []string{"default " + authorityKey("shop", me.Token) + "=" + value, "rule " + authorityKey("shop", me.Token) + "=" + value}; !slices.Equal(got, want) {
		t.Errorf("tags %q, want %q", got, want)
	}
	c = newCountingELB(a.api)
	if _, err := write(c, ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100}); err != nil {
		t.Fatal(err)
	}
	if c.n("AddTags") != 0 || c.n("DescribeTags") != 1 {
		t.Errorf("second write: calls %v, want no AddTags and the read's one DescribeTags", c.calls)
	}
	// Bob aborts from another machine: he takes the rules over, and Alice's next read is
	// refused naming him.
	c = newCountingELB(a.api)
	noted, err := write(c, ReadOptions{Runner: bob, Takeover: true, Partial: true}, map[string]int64{"blue": 100, "green": 0})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(noted, []registry.Runner{me}) || c.n("RemoveTags") != 2 || c.n("AddTags") != 2 {
		t.Errorf("takeover: noted %v, calls %v; want alice noted, 2 AddTags and 2 RemoveTags", noted, c.calls)
	}
	if got := a.authority(t); len(got) != 2 || !strings.Contains(got[0], bob.Token) || !strings.Contains(got[1], bob.Token) {
		t.Errorf("tags after the takeover %q: want bob's alone", got)
	}
	_, err = write(newCountingELB(a.api), ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.Token != bob.Token {
		t.Fatalf("alice after the takeover: %v, want *HeldError naming bob", err)
	}
	if rule, listener := a.weights(t); rule != "blue=100 green=0" || listener != "blue=100 green=0" {
		t.Errorf("weights %s / %s: want bob's rollback kept", rule, listener)
	}
}

// TestALBAuthorityRace: two runners of one cutover write their first step at once, many
// times over: exactly one writes, the other is refused naming it and sends no ModifyRule
// nor ModifyListener, and only the winner's tags are left. "lockstep" lines the two up
// twice: neither tags before both have read the rules free, and neither reads its tags
// back before both have tagged, so that both see each other and both step back: one of
// them must still win.
func TestALBAuthorityRace(t *testing.T) {
	a := newSandboxALB(t)
	ctx := context.Background()
	runners := [2]registry.Runner{{Token: "a11ce0a11ce0a11c", Host: "alice", PID: 1}, {Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}}
	for _, mode := range []string{"free", "lockstep"} {
		t.Run(mode, func(t *testing.T) {
			for round := range 8 {
				a.clear(t)
				var clients [2]*countingELB
				var read, tagged sync.WaitGroup
				read.Add(2)
				tagged.Add(2)
				for i := range clients {
					clients[i] = newCountingELB(a.api)
					if mode == "lockstep" {
						clients[i].beforeTag = func() {
							read.Done()
							waitGroupTimeout(&read, 5*time.Second)
						}
						clients[i].beforeVerify = func() {
							tagged.Done()
							waitGroupTimeout(&tagged, 5*time.Second)
						}
					}
				}
				var errs [2]error
				var wg sync.WaitGroup
				for i := range 2 {
					wg.Go(func() {
						lv := newALBLever(a.plan("shop"), clients[i])
						s, err := lv.Read(ctx, ReadOptions{Runner: runners[i]})
						if err == nil {
							_, err = lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 50, "green": 50}}, testEnv())
						}
						errs[i] = err
					})
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					if err == nil {
						if winner >= 0 {
							t.Fatalf("round %d: both runners wrote", round)
						}
						winner = i
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: neither runner wrote: %v; %v", round, errs[0], errs[1])
				}
				loser := 1 - winner
				var held *HeldError
				if !errors.As(errs[loser], &held) || held.Holder.Token != runners[winner].Token {
					t.Fatalf("round %d: the loser's error %v, want *HeldError naming %s", round, errs[loser], runners[winner])
				}
				if n := clients[loser].n("ModifyRule") + clients[loser].n("ModifyListener"); n > 0 {
					t.Errorf("round %d: the loser sent %d weight writes", round, n)
				}
				for _, tg := range a.authority(t) {
					if !strings.Contains(tg, runners[winner].Token) {
						t.Errorf("round %d: tag %s left beside the winner's", round, tg)
					}
				}
				if mode == "lockstep" && clients[loser].n("RemoveTags") == 0 {
					t.Errorf("round %d: the loser never stepped back (calls %v): the two were not lined up", round, clients[loser].calls)
				}
				t.Logf("round %d: %s won; the loser's calls %v", round, runners[winner].Host, clients[loser].calls)
			}
		})
	}
}

// waitGroupTimeout waits for wg, at most d (a runner that never reaches the barrier must
// not hang the test).
func waitGroupTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// TestALBAuthorityLetGo: what each release removes: a run's end its own key only, leaving
// another runner's; `cutover release` its own and refuses another runner's; `release
// --force` every runner's of the cutover; none of them another cutover's.
func TestALBAuthorityLetGo(t *testing.T) {
	a := newSandboxALB(t)
	me := registry.Runner{Token: "a11ce0a11ce0a11c"}
	bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}
	api := authorityKey("api", "c0c0c0c0c0c0c0c0")
	for _, tc := range []struct {
		name   string
		mode   letGoMode
		n      int
		others []registry.Runner
		err    string
		left   []string
	}{
		{"a run's end", ownKeepOthers, 2, nil, "", []string{"default " + authorityKey("shop", bob.Token) + "=" + authorityValue(bob), "rule " + api + "=x"}},
		{"release", ownRefuseOthers, 0, nil, "held by another runner, runner b0b0b0b0b0b0b0b0@bob:2 (tag " + authorityKey("shop", bob.Token) + " on rule " + a.dflt + ")", nil},
		{"release --force", everyRunner, 2, []registry.Runner{bob}, "", []string{"rule " + api + "=x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.clear(t)
			for _, arn := range []string{a.rule, a.dflt} {
				a.tag(t, arn, authorityKey("shop", me.Token), authorityValue(me))
			}
			a.tag(t, a.dflt, authorityKey("shop", bob.Token), authorityValue(bob))
			a.tag(t, a.rule, api, "x")
			n, others, err := newALBLever(a.plan("shop"), a.api).letGo(context.Background(), me, tc.mode)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("letGo: %v, want %q", err, tc.err)
				}
				if got := a.authority(t); len(got) != 4 {
					t.Errorf("a refused release removed tags: %q left", got)
				}
				return
			}
			if err != nil || n != tc.n || !slices.Equal(others, tc.others) {
				t.Errorf("letGo: %d rules, others %v, %v; want %d, %v", n, others, err, tc.n, tc.others)
			}
			if got := a.authority(t); !slices.Equal(got, tc.left) {
				t.Errorf("left %q, want %q", got, tc.left)
			}
		})
	}
}

// TestALBAuthorityRun runs ALB cutovers through the engine against the sandbox: the run
// tags the rules at its first write and removes its tags when it ends, journaling it; a
// second runner (another state directory) is refused naming the holder, with nothing
// written; abort from a third takes the rules over and rolls back; a run whose tags could
// not be removed at its end leaves them to `run --resume` of the ended cutover; `release`
// then finds nothing left, and refuses another runner's tags unless --force.
func TestALBAuthorityRun(t *testing.T) {
	a := newSandboxALB(t)
	ctx := context.Background()
	cfg := func(p *spec.Plan, api ELBv2, dir string) Config {
		return Config{Plan: p, ELB: api, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)}
	}
	kinds := func(dir, name string) []string {
		entries, err := journal.Read(PathsFor(dir, name).Journal)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Kind)
		}
		return out
	}

	// A whole run: tagged at the first write, untagged at the end.
	dir := t.TempDir()
	c := newCountingELB(a.api)
	if _, err := Run(ctx, cfg(a.plan("whole"), c, dir), false); err != nil {
		t.Fatal(err)
	}
	if got := a.authority(t); len(got) != 0 {
		t.Errorf("tags after the run: %q", got)
	}
	if k := kinds(dir, "whole"); k[len(k)-2] != kindDone || k[len(k)-1] != kindReleased {
		t.Errorf("journal %v: want done, then released", k)
	}
	if c.n("AddTags") != 2 || c.n("RemoveTags") != 2 {
		t.Errorf("calls %v: want 2 AddTags and 2 RemoveTags", c.calls)
	}

	// Another machine holds the rules: the run is refused before it writes.
	holder := registry.Runner{Token: "0d0d0d0d0d0d0d0d", Host: "ci-7", PID: 4242}
	for _, arn := range []string{a.rule, a.dflt} {
		a.tag(t, arn, authorityKey("second", holder.Token), authorityValue(holder))
	}
	dir = t.TempDir()
	_, err := Run(ctx, cfg(a.plan("second"), a.api, dir), false)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != holder || !strings.Contains(err.Error(), "held by another runner, runner 0d0d0d0d0d0d0d0d@ci-7:4242 (tag "+authorityKey("second", holder.Token)+" on ") {
		t.Fatalf("second runner: %v, want *HeldError naming the holder", err)
	}
	if k := kinds(dir, "second"); slices.Contains(k, kindWritten) || slices.Contains(k, kindStart) {
		t.Errorf("the refused runner journaled %v", k)
	}
	// An abort from a machine with a journal of the cutover takes the rules over.
	dir = t.TempDir()
	start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":{"blue":100,"green":0},"token":"b0b0b0b0b0b0b0b0"}`+"\n", time.Now().UTC().Format(time.RFC3339Nano))
	if err := os.WriteFile(filepath.Join(dir, "second.journal"), []byte(start), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Abort(ctx, cfg(a.plan("second"), a.api, dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Controls) == 0 || !slices.ContainsFunc(rep.Controls, func(e journal.Entry) bool {
		return e.Kind == kindTakeover && strings.Contains(e.Detail, "took the weights over from runner 0d0d0d0d0d0d0d0d@ci-7:4242")
	}) {
		t.Errorf("abort's report controls %+v: want the takeover", rep.Controls)
	}
	if got := a.authority(t); len(got) != 0 {
		t.Errorf("tags after the abort ended: %q", got)
	}

	// Tags left by a run that could not remove them: the resume of the ended cutover does.
	dir = t.TempDir()
	c = newCountingELB(a.api)
	c.failRemove = errors.New("AccessDenied: not authorized to perform elasticloadbalancing:RemoveTags")
	if _, err := Run(ctx, cfg(a.plan("left"), c, dir), false); err != nil {
		t.Fatal(err)
	}
	if got := a.authority(t); len(got) != 2 {
		t.Fatalf("tags after a run that could not remove them: %q", got)
	}
	if _, err := Run(ctx, cfg(a.plan("left"), a.api, dir), true); err != nil {
		t.Fatal(err)
	}
	if got := a.authority(t); len(got) != 0 {
		t.Errorf("tags after the resume of the ended cutover: %q", got)
	}
	if k := kinds(dir, "left"); k[len(k)-1] != kindReleased {
		t.Errorf("journal %v: want the resume's released entry last", k)
	}
	if rel, err := Release(ctx, cfg(a.plan("left"), a.api, dir), false); err != nil || rel.Records != 0 {
		t.Errorf("release after all: %+v %v, want nothing to remove", rel, err)
	}
	// Release refuses another runner's tags of the cutover, and removes them with force.
	a.tag(t, a.rule, authorityKey("left", holder.Token), authorityValue(holder))
	if _, err := Release(ctx, cfg(a.plan("left"), a.api, dir), false); !errors.As(err, &held) {
		t.Errorf("release of another runner's tags: %v, want *HeldError", err)
	}
	rel, err := Release(ctx, cfg(a.plan("left"), a.api, dir), true)
	if err != nil || rel.Records != 1 || !slices.Equal(rel.TakenOver, []registry.Runner{holder}) {
		t.Errorf("release --force: %+v %v", rel, err)
	}
	if got := a.authority(t); len(got) != 0 {
		t.Errorf("tags after release --force: %q", got)
	}
}

// TestALBAuthorityResume: a runner stopped after its first write (a kill, as far as the
// rules know) resumes as the same runner, its token from the journal: the tags it left are
// its own, and the resume completes without a takeover.
func TestALBAuthorityResume(t *testing.T) {
	a := newSandboxALB(t)
	dir := t.TempDir()
	p := a.plan("resumed")
	p.Steps[0].Pause = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Plan: p, ELB: a.api, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg, false); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for len(a.authority(t)) < 2 || !strings.HasPrefix(func() string { r, _ := a.weights(t); return r }(), "blue=50") {
		if time.Now().After(deadline) {
			t.Fatal("the run never wrote its first step")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	tags := a.authority(t)
	p.Steps[0].Pause = 0
	if _, err := Run(context.Background(), cfg, true); err != nil {
		t.Fatalf("resume: %v (tags before: %q)", err, tags)
	}
	entries, err := journal.Read(PathsFor(dir, "resumed").Journal)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Kind == kindTakeover {
			t.Errorf("the resume took the rules over from itself: %+v", e)
		}
	}
	if rule, listener := a.weights(t); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("weights %s / %s after the resume", rule, listener)
	}
	if got := a.authority(t); len(got) != 0 {
		t.Errorf("tags after the resumed run ended: %q", got)
	}
}

// TestAuthorityValue: the runner as a tag value keeps its token and pid whole, and makes
// the host name fit ELBv2's tag characters and length.
func TestAuthorityValue(t *testing.T) {
	for _, tc := range []struct {
		r    registry.Runner
		want string
	}{
		{registry.Runner{Token: "0a1b", Host: "laptop.local", PID: 7}, "0a1b@laptop.local:7"},
		{registry.Runner{Token: "0a1b", Host: "my host,x=y", PID: 7}, "0a1b@my-host-x-y:7"},
		{registry.Runner{Token: "0a1b", Host: strings.Repeat("h", 300), PID: 7}, "0a1b@" + strings.Repeat("h", 256-len("0a1b@:7")) + ":7"},
	} {
		got := authorityValue(tc.r)
		if got != tc.want || len(got) > maxTagValue {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
		if r := tagHolder(tc.r.Token, got); r.Token != tc.r.Token || r.PID != tc.r.PID {
			t.Errorf("%q read back as %+v", got, r)
		}
	}
	for _, tc := range []struct {
		key            string
		cutover, token string
		ok             bool
	}{
		{"crossfade.io/cutover/shop/0a1b", "shop", "0a1b", true},
		{"crossfade.io/cutover/shop/", "", "", false},
		{"crossfade.io/cutover/shop", "", "", false},
		{"crossfade.io/cutover/shop/0a/1b", "", "", false},
		{"crossfade.io/cutover-shop", "", "", false},
	} {
		c, tok, ok := parseAuthorityKey(tc.key)
		if ok != tc.ok || (ok && (c != tc.cutover || tok != tc.token)) {
			t.Errorf("%q: %q %q %v", tc.key, c, tok, ok)
		}
	}
}
