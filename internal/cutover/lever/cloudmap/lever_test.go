package cloudmap_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
)

// The Cloud Map lever alone against the sandbox's Cloud Map API through aws-sdk-go-v2
// (levertest's services): the order of a write's statuses, and the instances its owner
// does not own, never written. Runs through the engine are internal/cutover's tests.

// lateHealthySD is the sandbox's Cloud Map API as AWS's is in one respect the sandbox's
// fixed delay is not: Cloud Map applies a custom status after a while that varies from
// call to call (about 30 s), so a HEALTHY sent first can take effect after an UNHEALTHY
// sent next. Here every HEALTHY takes effect late: the call is accepted at once and
// forwarded to the sandbox after delay, while UNHEALTHY is forwarded as it comes.
type lateHealthySD struct {
	*sd.Client
	delay time.Duration
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []error
}

func (l *lateHealthySD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	if in.Status != sdtypes.CustomHealthStatusHealthy {
		return l.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
	}
	l.wg.Go(func() {
		time.Sleep(l.delay)
		if _, err := l.Client.UpdateInstanceCustomHealthStatus(context.Background(), in, o...); err != nil {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
		}
	})
	return &sd.UpdateInstanceCustomHealthStatusOutput{}, nil
}

// TestCloudMapWriteNeverEmptiesTheAnswer: a step that swaps which instances are healthy
// (blue's two HEALTHY → green's two HEALTHY, blue's UNHEALTHY) must not leave a client
// calling DiscoverInstances with HEALTHY a moment with no instance, even when Cloud Map
// applies the HEALTHY statuses after the UNHEALTHY ones sent after them. Only the write's
// wait (HEALTHY first, until in effect, then UNHEALTHY) keeps it so: without that wait,
// blue's UNHEALTHY apply while green's HEALTHY are still on their way, and the clients
// find no instance for delay. The sandbox alone applies statuses in the order sent, so
// an end-to-end run cannot tell the wait from its absence.
func TestCloudMapWriteNeverEmptiesTheAnswer(t *testing.T) {
	m := levertest.NewCloudMap(t)
	ctx := context.Background()
	const delay = 400 * time.Millisecond
	api := &lateHealthySD{Client: m.API, delay: delay}
	lv := cloudmap.New(m.Plan("orders"), api, cloudmap.Poll(5*time.Millisecond))

	var empty, answers int
	var firstEmpty time.Time
	stop := make(chan struct{})
	var clients sync.WaitGroup
	clients.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			out, err := m.API.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("apps"), ServiceName: aws.String("orders"),
				HealthStatus: sdtypes.HealthStatusFilterHealthy})
			if err != nil {
				t.Error(err)
				return
			}
			answers++
			if len(out.Instances) == 0 {
				if empty == 0 {
					firstEmpty = time.Now()
				}
				empty++
			}
		}
	})
	began := time.Now()
	for _, w := range []map[string]int64{{"blue": 0, "green": 100}, {"blue": 100, "green": 0}} {
		s, err := lv.Read(ctx, lever.ReadOptions{Runner: levertest.Runner})
		if err != nil {
			t.Fatal(err)
		}
		wr, err := lv.Write(ctx, s, lever.Change{Weights: w}, levertest.Env())
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			ok, err := lv.InEffect(ctx, wr)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("weights %s not in effect after 10 s", lever.FormatWeights(w))
			}
		}
	}
	took := time.Since(began)
	close(stop)
	clients.Wait()
	api.wg.Wait()
	if len(api.errs) > 0 {
		t.Fatalf("late HEALTHY calls failed: %v", api.errs)
	}
	if got := m.Healthy(t); got != "blue=2 green=0" {
		t.Errorf("health after both swaps: %s, want blue=2 green=0", got)
	}
	if answers < 20 {
		t.Fatalf("the client made %d calls in %s: too few to watch the swaps", answers, took)
	}
	if empty > 0 {
		t.Fatalf("%d of %d DiscoverInstances (HEALTHY) answers were empty, the first %s after the first write began: the UNHEALTHY statuses took effect before the HEALTHY ones",
			empty, answers, firstEmpty.Sub(began).Round(time.Millisecond))
	}
	// Each swap waited for its HEALTHY statuses: the test would otherwise not have seen them late.
	if took < 2*delay {
		t.Errorf("two swaps took %s, less than twice the HEALTHY statuses' delay %s: the write did not wait for them", took, delay)
	}
	t.Logf("%d answers over two swaps in %s, none empty", answers, took.Round(time.Millisecond))
}

