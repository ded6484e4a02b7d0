package controller

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/source"
)

// Event reasons, as `kubectl describe` and `kubectl get events` show them.
const (
	// ReasonInvalid: an annotation or field cannot become a record; the object's
	// records are kept as they are until it is fixed.
	ReasonInvalid = "InvalidDNSInput"
	// ReasonConflict: the record is held by another owner, or something else stands in
	// its way; it is not written.
	ReasonConflict = "DNSRecordConflict"
	// ReasonRefused: the DNS provider refused the record's change.
	ReasonRefused = "DNSRecordRefused"
	// ReasonAdjusted: the record is published, but otherwise than the object asks (a
	// weighted member's TTL fitted to its group's, a legacy ownership record left out).
	// A Warning, not a Normal event: what the object asks for is not what is published,
	// and only a change to the object (or to the zone) ends it.
	ReasonAdjusted = "DNSRecordAdjusted"
	// ReasonCloudMapInvalid: a Cloud Map annotation cannot be published, or names a
	// namespace or service Cloud Map does not have; the object's instances are kept as
	// they are until it is fixed.
	ReasonCloudMapInvalid = "InvalidCloudMapInput"
	// ReasonCloudMapConflict: another owner's instance holds the id an endpoint's instance
	// would have; it is not touched, and the endpoint is not registered.
	ReasonCloudMapConflict = "CloudMapInstanceConflict"
	// ReasonCloudMapRefused: Cloud Map refused an instance's registration.
	ReasonCloudMapRefused = "CloudMapInstanceRefused"
	// ReasonDeletionsHeld, on the controller's own Pod: a reconcile would have deleted
	// all, or most, of this owner's records in a zone, and the deletion guard held them
	// (--max-delete-ratio, --max-delete-min, --allow-mass-delete).
	ReasonDeletionsHeld = "DNSDeletionsHeld"
)

// logMessages are the log lines' messages by reason; "conflict" for the others.
var logMessages = map[string]string{
	ReasonInvalid: "invalid object", ReasonCloudMapInvalid: "invalid object",
	ReasonCloudMapConflict: "cloud map conflict", ReasonCloudMapRefused: "cloud map refusal",
	ReasonAdjusted: "written otherwise than asked", ReasonDeletionsHeld: "deletions held",
}

// logLevels are the log lines' levels by reason; error for the others. A record written
// otherwise than asked was written: a warning, as a sync logs it.
var logLevels = map[string]slog.Level{ReasonAdjusted: slog.LevelWarn, ReasonDeletionsHeld: slog.LevelWarn}

// DefaultReemit is how long a problem that persists stays quiet before its event is
// sent again: Kubernetes keeps events for an hour by default, so a problem older than
// that would vanish from `kubectl describe` while it still stands.
const DefaultReemit = 50 * time.Minute

// recorder is where events go; client-go's record.EventRecorder implements it.
type recorder interface {
	Event(object runtime.Object, eventtype, reason, message string)
}

// objectIndex finds what an event about an object needs; *Watcher implements it.
type objectIndex interface {
	UID(kind, namespace, name string) types.UID
	APIVersion(kind string) string
}

// EventReporter sends one Warning event per problem of an object when the problem
// appears, again after Reemit while it stands, and never for a problem that is gone,
// and logs a line each time it sends one. A reconcile every few seconds therefore floods
// neither the API with events nor the log with repeats.
//
// A problem is gone when a reconcile that could have seen it did not: a zone whose
// records could not be listed, or a reconcile that could not list the zones, says
// nothing about the problems found there before, and does not make them new again.
type EventReporter struct {
	rec    recorder
	index  objectIndex
	reemit time.Duration
	log    *slog.Logger

	// self is the controller's own object (its Pod), which WarnController's events are
	// about; nil when unknown (run outside a pod): those warnings are only logged.
	self *corev1.ObjectReference
	// now is the clock of WarnController; time.Now but in tests.
	now func() time.Time

	mu   sync.Mutex
	sent map[string]lastEvent // problem key → its last event
	// selfSent are the controller's own problems' last events, by selfKey.
	selfSent map[string]lastEvent
}

