// Command planbench measures the publish planner (changes.Calculate, with the TXT
// registry's read of the zone) against a baseline commit, side by side in one run:
// BenchmarkCalculate100k, a zone of 100,000 owned weighted A records plus their 100,000
// ownership TXT records of which 1 % changed target (BENCHMARKS.md, "Planning 100,000
// records").
//
// It extracts the baseline commit (6ef3d3f, where issue 32 measured 233 ms, by default)
// from the repository into a temp dir with `git archive | tar -x`, builds the benchmark's
// test binary there and in the working tree (uncommitted edits included), then runs the
// two in turn, --rounds times, each run
//
//	go test -run '^$' -bench 'Calculate100k$' -benchmem -benchtime 5x -count 3 ./internal/changes
//
// (the baseline's package is internal/plan, the planner's name at 6ef3d3f: planbench finds
// the package that defines the benchmark in each tree). Rounds alternate which tree goes
// first, so that a load that rises or falls during the run weighs on both alike. It prints
// a Markdown table (ns/op best and median, B/op, allocs/op, and the baseline / working
// tree ratio of each), whether the benchmark's fixture is the same in both trees, and the
// load of the machine.
//
//	go run ./bench/planbench                          # 6ef3d3f vs the working tree, 2 rounds × 3 runs
//	go run ./bench/planbench -base 6ef3d3f -rounds 3 -out plan.md
//
// It must run inside a git checkout of crossfade (the baseline comes out of its history).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/crossfade-io/crossfade/bench/internal/cli"
	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// defaultBase is the commit issue 32 measured the planner at (233 ms).
const defaultBase = "6ef3d3f"

// benchName is the benchmark compared; its fixture must be the same in both trees.
const benchName = "BenchmarkCalculate100k"

type options struct {
	repo      string
	base      string
	rounds    int
	count     int
	benchtime string
	goBin     string
	out       string
	keep      bool
	args      []string
}

func parseFlags(args []string) (options, error) {
	o := options{args: args}
	fs := flag.NewFlagSet("planbench", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", ".", "a directory inside the crossfade git checkout whose working tree is measured")
	fs.StringVar(&o.base, "base", defaultBase, "baseline commit (anything git rev-parse reads)")
	fs.IntVar(&o.rounds, "rounds", 2, "rounds; each runs the benchmark once in each tree, alternating which goes first")
	fs.IntVar(&o.count, "count", 3, "go test -count of each run")
	fs.StringVar(&o.benchtime, "benchtime", "5x", "go test -benchtime of each run")
	fs.StringVar(&o.goBin, "go", "go", "go command that builds both trees")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (the baseline's source and both test binaries) after the run")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if o.rounds < 1 || o.count < 1 {
		return o, fmt.Errorf("-rounds %d, -count %d: both must be at least 1", o.rounds, o.count)
	}
	return o, nil
}

func main() {
	os.Exit(cli.Main("planbench", os.Args[1:], parseFlags, func(ctx context.Context, o options, log *slog.Logger) error {
		return run(ctx, o, log, os.Stdout)
	}))
}

// run measures both trees and writes the report to w (and to -out).
func run(ctx context.Context, o options, log *slog.Logger, w io.Writer) (err error) {
	info := machine.Describe()
	busy0, total0, cpuOK := machine.CPU()
	root, err := repoRoot(ctx, o.repo)
	if err != nil {
		return err
	}
	commit, err := resolveCommit(ctx, root, o.base)
	if err != nil {
		return err
	}
	tmp, done, err := cli.TempDir("planbench-", log)
	if err != nil {
		return err
	}
	defer func() { done(o.keep) }()

	baseDir := tmp + "/base"
	log.Info("extracting the baseline", "commit", commit[:12], "dir", baseDir)
	if err := extract(ctx, root, commit, baseDir); err != nil {
		return err
	}
	trees := []*tree{
		{label: "baseline " + o.base, dir: baseDir, commit: commit},
		{label: "working tree", dir: root, commit: headCommit(ctx, root)},
	}
	for _, t := range trees {
		if t.pkg, err = findBenchmark(t.dir); err != nil {
			return fmt.Errorf("%s: %w", t.label, err)
		}
		t.bin = fmt.Sprintf("%s/%s.test", tmp, strings.Fields(t.label)[0])
		log.Info("building the test binary", "tree", t.label, "package", t.pkg)
		if err := build(ctx, o.goBin, t); err != nil {
			return err
		}
	}
	same, err := sameFixture(trees[0], trees[1])
	if err != nil {
		return err
	}
	for r := range o.rounds {
		order := []*tree{trees[0], trees[1]}
		if r%2 == 1 {
			order = []*tree{trees[1], trees[0]}
		}
		for _, t := range order {
			log.Info("running", "round", r+1, "tree", t.label)
			res, err := runBench(ctx, t, o.benchtime, o.count)
			if err != nil {
				return err
			}
			t.results = append(t.results, res...)
		}
	}
	info.LoadAfter = machine.LoadAverage()
	busy1, total1, _ := machine.CPU()
	var others string
	if cpuOK && total1 > total0 {
		others = fmt.Sprintf("%.0f %%", 100*float64(busy1-busy0)/float64(total1-total0))
	}
	rep := render(o, info, trees, same, others)
	return report.Write(w, rep, "-out", o.out)
}
