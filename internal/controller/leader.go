package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Defaults of leader election, shorter than client-go's usual 15/10/2 s so that a
// replica that dies without releasing its Lease is replaced within about 11 s: the
// Lease's 8 s, plus up to 2.2 s until the standby's next try (client-go jitters the
// retry period by up to 1.2×), plus one reconcile. The leader gives up after failing
// to renew for 5 s, 3 s before anyone else may take over.
const (
	DefaultLeaseDuration = 8 * time.Second
	DefaultRenewDeadline = 5 * time.Second
	DefaultRetryPeriod   = time.Second
)

// ErrLeadershipLost is returned by Lead when the lease was lost while leading: the
// caller must stop writing at once (exit), since another replica may now lead.
var ErrLeadershipLost = errors.New("leader election: lease lost")

// LeaderConfig says which Lease the replicas contend for.
type LeaderConfig struct {
	Client kubernetes.Interface
	// Namespace and Name locate the coordination.k8s.io Lease.
	Namespace, Name string
	// Identity names this replica in the Lease (pod name, else host name).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod default to the Default* values.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnLeading is told when this replica starts (true) and stops (false) leading.
	OnLeading func(bool)
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Lead runs fn while this replica holds the Lease. When ctx ends, fn is told to stop
// through its context, Lead waits for it to return (the batch in flight lands), then
// releases the Lease so the next replica takes over at once, and returns nil. When the
// Lease is lost instead, Lead returns ErrLeadershipLost without waiting for fn.
func Lead(ctx context.Context, cfg LeaderConfig, fn func(context.Context)) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	onLeading := cfg.OnLeading
	if onLeading == nil {
		onLeading = func(bool) {}
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	// The elector's context ends only after fn has returned, so the Lease is never
	// released while a batch is still being written.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()

	var (
		mu      sync.Mutex
		running chan struct{} // closed when fn returns; nil before it starts
		led     bool
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            cfg.Name,
		LeaseDuration:   orDefault(cfg.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:   orDefault(cfg.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:     orDefault(cfg.RetryPeriod, DefaultRetryPeriod),
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					stopElecting()
					return
				}
				done := make(chan struct{})
				running, led = done, true
				mu.Unlock()
				defer close(done)
				log.Info("leading: this replica writes", "lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
				onLeading(true)
				fctx, cancel := context.WithCancel(leading)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				fn(fctx)
				stopElecting()
			},
			OnStoppedLeading: func() { onLeading(false) },
			OnNewLeader: func(id string) {
				if id != cfg.Identity {
					log.Info("standing by: another replica leads", "lease", cfg.Namespace+"/"+cfg.Name, "leader", id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	go func() {
		select {
		case <-electCtx.Done():
			return
		case <-ctx.Done():
		}
		mu.Lock()
		done := running
		mu.Unlock()
		if done != nil {
			<-done
		}
		stopElecting()
	}()
	elector.Run(electCtx)
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() == nil && led {
		return ErrLeadershipLost
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
