package gate

// The ALB lever's gates: the health of the target groups a step sends traffic to, and the
// traffic each group got, read the way an AWS user reads it, from CloudWatch.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TargetHealthAPI is the ELBv2 call the target health gate makes;
// *elasticloadbalancingv2.Client implements it.
type TargetHealthAPI interface {
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
}

// MetricsAPI is the CloudWatch call the ALB traffic gate and the retire check make;
// *cloudwatch.Client implements it.
type MetricsAPI interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// albTimeout bounds one gate's calls when the caller's context allows longer: a gate that
// hangs holds the whole step.
const albTimeout = 10 * time.Second

// TargetHealth requires every target group a step sends traffic to (weight above 0) to
// have at least MinHealthy healthy targets. Values, per group (its cluster name, else its
// name): <key>.healthy, <key>.targets.
type TargetHealth struct {
	name       string
	minHealthy int
	api        TargetHealthAPI
}

// NewTargetHealth builds a target health gate from its spec; it calls nothing.
func NewTargetHealth(name string, g spec.TargetHealthGate, api TargetHealthAPI) (*TargetHealth, error) {
	if api == nil {
		return nil, fmt.Errorf("gate %s: no ELBv2 client to read target health with", name)
	}
	h := &TargetHealth{name: name, minHealthy: g.MinHealthy, api: api}
	if h.minHealthy == 0 {
		h.minHealthy = spec.DefaultMinHealthy
	}
	if h.minHealthy < 0 {
		return nil, fmt.Errorf("gate %s: minHealthy %d: want at least 1", name, g.MinHealthy)
	}
	return h, nil
}

// Name is the gate's name.
func (h *TargetHealth) Name() string { return h.name }

// Precheck is Check on the weights about to be written: a step must not shift traffic
// onto a group with no healthy target.
func (h *TargetHealth) Precheck(ctx context.Context, s Step) Result { return h.Check(ctx, s) }

// Check describes the target health of every group the step gives weight to.
func (h *TargetHealth) Check(ctx context.Context, s Step) Result {
	r := Result{Gate: h.name, Kind: KindTargetHealth}
	if len(s.TargetGroups) == 0 {
		return r.fail(fmt.Errorf("step %d has no target groups: a targetHealth gate judges an ALB cutover", s.Index))
	}
	ctx, cancel := context.WithTimeout(ctx, albTimeout)
	defer cancel()
	var problems, summary []string
	for _, g := range s.TargetGroups {
		if g.Weight <= 0 {
			continue
		}
		out, err := h.api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(g.ARN)})
		if err != nil {
			return r.fail(fmt.Errorf("describe target health of %s: %w", g.Name, err))
		}
		healthy, line, example := HealthSummary(out.TargetHealthDescriptions)
		key := g.key()
		r.set(key+".healthy", float64(healthy))
		r.set(key+".targets", float64(len(out.TargetHealthDescriptions)))
		summary = append(summary, fmt.Sprintf("%s: %s", g.label(), line))
		if healthy < h.minHealthy {
			p := fmt.Sprintf("%s has %d healthy targets, want at least %d, at weight %d", g.label(), healthy, h.minHealthy, g.Weight)
			if example != "" {
				p += " (e.g. " + example + ")"
			}
			problems = append(problems, p)
		}
	}
	if len(summary) == 0 {
		return r.fail(fmt.Errorf("step %d gives no target group a weight above 0", s.Index))
	}
	r.Pass = len(problems) == 0
	r.Detail = strings.Join(summary, "; ")
	if !r.Pass {
		r.Detail = strings.Join(problems, "; ") + " — " + r.Detail
	}
	return r
}

