package controller_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// kill9Lease is the --cutover-lease-duration of the trials' replicas: short, so that a
// trial waits about 2 s (not the default 15 s) for a standby to take over.
const kill9Lease = 2 * time.Second

// kill9Steps are the trials' plan steps (the to cluster's weight, in percent) and
// kill9Pause their holds: a run takes about 6 s in the controller, whose engine checks
// every 2 s and polls INSYNC every second.
var kill9Steps = []int64{10, 50, 100}

// kill9StepsDoc is kill9Steps as the plan file writes them.
const kill9StepsDoc = "[10, 50, 100]"

const (
	kill9Pause = "1s"
	// kill9Within bounds the random kill delay after the Lease is taken: a little over a
	// whole run, so that most kills land in it and now and then one after its end.
	kill9Within = 7 * time.Second
	// kill9MaxLen bounds the random journal length a trial is killed at: a whole run's
	// journal (start; intent, written, insync, step-passed of each step; done).
	kill9MaxLen = 14
)

// kill9Records are the names the trials take turns on, each published by blue at 100 and
// green at 0 at first; each trial on a name moves it back the other way.
var kill9Records = []string{"app.example.com", "web.example.com", "api.example.com"}

// TestCutoverObjectsKill9 runs two `crossfade controller --cutovers` replicas (distinct
// pod names) at once on a real kube-apiserver and the sandbox, and, trial after trial,
// applies a Cutover (blue → green or green → blue, taking turns over a few names), kills
// the replica holding its Lease with SIGKILL at a random moment (a random delay after the
// Lease is taken, or a random journal length), starts a replacement replica, and requires
// the Cutover to end Completed as if nothing had happened: the zone at the last step's
// weights; every step passed exactly once and in order; every step written once, but the
// step the killed replica held (written, not passed), which the replica that resumes it
// writes again with the same weights; one start, no takeover, drift, rollback or failed
// step; the journal's seq contiguous; and no weights in the zone, at any moment it was
// looked at, nor in any journal entry, but the start's or a plan step's. The resume is
// logged with how long after the kill it came (the Lease's 2 s plus the standby's retry);
// only that it comes is asserted. CROSSFADE_CUTOVER_OBJECT_TRIALS sets the number of
// trials (20; make soak runs more).
func TestCutoverObjectsKill9(t *testing.T) {
	trials := 20
	if v, err := strconv.Atoi(os.Getenv("CROSSFADE_CUTOVER_OBJECT_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	e := startCutoverEnv(t)
	publishMember(t, e.zone.DNS, "api.example.com", "blue", "127.0.0.10", 100)
	publishMember(t, e.zone.DNS, "api.example.com", "green", "127.0.0.20", 0)
	k := &kill9Env{cutoverEnv: e, procs: map[string]*proc{}, dir: t.TempDir()}
	k.start(t)
	k.start(t)

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 29))
	t.Logf("seed %d", seed)
	began := time.Now()
	uses := map[string]int{}
	for i := range trials {
		record := kill9Records[i%len(kill9Records)]
		from, to := "blue", "green"
		if uses[record]%2 == 1 {
			from, to = to, from
		}
		uses[record]++
		k.trial(t, rng, i, record, from, to)
	}
	t.Logf("%d trials in %s", trials, time.Since(began).Round(time.Millisecond))
}

// kill9Env is a cutoverEnv with the controller replicas running on it, by pod name.
type kill9Env struct {
	*cutoverEnv
	procs map[string]*proc
	// started counts the replicas started, to name the next.
	started int
	// dir holds the plan files `cutover release` reads.
	dir string
}

// start starts another replica, crossfade-N, with the trials' short Lease.
func (k *kill9Env) start(t *testing.T) string {
	t.Helper()
	k.started++
	pod := fmt.Sprintf("crossfade-%d", k.started)
	k.procs[pod] = controllertest.Start(t, controllertest.Options{Name: pod, Kubeconfig: k.kc.Kubeconfig, Route53URL: k.zone.SB.APIURL(),
		Args: []string{"--cutovers", "--source=service", "--txt-owner-id=ctl", "--dns-server=" + k.zone.SB.DNSAddr(),
			"--cutover-lease-duration=" + kill9Lease.String()},
		Env: []string{"POD_NAME=" + pod}})
	return pod
}

