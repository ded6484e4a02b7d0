package elb

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestRulesAndPriorities(t *testing.T) {
	f := newFixture(t)
	r1 := must(f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(10), Conditions: hostIs("a.example.com"), Actions: weighted(f.blue, 1)}))(t)
	r2 := must(f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(20),
		Conditions: []ConditionInput{{Field: FieldPathPattern, Values: []string{"/api/*"}}},
		Actions:    []ActionInput{{Type: ActionForward, TargetGroupARN: f.green}}}))(t)
	if !strings.HasPrefix(r1.ARN, strings.Replace(f.listener, ":listener/", ":listener-rule/", 1)+"/") {
		t.Errorf("rule ARN %s is not under listener %s", r1.ARN, f.listener)
	}
	_, err := f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(10), Conditions: hostIs("b.example.com"), Actions: weighted(f.blue, 1)})
	wantErr(t, err, CodePriorityInUse, "Priority '10' is currently in use")
	_, err = f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(50001), Conditions: hostIs("b.example.com"), Actions: weighted(f.blue, 1)})
	wantErr(t, err, CodeValidation, "Value '50001' at 'priority' failed to satisfy constraint: Member must have value less than or equal to 50000")

	// The legacy single-group form is described with its ForwardConfig, weight 1.
	if a := r2.Actions[0]; a.TargetGroupARN != f.green || a.Forward == nil || len(a.Forward.TargetGroups) != 1 || a.Forward.TargetGroups[0].Weight != 1 {
		t.Errorf("legacy forward stored as %+v", a)
	}

	// Evaluation order: priority, the default rule last.
	rules, _, err := f.s.DescribeRules(DescribeRulesInput{ListenerARN: f.listener})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{rules[0].PriorityString(), rules[1].PriorityString(), rules[2].PriorityString()}; !reflect.DeepEqual(got, []string{"10", "20", "default"}) {
		t.Fatalf("rule order %v", got)
	}

	// A swap is one write: in either order alone it would collide.
	swapped := must(f.s.SetRulePriorities("", []RulePriority{{r1.ARN, ptr(20)}, {r2.ARN, ptr(10)}}))(t)
	if swapped[0].Priority != 20 || swapped[1].Priority != 10 {
		t.Errorf("swap returned %d, %d", swapped[0].Priority, swapped[1].Priority)
	}
	_, err = f.s.SetRulePriorities("", []RulePriority{{r1.ARN, ptr(10)}})
	wantErr(t, err, CodePriorityInUse, "Priority '10' is currently in use")
	_, err = f.s.SetRulePriorities("", []RulePriority{{f.defaultARN, ptr(5)}})
	wantErr(t, err, CodeOperationNotPermitted, "Default rule '"+f.defaultARN+"' cannot be modified")

	// The default rule is the listener's: ModifyRule and DeleteRule refuse it; ModifyListener
	// changes its actions.
	_, err = f.s.ModifyRule(ModifyRuleInput{ARN: f.defaultARN, Actions: weighted(f.blue, 1, f.green, 1)})
	wantErr(t, err, CodeOperationNotPermitted, "Default rule '"+f.defaultARN+"' cannot be modified")
	wantErr(t, f.s.DeleteRule("", f.defaultARN), CodeOperationNotPermitted, "cannot be deleted")
	must(f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, 0, f.green, 100)}))(t)
	def, _, _ := f.s.DescribeRules(DescribeRulesInput{ARNs: []string{f.defaultARN}})
	if w := def[0].Actions[0].Forward.TargetGroups; w[0].Weight != 0 || w[1].Weight != 100 {
		t.Errorf("default rule after ModifyListener: %+v", w)
	}

	// ModifyRule with actions only keeps the conditions.
	mod := must(f.s.ModifyRule(ModifyRuleInput{ARN: r1.ARN, Actions: weighted(f.blue, 1, f.green, 3)}))(t)
	if len(mod.Conditions) != 1 || mod.Conditions[0].Patterns[0] != "a.example.com" || len(mod.Actions[0].Forward.TargetGroups) != 2 || mod.Actions[0].TargetGroupARN != "" {
		t.Errorf("after ModifyRule: %+v", mod)
	}
	_, err = f.s.ModifyRule(ModifyRuleInput{ARN: r1.ARN})
	wantErr(t, err, CodeValidation, "conditions or actions")

	if err := f.s.DeleteRule("", r2.ARN); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.s.DeleteRule("", r2.ARN), CodeRuleNotFound, "One or more rules not found")
	_, _, err = f.s.DescribeRules(DescribeRulesInput{})
	wantErr(t, err, CodeValidation, "You must specify either listener rule ARNs or a listener ARN")
}