// lastEvent is what the reporter remembers of a problem's last event.
type lastEvent struct {
	at time.Time
	// inZone is set for a problem found in a zone's plan or writes, zoneID being the
	// zone's id.
	inZone bool
	zoneID string
	// until is when the problem will be looked at anew (a refused name sent again):
	// the event is not sent again before then, since the outcome will be news.
	until time.Time
}

// NewEventReporter returns a reporter sending through rec; reemit 0 means DefaultReemit,
// a nil log discards the log lines.
func NewEventReporter(rec recorder, index objectIndex, reemit time.Duration, log *slog.Logger) *EventReporter {
	if reemit <= 0 {
		reemit = DefaultReemit
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &EventReporter{rec: rec, index: index, reemit: reemit, log: log, now: time.Now, sent: map[string]lastEvent{},
		selfSent: map[string]lastEvent{}}
}

// SetController names the object WarnController's events are about: the controller's
// own Pod, from the downward API (POD_NAME, POD_NAMESPACE, POD_UID). Without it, or with
// a nil ref, those warnings are only logged.
func (r *EventReporter) SetController(ref *corev1.ObjectReference) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.self = ref
}

// PodReference is the reference of the Pod named namespace/name with uid, as an event
// about it needs it for `kubectl describe pod` to show the event; nil when name or
// namespace is empty (not run in a pod).
func PodReference(namespace, name, uid string) *corev1.ObjectReference {
	if namespace == "" || name == "" {
		return nil
	}
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: name, UID: types.UID(uid)}
}

// WarnController reports a problem of the controller itself (not of one object), such as
// deletions held by the guard: a Warning event on the controller's Pod and a log line,
// once when the problem appears and again after Reemit while it stands, as for the
// objects' problems. The same reason and message is the same problem; call
// ResolveController when it is gone, so that its return is news again.
func (r *EventReporter) WarnController(reason, message string) {
	r.WarnControllerAbout(reason, "", message)
}

// WarnControllerAbout is WarnController for a problem about one subject among several
// of the same reason (a zone's held deletions, by zone id), which ResolveController
// ends for that subject alone. A new message for the same subject is a new problem.
func (r *EventReporter) WarnControllerAbout(reason, subject, message string) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	key := selfKey(reason, subject) + "\x00" + message
	if last, ok := r.selfSent[key]; ok && now.Sub(last.at) < r.reemit {
		return
	}
	// A new message for the subject replaces the old one: the old is gone.
	r.resolveLocked(reason, subject)
	r.selfSent[key] = lastEvent{at: now}
	attrs := []any{"reason", reason, "message", message}
	if r.self != nil {
		r.rec.Event(r.self, corev1.EventTypeWarning, reason, message)
		attrs = append(attrs, "pod", r.self.Namespace+"/"+r.self.Name)
	}
	msg, ok := logMessages[reason]
	if !ok {
		msg = "controller problem"
	}
	level, ok := logLevels[reason]
	if !ok {
		level = slog.LevelError
	}
	r.log.Log(context.Background(), level, msg, attrs...)
}

// ResolveController says the controller's problem of reason about subject ("" for
// WarnController's) is gone: if it comes back, its event is sent at once.
func (r *EventReporter) ResolveController(reason, subject string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolveLocked(reason, subject)
}

func (r *EventReporter) resolveLocked(reason, subject string) {
	prefix := selfKey(reason, subject) + "\x00"
	for k := range r.selfSent {
		if strings.HasPrefix(k, prefix) {
			delete(r.selfSent, k)
		}
	}
}

// selfKey identifies a controller problem's subject; the message follows it in the key.
func selfKey(reason, subject string) string { return reason + "\x00" + subject }

type problem struct {
	ref     endpoint.ObjectRef
	reason  string
	message string
	inZone  bool
	zone    provider.Zone // the zone it was found in, when inZone
	until   time.Time     // see lastEvent.until
}

// Report sends the events for one reconcile's problems.
func (r *EventReporter) Report(res source.Result, rep *Report, now time.Time) {
	r.ReportAll(res, rep, nil, now)
}

