// Command testreport reads `go test -json` on stdin and prints what `go test` prints
// without -json (each package's ok/FAIL line, the full output of failing tests, build
// errors), then the slowest tests, how many tests were skipped and which, with the reason
// each gave, and last the failed tests, each with its last message: a CI log's tail alone
// says what failed and why.
// It exits 1 if a test or package failed (a build failure, a panic, a timeout, a stream
// that ended before its package did) and, under CI=true, if any test was skipped: CI
// installs everything the tests need, so there a skip is a test that silently never ran.
//
//	set -o pipefail; go test -json ./... | go run ./scripts/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	os.Exit(report(os.Stdin, os.Stdout, os.Getenv("CI") == "true"))
}

// event is one line of `go test -json` (cmd/test2json's TestEvent, plus the build
// events `go test -json` adds: ImportPath and FailedBuild).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
	Elapsed     float64 // seconds, on a test's or package's pass and fail
}

// skip is one skipped test and the reason it gave.
type skip struct {
	pkg, test, reason string
}

// failure is one failed test (or package, test empty) and the last message it logged.
type failure struct {
	name, reason string
}

// timing is how long one top-level test ran.
type timing struct {
	name    string
	seconds float64
}

// slowestShown is how many of the slowest tests the summary lists: enough to see where
// a suite's time goes without a -v log.
const slowestShown = 10

// pkgState is what has been read of one package's run so far.
type pkgState struct {
	// out is the package's own output (not a test's): its ok/FAIL line, a TestMain's.
	out []string
	// tests holds each test's output until the test ends; an entry left at the end is a
	// test that never ended (the binary panicked or timed out while it ran).
	tests map[string][]string
	// order is the order tests started in, to print the unfinished ones in order.
	order []string
}

// reader is report's state: packages under way and what has ended.
type reader struct {
	out     io.Writer
	pkgs    map[string]*pkgState
	started []string // package names in start order, to report unfinished ones
	skipped []skip
	failed  []failure // "pkg TestName" of failed tests, "pkg" of failed packages
	timings []timing  // top-level tests that ended
}

