package cloudwatchapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

const (
	// maxQueries and defaultMaxDatapoints are GetMetricData's documented limits.
	maxQueries           = 500
	defaultMaxDatapoints = 100800
	maxDimensions        = 30

	scanDescending = "TimestampDescending"
	scanAscending  = "TimestampAscending"

	statusComplete = "Complete"
	statusPartial  = "PartialData"
)

var metricIDRe = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*$`)

// metricQuery is one MetricDataQuery.
type metricQuery struct {
	index      int // 1-based, as in MetricDataQueries.member.N
	id         string
	label      string
	hasLabel   bool
	returnData bool
	stat       metricStat
}

// metricStat is a query's MetricStat.
type metricStat struct {
	namespace, metricName string
	dims                  []dimension
	period                int64
	stat                  statistic
	unit                  string
}

// getMetricDataInput is a validated GetMetricData request.
type getMetricDataInput struct {
	queries       []metricQuery
	start, end    time.Time
	nextToken     string
	scanBy        string
	maxDatapoints int64
}

// bindGetMetricData reads and validates a GetMetricData request as CloudWatch does: every
// problem found is reported at once, one line each, as a ValidationError. The messages
// marked (seen) are CloudWatch's own, as published in client bug reports; the others follow
// their wording.
func bindGetMetricData(p map[string]any) (getMetricDataInput, error) {
	b := binder{code: codeValidation}
	var in getMetricDataInput
	var problems validationErrors

	items, _, err := b.list(p, "MetricDataQueries", "MetricDataQueries")
	if err != nil {
		return in, err
	}
	start, hasStart, err := b.timestamp(p, "StartTime", "StartTime")
	if err != nil {
		return in, err
	}
	end, hasEnd, err := b.timestamp(p, "EndTime", "EndTime")
	if err != nil {
		return in, err
	}
	if in.nextToken, _, err = b.str(p, "NextToken", "NextToken"); err != nil {
		return in, err
	}
	scanBy, hasScan, err := b.str(p, "ScanBy", "ScanBy")
	if err != nil {
		return in, err
	}
	maxDP, hasMax, err := b.integer(p, "MaxDatapoints", "MaxDatapoints")
	if err != nil {
		return in, err
	}

	if len(items) == 0 {
		problems.add("The parameter MetricDataQueries is required.")
	}
	if len(items) > maxQueries {
		problems.add("The collection MetricDataQueries must not have a size greater than %d.", maxQueries)
	}
	switch {
	case !hasStart:
		problems.add("The parameter StartTime is required.")
	case !hasEnd:
		problems.add("The parameter EndTime is required.")
	// CloudWatch compares whole seconds: two times within one second are equal. (seen)
	case start.Truncate(time.Second).Equal(end.Truncate(time.Second)):
		problems.add("The parameter StartTime must not equal parameter EndTime.")
	case start.After(end):
		problems.add("The parameter EndTime must be greater than StartTime.")
	}
	in.start, in.end = start, end
	in.scanBy = scanDescending
	if hasScan {
		if scanBy != scanDescending && scanBy != scanAscending {
			problems.add("The value %s for parameter ScanBy is not valid: it must be a value in the set [TimestampDescending, TimestampAscending].", scanBy)
		}
		in.scanBy = scanBy
	}
	in.maxDatapoints = defaultMaxDatapoints
	if hasMax {
		if maxDP < 1 {
			problems.add("The parameter MaxDatapoints must be greater than or equal to 1.")
		}
		in.maxDatapoints = maxDP
	}

	seen := map[string]bool{}
	duplicate := false
	for i, item := range items {
		q, err := bindQuery(b, item, i+1, &problems)
		if err != nil {
			return in, err
		}
		if q.id != "" {
			duplicate = duplicate || seen[q.id]
			seen[q.id] = true
		}
		in.queries = append(in.queries, q)
	}
	if duplicate {
		problems.add("The values for parameter id in MetricDataQueries are not unique.") // (seen)
	}
	return in, problems.err()
}

func bindQuery(b binder, item any, n int, problems *validationErrors) (metricQuery, error) {
	path := fmt.Sprintf("MetricDataQueries.member.%d", n)
	q := metricQuery{index: n, returnData: true}
	m, ok := item.(map[string]any)
	if !ok {
		return q, b.bad(path, "MetricDataQuery", item)
	}
	id, hasID, err := b.str(m, "Id", path+".Id")
	if err != nil {
		return q, err
	}
	switch {
	case !hasID || id == "":
		problems.add("The parameter %s.Id is required.", path)
	case len(id) > 255 || !metricIDRe.MatchString(id):
		problems.add("The value %s for parameter %s.Id is not matching the expected pattern ^[a-z][a-zA-Z0-9_]*$.", id, path) // (seen)
	}
	q.id = id
	if q.label, q.hasLabel, err = b.str(m, "Label", path+".Label"); err != nil {
		return q, err
	}
	if rd, has, err := b.boolean(m, "ReturnData", path+".ReturnData"); err != nil {
		return q, err
	} else if has {
		q.returnData = rd
	}
	if _, has, _ := b.str(m, "Expression", path+".Expression"); has {
		return q, unsupported(codeValidation, "%s.Expression asks for metric math or a Metrics Insights query, which the sandbox does not evaluate. Ask for each metric with a MetricStat and compute on the client.", path)
	}
	_, hasPeriod, err := b.integer(m, "Period", path+".Period")
	if err != nil {
		return q, err
	}
	ms, hasStat, err := b.structure(m, "MetricStat", path+".MetricStat")
	if err != nil {
		return q, err
	}
	if !hasStat {
		problems.add("The parameter %s.MetricStat is required.", path) // (seen)
		return q, nil
	}
	if hasPeriod {
		problems.add("The parameters %s.Period and %s.MetricStat are mutually exclusive and you have specified both.", path, path) // (seen)
	}
	q.stat, err = bindMetricStat(b, ms, path+".MetricStat", problems)
	return q, err
}

func bindMetricStat(b binder, ms map[string]any, path string, problems *validationErrors) (metricStat, error) {
	var s metricStat
	metric, hasMetric, err := b.structure(ms, "Metric", path+".Metric")
	if err != nil {
		return s, err
	}
	if !hasMetric {
		problems.add("The parameter %s.Metric is required.", path)
	} else {
		if s.namespace, _, err = b.str(metric, "Namespace", path+".Metric.Namespace"); err != nil {
			return s, err
		}
		var hasName bool
		if s.metricName, hasName, err = b.str(metric, "MetricName", path+".Metric.MetricName"); err != nil {
			return s, err
		}
		if !hasName || s.metricName == "" {
			problems.add("The parameter %s.Metric.MetricName is required.", path)
		}
		if s.dims, err = b.dimensions(metric, "Dimensions", path+".Metric.Dimensions"); err != nil {
			return s, err
		}
		if len(s.dims) > maxDimensions {
			problems.add("The collection %s.Metric.Dimensions must not have a size greater than %d.", path, maxDimensions)
		}
	}
	period, hasPeriod, err := b.integer(ms, "Period", path+".Period")
	if err != nil {
		return s, err
	}
	switch {
	case !hasPeriod:
		problems.add("The parameter %s.Period is required.", path)
	case !validPeriod(period):
		problems.add("The parameter %s.Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60.", path)
	}
	s.period = period
	stat, hasStatName, err := b.str(ms, "Stat", path+".Stat")
	if err != nil {
		return s, err
	}
	if !hasStatName {
		problems.add("The parameter %s.Stat is required.", path)
	} else {
		st, verdict := parseStat(stat)
		switch verdict {
		case statInvalid:
			problems.add("The value %s for parameter %s.Stat is not a valid statistic.", stat, path) // (seen)
		case statUnsupported:
			return s, unsupported(codeValidation, "%s.Stat %s is a CloudWatch statistic the sandbox does not compute; it computes SampleCount, Average, Sum, Minimum, Maximum and percentiles (p99, p99.9).", path, stat)
		}
		s.stat = st
	}
	if s.unit, _, err = b.str(ms, "Unit", path+".Unit"); err != nil {
		return s, err
	}
	return s, nil
}

// getMetricData serves GetMetricData.
func (a *API) getMetricData(ctx context.Context, p map[string]any) (obj, error) {
	in, err := bindGetMetricData(p)
	if err != nil {
		return nil, err
	}
	var returned []metricQuery
	for _, q := range in.queries {
		if q.returnData {
			returned = append(returned, q)
		}
	}
	fp := fingerprint(in)
	cursors := make([]cursor, len(returned))
	if in.nextToken != "" {
		if cursors, err = parseToken(in.nextToken, fp, len(returned)); err != nil {
			return nil, err
		}
	}
	now := a.now()
	budget := in.maxDatapoints
	results := make(list, 0, len(returned))
	more := false
	for i, q := range returned {
		dps, err := a.query(ctx, q.stat, in.start, in.end, now)
		if err != nil {
			return nil, err
		}
		if in.scanBy == scanDescending {
			slices.Reverse(dps)
		}
		dps = cursors[i].remaining(dps, in.scanBy)
		take := min(int64(len(dps)), budget)
		budget -= take
		page := dps[:take]
		status := statusComplete
		if take < int64(len(dps)) {
			status, more = statusPartial, true
			if take > 0 {
				cursors[i] = cursor{State: cursorStarted, Last: page[take-1].t.Unix()}
			}
		} else {
			cursors[i] = cursor{State: cursorDone}
		}
		times, values := make(list, len(page)), make(list, len(page))
		for j, d := range page {
			times[j], values[j] = d.t, d.v
		}
		results = append(results, obj{
			{"Id", q.id},
			{"Label", label(q)},
			{"Timestamps", times},
			{"Values", values},
			{"StatusCode", status},
			{"Messages", list{}},
		})
	}
	out := obj{{"MetricDataResults", results}}
	if more {
		out = append(out, member{"NextToken", makeToken(fp, cursors)})
	}
	return append(out, member{"Messages", list{}}), nil
}

// query computes one MetricStat's data points, oldest first.
func (a *API) query(ctx context.Context, ms metricStat, start, end, now time.Time) ([]datapoint, error) {
	s, why := resolve(ms.namespace, ms.metricName, ms.dims, ms.unit)
	if why != "" {
		// CloudWatch answers a query for a metric nobody published with no data, not an
		// error; the log says why, for whoever wonders where the traffic went.
		a.cfg.Logger.Info("cloudwatch api: no such metric, empty result", "namespace", ms.namespace,
			"metric", ms.metricName, "dimensions", fmt.Sprint(ms.dims), "unit", ms.unit, "why", why)
		return nil, nil
	}
	from := alignStart(start, now, ms.period)
	points, err := a.cfg.Source.Series(ctx, s.lb, s.tg, s.metric, from, end)
	if err != nil {
		return nil, fmt.Errorf("read %s of %s %s: %w", s.metric, s.lb, s.tg, err)
	}
	return datapoints(aggregate(points, from, end, ms.period, s.info.countLike), ms.stat, now, ms.period), nil
}

// label is the result's Label: the query's own (with ${PROP('…')} dynamic labels filled
// in), else the metric name, as CloudWatch labels a MetricStat.
func label(q metricQuery) string {
	if !q.hasLabel {
		return q.stat.metricName
	}
	props := map[string]string{
		"MetricName": q.stat.metricName, "Namespace": q.stat.namespace,
		"Period": fmt.Sprint(q.stat.period), "Stat": q.stat.stat.name,
	}
	for _, d := range q.stat.dims {
		props["Dim."+d.Name] = d.Value
	}
	return propRe.ReplaceAllStringFunc(q.label, func(m string) string {
		if v, ok := props[propRe.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}

var propRe = regexp.MustCompile(`\$\{PROP\('([^']*)'\)\}`)