// HealthSummary counts the healthy targets and says how the targets stand: "2 healthy of 3
// targets (1 unhealthy)", with a target that is not healthy and why, for a failure.
func HealthSummary(ds []elbtypes.TargetHealthDescription) (healthy int, line, example string) {
	states := map[string]int{}
	for _, d := range ds {
		st := "unknown"
		if d.TargetHealth != nil {
			st = string(d.TargetHealth.State)
		}
		states[st]++
		if st == string(elbtypes.TargetHealthStateEnumHealthy) || example != "" {
			continue
		}
		example = "target " + targetName(d.Target) + " " + st
		if th := d.TargetHealth; th != nil && (th.Reason != "" || aws.ToString(th.Description) != "") {
			example += ": " + strings.TrimPrefix(strings.TrimSpace(string(th.Reason)+" "+aws.ToString(th.Description)), ": ")
		}
	}
	healthy = states[string(elbtypes.TargetHealthStateEnumHealthy)]
	line = fmt.Sprintf("%d healthy of %d targets", healthy, len(ds))
	var rest []string
	for _, st := range slices.Sorted(maps.Keys(states)) {
		if st != string(elbtypes.TargetHealthStateEnumHealthy) {
			rest = append(rest, fmt.Sprintf("%d %s", states[st], st))
		}
	}
	if len(rest) > 0 {
		line += " (" + strings.Join(rest, ", ") + ")"
	}
	return healthy, line, example
}

// targetName is a target's id and port: "10.0.3.7:8080".
func targetName(t *elbtypes.TargetDescription) string {
	if t == nil {
		return "?"
	}
	if t.Port != nil {
		return fmt.Sprintf("%s:%d", aws.ToString(t.Id), aws.ToInt32(t.Port))
	}
	return aws.ToString(t.Id)
}

// key names the group in Values: its cluster's name, else its own.
func (g TargetGroup) key() string {
	if g.Cluster != "" {
		return g.Cluster
	}
	return g.Name
}

// label names the group for people: "eks-green (shop-green)", or the name alone when the
// cluster is named after its group.
func (g TargetGroup) label() string {
	if g.Cluster == "" || g.Cluster == g.Name {
		return g.Name
	}
	return g.Cluster + " (" + g.Name + ")"
}

// shareSigmas is how many standard deviations beyond its tolerance a measured share must
// be before it fails: a chance excursion that far happens about once in 30,000 checks.
const shareSigmas = 4

// ALBTraffic reads from CloudWatch (GetMetricData, namespace AWS/ApplicationELB, by
// TargetGroup and LoadBalancer) the requests from's and to's target groups got since the
// step's weights took effect, and compares to's share of them with the share the weights
// promise; it also bounds each group's target 5xx rate and average response time.
//
// The statistics. Unlike the dns gate, which sends as many queries as it likes, this gate
// counts the traffic there is. With n requests and to's expected share p, the measured
// share has standard deviation σ = sqrt(p(1-p)/n): with few requests it strays past any
// useful tolerance by chance alone. So a share within the tolerance passes; one beyond the
// tolerance by more than 4σ fails (a misweighting, not chance); one in between is not
// judged yet: the check passes as Pending and the step holds on, with the window growing,
// until it is judged either way or the step runs out of time. Fewer than minRequests
// requests are not judged at all (Pending too): the share on from's and to's together,
// maxErrorRate on a group's own requests, maxResponseTime on its own target responses, for
// every group the step gives a weight above 0 (see judge). A count CloudWatch has no
// datapoint for is 0: an ALB publishes its counts only when they are not. A result
// CloudWatch could not give whole (StatusCode InternalError or Forbidden) is an error,
// never a 0.
//
// The window starts at the first whole period after Step.Since (a period that began
// under the previous weights would mix both), and ends at the last period CloudWatch has
// published whole: the last that ended at least the delay (spec.alb.cloudWatch.delay)
// ago; with no delay, now (the current period as far as it has come). A window with no
// such period yet is not judged (Pending). With window set, it starts no earlier than
// that long before its end. Before the write (Since zero: `cutover plan`) it is the last
// window, or the last ten periods, before that end.
//
// Values, per cluster (from, to): <id>.requests, .share, .expected, .errors_5xx,
// .error_rate, .response_time_ms; and "requests", "window_s".
type ALBTraffic struct {
	name        string
	tolerance   float64
	minRequests int
	maxErrRate  *float64
	maxRT       time.Duration // 0: none
	period      time.Duration
	window      time.Duration // 0: the whole hold
	delay       time.Duration // how long after a period ends CloudWatch holds all of it
	api         MetricsAPI
	now         func() time.Time
}