// ReportAll sends the events for one reconcile's problems, the Cloud Map publisher's (cm,
// nil without it) included. Every problem of the reconcile must be given in one call: a
// problem absent from it is taken as gone, but for the zones' problems when rep is nil
// (the zones could not be listed) and those of rep.Unplanned's zones.
func (r *EventReporter) ReportAll(res source.Result, rep *Report, cm *cloudmap.Report, now time.Time) {
	var problems []problem
	for _, e := range res.Invalid {
		msg := e.Field + ": " + e.Reason
		if e.Value != "" {
			msg = e.Field + " " + quote(e.Value) + ": " + e.Reason
		}
		problems = append(problems, problem{ref: e.Object, reason: ReasonInvalid, message: msg + "; its records are kept as they are until it is fixed"})
	}
	// The zones whose problems are not known this time: none can be, without a report.
	unknown := map[string]bool{}
	if rep != nil {
		for _, id := range rep.Unplanned {
			unknown[id] = true
		}
		wanters := resourcesByKey(res.Endpoints, rep)
		for _, z := range rep.Zones {
			if z.Changes != nil {
				for _, c := range z.Changes.Conflicts {
					problems = append(problems, conflictProblems(c, ReasonConflict, z.Zone, time.Time{}, wanters)...)
				}
				for _, c := range z.Changes.Notes {
					problems = append(problems, conflictProblems(c, ReasonAdjusted, z.Zone, time.Time{}, wanters)...)
				}
			}
			for _, c := range z.Refused {
				problems = append(problems, conflictProblems(c, ReasonRefused, z.Zone, z.heldUntil[c.Key], wanters)...)
			}
		}
	}
	if cm != nil {
		for _, e := range cm.Invalid {
			msg := e.Field + ": " + e.Reason
			if e.Value != "" {
				msg = e.Field + " " + quote(e.Value) + ": " + e.Reason
			}
			problems = append(problems, problem{ref: e.Object, reason: ReasonCloudMapInvalid, message: msg})
		}
		for _, p := range cm.Problems {
			reason := ReasonCloudMapConflict
			if p.Kind == cloudmap.ProblemRefused {
				reason = ReasonCloudMapRefused
			}
			problems = append(problems, problem{ref: p.Object, reason: reason, message: p.Message, until: p.Until})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range problems {
		key := p.ref.String() + "\x00" + p.reason + "\x00" + p.message
		seen[key] = true
		if last, ok := r.sent[key]; ok && (now.Sub(last.at) < r.reemit || now.Before(last.until)) {
			continue
		}
		r.sent[key] = lastEvent{at: now, inZone: p.inZone, zoneID: p.zone.ID, until: p.until}
		r.rec.Event(r.reference(p.ref), corev1.EventTypeWarning, p.reason, p.message)
		attrs := []any{"kind", p.ref.Kind, "namespace", p.ref.Namespace, "name", p.ref.Name, "reason", p.reason, "message", p.message}
		if p.inZone {
			attrs = append(attrs, "zone", p.zone.Name)
		}
		msg, ok := logMessages[p.reason]
		if !ok {
			msg = "conflict"
		}
		level, ok := logLevels[p.reason]
		if !ok {
			level = slog.LevelError
		}
		r.log.Log(context.Background(), level, msg, attrs...)
	}
	for k, last := range r.sent {
		if seen[k] || last.inZone && (rep == nil || unknown[last.zoneID]) {
			continue
		}
		delete(r.sent, k)
	}
}

// conflictProblems attributes a record's conflict to every object that wants it, or,
// when none does, to the object that published it (a member a cutover holds).
func conflictProblems(c changes.Conflict, reason string, zone provider.Zone, until time.Time, wanters map[endpoint.Key][]string) []problem {
	var out []problem
	msg := "zone " + zone.Name + ": " + c.String()
	objs := wanters[c.Key]
	if len(objs) == 0 && c.Resource != "" {
		objs = []string{c.Resource}
	}
	for _, res := range objs {
		if ref, ok := refOfResource(res); ok {
			out = append(out, problem{ref: ref, reason: reason, message: msg, inZone: true, zone: zone, until: until})
		}
	}
	return out
}

// resourcesByKey returns the resources wanting each record set of eps that a conflict,
// note or refusal of rep names: only those, so that a reconcile with few problems does
// not index every record (an incremental reconcile costs what it changes).
func resourcesByKey(eps []*endpoint.Endpoint, rep *Report) map[endpoint.Key][]string {
	named := map[endpoint.Key]bool{}
	for _, z := range rep.Zones {
		if z.Changes != nil {
			for _, c := range slices.Concat(z.Changes.Conflicts, z.Changes.Notes) {
				named[c.Key] = true
			}
		}
		for _, c := range z.Refused {
			named[c.Key] = true
		}
	}
	out := map[endpoint.Key][]string{}
	if len(named) == 0 {
		return out
	}
	for _, e := range eps {
		if res := e.Resource(); res != "" {
			if k := e.Key(); named[k] {
				out[k] = append(out[k], res)
			}
		}
	}
	return out
}

func (r *EventReporter) reference(ref endpoint.ObjectRef) *corev1.ObjectReference {
	// An ObjectReference is taken as it is by the recorder, which needs no scheme for
	// the CRD kinds this way; the UID lets `kubectl describe` find the event.
	out := &corev1.ObjectReference{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
	if r.index != nil {
		out.UID = r.index.UID(ref.Kind, ref.Namespace, ref.Name)
		out.APIVersion = r.index.APIVersion(ref.Kind)
	}
	if out.Namespace == "" {
		out.Namespace = "default"
	}
	return out
}

// resourceKinds maps external-dns's resource label kinds to the objects' kinds.
var resourceKinds = map[string]string{
	"service": "Service", "ingress": "Ingress", "crd": "DNSEndpoint", "gateway": "Gateway",
	"virtualservice": "VirtualService", "httproute": "HTTPRoute", "grpcroute": "GRPCRoute",
}

// refOfResource parses a resource label, "service/default/web", into an object reference.
func refOfResource(res string) (endpoint.ObjectRef, bool) {
	parts := strings.SplitN(res, "/", 3)
	if len(parts) != 3 {
		return endpoint.ObjectRef{}, false
	}
	kind, ok := resourceKinds[parts[0]]
	if !ok {
		return endpoint.ObjectRef{}, false
	}
	return endpoint.ObjectRef{Kind: kind, Namespace: parts[1], Name: parts[2]}, true
}

var indexes = regexp.MustCompile(`\[[^\]]*\]`)

// reasonOf turns an invalid field into a metric label of bounded cardinality: the
// annotation's name without its prefix ("aws-weight"), or the field path without list
// indexes ("spec.endpoints[].recordTTL"). Every part of a field that users choose is
// left out or bounded, since a series, once made, is never deleted: an annotation or
// a provider-specific property of a name crossfade does not read becomes "aws-other" (or
// "other"), and the objects a field names ("of gateway ns/name") are dropped.
func reasonOf(field string) string {
	// "spec.endpoints[0].providerSpecific[1] (aws/name)": the name first, as it may hold
	// anything, spaces and brackets included.
	suffix := ""
	if i := strings.Index(field, " ("); i >= 0 && strings.HasSuffix(field, ")") {
		suffix = " (" + bounded(field[i+2:len(field)-1], source.KnownProperty(field[i+2:len(field)-1]), "aws/") + ")"
		field = field[:i]
	}
	field, _, _ = strings.Cut(field, "; ")   // several origins: the first
	field, _, _ = strings.Cut(field, " of ") // "... of gateway ns/name"
	if key, ok := strings.CutPrefix(field, "annotation "); ok {
		name := key
		if i := strings.LastIndex(key, "/"); i >= 0 {
			name = key[i+1:]
		}
		return bounded(name, source.KnownAnnotationName(name) || cloudmap.ReadsAnnotation(key), "aws-") + suffix
	}
	var parts []string
	for _, w := range strings.Fields(indexes.ReplaceAllString(field, "[]")) {
		if !strings.Contains(w, "/") { // "EndpointSlice ns/name endpoints[].hostname"
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, " ") + suffix
}

// bounded returns name when it is known (read by crossfade), else "aws-other" for a name
// with the AWS prefix and "other" for any other.
func bounded(name string, known bool, awsPrefix string) string {
	switch {
	case known:
		return name
	case strings.HasPrefix(name, awsPrefix):
		return "aws-other"
	default:
		return "other"
	}
}

func quote(s string) string {
	const limit = 200
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return `"` + s + `"`
}
