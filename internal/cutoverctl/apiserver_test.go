package cutoverctl

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// apiEnv is a real kube-apiserver with the Cutover CRD, and a Client of namespace ns.
type apiEnv struct {
	kc *kubetest.Cluster
	cl *Client
	ns string
}

// startAPI runs kube-apiserver and etcd for t (skipped under -short) with the CRD
// installed and a namespace ns.
func startAPI(t *testing.T, ns string) *apiEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kc := kubetest.Start(t)
	_, file, _, _ := runtime.Caller(0)
	kc.InstallCRDs(t, filepath.Join(filepath.Dir(file), "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	if _, err := kc.Clientset(t).CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cl, err := New(kc.Config(), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	return &apiEnv{kc: kc, cl: cl, ns: ns}
}

// create makes the Cutover name (app.example.com from blue to green in two steps), with
// annotations ann (none when nil).
func (e *apiEnv) create(t *testing.T, name string, ann map[string]string) *v1alpha1.Cutover {
	t.Helper()
	doc := "apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata:\n  name: " + name + "\nspec:\n  zone: example.com\n  records:\n    - name: app.example.com\n  from: blue\n  to: green\n  steps: [50, 100]\n  pause: 1s\n"
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	c.Annotations = ann
	out := &v1alpha1.Cutover{}
	if err := e.cl.cutovers.Post().Namespace(e.ns).Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("create Cutover %s: %v", name, err)
	}
	return out
}

// setStatus writes st as the Cutover name's status, as the controller does (the status
// subresource), and returns the object.
func (e *apiEnv) setStatus(t *testing.T, name string, st v1alpha1.CutoverStatus) *v1alpha1.Cutover {
	t.Helper()
	c, err := e.cl.Get(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = metav1.Now()
	}
	c.Status = st
	out := &v1alpha1.Cutover{}
	if err := e.cl.cutovers.Put().Namespace(e.ns).Resource(v1alpha1.Resource).Name(name).SubResource("status").Body(c).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("write status of %s: %v", name, err)
	}
	return out
}

// patch sends a JSON patch to the Cutover name as another client would.
func (e *apiEnv) patch(t *testing.T, name, patch string) error {
	t.Helper()
	return e.cl.cutovers.Patch(types.JSONPatchType).Namespace(e.ns).Resource(v1alpha1.Resource).Name(name).Body([]byte(patch)).Do(t.Context()).Error()
}