// NewALBTraffic builds an ALB traffic gate from its spec; it calls nothing. delay is the
// plan's spec.alb.cloudWatch.delay (spec.Plan.CloudWatchDelay): how long after a period
// ends CloudWatch is taken to hold all of it.
func NewALBTraffic(name string, g spec.ALBTrafficGate, api MetricsAPI, delay time.Duration) (*ALBTraffic, error) {
	if api == nil {
		return nil, fmt.Errorf("gate %s: no CloudWatch client to read the ALB's metrics with", name)
	}
	if delay < 0 {
		return nil, fmt.Errorf("gate %s: CloudWatch delay %s: want ≥ 0", name, delay)
	}
	a := &ALBTraffic{name: name, tolerance: spec.DefaultALBTolerance, minRequests: g.MinRequests, maxErrRate: g.MaxErrorRate,
		period: time.Duration(g.Period) * time.Second, window: g.Window.Duration, delay: delay, api: api, now: time.Now}
	if g.Tolerance != nil {
		a.tolerance = *g.Tolerance
	}
	if a.tolerance < 0 || a.tolerance > 1 {
		return nil, fmt.Errorf("gate %s: tolerance %v: want 0..1", name, a.tolerance)
	}
	if a.minRequests == 0 {
		a.minRequests = spec.DefaultMinRequests
	}
	if g.Period == 0 {
		a.period = spec.DefaultCloudWatchPeriod * time.Second
	}
	if !spec.ValidPeriod(int(a.period / time.Second)) {
		return nil, fmt.Errorf("gate %s: period %d: want 1, 5, 10, 20, 30 or a multiple of 60 seconds", name, g.Period)
	}
	if r := g.MaxErrorRate; r != nil && !(*r >= 0 && *r <= 1) {
		return nil, fmt.Errorf("gate %s: maxErrorRate %v: want 0..1", name, *r)
	}
	if d := g.MaxResponseTime; d != nil {
		if d.Duration <= 0 {
			return nil, fmt.Errorf("gate %s: maxResponseTime %v: want > 0", name, d.Duration)
		}
		a.maxRT = d.Duration
	}
	return a, nil
}

// Name is the gate's name.
func (a *ALBTraffic) Name() string { return a.name }

// Check reads the window's counts of from's and to's groups and judges them.
func (a *ALBTraffic) Check(ctx context.Context, s Step) Result {
	r := Result{Gate: a.name, Kind: KindALBTraffic}
	if len(s.TargetGroups) == 0 {
		return r.fail(fmt.Errorf("step %d has no target groups: an albTraffic gate judges an ALB cutover", s.Index))
	}
	var groups []TargetGroup // from, then to
	for _, id := range []string{s.From, s.To} {
		i := slices.IndexFunc(s.TargetGroups, func(g TargetGroup) bool { return g.Cluster == id })
		if i < 0 {
			return r.fail(fmt.Errorf("step %d has no target group for %s", s.Index, id))
		}
		groups = append(groups, s.TargetGroups[i])
	}
	if isNLB(groups) {
		// Never judged on nothing: AWS/NetworkELB has no per-target-group flow counts, and
		// a query for them answers no datapoints, which would read as 0 connections.
		return r.fail(fmt.Errorf("target groups %s and %s are behind a Network Load Balancer: %s", groups[0].Name, groups[1].Name, spec.NLBCloudWatchWhy))
	}
	now := a.now()
	end := publishedEnd(now, a.period, a.delay)
	start := a.windowStart(s.Since, end)
	r.set("window_s", max(end.Sub(start), 0).Seconds())
	if end.Sub(start) < time.Second {
		r.Pass, r.Pending = true, true
		r.Detail = fmt.Sprintf("not judged yet: the window begins at the first whole %s period after the step's weights took effect, %s", a.period, start.Format(time.TimeOnly))
		if a.delay > 0 {
			r.Detail += fmt.Sprintf(", and is read once CloudWatch has published it, %s after it ends (spec.alb.cloudWatch.delay): from %s on",
				a.delay, start.Add(a.period+a.delay).Format(time.TimeOnly))
		}
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, albTimeout)
	defer cancel()
	counts, err := readALBMetrics(ctx, a.api, groups, start, end, a.period, true)
	if err != nil {
		return r.fail(err)
	}
	return a.judge(r, s, groups, counts, end.Sub(start))
}