// TestCloudMapUnownedMidRunNeverWritten: instances that appear after the start, one
// without crossfade.io/owner in each cluster (blue-x HEALTHY, green-x HEALTHY, as Cloud
// Map registers them) and one of green registered by another owner (green-y), are never
// written: not by the step that makes every blue instance UNHEALTHY, not by a new
// process's first write (which sends every status it moves), not by the rollback that
// makes green UNHEALTHY again. The write's detail and a partial read's skipped lines
// name them; the share assignment counts green-x as the HEALTHY green instance it is:
// 50/50 leaves one owned green instance HEALTHY, and the clients' answer is 2 of 4
// green. Before, the lever selected them by their cluster attribute and wrote them.
func TestCloudMapUnownedMidRunNeverWritten(t *testing.T) {
	ctx := context.Background()
	m := levertest.NewOwner(t, levertest.Owned())
	p := levertest.CloudMapPlan("orders")
	lv := cloudmap.New(p, m.Client(), cloudmap.Poll(5*time.Millisecond))
	started := lever.ReadOptions{Runner: levertest.Runner}
	s, err := lv.Read(ctx, started)
	if err != nil {
		t.Fatal(err)
	}
	if pr := lv.StartProblems(s); len(pr) > 0 {
		t.Fatalf("start refused: %v", pr)
	}
	start := s.Weights()
	for _, in := range []levertest.Inst{{ID: "blue-x", Cluster: "blue", Owner: "", Healthy: true}, {ID: "green-x", Cluster: "green", Owner: "", Healthy: true}, {ID: "green-y", Cluster: "green", Owner: "green-old", Healthy: true}} {
		m.Register(t, in)
	}
	started.Started = true
	write := func(lv lever.Lever, o lever.ReadOptions, w map[string]int64) lever.Written {
		t.Helper()
		s, err := lv.Read(ctx, o)
		if err != nil {
			t.Fatalf("read for %s: %v", lever.FormatWeights(w), err)
		}
		wr, err := lv.Write(ctx, s, lever.Change{Weights: w}, levertest.Env())
		if err != nil {
			t.Fatalf("write %s: %v", lever.FormatWeights(w), err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if ok, err := lv.InEffect(ctx, wr); err != nil {
				t.Fatal(err)
			} else if ok {
				return wr
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not in effect after 10 s", lever.FormatWeights(w))
			}
		}
	}
	// 50/50: green-x and green-y (HEALTHY, not moved) and one owned green instance make
	// 3 of green; blue's three (blue-x with them) make 3: 50 %.
	wr := write(lv, started, map[string]int64{"blue": 50, "green": 50})
	for _, id := range []string{"blue-x of blue HEALTHY", "green-x of green HEALTHY", "green-y of green HEALTHY"} {
		if !strings.Contains(wr.Detail, id) {
			t.Errorf("write detail does not name %s as left as it is: %s", id, wr.Detail)
		}
	}
	answer, err := gate.Discover(ctx, m.API, *p.CloudMap, "HEALTHY", false)
	if err != nil {
		t.Fatal(err)
	}
	if answer.ByCluster["blue"] != 3 || answer.ByCluster["green"] != 3 {
		t.Errorf("50/50 with blue-x, green-x and green-y HEALTHY answers %v (%v), want blue 3 and green 3", answer.ByCluster, answer.Instances)
	}
	// 0/100 makes every blue instance the lever moves UNHEALTHY.
	write(lv, started, map[string]int64{"blue": 0, "green": 100})
	// The rollback (a partial read) back to the start.
	partial := started
	partial.Partial = true
	s, err = lv.Read(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	sk := strings.Join(s.Skipped(), "\n")
	for _, w := range []string{"instance blue-x of blue", "instance green-x of green", "has no crossfade.io/owner attribute",
		"instance green-y of green in Cloud Map service apps/orders (", "is owner green-old's, and green's instances are owner green-ctl's"} {
		if !strings.Contains(sk, w) {
			t.Errorf("the rollback's read does not name %q among the instances it leaves out:\n%s", w, sk)
		}
	}
	write(lv, partial, start)
	want := map[string]string{"blue-1": "HEALTHY", "blue-2": "HEALTHY", "green-1": "UNHEALTHY", "green-2": "UNHEALTHY",
		"blue-x": "HEALTHY", "green-x": "HEALTHY", "green-y": "HEALTHY"}
	if h := m.Health(t); !maps.Equal(h, want) {
		t.Errorf("health after the rollback: %v, want %v", h, want)
	}
	// A new process (an abort's, a resume's) sends every status it moves at its first
	// write: still none of the unowned ones. (green-y first deregistered: a new process
	// cannot tell which of green's two owners is its controller, see below.)
	if _, err := m.API.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: aws.String(m.SvcID), InstanceId: aws.String("green-y")}); err != nil {
		t.Fatal(err)
	}
	delete(want, "green-y")
	rb := cloudmap.New(p, m.Client(), cloudmap.Poll(5*time.Millisecond))
	write(rb, partial, start)
	for _, id := range []string{"blue-x", "green-x", "green-y"} {
		if w := m.Written(id); len(w) > 0 {
			t.Errorf("instance %s (not the cutover's) was written: %v", id, w)
		}
	}
	if w := m.Written("green-1"); len(w) < 2 {
		t.Errorf("the new process's first write did not send green-1's status again: %v", w)
	}
	if h := m.Health(t); !maps.Equal(h, want) {
		t.Errorf("health after the new process's write: %v, want %v", h, want)
	}
	// A new process that finds green with two owners does not guess: a run's read refuses,
	// naming both; a rollback's leaves green's instances out, naming them.
	m.Register(t, levertest.Inst{ID: "green-y", Cluster: "green", Owner: "green-old", Healthy: true})
	rc := cloudmap.New(p, m.Client())
	_, err = rc.Read(ctx, started)
	var nr *lever.NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "owner green-ctl (green-1, green-2), owner green-old (green-y)") {
		t.Errorf("a resumed run's read with green's two owners: %v, want refused naming both", err)
	}
	s, err = cloudmap.New(p, m.Client()).Read(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	if sk := strings.Join(s.Skipped(), "\n"); !strings.Contains(sk, "instance green-1 of green") || !strings.Contains(sk, "does not guess") {
		t.Errorf("a rollback's read with green's two owners leaves out:\n%s", sk)
	}
}
