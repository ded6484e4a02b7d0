package gate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// promTimeout bounds one query when the caller's context allows longer; the plan has no
// field for it, and a gate that hangs holds the whole step.
const promTimeout = 10 * time.Second

// NoData policies.
const (
	NoDataFail = "fail"
	// NoDataPass is refused: a step would pass on no measurement (see NewPrometheus).
	NoDataPass = "pass"
)

// Prometheus evaluates an instant query and bounds its single value. Values: "value" (when
// finite) and "series" (how many the query returned).
//
// A value that is not a number (NaN, as 0/0 gives for a ratio of rates while nothing is
// counted; ±Inf, as x/0 gives) is not judged: the check passes as Pending, and the step
// holds on until it is, or fails at its time limit. An empty result (no series: none
// scraped yet, or gone stale) fails the check, as noData: fail says.
type Prometheus struct {
	name     string
	url      string
	query    string
	min, max *float64
	noData   string
	api      v1.API
}

// NewPrometheus builds a Prometheus gate from its spec; it does not contact the server.
func NewPrometheus(name string, g spec.PrometheusGate) (*Prometheus, error) {
	if err := checkURL(g.URL); err != nil {
		return nil, fmt.Errorf("gate %s: url: %w", name, err)
	}
	if strings.TrimSpace(g.Query) == "" {
		return nil, fmt.Errorf("gate %s: query is empty", name)
	}
	if g.Min == nil && g.Max == nil {
		return nil, fmt.Errorf("gate %s: query %q: neither min nor max is set: nothing to check", name, g.Query)
	}
	if g.Min != nil && g.Max != nil && *g.Min > *g.Max {
		return nil, fmt.Errorf("gate %s: min %v > max %v: no value can pass", name, *g.Min, *g.Max)
	}
	noData := g.NoData
	switch noData {
	case "":
		noData = NoDataFail
	case NoDataFail:
	case NoDataPass:
		// Never blind: an empty result is no measurement, and a step must not pass on none.
		// A query whose empty result does mean a value says so itself, and is measured.
		return nil, fmt.Errorf("gate %s: noData %q: a step would pass on no measurement; make the query answer when there is no data, e.g. %q, or leave noData unset (fail)",
			name, g.NoData, "("+g.Query+") or vector(0)")
	default:
		return nil, fmt.Errorf("gate %s: noData %q: want %q", name, g.NoData, NoDataFail)
	}
	client, err := api.NewClient(api.Config{Address: g.URL})
	if err != nil {
		return nil, fmt.Errorf("gate %s: prometheus client for %s: %w", name, g.URL, err)
	}
	return &Prometheus{name: name, url: g.URL, query: g.Query, min: g.Min, max: g.Max, noData: noData, api: v1.NewAPI(client)}, nil
}

// Name is the gate's name.
func (p *Prometheus) Name() string { return p.name }

// Check runs the query at the current time and compares its value with the bounds.
func (p *Prometheus) Check(ctx context.Context, _ Step) Result {
	r := Result{Gate: p.name, Kind: KindPrometheus}
	ctx, cancel := context.WithTimeout(ctx, promTimeout)
	defer cancel()
	val, warnings, err := p.api.Query(ctx, p.query, time.Now())
	if err != nil {
		return r.fail(fmt.Errorf("query %q at %s: %w", p.query, p.url, err))
	}
	v, n, err := single(val)
	if err != nil {
		r.Detail = fmt.Sprintf("%s: %v", p.query, err)
		return r
	}
	r.set("series", float64(n))
	switch {
	case n == 0:
		r.Detail = fmt.Sprintf("%s: no data (noData: %s)", p.query, p.noData) // NewPrometheus refuses noData: pass
	case math.IsNaN(v) || math.IsInf(v, 0):
		r.Pass, r.Pending = true, true
		r.Detail = fmt.Sprintf("not judged yet: %s = %s: not a number to bound (a ratio over nothing counted yet?)", p.query, fmtFloat(v))
	default:
		r.set("value", v)
		r.Pass = true
		var bounds []string
		if p.min != nil {
			ok := v >= *p.min
			r.Pass = r.Pass && ok
			bounds = append(bounds, bound(ok, "≥", "<", *p.min))
		}
		if p.max != nil {
			ok := v <= *p.max
			r.Pass = r.Pass && ok
			bounds = append(bounds, bound(ok, "≤", ">", *p.max))
		}
		r.Detail = fmt.Sprintf("%s = %s, %s", p.query, fmtFloat(v), strings.Join(bounds, ", "))
	}
	if len(warnings) > 0 {
		r.Detail += " (warnings: " + strings.Join(warnings, "; ") + ")"
	}
	return r
}

// bound prints one comparison the way it came out: "≤ 0.05" or "> 0.05".
func bound(ok bool, pass, fail string, limit float64) string {
	if ok {
		return pass + " " + fmtFloat(limit)
	}
	return fail + " " + fmtFloat(limit)
}

// single extracts the one value a gate query must yield: a scalar or a vector with one
// sample. n is the number of series (0 for an empty vector, when v means nothing). A
// vector of several series is refused rather than guessed at: which one was meant is the
// query's business, e.g. with sum() or max().
func single(val model.Value) (v float64, n int, err error) {
	switch val := val.(type) {
	case *model.Scalar:
		return float64(val.Value), 1, nil
	case model.Vector:
		switch len(val) {
		case 0:
			return 0, 0, nil
		case 1:
			return float64(val[0].Value), 1, nil
		}
		return 0, len(val), fmt.Errorf("%d series (e.g. %s), want one: aggregate them, e.g. with sum(…) or max(…)", len(val), val[0].Metric)
	case model.Matrix:
		return 0, len(val), fmt.Errorf("a range vector, want one value: use an instant query, e.g. wrap it in rate(…) or max_over_time(…)")
	case nil:
		return 0, 0, fmt.Errorf("no result")
	default:
		return 0, 0, fmt.Errorf("a %s, want a scalar or a one-sample vector", val.Type())
	}
}
