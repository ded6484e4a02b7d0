// Package cutoverctl controls Cutover objects from outside the cluster, as `kubectl
// crossfade` does: it reads them, sets spec.paused (with the paused-by annotation naming
// who), leaves one-off commands (promote, abort, release) in the crossfade.io/command
// annotation, and waits, on a watch of the object, until the controller that runs the
// cutover shows what it did. It acts on the object only: the controller acts on AWS.
//
// The protocol is v1alpha1's (commands.go): a command is written with a JSON patch that
// first tests the annotation is absent, so that two senders never overwrite each other's
// command; the controller takes it (removes it) and journals it with its ID, or answers
// a refusal in crossfade.io/command-result.
package cutoverctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// DefaultTimeout is how long a command waits for the controller to show what it did.
const DefaultTimeout = 60 * time.Second

// Client acts on the Cutovers of one namespace of one API server.
type Client struct {
	// Namespace is where the Cutovers are.
	Namespace string
	// ContextUser is the kubeconfig context's user (its AuthInfo name): who Who names
	// when the API server cannot say.
	ContextUser string

	cutovers rest.Interface
	reviews  authenticationclient.SelfSubjectReviewsGetter
}

// Flags are kubectl's standard flags: --kubeconfig, --context and -n/--namespace.
type Flags struct {
	Kubeconfig string
	Context    string
	Namespace  string
}

// Load builds a Client from the kubeconfig as kubectl reads it: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; the context --context names, else the current one; the
// namespace -n names, else the context's, else default.
func Load(f Flags) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: namespace: %w", err)
	}
	user := ""
	if raw, err := cc.RawConfig(); err == nil {
		name := f.Context
		if name == "" {
			name = raw.CurrentContext
		}
		if ctx := raw.Contexts[name]; ctx != nil {
			user = ctx.AuthInfo
		}
	}
	return New(cfg, ns, user)
}

// New builds a Client for the Cutovers of namespace on the API server cfg names;
// contextUser is who Who falls back to.
func New(cfg *rest.Config, namespace, contextUser string) (*Client, error) {
	rc, err := v1alpha1.RESTClient(cfg, "kubectl-crossfade")
	if err != nil {
		return nil, fmt.Errorf("cutoverctl: %w", err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cutoverctl: client for %s: %w", cfg.Host, err)
	}
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	return &Client{Namespace: namespace, ContextUser: contextUser, cutovers: rc, reviews: kc.AuthenticationV1()}, nil
}

// Identity is who the commands are sent as, and how that was found out.
type Identity struct {
	// Name is the user name, "unknown" when nothing says.
	Name string
	// Source says where Name comes from, for people.
	Source string
}

// The sources of an Identity.
const (
	SourceReview     = "authenticated by the API server (SelfSubjectReview)"
	SourceKubeconfig = "the kubeconfig context's user: the API server's SelfSubjectReview is not available"
	SourceUnknown    = "neither the API server (SelfSubjectReview) nor the kubeconfig context names a user"
)

// Who is the user the API server authenticates this client as (a SelfSubjectReview,
// authentication.k8s.io/v1, GA in Kubernetes 1.28); where that API is not served or is
// forbidden, the kubeconfig context's user; else "unknown". Any other error (the API
// server unreachable) is returned: nothing can be sent then anyway.
func (c *Client) Who(ctx context.Context) (Identity, error) {
	r, err := c.reviews.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil && r.Status.UserInfo.Username != "":
		return Identity{Name: r.Status.UserInfo.Username, Source: SourceReview}, nil
	case err == nil, apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsMethodNotSupported(err):
	default:
		return Identity{}, fmt.Errorf("who am I (SelfSubjectReview): %w", err)
	}
	if c.ContextUser != "" {
		return Identity{Name: c.ContextUser, Source: SourceKubeconfig}, nil
	}
	return Identity{Name: "unknown", Source: SourceUnknown}, nil
}

// ref is namespace/name, how errors name a Cutover.
func (c *Client) ref(name string) string { return c.Namespace + "/" + name }

// apiErr is err from acting on the Cutover name, for people: NotFound says so plainly.
func (c *Client) apiErr(name, doing string, err error) error {
	var se apierrors.APIStatus
	if apierrors.IsNotFound(err) && errors.As(err, &se) && se.Status().Details != nil && se.Status().Details.Name == name {
		return fmt.Errorf("no Cutover %s in namespace %s: `kubectl crossfade get -n %s` lists them", name, c.Namespace, c.Namespace)
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cutover %s: %s: the API server serves no Cutovers (%s): is the CRD installed (deploy/crds/cutovers.crossfade.io.yaml)? %w",
			c.ref(name), doing, v1alpha1.GroupVersion, err)
	}
	return fmt.Errorf("cutover %s: %s: %w", c.ref(name), doing, err)
}

