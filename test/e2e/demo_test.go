package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMakeDemo runs `make demo` itself, as a newcomer does (non-interactive, CI=true), and
// checks its exit status and report: every step passed, the final split is 0/100, the
// clients saw no failed request, and the old cluster was declared retirable.
func TestMakeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make demo")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "demo")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CI=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	text := out.String()
	if err != nil {
		t.Fatalf("make demo: %v after %s\n%s", err, took, text)
	}
	t.Logf("make demo took %s", took.Round(time.Second))
	for _, want := range []string{
		"cutover demo: completed",
		"demo: OK — every step passed, the final split is blue=0 green=100",
		", 0 failed",
		"retire: blue retirable",
		"dashboard: http://127.0.0.1:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	passed := regexp.MustCompile(`(?m)^\s+step \d of 4\s+.*\bpassed\b`).FindAllString(text, -1)
	if len(passed) != 4 {
		t.Errorf("%d steps passed in the report, want 4", len(passed))
	}
	if t.Failed() {
		t.Logf("output:\n%s", text)
	}
}

// TestDemoKeepStopsCleanly: with --keep the demo stays up after the cutover (its
// dashboard answers), and Ctrl-C then stops everything: the process exits 0, the
// dashboard's port is closed, and the temporary directory is gone.
func TestDemoKeepStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo")
	}
	demo := startDemo(t, "--keep", "--pause", "1s", "--log-level", "warn")
	lines := demo.lines
	var seen []string
	var dashboard, manifests string
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(strings.Join(seen, "\n"), "--keep: everything stays up") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("demo ended before --keep:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if u, ok := strings.CutPrefix(l, "dashboard: "); ok {
				dashboard = u
			}
			if _, rest, ok := strings.Cut(l, " from "); ok && strings.HasPrefix(l, "cluster blue") {
				manifests, _, _ = strings.Cut(rest, " ")
			}
		case <-deadline:
			t.Fatalf("no --keep line:\n%s", strings.Join(seen, "\n"))
		}
	}
	resp, err := http.Get(dashboard + "api/v1/state")
	if err != nil {
		t.Fatalf("dashboard while kept: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("dashboard while kept: %s", resp.Status)
	}
	demo.interrupt(t, 30*time.Second)
	if _, err := http.Get(dashboard); err == nil {
		t.Errorf("dashboard %s still answers after the demo stopped", dashboard)
	}
	// manifests is <tmp>/crossfade-demo-*/blue/manifests.
	tmp := filepath.Dir(filepath.Dir(manifests))
	if !strings.Contains(tmp, "crossfade-demo-") {
		t.Fatalf("could not find the demo's directory in %q", manifests)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the demo left %s behind: %v", tmp, err)
	}
}
