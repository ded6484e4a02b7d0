// Package spec is the cutover plan file: `apiVersion: crossfade.io/v1alpha1`,
// `kind: Cutover`. It parses and validates the file and resolves it into the concrete
// steps the cutover engine runs; it does no I/O beyond reading the file.
//
// It uses Kubernetes' own machinery: sigs.k8s.io/yaml decodes the file strictly into
// plain json-tagged types (deep-copyable, so that a Cutover resource can embed Spec),
// and the rules report apimachinery field errors (field.Path, field.ErrorList; see
// ValidateCutover for an object that is already decoded). A layer on top names every
// unknown, duplicate or mistyped field by its path, with the key a misspelt one
// probably means and YAML 1.1's quoting surprises, and lists the problems in the
// order of the plan's fields.
//
// The Cutover resource (internal/cutover/api/v1alpha1) embeds Spec, and controller-gen
// writes its CRD schema from these types. Its markers (+optional,
// +kubebuilder:validation:…) sit in a comment block of their own, a blank line above a
// field's or type's doc comment: controller-gen reads that block, and the doc comments
// that `cutover explain` and docs/plan-reference.md show stay free of them.
package spec

import (
	"strings"
	"time"
)

// APIVersion and Kind identify a plan file.
const (
	APIVersion = "crossfade.io/v1alpha1"
	Kind       = "Cutover"
)

// Cutover is a plan file as written.
type Cutover struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names the cutover; the name keys its journal and lock.
type Metadata struct {
	Name string `json:"name"`
}

// Spec is what to shift, how, and when to give up.
type Spec struct {
	// Zone is the hosted zone's name (example.com); ZoneID selects it by id instead, for
	// when a public and a private zone share the name.
	Zone   string `json:"zone,omitempty"`
	ZoneID string `json:"zoneID,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=100

	// Zones, in place of zone and zoneID, are several hosted zones' names whose records
	// move together (a fleet): each record belongs to the longest of them its name ends
	// in, select searches every one, and each step writes one change batch per zone (more
	// only where a zone's changes exceed Route 53's limits of a batch), the zones in
	// parallel. Each name must be one hosted zone's: zones of one name (a public and a
	// private one) need spec.zoneID, one plan each.
	Zones []string `json:"zones,omitempty"`
	// +optional

	// Records are the weighted record sets shifted together, in one change batch per step.
	Records []Record `json:"records"`
	// Select, in place of Records, selects a whole cluster: every weighted record set of
	// the zone with members for both from and to. The selection is made once, when the
	// cutover starts, and kept in its journal: a resume moves what was selected then.
	Select *Select `json:"select,omitempty"`
	// ALB moves the target-group weights of ALB listener rules instead of Route 53
	// records (the ALB lever): no DNS answer changes, so no resolver cache keeps clients
	// on the old cluster. With it, zone, zoneID, records and ttl are not set.
	ALB *ALB `json:"alb,omitempty"`
	// CloudMap moves the custom health status of a Cloud Map service's instances instead
	// (the Cloud Map lever): clients that discover the service (DiscoverInstances with
	// HEALTHY or HEALTHY_OR_ELSE_ALL) spread over the instances it returns, and a step
	// sets instances of from and to HEALTHY or UNHEALTHY so that to's share of the
	// healthy ones is the step's. With it, from and to are the values of the instances'
	// cluster attribute, and zone, zoneID, records, select, alb and ttl are not set.
	CloudMap *CloudMap `json:"cloudMap,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=128

	// From and To are the set identifiers (cluster ids) losing and gaining traffic. With
	// alb they are optional names for the clusters behind alb.from and alb.to (default:
	// the target groups' names), used in weights, gates, the journal and the report.
	From string `json:"from"`
	// +optional
	// +kubebuilder:validation:MaxLength=128

	To string `json:"to"`
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64

	// Steps are the stops on the way, in order; at most 64.
	Steps []Step `json:"steps"`
	// +optional

	// Pause is how long each step holds, with every gate passing, unless the step says
	// otherwise. Never less than the records' TTL.
	Pause Duration `json:"pause,omitzero"`
	// Paused, in a Cutover object, holds the run at the step it has reached (true) and
	// lets it go on (false): the one field of a started Cutover's spec that can still
	// change. A plan file for `cutover run` leaves it out; there `crossfade cutover pause`
	// and `resume` do this.
	Paused bool `json:"paused,omitempty"`
	// A gate of no kind or of two is refused by the schema too; a step's gates only by the
	// plan's decoder (a step has no CEL type). The bound keeps the rule's cost within the
	// API server's budget.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:XValidation:rule="[has(self.http), has(self.prometheus), has(self.dns), has(self.targetHealth), has(self.albTraffic), has(self.cloudMapDiscovery)].filter(k, k).size() == 1",message="want exactly one of http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery"

	// Gates are checked at every step, in addition to the step's own.
	Gates []Gate `json:"gates,omitempty"`
	// +optional

	// Rollback says how to return to the starting weights when a gate fails or on abort.
	Rollback Rollback `json:"rollback,omitzero"`
	// +kubebuilder:validation:Enum=pause;rollback

	// OnDrift is what the runner does when the zone's weights differ from those it last
	// wrote (another writer, one that ignores crossfade's authority record, moved them):
	// "pause" (default: hold, and wait for `cutover resume` or `abort`) or "rollback".
	OnDrift string `json:"onDrift,omitempty"`
	// +optional

	// Timeouts bound the waits.
	Timeouts Timeouts `json:"timeouts,omitzero"`
	// TTL optionally lowers the records' TTL before the first step.
	TTL *TTL `json:"ttl,omitempty"`
	// Retire optionally waits, after the last step, until the from cluster's observed
	// request rate has stayed low for a window, and then declares it retirable.
	Retire *Retire `json:"retire,omitempty"`
}