// windowStart is where the window of a check that reads up to end begins.
func (a *ALBTraffic) windowStart(since, end time.Time) time.Time {
	start := since
	switch {
	case since.IsZero() && a.window > 0:
		start = end.Add(-a.window)
	case since.IsZero():
		start = end.Add(-10 * a.period)
	case a.window > 0 && end.Add(-a.window).After(since):
		start = end.Add(-a.window)
	}
	return periodStart(start, a.period, true)
}

// publishedEnd is where a read of CloudWatch at now ends. With no delay, now: a
// CloudWatch that counts every request at once (the sandbox's) holds the current period
// as far as it has come. Otherwise the start of the first period that had not ended
// delay ago: every period before it ended at least delay ago and is read whole, none
// after it is read at all. (CloudWatch returns the datapoints whose timestamps, their
// periods' starts, lie in [start, end): a period that has begun but not been published
// would count as partly or wholly missing traffic.)
func publishedEnd(now time.Time, period, delay time.Duration) time.Time {
	if delay <= 0 {
		return now
	}
	return periodStart(now.Add(-delay), period, false)
}

// periodStart rounds t to the start of a period as CloudWatch aligns them: a period under
// a minute to a multiple of itself, a longer one to the minute. up rounds to the next
// start unless t is one.
func periodStart(t time.Time, period time.Duration, up bool) time.Time {
	unit := period
	if period >= time.Minute {
		unit = time.Minute
	}
	s := t.Truncate(unit)
	if up && s.Before(t) {
		s = s.Add(unit)
	}
	return s
}

// judge compares the counts with the weights written and the bounds.
//
// Every bound the gate has is judged on measurements or not at all: the share on from's
// and to's requests together, a group's error rate on its own requests and its response
// time on its own target responses, each on at least minRequests. A bound that has fewer
// is not judged, and the check passes as Pending (the step holds on, and fails at its time
// limit if it never judges), never as a plain pass. A group the step gives weight 0 is
// sent no traffic by design, so its bounds do not apply unless it still gets minRequests
// (sticky clients): then they are judged like any other group's. A bound that is measured
// and broken fails the check even while another is pending.
func (a *ALBTraffic) judge(r Result, s Step, groups []TargetGroup, counts []groupCounts, window time.Duration) Result {
	from, to := counts[0], counts[1]
	total := from.requests + to.requests
	r.set("requests", total)
	wf, wt := max(s.Weights[s.From], 0), max(s.Weights[s.To], 0)
	var problems, notes, pending []string
	want := map[string]float64{}
	if wf+wt > 0 {
		want[s.From], want[s.To] = float64(wf)/float64(wf+wt), float64(wt)/float64(wf+wt)
	}
	var parts []string
	for i, id := range []string{s.From, s.To} {
		c := counts[i]
		r.set(id+".requests", c.requests)
		if total > 0 {
			r.set(id+".share", c.requests/total)
		}
		if w, ok := want[id]; ok {
			r.set(id+".expected", w)
			if total > 0 {
				parts = append(parts, fmt.Sprintf("%s %s (want %s)", id, fmtPct(c.requests/total), fmtPct(w)))
			}
		}
	}
	noun := "requests"
	shares := fmt.Sprintf("%s %s in %s", fmtFloat(total), noun, window.Round(time.Second))
	if len(parts) > 0 {
		shares = strings.Join(parts, ", ") + " of " + shares
	}
	switch {
	case len(want) == 0:
		// Not a bound left unjudged: the step sends from and to nothing by design.
		notes = append(notes, "share not judged: the step weighs both from and to 0")
	case total < float64(a.minRequests):
		pending = append(pending, fmt.Sprintf("%s %s to %s and %s so far, fewer than the %d a share is judged on", fmtFloat(total), noun, s.From, s.To, a.minRequests))
	default:
		p := want[s.To]
		got := to.requests / total
		dev := math.Abs(got - p)
		sigma := math.Sqrt(p * (1 - p) / total)
		switch {
		case dev <= a.tolerance+1e-9:
		case dev-a.tolerance > shareSigmas*sigma:
			problems = append(problems, fmt.Sprintf("share off by more than %s: %s %s vs %s written (%s requests)",
				fmtPct(a.tolerance), s.To, fmtPct(got), fmtPct(p), fmtFloat(total)))
		default:
			pending = append(pending, fmt.Sprintf("%s's share %s is off by more than %s from the %s written, but within chance of %s requests: counting on",
				s.To, fmtPct(got), fmtPct(a.tolerance), fmtPct(p), fmtFloat(total)))
		}
	}
	enough := float64(a.minRequests)
	for i, g := range groups {
		c, id := counts[i], []string{s.From, s.To}[i]
		r.set(id+".errors_5xx", c.errors)
		var rt time.Duration
		if c.rtCount > 0 {
			rt = time.Duration(c.rtSum / c.rtCount * float64(time.Second))
			r.set(id+".response_time_ms", float64(rt)/float64(time.Millisecond))
		}
		if c.requests > 0 {
			r.set(id+".error_rate", c.errors/c.requests)
		}
		line := fmt.Sprintf("%s: %s requests, %s target 5xx", g.label(), fmtFloat(c.requests), fmtFloat(c.errors))
		if c.rtCount > 0 {
			line += fmt.Sprintf(", %s average response", rt.Round(100*time.Microsecond))
		}
		notes = append(notes, line)
		sent := g.Weight > 0 // the step sends the group traffic: its bounds must be judged
		if m := a.maxErrRate; m != nil {
			switch {
			case c.requests >= enough:
				if c.errors/c.requests > *m+1e-12 {
					problems = append(problems, fmt.Sprintf("%s: target 5xx rate %s (%s of %s requests), above %s",
						g.label(), fmtPct(c.errors/c.requests), fmtFloat(c.errors), fmtFloat(c.requests), fmtPct(*m)))
				}
			case sent:
				pending = append(pending, fmt.Sprintf("%s: %s requests (%s target 5xx) so far, fewer than the %d its error rate is judged on",
					g.label(), fmtFloat(c.requests), fmtFloat(c.errors), a.minRequests))
			}
		}
		if a.maxRT > 0 {
			// The average is over the responses targets sent (TargetResponseTime's
			// SampleCount), not the requests: a request no target answered has no time.
			switch {
			case c.rtCount >= enough:
				if rt > a.maxRT {
					problems = append(problems, fmt.Sprintf("%s: average target response time %s, above %s", g.label(), rt.Round(100*time.Microsecond), a.maxRT))
				}
			case sent:
				pending = append(pending, fmt.Sprintf("%s: %s target responses (of %s requests) so far, fewer than the %d its response time is judged on",
					g.label(), fmtFloat(c.rtCount), fmtFloat(c.requests), a.minRequests))
			}
		}
	}
	r.judge(problems, pending, shares+"; "+strings.Join(notes, "; "))
	return r
}