// stepWeights are the weights of a step moving pct percent from one cluster to the other.
func stepWeights(from, to string, pct int64) map[string]int64 {
	return map[string]int64{from: 100 - pct, to: pct}
}

// renderWeights renders weights as "blue=90 green=10", sorted by cluster.
func renderWeights(w map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		out = append(out, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(out, " ")
}

// trial runs trial i: the Cutover kill9-NN moving record from → to, its runner killed and
// replaced; it checks how the Cutover ended, then releases record for the next trial on
// it.
func (k *kill9Env) trial(t *testing.T, rng *rand.Rand, i int, record, from, to string) {
	t.Helper()
	began := time.Now()
	name := fmt.Sprintf("kill9-%02d", i)
	allowed := map[string]bool{renderWeights(stepWeights(from, to, 0)): true}
	for _, pct := range kill9Steps {
		allowed[renderWeights(stepWeights(from, to, pct))] = true
	}
	watch := k.watchWeights(t, record)
	doc := planDoc(name, record, from, to, kill9StepsDoc, kill9Pause)
	k.applyDoc(t, doc)

	// The replica that takes the Lease is the one killed.
	holder := k.holder(t, name)
	var how string
	if (i/2)%2 == 0 {
		delay := time.Duration(rng.Int64N(int64(kill9Within/time.Millisecond))) * time.Millisecond
		time.Sleep(delay)
		how = fmt.Sprintf("%s after the Lease was taken", delay)
	} else {
		n := 1 + rng.IntN(kill9MaxLen)
		eventually(t, 60*time.Second, fmt.Sprintf("Cutover %s's journal at %d entries", name, n), func() (bool, string) {
			c := k.get(t, name)
			return len(c.Status.Journal) >= n || c.Status.Phase == v1alpha1.PhaseCompleted, shapes(c.Status.Journal)
		})
		how = fmt.Sprintf("at journal length %d", n)
	}
	killed := time.Now()
	k.procs[holder].Kill()
	delete(k.procs, holder)
	atKill := k.get(t, name)
	replacement := k.start(t)
	t.Logf("trial %d: %s %s → %s: %s killed %s (%s); %s started", i, name, from, to, holder, how, shapes(atKill.Status.Journal), replacement)

	c := k.waitPhase(t, name, v1alpha1.PhaseCompleted, 90*time.Second)
	ended := time.Now()
	seen := watch()
	if err := kill9Check(c, holder, from, to, allowed, seen); err != nil {
		t.Fatalf("trial %d (%s, %s → %s, %s killed %s): %v\njournal: %s", i, name, from, to, holder, how, err, shapes(c.Status.Journal))
	}
	if w := k.weights(t, record); renderWeights(w) != renderWeights(stepWeights(from, to, 100)) {
		t.Fatalf("trial %d: %s weights after Cutover %s completed: %s, want the last step's, %s", i, record, name, renderWeights(w), renderWeights(stepWeights(from, to, 100)))
	}

	// A Cutover the killed replica started and did not end is resumed by another, which
	// says so in the journal. (Its entries are read from the final journal, By it: a
	// status write it sent just before the kill may land after atKill was read.)
	resume := "none needed: the killed replica had not started it, or had ended it"
	if mine := byReplica(c.Status.Journal, holder); slices.Contains(mine, "start") && !slices.Contains(mine, "done") {
		r, err := firstResumed(c.Status.Journal, holder)
		if err != nil {
			t.Fatalf("trial %d (%s, %s killed %s): %v: %s", i, name, holder, how, err, shapes(c.Status.Journal))
		}
		resume = fmt.Sprintf("%s resumed it %s after the kill (Lease %s)", strings.TrimPrefix(r.By, "controller/"), r.Time.Sub(killed).Round(time.Millisecond), kill9Lease)
	}
	t.Logf("trial %d: %s → %s completed %s after the kill, %s in all; %s; zone seen at %s; journal %s", i, from, to,
		ended.Sub(killed).Round(time.Millisecond), ended.Sub(began).Round(time.Millisecond), resume, strings.Join(seen, ", "), shapes(c.Status.Journal))

	// The next Cutover of record takes it back: the completed one's authority record goes
	// first, as `cutover release --force` takes it (the journal is in status, not here).
	file := filepath.Join(k.dir, name+".yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := k.cli(t, "cutover", "release", file, "--force", "--state-dir", k.dir, "--aws-endpoint", k.zone.SB.APIURL(), "--aws-region", "us-east-1"); code != 0 {
		t.Fatalf("trial %d: cutover release --force of Cutover %s: exit %d:\n%s", i, name, code, out)
	}
	if w := k.weights(t, record); renderWeights(w) != renderWeights(stepWeights(from, to, 100)) {
		t.Fatalf("trial %d: %s weights after cutover release of Cutover %s: %s, want the last step's still, %s", i, record, name, renderWeights(w), renderWeights(stepWeights(from, to, 100)))
	}
}

// holder waits until a running replica holds the Cutover name's Lease, checks that the
// Lease lasts --cutover-lease-duration, and returns the replica's pod name.
func (k *kill9Env) holder(t *testing.T, name string) string {
	t.Helper()
	var pod string
	eventually(t, 60*time.Second, fmt.Sprintf("the Lease of Cutover %s held by a replica", name), func() (bool, string) {
		l, err := k.c.Leases.Leases("default").Get(t.Context(), statusstore.LeaseName(name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "no Lease"
		}
		if err != nil {
			t.Fatalf("read the Lease of Cutover %s: %v", name, err)
		}
		if l.Spec.HolderIdentity == nil || k.procs[*l.Spec.HolderIdentity] == nil {
			return false, fmt.Sprintf("held by %v, not by a running replica", l.Spec.HolderIdentity)
		}
		if d := l.Spec.LeaseDurationSeconds; d == nil || time.Duration(*d)*time.Second != kill9Lease {
			got := "no duration"
			if d != nil {
				got = fmt.Sprintf("%d s", *d)
			}
			t.Fatalf("the Lease of Cutover %s lasts %s, want --cutover-lease-duration's %s", name, got, kill9Lease)
		}
		pod = *l.Spec.HolderIdentity
		return true, ""
	})
	return pod
}

// byReplica are the kinds of the journal entries the replica pod wrote.
func byReplica(journal []v1alpha1.JournalEntry, pod string) []string {
	var out []string
	for _, je := range journal {
		if je.By == "controller/"+pod {
			out = append(out, je.Kind)
		}
	}
	return out
}

// firstResumed returns the first resumed entry of journal; it must be another replica's
// than the killed one's.
func firstResumed(journal []v1alpha1.JournalEntry, killed string) (v1alpha1.JournalEntry, error) {
	for _, je := range journal {
		if je.Kind != "resumed" {
			continue
		}
		if je.By == "controller/"+killed {
			return je, fmt.Errorf("seq %d: resumed by %s, the replica killed", je.Seq, je.By)
		}
		return je, nil
	}
	return v1alpha1.JournalEntry{}, fmt.Errorf("no resumed entry: no other replica continued the journal of %s", killed)
}

// kill9Check checks a trial's Cutover c, Completed after the replica killed was killed:
// see TestCutoverObjectsKill9. allowed
// are the rendered weights of the start and of each step; seen are the weights the zone
// was seen at meanwhile.
func kill9Check(c *v1alpha1.Cutover, killed, from, to string, allowed map[string]bool, seen []string) error {
	j := c.Status.Journal
	for i, je := range j {
		if je.Seq != i+1 {
			return fmt.Errorf("status.journal[%d] has seq %d, want %d: an entry lost or written twice", i, je.Seq, i+1)
		}
		switch je.Kind {
		case "takeover", "drift", "rollback", "step-failed":
			return fmt.Errorf("seq %d: a %s entry in a trial that should complete: %+v", je.Seq, je.Kind, je)
		}
		if len(je.Weights) > 0 && !allowed[renderWeights(je.Weights)] {
			return fmt.Errorf("seq %d %s/%d: weights %s, neither the start's nor a step's", je.Seq, je.Kind, je.Step, renderWeights(je.Weights))
		}
	}
	for _, w := range seen {
		if !allowed[w] {
			return fmt.Errorf("the zone held %s, neither the start's nor a step's weights", w)
		}
	}
	if n := counts(j, "start")[-1]; n != 1 {
		return fmt.Errorf("%d start entries, want 1", n)
	}
	var passed []int
	for _, je := range j {
		if je.Kind == "step-passed" {
			passed = append(passed, je.Step)
		}
	}
	if want := []int{0, 1, 2}; !slices.Equal(passed, want) {
		return fmt.Errorf("steps passed %v, want each of %v once, in order (none skipped)", passed, want)
	}
	// The step the killed replica held: the last it journaled as written without
	// journaling it passed. Read from the final journal (the killed replica's entries are
	// those By it), not from atKill: a status write it sent just before the kill may land
	// after atKill was read.
	by := "controller/" + killed
	held := -1
	for _, je := range j {
		switch {
		case je.By != by:
		case je.Kind == "written" && je.Step >= 0:
			held = je.Step
		case je.Kind == "step-passed" && je.Step == held:
			held = -1
		}
	}
	// Decision: the replica that resumes writes the held step again, with the same weights
	// (it cannot know whether the killed replica's write landed, and a Route 53 UPSERT of
	// the weights already there moves no traffic); every other step is written once.
	written := map[int][]string{}
	for _, je := range j {
		if je.Kind == "written" && je.Step >= 0 {
			written[je.Step] = append(written[je.Step], renderWeights(je.Weights))
		}
	}
	for step, pct := range kill9Steps {
		w := renderWeights(stepWeights(from, to, pct))
		want := []string{w}
		if step == held {
			want = []string{w, w}
		}
		if !slices.Equal(written[step], want) {
			return fmt.Errorf("step %d written %q, want %q: once, or twice with the same weights when it is the step %s held at the kill (step %d; the resume writes it again, which moves no traffic)",
				step, written[step], want, killed, held)
		}
	}
	if got := renderWeights(c.Status.Weights); got != renderWeights(stepWeights(from, to, 100)) {
		return fmt.Errorf("status.weights %s, want the last step's", got)
	}
	return nil
}

// watchWeights samples the weights of record's members in the sandbox's store every
// millisecond, until the returned function is called, which returns every distinct
// state seen. The sandbox keeps no history of change batches; its store publishes each
// batch whole, so every sample is a state that DNS queries were answered from (one
// lasting under a millisecond may be missed: the journal's written entries, checked too,
// have every write's weights).
func (k *kill9Env) watchWeights(t *testing.T, record string) func() []string {
	t.Helper()
	st := k.zone.SB.Store()
	var zoneID string
	for _, z := range st.Zones() {
		if strings.TrimSuffix(z.Name, ".") == "example.com" {
			zoneID = z.ID
		}
	}
	if zoneID == "" {
		t.Fatal("sandbox: no zone example.com")
	}
	ctx, cancel := context.WithCancel(t.Context())
	seen := map[string]bool{}
	var order []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			w := map[string]int64{}
			if n := st.LookupIn(zoneID, zones.CanonicalName(record)); n != nil {
				for _, s := range n.Sets {
					if s.Type == "A" && s.Weight != nil {
						w[s.SetIdentifier] = *s.Weight
					}
				}
			}
			if r := renderWeights(w); !seen[r] {
				seen[r] = true
				order = append(order, r)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop := func() []string {
		once.Do(func() { cancel(); wg.Wait() })
		return order
	}
	t.Cleanup(func() { stop() })
	return stop
}
