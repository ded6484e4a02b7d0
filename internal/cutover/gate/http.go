package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// ClusterHeader is the response header a backend may set to name the cluster that served
// the request; the HTTP gate counts its values, so a report shows where traffic went.
const ClusterHeader = "X-Crossfade-Cluster"

const (
	// httpConcurrency is how many requests to one URL are in flight at once: enough to
	// keep a Check short, few enough not to load the service being judged.
	httpConcurrency = 4
	// maxBody is how much of a response is read; the rest is dropped with the connection.
	maxBody = 1 << 20
	// latencyFloor is added to the `from` cluster's latency when NoWorseThanFrom compares
	// the two: on loopback or a quiet network both are well under a millisecond, and a
	// relative slack of a fraction of that would fail on scheduling noise alone.
	latencyFloor = 5 * time.Millisecond
	// publicLabel keys the public URL's numbers in Values and Detail.
	publicLabel = "public"
)

// HTTP probes a service through its public name, as clients reach it, and directly at
// each cluster.
//
// A request succeeds when its status is expected and the whole response arrives within
// the timeout; the latency percentile is over the successful requests only, since the
// failed ones already count against the success ratio (and a refused connection would
// otherwise look fast). NoWorseThanFrom allows `to` a percentile of (1+slack)×from's plus
// latencyFloor (5ms). Values, per probe key ("public", "from", "to", or the set identifier
// of another cluster): <key>.requests, .ok, .success_ratio, .p<P>_ms, .cluster.<header
// value>; and no_worse.latency_bound_ms.
type HTTP struct {
	name     string
	public   string            // the public URL; "" for none
	clusters map[string]string // set identifier → direct URL
	requests int
	timeout  time.Duration
	expect   []int // status codes that count as success; nil means 200..399
	minRatio float64
	pct      float64       // the latency percentile reported and bounded
	maxLat   time.Duration // 0: no latency bound
	noWorse  bool
	slack    float64
	// publicClient resolves and dials anew for every request; directClient dials anew too,
	// so that both kinds of latency include connection setup and compare fairly.
	publicClient, directClient *http.Client
}

// NewHTTP builds an HTTP gate from its spec, applying defaults to any zero field.
func NewHTTP(name string, g spec.HTTPGate) (*HTTP, error) {
	h := &HTTP{
		name:     name,
		public:   g.URL,
		clusters: maps.Clone(g.Clusters),
		requests: g.Requests,
		timeout:  g.Timeout.Duration,
		expect:   slices.Clone(g.ExpectStatus),
		minRatio: 1,
		pct:      spec.DefaultPercentile,
		noWorse:  g.NoWorseThanFrom,
		slack:    spec.DefaultLatencySlack,
	}
	if h.requests <= 0 {
		h.requests = spec.DefaultHTTPRequests
	}
	if h.timeout <= 0 {
		h.timeout = spec.DefaultHTTPTimeout
	}
	if g.MinSuccessRatio != nil {
		h.minRatio = *g.MinSuccessRatio
	}
	if h.minRatio < 0 || h.minRatio > 1 {
		return nil, fmt.Errorf("gate %s: minSuccessRatio %v: want 0..1", name, h.minRatio)
	}
	if g.LatencySlack != nil {
		h.slack = *g.LatencySlack
	}
	if h.slack < 0 {
		return nil, fmt.Errorf("gate %s: latencySlack %v: want ≥ 0", name, h.slack)
	}
	if l := g.Latency; l != nil {
		if l.Percentile != 0 {
			h.pct = l.Percentile
		}
		if h.pct <= 0 || h.pct > 100 {
			return nil, fmt.Errorf("gate %s: latency.percentile %v: want more than 0 and at most 100", name, l.Percentile)
		}
		if l.Max.Duration <= 0 {
			return nil, fmt.Errorf("gate %s: latency.max %v: want > 0", name, l.Max.Duration)
		}
		h.maxLat = l.Max.Duration
	}
	for _, code := range h.expect {
		if code < 100 || code > 599 {
			return nil, fmt.Errorf("gate %s: expectStatus %d: not an HTTP status", name, code)
		}
	}
	if h.public == "" && len(h.clusters) == 0 {
		return nil, fmt.Errorf("gate %s: neither url nor clusters is set: nothing to probe", name)
	}
	if h.noWorse && len(h.clusters) < 2 {
		return nil, fmt.Errorf("gate %s: noWorseThanFrom needs clusters for both from and to, got %d", name, len(h.clusters))
	}
	for _, id := range sortedKeys(h.clusters) {
		if err := checkURL(h.clusters[id]); err != nil {
			return nil, fmt.Errorf("gate %s: clusters[%s]: %w", name, id, err)
		}
	}
	if h.public != "" {
		if err := checkURL(h.public); err != nil {
			return nil, fmt.Errorf("gate %s: url: %w", name, err)
		}
	}

	dialer := &net.Dialer{Timeout: h.timeout}
	// No proxy: a proxy would resolve the name itself, and the point of the public probe
	// is to see which cluster this client's own resolution picks.
	direct := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true, ForceAttemptHTTP2: true}
	public := direct
	if g.Resolver != "" {
		public = direct.Clone()
		public.DialContext = resolvingDialer(dialer, withPort(g.Resolver, "53"))
	}
	h.directClient = newClient(direct)
	h.publicClient = newClient(public)
	return h, nil
}

