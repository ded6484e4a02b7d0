package controller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestTwoClustersShareAName: two clusters (two API servers), one controller each with its
// own owner id, one hostname with a set identifier per cluster. Both weighted members
// stay live through many reconciles of both controllers; neither deletes or rewrites
// the other's, and when one cluster's Service goes, only its own member goes with it.
func TestTwoClustersShareAName(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two kube-apiservers")
	}
	sb := sandboxtest.Start(t)
	dns, z := zone(t, sb, "example.com")
	type cluster struct {
		id, ip string
		kc     *kubetest.Cluster
	}
	clusters := []*cluster{{id: "blue", ip: "192.0.2.10"}, {id: "green", ip: "192.0.2.20"}}
	for _, c := range clusters {
		c.kc = kubetest.Start(t)
		lbService(t, c.kc.Clientset(t), "app", c.ip, map[string]string{alpha + "hostname": "app.example.com",
			alpha + "set-identifier": c.id, alpha + "aws-weight": "50"})
		if c.id == "blue" {
			// Blue publishes another name too, so that its member going below is one of
			// its two records, not all of them, which the deletion guard would hold.
			lbService(t, c.kc.Clientset(t), "keep", "192.0.2.11", map[string]string{alpha + "hostname": "keep-blue.example.com"})
		}
		// --interval 1s: each controller reconciles every second, so a fight would show.
		args := []string{"--source", "service", "--txt-owner-id", c.id, "--leader-elect=false", "--interval", "1s", "--debounce", "100ms"}
		startController(t, c.id, c.kc.Kubeconfig, sb, args...)
	}
	both := func() (bool, string) {
		s := strings.Join(records(t, dns, z), "\n")
		return strings.Contains(s, "app.example.com A [blue] 192.0.2.10") && strings.Contains(s, "app.example.com A [green] 192.0.2.20"), s
	}
	eventually(t, 30*time.Second, "both members live", both)
	before := sandboxtest.APICalls(t, sb)["ChangeResourceRecordSets ok"]
	time.Sleep(4 * time.Second) // four reconciles of each controller
	if ok, s := both(); !ok {
		t.Fatalf("a member went while both clusters want theirs:\n%s", s)
	}
	if after := sandboxtest.APICalls(t, sb)["ChangeResourceRecordSets ok"]; after != before {
		t.Errorf("%d writes while nothing changed: the controllers fight over the name", after-before)
	}

	// Blue's Service goes: blue's member and its ownership record go, green's stays.
	if err := clusters[0].kc.Clientset(t).CoreV1().Services("default").Delete(t.Context(), "app", deleteNow); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "blue's member removed, green's kept", func() (bool, string) {
		s := strings.Join(records(t, dns, z), "\n")
		return !strings.Contains(s, "[blue]") && strings.Contains(s, "app.example.com A [green] 192.0.2.20"), s
	})
}
