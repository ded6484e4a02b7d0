package cloudwatchapi

import (
	"context"
	"fmt"
	"time"
)

// maxStatisticsDatapoints is GetMetricStatistics' limit on one call.
const maxStatisticsDatapoints = 1440

// getMetricStatisticsInput is a validated GetMetricStatistics request.
type getMetricStatisticsInput struct {
	// stat is the metric, its period and unit; the statistics asked for are in stats.
	stat       metricStat
	stats      []statistic
	start, end time.Time
}

// bindGetMetricStatistics reads and validates GetMetricStatistics with the error codes its
// model declares: MissingParameter, InvalidParameterValue, InvalidParameterCombination.
func bindGetMetricStatistics(p map[string]any) (getMetricStatisticsInput, error) {
	b := binder{code: codeInvalidParameterValue}
	var in getMetricStatisticsInput
	missing := func(name string) error {
		return &apiError{Code: codeMissingParameter, Message: "The parameter " + name + " is required."}
	}
	invalid := func(format string, args ...any) error {
		return &apiError{Code: codeInvalidParameterValue, Message: fmt.Sprintf(format, args...)}
	}
	var err error
	var has bool
	if in.stat.namespace, has, err = b.str(p, "Namespace", "Namespace"); err != nil {
		return in, err
	} else if !has || in.stat.namespace == "" {
		return in, missing("Namespace")
	}
	if in.stat.metricName, has, err = b.str(p, "MetricName", "MetricName"); err != nil {
		return in, err
	} else if !has || in.stat.metricName == "" {
		return in, missing("MetricName")
	}
	if in.stat.dims, err = b.dimensions(p, "Dimensions", "Dimensions"); err != nil {
		return in, err
	}
	if len(in.stat.dims) > maxDimensions {
		return in, invalid("The collection Dimensions must not have a size greater than %d.", maxDimensions)
	}
	if in.start, has, err = b.timestamp(p, "StartTime", "StartTime"); err != nil {
		return in, err
	} else if !has {
		return in, missing("StartTime")
	}
	if in.end, has, err = b.timestamp(p, "EndTime", "EndTime"); err != nil {
		return in, err
	} else if !has {
		return in, missing("EndTime")
	}
	if in.stat.period, has, err = b.integer(p, "Period", "Period"); err != nil {
		return in, err
	} else if !has {
		return in, missing("Period")
	}
	if in.stat.unit, _, err = b.str(p, "Unit", "Unit"); err != nil {
		return in, err
	}
	if !in.start.Before(in.end) {
		return in, invalid("The parameter StartTime must be less than the parameter EndTime.")
	}
	if !validPeriod(in.stat.period) {
		return in, invalid("The parameter Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60.")
	}
	basic, hasBasic, err := b.list(p, "Statistics", "Statistics")
	if err != nil {
		return in, err
	}
	ext, hasExt, err := b.list(p, "ExtendedStatistics", "ExtendedStatistics")
	if err != nil {
		return in, err
	}
	hasBasic, hasExt = hasBasic && len(basic) > 0, hasExt && len(ext) > 0
	switch {
	case hasBasic && hasExt:
		return in, &apiError{Code: codeInvalidParameterCombination, Message: "The parameters Statistics and ExtendedStatistics are mutually exclusive and you have specified both."}
	case !hasBasic && !hasExt:
		return in, &apiError{Code: codeMissingParameter, Message: "Must specify either Statistics or ExtendedStatistics."}
	case len(basic) > 5:
		return in, invalid("The collection Statistics must not have a size greater than 5.")
	case len(ext) > 10:
		return in, invalid("The collection ExtendedStatistics must not have a size greater than 10.")
	}
	for i, v := range basic {
		s, _ := v.(string)
		st, verdict := parseStat(s)
		if verdict != statOK || st.kind == statPercentile {
			// CloudWatch's own message, "<list element>" and all. (seen)
			return in, invalid("The parameter Statistics.member.%d.<list element> must be a value in the set [SampleCount, Average, Sum, Minimum, Maximum].", i+1)
		}
		in.stats = append(in.stats, st)
	}
	for i, v := range ext {
		s, _ := v.(string)
		st, verdict := parseStat(s)
		switch {
		case verdict == statUnsupported:
			return in, unsupported(codeInvalidParameterValue, "ExtendedStatistics.member.%d %s is a CloudWatch statistic the sandbox does not compute; it computes percentiles (p99, p99.9).", i+1, s)
		case verdict == statInvalid || st.kind != statPercentile:
			return in, invalid("The value %s for parameter ExtendedStatistics.member.%d is not a valid extended statistic.", s, i+1)
		}
		in.stats = append(in.stats, st)
	}
	return in, nil
}

// getMetricStatistics serves GetMetricStatistics.
func (a *API) getMetricStatistics(ctx context.Context, p map[string]any) (obj, error) {
	in, err := bindGetMetricStatistics(p)
	if err != nil {
		return nil, err
	}
	now := a.now()
	period := in.stat.period
	from := alignStart(in.start, now, period)
	step := time.Duration(period) * time.Second
	if n := (in.end.Sub(from) + step - 1) / step; n > maxStatisticsDatapoints {
		return nil, &apiError{Code: codeInvalidParameterCombination, Message: fmt.Sprintf( // (seen)
			"You have requested up to %d datapoints, which exceeds the limit of %d. You may reduce the datapoints requested by increasing Period, or decreasing the time range.",
			n, maxStatisticsDatapoints)}
	}
	dps := list{}
	s, why := resolve(in.stat.namespace, in.stat.metricName, in.stat.dims, in.stat.unit)
	if why != "" {
		a.cfg.Logger.Info("cloudwatch api: no such metric, empty result", "namespace", in.stat.namespace,
			"metric", in.stat.metricName, "dimensions", fmt.Sprint(in.stat.dims), "unit", in.stat.unit, "why", why)
	} else {
		points, err := a.cfg.Source.Series(ctx, s.lb, s.tg, s.metric, from, in.end)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s %s: %w", s.metric, s.lb, s.tg, err)
		}
		for _, b := range aggregate(points, from, in.end, period, s.info.countLike) {
			if !retained(b.start, now, period) {
				continue
			}
			if dp := statisticsDatapoint(b, in, s.info.unit); dp != nil {
				dps = append(dps, dp)
			}
		}
	}
	return obj{{"Label", in.stat.metricName}, {"Datapoints", dps}}, nil
}

// statisticsDatapoint is one Datapoint, its members in the model's XML order; nil when
// the period has none of the statistics asked for.
func statisticsDatapoint(b *bucket, in getMetricStatisticsInput, unit string) obj {
	values := map[statKind]float64{}
	var ext entries
	for _, st := range in.stats {
		v, ok := b.value(st)
		if !ok {
			continue
		}
		if st.kind == statPercentile {
			ext = append(ext, entry{key: st.name, v: v})
		} else {
			values[st.kind] = v
		}
	}
	if len(values) == 0 && len(ext) == 0 {
		return nil
	}
	dp := obj{{"Timestamp", b.start}}
	for _, k := range []struct {
		kind statKind
		name string
	}{{statSampleCount, "SampleCount"}, {statAverage, "Average"}, {statSum, "Sum"}, {statMinimum, "Minimum"}, {statMaximum, "Maximum"}} {
		if v, ok := values[k.kind]; ok {
			dp = append(dp, member{k.name, v})
		}
	}
	dp = append(dp, member{"Unit", unit})
	if len(ext) > 0 {
		dp = append(dp, member{"ExtendedStatistics", ext})
	}
	return dp
}
