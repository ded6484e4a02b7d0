package main

import (
	"errors"
	"fmt"
)

// ratio is one comparison the report makes: the best qps of one server over another's,
// against a goal (issue 32: the sandbox ≥ 1.5 × CoreDNS and ≥ 0.85 × Knot on plain records,
// ≥ 0.8 × Knot on the weighted zone).
type ratio struct {
	label    string // e.g. "sandbox plain / CoreDNS"
	num, den role
	goal     float64 // 0: no goal
	flag     string  // the flag that sets the goal, for messages
}

// ratioResult is a ratio measured in one run.
type ratioResult struct {
	ratio
	value     float64
	perCore   float64 // the same ratio of qps per server core in the best runs
	perCoreOK bool    // false where the servers' CPU time could not be read
}

// met reports whether the goal is reached; a ratio without a goal always is.
func (r ratioResult) met() bool { return r.goal == 0 || r.value >= r.goal }

// ratios are the comparisons of a run with these goals.
func ratios(o options) []ratio {
	return []ratio{
		{label: "sandbox plain / CoreDNS", num: rolePlain, den: roleCoreDNS, goal: o.goalCoreDNS, flag: "-goal-coredns"},
		{label: "sandbox plain / Knot", num: rolePlain, den: roleKnot, goal: o.goalKnotPlain, flag: "-goal-knot-plain"},
		{label: "sandbox weighted / Knot", num: roleWeighted, den: roleKnot, goal: o.goalKnotWeighted, flag: "-goal-knot-weighted"},
	}
}

// evalRatios computes each ratio whose two servers were measured; one whose server is
// missing (CoreDNS with -no-coredns) or measured 0 qps is left out.
func evalRatios(specs []ratio, targets []*target) []ratioResult {
	var out []ratioResult
	for _, s := range specs {
		num, den := findRole(targets, s.num), findRole(targets, s.den)
		if num == nil || den == nil {
			continue
		}
		nb, db := num.best(), den.best()
		if db.qps == 0 {
			continue
		}
		r := ratioResult{ratio: s, value: nb.qps / db.qps}
		nc, dc := cores(nb.serverCPU, nb.runTime), cores(db.serverCPU, db.runTime)
		if nb.serverCPU >= 0 && db.serverCPU >= 0 && nc > 0 && dc > 0 && db.qps > 0 {
			r.perCore, r.perCoreOK = (nb.qps/nc)/(db.qps/dc), true
		}
		out = append(out, r)
	}
	return out
}

// goalErrors names every ratio below its goal, or returns nil if all are met.
func goalErrors(results []ratioResult) error {
	var errs []error
	for _, r := range results {
		if !r.met() {
			errs = append(errs, fmt.Errorf("%s qps ratio %.2f is below its goal %.2f (%s)", r.label, r.value, r.goal, r.flag))
		}
	}
	return errors.Join(errs...)
}

// weightedRatio is the sandbox's weighted qps over Knot's, which -min-ratio checks (as it
// did before the plain round existed); 0 if either was not measured.
func weightedRatio(results []ratioResult) float64 {
	for _, r := range results {
		if r.num == roleWeighted && r.den == roleKnot {
			return r.value
		}
	}
	return 0
}
