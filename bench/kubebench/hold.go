package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/bench/internal/report"
	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// The hold scenario (issue 25, bullet 7): one weighted member published by `crossfade
// controller`, and a cutover taking hold of its name again and again. It measures how long
// the controller takes to confirm the hold in the member's ownership record, at its
// default --hold-probe-interval and --resync-interval, and what that costs in Route 53
// API calls. crossfade only: external-dns has no such confirmation.
const (
	// holdServiceName is the one Service of the scenario, in namespace.
	holdServiceName = "hold-app"
	// holdSetID is its set identifier, and holdWeight its weight.
	holdSetID  = "blue"
	holdWeight = "100"
	// holdIP is its load balancer's address (TEST-NET-1).
	holdIP = "192.0.2.10"
	// holdCutover names the cutover whose authority record the scenario writes.
	holdCutover = "kubebench"
	// holdPollEvery is how often the zone is read (in process: no API call) while
	// waiting for the controller; the waits last minutes.
	holdPollEvery = 100 * time.Millisecond
	// goalHoldConfirm is issue 25's bound on a confirmation.
	goalHoldConfirm = 5 * time.Minute
	// probesMetric is the controller's counter of hold probes, by result.
	probesMetric = "crossfade_hold_probes_total"
)

// holdName is the member's record name in zone.
func holdName(zone string) string { return "app." + zone }

// holdRun is what the hold scenario measured.
type holdRun struct {
	tool    tool
	version string
	// interval is the controller's --hold-probe-interval as run (its default when the
	// flag is not passed).
	interval time.Duration
	// synced says the member was published; firstSync is from the process start.
	synced    bool
	firstSync time.Duration
	samples   []holdSample
	// missed counts the holds not confirmed within --hold-timeout.
	missed int
	// idle is the time spent in the pauses before each hold (no hold, the name probed),
	// idleCalls the Route 53 calls in them.
	idle      time.Duration
	idleCalls callCounts
	// held and heldCalls are the same for the pauses before each release (the hold
	// confirmed).
	held      time.Duration
	heldCalls callCounts
	// probes are the controller's hold probes during the samples by result; nil when its
	// metrics could not be read.
	probes callCounts
	err    error
}

// holdSample is one hold: the time from writing its authority record to the
// confirmation in the member's ownership record, and from deleting it to the
// confirmation's removal (0: not seen), with the Route 53 calls of each wait (up to
// --settle after what it waited for).
type holdSample struct {
	token                   string
	confirm, drop           time.Duration
	confirmCalls, dropCalls callCounts
	// held is the pause between the confirmation's --settle and the delete (the hold
	// confirmed, nothing changing), heldCalls the Route 53 calls in it.
	held      time.Duration
	heldCalls callCounts
}

// latencies returns one latency of every sample that measured it (of picks it out;
// zero is not measured).
func (h *holdRun) latencies(of func(holdSample) time.Duration) []time.Duration {
	var out []time.Duration
	for _, s := range h.samples {
		if d := of(s); d > 0 {
			out = append(out, d)
		}
	}
	return out
}

// calls sums the Route 53 calls of every sample's waits: confirm (true) or drop (false).
func (h *holdRun) calls(confirm bool) callCounts {
	out := callCounts{}
	for _, s := range h.samples {
		c := s.dropCalls
		if confirm {
			c = s.confirmCalls
		}
		for k, v := range c {
			out[k] += v
		}
	}
	return out
}

// measureHold runs the hold scenario with crossfade tool t. It always stops the
// controller, deletes the Service and removes the zone before it returns; the error, if
// any, is in the result.
func (b *bed) measureHold(ctx context.Context, o options, t tool, logPath string, log *slog.Logger) *holdRun {
	h := &holdRun{tool: t, version: t.version(ctx, o), interval: o.holdProbe}
	if h.interval == 0 {
		h.interval = controller.DefaultHoldProbe
	}
	store := b.sb.Store()
	z, _, err := store.CreateZone(t.zone(), fmt.Sprintf("kubebench-%s-%s-%d", scenarioHold, t.name, time.Now().UnixNano()), "kubebench "+t.title, false)
	if err != nil {
		h.err = fmt.Errorf("create zone %s: %w", t.zone(), err)
		return h
	}
	h.err = b.measureHoldInto(ctx, o, t, z, logPath, log, h)
	if ctx.Err() == nil {
		err := b.kube.CoreV1().Services(namespace).Delete(ctx, holdServiceName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			h.err = errors.Join(h.err, fmt.Errorf("delete service %s/%s: %w", namespace, holdServiceName, err))
		}
	}
	if err := dropZone(store, z.ID); err != nil {
		h.err = errors.Join(h.err, err)
	}
	return h
}

