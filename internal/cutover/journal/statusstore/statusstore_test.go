package statusstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// namespace is where the tests' Cutovers live.
const namespace = "default"

// env is a real API server with the Cutover CRD installed, and a Client of it.
type env struct {
	kc *kubetest.Cluster
	c  *Client
}

// start runs kube-apiserver and etcd for t (skipped under -short; under CI=true missing
// binaries fail, as kubetest.Start does) with the Cutover CRD installed.
func start(t *testing.T) *env {
	t.Helper()
	kc := kubetest.Start(t)
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	kc.InstallCRDs(t, filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	c, err := NewClient(kc.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &env{kc: kc, c: c}
}

// create creates a Cutover named name with a minimal Route 53 plan as its spec.
func (e *env) create(t *testing.T, name string) *v1alpha1.Cutover {
	t.Helper()
	doc := `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: ` + name + `
  namespace: ` + namespace + `
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: blue
  to: green
  steps: [0, 10, 50, 100]
  pause: 1s
`
	var c v1alpha1.Cutover
	if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	out := &v1alpha1.Cutover{}
	if err := e.c.Cutovers.Post().Namespace(namespace).Resource(v1alpha1.Resource).Body(&c).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("create Cutover %s: %v", name, err)
	}
	return out
}

// get reads the Cutover named name.
func (e *env) get(t *testing.T, name string) *v1alpha1.Cutover {
	t.Helper()
	out := &v1alpha1.Cutover{}
	if err := e.c.Cutovers.Get().Namespace(namespace).Resource(v1alpha1.Resource).Name(name).Do(t.Context()).Into(out); err != nil {
		t.Fatalf("read Cutover %s: %v", name, err)
	}
	return out
}

// patch merge-patches the Cutover named name (subresource "" or "status"), as kubectl
// patch or another controller would.
func (e *env) patch(t *testing.T, name, subresource, patch string) {
	t.Helper()
	req := e.c.Cutovers.Patch(types.MergePatchType).Namespace(namespace).Resource(v1alpha1.Resource).Name(name)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	if err := req.Body([]byte(patch)).Do(t.Context()).Error(); err != nil {
		t.Fatalf("patch Cutover %s %s with %s: %v", name, subresource, patch, err)
	}
}

// TestJournal: status.journal as a journal.Store on the real API server: a missing
// object is fs.ErrNotExist naming it, an existing one without a journal opens empty,
// entries round-trip with their sequence numbers and times, an append is a
// compare-and-swap that never overwrites another writer's entry, a foreign change to the
// object (spec.paused, a label, another status field) does not stop an append nor is
// lost by it, the WithStatus hook is written in the same update, and a full journal
// refuses the append naming the object.
func TestJournal(t *testing.T) {
	e := start(t)

	t.Run("missing object", func(t *testing.T) {
		s := New(e.c, namespace, "missing")
		if _, _, err := s.Read(); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "default/missing") {
			t.Errorf("Read of a missing Cutover: %v, want an error wrapping fs.ErrNotExist naming default/missing", err)
		}
		if _, _, _, err := s.Open(); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "default/missing") {
			t.Errorf("Open of a missing Cutover: %v, want an error wrapping fs.ErrNotExist naming default/missing", err)
		}
		if got := s.Where(); got != "cutover default/missing" {
			t.Errorf("Where = %q, want cutover default/missing", got)
		}
	})

	t.Run("open empty, append, reopen, read", func(t *testing.T) {
		e.create(t, "rt")
		s := New(e.c, namespace, "rt")
		if got, torn, err := s.Read(); err != nil || len(got) != 0 || torn != 0 {
			t.Fatalf("Read of a Cutover without a journal: %v, %d, %v, want empty", got, torn, err)
		}
		w, got, cut, err := s.Open()
		if err != nil || len(got) != 0 || cut != 0 {
			t.Fatalf("Open: %v, %d, %v", got, cut, err)
		}
		data := json.RawMessage(`{"gate":"dns","ratio":0.5}`)
		first, err := w.Append(journal.Entry{Kind: "start", Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, By: "alice@a", Data: data, TTL: 60, PlanHash: "abc", Token: "tok"})
		if err != nil || first.Seq != 1 || first.Time.IsZero() {
			t.Fatalf("first append: %+v, %v, want seq 1 with a time", first, err)
		}
		if _, err := w.Append(journal.Entry{Kind: "intent", Step: 0, Weights: map[string]int64{"green": 10}}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		w, got, _, err = New(e.c, namespace, "rt").Open()
		if err != nil || len(got) != 2 || got[1].Kind != "intent" || got[1].Seq != 2 || got[1].Weights["green"] != 10 {
			t.Fatalf("reopen: %+v, %v", got, err)
		}
		// What Append returned is what is stored, to the time (status keeps microseconds).
		if g := got[0]; !g.Time.Equal(first.Time) || g.By != "alice@a" || string(g.Data) != string(data) || g.TTL != 60 || g.PlanHash != "abc" || g.Token != "tok" || g.Step != -1 {
			t.Errorf("stored start %+v, appended %+v", g, first)
		}
		third, err := w.Append(journal.Entry{Kind: "written", Step: 0, ChangeID: "C1"})
		if err != nil || third.Seq != 3 {
			t.Fatalf("append after reopen: %+v, %v, want seq 3", third, err)
		}
		got, torn, err := s.Read()
		if err != nil || len(got) != 3 || got[2].ChangeID != "C1" || torn != 0 {
			t.Fatalf("Read: %+v, %d, %v", got, torn, err)
		}
	})

	t.Run("append is a compare-and-swap", func(t *testing.T) {
		e.create(t, "cas")
		a, _, _, err := New(e.c, namespace, "cas").Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _, _, err := New(e.c, namespace, "cas").Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Append(journal.Entry{Kind: "start", Step: -1}); err != nil {
			t.Fatal(err)
		}
		var conflict *journal.ConflictError
		if _, err := b.Append(journal.Entry{Kind: "intent"}); !errors.As(err, &conflict) || conflict.Seq != 0 || conflict.Found != 1 || !strings.Contains(err.Error(), "default/cas") {
			t.Fatalf("stale writer's append: %v, want *journal.ConflictError at seq 0, journal at 1, naming default/cas", err)
		}
		got := e.get(t, "cas").Status.Journal
		if len(got) != 1 || got[0].Kind != "start" {
			t.Fatalf("journal after the conflict: %+v, want only a's start", got)
		}
		// The loser stays stale: it never appends after an entry it has not read.
		if _, err := b.Append(journal.Entry{Kind: "intent"}); !errors.As(err, &conflict) {
			t.Fatalf("stale writer's second append: %v, want *journal.ConflictError", err)
		}
		if en, err := a.Append(journal.Entry{Kind: "intent"}); err != nil || en.Seq != 2 {
			t.Fatalf("winner's next append: %+v, %v", en, err)
		}
	})

	t.Run("foreign change does not stop an append", func(t *testing.T) {
		e.create(t, "foreign")
		w, _, _, err := New(e.c, namespace, "foreign").Open()
		if err != nil {
			t.Fatal(err)
		}
		// Changes the writer has not read: spec.paused and a label (the main resource),
		// another status field (the status subresource).
		e.patch(t, "foreign", "", `{"spec":{"paused":true},"metadata":{"labels":{"team":"sre"}}}`)
		e.patch(t, "foreign", "status", `{"status":{"progress":"0/4"}}`)
		if en, err := w.Append(journal.Entry{Kind: "start", Step: -1}); err != nil || en.Seq != 1 {
			t.Fatalf("append after foreign changes: %+v, %v, want seq 1", en, err)
		}
		c := e.get(t, "foreign")
		if len(c.Status.Journal) != 1 || c.Status.Journal[0].Kind != "start" {
			t.Errorf("journal %+v, want the start", c.Status.Journal)
		}
		if !c.Spec.Paused || c.Labels["team"] != "sre" || c.Status.Progress != "0/4" {
			t.Errorf("foreign changes lost by the append: paused %v, labels %v, progress %q", c.Spec.Paused, c.Labels, c.Status.Progress)
		}
	})

	t.Run("status hook in the same write", func(t *testing.T) {
		e.create(t, "hook")
		var seen []int
		s := New(e.c, namespace, "hook", WithStatus(func(c *v1alpha1.Cutover) {
			seen = append(seen, len(c.Status.Journal))
			c.Status.Progress = fmt.Sprintf("%d entries", len(c.Status.Journal))
			c.Status.Phase = v1alpha1.PhaseProgressing
		}))
		w, _, _, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"start", "intent", "written"} {
			if _, err := w.Append(journal.Entry{Kind: k}); err != nil {
				t.Fatal(err)
			}
		}
		c := e.get(t, "hook")
		if c.Status.Progress != "3 entries" || c.Status.Phase != v1alpha1.PhaseProgressing || len(c.Status.Journal) != 3 {
			t.Errorf("status after 3 appends: progress %q, phase %q, %d entries; want the hook's projection of the 3 entries", c.Status.Progress, c.Status.Phase, len(c.Status.Journal))
		}
		if fmt.Sprint(seen) != "[1 2 3]" {
			t.Errorf("hook saw journals of %v entries, want [1 2 3]: it runs on the object with the new entry", seen)
		}
		// A hook that touches the journal is refused, and nothing is written.
		bad := New(e.c, namespace, "hook", WithStatus(func(c *v1alpha1.Cutover) { c.Status.Journal = c.Status.Journal[1:] }))
		w, _, _, err = bad.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(journal.Entry{Kind: "insync"}); err == nil || !strings.Contains(err.Error(), "status.journal") {
			t.Errorf("append whose hook dropped an entry: %v, want refused", err)
		}
		if n := len(e.get(t, "hook").Status.Journal); n != 3 {
			t.Errorf("journal after the refused append: %d entries, want 3", n)
		}
	})

	t.Run("full journal refuses", func(t *testing.T) {
		e.create(t, "full")
		st := v1alpha1.CutoverStatus{}
		now := metav1.NewMicroTime(time.Now())
		for i := 1; i <= MaxEntries; i++ {
			st.Journal = append(st.Journal, v1alpha1.JournalEntry{Seq: i, Time: now, Kind: "control", Step: -1})
		}
		b, err := json.Marshal(map[string]any{"status": st})
		if err != nil {
			t.Fatal(err)
		}
		e.patch(t, "full", "status", string(b))
		w, got, _, err := New(e.c, namespace, "full").Open()
		if err != nil || len(got) != MaxEntries {
			t.Fatalf("Open of a full journal: %d entries, %v", len(got), err)
		}
		var full *FullError
		if _, err := w.Append(journal.Entry{Kind: "intent"}); !errors.As(err, &full) || full.Entries != MaxEntries || !strings.Contains(err.Error(), "default/full") {
			t.Fatalf("append to a full journal: %v, want *FullError naming default/full", err)
		}
		if n := len(e.get(t, "full").Status.Journal); n != MaxEntries {
			t.Errorf("journal after the refused append: %d entries, want %d", n, MaxEntries)
		}
	})
}
