package main

// The benchmarks here run crossfade's controller path inside the test process, so that a
// CPU or heap profile can show where the controller spends time and memory (the
// controller binary has no pprof endpoint): the Watcher's informers over a real
// kube-apiserver, the source, the planner, the zone cache and the Route 53 provider over
// the in-process sandbox's API, wired as cmd/crossfade's controller command wires them
// (keep newController in step with it).
//
// KUBEBENCH_BYSTANDERS=1 gives every Service the annotations kubebench's --bystanders
// does.
//
//	KUBEBENCH_SERVICES=10000 go test -run '^$' -bench . -benchtime 5x \
//	    -cpuprofile /tmp/cpu.out -memprofile /tmp/mem.out ./bench/kubebench/
//	go tool pprof -top -focus 'crossfade-io|client-go' /tmp/cpu.out
//
// The sandbox runs in the same process, so the profiles hold its work too: focus on the
// controller's packages, as above.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// profileBed is a kube-apiserver with KUBEBENCH_SERVICES Services (default 10,000) and a
// sandbox, for one benchmark.
type profileBed struct {
	cluster *kubetest.Cluster
	kube    kubernetes.Interface
	sb      *sandbox.Sandbox
	zone    string
	n       int
}

func newProfileBed(b *testing.B) *profileBed {
	b.Helper()
	n := 10000
	if s := os.Getenv("KUBEBENCH_SERVICES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 || n > maxServices {
			b.Fatalf("KUBEBENCH_SERVICES=%q: want 1..%d", s, maxServices)
		}
	}
	cluster := kubetest.Start(b)
	kube := cluster.Clientset(b)
	sb := sandboxtest.Start(b)
	b.Setenv("AWS_ACCESS_KEY_ID", "kubebench")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "kubebench")
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	pb := &profileBed{cluster: cluster, kube: kube, sb: sb, zone: "profile." + zoneSuffix, n: n}
	if err := ensureNamespace(b.Context(), kube); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	sh := shape{bystanders: os.Getenv("KUBEBENCH_BYSTANDERS") != ""}
	if err := createServices(b.Context(), kube, n, pb.zone, 16, sh); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d Services created in %s", n, time.Since(began).Round(time.Millisecond))
	return pb
}

// newZone creates a fresh zone named pb.zone (the sandbox allows several of one name) and
// returns its id.
func (pb *profileBed) newZone(b *testing.B) string {
	b.Helper()
	z, _, err := pb.sb.Store().CreateZone(pb.zone, fmt.Sprintf("profile-%d", time.Now().UnixNano()), "", false)
	if err != nil {
		b.Fatal(err)
	}
	return z.ID
}

// watch starts a Watcher on Services, as `crossfade controller --source service` does,
// and waits for its first full list.
func (pb *profileBed) watch(b *testing.B) *controller.Watcher {
	b.Helper()
	cfg := pb.cluster.Config()
	cfg.QPS, cfg.Burst = 0, 0 // client-go's defaults, as the controller gets from a kubeconfig
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := controller.NewWatcher(client, dyn, controller.WatchConfig{Sources: []string{controller.SourceService},
		KeepAnnotation: src.ReadsAnnotation})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Run(b.Context()); err != nil {
		b.Fatal(err)
	}
	return w
}

// newController wires a controller over w writing zone zoneID as cmd/crossfade's
// controller command does with --source service --txt-owner-id kubebench
// --domain-filter <zone> and default settings otherwise; incremental sets
// controller.Config.Incremental.
func (pb *profileBed) newController(b *testing.B, ctx context.Context, w *controller.Watcher, zoneID string, incremental bool) *controller.Controller {
	b.Helper()
	filter := endpoint.NewDomainFilter([]string{pb.zone}, nil)
	dns, err := route53.New(ctx, route53.Config{Endpoint: pb.sb.APIURL(), Region: "us-east-1", DomainFilter: filter, ZoneIDs: []string{zoneID}})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(registry.Config{OwnerID: ownerID})
	if err != nil {
		b.Fatal(err)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		b.Fatal(err)
	}
	syncer := &controller.Syncer{Provider: cache.New(dns, cache.Config{Resync: time.Hour}), Registry: reg, Policy: changes.Sync,
		DomainFilter: filter, ManagedTypes: changes.DefaultManagedTypes, Refusals: &controller.Refusals{}}
	ctl, err := controller.New(w, controller.Config{Syncer: syncer, Source: src, DropKinds: []string{"Ingress"}, Incremental: incremental})
	if err != nil {
		b.Fatal(err)
	}
	return ctl
}

// BenchmarkFirstSync measures one reconcile that writes every Service's records into an
// empty zone: reading the informer cache, the source, the plan, listing the zone and the
// change batches (the sandbox's side of them included). The informers' first list is
// not in it.
func BenchmarkFirstSync(b *testing.B) {
	pb := newProfileBed(b)
	w := pb.watch(b)
	ctx := b.Context()
	for b.Loop() {
		ctl := pb.newController(b, ctx, w, pb.newZone(b), false)
		rep, err := ctl.ReconcileOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if got := rep.Zones[0].Written[changes.Create]; got != 2*pb.n {
			b.Fatalf("first sync created %d record sets, want %d", got, 2*pb.n)
		}
	}
	reportHeap(b, w)
}

