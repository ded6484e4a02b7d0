package alb_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The ALB lever's authority tags against the sandbox's ELBv2 API (the real query protocol
// through aws-sdk-go-v2, ELBv2's tag limits and errors). The protocol's tests are
// lever/authority's tags_test.go, run for this lever through levertest.ALBTagLever; here
// is what only ELBv2 asks of it.

// arnsELB records the resources each AddTags and RemoveTags names.
type arnsELB struct {
	levertest.CountingELB
	mu          sync.Mutex
	add, remove [][]string
}

func (c *arnsELB) AddTags(ctx context.Context, in *elbv2.AddTagsInput, o ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	c.mu.Lock()
	c.add = append(c.add, in.ResourceArns)
	c.mu.Unlock()
	return c.CountingELB.AddTags(ctx, in, o...)
}

func (c *arnsELB) RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, o ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	c.mu.Lock()
	c.remove = append(c.remove, in.ResourceArns)
	c.mu.Unlock()
	return c.CountingELB.RemoveTags(ctx, in, o...)
}

// TestALBAuthorityTagCalls: what only ELBv2 asks of the protocol. Its AddTags and
// RemoveTags take many resources a call, and the lever sends one each (a failure names
// one rule): the rule, and for the listener its default rule, which ELBv2 tags as a rule
// of its own, never the listener. The first write sends one ModifyRule and one
// ModifyListener after them.
func TestALBAuthorityTagCalls(t *testing.T) {
	a := levertest.NewALB(t)
	ctx := context.Background()
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	c := &arnsELB{CountingELB: levertest.CountingELB{Client: a.API, Calls: levertest.NewCalls()}}
	lv := leveralb.New(a.Plan("shop"), c)
	s, err := lv.Read(ctx, lever.ReadOptions{Runner: me})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lv.Write(ctx, s, lever.Change{Weights: map[string]int64{"blue": 50, "green": 50}}, levertest.Env()); err != nil {
		t.Fatal(err)
	}
	if c.N("AddTags") != 2 || c.N("ModifyRule") != 1 || c.N("ModifyListener") != 1 || c.N("RemoveTags") != 0 {
		t.Errorf("first write: calls %v, want 2 AddTags (the rule, the default rule), 1 ModifyRule, 1 ModifyListener", c.Calls)
	}
	if _, _, err := lv.LetGo(ctx, me, lever.OwnKeepOthers); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{a.Rule}, {a.Default}}
	for _, calls := range []struct {
		op   string
		arns [][]string
	}{{"AddTags", c.add}, {"RemoveTags", c.remove}} {
		if !slices.EqualFunc(calls.arns, want, slices.Equal) {
			t.Errorf("%s named %q, want one rule a call: %q", calls.op, calls.arns, want)
		}
	}
}