// TestAgainstAPIServer runs the client against a real kube-apiserver: the patches it
// writes, the refusal of a command while another waits (its own read, and the API
// server's test op when one arrives between), who sends them (SelfSubjectReview), the
// waits on a watch, and NotFound named plainly.
func TestAgainstAPIServer(t *testing.T) {
	e := startAPI(t, "shop")

	t.Run("get and list; NotFound names the object", func(t *testing.T) {
		e.create(t, "listed", nil)
		list, err := e.cl.List(t.Context())
		if err != nil || len(list.Items) == 0 || list.Kind != "CutoverList" {
			t.Fatalf("List = %+v, %v", list, err)
		}
		_, err = e.cl.Get(t.Context(), "nope")
		if err == nil || !strings.Contains(err.Error(), "no Cutover nope in namespace shop") {
			t.Errorf("Get of a missing Cutover: %v, want `no Cutover nope in namespace shop`", err)
		}
		if _, err := e.cl.SetPaused(t.Context(), "nope", true, "alice"); err == nil || !strings.Contains(err.Error(), "no Cutover nope in namespace shop") {
			t.Errorf("SetPaused of a missing Cutover: %v", err)
		}
		if _, err := e.cl.Send(t.Context(), "nope", v1alpha1.CommandRequest{Command: "abort", ID: NewID()}); err == nil || !strings.Contains(err.Error(), "no Cutover nope in namespace shop") {
			t.Errorf("Send to a missing Cutover: %v", err)
		}
	})

	t.Run("pause writes spec.paused and paused-by in one patch, and waits for Paused", func(t *testing.T) {
		c0 := e.create(t, "pausing", nil)
		e.setStatus(t, "pausing", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, ObservedGeneration: c0.Generation, Progress: "1/2", Conditions: conds("Step1Of2", true, false)})
		c, err := e.cl.SetPaused(t.Context(), "pausing", true, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if !c.Spec.Paused || c.Annotations[v1alpha1.PausedByAnnotation] != "alice" || c.Generation != c0.Generation+1 {
			t.Fatalf("after pause: spec.paused %t, paused-by %q, generation %d (was %d); want true, alice, one more",
				c.Spec.Paused, c.Annotations[v1alpha1.PausedByAnnotation], c.Generation, c0.Generation)
		}
		// The controller shows the pause a moment later: the wait returns then, on the watch.
		done := make(chan error, 1)
		var got *v1alpha1.Cutover
		go func() {
			var err error
			got, err = e.cl.WaitPaused(t.Context(), "pausing", true, c.Generation, time.Minute)
			done <- err
		}()
		e.setStatus(t, "pausing", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, ObservedGeneration: c0.Generation, Progress: "2/2", Conditions: conds("Step2Of2", true, false)})
		e.setStatus(t, "pausing", v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePaused, ObservedGeneration: c.Generation, Progress: "2/2", Conditions: conds("Paused", false, false)})
		if err := <-done; err != nil || got.Status.Phase != v1alpha1.PhasePaused {
			t.Fatalf("WaitPaused = %v, %v; want the Paused status", got, err)
		}
		// A wait that nothing answers ends at its timeout, saying spec.paused stays.
		_, err = e.cl.WaitPaused(t.Context(), "pausing", false, c.Generation+1, 300*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "is `crossfade controller --cutovers` running for namespace shop?") || !strings.Contains(err.Error(), "shop/pausing") {
			t.Errorf("WaitPaused with no controller: %v", err)
		}
		// An ended cutover is refused before anything is written.
		e.setStatus(t, "pausing", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseCompleted, ObservedGeneration: c.Generation, Conditions: conds("Completed", false, false)})
		if _, err := e.cl.SetPaused(t.Context(), "pausing", false, "bob"); err == nil || !strings.Contains(err.Error(), "has ended (Completed)") {
			t.Errorf("resume of a Completed cutover: %v", err)
		}
		if by := e.get(t, "pausing").Annotations[v1alpha1.PausedByAnnotation]; by != "alice" {
			t.Errorf("paused-by after a refused resume: %q, want alice's still", by)
		}
	})

	t.Run("a command is written once; another waiting is refused, naming it", func(t *testing.T) {
		for _, ann := range []map[string]string{nil, {"team": "payments"}} {
			name := "cmd-" + map[bool]string{true: "bare", false: "annotated"}[ann == nil]
			e.create(t, name, ann)
			first := v1alpha1.CommandRequest{Command: "promote", ID: NewID(), By: "alice", At: time.Now().UTC().Truncate(time.Second), SkipGates: true}
			if _, err := e.cl.Send(t.Context(), name, first); err != nil {
				t.Fatalf("%s: first Send: %v", name, err)
			}
			c := e.get(t, name)
			got, err := v1alpha1.ParseCommandRequest(c.Annotations[v1alpha1.CommandAnnotation])
			if err != nil || got.ID != first.ID || got.By != "alice" || !got.SkipGates || !got.At.Equal(first.At) {
				t.Fatalf("%s: annotation %q (%v), want %+v", name, c.Annotations[v1alpha1.CommandAnnotation], err, first)
			}
			if ann != nil && c.Annotations["team"] != "payments" {
				t.Errorf("%s: the other annotations were lost: %v", name, c.Annotations)
			}
			second := v1alpha1.CommandRequest{Command: "abort", ID: NewID(), By: "bob"}
			_, err = e.cl.Send(t.Context(), name, second)
			var we *WaitingError
			if !errors.As(err, &we) || !strings.Contains(err.Error(), "another command is waiting: promote "+first.ID+" by alice") {
				t.Fatalf("%s: second Send: %v, want refused naming the promote waiting", name, err)
			}
			if v := e.get(t, name).Annotations[v1alpha1.CommandAnnotation]; v != c.Annotations[v1alpha1.CommandAnnotation] {
				t.Errorf("%s: the waiting command was overwritten: %q", name, v)
			}
		}
		// The API server, not only the read before it, guards the annotation: the patch
		// Send writes fails when a command arrived after the read.
		c := e.get(t, "cmd-annotated")
		patch, err := CommandPatch(v1alpha1.CommandRequest{Command: "abort", ID: NewID(), By: "mallory"}, c.Annotations != nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.patch(t, "cmd-annotated", string(patch)); err == nil {
			t.Fatal("the API server applied a command patch over a waiting command")
		}
		bare, err := CommandPatch(v1alpha1.CommandRequest{Command: "abort", ID: NewID(), By: "mallory"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.patch(t, "cmd-annotated", string(bare)); err == nil {
			t.Fatal("the API server replaced the annotations of an object that has some")
		}
		if v := e.get(t, "cmd-annotated").Annotations[v1alpha1.CommandAnnotation]; strings.Contains(v, "mallory") {
			t.Errorf("annotation overwritten: %q", v)
		}
	})

	t.Run("the wait for a command: journaled, refused, taken and lost, not taken", func(t *testing.T) {
		e.create(t, "waits", nil)
		e.setStatus(t, "waits", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Progress: "1/2", Conditions: conds("Step1Of2", true, false),
			Journal: []v1alpha1.JournalEntry{{Seq: 1, Time: metav1.NowMicro(), Kind: "start", Step: -1, By: "runner"}}})
		send := func(command string) v1alpha1.CommandRequest {
			req := v1alpha1.CommandRequest{Command: command, ID: NewID(), By: "alice", At: time.Now().UTC()}
			if _, err := e.cl.Send(t.Context(), "waits", req); err != nil {
				t.Fatal(err)
			}
			return req
		}
		// take removes the annotation as the controller does (a test of its value first).
		take := func(req v1alpha1.CommandRequest) {
			v := e.get(t, "waits").Annotations[v1alpha1.CommandAnnotation]
			p := v1alpha1.AnnotationPath(v1alpha1.CommandAnnotation)
			if err := e.patch(t, "waits", `[{"op":"test","path":"`+p+`","value":`+mustJSON(v)+`},{"op":"remove","path":"`+p+`"}]`); err != nil {
				t.Fatalf("take %s: %v", req.ID, err)
			}
		}
		wait := func(req v1alpha1.CommandRequest, timeout time.Duration, controller func()) (Outcome, error) {
			type res struct {
				o   Outcome
				err error
			}
			done := make(chan res, 1)
			go func() {
				o, _, err := e.cl.WaitCommand(t.Context(), "waits", req, timeout)
				done <- res{o, err}
			}()
			controller()
			r := <-done
			return r.o, r.err
		}

		promote := send("promote")
		out, err := wait(promote, time.Minute, func() {
			take(promote)
			c := e.get(t, "waits")
			st := c.Status
			st.Journal = append(st.Journal, v1alpha1.JournalEntry{Seq: 2, Time: metav1.NowMicro(), Kind: "control", Step: -1, By: "alice", Detail: "promote", ID: promote.ID})
			e.setStatus(t, "waits", st)
		})
		if err != nil || out.Entry == nil || out.Entry.Seq != 2 || out.Entry.By != "alice" {
			t.Fatalf("promote journaled: %+v, %v; want entry 2 by alice", out, err)
		}

		release := send("release")
		_, err = wait(release, time.Minute, func() {
			take(release)
			res := mustJSON(v1alpha1.CommandResult{ID: release.ID, Command: "release", By: "alice", At: time.Now().UTC(), Refused: "the cutover has not ended"})
			if err := e.cl.cutovers.Patch(types.MergePatchType).Namespace(e.ns).Resource(v1alpha1.Resource).Name("waits").
				Body([]byte(`{"metadata":{"annotations":{"crossfade.io/command-result":` + mustJSON(res) + `}}}`)).Do(t.Context()).Error(); err != nil {
				t.Fatal(err)
			}
		})
		if err == nil || !strings.Contains(err.Error(), "refused by the controller: the cutover has not ended") {
			t.Fatalf("release refused: %v", err)
		}

		abort := send("abort")
		_, err = wait(abort, 500*time.Millisecond, func() { take(abort) })
		var nc *NoControllerError
		if !errors.As(err, &nc) || !nc.Taken {
			t.Fatalf("abort taken and never journaled: %v, want a NoControllerError saying it was taken", err)
		}

		left := send("abort")
		_, err = wait(left, 500*time.Millisecond, func() {})
		if !errors.As(err, &nc) || nc.Taken || !strings.Contains(err.Error(), "still waiting in annotation crossfade.io/command of Cutover shop/waits") {
			t.Fatalf("abort never taken: %v, want a NoControllerError saying it still waits", err)
		}
	})

	t.Run("Until ends on the final phase", func(t *testing.T) {
		e.create(t, "watched", nil)
		e.setStatus(t, "watched", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Progress: "1/2", Conditions: conds("Step1Of2", true, false)})
		seen := make(chan v1alpha1.Phase, 16)
		done := make(chan *v1alpha1.Cutover, 1)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		go func() {
			c, err := e.cl.Until(ctx, "watched", func(c *v1alpha1.Cutover) (bool, error) {
				seen <- c.Status.Phase
				return c.Status.Phase.Final(), nil
			})
			if err != nil {
				t.Errorf("Until: %v", err)
			}
			done <- c
		}()
		// The first look is the status just written: Until lists from etcd, not from the
		// API server's watch cache (a reflector's resourceVersion "0"), which may lag it.
		if p := <-seen; p != v1alpha1.PhaseProgressing {
			t.Fatalf("first look: %q, want Progressing", p)
		}
		e.setStatus(t, "watched", v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseRolledBack, Progress: "1/2", Conditions: conds("GateFailed", false, true)})
		if c := <-done; c == nil || c.Status.Phase != v1alpha1.PhaseRolledBack {
			t.Fatalf("Until returned %v, want the RolledBack object", c)
		}
	})

	t.Run("who: the API server's user, impersonated too; the kubeconfig's name only as a fallback", func(t *testing.T) {
		// A kubeconfig whose user entry is named differently from the user its token is.
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["k"] = &clientcmdapi.Cluster{Server: e.kc.URL, CertificateAuthorityData: e.kc.CA}
		cfg.AuthInfos["laptop-profile"] = &clientcmdapi.AuthInfo{Token: e.kc.Token}
		cfg.AuthInfos["alice-profile"] = &clientcmdapi.AuthInfo{Token: e.kc.Token, Impersonate: "alice"}
		cfg.Contexts["k"] = &clientcmdapi.Context{Cluster: "k", AuthInfo: "laptop-profile", Namespace: "shop"}
		cfg.Contexts["as-alice"] = &clientcmdapi.Context{Cluster: "k", AuthInfo: "alice-profile"}
		cfg.CurrentContext = "k"
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			flags            Flags
			want, ns, ctxUsr string
		}{
			{Flags{Kubeconfig: path}, kubetest.AdminUser, "shop", "laptop-profile"},
			{Flags{Kubeconfig: path, Context: "as-alice", Namespace: "other"}, "alice", "other", "alice-profile"},
		} {
			cl, err := Load(tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			id, err := cl.Who(t.Context())
			if err != nil || id.Name != tc.want || id.Source != SourceReview || cl.Namespace != tc.ns || cl.ContextUser != tc.ctxUsr {
				t.Errorf("%+v: Who = %+v, %v, namespace %q, context user %q; want %q from the SelfSubjectReview, namespace %q, context user %q",
					tc.flags, id, err, cl.Namespace, cl.ContextUser, tc.want, tc.ns, tc.ctxUsr)
			}
		}
		// An API server that serves no SelfSubjectReview (before 1.28: 404): the
		// kubeconfig context's user, else unknown, each saying so.
		old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the requested resource"}`))
		}))
		defer old.Close()
		for _, tc := range []struct{ user, want, source string }{{"laptop-profile", "laptop-profile", SourceKubeconfig}, {"", "unknown", SourceUnknown}} {
			cl, err := New(&rest.Config{Host: old.URL}, "", tc.user)
			if err != nil {
				t.Fatal(err)
			}
			id, err := cl.Who(t.Context())
			if err != nil || id.Name != tc.want || id.Source != tc.source {
				t.Errorf("no SelfSubjectReview, context user %q: Who = %+v, %v; want %q (%s)", tc.user, id, err, tc.want, tc.source)
			}
		}
	})
}

// get reads the Cutover name, failing the test if it cannot.
func (e *apiEnv) get(t *testing.T, name string) *v1alpha1.Cutover {
	t.Helper()
	c, err := e.cl.Get(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
