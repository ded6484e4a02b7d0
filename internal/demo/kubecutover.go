package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/deploy/crds"
	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/dashboard"
)

const (
	// cutoverCluster is the cluster that holds the demo's Cutover object and whose
	// controller runs it (--cutovers): the cluster traffic moves to, not the one that
	// may be retired.
	cutoverCluster = "green"
	// cutoverNamespace is the Cutover's namespace: the app's; cutoverName its name, as
	// the plan (cutover.yaml) names it.
	cutoverNamespace = serviceNamespace
	cutoverName      = "demo"
	// crdTimeout and cutoverTimeout are failure bounds: the CRD is Established within a
	// second or two, and the plan's own total limit (5 m, pauses not counted) ends a run
	// long before cutoverTimeout.
	crdTimeout     = time.Minute
	cutoverTimeout = 10 * time.Minute
)

// crdResource is where CustomResourceDefinitions live, handled as unstructured objects
// so that the demo needs no apiextensions client.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRD creates the Cutover CRD in kc's API server and waits until it is
// Established, so that the controller started next runs Cutovers from its start and the
// demo's object can be created.
func (kc *kubeCluster) installCRD(ctx context.Context) error {
	var obj map[string]any
	if err := yaml.Unmarshal(crds.Cutovers, &obj); err != nil {
		return fmt.Errorf("cluster %s: the embedded Cutover CRD: %w", kc.id, err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	dyn, err := dynamic.NewForConfig(kc.api.Config())
	if err != nil {
		return fmt.Errorf("cluster %s: client: %w", kc.id, err)
	}
	client := dyn.Resource(crdResource)
	if _, err := client.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create CRD %s: %w", kc.id, crd.GetName(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, crdTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := client.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s: CRD %s not Established within %s: %w", kc.id, crd.GetName(), crdTimeout, err)
	}
	return nil
}

// cutoverObject is the demo's plan, text (a Cutover plan file), as the object `kubectl
// apply -n shop -f` makes of it.
func cutoverObject(text string) (*v1alpha1.Cutover, error) {
	c := &v1alpha1.Cutover{}
	if err := yaml.UnmarshalStrict([]byte(text), c); err != nil {
		return nil, fmt.Errorf("demo plan as a Cutover object: %w", err)
	}
	c.Namespace = cutoverNamespace
	return c, nil
}

// runKubeCutover is runCutover for demo --kube: instead of running the engine here, it
// applies the plan (text, loaded as p) as a Cutover object in the cutover cluster, whose
// controller runs it, and follows the object until its run ends. The dashboard (rec),
// cfg.Progress and the step tracker are fed from the journal the controller keeps in
// the object's status, as `crossfade cutover dashboard` feeds its page; the Result holds
// the report built from that journal, the object as it ended, and what the clients saw.
// The error is the run's: an object that did not complete, or the following failing.
func (k *kube) runKubeCutover(ctx context.Context, cfg Config, p *spec.Plan, text string, lg *loadgen, rec *dashboard.Recorder) (*Result, error) {
	kc := k.cluster(cutoverCluster)
	if kc == nil || kc.ctl == nil {
		return &Result{}, errNoCutoverCluster
	}
	obj, err := cutoverObject(text)
	if err != nil {
		return &Result{}, err
	}
	client, err := statusstore.NewClient(kc.api.Config())
	if err != nil {
		return &Result{}, fmt.Errorf("cluster %s: %w", kc.id, err)
	}
	if err := client.Cutovers.Post().Namespace(obj.Namespace).Resource(v1alpha1.Resource).Body(obj).Do(ctx).Error(); err != nil {
		return &Result{}, fmt.Errorf("cluster %s: create Cutover %s/%s: %w", kc.id, obj.Namespace, obj.Name, err)
	}
	fmt.Fprintf(cfg.Out, "cluster %-5s Cutover %s/%s applied: its controller runs it (--cutovers), the dashboard follows its status\n\n", kc.id, obj.Namespace, obj.Name)

	progress := cfg.Progress
	if progress == nil {
		progress = render.NewProgress(cfg.Out, false)
	}
	tracker := &stepTracker{lg: lg}
	follower := dashboard.NewFollower(rec, p, render.MultiProgress(progress, tracker))

	// A controller that exits ends the wait at once, with its log, rather than at the
	// failure bound.
	wctx, cancel := context.WithTimeoutCause(ctx, cutoverTimeout, fmt.Errorf("cutover %s/%s did not end within %s", obj.Namespace, obj.Name, cutoverTimeout))
	defer cancel()
	wctx, cancelCause := context.WithCancelCause(wctx)
	watched := make(chan struct{})
	defer func() {
		cancelCause(nil)
		<-watched
	}()
	// This goroutine watches the controller while the demo follows the object; the
	// deferred cancel ends it, and waits for it.
	go func() {
		defer close(watched)
		select {
		case <-kc.ctl.Done():
			cancelCause(fmt.Errorf("cluster %s: its controller exited (%v) during the cutover; log %s (last lines):\n%s", kc.id, kc.ctl.Err(), kc.ctl.LogPath, child.Tail(kc.ctl.LogPath, 30)))
		case <-wctx.Done():
		}
	}()
	var last *v1alpha1.Cutover
	werr := dashboard.WatchCutover(wctx, client.Cutovers, obj.Namespace, obj.Name, cfg.Logger, func(c *v1alpha1.Cutover) bool {
		follower.Feed(c.Status.Entries())
		last = c
		return c.Status.Phase.Final()
	})
	if werr != nil && wctx.Err() != nil && ctx.Err() == nil {
		werr = context.Cause(wctx)
	}
	tracker.Event(cutover.Event{Phase: cutover.PhaseDone})

	res := &Result{PerStep: tracker.steps, Dashboard: rec.State(), Cutover: last}
	res.Requests, res.Failures, _ = lg.snapshot()
	if last != nil && len(last.Status.Journal) > 0 {
		res.Report = cutover.BuildReport(last.Name, last.Status.Entries())
	}
	switch {
	case werr != nil:
		return res, fmt.Errorf("cluster %s: follow Cutover %s/%s: %w", kc.id, obj.Namespace, obj.Name, werr)
	case last.Status.Phase != v1alpha1.PhaseCompleted:
		return res, fmt.Errorf("cluster %s: Cutover %s/%s ended %s: %s", kc.id, obj.Namespace, obj.Name, last.Status.Phase, phaseMessage(last))
	}
	return res, nil
}

// phaseMessage is what c's Ready condition says, else its phase.
func phaseMessage(c *v1alpha1.Cutover) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == "Ready" && cond.Message != "" {
			return cond.Message
		}
	}
	return string(c.Status.Phase)
}

// kubeHint is what --keep adds for the Cutover object: the kubectl command that shows
// it, and the dashboard command that follows it.
func (k *kube) kubeHint(w io.Writer, name string) {
	kc := k.cluster(cutoverCluster)
	if kc == nil {
		return
	}
	fmt.Fprintf(w, "  %-12skubectl --kubeconfig %s --namespace %s get cutover %s -o yaml\n", "Cutover", kc.api.Kubeconfig, cutoverNamespace, name)
	fmt.Fprintf(w, "  %-12scrossfade cutover dashboard --kubeconfig %s -n %s %s\n", "follow", kc.api.Kubeconfig, cutoverNamespace, name)
}

// errNoCutoverCluster: the demo's clusters lack the one that runs the Cutover, or its
// controller.
var errNoCutoverCluster = errors.New("demo --kube: no cluster " + cutoverCluster + " to run the Cutover")
