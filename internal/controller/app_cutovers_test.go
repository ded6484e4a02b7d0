package controller

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestRunAppCutovers: with --cutovers, RunApp runs the cutover runner beside the
// publisher under one context, gives it a state directory that exists while it runs and
// is removed once it has returned, and returns only after the runner has; a runner that
// stops on its own stops the publisher too, and RunApp returns its error; --once and
// --dry-run with --cutovers are refused before anything runs. (The runner here is a
// function: what it runs, the reconciler, is tested in test/controller.)
func TestRunAppCutovers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	sb := sandboxtest.Start(t)
	dns, _ := route53test.Zone(t, sb, "example.com")
	app := func(runner CutoverRunner) AppConfig {
		reg, err := registry.New(registry.Config{OwnerID: "blue"})
		if err != nil {
			t.Fatal(err)
		}
		src, err := source.New(source.Config{})
		if err != nil {
			t.Fatal(err)
		}
		zones := cache.New(dns, cache.Config{})
		return AppConfig{REST: kube.Config(), Sources: []string{SourceService},
			Syncer: &Syncer{Provider: zones, Registry: reg, Policy: changes.Sync}, Source: src, Zones: zones,
			Metrics: metrics.New(), MetricsAddress: "127.0.0.1:0", Owner: "blue", Cutovers: runner,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	}
	// run runs RunApp until it returns, failing the test if it has not within 60 s.
	run := func(t *testing.T, cfg AppConfig, ctx context.Context) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- RunApp(ctx, cfg) }()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			t.Fatal("RunApp did not return within 60 s")
			return nil
		}
	}

	t.Run("runs beside the publisher and is waited for", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var dir string
		var returned atomic.Bool
		started := make(chan struct{})
		var cfg AppConfig
		cfg = app(func(ctx context.Context, env CutoverEnv) error {
			stateDir := env.StateDir
			dir = stateDir
			if fi, err := os.Stat(stateDir); err != nil || !fi.IsDir() {
				t.Errorf("state directory %q at start: %v, want a directory", stateDir, err)
			}
			// The controller's registry, served at /metrics, and its recorder (that its
			// events reach the API server is TestRunAppCutoverMetrics's).
			if env.Metrics != cfg.Metrics.Registry() {
				t.Errorf("runner's Metrics %v, want the controller's registry", env.Metrics)
			}
			if env.Events == nil {
				t.Error("runner given no event recorder")
			}
			close(started)
			<-ctx.Done()
			// Still busy after the stop (a run journaling its last entry): RunApp must
			// wait for it, and the directory must still be there.
			time.Sleep(200 * time.Millisecond)
			if _, err := os.Stat(stateDir); err != nil {
				t.Errorf("state directory removed while the runner ran: %v", err)
			}
			returned.Store(true)
			return ctx.Err()
		})
		go func() {
			<-started
			cancel()
		}()
		if err := run(t, cfg, ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("RunApp: %v, want nil or context.Canceled after the stop", err)
		}
		if !returned.Load() {
			t.Error("RunApp returned before the cutover runner had")
		}
		if dir == "" || !strings.HasPrefix(dir, os.TempDir()) {
			t.Errorf("state directory %q, want one under %s", dir, os.TempDir())
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("state directory %q after RunApp: %v, want removed", dir, err)
		}
	})

	t.Run("a runner that stops stops the controller", func(t *testing.T) {
		cfg := app(func(context.Context, CutoverEnv) error { return errors.New("cutovers.crossfade.io: forbidden") })
		err := run(t, cfg, t.Context())
		if err == nil || !strings.Contains(err.Error(), "--cutovers: the cutover reconciler stopped: cutovers.crossfade.io: forbidden") {
			t.Fatalf("RunApp: %v, want the runner's error", err)
		}
	})

	for _, tc := range []struct {
		name string
		set  func(*AppConfig)
	}{
		{"once", func(c *AppConfig) { c.Once = true }},
		{"dry-run", func(c *AppConfig) { c.DryRun = true }},
	} {
		t.Run("refused with "+tc.name, func(t *testing.T) {
			var called atomic.Bool
			cfg := app(func(context.Context, CutoverEnv) error { called.Store(true); return nil })
			tc.set(&cfg)
			err := run(t, cfg, t.Context())
			if err == nil || !strings.Contains(err.Error(), "--cutovers: not with --once or --dry-run") {
				t.Errorf("RunApp with --%s: %v, want refused", tc.name, err)
			}
			if called.Load() {
				t.Errorf("the cutover runner ran with --%s", tc.name)
			}
		})
	}
}