// Retire is the residual-traffic check: clients that cache DNS past the TTL, or that
// dial an address directly, keep reaching the old cluster after its weight went to 0.
// The rate is read from the from cluster's own metrics endpoint (a counter, rated by
// crossfade between scrapes) or from a Prometheus query that yields the rate.
type Retire struct {
	// Metrics is a Prometheus text-format endpoint of the from cluster; with Counter.
	Metrics string `json:"metrics,omitempty"`
	// Counter is the request counter at Metrics, summed over its series.
	Counter string `json:"counter,omitempty"`
	// Prometheus is a query yielding the from cluster's request rate, instead of Metrics.
	Prometheus *RetireQuery `json:"prometheus,omitempty"`
	// CloudWatch reads, with spec.alb, the from target group's RequestCount
	// (AWS/ApplicationELB, by TargetGroup and LoadBalancer) instead of Metrics. Refused
	// for a Network Load Balancer, whose flow counts are not published per target group.
	CloudWatch *RetireCloudWatch `json:"cloudWatch,omitempty"`
	// +kubebuilder:validation:Minimum=0

	// MaxRate is the most requests per second counted as drained; default 0.
	MaxRate float64 `json:"maxRate,omitempty"`
	// Window is how long the rate must stay at or below MaxRate.
	Window Duration `json:"window"`
	// +optional

	// Timeout bounds the wait; past it the cutover completes with the cluster declared
	// not retirable (traffic is not moved back: the new cluster serves). Default 10m.
	Timeout Duration `json:"timeout,omitzero"`
}

// RetireCloudWatch reads the from target group's request rate from CloudWatch: its
// RequestCount over the last period (and what has come of the current one). Not for a
// Network Load Balancer: AWS/NetworkELB has no per-target-group flow counts.
type RetireCloudWatch struct {
	// +kubebuilder:validation:Minimum=1

	// Period is the CloudWatch period asked for, in seconds: 1, 5, 10, 20, 30 or a
	// multiple of 60; default 60.
	Period int `json:"period,omitempty"`
}

