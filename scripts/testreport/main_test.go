package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The streams in testdata were recorded from `go test -json -count=1` (Go 1.26) on a
// throwaway module: pass (tests and parallel subtests), fail (a failing test, a failing
// subtest), skip (a skip after a log line, a skipped subtest with a two-line reason),
// build (a compile error), panic, notests (no test files), timeout (-timeout 2s on a
// sleeping test). interleaved merges the fail, skip and pass streams line by line, as
// packages running at once may; cut is the timeout stream cut before its package ended.

// TestReport: what is printed (go test's own lines, failing tests' output, never a
// passing test's), the skip list at the end, and the exit status, with and without CI.
func TestReport(t *testing.T) {
	const mod = "example.com/trrec/"
	for _, tc := range []struct {
		name       string
		streams    []string // testdata/NAME.jsonl, concatenated
		extra      string   // lines before the streams
		ci         bool
		wantStatus int
		wantSkips  []string // the lines listing the skips, in order
		want       []string // substrings of the output
		wantNot    []string // not in the output
	}{
		{name: "pass", streams: []string{"pass"}, ci: true, wantStatus: 0,
			want:    []string{"ok  \t" + mod + "pass\t", "\n0 tests skipped\n"},
			wantNot: []string{"fine", "=== RUN", "--- PASS", "FAIL"}},
		{name: "fail", streams: []string{"fail"}, wantStatus: 1,
			want: []string{"stdout from the failing test\n    f_test.go:11: got 1, want 2\n--- FAIL: TestFail (0.00s)\n",
				"    f_test.go:15: sub broke\n--- FAIL: TestSub/bad", "--- FAIL: TestSub (0.00s)\n",
				"FAIL\n" + "FAIL\t" + mod + "fail\t0.003s\n",
				"FAIL: 4 failed", "  " + mod + "fail TestFail: f_test.go:11: got 1, want 2\n", "  " + mod + "fail TestSub/bad: f_test.go:15: sub broke\n", "  " + mod + "fail\n"},
			wantNot: []string{"quiet on pass", "=== RUN", "TestSub/ok"}},
		{name: "skip, developer", streams: []string{"skip"}, wantStatus: 0,
			wantSkips: []string{
				mod + "skip TestSkipTool: s_test.go:5: buildah is not installed: install the Debian package buildah",
				mod + "skip TestSkipSub/dig: s_test.go:7: dig is not installed",
			},
			want:    []string{"ok  \t" + mod + "skip\t", "\n2 tests skipped\n"},
			wantNot: []string{"looking", "FAIL"}},
		{name: "skip, CI", streams: []string{"skip"}, ci: true, wantStatus: 1,
			wantSkips: []string{
				mod + "skip TestSkipTool: s_test.go:5: buildah is not installed: install the Debian package buildah",
				mod + "skip TestSkipSub/dig: s_test.go:7: dig is not installed",
			},
			want: []string{"FAIL: CI=true and 2 tests skipped"}},
		{name: "build failure", streams: []string{"build", "pass"}, wantStatus: 1,
			want: []string{"# " + mod + "build [" + mod + "build.test]\n", "cannot use \"s\"",
				"FAIL\t" + mod + "build [build failed]\n", "ok  \t" + mod + "pass\t", "FAIL: 1 failed", "  " + mod + "build\n"}},
		{name: "panic", streams: []string{"panic"}, wantStatus: 1,
			want: []string{"    p_test.go:6: about to\n--- FAIL: TestPanics (0.00s)\npanic: assignment to entry in nil map",
				"FAIL\t" + mod + "panic\t", "  " + mod + "panic TestPanics\n"}},
		{name: "no test files", streams: []string{"notests"}, ci: true, wantStatus: 0,
			want: []string{"?   \t" + mod + "notests\t[no test files]\n", "\n0 tests skipped\n"}},
		{name: "timeout", streams: []string{"timeout"}, wantStatus: 1,
			want: []string{"    t_test.go:9: waiting\npanic: test timed out after 2s\n", "\t\tTestHangs (2s)\n",
				"FAIL\t" + mod + "timeout\t2.006s\n", "  " + mod + "timeout\n"}},
		{name: "stream cut short", streams: []string{"cut"}, wantStatus: 1,
			want: []string{"    t_test.go:9: waiting\n", "FAIL\t" + mod + "timeout [no result: the go test -json stream ended first]\n"}},
		{name: "interleaved packages", streams: []string{"interleaved"}, wantStatus: 1,
			wantSkips: []string{
				mod + "skip TestSkipTool: s_test.go:5: buildah is not installed: install the Debian package buildah",
				mod + "skip TestSkipSub/dig: s_test.go:7: dig is not installed",
			},
			want: []string{"stdout from the failing test\n    f_test.go:11: got 1, want 2\n--- FAIL: TestFail (0.00s)\n",
				"ok  \t" + mod + "skip\t", "ok  \t" + mod + "pass\t", "FAIL\t" + mod + "fail\t", "FAIL: 4 failed"},
			wantNot: []string{"looking", "quiet on pass", "=== RUN"}},
		{name: "slowest tests, subtests not counted", wantStatus: 0,
			extra: `{"Action":"run","Package":"p","Test":"TestQuick"}
{"Action":"pass","Package":"p","Test":"TestQuick","Elapsed":0.5}
{"Action":"run","Package":"p","Test":"TestSlow"}
{"Action":"run","Package":"p","Test":"TestSlow/part"}
{"Action":"pass","Package":"p","Test":"TestSlow/part","Elapsed":90}
{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":120.25}
{"Action":"pass","Package":"p","Elapsed":121}
`,
			want:    []string{"slowest tests:\n    120.2s  p TestSlow\n      0.5s  p TestQuick\n0 tests skipped\n"},
			wantNot: []string{"TestSlow/part"}},
		{name: "a long failure message is cut", wantStatus: 1,
			extra: `{"Action":"run","Package":"p","Test":"TestLong"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"    l_test.go:3: ` + strings.Repeat("x", 400) + `\n"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"        a second line\n"}
{"Action":"fail","Package":"p","Test":"TestLong","Elapsed":1}
{"Action":"fail","Package":"p","Elapsed":1}
`,
			want: []string{"  p TestLong: l_test.go:3: " + strings.Repeat("x", 300-len("l_test.go:3: ")) + " …\n  p\n"}},
		{name: "not an event", extra: "go: downloading example.com/x v1.0.0\n", streams: []string{"pass"}, wantStatus: 0,
			want: []string{"go: downloading example.com/x v1.0.0\n", "ok  \t" + mod + "pass\t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.extra
			for _, s := range tc.streams {
				b, err := os.ReadFile(filepath.Join("testdata", s+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				in += string(b)
			}
			var out strings.Builder
			status := report(strings.NewReader(in), &out, tc.ci)
			text := out.String()
			if status != tc.wantStatus {
				t.Errorf("status %d, want %d; output:\n%s", status, tc.wantStatus, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("output has %q:\n%s", w, text)
				}
			}
			// The skip list: the lines after "N tests skipped".
			_, after, ok := strings.Cut(text, " skipped\n")
			if !ok {
				t.Fatalf("no skip count:\n%s", text)
			}
			var skips []string
			for _, l := range strings.Split(after, "\n") {
				if !strings.HasPrefix(l, "  ") {
					break
				}
				skips = append(skips, strings.TrimPrefix(l, "  "))
			}
			if strings.Join(skips, "\n") != strings.Join(tc.wantSkips, "\n") {
				t.Errorf("skips listed:\n%s\nwant:\n%s", strings.Join(skips, "\n"), strings.Join(tc.wantSkips, "\n"))
			}
		})
	}
}