// Get reads the Cutover name.
func (c *Client) Get(ctx context.Context, name string) (*v1alpha1.Cutover, error) {
	out := &v1alpha1.Cutover{}
	if err := c.cutovers.Get().Namespace(c.Namespace).Resource(v1alpha1.Resource).Name(name).Do(ctx).Into(out); err != nil {
		return nil, c.apiErr(name, "get", err)
	}
	typed(out)
	return out, nil
}

// List reads the namespace's Cutovers.
func (c *Client) List(ctx context.Context) (*v1alpha1.CutoverList, error) {
	out := &v1alpha1.CutoverList{}
	if err := c.cutovers.Get().Namespace(c.Namespace).Resource(v1alpha1.Resource).Do(ctx).Into(out); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("list Cutovers in namespace %s: the API server serves no Cutovers (%s): is the CRD installed (deploy/crds/cutovers.crossfade.io.yaml)? %w",
				c.Namespace, v1alpha1.GroupVersion, err)
		}
		return nil, fmt.Errorf("list Cutovers in namespace %s: %w", c.Namespace, err)
	}
	out.APIVersion, out.Kind = v1alpha1.GroupVersion.String(), "CutoverList"
	for i := range out.Items {
		typed(&out.Items[i])
	}
	return out, nil
}

// typed sets the apiVersion and kind the decoder leaves empty, for -o yaml|json.
func typed(c *v1alpha1.Cutover) {
	c.APIVersion, c.Kind = v1alpha1.GroupVersion.String(), "Cutover"
}

// PausePatch is the merge patch that sets spec.paused and names who set it
// (PausedByAnnotation), in one write so that the controller never reads one without the
// other.
func PausePatch(paused bool, by string) []byte {
	p, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{v1alpha1.PausedByAnnotation: by}},
		"spec":     map[string]any{"paused": paused},
	})
	return p
}

// SetPaused sets the Cutover name's spec.paused, naming by in PausedByAnnotation, and
// returns the object as written. It refuses a cutover that has ended: nothing would
// show the pause.
func (c *Client) SetPaused(ctx context.Context, name string, paused bool, by string) (*v1alpha1.Cutover, error) {
	cur, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	verb := map[bool]string{true: "pause", false: "resume"}[paused]
	if cur.Status.Phase.Final() {
		return nil, fmt.Errorf("cutover %s has ended (%s): nothing to %s", c.ref(name), cur.Status.Phase, verb)
	}
	out := &v1alpha1.Cutover{}
	err = c.cutovers.Patch(types.MergePatchType).Namespace(c.Namespace).Resource(v1alpha1.Resource).Name(name).
		Body(PausePatch(paused, by)).Do(ctx).Into(out)
	if err != nil {
		return nil, c.apiErr(name, fmt.Sprintf("%s (merge patch spec.paused=%t)", verb, paused), err)
	}
	typed(out)
	return out, nil
}

// PauseShown reports whether o's status shows spec.paused = paused, written at
// generation gen, taken into account: for a pause, the run Paused, or, for a cutover
// that has not started, Pending and paused before its start; for a resume, neither, in
// a status of gen or later. A non-nil error says that it never will: the cutover ended,
// or a drift pause, which spec.paused does not lift.
func PauseShown(o *v1alpha1.Cutover, paused bool, gen int64) (bool, error) {
	st := o.Status
	beforeStart := st.Phase == v1alpha1.PhasePending && reconcilingReason(st) == reasonPausedBeforeStart
	if st.Phase.Final() {
		return false, fmt.Errorf("cutover %s/%s ended (%s) before its status showed the %s: %s",
			o.Namespace, o.Name, st.Phase, map[bool]string{true: "pause", false: "resume"}[paused], readyMessage(st))
	}
	if paused {
		return st.Phase == v1alpha1.PhasePaused || (beforeStart && st.ObservedGeneration >= gen), nil
	}
	if st.ObservedGeneration < gen {
		return false, nil
	}
	if DriftPaused(o) {
		return false, fmt.Errorf("cutover %s/%s paused on drift (the zone holds weights it did not write), which spec.paused does not lift: "+
			"check the weights (kubectl crossfade status %s), then run kubectl crossfade resume %s again, which sends the resume command, or abort it: %s",
			o.Namespace, o.Name, o.Name, o.Name, DriftMessage(o))
	}
	return st.Phase != v1alpha1.PhasePaused && !beforeStart, nil
}

