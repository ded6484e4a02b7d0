package main

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// TestIsKubectlPlugin: the binary is the plugin when run through a link named
// kubectl-crossfade, wherever it lies; as crossfade, or any other name, it is not.
func TestIsKubectlPlugin(t *testing.T) {
	for _, tc := range []struct {
		argv0 string
		want  bool
	}{
		{"kubectl-crossfade", true},
		{"/usr/local/bin/kubectl-crossfade", true},
		{"./kubectl-crossfade.exe", true},
		{"crossfade", false},
		{"/usr/local/bin/crossfade", false},
		{"kubectl-crossfade-old", false},
		{"/opt/kubectl-crossfade/crossfade", false},
	} {
		if got := isKubectlPlugin(tc.argv0); got != tc.want {
			t.Errorf("isKubectlPlugin(%q) = %v, want %v", tc.argv0, got, tc.want)
		}
	}
}

// runPlugin runs the plugin's command tree with args, as main does when run as
// kubectl-crossfade.
func runPlugin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	root := newPluginRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	code := cli.Execute(t.Context(), root, &errOut)
	return code, out.String(), errOut.String()
}

// TestPluginCommandLine: as the plugin, the commands are at the top and are named as
// kubectl runs them ("kubectl crossfade pause"), in the help and in usage errors, with
// kubectl's flags.
func TestPluginCommandLine(t *testing.T) {
	code, out, _ := runPlugin(t, "--help")
	for _, w := range []string{"kubectl crossfade [command]", "get", "status", "pause", "resume", "promote", "abort", "release", "--kubeconfig", "--context", "-n, --namespace"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("kubectl crossfade --help: exit %d, lacks %q:\n%s", code, w, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pause"}, "kubectl crossfade pause: missing argument NAME"},
		{[]string{"promote", "app", "--force"}, "kubectl crossfade promote: unknown flag: --force"},
		{[]string{"get", "-o", "wide"}, `kubectl crossfade get: --output "wide": want yaml or json`},
		{[]string{"abrot", "app"}, `kubectl crossfade: unknown command "abrot"`},
	} {
		code, _, stderr := runPlugin(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("kubectl crossfade %s: exit %d, stderr:\n%s\nwant %d and %q", strings.Join(tc.args, " "), code, stderr, cli.ExitUsage, tc.want)
		}
	}
}

// TestFinalErr: status --watch exits 0 for Completed only; RolledBack and Failed say how
// the cutover ended.
func TestFinalErr(t *testing.T) {
	ready := []metav1.Condition{{Type: v1alpha1.ConditionReady, Message: "rolled back: gate public failed"}}
	for _, tc := range []struct {
		phase v1alpha1.Phase
		want  string
	}{
		{v1alpha1.PhaseCompleted, ""},
		{v1alpha1.PhaseRolledBack, "cutover shop/app ended RolledBack: rolled back: gate public failed"},
		{v1alpha1.PhaseFailed, "cutover shop/app ended Failed"},
	} {
		c := &v1alpha1.Cutover{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "shop"}, Status: v1alpha1.CutoverStatus{Phase: tc.phase, Conditions: ready}}
		err := finalErr(c)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("finalErr(%s) = %v, want %q", tc.phase, err, tc.want)
		}
	}
}
