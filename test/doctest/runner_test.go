package doctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

// runPage runs src as a page with the harness (no crossfade binary, nothing copied),
// bounding each block's run and each background block's readiness by bound.
func runPage(t *testing.T, src string, bound time.Duration) (*runner, error) {
	t.Helper()
	p, err := Parse("page.md", md(src))
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, p, "", nil)
	r.block, r.ready = bound, bound
	return r, r.run()
}

// TestRunner: the harness runs a page's blocks in order, as one terminal would, and
// fails on a non-zero exit, on output that does not match, on a block that hangs and on
// a background process that is not ready or ends; each failure names the page's line
// and shows what ran and what it printed.
func TestRunner(t *testing.T) {
	testenv.LookPath(t, "bash", "bash")
	// A developer's own AWS setting and state directory never reach a page.
	t.Setenv("AWS_PROFILE", "production")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, tc := range []struct {
		name string
		src  string
		want []string // substrings of the error, in order; none for success
		// bound is the block and readiness bound: 5 s unless set (short for a case that
		// waits for it).
		bound time.Duration
	}{
		{name: "blocks in order, output matched", src: "'''sh run\necho one > f\n'''\n'''sh run\ncat f; echo two\n'''\n'''text output\none\ntwo\n'''\n"},
		{name: "a non-zero exit", src: "'''sh run\necho before\nfalse\necho after\n'''\n",
			want: []string{"page.md:1: " + fence + "sh run: exit status 1", "--- output ---\nbefore\n"}},
		{name: "pipefail", src: "'''sh run\nfalse | cat\n'''\n", want: []string{"page.md:1: ", "exit status 1"}},
		{name: "an unset variable", src: "'''sh run\necho \"$NOT_SET_ANYWHERE\"\n'''\n", want: []string{"exit status 1", "unbound variable"}},
		{name: "a later block fails", src: "'''sh run\ntrue\n'''\nthen:\n'''sh run\nexit 3\n'''\n", want: []string{"page.md:5: ", "exit status 3"}},
		{name: "output mismatch", src: "'''sh run\necho hello\n'''\n'''text output\nhello\nworld\n'''\n",
			want: []string{"page.md:1: " + fence + "sh run: the output does not match the " + fence + "text output block at line 4: no line \"world\" after output line 1", "--- expected ---\nhello\nworld\n", "--- output ---\nhello\n"}},
		{name: "exports and cd carry over", src: "'''sh run\nexport GREETING=hi\nmkdir -p sub/dir && cd sub/dir\n'''\n'''sh run\necho \"$GREETING from $(basename \"$PWD\")\"\n'''\n'''text output\nhi from dir\n'''\n"},
		{name: "no standard input", src: "'''sh run\nif read -r line; then echo \"read $line\"; else echo eof; fi\ncat\n'''\n'''text output\neof\n'''\n"},
		{name: "documented ports moved in commands and output", src: "'''sh run\necho 127.0.0.1:10080 -p 10053\necho http://127.0.0.1:10080 | grep -v ':10080$'\n'''\n'''text output\n127.0.0.1:10080 -p 10053\n'''\n"},
		{name: "sandbox credentials and loopback-only proxies", src: "'''sh run\necho \"$AWS_ACCESS_KEY_ID ${AWS_PROFILE:-no profile} ${XDG_STATE_HOME:-no state} $HOME\"\necho \"$https_proxy $HTTP_PROXY\"\n'''\n'''text output\ndoctest no profile no state .../home\nhttp://127.0.0.1:... http://127.0.0.1:...\n'''\n"},
		{name: "a page's own credentials are not overridden", src: "'''sh run\necho \"${AWS_ACCESS_KEY_ID:-unset} ${AWS_SECRET_ACCESS_KEY:-unset}\"\nexport AWS_ACCESS_KEY_ID=mine\n'''\n'''text output\nunset doctest\n'''\n"},
		{name: "a page's wait waits for its own processes alone", src: "'''sh run\nsleep 0.1 &\nwait\necho done\n'''\n'''text output\ndone\n'''\n"},
		{name: "bin comes first on PATH", src: "'''sh run\necho \"$PATH\"\n'''\n'''text output\n.../bin:...\n'''\n"},
		{name: "a hang", src: "'''sh run\necho started\nsleep 1000\n'''\n", want: []string{"page.md:1: " + fence + "sh run: still running after 300ms: killed", "started"}, bound: 300 * time.Millisecond},
		{name: "background ready by its output", src: "'''sh run background\necho starting; sleep 0.2; echo listening\nexec sleep 1000\n'''\n'''text output\nlistening\n'''\n'''sh run\necho next\n'''\n"},
		{name: "background never ready", src: "'''sh run background\necho starting\nexec sleep 1000\n'''\n'''text output\nlistening\n'''\n",
			want: []string{"page.md:1: " + fence + "sh run background: not ready after 300ms", `no line "listening"`, "starting"}, bound: 300 * time.Millisecond},
		{name: "background ends before it is ready", src: "'''sh run background\necho bye\n'''\n'''text output\nlistening\n'''\n",
			want: []string{"page.md:1: " + fence + "sh run background: ended before it was ready", "bye"}},
		{name: "background ends before the page", src: "'''sh run background\necho bye\n'''\n'''sh run\nsleep 0.5\n'''\n",
			want: []string{"exited on its own", "--- background page.md:1 (exited: <nil>), last lines ---\nbye"}},
		{name: "a failure shows the background's log", src: "'''sh run background\necho sandbox says hi\nexec sleep 1000\n'''\n'''sh run\nsleep 0.5; false\n'''\n",
			want: []string{"page.md:5: ", "--- background page.md:1 (running), last lines ---\nsandbox says hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound := tc.bound
			if bound == 0 {
				bound = 5 * time.Second
			}
			_, err := runPage(t, tc.src, bound)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("run: got no error, want %q", tc.want)
			}
			rest := err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("run: error\n%s\nlacks (in order) %q", err, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestRunnerKillsWhatItStarted: when a page fails, every process it started is gone
// once the test's cleanup has run: a background block with what it forked, and what a
// block left running behind it.
func TestRunnerKillsWhatItStarted(t *testing.T) {
	testenv.LookPath(t, "bash", "bash")
	pids := t.TempDir()
	src := "'''sh run background\nsleep 1000 &\necho $! > " + pids + "/forked\necho ready\nexec sleep 1000\n'''\n'''text output\nready\n'''\n" +
		"'''sh run\nsleep 1000 &\necho $! > " + pids + "/left\n'''\n'''sh run\nfalse\n'''\n"
	bg := 0
	t.Run("page", func(t *testing.T) {
		r, err := runPage(t, src, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "page.md:14: ") {
			t.Errorf("run: got %v, want the failure at page.md:14", err)
		}
		if len(r.bg) != 1 {
			t.Fatalf("background processes: got %d, want 1", len(r.bg))
		}
		bg = r.bg[0].Pid()
		// The block that left a sleep behind has ended: its sleep is gone already.
		waitGone(t, "the sleep a block left behind", readPid(t, filepath.Join(pids, "left")))
	})
	if bg == 0 {
		t.Skip("the subtest page did not run (-run filtered it out)")
	}
	// The subtest's cleanup has run: the background block and its fork are gone.
	waitGone(t, "the background block", bg)
	waitGone(t, "the background block's fork", readPid(t, filepath.Join(pids, "forked")))
}

// TestBlocksDieWithTheTest: when the test process dies without running its cleanups
// (go test -timeout panics), what the page started dies too, the sandbox bash started
// included, not only bash (which the kernel kills).
func TestBlocksDieWithTheTest(t *testing.T) {
	testenv.LookPath(t, "bash", "bash")
	// A stand-in for the test process, which the test can kill.
	stand := exec.Command("sleep", "1000")
	if err := stand.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Process.Kill(); _ = stand.Wait() })
	pids := t.TempDir()
	p, err := Parse("page.md", md("'''sh run background\nsleep 1000 &\necho $! > "+pids+"/forked\necho ready\nwait\n'''\n'''text output\nready\n'''\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, p, "", nil)
	r.watch = stand.Process.Pid
	if err := r.run(); err != nil {
		t.Fatalf("run: %v", err)
	}
	forked := readPid(t, filepath.Join(pids, "forked"))
	if err := stand.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = stand.Wait()
	waitGone(t, "what the background block started", forked)
	waitGone(t, "the background block", r.bg[0].Pid())
}

// readPid reads the process id a page wrote to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the page's pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the page's pid file %s: %v", path, err)
	}
	return pid
}

// waitGone fails t unless process pid has ended (a zombie has: it only waits to be
// reaped by whoever adopted it). A killed process takes a moment to go; the bound is
// against a hang.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// The state follows the command's closing parenthesis.
		if s := string(stat); strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s (pid %d) is still running: %s", what, pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
