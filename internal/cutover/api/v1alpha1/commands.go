package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// How people, and `kubectl crossfade`, steer a Cutover the controller runs. A pause is
// a level: spec.paused (with PausedByAnnotation naming who set it). Promote, abort,
// release, and the resume of a drift pause (which no level lifts: a person looks at the
// weights first) are one-off commands: a CommandRequest in CommandAnnotation, which the
// controller that runs the cutover takes (removes, in a patch that tests its value, so
// that one replica takes it once), acts on, and journals with its ID; one it refuses
// it answers in ResultAnnotation. A command is taken at most once: a controller killed
// between taking it and journaling it loses it, and the sender, which waits for the
// journal entry or the answer, says so.
const (
	// CommandAnnotation carries one command for the run, a CommandRequest as JSON.
	CommandAnnotation = "crossfade.io/command"
	// ResultAnnotation is the controller's answer to the last command it refused, or
	// to the last release it ran: a CommandResult as JSON.
	ResultAnnotation = "crossfade.io/command-result"
	// PausedByAnnotation names who set spec.paused last: the pause or resume the
	// controller sends the run for spec.paused is journaled as theirs.
	PausedByAnnotation = "crossfade.io/paused-by"
	// Finalizer keeps a deleted Cutover until deleting it cannot leave traffic split
	// without a record: a run deleted mid-way is aborted to its start weights first.
	Finalizer = "crossfade.io/rollback-on-delete"
)

// The commands CommandAnnotation may carry. A pause is not among them, and a resume only
// lifts a pause on drift: spec.paused is the one way to pause and resume otherwise, so
// that a level and an edge never disagree.
const (
	// RequestPromote skips the remaining pauses (with SkipGates, the gates too).
	RequestPromote = "promote"
	// RequestAbort rolls the run back per its plan.
	RequestAbort = "abort"
	// RequestRelease hands an ended cutover's weights back to the publishers.
	RequestRelease = "release"
	// RequestResume goes on after a pause on drift, once a person has looked at the
	// weights the zone held; refused for any other pause (clear spec.paused instead).
	RequestResume = "resume"
)

// CommandRequest is one command for a Cutover's run, as CommandAnnotation carries it.
// It travels as JSON in an annotation, never as an API object: no deep copy.
// +kubebuilder:object:generate=false
type CommandRequest struct {
	// Command is promote, abort, release or resume (of a pause on drift).
	Command string `json:"command"`
	// ID names the command in the journal and in ResultAnnotation, so that its sender
	// can find what became of it; the controller makes one up when it is empty.
	ID string `json:"id,omitempty"`
	// By is who sends it: the plugin puts the user the API server authenticated
	// (SelfSubjectReview), else its kubeconfig's user.
	By string `json:"by,omitempty"`
	// At is when it was sent.
	At time.Time `json:"at,omitzero"`
	// SkipGates, on a promote, passes the steps left without measurement.
	SkipGates bool `json:"skipGates,omitempty"`
	// Force, on a release, releases whatever stands in the way (cutover release --force).
	Force bool `json:"force,omitempty"`
}

// CommandResult is the controller's answer to a command, as ResultAnnotation carries it.
// It travels as JSON in an annotation, never as an API object: no deep copy.
// +kubebuilder:object:generate=false
type CommandResult struct {
	// ID is the command's.
	ID string `json:"id"`
	// Command is the command's.
	Command string `json:"command"`
	// By is who sent it.
	By string `json:"by,omitempty"`
	// At is when the controller answered.
	At time.Time `json:"at"`
	// Refused says why the command was not acted on; empty when it was.
	Refused string `json:"refused,omitempty"`
	// Detail says what was done (a release: the records deleted).
	Detail string `json:"detail,omitempty"`
}

// commandID is what an ID may be: it names a file of the run's control directory.
var commandID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ParseCommandRequest decodes and checks the value of CommandAnnotation; the error names
// the annotation and the field.
func ParseCommandRequest(value string) (CommandRequest, error) {
	var r CommandRequest
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return CommandRequest{}, fmt.Errorf("annotation %s: want JSON such as {\"command\":\"promote\"}: %w", CommandAnnotation, err)
	}
	if dec.More() {
		return CommandRequest{}, fmt.Errorf("annotation %s: more than one JSON value", CommandAnnotation)
	}
	bad := func(field, format string, a ...any) (CommandRequest, error) {
		return CommandRequest{}, fmt.Errorf("annotation %s: %s: %s", CommandAnnotation, field, fmt.Sprintf(format, a...))
	}
	switch r.Command {
	case RequestPromote, RequestAbort, RequestRelease, RequestResume:
	case "pause":
		return bad("command", "\"pause\" is set through spec.paused (kubectl crossfade pause, or kubectl patch … -p '{\"spec\":{\"paused\":true}}')")
	case "":
		return bad("command", "missing: want promote, abort, release or resume")
	default:
		return bad("command", "%q: want promote, abort, release or resume", r.Command)
	}
	if r.ID != "" && !commandID.MatchString(r.ID) {
		return bad("id", "%q: want 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", r.ID)
	}
	if r.SkipGates && r.Command != RequestPromote {
		return bad("skipGates", "only a promote skips gates, not %s", r.Command)
	}
	if r.Force && r.Command != RequestRelease {
		return bad("force", "only a release is forced, not %s", r.Command)
	}
	return r, nil
}

// ParseCommandResult decodes the value of ResultAnnotation.
func ParseCommandResult(value string) (CommandResult, error) {
	var r CommandResult
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return CommandResult{}, fmt.Errorf("annotation %s: %w", ResultAnnotation, err)
	}
	return r, nil
}

// AnnotationPath is the JSON pointer (RFC 6901: '~' is "~0", '/' is "~1") of the
// annotation key, for the JSON patches that write and take commands.
func AnnotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
