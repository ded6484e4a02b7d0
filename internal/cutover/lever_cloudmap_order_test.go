package cutover

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
)

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
	m := newSandboxCM(t)
	ctx := context.Background()
	const delay = 400 * time.Millisecond
	api := &lateHealthySD{Client: m.api, delay: delay}
	lv := cloudmap.New(m.plan("orders"), api, cloudmap.Poll(5*time.Millisecond))

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
			out, err := m.api.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("apps"), ServiceName: aws.String("orders"),
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
		s, err := lv.Read(ctx, ReadOptions{Runner: previewRunner()})
		if err != nil {
			t.Fatal(err)
		}
		wr, err := lv.Write(ctx, s, Change{Weights: w}, testEnv())
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
				t.Fatalf("weights %s not in effect after 10 s", FormatWeights(w))
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
	if got := m.healthy(t); got != "blue=2 green=0" {
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