// newClient wraps t in a client that does not follow redirects: a 3xx is the answer
// being judged, and following it could leave the host the probe is about.
func newClient(t *http.Transport) *http.Client {
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkURL accepts an absolute http or https URL with a host.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an http:// or https:// URL with a host", raw)
	}
	return nil
}

// resolvingDialer dials the address that the DNS server at resolver gives for the host,
// asked afresh for every connection, on the port requested. TLS still uses the URL's host
// for SNI and verification: the transport does the handshake on the connection returned.
func resolvingDialer(d *net.Dialer, resolver string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return d.DialContext(ctx, network, addr) // an IP literal has nothing to resolve
		}
		ips, err := resolveHost(ctx, resolver, host)
		if err != nil {
			return nil, err
		}
		// Like a client, try the addresses in the order given until one answers.
		var errs []error
		for _, ip := range ips {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// Name is the gate's name.
func (h *HTTP) Name() string { return h.name }

// probe is what one URL answered during one Check.
type probe struct {
	label  string // "public" or the cluster's set identifier
	role   string // "from" or "to" for the step's clusters, else ""
	url    string
	public bool // resolved through the gate's resolver, dialled anew each time

	mu        sync.Mutex // guards the fields below while requests run
	requests  int
	ok        int
	latencies []time.Duration // of the successful requests only: failures count against the ratio
	failures  map[string]int  // reason → count
	clusters  map[string]int  // ClusterHeader value → count
}

// key prefixes the probe's Values: "public", "from", "to", or the set identifier of a
// cluster that is neither.
func (p *probe) key() string {
	if p.role != "" {
		return p.role
	}
	return p.label
}

// String names the probe in Detail: "public", "green (to)".
func (p *probe) String() string {
	if p.role != "" {
		return p.label + " (" + p.role + ")"
	}
	return p.label
}

func (p *probe) record(lat time.Duration, cluster string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	if cluster != "" {
		if p.clusters == nil {
			p.clusters = map[string]int{}
		}
		p.clusters[cluster]++
	}
	if err != nil {
		if p.failures == nil {
			p.failures = map[string]int{}
		}
		p.failures[err.Error()]++
		return
	}
	p.ok++
	p.latencies = append(p.latencies, lat)
}

// ratio is the share of requests that succeeded; 0 when none were sent.
func (p *probe) ratio() float64 {
	if p.requests == 0 {
		return 0
	}
	return float64(p.ok) / float64(p.requests)
}

// topFailure is the most frequent failure reason with its count, e.g. "20× HTTP 500".
func (p *probe) topFailure() string {
	best, n := "", 0
	for _, reason := range sortedKeys(p.failures) {
		if c := p.failures[reason]; c > n {
			best, n = reason, c
		}
	}
	if n == 0 {
		return "no failures"
	}
	return fmt.Sprintf("%d× %s", n, best)
}

// Check sends the configured number of requests to the public URL and to each cluster's
// URL and judges the answers.
func (h *HTTP) Check(ctx context.Context, s Step) Result {
	r := Result{Gate: h.name, Kind: KindHTTP}
	if h.noWorse {
		for _, id := range []string{s.From, s.To} {
			if _, ok := h.clusters[id]; !ok {
				return r.fail(fmt.Errorf("noWorseThanFrom: clusters has no URL for %q", id))
			}
		}
	}
	probes := h.probes(s)
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() { h.run(ctx, p) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return r.fail(fmt.Errorf("check interrupted: %w", err))
	}
	h.judge(&r, probes)
	return r
}

// probes lists what to request: the public URL, then from, to and any other cluster.
func (h *HTTP) probes(s Step) []*probe {
	var ps []*probe
	if h.public != "" {
		ps = append(ps, &probe{label: publicLabel, url: h.public, public: true})
	}
	ids := sortedKeys(h.clusters)
	slices.SortStableFunc(ids, func(a, b string) int { return rank(s, a) - rank(s, b) })
	for _, id := range ids {
		p := &probe{label: id, url: h.clusters[id]}
		switch id {
		case s.From:
			p.role = "from"
		case s.To:
			p.role = "to"
		}
		ps = append(ps, p)
	}
	return ps
}

// rank orders the step's from cluster first, then to, then the rest.
func rank(s Step, id string) int {
	switch id {
	case s.From:
		return 0
	case s.To:
		return 1
	}
	return 2
}

// run sends h.requests requests to p's URL, httpConcurrency at a time, and returns when
// all have ended or ctx is done.
func (h *HTTP) run(ctx context.Context, p *probe) {
	client := h.directClient
	if p.public {
		client = h.publicClient
	}
	repeat(ctx, h.requests, httpConcurrency, func() {
		p.record(h.get(ctx, client, p.url))
	})
}

// get sends one request and reads the response; the latency runs to the last byte read.
// The error says why the request did not count as a success.
func (h *HTTP) get(ctx context.Context, client *http.Client, u string) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("User-Agent", "crossfade-gate")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", h.reason(err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	lat := time.Since(start)
	cluster := resp.Header.Get(ClusterHeader)
	switch {
	case err != nil:
		return lat, cluster, fmt.Errorf("read body: %w", h.reason(err))
	case !h.expected(resp.StatusCode):
		return lat, cluster, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return lat, cluster, nil
}

// reason shortens a request error for counting: a timeout is a timeout whatever the
// phase, and the URL, the same for every request, is dropped.
func (h *HTTP) reason(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("timeout after %s", h.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// expected reports whether status counts as success.
func (h *HTTP) expected(status int) bool {
	if len(h.expect) == 0 {
		return status >= 200 && status <= 399
	}
	return slices.Contains(h.expect, status)
}

// judge fills r from what the probes measured. A bound that had nothing to be judged on
// (latency.max on a probe with no successful request, noWorseThanFrom's latency without a
// successful request at both clusters) is not judged: the check passes as Pending, so the
// step holds on and fails at its time limit unless it judges, never passes unmeasured. A
// bound measured and broken fails the check whatever else is pending.
func (h *HTTP) judge(r *Result, probes []*probe) {
	pname := "p" + fmtFloat(h.pct)
	var problems, pending, summary []string
	lat := map[*probe]time.Duration{}
	for _, p := range probes {
		k := p.key()
		r.set(k+".requests", float64(p.requests))
		r.set(k+".ok", float64(p.ok))
		r.set(k+".success_ratio", p.ratio())
		line := fmt.Sprintf("%s: %d/%d ok", p, p.ok, p.requests)
		if len(p.latencies) > 0 {
			l := time.Duration(percentile(p.latencies, h.pct))
			lat[p] = l
			r.set(k+"."+pname+"_ms", ms(l))
			line += ", " + pname + " " + fmtMs(l)
			if h.maxLat > 0 {
				if l > h.maxLat {
					line += " > " + fmtMs(h.maxLat)
					problems = append(problems, fmt.Sprintf("%s: %s %s > %s", p, pname, fmtMs(l), fmtMs(h.maxLat)))
				} else {
					line += " ≤ " + fmtMs(h.maxLat)
				}
			}
		} else if h.maxLat > 0 {
			pending = append(pending, fmt.Sprintf("%s: no successful request of %d, so no %s to bound by %s", p, p.requests, pname, fmtMs(h.maxLat)))
		}
		if p.ratio() < h.minRatio {
			problems = append(problems, fmt.Sprintf("%s: %d/%d ok, want ≥ %s (%s)", p, p.ok, p.requests, fmtPct(h.minRatio), p.topFailure()))
		}
		var seen []string
		for _, c := range sortedKeys(p.clusters) {
			r.set(k+".cluster."+c, float64(p.clusters[c]))
			seen = append(seen, fmt.Sprintf("%s %d", c, p.clusters[c]))
		}
		// A direct probe answered by its own cluster only is as expected and goes unsaid.
		if len(seen) > 0 && (p.public || len(seen) > 1 || p.clusters[p.label] == 0) {
			line += ", served by " + strings.Join(seen, " ")
		}
		summary = append(summary, line)
	}
	if h.noWorse {
		p, w := h.compare(r, probes, lat, pname, &summary)
		problems, pending = append(problems, p...), append(pending, w...)
	}
	r.judge(problems, pending, strings.Join(summary, "; "))
}

// compare judges NoWorseThanFrom: the to cluster must succeed at least as often as the
// from cluster, and its latency percentile must stay within (1+slack)×from's plus
// latencyFloor. Without a successful request at both there is no latency to compare:
// that half is returned as pending, not passed.
func (h *HTTP) compare(r *Result, probes []*probe, lat map[*probe]time.Duration, pname string, summary *[]string) (problems, pending []string) {
	var from, to *probe
	for _, p := range probes {
		switch p.role {
		case "from":
			from = p
		case "to":
			to = p
		}
	}
	if from == nil || to == nil {
		return nil, nil // Check refuses a step whose clusters are missing
	}
	line := fmt.Sprintf("%s vs %s: %d/%d vs %d/%d ok", to.label, from.label, to.ok, to.requests, from.ok, from.requests)
	if to.ratio() < from.ratio() {
		problems = append(problems, fmt.Sprintf("%s worse than %s: %d/%d ok vs %d/%d", to, from, to.ok, to.requests, from.ok, from.requests))
	}
	fl, fok := lat[from]
	tl, tok := lat[to]
	if fok && tok {
		bound := time.Duration(float64(fl)*(1+h.slack)) + latencyFloor
		r.set("no_worse.latency_bound_ms", ms(bound))
		line += fmt.Sprintf(", %s %s vs %s (bound %s)", pname, fmtMs(tl), fmtMs(fl), fmtMs(bound))
		if tl > bound {
			problems = append(problems, fmt.Sprintf("%s slower than %s: %s %s > %s×%s+%s", to, from, pname,
				fmtMs(tl), fmtFloat(1+h.slack), fmtMs(fl), fmtMs(latencyFloor)))
		}
	} else {
		var none []string
		for _, p := range []*probe{to, from} {
			if _, ok := lat[p]; !ok {
				none = append(none, p.String())
			}
		}
		pending = append(pending, fmt.Sprintf("noWorseThanFrom: no successful request at %s, so no %s of %s to compare with %s's",
			strings.Join(none, " or "), pname, to.label, from.label))
	}
	*summary = append(*summary, line)
	return problems, pending
}

// ms converts d to fractional milliseconds for Values.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMs prints d in milliseconds, with a decimal below 10ms where loopback lives.
func fmtMs(d time.Duration) string {
	if m := ms(d); m < 10 {
		return strconv.FormatFloat(m, 'f', 1, 64) + "ms"
	}
	return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
}
