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
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The Cloud Map lever's authority tags against the sandbox's Cloud Map API (the real JSON
// protocol through aws-sdk-go-v2, Cloud Map's tag limits and errors): the same protocol as
// the ALB lever's (authority_tags.go), on the one service the lever moves.

// sandboxCM is a Cloud Map service with custom health on a sandbox started for the test:
// blue-1, blue-2 HEALTHY and green-1, green-2 UNHEALTHY.
type sandboxCM struct {
	api        *sd.Client
	svcID, arn string
	name       string // "service apps/orders"
}

func newSandboxCM(t *testing.T) *sandboxCM {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	m := &sandboxCM{api: NewServiceDiscovery(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, sb.APIURL()),
		name: "service apps/orders"}
	ctx := context.Background()
	if _, err := m.api.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("apps")}); err != nil {
		t.Fatal(err)
	}
	var nsID string
	for deadline := time.Now().Add(10 * time.Second); nsID == ""; time.Sleep(10 * time.Millisecond) {
		out, err := m.api.ListNamespaces(ctx, &sd.ListNamespacesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Namespaces) == 1 {
			nsID = aws.ToString(out.Namespaces[0].Id)
		} else if time.Now().After(deadline) {
			t.Fatal("namespace apps not created")
		}
	}
	svc, err := m.api.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("orders"), NamespaceId: aws.String(nsID),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	m.svcID, m.arn = aws.ToString(svc.Service.Id), aws.ToString(svc.Service.Arn)
	for i, c := range []string{"blue", "blue", "green", "green"} {
		id := fmt.Sprintf("%s-%d", c, i%2+1)
		if _, err := m.api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.svcID), InstanceId: aws.String(id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": fmt.Sprintf("10.0.0.%d", i+1), "cluster": c}}); err != nil {
			t.Fatal(err)
		}
	}
	m.reset(t)
	return m
}

// reset makes blue HEALTHY and green UNHEALTHY again, and removes every tag.
func (m *sandboxCM) reset(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"blue-1", "blue-2", "green-1", "green-2"} {
		st := sdtypes.CustomHealthStatusHealthy
		if strings.HasPrefix(id, "green") {
			st = sdtypes.CustomHealthStatusUnhealthy
		}
		if _, err := m.api.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(m.svcID),
			InstanceId: aws.String(id), Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	m.clear(t)
}