func (b *bed) measureHoldInto(ctx context.Context, o options, t tool, z zones.Zone, logPath string, log *slog.Logger, h *holdRun) (err error) {
	store := b.sb.Store()
	name := holdName(z.Name)
	svc, err := b.kube.CoreV1().Services(namespace).Create(ctx, holdService(name), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create service %s/%s: %w", namespace, holdServiceName, err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: holdIP}}
	if _, err := b.kube.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("service %s/%s: set load-balancer status: %w", namespace, holdServiceName, err)
	}

	args, env := t.command(o, b.cluster.Kubeconfig, b.sb.APIURL())
	// The sandbox's NS records name real AWS name servers, which do not serve its zones:
	// the controller asks the sandbox's DNS server instead. Every other setting, the probe
	// interval and the zone cache's resync included, is the controller's default.
	args = append(args, "--hold-probe-servers", b.sb.DNSAddr())
	if o.holdProbe > 0 {
		args = append(args, "--hold-probe-interval", o.holdProbe.String())
	}
	started := time.Now()
	c, err := startChild(t.title, logPath, env, args...)
	if err != nil {
		return err
	}
	defer stopChildInto(c, &err)

	// 1. The member and its ownership record published.
	if _, err := waitZone(ctx, store, z.ID, c, o.syncTimeout, func(sets []*zones.RRSet) bool {
		return hasWeightedA(sets, name, holdSetID, holdIP) && len(memberConfirmations(sets, holdSetID, holdResource())) > 0
	}); err != nil {
		return fmt.Errorf("publish %s A [%s]: %w", name, holdSetID, err)
	}
	h.synced, h.firstSync = true, time.Since(started)
	log.Info("member published", "tool", t.title, "name", name, "took", h.firstSync.Round(time.Millisecond))
	if err := sleep(ctx, o.settle); err != nil {
		return err
	}
	metricsURL := ""
	logText, _ := os.ReadFile(logPath)
	if addr, ok := metricsAddr(string(logText)); ok {
		metricsURL = "http://" + addr + "/metrics"
	} else {
		log.Warn("no metrics address in the controller's log: probes not counted", "tool", t.title)
	}
	probesBefore := readProbes(ctx, metricsURL)

	// 2. The holds: a pause, then an authority record written as a cutover writes it;
	// the controller's confirmation; the record deleted; the confirmation gone.
	rng := rand.New(rand.NewPCG(o.seed, 2))
	for s := range o.holdSamples {
		// A pause uniform over the probe interval, so that each hold lands at a random
		// point of the prober's cycle (the last release was seen just after a probe).
		gap := sampleGap(o.sampleGap, h.interval, rng)
		before, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return err
		}
		log.Info("hold sample", "tool", t.title, "sample", s, "pause", gap.Round(time.Millisecond))
		if err := sleep(ctx, gap); err != nil {
			return err
		}
		after, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return err
		}
		h.idle += gap
		h.idleCalls = h.idleCalls.plus(after.since(before))

		token := holdToken(s, rng)
		sample, err := b.holdSample(ctx, o, z, c, token, sampleGap(o.sampleGap, h.interval, rng))
		h.samples = append(h.samples, sample)
		h.held += sample.held
		h.heldCalls = h.heldCalls.plus(sample.heldCalls)
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case err != nil && sample.confirm == 0 && sample.drop > 0:
			// Not confirmed in time, but released: the next sample starts clean.
			h.missed++
			log.Warn("hold not confirmed", "tool", t.title, "sample", s, "err", err)
		case err != nil:
			return fmt.Errorf("hold sample %d: %w", s, err)
		default:
			log.Info("hold confirmed", "tool", t.title, "sample", s, "confirm", sample.confirm.Round(time.Millisecond),
				"drop", sample.drop.Round(time.Millisecond), "calls", sample.confirmCalls.String())
		}
	}
	if probesBefore != nil {
		if after := readProbes(ctx, metricsURL); after != nil {
			h.probes = after.since(probesBefore)
		}
	}
	if h.missed > 0 {
		return fmt.Errorf("%d of %d holds not confirmed within %s", h.missed, o.holdSamples, o.holdTimeout)
	}
	return nil
}

