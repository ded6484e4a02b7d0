package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// lockedBuffer is an output the command's goroutines and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dashboardURL is the line `cutover dashboard` prints once it serves the page.
var dashboardURL = regexp.MustCompile(`dashboard of cutover default/app: (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)`)

// TestCutoverDashboardCommand runs `crossfade cutover dashboard --kubeconfig F app` on a
// real kube-apiserver holding the Cutover app, whose status.journal a controller wrote
// (two steps passed, completed): in the kubeconfig's namespace (default) it serves, on
// loopback, a page showing both steps passed with their gate and the run done at 0/100,
// prints the progress lines, and exits 0 on Ctrl-C. A Cutover that does not exist is an
// error naming it (exit 1).
func TestCutoverDashboardCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-apiserver")
	}
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, "../../deploy/crds/cutovers.crossfade.io.yaml")
	client, err := statusstore.NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	var obj v1alpha1.Cutover
	doc := "apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata:\n  name: app\n  namespace: default\nspec:\n  zone: example.com\n  records:\n    - name: app.example.com\n  from: blue\n  to: green\n  steps: [0, 100]\n  pause: 1s\n"
	if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	if err := client.Cutovers.Post().Namespace("default").Resource(v1alpha1.Resource).Body(&obj).Do(t.Context()).Error(); err != nil {
		t.Fatalf("create Cutover app: %v", err)
	}
	w, _, _, err := statusstore.New(client, "default", "app").Open()
	if err != nil {
		t.Fatal(err)
	}
	gates := json.RawMessage(`[{"gate":"up","kind":"http","pass":true,"detail":"green (to): 2/2 ok"}]`)
	for _, e := range []journal.Entry{
		{Kind: "start", Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Kind: "intent", Step: 0, Weights: map[string]int64{"blue": 100, "green": 0}, Detail: "step 1 of 2"},
		{Kind: "written", Step: 0, Weights: map[string]int64{"blue": 100, "green": 0}, ChangeID: "/change/C1"},
		{Kind: "insync", Step: 0, ChangeID: "/change/C1", Detail: "1s"},
		{Kind: "step-passed", Step: 0, Weights: map[string]int64{"blue": 100, "green": 0}, Data: gates},
		{Kind: "intent", Step: 1, Weights: map[string]int64{"blue": 0, "green": 100}, Detail: "step 2 of 2"},
		{Kind: "written", Step: 1, Weights: map[string]int64{"blue": 0, "green": 100}, ChangeID: "/change/C2"},
		{Kind: "insync", Step: 1, ChangeID: "/change/C2", Detail: "1s"},
		{Kind: "step-passed", Step: 1, Weights: map[string]int64{"blue": 0, "green": 100}, Data: gates},
		{Kind: "done", Step: -1, Detail: "completed"},
	} {
		if _, err := w.Append(e); err != nil {
			t.Fatalf("append %s: %v", e.Kind, err)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a failure bound
	defer cancel()
	run := func(ctx context.Context, name string) (code <-chan int, out, errOut *lockedBuffer) {
		root := newRootCmd()
		out, errOut = &lockedBuffer{}, &lockedBuffer{}
		root.SetOut(out)
		root.SetErr(errOut)
		root.SetArgs([]string{"cutover", "dashboard", "--kubeconfig", kc.Kubeconfig, name})
		done := make(chan int, 1)
		go func() { done <- cli.Execute(ctx, root, errOut) }()
		return done, out, errOut
	}

	t.Run("missing", func(t *testing.T) {
		code, _, errOut := run(ctx, "nothere")
		if c := <-code; c != 1 || !strings.Contains(errOut.String(), "cutover default/nothere") {
			t.Errorf("exit %d, stderr %q; want 1 and an error naming cutover default/nothere", c, errOut.String())
		}
	})

	fctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	code, out, errOut := run(fctx, "app")
	var url string
	for url == "" {
		if m := dashboardURL.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case c := <-code:
			t.Fatalf("exited %d before serving: %s%s", c, out.String(), errOut.String())
		case <-ctx.Done():
			t.Fatalf("no dashboard line:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	resp, err := http.Get(url + "api/v1/state")
	if err != nil {
		t.Fatal(err)
	}
	var st dashboard.State
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range st.Timeline {
		steps = append(steps, s.Name+" "+s.Outcome)
	}
	if want := "step 1/2 passed,step 2/2 passed"; strings.Join(steps, ",") != want {
		t.Errorf("the page's timeline %q, want %q", steps, want)
	}
	if c := st.Current; st.Cutover != "app" || !c.Done || c.Step != 2 || c.Total != 2 || c.Weights["green"] != 100 {
		t.Errorf("the page shows cutover %q at %+v, want app done at step 2/2, green=100", st.Cutover, c)
	}
	if len(st.Gates) != 1 || st.Gates[0].Gate != "up" || !st.Gates[0].Pass {
		t.Errorf("the page's gates %+v, want up passed", st.Gates)
	}
	for _, want := range []string{"step 2/2", "cutover completed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the progress printed lacks %q:\n%s", want, out.String())
		}
	}
	interrupt()
	if c := <-code; c != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0; stderr:\n%s", c, errOut.String())
	}
}
