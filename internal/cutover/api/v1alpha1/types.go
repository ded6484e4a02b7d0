package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=crossfade
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Pending, Progressing, Paused, Completed, RolledBack or Failed"
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.progress`,description="The step reached, of the plan's steps"
// +kubebuilder:printcolumn:name="Weights",type=string,JSONPath=`.status.weights`,description="The weights in effect, by cluster"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
//
// The spec is frozen once the run has started: every field of it but paused is compared
// with the stored one. A started cutover is one whose status.phase is set and not
// Pending (the status is the controller's, written through the status subresource).
// steps has no CEL type (a step is a bare number or a mapping), so it is read through
// dyn(); each field is taken with ?. (an unset field equals only an unset one), and the
// fields go into one list literal per side: the cost estimator sizes a list literal by
// its length, where it would size an untyped field as unbounded and refuse the rule. The
// runtime work is an equality of two specs, bounded by the object's size.
// TestImmutableRuleCoversSpec fails when a field is added to spec.Spec and not here.
// +kubebuilder:validation:XValidation:rule="oldSelf.?status.?phase.orValue('') in ['', 'Pending'] || [dyn(self.spec).?zone, dyn(self.spec).?zoneID, dyn(self.spec).?zones, dyn(self.spec).?records, dyn(self.spec).?select, dyn(self.spec).?alb, dyn(self.spec).?cloudMap, dyn(self.spec).?from, dyn(self.spec).?to, dyn(self.spec).?steps, dyn(self.spec).?pause, dyn(self.spec).?gates, dyn(self.spec).?rollback, dyn(self.spec).?onDrift, dyn(self.spec).?timeouts, dyn(self.spec).?ttl, dyn(self.spec).?retire] == [dyn(oldSelf.spec).?zone, dyn(oldSelf.spec).?zoneID, dyn(oldSelf.spec).?zones, dyn(oldSelf.spec).?records, dyn(oldSelf.spec).?select, dyn(oldSelf.spec).?alb, dyn(oldSelf.spec).?cloudMap, dyn(oldSelf.spec).?from, dyn(oldSelf.spec).?to, dyn(oldSelf.spec).?steps, dyn(oldSelf.spec).?pause, dyn(oldSelf.spec).?gates, dyn(oldSelf.spec).?rollback, dyn(oldSelf.spec).?onDrift, dyn(oldSelf.spec).?timeouts, dyn(oldSelf.spec).?ttl, dyn(oldSelf.spec).?retire]",message="spec is immutable once the cutover has started (status.phase past Pending): to change course, set spec.paused, or abort it (kubectl crossfade abort NAME) and apply a new Cutover",fieldPath=".spec",reason=FieldValueForbidden

// Cutover is a cutover plan as a Kubernetes object: `kubectl apply` a plan file, and the
// in-cluster controller runs it and reports its progress in status.
type Cutover struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the plan: what to shift, how, and when to give up; the plan file's spec.
	Spec spec.Spec `json:"spec"`
	// +optional

	// Status is the run as the controller keeps it.
	Status CutoverStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// CutoverList is a list of Cutovers.
type CutoverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Cutovers.
	Items []Cutover `json:"items"`
}

// Phase is where a cutover's run is.
// +kubebuilder:validation:Enum=Pending;Progressing;Paused;Completed;RolledBack;Failed
type Phase string

// The phases. Completed, RolledBack and Failed are final.
const (
	// PhasePending: accepted, no step taken yet; the spec may still change.
	PhasePending Phase = "Pending"
	// PhaseProgressing: steps are being written and held.
	PhaseProgressing Phase = "Progressing"
	// PhasePaused: held at a step (spec.paused, a pause command or drift).
	PhasePaused Phase = "Paused"
	// PhaseCompleted: every step passed; the weights are the last step's.
	PhaseCompleted Phase = "Completed"
	// PhaseRolledBack: a gate failed, or the run was aborted, and the weights are back
	// at the start.
	PhaseRolledBack Phase = "RolledBack"
	// PhaseFailed: the run stopped without reaching either end (a rollback that could
	// not be written, an invalid spec); status says what holds the traffic.
	PhaseFailed Phase = "Failed"
)

// The condition types, after the kstatus conventions (sigs.k8s.io/cli-utils): Ready is
// True once the run has ended as planned, Reconciling while it moves, Stalled when it
// cannot go on without a person.
const (
	// ConditionReady is True when the cutover completed.
	ConditionReady = "Ready"
	// ConditionReconciling is True while steps are being taken.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the run stopped and needs a person.
	ConditionStalled = "Stalled"
)

// CutoverStatus is a cutover's run as the controller records it. Everything a resumed
// controller needs is here (Journal), so that any replica can take over.
type CutoverStatus struct {
	// Phase is where the run is.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// ObservedGeneration is the metadata.generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling and Stalled, after the kstatus conventions.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Progress is the step reached, of the plan's steps ("2/4"), for people.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Progress string `json:"progress,omitempty"`
	// Weights are the weights in effect, by cluster (spec.from, spec.to): the last
	// written and acknowledged.
	// +optional
	Weights map[string]int64 `json:"weights,omitempty"`
	// Steps are the steps taken so far, in the order taken; a gradual rollback's stops
	// are not steps (the journal has them).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Steps []StepStatus `json:"steps,omitempty"`
	// Journal is the cutover's journal: every entry the engine appended, as the journal
	// file keeps them for `cutover run`, so that a controller that takes over resumes
	// from it. It is bounded: the engine appends a handful of entries per step (intent,
	// written, insync, passed or failed) and one per control command, and spec.steps
	// holds at most 256 steps; a run that would pass 2048 entries stops (Stalled) rather
	// than drop what a resume needs.
	// +optional
	// +kubebuilder:validation:MaxItems=2048
	Journal []JournalEntry `json:"journal,omitempty"`
	// LastAction is the last control action taken on the cutover, and who took it.
	// +optional
	LastAction *ControlAction `json:"lastAction,omitempty"`
}

// StepStatus is one step as it was taken.
type StepStatus struct {
	// Index is the step's position in spec.steps, from 0.
	// +kubebuilder:validation:Minimum=0
	Index int32 `json:"index"`
	// Weights are the weights the step wrote, by cluster.
	// +optional
	Weights map[string]int64 `json:"weights,omitempty"`
	// Result is the step's outcome; empty while it holds.
	// +optional
	Result StepResult `json:"result,omitempty"`
	// Gates are the latest verdict of each gate checked at the step.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Gates []GateVerdict `json:"gates,omitempty"`
	// StartedAt is when the step's weights were sent.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the step passed or failed.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// StepResult is a step's outcome.
// +kubebuilder:validation:Enum=Passed;Failed
type StepResult string

// The step results.
const (
	// StepPassed: every gate passed for the step's hold.
	StepPassed StepResult = "Passed"
	// StepFailed: a gate failed or the step ran over its time; the run rolled back.
	StepFailed StepResult = "Failed"
)

// GateVerdict is one gate's verdict at a step, with what it measured.
type GateVerdict struct {
	// Name is the gate's name (spec.gates[].name, or its kind and position).
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Kind is the gate's kind: http, prometheus, dns, targetHealth, albTraffic or
	// cloudMapDiscovery.
	Kind string `json:"kind"`
	// Verdict is Passed, Failed, or Pending (nothing judged yet: too few requests
	// counted so far).
	Verdict Verdict `json:"verdict"`
	// Detail is the gate's one line for people: what it measured and, on failure, why.
	// +optional
	Detail string `json:"detail,omitempty"`
	// Measurements are the numbers measured, e.g. "public.success_ratio".
	// +optional
	Measurements map[string]float64 `json:"measurements,omitempty"`
	// Error says why the check could not run (e.g. Prometheus unreachable); a verdict
	// with an error is never Passed.
	// +optional
	Error string `json:"error,omitempty"`
	// CheckedAt is when the verdict was reached.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
}

// Verdict is a gate's verdict.
// +kubebuilder:validation:Enum=Passed;Failed;Pending
type Verdict string

// The verdicts.
const (
	// VerdictPassed: the check ran and every bound held.
	VerdictPassed Verdict = "Passed"
	// VerdictFailed: a bound did not hold, or the check could not run.
	VerdictFailed Verdict = "Failed"
	// VerdictPending: nothing judged yet; the step holds on, up to its time limit.
	VerdictPending Verdict = "Pending"
)

// ControlAction is a control command taken on a cutover (pause, resume, promote, abort,
// release) and who took it.
type ControlAction struct {
	// Command is the command.
	// +kubebuilder:validation:Enum=pause;resume;promote;abort;release
	Command string `json:"command"`
	// By is who took it: the user the API server authenticated where the controller
	// can tell, else the one the client named.
	// +kubebuilder:validation:MinLength=1
	By string `json:"by"`
	// At is when the controller acted on it.
	At metav1.Time `json:"at"`
	// ID identifies the command, so that one seen twice acts once.
	// +optional
	ID string `json:"id,omitempty"`
}

// JournalEntry is one journal entry (journal.Entry) as status keeps it: the same fields
// under the same names, with the time in microseconds (metav1.MicroTime) and Data kept
// as the JSON it is. EntryFrom and Entry convert.
type JournalEntry struct {
	// Seq numbers entries from 1.
	// +kubebuilder:validation:Minimum=1
	Seq int `json:"seq"`
	// Time is when the entry was written.
	Time metav1.MicroTime `json:"time"`
	// Kind is what happened, e.g. "start", "intent", "written", "insync", "step-passed".
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Step is the step index the entry is about: -1 for none, below that the writes that
	// are not steps (a rollback's stops, lowering and restoring the TTL), as the engine
	// numbers them. No bound: a refused entry would leave traffic where the run stopped.
	Step int `json:"step"`
	// Weights are cluster → weight, for entries that write or record weights.
	// +optional
	Weights map[string]int64 `json:"weights,omitempty"`
	// ChangeID is the provider's change id after a write.
	// +optional
	ChangeID string `json:"changeID,omitempty"`
	// By is who acted: a user for commands, "runner" for the engine.
	// +optional
	By string `json:"by,omitempty"`
	// Detail is free text for people: a gate result, a reason.
	// +optional
	Detail string `json:"detail,omitempty"`
	// Data carries structured details (gate results, the start state) for the report.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Data json.RawMessage `json:"data,omitempty"`
	// TTL is a TTL in seconds the entry records.
	// +optional
	TTL int64 `json:"ttl,omitempty"`
	// PlanHash identifies the plan a start entry began with.
	// +optional
	PlanHash string `json:"planHash,omitempty"`
	// ID identifies a control command, so that one read twice acts once.
	// +optional
	ID string `json:"id,omitempty"`
	// Token is, in a start entry, the runner token the cutover's authority records
	// carry.
	// +optional
	Token string `json:"token,omitempty"`
}

// Final reports whether p ends a cutover: Completed, RolledBack or Failed, after which
// nothing is left to run.
func (p Phase) Final() bool {
	switch p {
	case PhaseCompleted, PhaseRolledBack, PhaseFailed:
		return true
	}
	return false
}

// Plan validates c's spec into the plan the engine runs, as the plan file of the same
// spec would be; the error names the field.
func (c *Cutover) Plan() (*spec.Plan, error) {
	return spec.PlanOf(&spec.Cutover{APIVersion: GroupVersion.String(), Kind: spec.Kind, Metadata: spec.Metadata{Name: c.Name}, Spec: *c.Spec.DeepCopy()})
}
