package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// tree is one source tree measured: the baseline's extracted copy or the working tree.
type tree struct {
	label  string
	dir    string
	commit string
	// pkg is the package defining the benchmark, "./internal/changes" ("./internal/plan"
	// in older trees).
	pkg string
	// bin is its test binary.
	bin     string
	results []result
}

// result is one line of `go test -bench` output.
type result struct {
	nsPerOp, bytesPerOp, allocsPerOp float64
}

// benchPackages are where the planner's benchmark has lived: internal/changes now,
// internal/plan until the package was renamed (after 6ef3d3f).
var benchPackages = []string{"internal/changes", "internal/plan"}

// repoRoot returns the top of the git checkout holding dir, or says that there is none:
// the baseline is extracted from the repository's history.
func repoRoot(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("-repo %s is not inside a git checkout (git rev-parse --show-toplevel: %w%s): planbench extracts the baseline from the repository's history, so run it in a clone of crossfade",
			dir, err, stderrOf(err))
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveCommit returns the full id of rev in the repository at root.
func resolveCommit(ctx context.Context, root, rev string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("-base %s: no such commit in %s (a shallow clone may lack it: git fetch --unshallow): %w", rev, root, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// headCommit names what the working tree is: HEAD's id, with "+ uncommitted changes"
// when the tree differs from it.
func headCommit(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	id := strings.TrimSpace(string(out))
	if err := exec.CommandContext(ctx, "git", "-C", root, "diff", "--quiet", "HEAD").Run(); err != nil {
		return id + " + uncommitted changes"
	}
	return id
}

// extract writes commit's tree into dir: git archive piped to tar -x.
func extract(ctx context.Context, root, commit, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("extract %s: %w", commit, err)
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return fmt.Errorf("extract %s: %w", commit, err)
	}
	untar.Stdin = pipe
	var archErr, tarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archErr, &tarErr
	if err := untar.Start(); err != nil {
		return fmt.Errorf("extract %s: start tar: %w", commit, err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return fmt.Errorf("extract %s: git archive: %w: %s", commit, err, strings.TrimSpace(archErr.String()))
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("extract %s into %s: tar -x: %w: %s", commit, dir, err, strings.TrimSpace(tarErr.String()))
	}
	return nil
}

// findBenchmark returns the package of dir that defines the benchmark.
func findBenchmark(dir string) (string, error) {
	for _, p := range benchPackages {
		if _, err := benchSource(filepath.Join(dir, p)); err == nil {
			return "./" + p, nil
		}
	}
	return "", fmt.Errorf("no %s in %s: looked in %s", benchName, dir, strings.Join(benchPackages, ", "))
}

// benchSource returns the benchmark function's source in the package dir pkgDir: from
// its func line to the closing brace at the start of a line.
func benchSource(pkgDir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(pkgDir, "*_test.go"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if src, ok := funcSource(string(b), benchName); ok {
			return src, nil
		}
	}
	return "", fmt.Errorf("%s not defined in %s", benchName, pkgDir)
}

// funcSource cuts function name out of Go source text.
func funcSource(src, name string) (string, bool) {
	i := strings.Index(src, "\nfunc "+name+"(")
	if i < 0 {
		return "", false
	}
	rest := src[i+1:]
	end := strings.Index(rest, "\n}\n")
	if end < 0 {
		return rest, true
	}
	return rest[:end+3], true
}

// sameFixture reports whether both trees' benchmark functions are the same text: the
// same fixture, planned the same way. The helpers it calls (rec, weighted, from) are
// not compared.
func sameFixture(a, b *tree) (bool, error) {
	sa, err := benchSource(filepath.Join(a.dir, a.pkg))
	if err != nil {
		return false, err
	}
	sb, err := benchSource(filepath.Join(b.dir, b.pkg))
	if err != nil {
		return false, err
	}
	return sa == sb, nil
}

// build compiles t's test binary (go test -c), so that runs time the benchmark and not
// the compiler.
func build(ctx context.Context, goBin string, t *tree) error {
	cmd := exec.CommandContext(ctx, goBin, "test", "-c", "-o", t.bin, t.pkg)
	cmd.Dir = t.dir
	// The baseline is a module of its own in the temp dir; no go.work from above applies.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: go test -c %s: %w\n%s", t.label, t.pkg, err, out)
	}
	return nil
}

// runBench runs t's benchmark count times, as `go test -run '^$' -bench 'Calculate100k$'
// -benchmem -benchtime B -count N` would (in the package's directory).
func runBench(ctx context.Context, t *tree, benchtime string, count int) ([]result, error) {
	cmd := exec.CommandContext(ctx, t.bin, "-test.run", "^$", "-test.bench", strings.TrimPrefix(benchName, "Benchmark")+"$",
		"-test.benchmem", "-test.benchtime", benchtime, "-test.count", strconv.Itoa(count))
	cmd.Dir = filepath.Join(t.dir, t.pkg)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w%s\n%s", t.label, benchName, err, stderrOf(err), out)
	}
	res, err := parseBench(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.label, err)
	}
	if len(res) != count {
		return nil, fmt.Errorf("%s: %d %s results, want %d:\n%s", t.label, len(res), benchName, count, out)
	}
	return res, nil
}

// parseBench reads the benchmark's lines of `go test -bench -benchmem` output:
// "BenchmarkCalculate100k-2  5  233000000 ns/op  52000000 B/op  321356 allocs/op".
func parseBench(out []byte) ([]result, error) {
	var res []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || (f[0] != benchName && !strings.HasPrefix(f[0], benchName+"-")) {
			continue
		}
		var r result
		units := map[string]*float64{"ns/op": &r.nsPerOp, "B/op": &r.bytesPerOp, "allocs/op": &r.allocsPerOp}
		for i := 2; i+1 < len(f); i += 2 {
			if p, ok := units[f[i+1]]; ok {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, fmt.Errorf("%s line %q: %s: %w", benchName, sc.Text(), f[i+1], err)
				}
				*p = v
				delete(units, f[i+1])
			}
		}
		if len(units) > 0 {
			return nil, fmt.Errorf("%s line %q lacks ns/op, B/op or allocs/op (was -benchmem given?)", benchName, sc.Text())
		}
		res = append(res, r)
	}
	return res, sc.Err()
}

// stderrOf is ": " and the first line of what a failed command wrote to stderr, if any.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		line, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
		return ": " + line
	}
	return ""
}