func TestDeleteInUseAndCascade(t *testing.T) {
	f := newFixture(t)
	wantErr(t, f.s.DeleteTargetGroup("", f.green), CodeResourceInUse, "Target group '"+f.green+"' is currently in use by a listener or a rule")
	if err := f.s.DeleteTargetGroup("", f.spare); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteTargetGroup("", f.spare); err != nil {
		t.Fatalf("deleting a deleted target group: %v, want success as on ELBv2", err)
	}
	must(f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(1), Conditions: hostIs("a"), Actions: weighted(f.blue, 1)}))(t)
	if err := f.s.DeleteLoadBalancer("", f.lb.ARN); err != nil {
		t.Fatal(err)
	}
	snap := f.s.Snapshot()
	if len(snap.LoadBalancers)+len(snap.Listeners)+len(snap.Rules) != 0 || len(snap.TargetGroups) != 2 {
		t.Fatalf("after DeleteLoadBalancer: %d lbs %d listeners %d rules %d target groups", len(snap.LoadBalancers), len(snap.Listeners), len(snap.Rules), len(snap.TargetGroups))
	}
	if err := f.s.DeleteTargetGroup("", f.green); err != nil {
		t.Fatalf("target group no longer in use: %v", err)
	}
	if err := f.s.DeleteLoadBalancer("", f.lb.ARN); err != nil {
		t.Fatalf("deleting a deleted load balancer: %v, want success as on ELBv2", err)
	}
}

// staticHealth is a HealthSource with fixed answers.
type staticHealth map[string]map[string]TargetHealth

func (h staticHealth) TargetHealth(arn string) map[string]TargetHealth { return h[arn] }

func healthOf(t *testing.T, s *Store, tg string, targets []TargetInput) map[string]TargetHealth {
	t.Helper()
	ds := must(s.DescribeTargetHealth("", tg, targets))(t)
	out := map[string]TargetHealth{}
	for _, d := range ds {
		out[d.Target.Address()] = d.Health
	}
	return out
}

