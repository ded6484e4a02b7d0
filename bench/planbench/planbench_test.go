package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
)

func TestParseBench(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []result
		wantErr string
	}{
		{
			name: "three runs among other lines",
			out: "goos: linux\npkg: github.com/crossfade-io/crossfade/internal/changes\n" +
				"BenchmarkCalculate100k-2   \t       5\t 233000000 ns/op\t52000000 B/op\t  321356 allocs/op\n" +
				"BenchmarkCalculate100k-2   \t       5\t 240000000 ns/op\t52000001 B/op\t  321357 allocs/op\n" +
				"BenchmarkCalculate100k     \t       5\t 250000000 ns/op\t52000002 B/op\t  321358 allocs/op\n" +
				"BenchmarkCalculate100kOther-2 \t 5\t 1 ns/op\t 1 B/op\t 1 allocs/op\nPASS\n",
			want: []result{{233e6, 52e6, 321356}, {240e6, 52000001, 321357}, {250e6, 52000002, 321358}},
		},
		{
			name:    "no -benchmem",
			out:     "BenchmarkCalculate100k-2   \t       5\t 233000000 ns/op\n",
			wantErr: "lacks ns/op, B/op or allocs/op",
		},
		{name: "nothing", out: "PASS\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBench([]byte(tt.out))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("run %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]result{{300e6, 10, 5}, {100e6, 30, 7}, {200e6, 20, 6}, {400e6, 20, 6}})
	if s.best != 100*time.Millisecond || s.median != 250*time.Millisecond || s.bytesOp != 20 || s.allocsOp != 6 || s.runs != 4 {
		t.Errorf("summary %+v: want best 100ms, median 250ms, 20 B/op, 6 allocs/op, 4 runs", s)
	}
	if got := ratio(233, 100); got != "2.33×" {
		t.Errorf("ratio(233, 100) = %q, want 2.33×", got)
	}
	if got := ratio(1, 0); got != "n/a" {
		t.Errorf("ratio(1, 0) = %q, want n/a", got)
	}
}

func TestFuncSource(t *testing.T) {
	src := "package x\n\nfunc helper() {}\n\nfunc BenchmarkCalculate100k(b *testing.B) {\n\tfor b.Loop() {\n\t}\n}\n\nfunc after() {}\n"
	got, ok := funcSource(src, benchName)
	want := "func BenchmarkCalculate100k(b *testing.B) {\n\tfor b.Loop() {\n\t}\n}\n"
	if !ok || got != want {
		t.Errorf("funcSource = %q, %v; want %q", got, ok, want)
	}
	if _, ok := funcSource(src, "BenchmarkOther"); ok {
		t.Error("found a benchmark that is not there")
	}
}

// TestRepoRootOutsideGit: the baseline comes out of a git checkout's history, so a
// directory outside one is refused with an error that says so.
func TestRepoRootOutsideGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := repoRoot(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "is not inside a git checkout") {
		t.Fatalf("repoRoot outside a checkout: %v, want an error saying it is not inside a git checkout", err)
	}
}

// TestExtractAndFind builds a tiny repository with two commits, the benchmark in
// internal/plan in the first and in internal/changes in the second (as crossfade's
// history has it), extracts the first with extract, and checks that each tree's package
// is found and the fixtures compared.
func TestExtractAndFind(t *testing.T) {
	for _, tool := range []string{"git", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	ctx := context.Background()
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(path, body string) {
		t.Helper()
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bench := "\nfunc BenchmarkCalculate100k(b *testing.B) {\n\tfor b.Loop() {\n\t}\n}\n"
	git("init", "-q")
	write("internal/plan/bench_test.go", "package plan\n"+bench)
	git("add", ".")
	git("commit", "-q", "-m", "old")
	base := git("rev-parse", "HEAD")
	if err := os.RemoveAll(filepath.Join(repo, "internal/plan")); err != nil {
		t.Fatal(err)
	}
	write("internal/changes/bench_test.go", "package changes\n"+bench)
	git("add", "-A")
	git("commit", "-q", "-m", "new")

	root, err := repoRoot(ctx, filepath.Join(repo, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	commit, err := resolveCommit(ctx, root, base[:7])
	if err != nil || commit != base {
		t.Fatalf("resolveCommit(%s) = %s, %v; want %s", base[:7], commit, err, base)
	}
	if _, err := resolveCommit(ctx, root, "0000000"); err == nil || !strings.Contains(err.Error(), "no such commit") {
		t.Errorf("resolveCommit of a missing commit: %v, want an error saying there is no such commit", err)
	}
	dir := filepath.Join(t.TempDir(), "base")
	if err := extract(ctx, root, commit, dir); err != nil {
		t.Fatal(err)
	}
	old, work := &tree{dir: dir}, &tree{dir: root}
	if old.pkg, err = findBenchmark(old.dir); err != nil || old.pkg != "./internal/plan" {
		t.Fatalf("baseline package %q, %v; want ./internal/plan", old.pkg, err)
	}
	if work.pkg, err = findBenchmark(work.dir); err != nil || work.pkg != "./internal/changes" {
		t.Fatalf("working tree package %q, %v; want ./internal/changes", work.pkg, err)
	}
	if same, err := sameFixture(old, work); err != nil || !same {
		t.Errorf("sameFixture = %v, %v; want the same benchmark in both", same, err)
	}
	write("internal/changes/bench_test.go", "package changes\n"+strings.Replace(bench, "for", "for range 2 {\n\t}\n\tfor", 1))
	if same, err := sameFixture(old, work); err != nil || same {
		t.Errorf("sameFixture after the benchmark changed = %v, %v; want a difference", same, err)
	}
	if head := headCommit(ctx, root); !strings.HasSuffix(head, "+ uncommitted changes") {
		t.Errorf("headCommit of an edited tree = %q, want it to say so", head)
	}
}

func TestRender(t *testing.T) {
	trees := []*tree{
		{label: "baseline 6ef3d3f", commit: strings.Repeat("a", 40), pkg: "./internal/plan", results: []result{{233e6, 57e6, 362682}, {240e6, 57e6, 362682}}},
		{label: "working tree", commit: strings.Repeat("b", 40) + " + uncommitted changes", pkg: "./internal/changes", results: []result{{100e6, 19e6, 62658}, {110e6, 19e6, 62658}}},
	}
	o := options{base: "6ef3d3f", rounds: 1, count: 2, benchtime: "5x", args: []string{"-count", "2", "-out", "x.md"}}
	rep := render(o, machine.Info{CPUs: 2, GoVersion: "go1.26", Date: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)}, trees, true, "50 %")
	for _, want := range []string{
		"| baseline 6ef3d3f (aaaaaaaaaaaa) | `./internal/plan` | 2 | 233.00 ms | 236.50 ms | 57,000,000 | 362,682 |",
		"| working tree (bbbbbbbbbbbb + uncommitted changes) | `./internal/changes` | 2 | 100.00 ms | 105.00 ms | 19,000,000 | 62,658 |",
		"| **ratio** (baseline / working tree) | | | **2.33×** | **2.25×** | **3.00×** | **5.79×** |",
		"The fixture is the same",
		"Reproduce: `go run ./bench/planbench -count 2`",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if rep := render(o, machine.Info{}, trees, false, ""); !strings.Contains(rep, "**The fixture differs**") {
		t.Errorf("a different fixture is not called out:\n%s", rep)
	}
}
