package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestCutoverPlanSummary: `cutover plan` prints a screenful by default (one line per step
// with its weights and hold, one per gate with its check now, the rollback path), the
// batches only with --batches; and it exits non-zero when a gate fails at the current
// weights, naming the gate and what it measured, unless --allow-failing-gates.
func TestCutoverPlanSummary(t *testing.T) {
	sb, aws, zone := cutoverZone(t, 100, 0)
	state := t.TempDir()
	planFile := cutoverPlan(t, sb, "app", "blue", "green")

	out, code := runCutover(t, sb, state, "plan", planFile)
	if code != 0 {
		t.Fatalf("plan exited %d:\n%s", code, out)
	}
	mustContain(t, "plan summary", out,
		"cutover app: blue → green",
		"current weights blue=100 green=0",
		"owned by blue",
		"  step 1 of 4  blue=100 green=0  hold 1s       gates answers\n",
		"  step 3 of 4  blue=50 green=50  hold 1s       gates answers\n",
		"gate answers (dns) now: pass: ",
		"rollback (immediate, each stop held 1s):\n  from any step: blue=100 green=0\n",
		"--batches",
	)
	if strings.Contains(out, `"Weight"`) || strings.Count(out, "\n") > 24 {
		t.Errorf("plan summary prints batches, or more than a screenful (%d lines):\n%s", strings.Count(out, "\n"), out)
	}
	full, code := runCutover(t, sb, state, "plan", planFile, "--batches")
	if code != 0 || !strings.Contains(full, "step 3 of 4: blue=50 green=50") || !strings.Contains(full, `"Weight": 50`) {
		t.Errorf("plan --batches exited %d:\n%s", code, full)
	}

	// green's backend fails: the gate fails at the current weights, and plan says so.
	green := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer green.Close()
	blue := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("blue")) }))
	defer blue.Close()
	gated := strings.Replace(readFile(t, planFile), "  gates:\n", fmt.Sprintf(`  gates:
    - name: health
      http:
        clusters: {blue: %q, green: %q}
        requests: 4
`, blue.URL, green.URL), 1)
	gatedFile := filepath.Join(t.TempDir(), "gated.yaml")
	writeFile(t, gatedFile, gated)
	out, code = runCutover(t, sb, state, "plan", gatedFile)
	if code == 0 {
		t.Fatalf("plan with a failing gate exited 0:\n%s", out)
	}
	mustContain(t, "plan with a failing gate", out,
		"gate health (http) now: FAIL: ", // the summary is printed all the same
		"crossfade: gate health (http) fails at the current weights blue=100 green=0: ",
		"green", "--allow-failing-gates",
	)
	if out, code := runCutover(t, sb, state, "plan", gatedFile, "--allow-failing-gates"); code != 0 || !strings.Contains(out, "gate health (http) now: FAIL") {
		t.Errorf("plan --allow-failing-gates exited %d:\n%s", code, out)
	}
	if w := aws.weightsOf(zone); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("plan changed the zone: %v", w)
	}
}

// TestCutoverStatusAfterResume kills a run mid-step, then `status` says no runner holds
// it; resumed, `status` names the runner (pid, host, since) and the write the resume took
// up, and so does the report at the end.
func TestCutoverStatusAfterResume(t *testing.T) {
	sb, aws, zone := cutoverZone(t, 100, 0)
	state := t.TempDir()
	planFile := cutoverPlan(t, sb, "app", "blue", "green")
	// Long holds: the run is killed, and later promoted, while it holds step 1.
	writeFile(t, planFile, strings.Replace(readFile(t, planFile), "pause: 1s", "pause: 60s", 1))
	journalPath := filepath.Join(state, "app.journal")

	first, firstOut := cutoverCmd(t, sb, state, "run", planFile)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	waitJournalFor(t, journalPath, "step 1 INSYNC", func(es []journal.Entry) bool { return hasEntry(es, "insync", 0, 0) }, firstOut)
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()

	out, code := runCutover(t, sb, state, "status", planFile)
	if code != 0 || !strings.Contains(out, "cutover app: unfinished") ||
		!strings.Contains(out, "runner now: none on this machine; the run stopped unfinished: `crossfade cutover run --resume "+planFile+"` continues it") {
		t.Errorf("status after the kill (%d):\n%s", code, out)
	}

	resumed, resumedOut := cutoverCmd(t, sb, state, "run", planFile, "--resume")
	if err := resumed.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Process.Kill(); resumed.Wait() })
	waitJournalFor(t, journalPath, "the resumed run's step 1 INSYNC", func(es []journal.Entry) bool {
		for i, e := range es {
			if e.Kind == "resumed" {
				return hasEntry(es, "insync", 0, i)
			}
		}
		return false
	}, resumedOut)
	host, _ := os.Hostname()
	out, code = runCutover(t, sb, state, "status", planFile)
	redo := "redoing the write of step 1 of 4 (blue=100 green=0), which the run before it had seen INSYNC"
	for _, want := range []string{
		fmt.Sprintf("runner now: pid %d on host %s (", resumed.Process.Pid, host),
		"last resumed at ", fmt.Sprintf("(pid %d on %s): %s", resumed.Process.Pid, host, redo),
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status while resumed (%d) lacks %q:\n%s", code, want, out)
		}
	}
	if out, code := runCutover(t, sb, state, "status", planFile, "--json"); code != 0 ||
		!strings.Contains(out, fmt.Sprintf(`"pid": %d`, resumed.Process.Pid)) || !strings.Contains(out, `"stage": "insync"`) {
		t.Errorf("status --json (%d):\n%s", code, out)
	}

	if out, code := runCutover(t, sb, state, "promote", planFile); code != 0 {
		t.Fatalf("promote (%d): %s", code, out)
	}
	done := make(chan error, 1)
	go func() { done <- resumed.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("resumed run: %v\n%s", err, resumedOut)
		}
	case <-time.After(time.Minute):
		t.Fatalf("promoted run did not end:\n%s", resumedOut)
	}
	if !strings.Contains(resumedOut.String(), "cutover app: completed") || !strings.Contains(resumedOut.String(), redo) {
		t.Errorf("the report lacks the resume:\n%s", resumedOut)
	}
	if w := aws.weightsOf(zone); w["green"] != 100 {
		t.Errorf("weights after the resumed run %v", w)
	}
	if out, _ := runCutover(t, sb, state, "status", planFile); !strings.Contains(out, "runner now: none (the cutover has ended)") {
		t.Errorf("status after the end:\n%s", out)
	}
}