// holdSample writes one hold with token, waits for its confirmation, pauses for pause
// (so that the release, too, lands at a random point of the prober's cycle), deletes it
// and waits for the confirmation to go. A hold not confirmed in time is deleted all the
// same: the sample then has drop but no confirm, and the error says why.
func (b *bed) holdSample(ctx context.Context, o options, z zones.Zone, c *child.Process, token string, pause time.Duration) (holdSample, error) {
	store := b.sb.Store()
	s := holdSample{token: token}
	set := authoritySet(registry.Authority{Name: holdName(z.Name), Cutover: holdCutover, Types: []string{endpoint.TypeA},
		Runner: registry.Runner{Token: token, Host: "kubebench"}})
	resource := holdResource()

	// wait applies change to the zone, as a cutover's ChangeResourceRecordSets would
	// (in process: no API call is counted), waits until done holds, and returns the time
	// from the change to then and the Route 53 calls up to --settle later.
	wait := func(action zones.Action, done func([]*zones.RRSet) bool) (time.Duration, callCounts, error) {
		before, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return 0, nil, err
		}
		start := time.Now()
		if _, err := store.Apply(z.ID, "kubebench: a cutover's hold", []zones.Change{{Action: action, Set: set}}); err != nil {
			return 0, nil, fmt.Errorf("%s %s TXT: %w", action, set.Name, err)
		}
		at, werr := waitZone(ctx, store, z.ID, c, o.holdTimeout, done)
		if err := sleep(ctx, o.settle); err != nil {
			return 0, nil, err
		}
		after, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return 0, nil, err
		}
		if werr != nil {
			return 0, after.since(before), werr
		}
		return at.Sub(start), after.since(before), nil
	}

	var confirmErr error
	s.confirm, s.confirmCalls, confirmErr = wait(zones.Create, func(sets []*zones.RRSet) bool {
		return allEqual(memberConfirmations(sets, holdSetID, resource), token)
	})
	if confirmErr != nil && ctx.Err() != nil {
		return s, confirmErr
	}
	if confirmErr == nil {
		before, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return s, err
		}
		if err := sleep(ctx, pause); err != nil {
			return s, err
		}
		after, err := readCalls(ctx, b.sb.APIURL())
		if err != nil {
			return s, err
		}
		s.held, s.heldCalls = pause, after.since(before)
	}
	var err error
	s.drop, s.dropCalls, err = wait(zones.Delete, func(sets []*zones.RRSet) bool {
		return allEqual(memberConfirmations(sets, holdSetID, resource), "")
	})
	if confirmErr != nil {
		return s, fmt.Errorf("confirmation of hold %s: %w", token, confirmErr)
	}
	if err != nil {
		return s, fmt.Errorf("release of hold %s: %w", token, err)
	}
	return s, nil
}