// RetireQuery is a Prometheus server and a query that yields one number.
type RetireQuery struct {
	URL   string `json:"url"`
	Query string `json:"query"`
}

// ALB names the listener rules whose forward actions a cutover moves, and the target
// groups it moves traffic between. Every rule is written at each step, in this order, one
// ModifyRule (or, for a listener, ModifyListener) call each: ELBv2 has no multi-rule
// transaction.
type ALB struct {
	// +optional

	// ListenerRules are listener-rule ARNs (the rule's forward action), or listener ARNs
	// (the listener's default action), of Application Load Balancers: e.g. the HTTP and
	// the HTTPS listener's rule for one host, shifted together. Or Network Load Balancer
	// listener ARNs (…:listener/net/…): an NLB's weighted target groups are its listener's
	// default action, and a weight applies to new connections only. A plan does not mix
	// NLB and ALB ARNs. An NLB plan gates on targetHealth and the clusters' own metrics
	// (prometheus, retire.metrics or retire.prometheus): AWS/NetworkELB publishes flow
	// counts per load balancer only, so albTraffic and retire.cloudWatch are refused.
	ListenerRules []string `json:"listenerRules"`
	// Select, in place of ListenerRules, selects every listener default action and
	// listener rule of the named load balancers whose forward action includes both From
	// and To. As spec.select, it is made once, at start, and kept in the journal.
	Select *ALBSelect `json:"select,omitempty"`
	// From and To are the target groups losing and gaining traffic: an ARN or a name.
	// Another target group of a rule's forward action keeps its weight.
	From string `json:"from"`
	To   string `json:"to"`
	// CloudWatch says how the ALB's metrics are read, by the albTraffic gates and
	// retire.cloudWatch alike.
	CloudWatch *ALBCloudWatch `json:"cloudWatch,omitempty"`
}

// ALBCloudWatch is how the ALB lever's CloudWatch readers (albTraffic gates and
// retire.cloudWatch) read the AWS/ApplicationELB metrics.
type ALBCloudWatch struct {
	// Delay is how long after a period ends CloudWatch is taken to hold all of it. An
	// ALB sends each minute's counts after the minute, and CloudWatch shows them a minute
	// or two later: a period read too early counts requests as missing, and an
	// unpublished period reads as no traffic at all. So every read ends at the last
	// period that ended at least Delay ago (a window that has no such period yet is not
	// judged). Default 2m (DefaultCloudWatchDelay); 0s reads up to now, the current
	// period as far as it has come: for a CloudWatch that counts at once (the sandbox).
	Delay *Duration `json:"delay,omitempty"`
}

// Select selects the records a cutover moves instead of listing them.
type Select struct {
	// AllWeighted selects every weighted A, AAAA and CNAME record set of the zone that
	// has a member for from and a member for to (a cluster serves many names).
	AllWeighted bool `json:"allWeighted"`
}

// ALBSelect selects the listener rules an ALB cutover moves instead of listing them.
type ALBSelect struct {
	// LoadBalancers are Application Load Balancer ARNs, whose listeners' default actions
	// and rules are searched. Required: the search never spans the account.
	LoadBalancers []string `json:"loadBalancers"`
}

// IsLoadBalancerARN reports whether ref is an Application Load Balancer's ARN.
func IsLoadBalancerARN(ref string) bool {
	res, ok := arnResource(ref)
	return ok && strings.HasPrefix(res, "loadbalancer/app/") && strings.Count(res, "/") == 3
}

// TargetGroupName is the name a target group reference (an ARN or a name) carries: the
// name part of a targetgroup ARN, else the reference itself.
func TargetGroupName(ref string) string {
	if res, ok := arnResource(ref); ok {
		if kind, rest, _ := strings.Cut(res, "/"); kind == "targetgroup" {
			name, _, _ := strings.Cut(rest, "/")
			return name
		}
	}
	return ref
}

