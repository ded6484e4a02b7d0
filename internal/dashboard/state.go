package dashboard

import "time"

// APIVersion is the version of the State document; it is also the "v1" of its path.
const APIVersion = 1

// Requests sources, as State.RequestsSource names them.
const (
	// SourceClients: a load generator called Observe; points are requests per second.
	SourceClients = "clients"
	// SourceGate: no load generator; points are the requests one HTTP gate check sent
	// through the public name, per cluster that served them.
	SourceGate = "http-gate"
)

// State is the document GET /api/v1/state returns; API.md describes every field.
type State struct {
	// Version is APIVersion.
	Version int    `json:"version"`
	Cutover string `json:"cutover"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Lever is the lever the cutover pulls, named as the report names it
	// (cutover.LeverRoute53, cutover.LeverALB); "" until known: SetLever says it, and an
	// ALB gate's result tells it.
	Lever string `json:"lever"`
	// Started is when the recorder started; Now when the document was made.
	Started time.Time `json:"started"`
	Now     time.Time `json:"now"`
	// Ended is when the cutover ended (its done event); zero, and absent from the
	// document, while it runs. The page's time axis frames the cutover by it.
	Ended   time.Time `json:"ended,omitzero"`
	Current Current   `json:"current"`
	Series  Series    `json:"series"`
	// RequestsSource is SourceClients or SourceGate; empty before any requests are known.
	RequestsSource string `json:"requestsSource"`
	// RequestsGate names the HTTP gate when RequestsSource is SourceGate.
	RequestsGate string       `json:"requestsGate,omitempty"`
	Timeline     []Stage      `json:"timeline"`
	Gates        []GateResult `json:"gates"`
	Errors       []Problem    `json:"errors"`
	// TargetHealth is, for the ALB lever, each target group's health as a targetHealth
	// gate last found it, in the order groups were first seen.
	TargetHealth []GroupHealth `json:"targetHealth"`
}

// Current is where the cutover stands.
type Current struct {
	Phase string `json:"phase"`
	// Step is the step reached, from 1 (0 before the first); Total the number of steps.
	// Both are kept through rollback, retire and done.
	Step        int              `json:"step"`
	Total       int              `json:"total"`
	Weights     map[string]int64 `json:"weights"`
	LeftSeconds float64          `json:"leftSeconds"`
	Message     string           `json:"message"`
	Done        bool             `json:"done"`
	// RolledBack is true once a rollback has begun.
	RolledBack bool `json:"rolledBack"`
	// GatesSkipped is true once a promote --skip-gates made steps pass without their
	// gates (stays true): traffic moved unmeasured.
	GatesSkipped bool `json:"gatesSkipped"`
}

// Series are the charts' data, each capped at maxPoints points (see appendPoint).
type Series struct {
	// Weights are the weights written, as percent of traffic per cluster.
	Weights []Point `json:"weights"`
	// DNSShares are the answer shares the DNS gate measured, percent per cluster.
	DNSShares []Point `json:"dnsShares"`
	// Requests are the requests observed per cluster, plus "failures" from clients.
	Requests []Point `json:"requests"`
	// ALBShares are the request shares per target group an albTraffic gate measured
	// from CloudWatch, percent per cluster: the ALB lever's counterpart of DNSShares.
	ALBShares []Point `json:"albShares"`
	// ClientShares are the shares of the clients' requests each cluster served between
	// consecutive load-generator observations, percent.
	ClientShares []Point `json:"clientShares"`
}

// Point is one sample of a series.
type Point struct {
	T      time.Time          `json:"t"`
	Values map[string]float64 `json:"values"`
}

// Stage is one entry of the step timeline.
type Stage struct {
	Name string `json:"name"`
	// Kind is step, rollback, ttl or retire.
	Kind    string           `json:"kind"`
	Phase   string           `json:"phase"`
	Weights map[string]int64 `json:"weights,omitempty"`
	Started time.Time        `json:"started"`
	Ended   time.Time        `json:"ended,omitzero"`
	// Outcome is the phase while the stage runs, then passed, rolled back, held or done.
	Outcome string `json:"outcome"`
}

// GateResult is a gate's latest check.
type GateResult struct {
	Gate   string             `json:"gate"`
	Kind   string             `json:"kind"`
	Pass   bool               `json:"pass"`
	Detail string             `json:"detail"`
	Err    string             `json:"err,omitempty"`
	Values map[string]float64 `json:"values,omitempty"`
	At     time.Time          `json:"at"`
	// Pending marks a pass that judged nothing yet (an albTraffic gate that has counted
	// too few requests): the step holds on until it has judged.
	Pending bool `json:"pending,omitempty"`
}

// GroupHealth is one target group's health as a targetHealth gate last found it.
type GroupHealth struct {
	// Group is the plan's name for the cluster behind the group (from or to), else the
	// target group's own name (a third cluster's group of the rules).
	Group string `json:"group"`
	// Healthy and Targets count the group's healthy and registered targets.
	Healthy int `json:"healthy"`
	Targets int `json:"targets"`
	// Gate names the targetHealth gate that checked, At when.
	Gate string    `json:"gate"`
	At   time.Time `json:"at"`
}

// Problem is a failed gate check or a rollback's reason, with when.
type Problem struct {
	T time.Time `json:"t"`
	// Gate names the failed gate, when a gate failed.
	Gate    string `json:"gate,omitempty"`
	Message string `json:"message"`
}
