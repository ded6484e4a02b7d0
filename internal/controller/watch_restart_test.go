package controller

import (
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestWatcherRealAPIServerRestart: the real kube-apiserver is killed and started again
// over the same etcd while a Watcher runs, and a second Watcher starts while it is down (a
// controller Pod scheduled during a control-plane upgrade), polling discovery through the
// server's start, when CRD groups may still answer 404. Neither Watcher may
// ever offer a complete snapshot without the DNSEndpoint, which would delete its records.
// TestWatcherAPIServerRestartDeletesNothing makes the 404 window certain; this one is the
// restart as it really happens.
func TestWatcherRealAPIServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := clusterWithDNSEndpoint(t)
	ctx := t.Context()
	newWatcher := func() *Watcher {
		t.Helper()
		w, err := NewWatcher(kubernetes.NewForConfigOrDie(kube.Config()), dynamic.NewForConfigOrDie(kube.Config()),
			WatchConfig{Sources: []string{SourceCRD}, CRDPoll: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	sampler := sampleSnapshots(t)
	defer sampler.stop()

	running := newWatcher()
	if err := running.Run(ctx); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, running, "before the restart")
	sampler.add(running)

	// The second Watcher starts while the server is down, and so polls discovery through
	// the restarted server's start, when CRD groups may still answer 404.
	kube.StopAPIServer(t)
	restarted := newWatcher()
	sampler.add(restarted)
	if err := restarted.Run(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a few polls refused
	kube.StartAPIServer(t)
	waitComplete(t, running, "the running Watcher after the restart")
	waitComplete(t, restarted, "the Watcher started during the restart")
	sampler.check()
}
