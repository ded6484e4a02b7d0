package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// bed is what every tool runs against: one kube-apiserver (with its etcd) and one sandbox,
// both on loopback.
type bed struct {
	sb      *sandbox.Sandbox
	cluster *kubetest.Cluster
	kube    kubernetes.Interface
}

// startBed starts the sandbox in process and the API server as processes, with their
// files under dir. A failed start leaves nothing running.
func startBed(ctx context.Context, dir string, log *slog.Logger) (_ *bed, err error) {
	sb, err := sandbox.Start(ctx, sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer func() {
		if err != nil {
			_ = sb.Close()
		}
	}()
	began := time.Now()
	cluster, err := kubetest.Launch(ctx, filepath.Join(dir, "kube"))
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	defer func() {
		if err != nil {
			_ = cluster.Stop()
		}
	}()
	log.Info("kube-apiserver ready", "url", cluster.URL, "took", time.Since(began).Round(time.Millisecond),
		"sandbox_api", sb.APIURL(), "sandbox_dns", sb.DNSAddr())
	// Config has no client-side rate limit: the fixtures are created at full speed.
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if err := ensureNamespace(ctx, kube); err != nil {
		return nil, err
	}
	return &bed{sb: sb, cluster: cluster, kube: kube}, nil
}

// close stops the API server and the sandbox.
func (b *bed) close(log *slog.Logger) {
	if err := b.cluster.Stop(); err != nil {
		log.Warn("stop kube-apiserver", "err", err)
	}
	if err := b.sb.Close(); err != nil {
		log.Warn("stop sandbox", "err", err)
	}
}

// result is what one tool measured. A zero duration or count with a non-nil err means the
// step was not reached.
type result struct {
	tool     tool
	scenario string
	version  string
	// zoneID is the sandbox's ID of the tool's zone, once created.
	zoneID string
	// create is how long creating the Services took (before the tool started).
	create time.Duration
	// synced says the first sync completed; firstSync is from process start to every
	// record in the zone, syncCalls the Route 53 calls meanwhile, syncCPU the tool's CPU
	// time then, records the record sets in the zone then.
	synced    bool
	firstSync time.Duration
	syncCalls callCounts
	syncCPU   time.Duration
	records   int
	// idle is the window measured (0: not reached); idleCalls the calls in it. In the
	// cluster scenario it is the --cluster-hold window.
	idle      time.Duration
	idleCalls callCounts
	// samples are the change-to-answer times measured; missed counts the changes not
	// answered within --sample-timeout.
	samples []time.Duration
	missed  int
	// peakRSS is VmHWM in bytes at the end; rssAnon and rssFile split the RSS at the end
	// into heap-like memory and mapped files (the binary's pages); cpu is the tool's CPU
	// time at the end.
	peakRSS, rssAnon, rssFile uint64
	cpu                       time.Duration
	err                       error
}

// measure runs one tool through every measurement of the scenario. It always stops the
// tool, deletes the Services and removes the tool's zone before it returns; the error, if
// any, is in the result.
func (b *bed) measure(ctx context.Context, o options, scenario string, t tool, logPath string, log *slog.Logger) *result {
	r := &result{tool: t, scenario: scenario, version: t.version(ctx, o)}
	r.err = b.measureInto(ctx, o, scenario, t, logPath, log, r)
	// The next tool starts on its own Services only. After Ctrl-C there is no next
	// tool, and the API server goes with the run.
	if ctx.Err() == nil {
		if err := deleteServices(ctx, b.kube, o.services, o.workers); err != nil {
			r.err = errors.Join(r.err, err)
		}
	}
	// The next scenario gives this tool a zone of the same name again: with two, the tool
	// could find its records in the old one and never write the new one.
	if r.zoneID != "" {
		if err := dropZone(b.sb.Store(), r.zoneID); err != nil {
			r.err = errors.Join(r.err, err)
		}
	}
	return r
}

func (b *bed) measureInto(ctx context.Context, o options, scenario string, t tool, logPath string, log *slog.Logger, r *result) (err error) {
	store := b.sb.Store()
	z, _, err := store.CreateZone(t.zone(), fmt.Sprintf("kubebench-%s-%s-%d", scenario, t.name, time.Now().UnixNano()), "kubebench "+t.title, false)
	if err != nil {
		return fmt.Errorf("create zone %s: %w", t.zone(), err)
	}
	r.zoneID = z.ID
	// The cluster scenario measures what the Pods cost: the first sync and the memory.
	// Change-to-answer and the idle calls do not depend on them; its hold window only
	// lets each tool run one periodic sync before its peak RSS is read.
	idle, samples := o.idle, t.samples
	if scenario == scenarioCluster {
		idle, samples = o.clusterHold, 0
	}
	began := time.Now()
	if err := createServices(ctx, b.kube, o.services, t.zone(), o.workers, shape{selector: scenario == scenarioCluster, bystanders: o.bystanders}); err != nil {
		return err
	}
	r.create = time.Since(began)
	log.Info("services created", "tool", t.title, "services", o.services, "took", r.create.Round(time.Millisecond))

	callsBefore, err := readCalls(ctx, b.sb.APIURL())
	if err != nil {
		return err
	}
	args, env := t.command(o, b.cluster.Kubeconfig, b.sb.APIURL())
	started := time.Now()
	c, err := startChild(t.title, logPath, env, args...)
	if err != nil {
		return err
	}
	defer stopChildInto(c, &err)
	pid := c.Pid()

	// 1. First sync: from process start until every record is in the zone.
	if err := waitConverged(ctx, c, store, z.ID, z.Name, o.services, o.syncTimeout); err != nil {
		return err
	}
	r.firstSync = time.Since(started)
	r.synced = true
	r.syncCPU, _ = child.CPUTime(pid)
	if zz, err := store.Zone(z.ID); err == nil {
		r.records = zz.RecordCount
	}
	callsSynced, err := readCalls(ctx, b.sb.APIURL())
	if err != nil {
		return err
	}
	r.syncCalls = callsSynced.since(callsBefore)
	log.Info("first sync", "tool", t.title, "took", r.firstSync.Round(time.Millisecond), "calls", r.syncCalls.total(),
		"cpu", r.syncCPU, "record_sets", r.records)

	// 2. Idle: nothing changes; count the Route 53 calls.
	if err := sleep(ctx, o.settle); err != nil {
		return err
	}
	if idle > 0 {
		idleBefore, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return err
		}
		log.Info("idle window", "tool", t.title, "length", idle)
		if err := sleep(ctx, idle); err != nil {
			return err
		}
		idleAfter, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return err
		}
		if c.Exited() {
			return c.ExitError()
		}
		r.idle, r.idleCalls = idle, idleAfter.since(idleBefore)
		log.Info("idle calls", "tool", t.title, "calls", r.idleCalls.total(), "by_operation", r.idleCalls.String())
	}

	// 3. Change to answer: one Service's target at a time, spread over the Services.
	if samples > 0 {
		log.Info("change-to-answer samples", "tool", t.title, "samples", samples)
	}
	// Every tool gets the same Services changed, in the same order.
	pick := rand.New(rand.NewPCG(o.seed, 0))
	gaps := rand.New(rand.NewPCG(o.seed, 1))
	for s := range samples {
		i := pick.IntN(o.services)
		ip := changedIP(s)
		d, err := b.changeToAnswer(ctx, o, i, hostname(i, z.Name), ip)
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case err != nil:
			r.missed++
			log.Warn("sample not answered", "tool", t.title, "sample", s, "service", serviceName(i), "err", err)
			if c.Exited() {
				return c.ExitError()
			}
		default:
			r.samples = append(r.samples, d)
			log.Debug("sample", "tool", t.title, "sample", s, "service", serviceName(i), "took", d)
		}
		gap := sampleGap(o.sampleGap, t.cycle, gaps)
		if err := sleep(ctx, gap); err != nil {
			return err
		}
	}
	if p50, ok := percentile(r.samples, 50); ok {
		p99, _ := percentile(r.samples, 99)
		log.Info("change to answer", "tool", t.title, "samples", len(r.samples), "p50", p50, "p99", p99, "missed", r.missed)
	}

	// 4. Peak memory and CPU over the whole run, read before the stop.
	mem, err := child.ReadMemory(pid)
	if err != nil {
		return fmt.Errorf("%s: %w", t.title, err)
	}
	r.peakRSS, r.rssAnon, r.rssFile = mem.Peak, mem.Anon, mem.File
	r.cpu, _ = child.CPUTime(pid)
	if r.missed > 0 {
		return fmt.Errorf("%d of %d change-to-answer samples not answered within %s", r.missed, samples, o.sampleTimeout)
	}
	return nil
}

