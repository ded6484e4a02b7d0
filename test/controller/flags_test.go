package controller_test

import (
	"strings"
	"testing"
	"time"
)

// TestExternalDNSCommandLine: an external-dns Deployment's arguments, copied unchanged
// (flags crossfade has no use for included), run crossfade: the ones that mean nothing
// to it are warned about, not refused, and the records are published.
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
		`"msg":"unknown flag ignored: crossfade has no such setting","flag":"--aws-sd-service-cleanup"`,
		`"msg":"unknown flag ignored: crossfade has no such setting","flag":"--aws-zones-cache-duration"`,
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
