package cli

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/reconciler"
)

// TestRunCutoversRegistersOnControllerMetrics: the runner `crossfade controller
// --cutovers` runs registers the Cutover series on the registry the controller gives it
// (the one /metrics serves): on a registry where crossfade_cutover_phase is taken, the
// reconciler stops with the registration's error naming the series, rather than run
// without its series. The API server is a closed loopback port: the reconciler's access
// check leaves a server that does not answer to the informer's retries.
func TestRunCutoversRegistersOnControllerMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: reconciler.NamePhase, Help: "taken"}))
	rc := reconciler.Config{REST: &rest.Config{Host: host}, Identity: "crossfade-0", Levers: levers.New(levers.Env{})}
	// A failure deadline only: without the registry the reconciler would run until ctx ends.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	err = runCutovers(rc)(ctx, controller.CutoverEnv{StateDir: t.TempDir(), Events: record.NewFakeRecorder(8), Metrics: reg})
	if err == nil || !strings.Contains(err.Error(), reconciler.NamePhase) {
		t.Fatalf("runCutovers on a registry where %s is taken: %v, want the registration's error", reconciler.NamePhase, err)
	}
}