// waitConverged waits until zone holds every one of n Services' records (read from the
// store in process: polling costs no API call), c exits, or timeout passes.
func waitConverged(ctx context.Context, c *child.Process, store *zones.Store, zoneID, zoneName string, n int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, err := converged(store, zoneID, zoneName, n)
		if err != nil || ok {
			return err
		}
		if c.Exited() {
			return c.ExitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("first sync: not every record in zone %s after %s: %w", zoneName, timeout, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// sampleGap is the pause before the next change: base, plus a random part uniform over
// the tool's cycle (at least base), so that the change lands at a random point of it.
// The answer to the last change came right after the tool's last sync; with a fixed gap,
// every change of a periodic tool would land just after a sync and wait a whole interval.
func sampleGap(base, cycle time.Duration, rng *rand.Rand) time.Duration {
	span := max(base, cycle)
	if span <= 0 {
		return base
	}
	return base + time.Duration(rng.Int64N(int64(span)))
}

// changeToAnswer sets the i-th Service's target to ip and returns the time from just
// before the change request until the DNS server answers name with ip.
func (b *bed) changeToAnswer(ctx context.Context, o options, i int, name, ip string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.sampleTimeout)
	defer cancel()
	start := time.Now()
	if err := setTarget(ctx, b.kube, i, ip); err != nil {
		return 0, err
	}
	at, err := waitAnswer(ctx, b.sb.DNSAddr(), name, ip)
	if err != nil {
		return 0, err
	}
	return at.Sub(start), nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// dropZone empties the zone in the sandbox's store (in process: no API call is counted)
// and deletes it.
func dropZone(store *zones.Store, id string) error {
	z, err := store.Zone(id)
	if err != nil {
		return fmt.Errorf("drop zone %s: %w", id, err)
	}
	apex := zones.CanonicalName(z.Name)
	var dels []zones.Change
	var next *zones.RRSet
	for {
		var p zones.Page
		if next == nil {
			p, err = store.ListRecords(id, "", "", "", 1000)
		} else {
			p, err = store.ListRecords(id, next.Name, next.Type, next.SetIdentifier, 1000)
		}
		if err != nil {
			return fmt.Errorf("drop zone %s: list: %w", z.Name, err)
		}
		for _, set := range p.Sets {
			if set.Name == apex && (set.Type == "SOA" || set.Type == "NS") && set.SetIdentifier == "" {
				continue
			}
			dels = append(dels, zones.Change{Action: zones.Delete, Set: *set})
		}
		if next = p.Next; next == nil {
			break
		}
	}
	// Batches within Route 53's limits on records and characters, which the store keeps.
	for len(dels) > 0 {
		n, records, chars := 0, 0, 0
		for ; n < len(dels); n++ {
			set := dels[n].Set
			size := 0
			for _, v := range set.Records {
				size += len(v)
			}
			if n > 0 && (records+max(len(set.Records), 1) > zones.MaxRecordsPerBatch || chars+size > zones.MaxValueCharsPerBatch) {
				break
			}
			records, chars = records+max(len(set.Records), 1), chars+size
		}
		if _, err := store.Apply(id, "kubebench: drop the zone", dels[:n]); err != nil {
			return fmt.Errorf("drop zone %s: delete records: %w", z.Name, err)
		}
		dels = dels[n:]
	}
	if _, err := store.DeleteZone(id); err != nil {
		return fmt.Errorf("drop zone %s: %w", z.Name, err)
	}
	return nil
}