// arnResource returns the resource part of an ELBv2 ARN
// (arn:PARTITION:elasticloadbalancing:REGION:ACCOUNT:RESOURCE), and whether ref is one.
func arnResource(ref string) (string, bool) {
	f := strings.SplitN(ref, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[1] == "" || f[2] != "elasticloadbalancing" || f[3] == "" || f[4] == "" {
		return "", false
	}
	return f[5], true
}

// IsNetworkListenerARN reports whether an ELBv2 ARN names a Network Load Balancer's
// listener (…:listener/net/…), whose default action's weighted target groups an ALB plan
// moves the same way (NLB weighted target groups, November 2025).
func IsNetworkListenerARN(arn string) bool {
	res, _ := arnResource(arn)
	return strings.HasPrefix(res, "listener/net/")
}

// NetworkRules counts the Network Load Balancer listeners among a plan's listener rules.
func NetworkRules(arns []string) int {
	n := 0
	for _, a := range arns {
		if IsNetworkListenerARN(a) {
			n++
		}
	}
	return n
}

// IsListenerARN reports whether an ELBv2 ARN names a listener (its default action), not
// a listener rule.
func IsListenerARN(arn string) bool {
	res, _ := arnResource(arn)
	return strings.HasPrefix(res, "listener/")
}

// Record is one record set name and type whose members are shifted.
type Record struct {
	Name string `json:"name"`
	// +kubebuilder:validation:Enum=A;AAAA;CNAME

	// Type is A, AAAA or CNAME; default A.
	Type string `json:"type,omitempty"`
}

// A bare number or a mapping: no one OpenAPI type, so the schema keeps the value as
// written and bounds a mapping's fields; the plan's decoder reads it (a bare number's
// range too).
// +kubebuilder:validation:Type=""
// +kubebuilder:pruning:PreserveUnknownFields

// Step is one stop. In YAML it is either a bare number, the percent of traffic to `to`
// (`- 10`), or a mapping with exactly one of percent or weights.
type Step struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100

	// Percent to `to`: weights become from=100-p, to=p.
	Percent *int64 `json:"percent,omitempty"`
	// Weights sets both members' Route 53 weights (0..255), or with alb both target
	// groups' ALB weights (0..999), explicitly.
	Weights *Weights `json:"weights,omitempty"`
	// Pause overrides Spec.Pause for this step.
	Pause *Duration `json:"pause,omitempty"`
	// Gates are checked at this step in addition to Spec.Gates.
	Gates []Gate `json:"gates,omitempty"`
}

