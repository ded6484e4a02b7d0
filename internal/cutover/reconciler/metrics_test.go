package reconciler

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// cutoverObj is a Cutover as the informer's cache holds it: only what the collector reads.
func cutoverObj(ns, name string, phase v1alpha1.Phase, weights map[string]int64) *v1alpha1.Cutover {
	return &v1alpha1.Cutover{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: v1alpha1.CutoverStatus{Phase: phase, Weights: weights}}
}

// exposition is the text format of the two families for the given sample lines (each
// "name{labels} value"), with their HELP and TYPE lines, as testutil compares it.
func exposition(lines ...string) string {
	c := newCutoverCollector(cache.NewStore(cache.MetaNamespaceKeyFunc), slog.New(slog.DiscardHandler))
	var b strings.Builder
	for _, f := range []struct {
		name string
		d    *prometheus.Desc
	}{{NamePhase, c.phase}, {NameWeight, c.weight}} {
		var samples []string
		for _, l := range lines {
			if strings.HasPrefix(l, f.name+"{") {
				samples = append(samples, l)
			}
		}
		if len(samples) == 0 {
			continue
		}
		// The help is the descriptor's, so that the test compares the series, not the wording.
		help := f.d.String()
		help = help[strings.Index(help, `help: "`)+len(`help: "`):]
		help = help[:strings.Index(help, `"`)]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, help, f.name)
		for _, s := range samples {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// phaseLines are the six phase samples of ns/name, 1 for phase (none when phase is none
// of the six).
func phaseLines(ns, name string, phase v1alpha1.Phase) []string {
	var out []string
	for _, p := range phases {
		v := 0
		if p == phase {
			v = 1
		}
		out = append(out, fmt.Sprintf(`%s{cutover=%q,namespace=%q,phase=%q} %d`, NamePhase, name, ns, p, v))
	}
	return out
}

// weightLine is ns/name's weight sample of cluster.
func weightLine(ns, name, cluster string, w int64) string {
	return fmt.Sprintf(`%s{cluster=%q,cutover=%q,namespace=%q} %d`, NameWeight, cluster, name, ns, w)
}

// TestCutoverCollector: the collector exports, for every Cutover in the cache, its phase
// as 1 and the five other phases as 0 (all six 0 before a status is written) and its
// status.weights by cluster; a Cutover deleted from the cache is gone from the next
// scrape; a series Prometheus would refuse is dropped alone.
func TestCutoverCollector(t *testing.T) {
	for _, tc := range []struct {
		name string
		// objs are added to the cache, then deleted removed from it.
		objs    []*v1alpha1.Cutover
		deleted []string
		want    []string
	}{
		{name: "no cutover, no series"},
		{name: "completed, with its weights",
			objs: []*v1alpha1.Cutover{cutoverObj("shop", "app", v1alpha1.PhaseCompleted, map[string]int64{"blue": 0, "green": 100})},
			want: append(phaseLines("shop", "app", v1alpha1.PhaseCompleted),
				weightLine("shop", "app", "blue", 0), weightLine("shop", "app", "green", 100))},
		{name: "not yet looked at: every phase 0, no weight",
			objs: []*v1alpha1.Cutover{cutoverObj("shop", "app", "", nil)},
			want: phaseLines("shop", "app", "")},
		{name: "a phase this version does not know: every known phase 0",
			objs: []*v1alpha1.Cutover{cutoverObj("shop", "app", "Exploded", map[string]int64{"blue": 100})},
			want: append(phaseLines("shop", "app", ""), weightLine("shop", "app", "blue", 100))},
		{name: "each phase, each cutover",
			objs: []*v1alpha1.Cutover{
				cutoverObj("shop", "pending", v1alpha1.PhasePending, nil),
				cutoverObj("shop", "moving", v1alpha1.PhaseProgressing, map[string]int64{"blue": 90, "green": 10}),
				cutoverObj("shop", "held", v1alpha1.PhasePaused, map[string]int64{"blue": 50, "green": 50}),
				cutoverObj("pay", "back", v1alpha1.PhaseRolledBack, map[string]int64{"east": 100, "west": 0}),
				cutoverObj("pay", "stuck", v1alpha1.PhaseFailed, map[string]int64{"east": 30, "west": 70}),
			},
			want: slices.Concat(phaseLines("shop", "pending", v1alpha1.PhasePending),
				phaseLines("shop", "moving", v1alpha1.PhaseProgressing), phaseLines("shop", "held", v1alpha1.PhasePaused),
				phaseLines("pay", "back", v1alpha1.PhaseRolledBack), phaseLines("pay", "stuck", v1alpha1.PhaseFailed),
				[]string{weightLine("shop", "moving", "blue", 90), weightLine("shop", "moving", "green", 10),
					weightLine("shop", "held", "blue", 50), weightLine("shop", "held", "green", 50),
					weightLine("pay", "back", "east", 100), weightLine("pay", "back", "west", 0),
					weightLine("pay", "stuck", "east", 30), weightLine("pay", "stuck", "west", 70)})},
		{name: "a deleted cutover is gone",
			objs: []*v1alpha1.Cutover{
				cutoverObj("shop", "app", v1alpha1.PhaseCompleted, map[string]int64{"blue": 0, "green": 100}),
				cutoverObj("shop", "web", v1alpha1.PhaseProgressing, map[string]int64{"blue": 50, "green": 50}),
			},
			deleted: []string{"shop/app"},
			want: append(phaseLines("shop", "web", v1alpha1.PhaseProgressing),
				weightLine("shop", "web", "blue", 50), weightLine("shop", "web", "green", 50))},
		{name: "every cutover deleted: no series",
			objs:    []*v1alpha1.Cutover{cutoverObj("shop", "app", v1alpha1.PhaseCompleted, map[string]int64{"blue": 0})},
			deleted: []string{"shop/app"}},
		{name: "a cluster name that is not UTF-8 drops that series alone",
			objs: []*v1alpha1.Cutover{cutoverObj("shop", "app", v1alpha1.PhaseProgressing, map[string]int64{"blue": 60, "gr\xffeen": 40})},
			want: append(phaseLines("shop", "app", v1alpha1.PhaseProgressing), weightLine("shop", "app", "blue", 60))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			for _, o := range tc.objs {
				if err := store.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			for _, key := range tc.deleted {
				obj, ok, err := store.GetByKey(key)
				if err != nil || !ok {
					t.Fatalf("cache lacks %s: %v", key, err)
				}
				if err := store.Delete(obj); err != nil {
					t.Fatal(err)
				}
			}
			c := newCutoverCollector(store, slog.New(slog.DiscardHandler))
			if err := testutil.CollectAndCompare(c, strings.NewReader(exposition(tc.want...)), NamePhase, NameWeight); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRegisterMetrics: with Config.Metrics, the collector is registered and unregistered
// by what registerMetrics returns (so that a second Run on the registry may register
// again); a second registration on the same registry, as two reconcilers in one process
// would make, is an error naming the series, not a panic; without Config.Metrics nothing
// is registered.
func TestRegisterMetrics(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(cutoverObj("shop", "app", v1alpha1.PhaseCompleted, map[string]int64{"green": 100})); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	rec := func(m prometheus.Registerer) *Reconciler {
		return &Reconciler{cfg: Config{Metrics: m}, log: slog.New(slog.DiscardHandler)}
	}
	unregister, err := rec(reg).registerMetrics(store)
	if err != nil {
		t.Fatalf("first registration: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, NamePhase, NameWeight); err != nil || n != len(phases)+1 {
		t.Errorf("registered: %d series (%v), want %d", n, err, len(phases)+1)
	}

	_, err = rec(reg).registerMetrics(store)
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) || !strings.Contains(err.Error(), NamePhase) {
		t.Errorf("second registration on the same registry: %v, want an AlreadyRegisteredError naming %s", err, NamePhase)
	}

	unregister()
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Errorf("after unregister: %d series (%v), want none", n, err)
	}
	again, err := rec(reg).registerMetrics(store)
	if err != nil {
		t.Fatalf("registration after unregister: %v", err)
	}
	again()

	none, err := rec(nil).registerMetrics(store)
	if err != nil {
		t.Fatalf("without Config.Metrics: %v", err)
	}
	none()
}
