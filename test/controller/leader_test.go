package controller_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestLeaderFailover: of two replicas one writes; when it is killed with SIGKILL (no
// chance to release its Lease) the other writes a change within 15 s; a replica stopped
// with SIGTERM releases the Lease on its way out.
func TestLeaderFailover(t *testing.T) {
	e := setup(t)
	kc, client, sb, dns, z := e.kc, e.client, e.sb, e.dns, e.zone
	lbService(t, client, "web", "192.0.2.10", map[string]string{alpha + "hostname": "web.example.com"})

	args := []string{"--source", "service", "--txt-owner-id", "blue", "--debounce", "100ms"}
	a := startController(t, "replica-a", kc.Kubeconfig, sb, args...)
	b := startController(t, "replica-b", kc.Kubeconfig, sb, args...)
	eventually(t, 30*time.Second, "first sync", hasRecord(t, dns, z, "web.example.com A 192.0.2.10"))

	leading := func(p *proc) bool { return strings.Contains(p.Log(), `"msg":"leading: this replica writes"`) }
	var leader, standby *proc
	eventually(t, 10*time.Second, "exactly one leader", func() (bool, string) {
		switch {
		case leading(a) && !leading(b):
			leader, standby = a, b
		case leading(b) && !leading(a):
			leader, standby = b, a
		default:
			return false, "a leads: " + boolText(leading(a)) + ", b leads: " + boolText(leading(b))
		}
		return true, ""
	})
	if strings.Contains(standby.Log(), `"msg":"reconciled"`) {
		t.Fatalf("the standby replica reconciled while the other led:\n%s", standby.Log())
	}

	// SIGKILL: the Lease stays held until it expires.
	if err := leader.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-leader.Done
	killed := time.Now()
	annotate(t, client, "web", alpha+"hostname", "www.example.com")
	eventually(t, 15*time.Second, "the standby writes after the leader's SIGKILL", hasRecord(t, dns, z, "www.example.com A 192.0.2.10"))
	t.Logf("failover: the change was written %s after the leader's SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	if !leading(standby) {
		t.Fatalf("the change was written but the standby never led")
	}

	// SIGTERM while a batch is in flight (the sandbox holds each write 3 s): the batch
	// lands, the process exits 0 and releases the Lease, so a successor need not wait
	// for it to expire.
	sandboxtest.SetFaults(t, sb, `{"latency":"3s","latencyRate":1,"operations":["ChangeResourceRecordSets"]}`)
	writing := func() int { return strings.Count(standby.Log(), `"msg":"writing batch"`) }
	before := writing()
	annotate(t, client, "web", alpha+"hostname", "api.example.com")
	eventually(t, 10*time.Second, "the write is in flight", func() (bool, string) {
		return writing() > before, standby.Log()
	})
	standby.Stop(t)
	sandboxtest.SetFaults(t, sb, `{}`)
	if got := strings.Join(records(t, dns, z), "\n"); !strings.Contains(got, "api.example.com A 192.0.2.10") {
		t.Errorf("the batch in flight at SIGTERM did not land:\n%s", got)
	}
	if code := standby.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0:\n%s", code, standby.Log())
	}
	lease, err := client.CoordinationV1().Leases("default").Get(context.Background(), "crossfade-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("lease still held by %q after SIGTERM", *h)
	}
}

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
