package controller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// TestWatcherRealAPIServerRestart: the real kube-apiserver is killed and started again
// over the same etcd while a Watcher runs, and a second Watcher starts the moment the
// restarted server answers at all, before it is ready (a controller Pod scheduled during
// a control-plane upgrade): CRD groups may then still answer 404. Neither Watcher may
// ever offer a complete snapshot without the DNSEndpoint, which would delete its records.
// TestWatcherAPIServerRestartDeletesNothing makes the 404 window certain; this one is the
// restart as it really happens.
func TestWatcherRealAPIServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	kube.InstallCRDs(t, dnsEndpointCRD)
	time.Sleep(2 * time.Second) // the API server refuses objects of a CRD younger than this (kubetest.InstallCRDs)
	ctx := t.Context()
	if _, err := dynamic.NewForConfigOrDie(kube.Config()).Resource(dnsEndpointsGVR).Namespace("default").
		Create(ctx, unstructuredDNSEndpoint("web", "web.example.com"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	newWatcher := func() *Watcher {
		t.Helper()
		w, err := NewWatcher(kubernetes.NewForConfigOrDie(kube.Config()), dynamic.NewForConfigOrDie(kube.Config()),
			WatchConfig{Sources: []string{SourceCRD}, CRDPoll: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	var (
		mu       sync.Mutex
		watchers []*Watcher
		bad      atomic.Value // the first complete snapshot without the DNSEndpoint
	)
	sampling, stopSampling := context.WithCancel(ctx)
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for sampling.Err() == nil {
			mu.Lock()
			for i, w := range watchers {
				if snap, complete := w.Snapshot(); complete && len(snap.DNSEndpoints) != 1 {
					bad.CompareAndSwap(nil, fmt.Sprintf("watcher %d: a complete snapshot with %d DNSEndpoints, want 1: its records would be deleted", i, len(snap.DNSEndpoints)))
				}
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	})
	defer func() { stopSampling(); sampler.Wait() }()

	running := newWatcher()
	if err := running.Run(ctx); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, running, "before the restart")
	mu.Lock()
	watchers = append(watchers, running)
	mu.Unlock()

	// The second Watcher starts as soon as the restarted server answers /version, while
	// RestartAPIServer still waits for it to be ready.
	started := make(chan *Watcher, 1)
	var early sync.WaitGroup
	early.Go(func() {
		probe := kubernetes.NewForConfigOrDie(kube.Config()).Discovery()
		for down := false; ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
			_, err := probe.ServerVersion()
			if err != nil {
				down = true // the old server is gone
			} else if down {
				break // the new one answers
			}
		}
		w := newWatcher()
		mu.Lock()
		watchers = append(watchers, w)
		mu.Unlock()
		if err := w.Run(ctx); err != nil {
			t.Error(err)
		}
		started <- w
	})
	kube.RestartAPIServer(t)
	early.Wait()
	restarted := <-started
	waitComplete(t, running, "the running Watcher after the restart")
	waitComplete(t, restarted, "the Watcher started during the restart")
	stopSampling()
	sampler.Wait()
	if b := bad.Load(); b != nil {
		t.Fatal(b)
	}
}