// TestCutoverLogsKeepOffTheTable runs a cutover on a terminal (a pty from script(1)),
// stdout and stderr both on it, with info logs: every log line stays on the screen, whole,
// and no stale row of the progress table is left behind.
func TestCutoverLogsKeepOffTheTable(t *testing.T) {
	needTool(t, "script", "bsdutils")
	sb, _, _ := cutoverZone(t, 100, 0)
	state := t.TempDir()
	planFile := cutoverPlan(t, sb, "app", "blue", "green")
	args := []string{crossfadeBinary(t), "cutover", "run", planFile, "--state-dir", state, "--aws-endpoint", sb.APIURL(), "--log-level", "info"}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	cmd := exec.Command("script", "-qefc", strings.Join(quoted, " "), "/dev/null")
	cmd.Env = crossfadeEnv()
	var raw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &raw, &raw
	if err := cmd.Run(); err != nil {
		t.Fatalf("cutover run on a pty: %v\n%q", err, raw.String())
	}
	if !bytes.Contains(raw.Bytes(), []byte("\x1b[1A")) {
		t.Fatalf("no table was drawn (not on a terminal?):\n%q", raw.String())
	}
	screen := renderScreen(raw.String())
	written := 0
	for _, l := range screen {
		if strings.Contains(l, `msg="weights written"`) {
			written++
		}
		if strings.Contains(l, "holding") {
			t.Errorf("stale table row on the screen: %q", l)
		}
	}
	if written != 4 {
		t.Errorf("%d whole \"weights written\" log lines on the screen, want 4 (one per step):\n%s", written, strings.Join(screen, "\n"))
	}

	// With --log-file the logs go there, and not to the terminal at all.
	sb, _, _ = cutoverZone(t, 100, 0)
	logFile := filepath.Join(t.TempDir(), "run.log")
	planFile = cutoverPlan(t, sb, "app", "blue", "green")
	run, out := cutoverCmd(t, sb, t.TempDir(), "run", planFile, "--log-file", logFile)
	run.Args = append(run.Args, "--log-level", "info") // the last --log-level counts
	if err := run.Run(); err != nil || strings.Contains(out.String(), "weights written") {
		t.Errorf("run --log-file (%v) logged to the terminal:\n%s", err, out)
	}
	if logs := readFile(t, logFile); strings.Count(logs, `msg="weights written"`) != 4 {
		t.Errorf("log file:\n%s", logs)
	}
}

// renderScreen replays what a terminal shows for out: text, CR, LF (the pty's CRLF too),
// cursor up (ESC [1A) and clear line (ESC [2K).
func renderScreen(out string) []string {
	var lines [][]rune
	row, col := 0, 0
	for len(out) > 0 {
		if rest, ok := strings.CutPrefix(out, "\x1b[1A"); ok {
			row, out = max(row-1, 0), rest
			continue
		}
		if rest, ok := strings.CutPrefix(out, "\x1b[2K"); ok {
			if row < len(lines) {
				lines[row] = nil
			}
			out = rest
			continue
		}
		r := []rune(out[:min(len(out), 4)])[0]
		out = out[len(string(r)):]
		switch r {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
		default:
			for len(lines) <= row {
				lines = append(lines, nil)
			}
			for len(lines[row]) <= col {
				lines[row] = append(lines[row], ' ')
			}
			lines[row][col] = r
			col++
		}
	}
	var screen []string
	for _, l := range lines {
		screen = append(screen, strings.TrimRight(string(l), " "))
	}
	return screen
}

// hasEntry reports whether es holds an entry of kind about step at index from or later.
func hasEntry(es []journal.Entry, kind string, step, from int) bool {
	for _, e := range es[from:] {
		if e.Kind == kind && e.Step == step {
			return true
		}
	}
	return false
}

// waitJournalFor waits until the journal at path satisfies cond, failing after a minute.
func waitJournalFor(t *testing.T, path, what string, cond func([]journal.Entry) bool, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if es, err := journal.Read(path); err == nil && cond(es) {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			t.Fatalf("journal never showed %s:\n%s\noutput:\n%s", what, b, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
