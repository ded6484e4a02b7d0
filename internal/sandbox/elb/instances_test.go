package elb

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// fakeInstances is the EC2 instances a test declares: id → private IP of a running one.
type fakeInstances map[string]string

func (f fakeInstances) InstanceIP(id string) (netip.Addr, bool) {
	ip, ok := f[id]
	if !ok {
		return netip.Addr{}, false
	}
	return netip.MustParseAddr(ip), true
}

// TestInstanceTargets registers instance ids: a group of type instance takes an instance
// the EC2 source knows as running and refuses any other with ELBv2's InvalidTarget; a
// group of type ip refuses instance ids; without a source, instance ids are refused in the
// sandbox's words; an instance group takes IP addresses only without EC2 (ELBv2 refuses
// them: "Instance ID '…' is not valid").
func TestInstanceTargets(t *testing.T) {
	known := fakeInstances{"i-0node": "192.0.2.10"}
	for _, tc := range []struct {
		name              string
		targetType        string
		inst              Instances
		id                string
		wantCode, wantMsg string
	}{
		{name: "running instance", targetType: "instance", inst: known, id: "i-0node"},
		{name: "unknown instance", targetType: "instance", inst: known, id: "i-0gone",
			wantCode: CodeInvalidTarget, wantMsg: "The following targets are not in a running state and cannot be registered: 'i-0gone'"},
		{name: "instance in an ip group", targetType: "ip", inst: known, id: "i-0node",
			wantCode: CodeValidation, wantMsg: "The IP address 'i-0node' is not a valid IPv4 address"},
		{name: "no EC2", targetType: "instance", inst: nil, id: "i-0node",
			wantCode: CodeInvalidTarget, wantMsg: "which has no EC2 instances"},
		{name: "address in an instance group", targetType: "instance", inst: known, id: "192.0.2.20",
			wantCode: CodeValidation, wantMsg: "Instance ID '192.0.2.20' is not valid"},
		{name: "address in an instance group without EC2", targetType: "instance", inst: nil, id: "192.0.2.20"},
		{name: "not an id", targetType: "instance", inst: known, id: "node-1",
			wantCode: CodeValidation, wantMsg: "Instance ID 'node-1' is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, Options{})
			// Health first: setting the instances must not undo it, nor the other way round.
			s.SetHealthSource(nil)
			s.SetInstances(tc.inst)
			tg := must(s.CreateTargetGroup(CreateTargetGroupInput{Name: "nodes", Protocol: "HTTP", Port: ptr(30080), VPCID: "vpc-1", TargetType: tc.targetType}))(t)
			err := s.RegisterTargets("", tg.ARN, []TargetInput{{ID: tc.id}})
			if tc.wantCode != "" {
				wantErr(t, err, tc.wantCode, tc.wantMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.DescribeTargetHealth("", tg.ARN, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(d) != 1 || d[0].Target.ID != tc.id || d[0].Target.Port != 30080 {
				t.Fatalf("targets = %+v", d)
			}
		})
	}
}

// oneHealth is a health source reporting one state for one target.
type oneHealth string

func (h oneHealth) TargetHealth(string) map[string]TargetHealth {
	return map[string]TargetHealth{"192.0.2.10:8080": {State: string(h)}}
}

// TestSourcesAreIndependent sets the health source and the instances in both orders and
// unsets each: neither setter undoes the other.
func TestSourcesAreIndependent(t *testing.T) {
	s := newStore(t, Options{})
	s.SetHealthSource(oneHealth(StateHealthy))
	s.SetInstances(fakeInstances{"i-1": "192.0.2.10"})
	if h := s.health.Load(); h == nil || h.src == nil || h.inst == nil {
		t.Fatalf("after both setters: %+v", h)
	}
	s.SetHealthSource(nil)
	if s.instances() == nil {
		t.Fatal("unsetting the health source unset the instances")
	}
	s.SetHealthSource(oneHealth(StateHealthy))
	s.SetInstances(nil)
	if h := s.health.Load(); h == nil || h.src == nil {
		t.Fatal("unsetting the instances unset the health source")
	}
}

// liveInstances is an EC2 whose instances change: states by id, IPs of the running ones,
// and the subscribers it tells of a change (InstanceEvents).
type liveInstances struct {
	mu     sync.Mutex
	states map[string]string
	subs   []func()
}

func (l *liveInstances) InstanceIP(id string) (netip.Addr, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.states[id] != "running" {
		return netip.Addr{}, false
	}
	return netip.MustParseAddr("192.0.2.10"), true
}

func (l *liveInstances) InstanceState(id string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.states[id]
	return st, ok
}

func (l *liveInstances) Subscribe(fn func()) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs = append(l.subs, fn)
	return func() {}
}

func (l *liveInstances) set(id, state string) {
	l.mu.Lock()
	if state == "" {
		delete(l.states, id)
	} else {
		l.states[id] = state
	}
	subs := slices.Clone(l.subs)
	l.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

// TestInstanceStateChanges: a registered instance target whose instance stops or goes
// away is unused, Target.InvalidState, "Target is in the stopped state" (or terminated),
// whatever the health source says; and each change to the instances hands the store's
// subscribers the current snapshot again, with no ELBv2 write.
func TestInstanceStateChanges(t *testing.T) {
	f := newFixture(t)
	inst := &liveInstances{states: map[string]string{"i-0node": "running"}}
	f.s.SetInstances(inst)
	f.s.SetHealthSource(oneHealth(StateHealthy))
	tg := must(f.s.CreateTargetGroup(CreateTargetGroupInput{Name: "nodes", Protocol: "HTTP", Port: ptr(8080), VPCID: "vpc-1", TargetType: "instance"}))(t)
	if err := f.s.RegisterTargets("", tg.ARN, []TargetInput{{ID: "i-0node"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, 1, tg.ARN, 1)}); err != nil {
		t.Fatal(err)
	}
	var applied []uint64
	cancel := f.s.Subscribe(func(s Snapshot) { applied = append(applied, s.Version) })
	defer cancel()
	health := func() TargetHealth {
		t.Helper()
		d, err := f.s.DescribeTargetHealth("", tg.ARN, nil)
		if err != nil || len(d) != 1 {
			t.Fatalf("DescribeTargetHealth: %+v, %v", d, err)
		}
		return d[0].Health
	}
	if h := health(); h.State == StateUnused {
		t.Fatalf("a running instance in use: %+v", h)
	}
	for _, tc := range []struct{ state, want string }{{"stopped", "Target is in the stopped state"}, {"", "Target is in the terminated state"}} {
		inst.set("i-0node", tc.state)
		if h := health(); h != (TargetHealth{StateUnused, ReasonInvalidState, tc.want}) {
			t.Errorf("instance %q: %+v, want unused, Target.InvalidState, %q", tc.state, h, tc.want)
		}
	}
	v := f.s.Snapshot().Version
	if fmt.Sprint(applied) != fmt.Sprint([]uint64{v, v, v}) {
		t.Errorf("snapshots handed to the subscriber: %v, want version %d at Subscribe and once per instance change", applied, v)
	}
}
