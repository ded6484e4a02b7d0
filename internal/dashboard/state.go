package dashboard

import "time"

// State is the document GET /api/v1/state returns (API.md describes every field).
type State struct {
	// Version is the document's version: 1.
	Version int    `json:"version"`
	Cutover string `json:"cutover"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Started is when the recorder started; Now when the document was made.
	Started time.Time `json:"started"`
	Now     time.Time `json:"now"`
	Current Current   `json:"current"`
	Series  Series    `json:"series"`
	// RequestsSource says where Series.Requests comes from.
	RequestsSource string       `json:"requestsSource,omitempty"`
	Timeline       []Stage      `json:"timeline"`
	Gates          []GateResult `json:"gates"`
	Errors         []Problem    `json:"errors"`
}

// Current is where the cutover stands.
type Current struct {
	Phase       string           `json:"phase"`
	Step        int              `json:"step"`
	Total       int              `json:"total"`
	Weights     map[string]int64 `json:"weights,omitempty"`
	LeftSeconds float64          `json:"leftSeconds"`
	Message     string           `json:"message,omitempty"`
	Done        bool             `json:"done"`
}

// Series are the charts' data.
type Series struct {
	// Weights are the weights written, as percent of traffic per cluster.
	Weights []Point `json:"weights"`
	// DNSShares are the answer shares the DNS gate measured, percent per cluster.
	DNSShares []Point `json:"dnsShares"`
	// Requests are the requests observed per cluster (and "failures").
	Requests []Point `json:"requests"`
}

// Point is one sample of a series.
type Point struct {
	T      time.Time          `json:"t"`
	Values map[string]float64 `json:"values"`
}

// Stage is one entry of the step timeline.
type Stage struct {
	Name    string           `json:"name"`
	Phase   string           `json:"phase"`
	Weights map[string]int64 `json:"weights,omitempty"`
	Started time.Time        `json:"started"`
	Ended   time.Time        `json:"ended,omitzero"`
	// Outcome is running, passed, failed or held.
	Outcome string `json:"outcome"`
}

// GateResult is a gate's latest check.
type GateResult struct {
	Gate   string    `json:"gate"`
	Kind   string    `json:"kind"`
	Pass   bool      `json:"pass"`
	Detail string    `json:"detail"`
	Err    string    `json:"err,omitempty"`
	At     time.Time `json:"at"`
}

// Problem is a failed gate check or a rollback, with when.
type Problem struct {
	T       time.Time `json:"t"`
	Message string    `json:"message"`
}