// Weights is an explicit weight pair.
type Weights struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=999

	From int64 `json:"from"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=999

	To int64 `json:"to"`
}

// Gate is one check; exactly one of its kinds is set.
type Gate struct {
	// Name identifies the gate in progress output and the report; default: its kind and
	// position.
	Name       string          `json:"name,omitempty"`
	HTTP       *HTTPGate       `json:"http,omitempty"`
	Prometheus *PrometheusGate `json:"prometheus,omitempty"`
	DNS        *DNSGate        `json:"dns,omitempty"`
	// TargetHealth and ALBTraffic are the ALB lever's proof (only with spec.alb): the
	// target groups' health, and the traffic CloudWatch counts per target group.
	TargetHealth *TargetHealthGate `json:"targetHealth,omitempty"`
	ALBTraffic   *ALBTrafficGate   `json:"albTraffic,omitempty"`
	// CloudMapDiscovery is the Cloud Map lever's proof (only with spec.cloudMap): what
	// DiscoverInstances returns for the clients' query.
	CloudMapDiscovery *CloudMapDiscoveryGate `json:"cloudMapDiscovery,omitempty"`
}

// TargetHealthGate requires every target group a step sends traffic to (a weight above 0
// in any of the plan's listener rules, a third cluster's group too) to have at least
// MinHealthy healthy targets, as DescribeTargetHealth reports them. It is checked before
// the step's weights are written, so that a step never shifts traffic onto a group with
// no healthy target, and at every check while the step holds.
type TargetHealthGate struct {
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000

	// MinHealthy is the least number of healthy targets per group; default 1.
	MinHealthy int `json:"minHealthy,omitempty"`
}

// ALBTrafficGate reads, from CloudWatch's AWS/ApplicationELB metrics by TargetGroup and
// LoadBalancer (GetMetricData), the requests each of from's and to's target groups got
// since the step's weights took effect, and compares to's measured share of them with
// the share the weights written promise: the ALB lever's counterpart of the dns gate.
// It also bounds each group's target 5xx rate (HTTPCode_Target_5XX_Count /
// RequestCount) and its average TargetResponseTime. It is refused on a Network Load
// Balancer: AWS/NetworkELB publishes flow counts per load balancer only, not per target
// group, so an NLB's split cannot be read from CloudWatch (use a prometheus gate on the
// clusters' own metrics).
type ALBTrafficGate struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1

	// Tolerance is the largest absolute difference allowed between to's measured and
	// written share of from's and to's requests, 0..1; default 0.1.
	Tolerance *float64 `json:"tolerance,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000

	// MinRequests is the fewest requests a number is judged on: the share on from's and
	// to's together, an error rate on the group's own requests, a response time on its own
	// target responses; default 100. Until every bound set has them (for a group the step
	// gives weight 0: unless it gets them anyway), the gate says pending and the step holds
	// on, failing at its time limit: it never passes on a bound not judged.
	MinRequests int `json:"minRequests,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1

	// MaxErrorRate bounds each group's HTTPCode_Target_5XX_Count / RequestCount, 0..1;
	// default none.
	MaxErrorRate *float64 `json:"maxErrorRate,omitempty"`
	// MaxResponseTime bounds each group's average TargetResponseTime; default none.
	MaxResponseTime *Duration `json:"maxResponseTime,omitempty"`
	// +kubebuilder:validation:Minimum=1

	// Period is the CloudWatch period asked for, in seconds: 1, 5, 10, 20, 30 or a
	// multiple of 60; default 60, the resolution at which an ALB publishes its metrics.
	// The window starts at the first whole period after the step's weights took effect.
	Period int `json:"period,omitempty"`
	// +optional

	// Window, when set, reads only the last Window of the hold (a sliding window);
	// default the whole hold so far.
	Window Duration `json:"window,omitzero"`
}

// HTTPGate probes over HTTP through the public name and directly at each cluster.
type HTTPGate struct {
	// URL is requested through the public name, resolved afresh for every request (by
	// Resolver when set, else the system resolver), as clients would.
	URL string `json:"url,omitempty"`
	// Clusters maps a set identifier (from, to) to a URL that reaches that cluster
	// directly, bypassing DNS weights.
	Clusters map[string]string `json:"clusters,omitempty"`
	// Resolver is a DNS server (host:port) to resolve URL's host with.
	Resolver string `json:"resolver,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000

	// Requests per check and per URL; default 20.
	Requests int `json:"requests,omitempty"`
	// +optional

	// Timeout per request; default 2s.
	Timeout Duration `json:"timeout,omitzero"`
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=599

	// ExpectStatus lists the status codes counted as success; default 200..399.
	ExpectStatus []int `json:"expectStatus,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1

	// MinSuccessRatio is the least share of successful requests, 0..1; default 1.
	MinSuccessRatio *float64 `json:"minSuccessRatio,omitempty"`
	// Latency bounds a percentile of request latency; optional.
	Latency *Latency `json:"latency,omitempty"`
	// NoWorseThanFrom requires the `to` cluster's success ratio to be at least, and its
	// latency percentile at most (1+LatencySlack) times, the `from` cluster's. Needs
	// Clusters for both members.
	NoWorseThanFrom bool `json:"noWorseThanFrom,omitempty"`
	// +kubebuilder:validation:Minimum=0

	// LatencySlack is the relative latency allowance for NoWorseThanFrom; default 0.2.
	LatencySlack *float64 `json:"latencySlack,omitempty"`
}

// Latency bounds one percentile.
type Latency struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Maximum=100

	// Percentile is 1..100; default 99.
	Percentile float64 `json:"percentile,omitempty"`
	// Max is the bound.
	Max Duration `json:"max"`
}

// PrometheusGate evaluates an instant query against a threshold.
type PrometheusGate struct {
	// URL is the Prometheus server (its HTTP API is at URL/api/v1/query).
	URL string `json:"url"`
	// Query must yield a scalar or a single-sample vector.
	Query string `json:"query"`
	// Max and Min bound the value; at least one is set.
	Max *float64 `json:"max,omitempty"`
	Min *float64 `json:"min,omitempty"`
	// +kubebuilder:validation:Enum=fail

	// NoData says what an empty result means: "fail" (the default). "pass" is refused when
	// the gate is built (a step never passes on no measurement): a query whose empty
	// result means a value says so itself, e.g. `… or vector(0)`.
	NoData string `json:"noData,omitempty"`
}

// DNSGate samples the authoritative answers and compares the shares with the weights
// written.
type DNSGate struct {
	// Servers are the authoritative servers (host:port) asked; default: the zone's name
	// servers as the provider lists them.
	Servers []string `json:"servers,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000

	// Samples is the queries per check and record; default 200.
	Samples int `json:"samples,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1

	// Tolerance is the largest absolute difference allowed between a member's measured
	// and written share, 0..1; default 0.1.
	Tolerance *float64 `json:"tolerance,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000

	// SampleNames is how many records a check samples in turn when the plan has more
	// (those that failed or could not be measured are sampled again on top); default 20.
	// A step passes only once every record has been judged since its weights were written.
	SampleNames int `json:"sampleNames,omitempty"`
}

