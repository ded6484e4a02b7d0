package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// TestFollowCutover runs a cutover whose journal is a Cutover object's status (as
// `controller --cutovers` keeps it) on a real kube-apiserver, while FollowCutover
// follows that object from before its first entry, and through a restart of the API
// server: the page it serves over HTTP (on loopback) ends up saying what the run's live
// recorder says. A page started after the
// run (reading the whole journal at once) says the same; following a Cutover that does
// not exist fails at once, naming it.
func TestFollowCutover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-apiserver")
	}
	kc := kubetest.Start(t)
	kc.InstallCRDs(t, "../../deploy/crds/cutovers.crossfade.io.yaml")
	client, err := statusstore.NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	ok := okServer()
	defer ok.Close()
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	doc := fmt.Sprintf(followPlan, z.SB.DNSAddr(), ok.URL, ok.URL, ok.URL)
	var obj v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	obj.Namespace = "default"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound
	defer cancel()
	if err := client.Cutovers.Post().Namespace("default").Resource(v1alpha1.Resource).Body(&obj).Do(ctx).Error(); err != nil {
		t.Fatalf("create Cutover app: %v", err)
	}

	if _, _, _, err := FollowCutover(ctx, client.Cutovers, "default", "nothere", "127.0.0.1:0", nil, nil); err == nil || !strings.Contains(err.Error(), "cutover default/nothere") {
		t.Errorf("following a Cutover that does not exist: %v, want an error naming default/nothere", err)
	}
	if _, _, _, err := FollowCutover(ctx, client.Cutovers, "default", "app", "0.0.0.0:0", nil, nil); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("following on 0.0.0.0: %v, want a refusal: loopback only", err)
	}

	fctx, stop := context.WithCancel(ctx)
	logs := &syncLog{}
	url, view, wait, err := FollowCutover(fctx, client.Cutovers, "default", "app", "127.0.0.1:0", nil, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// The follower outlives its API server's restart: its watch ends, its reads fail
	// while the server is down, and it reads and watches again once it is back.
	kc.StopAPIServer(t)
	for !strings.Contains(logs.String(), "reading again") {
		select {
		case <-ctx.Done():
			t.Fatalf("the follower never found the API server down:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	kc.StartAPIServer(t)

	live := NewRecorder("app", "blue", "green")
	live.SetLever(cutover.LeverRoute53)
	p := view.follower // the plan the view read from the object
	plan, err := planOf(&obj)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cutover.Config{Plan: plan, Levers: z.Levers(z.DNS), StateDir: t.TempDir(), By: "test@host",
		Journals:      func(name string) journal.Store { return statusstore.New(client, "default", name) },
		DNSServers:    []string{z.SB.DNSAddr()},
		CheckInterval: 200 * time.Millisecond, PollInterval: 10 * time.Millisecond, Progress: live}
	if rep, err := cutover.Run(ctx, cfg, false); err != nil || rep.Outcome != "completed" {
		t.Fatalf("run over the object's status: %v (report %+v)", err, rep)
	}
	want := comparable(live.State())

	// The page catches up with the last entry through the watch.
	var got State
	for {
		got = fetchState(t, url)
		if got.Current.Done {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page never showed the run done (fed up to seq %d):\n%s", p.Fed(), comparable(got))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if g := comparable(got); g != want {
		t.Errorf("the page following the object:\n%s\nthe live page:\n%s", g, want)
	}
	stop()
	if err := wait(); err != nil {
		t.Errorf("wait after Ctrl-C: %v, want nil", err)
	}

	// Opened after the run: the whole journal at once.
	lctx, lstop := context.WithCancel(ctx)
	defer lstop()
	_, late, lwait, err := FollowCutover(lctx, client.Cutovers, "default", "app", "127.0.0.1:0", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := comparable(late.Recorder.State()); g != want {
		t.Errorf("the page opened after the run:\n%s\nthe live page:\n%s", g, want)
	}
	lstop()
	if err := lwait(); err != nil {
		t.Errorf("wait: %v", err)
	}
}

// syncLog is a log the follower writes while the test reads it.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fetchState reads the page's state over HTTP, as the browser does.
func fetchState(t *testing.T, url string) State {
	t.Helper()
	resp, err := http.Get(url + "api/v1/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s State
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("GET %sapi/v1/state: %v", url, err)
	}
	return s
}
