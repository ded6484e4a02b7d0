package controller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/controllertest"
)

// TestExternalDNSCommandLine: an external-dns Deployment's arguments, copied unchanged
// (flags crossfade has no use for included), run crossfade: the ones that mean nothing
// to it are warned about, not refused, and the records are published. (A flag that is
// neither crossfade's nor external-dns's is refused: cmd/crossfade's usage tests.)
func TestExternalDNSCommandLine(t *testing.T) {
	e := setup(t)
	kc, client, sb, dns, z := e.kc, e.client, e.sb, e.dns, e.zone
	lbService(t, client, "web", "192.0.2.10", map[string]string{alpha + "hostname": "web.example.com"})

	p := startController(t, "controller", kc.Kubeconfig, sb,
		"--source=service", "--source=ingress", "--source=node", "--domain-filter=example.com", "--provider=aws",
		"--policy=upsert-only", "--aws-zone-type=public", "--registry=txt", "--txt-owner-id=my-identifier",
		"--txt-prefix=", "--interval=1m", "--events", "--aws-sd-service-cleanup", "--txt-cache-interval=1h",
		"--min-event-sync-interval", "5s", "--aws-zones-cache-duration=3h", "--once")
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("--once did not exit:\n%s", p.Log())
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, p.Log())
	}
	if got := records(t, dns, z); !strings.Contains(strings.Join(got, "\n"), "web.example.com A 192.0.2.10") {
		t.Errorf("not published: %q", got)
	}
	log := p.Log()
	for _, want := range []string{
		`"msg":"flag accepted for external-dns compatibility and ignored","flag":"--aws-sd-service-cleanup","why":"crossfade has no such setting"`,
		`"msg":"flag accepted for external-dns compatibility and ignored","flag":"--aws-zones-cache-duration","why":"crossfade has no such setting"`,
		`"msg":"flag accepted for external-dns compatibility and ignored","flag":"--txt-cache-interval"`,
		`"msg":"flag accepted for external-dns compatibility and ignored","flag":"--min-event-sync-interval"`,
		`"msg":"source not supported by crossfade, ignored","source":"node"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	if strings.Contains(log, `"flag":"--txt-owner-id"`) || strings.Contains(log, `"flag":"--events"`) {
		t.Errorf("a known flag was warned about:\n%s", log)
	}
}

// TestControllerGCPercent: the controller collects garbage at GOGC=50 unless the
// environment sets GOGC, which then decides (as the Go runtime's own go_gc_gogc_percent
// on /metrics reports it).
func TestControllerGCPercent(t *testing.T) {
	e := setup(t)
	for _, tc := range []struct {
		env  string
		want float64
	}{
		{"GOGC=", 50},
		{"GOGC=100", 100},
		{"GOGC=30", 30},
	} {
		t.Run(tc.env, func(t *testing.T) {
			p := controllertest.Start(t, controllertest.Options{Name: "controller", Kubeconfig: e.kc.Kubeconfig,
				Route53URL: e.sb.APIURL(), Env: []string{tc.env},
				Args: []string{"--source", "service", "--txt-owner-id", "blue", "--leader-elect=false"}})
			if got := p.Metric(t, "go_gc_gogc_percent"); got != tc.want {
				t.Errorf("go_gc_gogc_percent %v, want %v", got, tc.want)
			}
		})
	}
}