// plan moves orders from blue to green in 50 and 100 % steps.
func (m *sandboxCM) plan(name string) *spec.Plan {
	return &spec.Plan{Name: name, CloudMap: &spec.CloudMap{Namespace: "apps", Service: "orders", ClusterAttribute: "cluster", HealthStatus: "HEALTHY_OR_ELSE_ALL"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// tag puts key=value on the service.
func (m *sandboxCM) tag(t *testing.T, key, value string) {
	t.Helper()
	if _, err := m.api.TagResource(context.Background(), &sd.TagResourceInput{ResourceARN: aws.String(m.arn), Tags: []sdtypes.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatal(err)
	}
}

func (m *sandboxCM) tags(t *testing.T) []sdtypes.Tag {
	t.Helper()
	out, err := m.api.ListTagsForResource(context.Background(), &sd.ListTagsForResourceInput{ResourceARN: aws.String(m.arn)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Tags
}

// authority lists the service's authority tags, "KEY=VALUE", sorted.
func (m *sandboxCM) authority(t *testing.T) []string {
	t.Helper()
	var got []string
	for _, tg := range m.tags(t) {
		if strings.HasPrefix(aws.ToString(tg.Key), AuthorityTagPrefix) {
			got = append(got, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
		}
	}
	slices.Sort(got)
	return got
}

// clear removes every tag of the service.
func (m *sandboxCM) clear(t *testing.T) {
	t.Helper()
	var keys []string
	for _, tg := range m.tags(t) {
		keys = append(keys, aws.ToString(tg.Key))
	}
	if len(keys) > 0 {
		if _, err := m.api.UntagResource(context.Background(), &sd.UntagResourceInput{ResourceARN: aws.String(m.arn), TagKeys: keys}); err != nil {
			t.Fatal(err)
		}
	}
}

// healthy renders the HEALTHY instances as in effect: "blue=2 green=0".
func (m *sandboxCM) healthy(t *testing.T) string {
	t.Helper()
	out, err := m.api.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.svcID)})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{"blue": 0, "green": 0}
	for id, st := range out.Status {
		if st != sdtypes.HealthStatusUnhealthy {
			n[strings.Split(id, "-")[0]]++
		}
	}
	return FormatWeights(map[string]int64{"blue": int64(n["blue"]), "green": int64(n["green"])})
}

// countingSD counts (and orders) the calls a runner makes through the real client, and
// can hold its first read of the tags after it has tagged the service (to line two
// runners up).
type countingSD struct {
	*sd.Client
	mu    sync.Mutex
	calls map[string]int
	order []string
	// beforeTag, when set, runs once before the first TagResource; beforeVerify once
	// before the first ListTagsForResource after a TagResource.
	beforeTag, beforeVerify func()
	tagged                  bool
	// failUntag makes UntagResource fail.
	failUntag error
}

func newCountingSD(c *sd.Client) *countingSD {
	return &countingSD{Client: c, calls: map[string]int{}}
}

func (c *countingSD) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
	c.order = append(c.order, op)
}

func (c *countingSD) n(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// first is the index of op's first call, -1 when none.
func (c *countingSD) first(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Index(c.order, op)
}

func (c *countingSD) TagResource(ctx context.Context, in *sd.TagResourceInput, o ...func(*sd.Options)) (*sd.TagResourceOutput, error) {
	c.count("TagResource")
	c.mu.Lock()
	hook := c.beforeTag
	c.beforeTag, c.tagged = nil, true
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return c.Client.TagResource(ctx, in, o...)
}

func (c *countingSD) UntagResource(ctx context.Context, in *sd.UntagResourceInput, o ...func(*sd.Options)) (*sd.UntagResourceOutput, error) {
	c.count("UntagResource")
	if c.failUntag != nil {
		return nil, c.failUntag
	}
	return c.Client.UntagResource(ctx, in, o...)
}

func (c *countingSD) ListTagsForResource(ctx context.Context, in *sd.ListTagsForResourceInput, o ...func(*sd.Options)) (*sd.ListTagsForResourceOutput, error) {
	c.count("ListTagsForResource")
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
	return c.Client.ListTagsForResource(ctx, in, o...)
}

func (c *countingSD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	c.count("UpdateInstanceCustomHealthStatus")
	return c.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
}

// TestCloudMapAuthorityRead: what a read makes of the service's tags: this runner's,
// another runner's of the cutover (refused, or with a takeover noted), another cutover's,
// a key that only looks like one, this runner's gone after it held the service, and a
// service at Cloud Map's limit of 50 tags.
func TestCloudMapAuthorityRead(t *testing.T) {
	m := newSandboxCM(t)
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
	mine, bobs := authorityKey("orders", me.Token), authorityKey("orders", bob.Token)
	for _, tc := range []struct {
		name      string
		tags      [][2]string
		many      bool // 50 other tags on the service
		o         ReadOptions
		want      string // "" reads fine
		held      bool
		takenOver []registry.Runner
		start     string // a start problem
	}{
		{"no tags", nil, false, ReadOptions{Runner: me}, "", false, nil, ""},
		{"this runner's", [][2]string{{mine, authorityValue(me)}}, false, ReadOptions{Runner: me}, "", true, nil, ""},
		{"another runner's", [][2]string{{bobs, authorityValue(bob)}}, false, ReadOptions{Runner: me},
			"cutover orders: its weights are held by another runner, runner b0b0b0b0b0b0b0b0@bob-desk:22 (tag " + bobs + " on " + m.name + "): a cutover runs from one place at a time", false, nil, ""},
		{"another runner's, taken over", [][2]string{{bobs, authorityValue(bob)}, {mine, authorityValue(me)}}, false, ReadOptions{Runner: me, Takeover: true},
			"", true, []registry.Runner{bob}, ""},
		{"another runner's value edited by hand: the key's token counts", [][2]string{{bobs, "someone"}}, false, ReadOptions{Runner: me},
			"runner b0b0b0b0b0b0b0b0@ (tag " + bobs, false, nil, ""},
		{"another cutover's", [][2]string{{authorityKey("api", "c0c0c0c0c0c0c0c0"), "c0c0c0c0c0c0c0c0@ci:7"}}, false, ReadOptions{Runner: me, Takeover: true},
			"the Cloud Map service is not ready for this cutover:\n  " + m.name + " (" + m.arn + "): its weights are held by cutover api (tag crossfade.io/cutover/api/c0c0c0c0c0c0c0c0 = c0c0c0c0c0c0c0c0@ci:7): finish or release that cutover first", false, nil, ""},
		{"a key that only looks like one", [][2]string{{"crossfade.io/cutover-orders", "x"}, {"crossfade.io/cutover/orders", "y"}}, false, ReadOptions{Runner: me}, "", false, nil, ""},
		{"this runner's, gone after it held the service", nil, false, ReadOptions{Runner: me, Held: true},
			"cutover orders: its authority tag " + mine + " is gone from " + m.name + " (" + m.arn + "): while this runner held the service's instances, another runner took them over", false, nil, ""},
		{"a service with 50 tags", nil, true, ReadOptions{Runner: me}, "", false, nil,
			m.name + " (" + m.arn + ") has 50 tags, the most Cloud Map allows on a resource: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTagsException)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.clear(t)
			for _, kv := range tc.tags {
				m.tag(t, kv[0], kv[1])
			}
			if tc.many {
				for i := range 50 {
					m.tag(t, fmt.Sprintf("team-%02d", i), "x")
				}
			}
			lv := newCloudMapLever(m.plan("orders"), m.api)
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
			if got := s.(*cloudMapLive).svc.held; got != tc.held {
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

// TestCloudMapAuthorityWrite: the first write tags the service once, before any
// UpdateInstanceCustomHealthStatus; later writes tag nothing; a takeover removes the other
// runner's key, journals it (BeforeSend), and holds alone; the runner taken over from is
// refused at its next read naming the new holder.
func TestCloudMapAuthorityWrite(t *testing.T) {
	m := newSandboxCM(t)
	ctx := context.Background()
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
	write := func(c *countingSD, o ReadOptions, w map[string]int64) ([]registry.Runner, error) {
		lv := newCloudMapLever(m.plan("orders"), c)
		lv.poll = 5 * time.Millisecond
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
	c := newCountingSD(m.api)
	if _, err := write(c, ReadOptions{Runner: me}, map[string]int64{"blue": 50, "green": 50}); err != nil {
		t.Fatal(err)
	}
	if c.n("TagResource") != 1 || c.n("UntagResource") != 0 || c.first("TagResource") > c.first("UpdateInstanceCustomHealthStatus") {
		t.Errorf("first write: calls %v in order %v, want 1 TagResource before any UpdateInstanceCustomHealthStatus", c.calls, c.order)
	}
	if got, want := m.authority(t), []string{authorityKey("orders", me.Token) + "=" + authorityValue(me)}; !slices.Equal(got, want) {
		t.Errorf("tags %q, want %q", got, want)
	}
	c = newCountingSD(m.api)
	if _, err := write(c, ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100}); err != nil {
		t.Fatal(err)
	}
	if c.n("TagResource") != 0 || c.n("ListTagsForResource") != 1 {
		t.Errorf("second write: calls %v, want no TagResource and the read's one ListTagsForResource", c.calls)
	}
	// Bob aborts from another machine: he takes the service over, and Alice's next read is
	// refused naming him.
	c = newCountingSD(m.api)
	noted, err := write(c, ReadOptions{Runner: bob, Takeover: true, Partial: true}, map[string]int64{"blue": 100, "green": 0})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(noted, []registry.Runner{me}) || c.n("UntagResource") != 1 || c.n("TagResource") != 1 {
		t.Errorf("takeover: noted %v, calls %v; want alice noted, 1 TagResource and 1 UntagResource", noted, c.calls)
	}
	if got := m.authority(t); len(got) != 1 || !strings.Contains(got[0], bob.Token) {
		t.Errorf("tags after the takeover %q: want bob's alone", got)
	}
	_, err = write(newCountingSD(m.api), ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.Token != bob.Token {
		t.Fatalf("alice after the takeover: %v, want *HeldError naming bob", err)
	}
	if got := m.healthy(t); got != "blue=2 green=0" {
		t.Errorf("health %s: want bob's rollback kept", got)
	}
}

// TestCloudMapAuthorityRace: two runners of one cutover write their first step at once,
// many times over: exactly one writes, the other is refused naming it and sends no
// UpdateInstanceCustomHealthStatus, and only the winner's tag is left. "lockstep" lines the
// two up: neither tags before both have read the service free, and neither reads its tag
// back before both have tagged, so that both see each other and both step back: one of
// them must still win.
func TestCloudMapAuthorityRace(t *testing.T) {
	m := newSandboxCM(t)
	ctx := context.Background()
	runners := [2]registry.Runner{{Token: "a11ce0a11ce0a11c", Host: "alice", PID: 1}, {Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}}
	for _, mode := range []string{"free", "lockstep"} {
		t.Run(mode, func(t *testing.T) {
			for round := range 8 {
				m.reset(t)
				var clients [2]*countingSD
				var read, tagged sync.WaitGroup
				read.Add(2)
				tagged.Add(2)
				for i := range clients {
					clients[i] = newCountingSD(m.api)
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
						lv := newCloudMapLever(m.plan("orders"), clients[i])
						lv.poll = 5 * time.Millisecond
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
				if n := clients[loser].n("UpdateInstanceCustomHealthStatus"); n > 0 {
					t.Errorf("round %d: the loser sent %d status writes", round, n)
				}
				if got := m.authority(t); len(got) != 1 || !strings.Contains(got[0], runners[winner].Token) {
					t.Errorf("round %d: tags %q, want the winner's alone", round, got)
				}
				if mode == "lockstep" && clients[loser].n("UntagResource") == 0 {
					t.Errorf("round %d: the loser never stepped back (calls %v): the two were not lined up", round, clients[loser].calls)
				}
			}
		})
	}
}

// TestCloudMapAuthorityLetGo: what each release removes: a run's end its own key only,
// leaving another runner's; `cutover release` refuses another runner's; `release --force`
// removes every runner's of the cutover; none of them another cutover's.
func TestCloudMapAuthorityLetGo(t *testing.T) {
	m := newSandboxCM(t)
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
		{"a run's end", ownKeepOthers, 1, nil, "", []string{api + "=x", authorityKey("orders", bob.Token) + "=" + authorityValue(bob)}},
		{"release", ownRefuseOthers, 0, nil, "held by another runner, runner b0b0b0b0b0b0b0b0@bob:2 (tag " + authorityKey("orders", bob.Token) + " on " + m.name + ")", nil},
		{"release --force", everyRunner, 1, []registry.Runner{bob}, "", []string{api + "=x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.clear(t)
			m.tag(t, authorityKey("orders", me.Token), authorityValue(me))
			m.tag(t, authorityKey("orders", bob.Token), authorityValue(bob))
			m.tag(t, api, "x")
			n, others, err := newCloudMapLever(m.plan("orders"), m.api).letGo(context.Background(), me, tc.mode)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("letGo: %v, want %q", err, tc.err)
				}
				if got := m.authority(t); len(got) != 3 {
					t.Errorf("a refused release removed tags: %q left", got)
				}
				return
			}
			if err != nil || n != tc.n || !slices.Equal(others, tc.others) {
				t.Errorf("letGo: %d services, others %v, %v; want %d, %v", n, others, err, tc.n, tc.others)
			}
			if got := m.authority(t); !slices.Equal(got, tc.left) {
				t.Errorf("left %q, want %q", got, tc.left)
			}
		})
	}
}

// TestCloudMapAuthorityRun runs Cloud Map cutovers through the engine against the
// sandbox: the run tags the service at its first write and removes its tag when it ends,
// journaling it; a second runner (another state directory) is refused naming the holder,
// with nothing written; abort from a third takes the service over and rolls back; a run
// whose tag could not be removed at its end leaves it to `run --resume` of the ended
// cutover; `release` refuses another runner's tag unless --force.
func TestCloudMapAuthorityRun(t *testing.T) {
	m := newSandboxCM(t)
	ctx := context.Background()
	cfg := func(p *spec.Plan, api ServiceDiscovery, dir string) Config {
		return Config{Plan: p, ServiceDiscovery: api, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond,
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
	c := newCountingSD(m.api)
	if _, err := Run(ctx, cfg(m.plan("whole"), c, dir), false); err != nil {
		t.Fatal(err)
	}
	if got := m.authority(t); len(got) != 0 {
		t.Errorf("tags after the run: %q", got)
	}
	if k := kinds(dir, "whole"); k[len(k)-2] != kindDone || k[len(k)-1] != kindReleased {
		t.Errorf("journal %v: want done, then released", k)
	}
	if c.n("TagResource") != 1 || c.n("UntagResource") != 1 || c.first("TagResource") > c.first("UpdateInstanceCustomHealthStatus") {
		t.Errorf("calls %v: want 1 TagResource before any status, and 1 UntagResource", c.calls)
	}
	if got := m.healthy(t); got != "blue=0 green=2" {
		t.Fatalf("health after the run: %s", got)
	}
	m.reset(t)

	// Another machine holds the service: the run is refused before it writes.
	holder := registry.Runner{Token: "0d0d0d0d0d0d0d0d", Host: "ci-7", PID: 4242}
	m.tag(t, authorityKey("second", holder.Token), authorityValue(holder))
	dir = t.TempDir()
	c = newCountingSD(m.api)
	_, err := Run(ctx, cfg(m.plan("second"), c, dir), false)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != holder || !strings.Contains(err.Error(), "held by another runner, runner 0d0d0d0d0d0d0d0d@ci-7:4242 (tag "+authorityKey("second", holder.Token)+" on "+m.name+")") {
		t.Fatalf("second runner: %v, want *HeldError naming the holder", err)
	}
	if k := kinds(dir, "second"); slices.Contains(k, kindWritten) || slices.Contains(k, kindStart) || c.n("UpdateInstanceCustomHealthStatus") > 0 {
		t.Errorf("the refused runner journaled %v, calls %v", k, c.calls)
	}
	// An abort from a machine with a journal of the cutover takes the service over.
	dir = t.TempDir()
	start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":{"blue":1,"green":1},"token":"b0b0b0b0b0b0b0b0"}`+"\n", time.Now().UTC().Format(time.RFC3339Nano))
	if err := os.WriteFile(filepath.Join(dir, "second.journal"), []byte(start), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Abort(ctx, cfg(m.plan("second"), m.api, dir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Controls, func(e journal.Entry) bool {
		return e.Kind == kindTakeover && strings.Contains(e.Detail, "took the weights over from runner 0d0d0d0d0d0d0d0d@ci-7:4242")
	}) {
		t.Errorf("abort's report controls %+v: want the takeover", rep.Controls)
	}
	if got := m.healthy(t); got != "blue=2 green=2" {
		t.Errorf("health after the abort: %s, want its start (1:1) blue=2 green=2", got)
	}
	if got := m.authority(t); len(got) != 0 {
		t.Errorf("tags after the abort ended: %q", got)
	}
	m.reset(t)

	// A tag left by a run that could not remove it: the resume of the ended cutover does.
	dir = t.TempDir()
	c = newCountingSD(m.api)
	c.failUntag = errors.New("AccessDeniedException: not authorized to perform servicediscovery:UntagResource")
	if _, err := Run(ctx, cfg(m.plan("left"), c, dir), false); err != nil {
		t.Fatal(err)
	}
	if got := m.authority(t); len(got) != 1 {
		t.Fatalf("tags after a run that could not remove them: %q", got)
	}
	if _, err := Run(ctx, cfg(m.plan("left"), m.api, dir), true); err != nil {
		t.Fatal(err)
	}
	if got := m.authority(t); len(got) != 0 {
		t.Errorf("tags after the resume of the ended cutover: %q", got)
	}
	if k := kinds(dir, "left"); k[len(k)-1] != kindReleased {
		t.Errorf("journal %v: want the resume's released entry last", k)
	}
	if rel, err := Release(ctx, cfg(m.plan("left"), m.api, dir), false); err != nil || rel.Records != 0 {
		t.Errorf("release after all: %+v %v, want nothing to remove", rel, err)
	}
	// Release refuses another runner's tag of the cutover, and removes it with force.
	m.tag(t, authorityKey("left", holder.Token), authorityValue(holder))
	if _, err := Release(ctx, cfg(m.plan("left"), m.api, dir), false); !errors.As(err, &held) {
		t.Errorf("release of another runner's tag: %v, want *HeldError", err)
	}
	rel, err := Release(ctx, cfg(m.plan("left"), m.api, dir), true)
	if err != nil || rel.Records != 1 || !slices.Equal(rel.TakenOver, []registry.Runner{holder}) {
		t.Errorf("release --force: %+v %v", rel, err)
	}
	if got := m.authority(t); len(got) != 0 {
		t.Errorf("tags after release --force: %q", got)
	}
}

// TestCloudMapAuthorityResume: a runner stopped after its first write (a kill, as far as
// the service knows) resumes as the same runner, its token from the journal: the tag it
// left is its own, and the resume completes without a takeover.
func TestCloudMapAuthorityResume(t *testing.T) {
	m := newSandboxCM(t)
	dir := t.TempDir()
	p := m.plan("resumed")
	p.Steps[0].Pause = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Plan: p, ServiceDiscovery: m.api, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg, false); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for len(m.authority(t)) < 1 || m.healthy(t) != "blue=2 green=2" {
		if time.Now().After(deadline) {
			t.Fatal("the run never wrote its first step")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	tags := m.authority(t)
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
			t.Errorf("the resume took the service over from itself: %+v", e)
		}
	}
	if got := m.healthy(t); got != "blue=0 green=2" {
		t.Errorf("health %s after the resume", got)
	}
	if got := m.authority(t); len(got) != 0 {
		t.Errorf("tags after the resumed run ended: %q", got)
	}
}