// Rollback is how a failed or aborted cutover returns to its starting weights.
type Rollback struct {
	// +kubebuilder:validation:Enum=immediate;gradual

	// Mode is "immediate" (default: one batch back to the starting weights) or "gradual"
	// (through Steps, each held for Pause, without gates).
	Mode string `json:"mode,omitempty"`
	// +kubebuilder:validation:items:Minimum=0
	// +kubebuilder:validation:items:Maximum=100

	// Steps are the stops of a gradual rollback, in percent to `to` (descending).
	Steps []int64 `json:"steps,omitempty"`
	// +optional

	// Pause per rollback step; default: the records' TTL.
	Pause Duration `json:"pause,omitzero"`
}

// Timeouts bound the waits; zero means the default.
type Timeouts struct {
	// +optional

	// InSync bounds the wait for a change to reach INSYNC; default 5m.
	InSync Duration `json:"inSync,omitzero"`
	// +optional

	// Step bounds how far a step may overrun its hold (slow gate checks); default 10m. A
	// step over time rolls back. (A failing gate rolls back at once: it is not retried.)
	Step Duration `json:"step,omitzero"`
	// +optional

	// Total bounds the whole cutover; default none.
	Total Duration `json:"total,omitzero"`
}

// TTL lowers the records' TTL to Lower seconds before step 1 and waits out the old TTL,
// so that the steps can be short and take effect quickly. An alias member has no TTL of
// its own (Route 53 answers it with its target's: 60 s for a load balancer), so a plan
// whose aliases' targets answer with a TTL above Lower is refused when it is checked
// against the zone.
type TTL struct {
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647

	Lower int64 `json:"lower"`
}

// A Go duration string ≥ 0 (time.ParseDuration's syntax without a sign; "0" too).
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:Pattern=`^(\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+|[+-]?0)$`

// Duration is a time.Duration written as a Go duration string ("90s", "5m").
type Duration struct {
	time.Duration
}