// BenchmarkReconcileOneChange measures the reconcile that follows one Service's target
// change, once the zone is cached: what a change-to-answer sample costs on top of the
// debounce. "full" re-reads every Service and re-plans the zone (Config.Incremental off,
// as before it existed); "incremental" re-reads the changed Service and re-plans its name.
// Besides wall time it reports the process's CPU time (cpu-ns/op: the sandbox's side of
// the write included, the wait for the loopback HTTP answer not) and the bytes and
// objects allocated during the reconcile (reconcile-B/op, reconcile-allocs/op).
func BenchmarkReconcileOneChange(b *testing.B) {
	pb := newProfileBed(b)
	for _, mode := range []struct {
		name        string
		incremental bool
	}{{"full", false}, {"incremental", true}} {
		b.Run(mode.name, func(b *testing.B) { pb.reconcileOneChange(b, mode.incremental) })
	}
}

// reconcileChangeSeq numbers the Service changes across BenchmarkReconcileOneChange's
// runs, so that each run changes Services to addresses they do not have.
var reconcileChangeSeq int

func (pb *profileBed) reconcileOneChange(b *testing.B, incremental bool) {
	ctx := b.Context()
	w, ctl := pb.synced(b, ctx, incremental)
	drain(w)
	var cpu time.Duration
	var bytes, allocs uint64
	var before, after runtime.MemStats
	for b.Loop() {
		b.StopTimer()
		sample := reconcileChangeSeq
		reconcileChangeSeq++
		i := sample * 7919 % pb.n
		if err := setTarget(ctx, pb.kube, i, changedIP(sample)); err != nil {
			b.Fatal(err)
		}
		select { // the informer has the change
		case <-w.Changed():
		case <-time.After(30 * time.Second):
			b.Fatal("the watcher did not see the change in 30 s")
		}
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime(b)
		b.StartTimer()
		rep, err := ctl.ReconcileOnce(ctx)
		b.StopTimer()
		cpu += cpuTime(b) - cpu0
		runtime.ReadMemStats(&after)
		bytes += after.TotalAlloc - before.TotalAlloc
		allocs += after.Mallocs - before.Mallocs
		if err != nil {
			b.Fatal(err)
		}
		if got := rep.Zones[0].Written[changes.Create]; got == 0 {
			b.Fatalf("the change of svc-%d wrote nothing", i)
		}
		if rep.Incremental != incremental {
			b.Fatalf("the reconcile after the change of svc-%d: incremental %v, want %v", i, rep.Incremental, incremental)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/op")
	b.ReportMetric(float64(bytes)/n, "reconcile-B/op")
	b.ReportMetric(float64(allocs)/n, "reconcile-allocs/op")
	reportHeap(b, w, ctl)
}

// cpuTime is the CPU time the process has used so far, user and system, every thread.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReconcileIdle measures a reconcile with nothing to change (the --interval
// tick), against the cached zone.
func BenchmarkReconcileIdle(b *testing.B) {
	pb := newProfileBed(b)
	ctx := b.Context()
	w, ctl := pb.synced(b, ctx, false)
	for b.Loop() {
		rep, err := ctl.ReconcileOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(rep.Zones[0].Written); n != 0 {
			b.Fatalf("an idle reconcile wrote %v", rep.Zones[0].Written)
		}
	}
	reportHeap(b, w, ctl)
}

// synced is a controller watching the bed's cluster whose first reconcile has written
// the bed's Services into a fresh zone: what the benchmarks of a later reconcile start from.
func (pb *profileBed) synced(b *testing.B, ctx context.Context, incremental bool) (*controller.Watcher, *controller.Controller) {
	b.Helper()
	w := pb.watch(b)
	ctl := pb.newController(b, ctx, w, pb.newZone(b), incremental)
	if _, err := ctl.ReconcileOnce(ctx); err != nil {
		b.Fatalf("first reconcile into zone %s: %v", pb.zone, err)
	}
	return w, ctl
}

// drain empties w's change signal.
func drain(w *controller.Watcher) {
	for {
		select {
		case <-w.Changed():
		default:
			return
		}
	}
}

// reportHeap reports the live heap after a GC, in MiB: the controller's caches and the
// in-process sandbox's zones together. With KUBEBENCH_HEAPPROFILE=DIR it also writes a
// heap profile there while everything is still live (-memprofile is written only after
// every benchmark has ended and let go of its objects).
func reportHeap(b *testing.B, live ...any) {
	b.StopTimer()
	// What the benchmark holds must still be reachable when the heap is measured.
	defer runtime.KeepAlive(live)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
	dir := os.Getenv("KUBEBENCH_HEAPPROFILE")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, b.Name()+".heap")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Logf("heap profile: %s", path)
}