// groupCounts are one group's sums over a window, over its load balancers.
type groupCounts struct {
	requests, errors float64
	// rtSum is the sum of TargetResponseTime in seconds over rtCount responses.
	rtSum, rtCount float64
}

// metricSpec is one metric read, with the statistic each is summed at.
type metricSpec struct {
	id, metric, stat string
}

// albNamespace is the CloudWatch namespace of the ALB's metrics.
const albNamespace = "AWS/ApplicationELB"

// isNLBDimension reports whether a LoadBalancer dimension ("net/NAME/ID") is an NLB's.
func isNLBDimension(lb string) bool { return strings.HasPrefix(lb, "net/") }

// isNLB reports whether any group is behind a Network Load Balancer.
func isNLB(groups []TargetGroup) bool {
	return slices.ContainsFunc(groups, func(g TargetGroup) bool { return slices.ContainsFunc(g.LoadBalancers, isNLBDimension) })
}

// The ALB's metrics read, with the statistic each is summed at.
var albMetrics = []metricSpec{
	{"req", "RequestCount", "Sum"},
	{"e5xx", "HTTPCode_Target_5XX_Count", "Sum"},
	{"rtsum", "TargetResponseTime", "Sum"},
	{"rtn", "TargetResponseTime", "SampleCount"},
}