// DriftPaused reports whether o's run is paused on drift: only the resume command lifts it.
func DriftPaused(o *v1alpha1.Cutover) bool {
	return o.Status.Phase == v1alpha1.PhasePaused && reconcilingReason(o.Status) == reasonDriftPaused
}

// DriftMessage is what o's status says of its drift.
func DriftMessage(o *v1alpha1.Cutover) string { return readyMessage(o.Status) }

// The condition reasons PauseShown reads (objectstatus's, which imports the engine: the
// plugin does not need it).
const (
	reasonPausedBeforeStart = "PausedBeforeStart"
	reasonDriftPaused       = "DriftPaused"
)

// reconcilingReason is the Reconciling condition's reason, "" when there is none.
func reconcilingReason(st v1alpha1.CutoverStatus) string {
	for _, cd := range st.Conditions {
		if cd.Type == v1alpha1.ConditionReconciling {
			return cd.Reason
		}
	}
	return ""
}

// readyMessage is the Ready condition's message, what the status says of the run.
func readyMessage(st v1alpha1.CutoverStatus) string {
	for _, cd := range st.Conditions {
		if cd.Type == v1alpha1.ConditionReady {
			return cd.Message
		}
	}
	return "no conditions yet"
}

// WaitPaused waits, on a watch of the Cutover name, for at most timeout, until its status
// shows spec.paused = paused written at generation gen (PauseShown), and returns the
// object then. When time runs out, the error says what status shows and that spec.paused
// stays as written.
func (c *Client) WaitPaused(ctx context.Context, name string, paused bool, gen int64, timeout time.Duration) (*v1alpha1.Cutover, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	o, err := c.Until(wctx, name, func(o *v1alpha1.Cutover) (bool, error) { return PauseShown(o, paused, gen) })
	if errors.Is(err, errTimedOut) {
		shows := "no status"
		if o != nil {
			shows = fmt.Sprintf("phase %q (%s)", o.Status.Phase, readyMessage(o.Status))
		}
		return o, fmt.Errorf("cutover %s: spec.paused is %t, and its status did not show it within %s (it shows %s): "+
			"is `crossfade controller --cutovers` running for namespace %s? spec.paused stays %t: a controller acts on it when it runs",
			c.ref(name), paused, Seconds(timeout), shows, c.Namespace, paused)
	}
	return o, err
}

// Until calls cond with the Cutover name as it is now and then at each change (a watch,
// not polling), until cond returns true or an error, ctx ends (its error, or cause, is
// returned), or the object is deleted; it returns the object cond last saw.
func (c *Client) Until(ctx context.Context, name string, cond func(*v1alpha1.Cutover) (bool, error)) (*v1alpha1.Cutover, error) {
	lw := cache.NewListWatchFromClient(c.cutovers, v1alpha1.Resource, c.Namespace, fields.OneTermEqualSelector("metadata.name", name))
	// A reflector lists at resourceVersion "0" first: the API server's watch cache, which
	// may lag a write just made (a Cutover just applied would look absent, a status just
	// written would look older). One object is cheap to read consistently, from etcd.
	// (The reflector lists through ListWithContextFunc, which is the one to wrap.)
	list := lw.ListWithContextFunc
	lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.ResourceVersion, o.ResourceVersionMatch = "", ""
		return list(ctx, o)
	}
	var last *v1alpha1.Cutover
	exists := func(store cache.Store) (bool, error) {
		if _, ok, err := store.GetByKey(c.ref(name)); err != nil || !ok {
			return false, c.apiErr(name, "watch", apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource(v1alpha1.Resource).GroupResource(), name))
		}
		return false, nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &v1alpha1.Cutover{}, exists, func(ev watch.Event) (bool, error) {
		o, ok := ev.Object.(*v1alpha1.Cutover)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("cutover %s was deleted", c.ref(name))
		}
		typed(o)
		last = o
		return cond(o)
	})
	// UntilWithSync ends with wait.ErrorInterrupted, or a failed cache sync, when ctx
	// ends: the cause says why (a timeout of the caller's, Ctrl-C).
	if err != nil && ctx.Err() != nil {
		return last, context.Cause(ctx)
	}
	return last, err
}