func TestTargetHealthStates(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixture(t)
	f.s.now = clock
	targets := []TargetInput{{ID: "127.0.0.1", Port: ptr(9001)}, {ID: "127.0.0.2"}}
	for _, tg := range []string{f.blue, f.spare} {
		if err := f.s.RegisterTargets("", tg, targets); err != nil {
			t.Fatal(err)
		}
	}
	// Registering again changes nothing.
	if err := f.s.RegisterTargets("", f.blue, targets[:1]); err != nil {
		t.Fatal(err)
	}
	blue, _ := f.s.Snapshot().TargetGroup(f.blue)
	if len(blue.Targets) != 2 || blue.Targets[1].Port != 8080 {
		t.Fatalf("targets %+v, want two, the second on the group's port", blue.Targets)
	}

	// No source: nothing has checked them.
	want := TargetHealth{StateInitial, ReasonRegistrationInProgress, "Target registration is in progress"}
	if got := healthOf(t, f.s, f.blue, nil)["127.0.0.1:9001"]; got != want {
		t.Errorf("without a source: %+v", got)
	}
	// A group nothing forwards to is unused whatever the source says.
	unused := TargetHealth{StateUnused, ReasonNotInUse, "Target group is not configured to receive traffic from the load balancer"}
	if got := healthOf(t, f.s, f.spare, nil)["127.0.0.2:8080"]; got != unused {
		t.Errorf("unused group: %+v", got)
	}

	f.s.SetHealthSource(staticHealth{f.blue: {"127.0.0.1:9001": {State: StateHealthy}}})
	got := healthOf(t, f.s, f.blue, nil)
	if got["127.0.0.1:9001"].State != StateHealthy || got["127.0.0.2:8080"] != (TargetHealth{StateInitial, ReasonInitialHealthChecking, "Initial health checks in progress"}) {
		t.Errorf("with a source: %+v", got)
	}
	// A target asked for that is not registered.
	got = healthOf(t, f.s, f.blue, []TargetInput{{ID: "127.0.0.3"}})
	if got["127.0.0.3:8080"] != (TargetHealth{StateUnused, ReasonNotRegistered, "Target is not registered to the target group"}) {
		t.Errorf("not registered: %+v", got)
	}

	// Deregistering drains for the delay, then the target is gone.
	must(f.s.ModifyTargetGroupAttributes("", f.blue, []Attribute{{AttrDeregistrationDelay, "1"}}))(t)
	var versions []uint64
	var seen []Snapshot
	cancel := f.s.Subscribe(func(s Snapshot) {
		mu.Lock()
		versions = append(versions, s.Version)
		seen = append(seen, s)
		mu.Unlock()
	})
	defer cancel()
	if err := f.s.DeregisterTargets("", f.blue, targets[:1]); err != nil {
		t.Fatal(err)
	}
	if got := healthOf(t, f.s, f.blue, nil)["127.0.0.1:9001"]; got.State != StateDraining || got.Reason != ReasonDeregistrationInProgress {
		t.Errorf("deregistered: %+v", got)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tg, _ := f.s.Snapshot().TargetGroup(f.blue)
		if len(tg.Targets) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("target still there after its drain: %+v", tg.Targets)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	gotVersions, gotSeen, drainEnd := versions, seen, now
	mu.Unlock()
	if len(gotVersions) != 3 || gotVersions[1] != gotVersions[0]+1 || gotVersions[2] != gotVersions[1]+1 {
		t.Errorf("subscriber saw versions %v, want the current one, the deregistration and the end of the drain", gotVersions)
	}
	if tg, _ := gotSeen[1].TargetGroup(f.blue); !tg.Targets[0].Draining() || !tg.Targets[0].DrainUntil.Equal(drainEnd) {
		t.Errorf("snapshot after deregistration: %+v", tg.Targets)
	}
	// A spare group's targets go at once: nothing routes to them.
	if err := f.s.DeregisterTargets("", f.spare, targets); err != nil {
		t.Fatal(err)
	}
	if tg, _ := f.s.Snapshot().TargetGroup(f.spare); len(tg.Targets) != 0 {
		t.Errorf("unused group kept %+v", tg.Targets)
	}
	// Deregistering what is not registered succeeds, as on ELBv2.
	if err := f.s.DeregisterTargets("", f.spare, targets); err != nil {
		t.Errorf("deregistering unregistered targets: %v", err)
	}
}

// TestSubscribeSeesWritesBeforeTheyReturn pins the contract the proxy relies on: by the time
// ModifyListener returns, every subscriber has the snapshot with the new weights.
func TestSubscribeSeesWritesBeforeTheyReturn(t *testing.T) {
	f := newFixture(t)
	var last Snapshot
	cancel := f.s.Subscribe(func(s Snapshot) { last = s })
	if last.Version != f.s.Snapshot().Version {
		t.Fatalf("Subscribe did not deliver the current snapshot first")
	}
	for _, w := range []int{90, 50, 0} {
		must(f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, w, f.green, 100-w)}))(t)
		rules := last.ListenerRules(f.listener)
		if got := rules[len(rules)-1].Actions[0].Forward.TargetGroups[0].Weight; got != w {
			t.Fatalf("subscriber has blue weight %d after ModifyListener to %d", got, w)
		}
	}
	cancel()
	v := last.Version
	must(f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, 1)}))(t)
	if last.Version != v {
		t.Fatal("a cancelled subscriber was called")
	}
	// Refused writes publish nothing.
	_, err := f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(1), Conditions: hostIs("a"), Actions: weighted(f.blue, 1000)})
	if err == nil || f.s.Snapshot().Version != v+1 {
		t.Fatalf("refused write: err %v, version %d → %d", err, v+1, f.s.Snapshot().Version)
	}
}

func TestStatePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Options{DB: db})
	lb := must(s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "alb", Subnets: []string{"a", "b"}, Tags: []Tag{{"team", "web"}}}))(t)
	tg := must(s.CreateTargetGroup(CreateTargetGroupInput{Name: "blue", Protocol: "HTTP", Port: ptr(80), VPCID: "vpc-1", TargetType: "ip"}))(t)
	l := must(s.CreateListener(CreateListenerInput{LoadBalancerARN: lb.ARN, Port: ptr(80), DefaultActions: weighted(tg.ARN, 5)}))(t)
	must(s.CreateRule(CreateRuleInput{ListenerARN: l.ARN, Priority: ptr(3), Conditions: hostIs("*.example.com"), Actions: weighted(tg.ARN, 1)}))(t)
	must(s.ModifyTargetGroupAttributes("", tg.ARN, []Attribute{{AttrDeregistrationDelay, "3600"}}))(t)
	if err := s.RegisterTargets("", tg.ARN, []TargetInput{{ID: "127.0.0.1"}, {ID: "127.0.0.2"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeregisterTargets("", tg.ARN, []TargetInput{{ID: "127.0.0.2"}}); err != nil {
		t.Fatal(err)
	}
	before := s.Snapshot()
	_ = s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after := newStore(t, Options{DB: db}).Snapshot()
	before.Version, after.Version = 0, 0
	if !reflect.DeepEqual(normalise(before), normalise(after)) {
		t.Fatalf("state after reopening differs:\nbefore %+v\nafter  %+v", before, after)
	}
}

// normalise drops what JSON does not round-trip exactly (monotonic clock readings, nil vs
// empty slices).
func normalise(s Snapshot) Snapshot {
	for i := range s.LoadBalancers {
		s.LoadBalancers[i].CreatedTime = s.LoadBalancers[i].CreatedTime.Round(0)
	}
	for i := range s.TargetGroups {
		tg := &s.TargetGroups[i]
		tg.CreatedTime = tg.CreatedTime.Round(0)
		for j := range tg.Targets {
			tg.Targets[j].RegisteredAt = tg.Targets[j].RegisteredAt.Round(0)
			tg.Targets[j].DrainUntil = tg.Targets[j].DrainUntil.Round(0)
		}
	}
	return s
}

func TestTags(t *testing.T) {
	f := newFixture(t)
	arns := []string{f.lb.ARN, f.blue, f.listener, f.defaultARN}
	// One resource a call: AddTags and RemoveTags take a list, ELBv2 takes one of it.
	for _, arn := range arns {
		if err := f.s.AddTags("", []string{arn}, []Tag{{"env", "test"}, {"team", "web"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.AddTags("", arns[:1], []Tag{{"env", "prod"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RemoveTags("", arns[1:2], []string{"team", "absent"}); err != nil {
		t.Fatal(err)
	}
	ds := must(f.s.DescribeTags("", arns))(t)
	want := [][]Tag{{{"env", "prod"}, {"team", "web"}}, {{"env", "test"}}, {{"env", "test"}, {"team", "web"}}, {{"env", "test"}, {"team", "web"}}}
	for i, d := range ds {
		if d.ResourceARN != arns[i] || !reflect.DeepEqual(d.Tags, want[i]) {
			t.Errorf("%s: tags %v, want %v", d.ResourceARN, d.Tags, want[i])
		}
	}
	for _, tc := range []struct {
		name       string
		arn        string
		code, want string
	}{
		{"load balancer", strings.Replace(f.lb.ARN, "/alb/", "/x/", 1), CodeLoadBalancerNotFound, "One or more load balancers not found"},
		{"target group", strings.Replace(f.blue, "/blue/", "/x/", 1), CodeTargetGroupNotFound, "One or more target groups not found"},
		{"listener", f.listener + "0", CodeListenerNotFound, "One or more listeners not found"},
		{"rule", f.defaultARN + "0", CodeRuleNotFound, "One or more rules not found"},
		{"garbage", "arn:aws:s3:::bucket", CodeValidation, "is not a valid resource ARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.DescribeTags("", []string{f.blue, tc.arn})
			wantErr(t, err, tc.code, tc.want)
			wantErr(t, f.s.AddTags("", []string{tc.arn}, []Tag{{"k", "v"}}), tc.code, tc.want)
			wantErr(t, f.s.RemoveTags("", []string{tc.arn}, []string{"k"}), tc.code, tc.want)
		})
	}
	// 48 more make 50 on the group, the most: one more is refused, a new value for a key
	// it has is not, and a refused call changes nothing.
	var many []Tag
	for i := range 48 {
		many = append(many, Tag{Key: fmt.Sprintf("k%02d", i)})
	}
	if err := f.s.AddTags("", []string{f.defaultARN}, many); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.s.AddTags("", []string{f.defaultARN}, []Tag{{"one-more", ""}}), CodeTooManyTags, "You've reached the limit on the number of tags for this resource (50)")
	if err := f.s.AddTags("", []string{f.defaultARN}, []Tag{{"env", "prod"}, {"k00", "x"}}); err != nil {
		t.Errorf("new values for keys it has, at 50 tags: %v", err)
	}
	if ds := must(f.s.DescribeTags("", []string{f.defaultARN}))(t); len(ds[0].Tags) != 50 || ds[0].Tags[0] != (Tag{"env", "prod"}) {
		t.Errorf("tags after the refused AddTags: %d, first %v", len(ds[0].Tags), ds[0].Tags[0])
	}
}

// TestTagRequests: each tag request as ELBv2 refuses it, with its code and message; none
// changes anything.
func TestTagRequests(t *testing.T) {
	f := newFixture(t)
	rule := f.defaultARN
	long := strings.Repeat("é", 129) // 129 characters, 258 bytes
	var twentyOne []string
	for range 21 {
		twentyOne = append(twentyOne, rule)
	}
	var fiftyOne []Tag
	for i := range 51 {
		fiftyOne = append(fiftyOne, Tag{Key: fmt.Sprintf("k%02d", i)})
	}
	for _, tc := range []struct {
		name       string
		call       func() error
		code, want string
	}{
		{"AddTags on two resources", func() error { return f.s.AddTags("", []string{rule, f.blue}, []Tag{{"k", "v"}}) },
			CodeValidation, "Only one resource can be tagged at a time"},
		{"RemoveTags on two resources", func() error { return f.s.RemoveTags("", []string{rule, f.blue}, []string{"k"}) },
			CodeValidation, "Only one resource can be untagged at a time"},
		{"AddTags on none", func() error { return f.s.AddTags("", nil, []Tag{{"k", "v"}}) },
			CodeValidation, "Value null at 'resourceArns' failed to satisfy constraint: Member must not be null"},
		{"AddTags without tags", func() error { return f.s.AddTags("", []string{rule}, nil) },
			CodeValidation, "Value null at 'tags'"},
		{"RemoveTags without keys", func() error { return f.s.RemoveTags("", []string{rule}, nil) },
			CodeValidation, "Value null at 'tagKeys'"},
		{"DescribeTags of 21", func() error { _, err := f.s.DescribeTags("", twentyOne); return err },
			CodeValidation, "at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to 20"},
		{"51 tags", func() error { return f.s.AddTags("", []string{rule}, fiftyOne) },
			CodeTooManyTags, "You've reached the limit on the number of tags for this resource (50)"},
		{"duplicate keys", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"k", "1"}, {"k", "2"}}) },
			CodeDuplicateTagKeys, "Tag key 'k' was specified more than once"},
		{"empty key", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"", "v"}}) },
			CodeValidation, "at 'tags.1.member.key' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"a key of 129 characters", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"ok", ""}, {long, "v"}}) },
			CodeValidation, "at 'tags.2.member.key' failed to satisfy constraint: Member must have length less than or equal to 128"},
		{"a value of 257 characters", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"k", strings.Repeat("v", 257)}}) },
			CodeValidation, "at 'tags.1.member.value' failed to satisfy constraint: Member must have length less than or equal to 256"},
		{"a key with a comma", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"a,b", "v"}}) },
			CodeValidation, "at 'tags.1.member.key' failed to satisfy constraint: Member must satisfy regular expression pattern"},
		{"a value with a quote", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"k", `"v"`}}) },
			CodeValidation, "at 'tags.1.member.value' failed to satisfy constraint: Member must satisfy regular expression pattern"},
		{"the aws: prefix", func() error { return f.s.AddTags("", []string{rule}, []Tag{{"AWS:cloudformation:stack-name", "v"}}) },
			CodeValidation, "Tag key 'AWS:cloudformation:stack-name' cannot start with 'aws:'"},
		{"removing a key of 129 characters", func() error { return f.s.RemoveTags("", []string{rule}, []string{"ok", long}) },
			CodeValidation, "at 'tagKeys.2.member' failed to satisfy constraint: Member must have length less than or equal to 128"},
		{"removing an empty key", func() error { return f.s.RemoveTags("", []string{rule}, []string{""}) },
			CodeValidation, "at 'tagKeys.1.member' failed to satisfy constraint: Member must have length greater than or equal to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.call(), tc.code, tc.want)
			if ds := must(f.s.DescribeTags("", []string{rule}))(t); len(ds[0].Tags) != 0 {
				t.Errorf("a refused request left tags: %v", ds[0].Tags)
			}
		})
	}
	// Lengths are characters: 128 two-byte letters make a valid key, 256 a valid value.
	ok := Tag{strings.Repeat("é", 128), strings.Repeat("ü", 256)}
	if err := f.s.AddTags("", []string{rule}, []Tag{ok}); err != nil {
		t.Errorf("a key of 128 and a value of 256 characters: %v", err)
	}
	if err := f.s.RemoveTags("", []string{rule}, []string{ok.Key}); err != nil {
		t.Errorf("removing a key of 128 characters: %v", err)
	}
}