// readALBMetrics reads, in one GetMetricData request (and its pages), each group's
// metrics by TargetGroup and LoadBalancer over [start, end) at period, summed over the
// periods and the group's load balancers: RequestCount alone, or with all set also its
// target 5xx and response times. A period with no datapoint counts 0.
func readALBMetrics(ctx context.Context, api MetricsAPI, groups []TargetGroup, start, end time.Time, period time.Duration, all bool) ([]groupCounts, error) {
	var queries []cwtypes.MetricDataQuery
	for gi, g := range groups {
		tg, ok := arnSuffix(g.ARN)
		if !ok {
			return nil, fmt.Errorf("target group %s: %q is not an ELBv2 ARN", g.Name, g.ARN)
		}
		if len(g.LoadBalancers) == 0 {
			return nil, fmt.Errorf("target group %s: no load balancer of the plan's rules forwards to it", g.Name)
		}
		for li, lb := range g.LoadBalancers {
			if isNLBDimension(lb) {
				// AWS/NetworkELB's flow counts have no TargetGroup dimension: the query
				// would answer no datapoints, read as 0.
				return nil, fmt.Errorf("target group %s: load balancer %s is a Network Load Balancer: %s", g.Name, lb, spec.NLBCloudWatchWhy)
			}
			namespace, metrics := albNamespace, albMetrics[:1]
			if all {
				metrics = albMetrics
			}
			for _, m := range metrics {
				queries = append(queries, cwtypes.MetricDataQuery{
					Id: aws.String(fmt.Sprintf("g%d_l%d_%s", gi, li, m.id)),
					MetricStat: &cwtypes.MetricStat{
						Metric: &cwtypes.Metric{Namespace: aws.String(namespace), MetricName: aws.String(m.metric),
							Dimensions: []cwtypes.Dimension{{Name: aws.String("TargetGroup"), Value: aws.String(tg)}, {Name: aws.String("LoadBalancer"), Value: aws.String(lb)}}},
						Period: aws.Int32(int32(period / time.Second)),
						Stat:   aws.String(m.stat),
					},
					ReturnData: aws.Bool(true),
				})
			}
		}
	}
	sums := map[string]float64{}
	in := &cloudwatch.GetMetricDataInput{MetricDataQueries: queries, StartTime: aws.Time(start), EndTime: aws.Time(end)}
	for page := 0; ; page++ {
		if page == 100 {
			return nil, errors.New("GetMetricData: more than 100 pages")
		}
		out, err := api.GetMetricData(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("GetMetricData %s %s to %s: %w", albNamespace, start.Format(time.TimeOnly), end.Format(time.TimeOnly), err)
		}
		for _, res := range out.MetricDataResults {
			// A series CloudWatch could not read is not a series without datapoints: counted
			// as 0 it would pass an error rate, or drain a cluster, on nothing.
			switch st := res.StatusCode; {
			case st == "" || st == cwtypes.StatusCodeComplete:
			case st == cwtypes.StatusCodePartialData && aws.ToString(out.NextToken) != "":
			default:
				return nil, fmt.Errorf("GetMetricData %s %s to %s: result %s: status %s%s: not read whole",
					albNamespace, start.Format(time.TimeOnly), end.Format(time.TimeOnly), aws.ToString(res.Id), st, fmtMessages(res.Messages))
			}
			id := aws.ToString(res.Id)
			for _, v := range res.Values {
				sums[id] += v
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	out := make([]groupCounts, len(groups))
	for gi, g := range groups {
		for li := range g.LoadBalancers {
			id := fmt.Sprintf("g%d_l%d_", gi, li)
			out[gi].requests += sums[id+"req"]
			out[gi].errors += sums[id+"e5xx"]
			out[gi].rtSum += sums[id+"rtsum"]
			out[gi].rtCount += sums[id+"rtn"]
		}
	}
	return out, nil
}

// fmtMessages prints a GetMetricData result's messages: " (Code: Value; …)", or "".
func fmtMessages(ms []cwtypes.MessageData) string {
	var out []string
	for _, m := range ms {
		out = append(out, strings.TrimPrefix(aws.ToString(m.Code)+": "+aws.ToString(m.Value), ": "))
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// arnSuffix is an ELBv2 ARN's resource part, as CloudWatch's dimensions take it:
// "targetgroup/NAME/ID", "app/NAME/ID" of a loadbalancer/app/NAME/ID.
func arnSuffix(arn string) (string, bool) {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[2] != "elasticloadbalancing" || f[5] == "" {
		return "", false
	}
	return strings.TrimPrefix(f[5], "loadbalancer/"), true
}
