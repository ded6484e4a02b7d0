package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// idleCalls fails the test when any Route 53 API call reaches the sandbox during d.
func idleCalls(t *testing.T, e *env, d time.Duration, what string) {
	t.Helper()
	before := sandboxtest.APICalls(t, e.sb)
	time.Sleep(d)
	for op, n := range sandboxtest.APICalls(t, e.sb) {
		if n != before[op] && !strings.Contains(op, "/_sandbox") {
			t.Errorf("%s: %s went from %d to %d calls", what, op, before[op], n)
		}
	}
}

// ownershipOf returns the payload of the ownership record of app.example.com A [blue].
func ownershipOf(t *testing.T, e *env) string {
	t.Helper()
	recs, err := e.dns.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Name == "a-app.example.com" && r.Type == endpoint.TypeTXT && r.SetIdentifier == "blue" {
			return strings.Join(r.Targets, " ")
		}
	}
	return ""
}

// TestControllerConfirmsAHold (issue 25, bullet 7): a controller publishing a weighted
// member, its zone cache good for an hour, notices a cutover taking hold of the name by
// probing the name servers (here the sandbox's, every 300 ms) and confirms the hold in
// the member's ownership record, without waiting for the resync; and a release alike.
// Between those, with its weighted name probed all the time, it makes no Route 53 call.
func TestControllerConfirmsAHold(t *testing.T) {
	e := setup(t)
	lbService(t, e.client, "app", "192.0.2.10", map[string]string{alpha + "hostname": "app.example.com",
		alpha + "set-identifier": "blue", alpha + "aws-weight": "100", alpha + "ttl": "60"})
	ctl := startController(t, "controller", e.kc.Kubeconfig, e.sb, "--source", "service", "--txt-owner-id", "blue",
		"--leader-elect=false", "--debounce", "100ms", "--interval", "1s", "--resync-interval", "1h",
		"--hold-probe-interval", "300ms", "--hold-probe-servers", e.sb.DNSAddr())
	eventually(t, 20*time.Second, "first sync publishes app", hasRecord(t, e.dns, e.zone, "app.example.com A [blue] 192.0.2.10"))
	time.Sleep(time.Second) // let the last reconcile finish
	idleCalls(t, e, 3*time.Second, "idle, no hold, its weighted name probed")
	if v := ctl.Metric(t, `crossfade_hold_probes_total{result="same"}`); v < 1 {
		t.Errorf("probes that found nothing new: %v, want some", v)
	}

	hold := registry.Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: registry.Runner{Token: "t0k3n", Host: "ci"}}.Record()
	if err := e.dns.Apply(context.Background(), e.zone, changes.Batch{{Action: changes.Create, Endpoint: hold}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the hold confirmed", func() (bool, string) {
		txt := ownershipOf(t, e)
		return strings.Contains(txt, endpoint.ConfirmsHoldLabel+"=t0k3n"), txt
	})
	if v := ctl.Metric(t, `crossfade_hold_probes_total{result="changed"}`); v < 1 {
		t.Errorf("probes that found a hold: %v, want at least 1", v)
	}
	if !strings.Contains(ctl.Log(), "a cutover's hold changed: listing the zone again to confirm it") {
		t.Errorf("no log line for the hold found by the probe:\n%s", ctl.Log())
	}
	time.Sleep(time.Second)
	idleCalls(t, e, 3*time.Second, "idle, hold confirmed")

	if err := e.dns.Apply(context.Background(), e.zone, changes.Batch{{Action: changes.Delete, Endpoint: hold}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the confirmation dropped after the release", func() (bool, string) {
		txt := ownershipOf(t, e)
		return txt != "" && !strings.Contains(txt, endpoint.ConfirmsHoldLabel), txt
	})
}

// TestControllerIdleWithoutWeightedNames: a zone where the controller publishes no
// weighted record is never probed, and an idle controller makes no Route 53 call, even
// with a probe interval of 100 ms.
func TestControllerIdleWithoutWeightedNames(t *testing.T) {
	e := setup(t)
	lbService(t, e.client, "web", "192.0.2.10", map[string]string{alpha + "hostname": "web.example.com"})
	ctl := startController(t, "controller", e.kc.Kubeconfig, e.sb, "--source", "service", "--txt-owner-id", "blue",
		"--leader-elect=false", "--debounce", "100ms", "--interval", "1s",
		"--hold-probe-interval", "100ms", "--hold-probe-servers", e.sb.DNSAddr())
	eventually(t, 20*time.Second, "first sync publishes web", hasRecord(t, e.dns, e.zone, "web.example.com A 192.0.2.10"))
	time.Sleep(time.Second)
	idleCalls(t, e, 3*time.Second, "idle, no weighted name")
	for _, r := range []string{"same", "changed", "error"} {
		if v := ctl.Metric(t, fmt.Sprintf(`crossfade_hold_probes_total{result=%q}`, r)); v > 0 {
			t.Errorf("probes %s: %v, want none in a zone without weighted records", r, v)
		}
	}
}

// TestControllerStaysOnTheMachine: against the sandbox (--aws-endpoint on loopback)
// without --hold-probe-servers, a controller publishing a weighted member does not probe
// the zone's name servers, which the sandbox names after real AWS ones (resolving or
// asking them would leave the machine): it says once how to probe the sandbox instead,
// and counts no probe at all.
func TestControllerStaysOnTheMachine(t *testing.T) {
	e := setup(t)
	lbService(t, e.client, "app", "192.0.2.10", map[string]string{alpha + "hostname": "app.example.com",
		alpha + "set-identifier": "blue", alpha + "aws-weight": "100", alpha + "ttl": "60"})
	ctl := startController(t, "controller", e.kc.Kubeconfig, e.sb, "--source", "service", "--txt-owner-id", "blue",
		"--leader-elect=false", "--debounce", "100ms", "--interval", "1s", "--hold-probe-interval", "100ms")
	eventually(t, 20*time.Second, "first sync publishes app", hasRecord(t, e.dns, e.zone, "app.example.com A [blue] 192.0.2.10"))
	const said = "not probing zones for cutover holds: the Route 53 API " + "http://"
	eventually(t, 20*time.Second, "the controller says it does not probe", func() (bool, string) {
		return strings.Contains(ctl.Log(), said) && strings.Contains(ctl.Log(), "pass --hold-probe-servers with the sandbox's DNS address"), ""
	})
	time.Sleep(500 * time.Millisecond) // several probe intervals
	for _, r := range []string{"same", "changed", "error"} {
		if v := ctl.Metric(t, fmt.Sprintf(`crossfade_hold_probes_total{result=%q}`, r)); v > 0 {
			t.Errorf("probes %s: %v, want none against the sandbox without --hold-probe-servers", r, v)
		}
	}
	if n := strings.Count(ctl.Log(), "not probing zones for cutover holds"); n != 1 {
		t.Errorf("said %d times that it does not probe, want once", n)
	}
}
