package cloudwatchapi

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Namespace is the ALB's CloudWatch namespace.
const Namespace = "AWS/ApplicationELB"

// NetworkNamespace is the NLB's CloudWatch namespace: its metrics count flows (TCP
// connections), not requests.
const NetworkNamespace = "AWS/NetworkELB"

// The NLB metrics served, named as the NLB publishes them ("CloudWatch metrics for your
// Network Load Balancer"): NewFlowCount, the connections established from clients to
// targets; ActiveFlowCount, the concurrent ones; TCP_ELB_Reset_Count, the resets the load
// balancer itself sent.
const (
	NewFlowCount     = "NewFlowCount"
	ActiveFlowCount  = "ActiveFlowCount"
	TCPELBResetCount = "TCP_ELB_Reset_Count"
)

// The metrics served, named as the ALB publishes them.
const (
	RequestCount           = "RequestCount"
	HTTPCodeTarget5XXCount = "HTTPCode_Target_5XX_Count"
	HTTPCodeELB5XXCount    = "HTTPCode_ELB_5XX_Count"
	TargetResponseTime     = "TargetResponseTime"
)

// The dimension names, whose values are ARN suffixes as CloudWatch uses them:
// "app/<name>/<hex>" and "targetgroup/<name>/<hex>".
const (
	DimLoadBalancer = "LoadBalancer"
	DimTargetGroup  = "TargetGroup"
)

// Point is one second of one metric: the per-second bucket the sandbox's ALB proxy keeps,
// in the shape of CloudWatch's own StatisticValues. For a count metric (RequestCount, the
// 5XX counts) it is one datum whose value is the count in that second: use CountPoint. For
// TargetResponseTime it sums SampleCount responses of Sum seconds in all.
type Point struct {
	// Time is the start of the second.
	Time        time.Time
	SampleCount float64
	Sum         float64
	Minimum     float64
	Maximum     float64
	// Values are the individual values behind the point (TargetResponseTime: each
	// response's seconds), for percentiles. Optional: a single datum (SampleCount 1) needs
	// none, but a period holding any other point without them has no percentile data
	// point, rather than a wrong one.
	Values []float64
}

// CountPoint is the point of a count metric: n events in the second starting at t.
func CountPoint(t time.Time, n float64) Point {
	return Point{Time: t, SampleCount: 1, Sum: n, Minimum: n, Maximum: n}
}

// Source gives the sandbox's load balancer traffic, second by second: an ALB's (lb
// "app/…") and an NLB's (lb "net/…"). The weighted proxies satisfy it through an adapter.
type Source interface {
	// Series returns the points of metric for load balancer lb (its ARN suffix,
	// "app/<name>/<hex>"), or for target group tg ("targetgroup/<name>/<hex>") behind lb
	// when tg is not empty, whose Time is in [from, to), in any order. Seconds without
	// traffic may be absent or zero; an unknown lb or tg yields no points and no error.
	Series(ctx context.Context, lb, tg, metric string, from, to time.Time) ([]Point, error)
}

// metricInfo is what the ALB publishes of one metric: its unit, the dimension sets it is
// published under (CloudWatch matches a query's dimensions to these exactly), and whether
// its data points are reported only when non-zero.
type metricInfo struct {
	unit      string
	dimSets   [][]string // each sorted
	countLike bool
}

// catalog lists the served metrics with the dimension sets AWS documents for them (the
// AvailabilityZone variants are left out: the sandbox has no zones). A TargetGroup without
// its LoadBalancer is not among them: CloudWatch returns no data for that query, and so
// does the sandbox.
var catalog = map[string]metricInfo{
	RequestCount: {unit: "Count", countLike: true,
		dimSets: [][]string{{DimLoadBalancer}, {DimLoadBalancer, DimTargetGroup}}},
	HTTPCodeTarget5XXCount: {unit: "Count", countLike: true,
		dimSets: [][]string{{DimLoadBalancer}, {DimLoadBalancer, DimTargetGroup}}},
	HTTPCodeELB5XXCount: {unit: "Count", countLike: true,
		dimSets: [][]string{{DimLoadBalancer}}},
	TargetResponseTime: {unit: "Seconds",
		dimSets: [][]string{{DimLoadBalancer}, {DimLoadBalancer, DimTargetGroup}}},
}

// networkCatalog lists the NLB metrics served, as catalog does the ALB's. AWS publishes an
// NLB's flow and reset counts by LoadBalancer (and AvailabilityZone) only: TargetGroup is a
// dimension of its host counts alone, so a query for a target group's flows answers no
// values, on AWS and here. An NLB's split between target groups is not in CloudWatch.
var networkCatalog = map[string]metricInfo{
	NewFlowCount:     {unit: "Count", countLike: true, dimSets: [][]string{{DimLoadBalancer}}},
	ActiveFlowCount:  {unit: "Count", dimSets: [][]string{{DimLoadBalancer}}},
	TCPELBResetCount: {unit: "Count", countLike: true, dimSets: [][]string{{DimLoadBalancer}}},
}

// dimension is one name/value pair of a query's metric.
type dimension struct{ Name, Value string }

// series is a query's metric resolved to what the Source is asked for.
type series struct {
	lb, tg, metric string
	info           metricInfo
}

// resolve maps a query's metric to a published series, or says why none matches. No
// match is not an error in CloudWatch: the query's result is empty.
func resolve(namespace, metric string, dims []dimension, unit string) (series, string) {
	cat, names := catalog, "RequestCount, HTTPCode_Target_5XX_Count, HTTPCode_ELB_5XX_Count and TargetResponseTime"
	switch namespace {
	case Namespace:
	case NetworkNamespace:
		cat, names = networkCatalog, "NewFlowCount, ActiveFlowCount and TCP_ELB_Reset_Count"
	default:
		return series{}, "the sandbox publishes only namespaces " + Namespace + " and " + NetworkNamespace
	}
	info, ok := cat[metric]
	if !ok {
		return series{}, "the sandbox publishes only " + names + " in " + namespace
	}
	if unit != "" && unit != info.unit {
		return series{}, metric + " is published in unit " + info.unit
	}
	dimNames := make([]string, 0, len(dims))
	s := series{metric: metric, info: info}
	for _, d := range dims {
		dimNames = append(dimNames, d.Name)
		switch d.Name {
		case DimLoadBalancer:
			s.lb = d.Value
		case DimTargetGroup:
			s.tg = d.Value
		}
	}
	slices.Sort(dimNames)
	// Each family publishes under its own namespace: an NLB's ("net/…") counts are not in
	// AWS/ApplicationELB, nor an ALB's in AWS/NetworkELB.
	if strings.HasPrefix(s.lb, "net/") != (namespace == NetworkNamespace) {
		return series{}, "load balancer " + s.lb + " publishes no metrics in " + namespace
	}
	for _, set := range info.dimSets {
		if slices.Equal(set, dimNames) {
			return s, ""
		}
	}
	return series{}, metric + " is published only with the dimension sets " + dimSetsText(info.dimSets)
}

func dimSetsText(sets [][]string) string {
	out := ""
	for i, s := range sets {
		if i > 0 {
			out += " and "
		}
		out += "[" + strings.Join(s, ", ") + "]"
	}
	return out
}
