package objectstatus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// toolCases are the statuses the tools are tested against: those the engine-made journals
// project to, a failure, and the same objects seen before the controller observed their
// latest generation.
func toolCases(t *testing.T) map[string]*v1alpha1.Cutover {
	t.Helper()
	cases := projected(t)
	failed := object(1)
	Project(failed, nil, &spec.Plan{Steps: make([]spec.PlanStep, 3)}, t0, errors.New("spec.steps[0]: invalid"))
	cases["failed"] = failed
	// spec.paused set on a completed cutover (the one field a started one may change):
	// generation 2, status still 1.
	lagging := cases[scCompleted].DeepCopy()
	lagging.Generation = 2
	cases["completed, generation not yet observed"] = lagging
	lagging = cases[scGateFailed].DeepCopy()
	lagging.Generation = 2
	cases["rolled back, generation not yet observed"] = lagging
	cases["no status yet"] = object(1)
	return cases
}

// TestKstatus: sigs.k8s.io/cli-utils kstatus (what Flux's health checks and `kubectl
// wait`-like tools compute) reads each phase as the package doc's table says: Current
// only for Completed, InProgress while pending, progressing or paused by a person, Failed
// once rolled back or failed and while paused by drift, and InProgress whenever the
// status describes an older generation.
func TestKstatus(t *testing.T) {
	cases := toolCases(t)
	tests := []struct {
		name string
		want status.Status
	}{
		{"pending", status.InProgressStatus},
		{scProgressing, status.InProgressStatus},
		{scPausedByCommand, status.InProgressStatus},
		{scDriftPaused, status.FailedStatus},
		{scCompleted, status.CurrentStatus},
		{scResumedCompleted, status.CurrentStatus},
		{scGateFailed, status.FailedStatus},
		{scAborted, status.FailedStatus},
		{scDriftAborted, status.FailedStatus},
		{"failed", status.FailedStatus},
		{"completed, generation not yet observed", status.InProgressStatus},
		{"rolled back, generation not yet observed", status.InProgressStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := cases[tc.name]
			if !ok {
				t.Fatalf("no case %q", tc.name)
			}
			res, err := status.Compute(unstructuredOf(t, c))
			if err != nil {
				t.Fatalf("kstatus of cutover %s (%s): %v", c.Name, c.Status.Phase, err)
			}
			if res.Status != tc.want {
				t.Errorf("kstatus %s (%s), want %s; phase %s, %s", res.Status, res.Message, tc.want, c.Status.Phase, conditionsOf(c))
			}
			if res.Status != status.CurrentStatus && res.Message == "" {
				t.Errorf("kstatus %s with no message: a person is told nothing", res.Status)
			}
		})
	}
}

// argoHealth runs deploy/argocd/cutover-health.lua on u as Argo CD runs a health check
// (the object as the Lua table obj; the script returns {status, message}).
func argoHealth(t *testing.T, u *unstructured.Unstructured) (health, message string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "argocd", "cutover-health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	// Argo CD opens the base, table, string and math libraries for health scripts.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, u.Object))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("cutover-health.lua on cutover %s: %v", u.GetName(), err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("cutover-health.lua returned %s, want a table", L.Get(-1).Type())
	}
	return lua.LVAsString(hs.RawGetString("status")), lua.LVAsString(hs.RawGetString("message"))
}

// toLua converts a decoded JSON value to Lua as Argo CD does: objects and arrays to
// tables, numbers to numbers.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tb := L.NewTable()
		for k, e := range v {
			tb.RawSetString(k, toLua(L, e))
		}
		return tb
	case []any:
		tb := L.NewTable()
		for _, e := range v {
			tb.Append(toLua(L, e))
		}
		return tb
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	default:
		panic(fmt.Sprintf("toLua: %T", v))
	}
}

// TestArgoCDHealth: the Argo CD health check in deploy/argocd gives, for each status the
// engine's journals project to, the health the README promises, with the controller's
// own line as its message; Progressing while the controller has not observed the latest
// spec, or has not written a status yet.
func TestArgoCDHealth(t *testing.T) {
	cases := toolCases(t)
	tests := []struct {
		name, health string
		// message is the message wanted; "" wants the Ready condition's message.
		message string
	}{
		{"pending", "Progressing", ""},
		{scProgressing, "Progressing", ""},
		{scPausedByCommand, "Suspended", ""},
		{scDriftPaused, "Suspended", ""},
		{scCompleted, "Healthy", ""},
		{scResumedCompleted, "Healthy", ""},
		{scGateFailed, "Degraded", ""},
		{scAborted, "Degraded", ""},
		{scDriftAborted, "Degraded", ""},
		{"failed", "Degraded", ""},
		{"completed, generation not yet observed", "Progressing", "Waiting for the controller to observe generation 2 (status describes generation 1, phase Completed)"},
		{"rolled back, generation not yet observed", "Progressing", "Waiting for the controller to observe generation 2 (status describes generation 1, phase RolledBack)"},
		{"no status yet", "Progressing", "Waiting for the crossfade controller (crossfade controller --cutovers) to take up the cutover"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := cases[tc.name]
			if !ok {
				t.Fatalf("no case %q", tc.name)
			}
			want := tc.message
			if want == "" {
				want = readyMessage(c)
				if want == "" {
					t.Fatalf("cutover %s (%s) has no Ready message", c.Name, c.Status.Phase)
				}
			}
			health, msg := argoHealth(t, unstructuredOf(t, c))
			if health != tc.health || msg != want {
				t.Errorf("health %s %q\nwant   %s %q", health, msg, tc.health, want)
			}
		})
	}
	// The message says which pause it is.
	if _, msg := argoHealth(t, unstructuredOf(t, cases[scDriftPaused])); !strings.Contains(msg, "by drift") {
		t.Errorf("drift pause message %q: want it to say the pause is drift's", msg)
	}
}

// TestArgoCDHealthUnknownPhase: a phase the script does not know (a newer controller's)
// is Unknown, naming it, not Healthy.
func TestArgoCDHealthUnknownPhase(t *testing.T) {
	c := object(1)
	c.Status.Phase = "Retiring"
	c.Status.ObservedGeneration = 1
	health, msg := argoHealth(t, unstructuredOf(t, c))
	if health != "Unknown" || !strings.Contains(msg, "Retiring") {
		t.Errorf("health %s %q, want Unknown naming the phase", health, msg)
	}
}
