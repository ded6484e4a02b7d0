package gate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// Residual reads the request rate still reaching the cluster a cutover moved traffic
// away from: clients that cache DNS past the TTL, or dial an address directly, keep
// coming after its weight went to 0. The rate comes from the cluster's own metrics
// endpoint (a counter, rated between two scrapes), from a Prometheus query, or, for the
// ALB lever, from the from target group's CloudWatch RequestCount.
type Residual struct {
	metrics, counter string
	client           *http.Client
	query            string
	prom             v1.API
	// cw reads group's RequestCount at period (NewALBResidual), in periods that ended
	// at least delay ago.
	cw     MetricsAPI
	group  TargetGroup
	period time.Duration
	delay  time.Duration
	now    func() time.Time
	// last is the previous scrape of the counter.
	last     float64
	lastAt   time.Time
	haveLast bool
}

// NewResidual builds the reader from a plan's retire section; it contacts nothing.
func NewResidual(r spec.Retire) (*Residual, error) {
	if r.CloudWatch != nil {
		return nil, fmt.Errorf("retire: cloudWatch reads a target group's RequestCount: build it with NewALBResidual")
	}
	if r.Prometheus != nil {
		if err := checkURL(r.Prometheus.URL); err != nil {
			return nil, fmt.Errorf("retire: prometheus url: %w", err)
		}
		client, err := api.NewClient(api.Config{Address: r.Prometheus.URL})
		if err != nil {
			return nil, fmt.Errorf("retire: prometheus client for %s: %w", r.Prometheus.URL, err)
		}
		return &Residual{query: r.Prometheus.Query, prom: v1.NewAPI(client)}, nil
	}
	if err := checkURL(r.Metrics); err != nil {
		return nil, fmt.Errorf("retire: metrics: %w", err)
	}
	if r.Counter == "" {
		return nil, fmt.Errorf("retire: metrics %s: no counter named", r.Metrics)
	}
	return &Residual{metrics: r.Metrics, counter: r.Counter, client: &http.Client{Timeout: promTimeout}}, nil
}

// NewALBResidual builds the reader of the from target group's request rate from
// CloudWatch (a plan's retire.cloudWatch): its RequestCount by TargetGroup and
// LoadBalancer over the last period CloudWatch has published whole, the last that ended
// at least delay (spec.alb.cloudWatch.delay) ago; with no delay, over the last period and
// what has come of the current one. It calls nothing.
func NewALBResidual(r spec.Retire, api MetricsAPI, from TargetGroup, delay time.Duration) (*Residual, error) {
	if r.CloudWatch == nil {
		return nil, fmt.Errorf("retire: no cloudWatch section")
	}
	if api == nil {
		return nil, fmt.Errorf("retire: cloudWatch: no CloudWatch client to read %s's RequestCount with", from.Name)
	}
	period := r.CloudWatch.Period
	if period == 0 {
		period = spec.DefaultCloudWatchPeriod
	}
	if !spec.ValidPeriod(period) {
		return nil, fmt.Errorf("retire: cloudWatch: period %d: want 1, 5, 10, 20, 30 or a multiple of 60 seconds", period)
	}
	if isNLB([]TargetGroup{from}) {
		// Never a 0 for a group nothing measures: AWS/NetworkELB has no per-target-group
		// flow counts, and the query for them answers no datapoints.
		return nil, fmt.Errorf("retire: cloudWatch: target group %s is behind a Network Load Balancer (%s): %s",
			from.Name, strings.Join(from.LoadBalancers, ", "), spec.NLBCloudWatchWhy)
	}
	if _, ok := arnSuffix(from.ARN); !ok || len(from.LoadBalancers) == 0 {
		return nil, fmt.Errorf("retire: cloudWatch: target group %s (%q) has no ARN or no load balancer of the plan's rules", from.Name, from.ARN)
	}
	if delay < 0 {
		return nil, fmt.Errorf("retire: cloudWatch: delay %s: want ≥ 0", delay)
	}
	return &Residual{cw: api, group: from, period: time.Duration(period) * time.Second, delay: delay, now: time.Now}, nil
}

