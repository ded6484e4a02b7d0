package controller

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestRunAppOnce runs the controller as `crossfade controller --once` does, on a real
// kube-apiserver and a sandbox zone: it publishes the Service's record and returns, skips
// (and says so) a source kind crossfade does not read, and refuses a metrics address it
// cannot listen at before writing anything.
func TestRunAppOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	kubetest.LoadBalancerService(t, kube.Clientset(t), "web", "192.0.2.10",
		map[string]string{source.PrefixAlpha + "hostname": "web.example.com"}, nil)
	cases := []struct {
		name       string
		sources    []string
		metrics    string
		wantErr    string
		wantLog    string
		wantRecord bool
	}{
		{name: "publishes once", sources: []string{SourceService}, metrics: "127.0.0.1:0", wantRecord: true},
		{name: "a kind crossfade does not read is skipped", sources: []string{"fake", SourceService}, metrics: "127.0.0.1:0",
			wantLog: `msg="source not supported by crossfade, ignored" source=fake`, wantRecord: true},
		{name: "a metrics address it cannot listen at", sources: []string{SourceService}, metrics: "127.0.0.1:-1",
			wantErr: `--metrics-address "127.0.0.1:-1"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			dns, zone := route53test.Zone(t, sb, "example.com")
			reg, err := registry.New(registry.Config{OwnerID: "blue"})
			if err != nil {
				t.Fatal(err)
			}
			src, err := source.New(source.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			zones := cache.New(dns, cache.Config{})
			err = RunApp(t.Context(), AppConfig{REST: kube.Config(), Sources: tc.sources,
				Syncer: &Syncer{Provider: zones, Registry: reg, Policy: changes.Sync}, Source: src, Zones: zones,
				Metrics: metrics.New(), MetricsAddress: tc.metrics, Once: true, Owner: "blue",
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("RunApp: %v\n%s", err, logs.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("RunApp: error %v, want one containing %q", err, tc.wantErr)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("logs lack %q:\n%s", tc.wantLog, logs.String())
			}
			records, err := dns.Records(t.Context(), zone)
			if err != nil {
				t.Fatal(err)
			}
			published := slices.ContainsFunc(records, func(r *endpoint.Endpoint) bool {
				return r.Name == "web.example.com" && r.Type == endpoint.TypeA && slices.Equal([]string(r.Targets), []string{"192.0.2.10"})
			})
			if published != tc.wantRecord {
				t.Errorf("web.example.com A 192.0.2.10 published: %v, want %v; zone holds %v", published, tc.wantRecord, records)
			}
		})
	}
}