// report copies the stream in to out as go test would print it and returns the exit
// status: 1 on any failure, or on any skip when ci is set; else 0.
func report(in io.Reader, out io.Writer, ci bool) int {
	r := &reader{out: out, pkgs: map[string]*pkgState{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	broken := false
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go test's own words on a setup error): pass it on.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		r.event(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testreport: reading go test -json: %v\n", err)
		broken = true
	}
	for _, name := range r.started {
		if p := r.pkgs[name]; p != nil {
			// The stream ended before the package did: go test was killed, or its output
			// was cut. What the package printed is all there is to show.
			r.printUnfinished(p)
			fmt.Fprintf(out, "FAIL\t%s [no result: the go test -json stream ended first]\n", name)
			r.failed = append(r.failed, failure{name: name, reason: "no result: the go test -json stream ended first"})
		}
	}
	return r.summary(ci, broken)
}

// event takes one event into account, printing what go test would print at that point.
func (r *reader) event(e event) {
	switch e.Action {
	case "build-output":
		// go test prints compiler errors as they come.
		fmt.Fprint(r.out, e.Output)
		return
	case "build-fail":
		return // the package's own fail event, with FailedBuild, follows
	}
	if e.Package == "" {
		return
	}
	p := r.pkgs[e.Package]
	if p == nil {
		p = &pkgState{tests: map[string][]string{}}
		r.pkgs[e.Package] = p
		r.started = append(r.started, e.Package)
	}
	if e.Test != "" {
		r.testEvent(p, e)
		return
	}
	switch e.Action {
	case "output":
		p.out = append(p.out, e.Output)
	case "pass", "skip": // skip with no test: the package has no test files
		for _, l := range p.out {
			// Without -v go test prints only the summary line of a package that passed.
			if strings.HasPrefix(l, "ok  ") || strings.HasPrefix(l, "?   ") {
				fmt.Fprint(r.out, l)
			}
		}
		delete(r.pkgs, e.Package)
	case "fail":
		r.printUnfinished(p)
		for _, l := range p.out {
			fmt.Fprint(r.out, l)
		}
		r.failed = append(r.failed, failure{name: e.Package})
		delete(r.pkgs, e.Package)
	}
}

// testEvent takes one event of a test into account.
func (r *reader) testEvent(p *pkgState, e event) {
	switch e.Action {
	case "run":
		if _, ok := p.tests[e.Test]; !ok {
			p.order = append(p.order, e.Test)
		}
		p.tests[e.Test] = p.tests[e.Test][:0:0]
	case "output":
		if _, ok := p.tests[e.Test]; !ok {
			p.order = append(p.order, e.Test)
		}
		p.tests[e.Test] = append(p.tests[e.Test], e.Output)
	case "pass":
		r.timed(e)
		delete(p.tests, e.Test)
	case "skip":
		r.skipped = append(r.skipped, skip{pkg: e.Package, test: e.Test, reason: skipReason(p.tests[e.Test])})
		delete(p.tests, e.Test)
	case "fail":
		printTest(r.out, p.tests[e.Test])
		r.timed(e)
		r.failed = append(r.failed, failure{name: e.Package + " " + e.Test, reason: lastMessage(p.tests[e.Test])})
		delete(p.tests, e.Test)
	}
}

// timed records how long a top-level test ran (a subtest's time is in its parent's).
func (r *reader) timed(e event) {
	if !strings.Contains(e.Test, "/") {
		r.timings = append(r.timings, timing{name: e.Package + " " + e.Test, seconds: e.Elapsed})
	}
}

// printUnfinished prints the output of the tests of p that never ended, in the order
// they started: where a panic or a timeout's stacks are.
func (r *reader) printUnfinished(p *pkgState) {
	for _, name := range p.order {
		if lines, ok := p.tests[name]; ok {
			printTest(r.out, lines)
			delete(p.tests, name)
		}
	}
}

// printTest prints a test's output as go test without -v does: without the -v framing
// lines (=== RUN, PAUSE, CONT, NAME).
func printTest(w io.Writer, lines []string) {
	for _, l := range lines {
		if !strings.HasPrefix(l, "=== ") {
			fmt.Fprint(w, l)
		}
	}
}

// logLine is the first line of a t.Log, t.Skip or t.Error message in -v output.
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: `)

// skipReason is the message a skipped test gave: its last logged line (t.Skip logs its
// message last), without indentation.
func skipReason(lines []string) string {
	if reason := lastMessage(lines); reason != "" {
		return reason
	}
	return "(no reason given)"
}

// messageShown bounds a failure's message in the summary; the whole output is above it.
const messageShown = 300

// lastMessage is the first line of the last t.Log, t.Error, t.Fatal or t.Skip message in
// a test's output (t.Fatal and t.Skip log theirs last), without indentation, cut to
// messageShown bytes; "" if there is none.
func lastMessage(lines []string) string {
	msg := ""
	for _, l := range lines {
		if logLine.MatchString(l) {
			msg = strings.TrimSpace(l)
		}
	}
	if len(msg) > messageShown {
		msg = msg[:messageShown] + " …"
	}
	return msg
}

// summary prints the skipped and failed tests and returns the exit status.
func (r *reader) summary(ci, broken bool) int {
	w := r.out
	fmt.Fprintln(w)
	if len(r.timings) > 0 {
		sort.SliceStable(r.timings, func(i, j int) bool { return r.timings[i].seconds > r.timings[j].seconds })
		fmt.Fprintln(w, "slowest tests:")
		for _, t := range r.timings[:min(slowestShown, len(r.timings))] {
			fmt.Fprintf(w, "  %7.1fs  %s\n", t.seconds, t.name)
		}
	}
	fmt.Fprintf(w, "%d %s skipped\n", len(r.skipped), plural(len(r.skipped), "test", "tests"))
	for _, s := range r.skipped {
		fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
	}
	status := 0
	if len(r.failed) > 0 || broken {
		fmt.Fprintf(w, "FAIL: %d failed (tests, and packages whose binary failed or did not build):\n", len(r.failed))
		for _, f := range r.failed {
			if f.reason == "" {
				fmt.Fprintf(w, "  %s\n", f.name)
			} else {
				fmt.Fprintf(w, "  %s: %s\n", f.name, f.reason)
			}
		}
		status = 1
	}
	if ci && len(r.skipped) > 0 {
		fmt.Fprintf(w, "FAIL: CI=true and %d %s skipped: under CI every test must run (install what the skip names; scripts/deps.sh test)\n",
			len(r.skipped), plural(len(r.skipped), "test", "tests"))
		status = 1
	}
	return status
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