// waitZone reads the zone every holdPollEvery until done holds for its record sets, and
// returns when it first did. It gives up after timeout, or when the controller exits.
func waitZone(ctx context.Context, store *zones.Store, zoneID string, c *child.Process, timeout time.Duration, done func([]*zones.RRSet) bool) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(holdPollEvery)
	defer tick.Stop()
	for {
		sets, err := zoneSets(store, zoneID)
		if err != nil {
			return time.Time{}, err
		}
		if done(sets) {
			return time.Now(), nil
		}
		if c.Exited() {
			return time.Time{}, c.ExitError()
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("not seen within %s: %w", timeout, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// zoneSets lists every record set of the zone from the store (in process: no API call).
func zoneSets(store *zones.Store, zoneID string) ([]*zones.RRSet, error) {
	var out []*zones.RRSet
	var next *zones.RRSet
	for {
		var p zones.Page
		var err error
		if next == nil {
			p, err = store.ListRecords(zoneID, "", "", "", 1000)
		} else {
			p, err = store.ListRecords(zoneID, next.Name, next.Type, next.SetIdentifier, 1000)
		}
		if err != nil {
			return nil, fmt.Errorf("list zone %s: %w", zoneID, err)
		}
		out = append(out, p.Sets...)
		if next = p.Next; next == nil {
			return out, nil
		}
	}
}

// holdService is the scenario's weighted LoadBalancer Service, published at name.
func holdService(name string) *corev1.Service {
	no := false
	const alpha = "external-dns.alpha.kubernetes.io/"
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: holdServiceName, Namespace: namespace, Annotations: map[string]string{
			hostnameAnnotation: name, alpha + "set-identifier": holdSetID, alpha + "aws-weight": holdWeight, alpha + "ttl": "60",
		}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &no,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
}

// holdResource is the resource label of the Service's ownership records.
func holdResource() string { return "service/" + namespace + "/" + holdServiceName }

// holdToken is the runner token of the s-th hold: fresh per sample, as per run of a
// cutover, and safe in a record's payload.
func holdToken(s int, rng *rand.Rand) string {
	return fmt.Sprintf("kubebench-%d-%08x", s, rng.Uint32())
}

// authoritySet is the authority record a cutover writes for a, as the sandbox stores it.
func authoritySet(a registry.Authority) zones.RRSet {
	r := a.Record()
	ttl := r.TTL.Seconds()
	return zones.RRSet{Name: zones.CanonicalName(r.Name), Type: r.Type, TTL: &ttl, Records: slices.Clone(r.Targets)}
}

// hasWeightedA reports whether sets hold name's A record set with set identifier setID
// answering ip.
func hasWeightedA(sets []*zones.RRSet, name, setID, ip string) bool {
	name = zones.CanonicalName(name)
	return slices.ContainsFunc(sets, func(s *zones.RRSet) bool {
		return s.Name == name && s.Type == "A" && s.SetIdentifier == setID && slices.Contains(s.Records, ip)
	})
}

// memberConfirmations returns, for each ownership record of the member (TXT record sets
// with set identifier setID whose payload names ownerID and resource), the hold it
// confirms (endpoint.ConfirmsHoldLabel), "" when none.
func memberConfirmations(sets []*zones.RRSet, setID, resource string) []string {
	var out []string
	for _, s := range sets {
		if s.Type != "TXT" || s.SetIdentifier != setID {
			continue
		}
		for _, v := range s.Records {
			l, err := registry.ParsePayload(v)
			if err != nil || l[endpoint.OwnerLabel] != ownerID || l[endpoint.ResourceLabel] != resource {
				continue
			}
			out = append(out, l[endpoint.ConfirmsHoldLabel])
		}
	}
	return out
}

// allEqual reports whether vs holds at least one value and every one is v.
func allEqual(vs []string, v string) bool {
	return len(vs) > 0 && !slices.ContainsFunc(vs, func(x string) bool { return x != v })
}

// metricsAddr finds the address of the controller's /metrics in its JSON log: the
// "serving metrics" line's addr.
func metricsAddr(logText string) (string, bool) {
	for _, line := range strings.Split(logText, "\n") {
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving metrics" && rec.Addr != "" {
			return rec.Addr, true
		}
	}
	return "", false
}

// readProbes reads the controller's hold probes by result from its /metrics; nil when
// url is "" or the read fails (the table then says "n/a").
func readProbes(ctx context.Context, url string) callCounts {
	if url == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	out, err := parseProbes(resp.Body)
	if err != nil {
		return nil
	}
	return out
}

// parseProbes picks probesMetric out of Prometheus text exposition, by result:
//
//	crossfade_hold_probes_total{result="same"} 3
func parseProbes(r io.Reader) (callCounts, error) {
	out := callCounts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, probesMetric+`{result="`)
		if !ok {
			continue
		}
		result, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			return nil, fmt.Errorf("metrics line %q: no value", line)
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || n < 0 || n != math.Trunc(n) {
			return nil, fmt.Errorf("metrics line %q: value is not a count", line)
		}
		out[result] = int(n)
	}
	return out, sc.Err()
}

// plus returns c and d added up.
func (c callCounts) plus(d callCounts) callCounts {
	out := callCounts{}
	for k, v := range c {
		out[k] += v
	}
	for k, v := range d {
		out[k] += v
	}
	return out
}

