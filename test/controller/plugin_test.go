package controller_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// plugin is the crossfade binary as kubectl runs it as a plugin: through a link named
// kubectl-crossfade.
type plugin struct {
	path, kubeconfig string
}

// newPlugin links kubectl-crossfade to the binary built from this checkout, in a
// directory of t's.
func (e *cutoverEnv) plugin(t *testing.T) *plugin {
	t.Helper()
	link := filepath.Join(t.TempDir(), "kubectl-crossfade")
	if err := os.Symlink(controllertest.Binary(t), link); err != nil {
		t.Fatal(err)
	}
	return &plugin{path: link, kubeconfig: e.kc.Kubeconfig}
}

// run runs `kubectl crossfade args…` against the test cluster and returns its exit
// status and output (stdout and stderr).
func (p *plugin) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return exitAndOutput(t, exec.Command(p.path, append(args, "--kubeconfig", p.kubeconfig)...))
}

// controls are the control entries of a journal as "detail by who".
func controls(journal []v1alpha1.JournalEntry) []string {
	var out []string
	for _, je := range journal {
		if je.Kind == "control" {
			out = append(out, je.Detail+" by "+je.By)
		}
	}
	return out
}

// TestKubectlPlugin runs `crossfade controller --cutovers` as a process and drives its
// Cutovers through the binary run as kubectl-crossfade (a link in a temporary
// directory): pause, resume and promote one to Completed, abort another to RolledBack;
// each is journaled as the user the API server authenticated (SelfSubjectReview), and
// `status --watch` ends with the phase: 0 for Completed, 1 for RolledBack.
func TestKubectlPlugin(t *testing.T) {
	e := startCutoverEnv(t)
	e.controller(t, "crossfade-1")
	p := e.plugin(t)
	who := kubetest.AdminUser

	// A pause of an hour at each step: only a promote moves the run past its first step.
	e.apply(t, "app", "app.example.com", "[0, 50, 100]", "1h")
	e.waitPhase(t, "app", v1alpha1.PhaseProgressing, 60*time.Second)

	code, out := p.run(t, "pause", "app")
	if code != 0 || !strings.Contains(out, "acting as "+who+" (authenticated by the API server (SelfSubjectReview))") || !strings.Contains(out, "Cutover default/app: Paused") {
		t.Fatalf("kubectl crossfade pause app: exit %d, want 0, acting as %s, and the Paused status:\n%s", code, who, out)
	}
	c := e.get(t, "app")
	if a := c.Status.LastAction; !c.Spec.Paused || a == nil || a.Command != "pause" || a.By != who {
		t.Errorf("after pause: spec.paused %t, lastAction %+v; want true, a pause by %s", c.Spec.Paused, a, who)
	}
	eventually(t, 30*time.Second, "the paused-by annotation consumed once the pause was sent", func() (bool, string) {
		v, ok := e.get(t, "app").Annotations[v1alpha1.PausedByAnnotation]
		return !ok, v
	})

	code, out = p.run(t, "resume", "app")
	if code != 0 || strings.Contains(out, "Cutover default/app: Paused") {
		t.Fatalf("kubectl crossfade resume app: exit %d, want 0 and a status that is not Paused:\n%s", code, out)
	}

	code, out = p.run(t, "promote", "app")
	if code != 0 || !regexp.MustCompile(`promote default/app \(id k-[0-9a-f]{12}\): journaled as "promote" by `+who).MatchString(out) {
		t.Fatalf("kubectl crossfade promote app: exit %d, want 0 and the journal entry of the promote by %s:\n%s", code, who, out)
	}
	if code, out = p.run(t, "status", "app", "--watch"); code != 0 || !strings.Contains(out, "Cutover default/app: Completed") {
		t.Fatalf("kubectl crossfade status app --watch: exit %d, want 0 once Completed:\n%s", code, out)
	}
	c = e.get(t, "app")
	got := strings.Join(controls(c.Status.Journal), ", ")
	if want := "pause by " + who + ", resume by " + who + ", promote by " + who; got != want {
		t.Errorf("Cutover app's control entries: %s; want %s", got, want)
	}
	if a := c.Status.LastAction; a == nil || a.Command != "promote" || a.By != who || !strings.HasPrefix(a.ID, "k-") {
		t.Errorf("Cutover app's lastAction %+v: want promote by %s with the plugin's id", a, who)
	}
	if w := e.weights(t, "app.example.com"); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("app.example.com after the promote: %v, want blue 0, green 100", w)
	}

	// Released: the controller answers with what it deleted, under the command's id.
	code, out = p.run(t, "release", "app", "--force")
	if code != 0 || !regexp.MustCompile(`release default/app \(id k-[0-9a-f]{12}\)`).MatchString(out) {
		t.Fatalf("kubectl crossfade release app --force: exit %d, want 0 and what the controller did:\n%s", code, out)
	}

	// Aborted: rolled back to the start, and status --watch says so with exit 1.
	e.apply(t, "web", "web.example.com", "[50, 100]", "1h")
	e.waitPhase(t, "web", v1alpha1.PhaseProgressing, 60*time.Second)
	code, out = p.run(t, "abort", "web")
	if code != 0 || !strings.Contains(out, `journaled as "abort" by `+who) {
		t.Fatalf("kubectl crossfade abort web: exit %d, want 0 and the journal entry of the abort by %s:\n%s", code, who, out)
	}
	if code, out = p.run(t, "status", "web", "--watch"); code != 1 || !strings.Contains(out, "ended RolledBack") {
		t.Fatalf("kubectl crossfade status web --watch: exit %d, want 1 once RolledBack:\n%s", code, out)
	}
	if got := controls(e.get(t, "web").Status.Journal); len(got) != 1 || got[0] != "abort by "+who {
		t.Errorf("Cutover web's control entries: %v; want one abort by %s", got, who)
	}
	if w := e.weights(t, "web.example.com"); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("web.example.com after the abort: %v, want blue 100, green 0", w)
	}

	// Paused on drift (a writer that ignores the authority record moved a weight
	// mid-hold): resume shows the weights and stops; --after-drift sends the resume
	// command, journaled as the user.
	if code, out := p.run(t, "release", "web", "--force"); code != 0 {
		t.Fatalf("kubectl crossfade release web --force: exit %d:\n%s", code, out)
	}
	e.apply(t, "drift", "web.example.com", "[50, 100]", "1h")
	eventually(t, 60*time.Second, "Cutover drift holding its first step", func() (bool, string) {
		w := e.weights(t, "web.example.com")
		return w["green"] == 50, fmt.Sprint(w)
	})
	e.foreignWeight(t, "web.example.com", "blue", 30)
	eventually(t, 60*time.Second, "Cutover drift paused on drift", func() (bool, string) {
		c := e.get(t, "drift")
		return c.Status.Phase == v1alpha1.PhasePaused && meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionStalled), string(c.Status.Phase)
	})
	code, out = p.run(t, "resume", "drift")
	if code != 1 || !strings.Contains(out, "paused on drift") || !strings.Contains(out, "kubectl crossfade resume drift --after-drift") || !strings.Contains(out, "by drift: ") {
		t.Fatalf("kubectl crossfade resume drift: exit %d, want 1, the weights found and how to go on from them:\n%s", code, out)
	}
	if got := controls(e.get(t, "drift").Status.Journal); len(got) != 0 {
		t.Fatalf("resume without --after-drift journaled %v: want nothing sent", got)
	}
	code, out = p.run(t, "resume", "drift", "--after-drift")
	if code != 0 || !strings.Contains(out, `journaled as "resume" by `+who) {
		t.Fatalf("kubectl crossfade resume drift --after-drift: exit %d, want 0 and the journal entry of the resume by %s:\n%s", code, who, out)
	}
	if code, out := p.run(t, "abort", "drift"); code != 0 {
		t.Fatalf("kubectl crossfade abort drift: exit %d:\n%s", code, out)
	}

	// The same binary as `crossfade kubectl`, and a Cutover that is not there.
	code, out = e.cli(t, "kubectl", "get", "--kubeconfig", e.kc.Kubeconfig)
	if code != 0 || !regexp.MustCompile(`(?m)^app\s+Completed\s+3/3\s+blue=0,green=100\s`).MatchString(out) || !regexp.MustCompile(`(?m)^web\s+RolledBack\s`).MatchString(out) {
		t.Errorf("crossfade kubectl get: exit %d, want a table with app Completed and web RolledBack:\n%s", code, out)
	}
	if code, out = p.run(t, "abort", "nope"); code != 1 || !strings.Contains(out, "no Cutover nope in namespace default") {
		t.Errorf("kubectl crossfade abort nope: exit %d, want 1 and `no Cutover nope in namespace default`:\n%s", code, out)
	}
}

// foreignWeight sets member's weight of name as a writer that ignores the authority
// record would: its record set deleted as read and created with weight, in one batch.
func (e *cutoverEnv) foreignWeight(t *testing.T, name, member string, weight int64) {
	t.Helper()
	zones, err := e.zone.DNS.Zones(t.Context())
	if err != nil || len(zones) == 0 {
		t.Fatalf("zones: %v", err)
	}
	recs, err := e.zone.DNS.Records(t.Context(), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == "A" && r.Name == name && r.SetIdentifier == member {
			c := r.Clone()
			c.Policy = endpoint.WeightedPolicy(weight)
			if err := e.zone.DNS.Apply(t.Context(), zones[0], changes.Batch{{Action: changes.Delete, Endpoint: r}, {Action: changes.Create, Endpoint: c}}); err != nil {
				t.Fatalf("set %s's weight of %s to %d: %v", member, name, weight, err)
			}
			return
		}
	}
	t.Fatalf("no A member %s of %s", member, name)
}