// NewID is a command ID: "k-" and 12 random hex digits.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "k-" + hex.EncodeToString(b[:])
}

// CommandPatch is the JSON patch that writes req into CommandAnnotation only if none is
// there: a test that the annotation is absent (null), then its add. hasAnnotations says
// whether the object has metadata.annotations at all: without it the test and the add are
// of the whole map.
func CommandPatch(req v1alpha1.CommandRequest, hasAnnotations bool) ([]byte, error) {
	value, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	ops := []op{{"test", v1alpha1.AnnotationPath(v1alpha1.CommandAnnotation), nil}, {"add", v1alpha1.AnnotationPath(v1alpha1.CommandAnnotation), string(value)}}
	if !hasAnnotations {
		ops = []op{{"test", "/metadata/annotations", nil}, {"add", "/metadata/annotations", map[string]string{v1alpha1.CommandAnnotation: string(value)}}}
	}
	return json.Marshal(ops)
}

// WaitingError is a command refused because another is waiting in CommandAnnotation.
type WaitingError struct {
	// Cutover is namespace/name.
	Cutover string
	// Waiting is the annotation's value.
	Waiting string
}

// Error names the command waiting and how to cancel it.
func (e *WaitingError) Error() string {
	what := e.Waiting
	if r, err := v1alpha1.ParseCommandRequest(e.Waiting); err == nil {
		what = fmt.Sprintf("%s %s by %s", r.Command, r.ID, r.By)
		if !r.At.IsZero() {
			what += " at " + r.At.UTC().Format(time.RFC3339)
		}
	}
	ns, name, _ := strings.Cut(e.Cutover, "/")
	return fmt.Sprintf("cutover %s: another command is waiting: %s (annotation %s); wait until the controller takes it, "+
		"or cancel it with `kubectl annotate cutover %s -n %s %s-`", e.Cutover, what, v1alpha1.CommandAnnotation, name, ns, v1alpha1.CommandAnnotation)
}

// sendAttempts bounds the sends whose test failed on a command that was gone by the
// next read (taken meanwhile): a sender outpaced that often gives up.
const sendAttempts = 5

// Send leaves req in the Cutover name's CommandAnnotation, unless a command is waiting
// there already (*WaitingError, naming it), and returns the object as written. It
// refuses a promote or abort of a cutover that has completed or rolled back: there is
// nothing left to act on.
func (c *Client) Send(ctx context.Context, name string, req v1alpha1.CommandRequest) (*v1alpha1.Cutover, error) {
	if _, err := v1alpha1.ParseCommandRequest(mustJSON(req)); err != nil {
		return nil, fmt.Errorf("cutover %s: %w", c.ref(name), err)
	}
	for attempt := 1; ; attempt++ {
		cur, err := c.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if req.Command != v1alpha1.RequestRelease && (cur.Status.Phase == v1alpha1.PhaseCompleted || cur.Status.Phase == v1alpha1.PhaseRolledBack) {
			return nil, fmt.Errorf("cutover %s has ended (%s): nothing to %s", c.ref(name), cur.Status.Phase, req.Command)
		}
		if v, ok := cur.Annotations[v1alpha1.CommandAnnotation]; ok {
			return nil, &WaitingError{Cutover: c.ref(name), Waiting: v}
		}
		patch, err := CommandPatch(req, cur.Annotations != nil)
		if err != nil {
			return nil, err
		}
		out := &v1alpha1.Cutover{}
		err = c.cutovers.Patch(types.JSONPatchType).Namespace(c.Namespace).Resource(v1alpha1.Resource).Name(name).Body(patch).Do(ctx).Into(out)
		if err == nil {
			typed(out)
			return out, nil
		}
		// A failed test (422, or 400 naming the test, depending on the API server's
		// version): a command arrived, or the annotations changed, since the read. The
		// next read says which.
		failedTest := apierrors.IsInvalid(err) || apierrors.IsConflict(err) || apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "test")
		if !failedTest || attempt == sendAttempts {
			return nil, c.apiErr(name, fmt.Sprintf("%s (JSON patch of annotation %s)", req.Command, v1alpha1.CommandAnnotation), err)
		}
	}
}

// mustJSON is v as JSON (a CommandRequest always encodes).
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Outcome is what the controller did with a command: the journal entry with its ID, or
// its answer in ResultAnnotation.
type Outcome struct {
	// Entry is the journal entry that has the command's ID, nil when none.
	Entry *v1alpha1.JournalEntry
	// Result is the controller's answer with the command's ID, nil when none.
	Result *v1alpha1.CommandResult
}

