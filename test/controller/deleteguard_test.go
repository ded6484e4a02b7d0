package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// TestLabelFilterMatchingNothingDeletesNothing: a controller publishes 20 Services its
// --label-filter selects; restarted with a filter that matches none of them, it deletes
// nothing, says so with a Warning event on its own Pod (once, though it reconciles every
// second) and with crossfade_deletions_held. Restarted with --allow-mass-delete, it
// deletes them at its first reconcile, and holds the next mass deletion again.
func TestLabelFilterMatchingNothingDeletesNothing(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// The controller's Pod, as the downward API names it; nothing runs it here.
	pod, err := e.client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crossfade-0", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "crossfade", Image: "crossfade"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		labelledService(t, e.client, fmt.Sprintf("web-%d", i), fmt.Sprintf("192.0.2.%d", i+1), "web",
			map[string]string{alpha + "hostname": fmt.Sprintf("web-%d.example.com", i)})
	}
	start := func(name, filter string, args ...string) *proc {
		return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: e.kc.Kubeconfig, Route53URL: e.sb.APIURL(),
			Args: append([]string{"--source", "service", "--txt-owner-id", "blue", "--leader-elect=false", "--label-filter", filter,
				"--debounce", "100ms", "--interval", "1s"}, args...),
			Env: []string{"POD_NAME=" + pod.Name, "POD_NAMESPACE=" + pod.Namespace, "POD_UID=" + string(pod.UID)}})
	}
	published := func() int {
		n := 0
		for _, r := range records(t, e.dns, e.zone) {
			if strings.HasPrefix(r, "web-") && strings.Contains(r, " A ") {
				n++
			}
		}
		return n
	}
	heldEvents := func() []corev1.Event {
		evs, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []corev1.Event
		for _, ev := range evs.Items {
			if ev.Reason == "DNSDeletionsHeld" {
				out = append(out, ev)
			}
		}
		return out
	}

	ctl := start("team-web", "team=web")
	eventually(t, 30*time.Second, "the 20 Services published", func() (bool, string) {
		n := published()
		return n == 20, fmt.Sprint(n, " published")
	})
	ctl.Stop(t)

	// A wrong filter: the controller sees none of its Services.
	ctl = start("no-match", "team=nobody")
	ctl.WaitReconciles(t, 3, 30*time.Second)
	if n := published(); n != 20 {
		t.Fatalf("a filter matching nothing: %d of the 20 records left", n)
	}
	eventually(t, 10*time.Second, "a Warning event on the controller's Pod", func() (bool, string) {
		evs := heldEvents()
		for _, ev := range evs {
			ref := ev.InvolvedObject
			if ev.Type == corev1.EventTypeWarning && ref.Kind == "Pod" && ref.Namespace == pod.Namespace && ref.Name == pod.Name && ref.UID == pod.UID &&
				strings.Contains(ev.Message, "zone example.com") && strings.Contains(ev.Message, "held 20 deletions") &&
				strings.Contains(ev.Message, "--allow-mass-delete") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", evs)
	})
	if got := ctl.Metric(t, `crossfade_deletions_held{zone="example.com"}`); got != 20 {
		t.Errorf(`crossfade_deletions_held{zone="example.com"} = %v, want 20`, got)
	}
	// Once, though every reconcile holds them: the recorder would count a repeat.
	ctl.WaitReconciles(t, 6, 30*time.Second)
	time.Sleep(time.Second) // let the recorder send what it was given
	if evs := heldEvents(); len(evs) != 1 || evs[0].Count != 1 {
		t.Errorf("held deletions reported %d times, want once: %+v", len(evs), evs)
	}
	if n := strings.Count(ctl.Log(), `"msg":"deletions held"`); n != 1 {
		t.Errorf("%d log lines say the deletions are held, want 1", n)
	}
	if n := published(); n != 20 {
		t.Fatalf("after 6 reconciles with a filter matching nothing: %d of the 20 records left", n)
	}
	ctl.Stop(t)

	// The person means it: restarted with --allow-mass-delete, the controller lets through,
	// at its first reconcile, the deletions the guard held before (and only those).
	// Reconciles only after the test's 20 relabels are all done (quiet for 2 s), so that
	// none sees them half done.
	ctl = start("allowed", "team=nobody", "--allow-mass-delete", "--interval", "10m", "--debounce", "2s", "--max-delay", "20s")
	eventually(t, 30*time.Second, "the 20 records deleted", func() (bool, string) {
		n := published()
		return n == 0, fmt.Sprint(n, " published")
	})
	// The deletions land in the zone before the sync that sent them returns and logs: wait
	// for the line rather than race it.
	eventually(t, 10*time.Second, "a log line saying the guard is whole again", func() (bool, string) {
		return strings.Contains(ctl.Log(), "the guard is whole again"), "not logged"
	})
	eventually(t, 10*time.Second, "nothing held", func() (bool, string) {
		v := ctl.Metric(t, `crossfade_deletions_held{zone="example.com"}`)
		return v == 0, fmt.Sprint(v)
	})
	// The allowance is spent: the same controller publishes the Services once they
	// match, and holds their deletion when they stop matching.
	for i := range 20 {
		relabel(t, e.client, fmt.Sprintf("web-%d", i), "nobody")
	}
	eventually(t, 30*time.Second, "the 20 Services published again", func() (bool, string) {
		n := published()
		return n == 20, fmt.Sprint(n, " published")
	})
	for i := range 20 {
		relabel(t, e.client, fmt.Sprintf("web-%d", i), "web")
	}
	eventually(t, 30*time.Second, "the deletions held again", func() (bool, string) {
		v := ctl.Metric(t, `crossfade_deletions_held{zone="example.com"}`)
		return v == 20, fmt.Sprint(v)
	})
	if n := published(); n != 20 {
		t.Fatalf("after the allowance was spent: %d of the 20 records left", n)
	}
}

// labelledService is lbService with the label team.
func labelledService(t *testing.T, kc kubernetes.Interface, name, ip, team string, ann map[string]string) {
	t.Helper()
	kubetest.LoadBalancerService(t, kc, name, ip, ann, map[string]string{"team": team})
}

// relabel sets a Service's team label.
func relabel(t *testing.T, kc kubernetes.Interface, name, team string) {
	t.Helper()
	ctx := context.Background()
	svc, err := kc.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Labels["team"] = team
	if _, err := kc.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