// Paging. A NextToken carries, for each returned query, how far its data points have been
// handed out: by the time of the last one given, so that data arriving between pages
// (the newest seconds keep filling) neither repeats nor shifts what is left.

const (
	cursorNotStarted = iota
	cursorStarted
	cursorDone
)

type cursor struct {
	State int   `json:"s"`
	Last  int64 `json:"t,omitempty"`
}

func (c cursor) remaining(dps []datapoint, scanBy string) []datapoint {
	switch c.State {
	case cursorDone:
		return nil
	case cursorStarted:
		i := slices.IndexFunc(dps, func(d datapoint) bool {
			if scanBy == scanDescending {
				return d.t.Unix() < c.Last
			}
			return d.t.Unix() > c.Last
		})
		if i < 0 {
			return nil
		}
		return dps[i:]
	}
	return dps
}

type pageToken struct {
	Fingerprint string   `json:"f"`
	Cursors     []cursor `json:"c"`
}

const tokenPrefix = "cfcw1."

func makeToken(fp string, cursors []cursor) string {
	b, _ := json.Marshal(pageToken{Fingerprint: fp, Cursors: cursors})
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func parseToken(tok, fp string, n int) ([]cursor, error) {
	bad := &apiError{Code: codeInvalidNextToken, Message: "The NextToken is not valid for this request: it must come from the previous page of the same GetMetricData request."}
	raw, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, bad
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil || t.Fingerprint != fp || len(t.Cursors) != n {
		return nil, bad
	}
	return t.Cursors, nil
}

// fingerprint identifies a request's pages: everything but NextToken and MaxDatapoints.
func fingerprint(in getMetricDataInput) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d|%d|%s", in.start.Unix(), in.end.Unix(), in.scanBy)
	for _, q := range in.queries {
		fmt.Fprintf(h, "|%s|%t|%s|%s|%v|%d|%s|%s", q.id, q.returnData, q.stat.namespace, q.stat.metricName,
			q.stat.dims, q.stat.period, q.stat.stat.name, q.stat.unit)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
