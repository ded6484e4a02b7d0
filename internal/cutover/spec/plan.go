package spec

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Plan is a validated plan file with every default applied and every step resolved to
// concrete weights: what the cutover engine runs.
type Plan struct {
	// Name is metadata.name.
	Name string
	// Zone and ZoneID are as written; at least one is set, unless ALB is.
	Zone, ZoneID string
	// Zones is spec.zones, normalised (lower case, no trailing dot): several hosted zones
	// moved together, in place of Zone and ZoneID; nil for a plan of one zone.
	Zones []string
	// Records have their Type defaulted (A) and names normalised (lower case, no trailing dot).
	Records []Record
	// SelectAllWeighted is spec.select.allWeighted: Records are empty in the plan as
	// parsed, and filled by the engine with what it selects (or selected, per its journal).
	SelectAllWeighted bool
	// ALB is the ALB lever's rules and target groups, as written; nil for the Route 53
	// lever (Zone and Records).
	ALB *ALB
	// CloudMap is the Cloud Map lever's service and the clients' query, its cluster
	// attribute and health status defaulted; nil for the other levers.
	CloudMap *CloudMap
	// From and To are the set identifiers; with ALB, the clusters' names (spec.from and
	// spec.to, else the target groups' names).
	From, To string
	// Steps are in order, each with its weights, pause and gates (Spec.Gates first).
	Steps []PlanStep
	// Rollback has its mode defaulted; Steps are resolved to weights.
	Rollback PlanRollback
	// OnDrift is DriftPause or DriftRollback (defaulted to DriftPause).
	OnDrift string
	// InSyncTimeout, StepTimeout and TotalTimeout have defaults applied; TotalTimeout 0 is none.
	InSyncTimeout, StepTimeout, TotalTimeout time.Duration
	// LowerTTL is the TTL to set before step 1, 0 for none: written to the plain members
	// (an alias's TTL is its target's, which no write lowers; see TTL).
	LowerTTL int64
	// Retire is the residual-traffic check after the last step, nil for none; its
	// Timeout is defaulted.
	Retire *Retire
	// CloudWatchDelay is spec.alb.cloudWatch.delay, defaulted (DefaultCloudWatchDelay)
	// for an ALB plan; 0 for the Route 53 lever. The albTraffic gates and
	// retire.cloudWatch read only periods that ended at least this long ago.
	CloudWatchDelay time.Duration
	// Warnings are legal but probably unintended settings, e.g. a step whose weights are
	// both 0 (Route 53 then splits evenly: it does not mean "off").
	Warnings []*FieldError
}

// FieldError is one problem in a plan file, named by its path in the file: an
// apimachinery field.Error rendered the plan file's way (`PATH "VALUE": REASON`).
type FieldError struct {
	// Path is the field's path, e.g. "spec.steps[2].weights.from".
	Path string
	// Value is the offending value as written; empty when the field is missing.
	Value string
	// Reason says what was wanted.
	Reason string
	// Type is the field.Error's type: field.ErrorTypeRequired for a missing field,
	// ErrorTypeTypeInvalid for a value of the wrong type, ErrorTypeForbidden for an unknown
	// field or one that is not allowed beside another, ErrorTypeDuplicate, else
	// ErrorTypeInvalid.
	Type field.ErrorType
}

// PlanStep is one resolved step.
type PlanStep struct {
	// Weights are the Route 53 (or, with ALB, the ALB) weights written for From and To.
	Weights Weights
	// Pause is how long the step holds with all gates passing; 0 means "the record TTL",
	// which the engine enforces as the floor anyway.
	Pause time.Duration
	// PauseField is where Pause was written, for messages: "spec.pause" or
	// "spec.steps[N].pause" ("" when neither sets it).
	PauseField string
	// Gates have names (default "<kind>-<n>") and defaults applied.
	Gates []Gate
}

// Rollback modes.
const (
	RollbackImmediate = "immediate"
	RollbackGradual   = "gradual"
)

// What a runner does when it finds weights it did not write (spec.onDrift).
const (
	// DriftPause holds the cutover where it is until `cutover resume` (which writes the
	// step's weights again) or `cutover abort`.
	DriftPause = "pause"
	// DriftRollback fails the step and rolls back.
	DriftRollback = "rollback"
)

// PlanRollback is a resolved rollback.
type PlanRollback struct {
	Mode string
	// Steps are the intermediate weights of a gradual rollback, before the final return to
	// the starting weights.
	Steps []Weights
	// Pause per gradual step; 0 means the record TTL.
	Pause time.Duration
}

// Defaults.
const (
	DefaultInSyncTimeout = 5 * time.Minute
	DefaultRetireTimeout = 10 * time.Minute
	DefaultStepTimeout   = 10 * time.Minute
	DefaultHTTPRequests  = 20
	DefaultHTTPTimeout   = 2 * time.Second
	DefaultDNSSamples    = 200
	DefaultDNSTolerance  = 0.1
	DefaultLatencySlack  = 0.2
	DefaultPercentile    = 99
	// DefaultMinHealthy is a targetHealth gate's least healthy targets per group.
	DefaultMinHealthy = 1
	// DefaultALBTolerance and DefaultMinRequests are an albTraffic gate's.
	DefaultALBTolerance = 0.1
	DefaultMinRequests  = 100
	// DefaultCloudWatchPeriod is the period, in seconds, the ALB's CloudWatch metrics are
	// read at: the resolution an ALB publishes them at.
	DefaultCloudWatchPeriod = 60
	// DefaultCloudWatchDelay is how long after a period ends the ALB's CloudWatch
	// metrics are read as whole (spec.alb.cloudWatch.delay): an ALB sends a minute's
	// counts after it ends, and CloudWatch has 1-minute metrics about 2 minutes after
	// their timestamp, so 2 minutes after the end leaves a minute to spare. Reading
	// sooner takes requests still on their way for missing ones, and a minute not yet
	// published for a drained cluster.
	DefaultCloudWatchDelay = 2 * time.Minute
	// MaxCloudWatchDelay bounds spec.alb.cloudWatch.delay: CloudWatch publishes an ALB's
	// metrics within minutes, and a longer delay only postpones every verdict.
	MaxCloudWatchDelay = 15 * time.Minute
)