// Source says where the rate is read, for the report.
func (r *Residual) Source() string {
	if r.cw != nil {
		return fmt.Sprintf("CloudWatch AWS/ApplicationELB RequestCount of target group %s (load balancer %s, period %s, delay %s)",
			r.group.Name, strings.Join(r.group.LoadBalancers, ", "), r.period, r.delay)
	}
	if r.prom != nil {
		return "prometheus query " + r.query
	}
	return r.counter + " at " + r.metrics
}

// Rate returns the requests per second now. ok is false when there is no rate yet: the
// first scrape of a counter only sets the baseline. What cannot be read as a rate (no
// series, NaN, a result CloudWatch could not give whole) is an error, never a 0: the
// retire check must not find a cluster drained on no measurement. A CloudWatch period with
// no datapoint is 0 requests, as an ALB publishes no zero counts; the delay keeps periods
// not yet published out of the read.
func (r *Residual) Rate(ctx context.Context) (rate float64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, promTimeout)
	defer cancel()
	if r.cw != nil {
		start, end := r.window(r.now())
		counts, err := readALBMetrics(ctx, r.cw, []TargetGroup{r.group}, start, end, r.period, false)
		if err != nil {
			return 0, false, fmt.Errorf("retire: %w", err)
		}
		return counts[0].requests / end.Sub(start).Seconds(), true, nil
	}
	if r.prom != nil {
		val, _, err := r.prom.Query(ctx, r.query, time.Now())
		if err != nil {
			return 0, false, fmt.Errorf("retire: query %q: %w", r.query, err)
		}
		v, n, err := single(val)
		if err != nil {
			return 0, false, fmt.Errorf("retire: query %q: %w", r.query, err)
		}
		// No series is no measurement (a target Prometheus no longer scrapes looks the
		// same as one that serves nothing), and a cluster must not be declared drained on
		// none: a query whose empty result does mean 0 says so itself.
		if n == 0 {
			return 0, false, fmt.Errorf("retire: query %q: no data: no rate to judge the drain on; if no series means no requests, write (%s) or vector(0)", r.query, r.query)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("retire: query %q = %s: not a rate", r.query, fmtFloat(v))
		}
		return v, true, nil
	}
	total, err := r.scrape(ctx)
	if err != nil {
		return 0, false, err
	}
	if math.IsNaN(total) || math.IsInf(total, 0) {
		// Not a count: kept as the baseline it would poison every later rate.
		return 0, false, fmt.Errorf("retire: metrics %s: %s = %s: not a count", r.metrics, r.counter, fmtFloat(total))
	}
	now := time.Now()
	defer func() { r.last, r.lastAt, r.haveLast = total, now, true }()
	if !r.haveLast {
		return 0, false, nil
	}
	d := now.Sub(r.lastAt).Seconds()
	if total < r.last || d <= 0 {
		// A counter reset (the process restarted): this scrape is a new baseline.
		return 0, false, nil
	}
	return (total - r.last) / d, true, nil
}

// window is the span the CloudWatch reader reads at now: with a delay, the last whole
// period published (ended at least delay ago), so that a period CloudWatch has not yet
// published is never read as a drained cluster; without one, the last period and what
// has come of the current one.
func (r *Residual) window(now time.Time) (start, end time.Time) {
	if r.delay > 0 {
		end = publishedEnd(now, r.period, r.delay)
		return end.Add(-r.period), end
	}
	return periodStart(now.Add(-r.period), r.period, false), now
}

// scrape reads the counter's total over all its series.
func (r *Residual) scrape(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.metrics, nil)
	if err != nil {
		return 0, fmt.Errorf("retire: metrics %s: %w", r.metrics, err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("retire: metrics %s: %w", r.metrics, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("retire: metrics %s: status %s", r.metrics, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("retire: metrics %s: %w", r.metrics, err)
	}
	f, ok := families[r.counter]
	if !ok {
		return 0, fmt.Errorf("retire: metrics %s: no metric %s", r.metrics, r.counter)
	}
	var total float64
	for _, m := range f.GetMetric() {
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		default:
			return 0, fmt.Errorf("retire: metrics %s: %s is a %s, want a counter", r.metrics, r.counter, f.GetType())
		}
	}
	return total, nil
}
