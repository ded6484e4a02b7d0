package controller_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/reconciler"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/source"
)

// metricsAddr passes every record to the next handler and sends the address RunApp logs
// it serves /metrics at.
type metricsAddr struct {
	slog.Handler
	addr chan string
}

func (h metricsAddr) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "serving metrics" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "addr" {
				select {
				case h.addr <- a.Value.String():
				default:
				}
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

// logTo writes each log line to t.
type logTo struct{ t *testing.T }

func (w logTo) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestRunAppCutoverMetrics runs `crossfade controller --cutovers` as RunApp runs it, on a
// real kube-apiserver with the Cutover CRD and the Route 53 lever on the sandbox, the
// runner built as the command builds it from what RunApp gives it: once a Cutover has
// completed, the controller's own /metrics shows crossfade_cutover_phase 1 for Completed
// and 0 for the other phases, and crossfade_cutover_weight the weights in status; once the
// Cutover is deleted, its series are gone. An event recorded with the runner's recorder
// reaches the API server.
func TestRunAppCutoverMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and a sandbox")
	}
	kube := kubetest.Start(t)
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	kube.InstallCRDs(t, filepath.Join(filepath.Dir(file), "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	sc, err := statusstore.NewClient(kube.Config())
	if err != nil {
		t.Fatal(err)
	}

	reg, err := registry.New(registry.Config{OwnerID: "ctl"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	zones := cache.New(z.DNS, cache.Config{})
	addr := make(chan string, 1)
	log := slog.New(metricsAddr{Handler: slog.NewTextHandler(logTo{t}, &slog.HandlerOptions{Level: slog.LevelInfo}), addr: addr})
	var got controller.CutoverEnv
	cfg := controller.AppConfig{REST: kube.Config(), Sources: []string{controller.SourceService},
		Syncer: &controller.Syncer{Provider: zones, Registry: reg, Policy: changes.Sync}, Source: src, Zones: zones,
		Metrics: metrics.New(), MetricsAddress: "127.0.0.1:0", Owner: "ctl", Logger: log,
		// What internal/cli's runCutovers does with what RunApp gives it.
		Cutovers: func(ctx context.Context, env controller.CutoverEnv) error {
			got = env
			if env.Events != nil {
				env.Events.Event(&corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "crossfade-0"},
					corev1.EventTypeNormal, "CutoverEnvProbe", "recorded with the cutover runner's recorder")
			}
			r, err := reconciler.New(reconciler.Config{REST: kube.Config(), Identity: "crossfade-0", Levers: z.Levers(z.DNS),
				DNSServers: []string{z.SB.DNSAddr()}, Logger: log,
				StateDir: env.StateDir, Events: env.Events, Metrics: env.Metrics})
			if err != nil {
				return err
			}
			return r.Run(ctx)
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controller.RunApp(ctx, cfg) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunApp: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("RunApp did not return within 60 s of its context ending")
		}
		if got.Events == nil || got.Metrics == nil {
			t.Errorf("cutover runner given an event recorder: %t, a metrics registry: %t; want the controller's", got.Events != nil, got.Metrics != nil)
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("RunApp returned before serving metrics: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("RunApp logged no metrics address within 60 s")
	}

	doc := "apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata:\n  name: app\n  namespace: default\nspec:\n" +
		"  zone: example.com\n  records:\n    - name: app.example.com\n  from: blue\n  to: green\n  steps: [0, 50, 100]\n  pause: 1s\n"
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	if err := sc.Cutovers.Post().Namespace("default").Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Error(); err != nil {
		t.Fatalf("create Cutover default/app: %v", err)
	}

	completed := []string{
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="Completed"} 1`,
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="Pending"} 0`,
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="Progressing"} 0`,
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="Paused"} 0`,
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="RolledBack"} 0`,
		`crossfade_cutover_phase{cutover="app",namespace="default",phase="Failed"} 0`,
		`crossfade_cutover_weight{cluster="blue",cutover="app",namespace="default"} 0`,
		`crossfade_cutover_weight{cluster="green",cutover="app",namespace="default"} 100`,
	}
	waitScrape(t, base, "Cutover default/app Completed at blue 0, green 100", func(body string) bool {
		for _, l := range completed {
			if !hasLine(body, l) {
				return false
			}
		}
		return true
	})

	if err := sc.Cutovers.Delete().Namespace("default").Resource(v1alpha1.Resource).Name("app").Do(t.Context()).Error(); err != nil {
		t.Fatalf("delete Cutover default/app: %v", err)
	}
	waitScrape(t, base, "no series of the deleted Cutover default/app", func(body string) bool {
		return !strings.Contains(body, `cutover="app"`)
	})

	// Events are sent asynchronously: polled, with a failure deadline.
	for end := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		evs, err := kube.Clientset(t).CoreV1().Events("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		if slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return e.Reason == "CutoverEnvProbe" && e.Source.Component == "crossfade" }) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("no CutoverEnvProbe event from component crossfade in default within 1m: the runner's recorder sends nothing")
		}
	}
}

// hasLine says whether the exposition body holds line.
func hasLine(body, line string) bool {
	for l := range strings.Lines(body) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}

// waitScrape scrapes base's /metrics until ok accepts the body, and fails the test with
// the last body's cutover series if that takes more than two minutes (a failure
// deadline, not a timed assertion).
func waitScrape(t *testing.T, base, what string, ok func(body string) bool) {
	t.Helper()
	end := time.Now().Add(2 * time.Minute)
	var body string
	for {
		resp, err := http.Get(base + metrics.PathMetrics)
		if err != nil {
			t.Fatalf("scrape %s: %v", base+metrics.PathMetrics, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("scrape %s: %v", base+metrics.PathMetrics, err)
		}
		if body = string(b); resp.StatusCode == http.StatusOK && ok(body) {
			return
		}
		if time.Now().After(end) {
			var series []string
			for l := range strings.Lines(body) {
				if strings.Contains(l, "crossfade_cutover_") {
					series = append(series, strings.TrimSuffix(l, "\n"))
				}
			}
			t.Fatalf("/metrics: not %s within 2m; status %d, cutover series:\n%s", what, resp.StatusCode, strings.Join(series, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
