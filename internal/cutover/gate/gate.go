// Package gate holds the checks that let a cutover step pass: HTTP probes through the
// public name and at each cluster, a Prometheus instant query against a threshold, a
// sample of the authoritative DNS answers compared with the weights written, and for the
// ALB lever the target groups' health (DescribeTargetHealth) and the traffic CloudWatch
// counts per target group compared with the weights written, and for the Cloud Map lever
// what DiscoverInstances returns to the clients' query. It also reads the request rate
// still reaching the retired cluster (Residual) for the retire check. The engine calls
// Check repeatedly while a step holds; each call measures afresh and returns a Result
// that says why it passed or failed, with the numbers measured for the report.
package gate

import (
	"context"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kinds of gate, as reported in Result.Kind.
const (
	KindHTTP       = "http"
	KindPrometheus = "prometheus"
	KindDNS        = "dns"
	// KindTargetHealth and KindALBTraffic are the ALB lever's gates.
	KindTargetHealth = "targetHealth"
	KindALBTraffic   = "albTraffic"
)

// Step is what a gate needs to know about the step being checked.
type Step struct {
	// Index is the step's position in the plan, from 0.
	Index int
	// From and To are the set identifiers losing and gaining traffic.
	From, To string
	// Weights maps a set identifier to the weight written for it.
	Weights map[string]int64
	// Records are the weighted record sets shifted, with their members' values.
	Records []Record
	// TargetGroups are, for the ALB lever, every target group of the plan's listener
	// rules with the weight the step gives it; nil for the Route 53 lever.
	TargetGroups []TargetGroup
	// Since is when the step's weights took effect: the start of the window the ALB
	// traffic gate reads. Zero before they are written (a check before the write, or
	// `cutover plan` at the current weights).
	Since time.Time
}

// TargetGroup is one target group of an ALB step, as the ALB gates read it.
type TargetGroup struct {
	// Cluster is the plan's name for the group (its from or to), "" for another group
	// of a rule (a third cluster's), which keeps its weight.
	Cluster string
	// ARN and Name are the group's.
	ARN, Name string
	// LoadBalancers are the CloudWatch LoadBalancer dimension values ("app/NAME/ID") of
	// the load balancers whose rules of the plan forward to the group.
	LoadBalancers []string
	// Weight is the largest weight a rule of the plan gives the group at this step: above
	// 0, the step sends it traffic.
	Weight int64
}

// Record is one weighted record set name and type and what each of its members answers.
type Record struct {
	Name, Type string
	// Members maps a set identifier to the record set's values: IPs for A and AAAA, the
	// target host name for CNAME.
	Members map[string][]string
}

// Result is the outcome of one Check.
type Result struct {
	// Gate is the gate's name and Kind its kind (KindHTTP, …).
	Gate string `json:"gate"`
	Kind string `json:"kind"`
	// Pass is true only when the check ran and every condition held.
	Pass bool `json:"pass"`
	// Detail is one human line: what was measured and, on failure, why it failed.
	Detail string `json:"detail"`
	// Values are the numbers measured, keyed like "public.success_ratio". Only finite
	// numbers are kept, so the map always encodes as JSON.
	Values map[string]float64 `json:"values,omitempty"`
	// Err says why the check itself could not run (e.g. Prometheus unreachable); a Result
	// with Err never passes.
	Err string `json:"err,omitempty"`
	// Pending marks a pass that judged nothing yet (too few requests counted so far): the
	// step holds on past its pause until the gate has judged, up to its time limit.
	Pending bool `json:"pending,omitempty"`
}

// set records a measured value, dropping NaN and ±Inf: encoding/json refuses them and a
// report that cannot be written is worse than one missing a number.
func (r *Result) set(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if r.Values == nil {
		r.Values = map[string]float64{}
	}
	r.Values[key] = v
}

// fail marks r as failed because the check could not run.
func (r *Result) fail(err error) Result {
	r.Pass = false
	r.Err = err.Error()
	if r.Detail == "" {
		r.Detail = err.Error()
	}
	return *r
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of xs: the smallest
// value with at least p% of the values at or below it. It is always one of the samples,
// so with 20 requests p99 is the slowest one, not an interpolation past it. NaN for no
// samples. xs is not modified.
func percentile[T ~int64 | ~float64](xs []T, p float64) float64 {
	if len(xs) == 0 || !(p > 0) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return float64(s[rank-1])
}

// expectedShares is the share of answers each member should get: weight / sum of weights,
// or, when every weight is 0, an equal share each, because Route 53 then answers every
// member evenly rather than none.
func expectedShares(weights map[string]int64) map[string]float64 {
	out := make(map[string]float64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += max(w, 0)
	}
	for id, w := range weights {
		if sum == 0 {
			out[id] = 1 / float64(len(weights))
		} else {
			out[id] = float64(max(w, 0)) / float64(sum)
		}
	}
	return out
}

// shares divides each count by the total; all zero when the total is 0.
func shares(counts map[string]int, total int) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, n := range counts {
		if total > 0 {
			out[k] = float64(n) / float64(total)
		} else {
			out[k] = 0
		}
	}
	return out
}

// sortedKeys returns m's keys in order, for output that reads the same every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fmtFloat prints a number the short way: 0.25, 99, 99.9.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fmtPct prints a ratio as a percentage with at most one decimal: 0.955 → "95.5%".
func fmtPct(v float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(v*100, 'f', 1, 64), ".0") + "%"
}

// withPort adds port to addr when it has none, so "ns1.example.com" means port 53.
func withPort(addr, port string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), port)
}

// repeat calls fn n times on up to workers goroutines and returns when all calls have
// returned; once ctx is done, the calls not yet started are dropped.
func repeat(ctx context.Context, n, workers int, fn func()) {
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for range jobs {
				if ctx.Err() != nil {
					return
				}
				fn()
			}
		})
	}
	wg.Wait()
}

// Explain is a result's detail followed by its error in parentheses, for one line of
// text: the detail alone when there is no error or the detail already says it (a gate
// that cannot measure often puts its error in both: printed twice, it read "query …:
// refused (query …: refused)").
func Explain(detail, err string) string {
	if err == "" || strings.Contains(detail, err) {
		return detail
	}
	return detail + " (" + err + ")"
}