// OutcomeOf finds what became of the command id in o: a journal entry with its ID, or an
// answer in ResultAnnotation with its ID. A refusal is taken over an entry (a release
// journals nothing it refused).
func OutcomeOf(o *v1alpha1.Cutover, id string) (Outcome, bool) {
	var out Outcome
	if v, ok := o.Annotations[v1alpha1.ResultAnnotation]; ok {
		if r, err := v1alpha1.ParseCommandResult(v); err == nil && r.ID == id {
			out.Result = &r
		}
	}
	for i := range o.Status.Journal {
		if o.Status.Journal[i].ID == id {
			e := o.Status.Journal[i]
			out.Entry = &e
		}
	}
	return out, out.Entry != nil || out.Result != nil
}

// Err is the error an outcome means: the controller's refusal, or a journal entry saying
// the command was not acted on ("promote ignored: …"); nil when it was acted on.
func (o Outcome) Err(ref string, req v1alpha1.CommandRequest) error {
	if o.Result != nil && o.Result.Refused != "" {
		return fmt.Errorf("cutover %s: %s %s refused by the controller: %s", ref, req.Command, req.ID, o.Result.Refused)
	}
	if o.Entry != nil {
		for _, sep := range []string{" ignored: ", " discarded: "} {
			if _, why, ok := strings.Cut(o.Entry.Detail, sep); ok {
				return fmt.Errorf("cutover %s: %s %s not acted on: %s", ref, req.Command, req.ID, why)
			}
		}
	}
	return nil
}

// NoControllerError is a command no controller took or answered in time.
type NoControllerError struct {
	Cutover string
	Timeout time.Duration
	// Taken says the command left the annotation: a controller took it and neither
	// journaled nor answered it.
	Taken bool
}

// Error says what to check, and where the command is.
func (e *NoControllerError) Error() string {
	ns, name, _ := strings.Cut(e.Cutover, "/")
	if e.Taken {
		return fmt.Sprintf("the command was taken from annotation %s of Cutover %s but not journaled or answered within %s: "+
			"the controller that took it may have stopped (a command is taken at most once); see `kubectl crossfade status %s -n %s` before sending it again",
			v1alpha1.CommandAnnotation, e.Cutover, Seconds(e.Timeout), name, ns)
	}
	return fmt.Sprintf("no controller took the command within %s: is `crossfade controller --cutovers` running for namespace %s? "+
		"The command is still waiting in annotation %s of Cutover %s: a controller that starts will act on it; "+
		"cancel it with `kubectl annotate cutover %s -n %s %s-`",
		Seconds(e.Timeout), ns, v1alpha1.CommandAnnotation, e.Cutover, name, ns, v1alpha1.CommandAnnotation)
}

// Seconds renders d as "60s" when it is whole seconds, else as Go does ("1m0s" reads
// oddly in a message).
func Seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// WaitCommand waits, on a watch of the Cutover name, for at most timeout, until the
// controller shows what it did with req (OutcomeOf); it returns the outcome and the
// error it means (Outcome.Err). When time runs out it returns *NoControllerError.
func (c *Client) WaitCommand(ctx context.Context, name string, req v1alpha1.CommandRequest, timeout time.Duration) (Outcome, *v1alpha1.Cutover, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	var out Outcome
	o, err := c.Until(wctx, name, func(o *v1alpha1.Cutover) (bool, error) {
		var ok bool
		out, ok = OutcomeOf(o, req.ID)
		return ok, nil
	})
	switch {
	case errors.Is(err, errTimedOut):
		taken := true
		if cur, gerr := c.Get(ctx, name); gerr == nil {
			if r, perr := v1alpha1.ParseCommandRequest(cur.Annotations[v1alpha1.CommandAnnotation]); perr == nil && r.ID == req.ID {
				taken = false
			}
			// Answered between the last event and the read.
			if late, ok := OutcomeOf(cur, req.ID); ok {
				return late, cur, late.Err(c.ref(name), req)
			}
		}
		return out, o, &NoControllerError{Cutover: c.ref(name), Timeout: timeout, Taken: taken}
	case err != nil:
		return out, o, err
	}
	return out, o, out.Err(c.ref(name), req)
}

// errTimedOut is the cause of a wait's context ending at its timeout.
var errTimedOut = errors.New("timed out")