// writeHold writes the hold scenario's section.
func writeHold(b *strings.Builder, o options, env environment, h *holdRun) {
	writeHeader(b, env, "crossfade controller: confirming a cutover's hold (issue 25)")
	interval := h.interval.String()
	if o.holdProbe == 0 {
		interval += " (default)"
	}
	spread := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "n/a"
		}
		med, _ := percentile(ds, 50)
		return fmt.Sprintf("%s / %s / %s", dur(slices.Min(ds)), dur(med), dur(slices.Max(ds)))
	}
	perHold := func(c callCounts, n int) string {
		if n == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%s per sample (%d samples: %s)", strconv.FormatFloat(float64(c.total())/float64(n), 'f', -1, 64), n, c)
	}
	pauses := func(d time.Duration, c callCounts) string {
		if d == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%d%s: %s", c.total(), mark(c.total() == 0), c)
	}
	confirms := h.latencies(func(s holdSample) time.Duration { return s.confirm })
	drops := h.latencies(func(s holdSample) time.Duration { return s.drop })
	b.WriteString("| metric | crossfade |\n|---|---|\n")
	fmt.Fprintf(b, "| holds confirmed (not confirmed within %s) | %d (%d) |\n", o.holdTimeout, len(confirms), h.missed)
	cell := spread(confirms)
	if len(confirms) > 0 {
		cell += mark(h.missed == 0 && slices.Max(confirms) < goalHoldConfirm)
	}
	fmt.Fprintf(b, "| hold written → confirmed in the member's ownership record: min / median / max (goal < %s) | %s |\n", goalHoldConfirm, cell)
	fmt.Fprintf(b, "| hold deleted → confirmation gone: min / median / max | %s |\n", spread(drops))
	fmt.Fprintf(b, "| Route 53 API calls per hold, write → %s after the confirmation | %s |\n", o.settle, perHold(h.calls(true), len(h.samples)))
	fmt.Fprintf(b, "| Route 53 API calls per release, delete → %s after the confirmation is gone | %s |\n", o.settle, perHold(h.calls(false), len(h.samples)))
	fmt.Fprintf(b, "| Route 53 API calls while no cutover holds the name, its weighted set probed (%s in all, goal 0) | %s |\n", dur(h.idle), pauses(h.idle, h.idleCalls))
	fmt.Fprintf(b, "| Route 53 API calls while the hold is confirmed, nothing changing (%s in all) | %s |\n", dur(h.held), pauses(h.held, h.heldCalls))
	probes := "n/a"
	if h.probes != nil {
		probes = fmt.Sprintf("%d: %s", h.probes.total(), h.probes)
	}
	fmt.Fprintf(b, "| DNS probes of the name during the samples, by result | %s |\n", probes)
	fmt.Fprintf(b, "| --hold-probe-interval / --resync-interval | %s / 1h (default) |\n", interval)
	fmt.Fprintf(b, "| version | %s |\n", report.OrNA(h.version))
	fmt.Fprintf(b, "| first sync: process start → the member and its ownership record in the zone | %s |\n", dur(h.firstSync))
	fmt.Fprintf(b, "| error | %s |\n", report.ErrorCell(h.err))
	if len(h.samples) > 0 {
		b.WriteString("\n| hold (runner token) | confirmed after | confirmation gone after | calls, hold | calls, release |\n|---|---|---|---|---|\n")
		for _, s := range h.samples {
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", s.token, dur(s.confirm), dur(s.drop), s.confirmCalls, s.dropCalls)
		}
	}

	b.WriteString("\n### How it was measured\n\n")
	fmt.Fprintf(b, "- crossfade alone (external-dns confirms no hold), on a fresh zone `%s` with the settings of the services scenario plus `--hold-probe-servers <the sandbox's DNS address>` (the sandbox's NS records name real AWS name servers, which do not serve it)%s; the zone cache's `--resync-interval` is at its default, 1h, so no confirmation comes from a resync.\n",
		h.tool.zone(), map[bool]string{true: "; `--hold-probe-interval` at its default", false: "; `--hold-probe-interval " + o.holdProbe.String() + "`"}[o.holdProbe == 0])
	fmt.Fprintf(b, "- One LoadBalancer Service `%s/%s` publishes `%s A [%s]` (weight %s, TTL 60) and its ownership TXT record; %s after they appear, the samples start.\n",
		namespace, holdServiceName, holdName(h.tool.zone()), holdSetID, holdWeight, o.settle)
	fmt.Fprintf(b, "- Each sample: a pause of %s plus a random part uniform over the probe interval (no hold: its Route 53 calls are the \"no cutover holds the name\" row), so that the hold lands at a random point of the prober's cycle; then the authority record `_crossfade-weights.<name>` TXT that a cutover writes (`registry.Authority{…}.Record()`, cutover `%s`, types A, a fresh runner token) is created in the sandbox's store, in process, as its ChangeResourceRecordSets would (so the sandbox counts only the controller's calls); the zone is read every %s until every ownership record of the member carries `external-dns/%s=<token>`; then, after another such pause (the hold confirmed: the \"hold is confirmed\" row), the record is deleted and the zone read until no ownership record carries the label. The calls of each wait are counted until %s after it ends, so that a write's follow-up calls are in its row.\n",
		o.sampleGap, holdCutover, holdPollEvery, endpoint.ConfirmsHoldLabel, o.settle)
	b.WriteString("- Route 53 API calls: the sandbox's `crossfade_sandbox_api_calls_total`; DNS probes: the controller's `crossfade_hold_probes_total` (its /metrics). The median is nearest-rank.\n")
	fmt.Fprintf(b, "- The machine has %d CPUs shared with other work (load average %s before, %s after).\n", env.CPUs, report.OrNA(env.LoadBefore), report.OrNA(env.LoadAfter))
}