func TestPagination(t *testing.T) {
	s := newStore(t, Options{})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		must(s.CreateTargetGroup(CreateTargetGroupInput{Name: n, Protocol: "HTTP", Port: ptr(80), VPCID: "vpc-1"}))(t)
	}
	var names []string
	marker, pages := "", 0
	for {
		page, next, err := s.DescribeTargetGroups(DescribeTargetGroupsInput{Marker: marker, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tg := range page {
			names = append(names, tg.Name)
		}
		if next == "" {
			break
		}
		marker = next
	}
	if pages != 3 || strings.Join(names, "") != "abcde" {
		t.Fatalf("%d pages of %v", pages, names)
	}
	_, _, err := s.DescribeTargetGroups(DescribeTargetGroupsInput{Marker: "bogus"})
	wantErr(t, err, CodeValidation, "The marker 'bogus' is not valid")
	_, _, err = s.DescribeTargetGroups(DescribeTargetGroupsInput{PageSize: 401})
	wantErr(t, err, CodeValidation, "at 'pageSize'")
	_, _, err = s.DescribeTargetGroups(DescribeTargetGroupsInput{Names: strings.Split("a b c d e f g h i j k l m n o p q r s t u", " ")})
	wantErr(t, err, CodeValidation, "You cannot describe more than '20' target groups at a time")
	_, _, err = s.DescribeTargetGroups(DescribeTargetGroupsInput{Names: []string{"a", "zz"}})
	wantErr(t, err, CodeTargetGroupNotFound, "One or more target groups not found")
}
