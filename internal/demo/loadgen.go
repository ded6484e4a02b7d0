package demo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// loadgen is the demo's traffic: clients that each resolve the name through the sandbox's
// DNS server like a caching resolver (an answer is kept for its TTL, then asked again)
// and send real HTTP requests to the address they got; or, in the ALB demo, clients that
// send every request to the ALB's listener, which picks the cluster per request. Where
// requests land is counted from the X-Crossfade-Cluster header the backends set.
type loadgen struct {
	name, dnsAddr string
	port          int
	// listener, when set, is the ALB listener's host:port: no DNS is asked.
	listener string
	clients  int
	interval time.Duration

	mu sync.Mutex
	// counts are the requests that landed, per cluster.
	counts   map[string]int64
	failures int64
	lastErr  string
	sent     atomic.Int64
}

// newLoadgen returns the traffic for name, resolved at dnsAddr and sent to port.
func newLoadgen(name, dnsAddr string, port, clients int, interval time.Duration) *loadgen {
	return &loadgen{name: name, dnsAddr: dnsAddr, port: port, clients: clients, interval: interval, counts: map[string]int64{}}
}

// newALBLoadgen returns the traffic for name (the Host header the listener rule matches),
// sent to the ALB listener at addr.
func newALBLoadgen(name, addr string, clients int, interval time.Duration) *loadgen {
	return &loadgen{name: name, listener: addr, clients: clients, interval: interval, counts: map[string]int64{}}
}

// snapshot returns the requests per cluster and the failures so far.
func (l *loadgen) snapshot() (map[string]int64, int64, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts), l.failures, l.lastErr
}

// run sends traffic until ctx is done; it returns when every client has stopped.
func (l *loadgen) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range l.clients {
		wg.Go(func() { l.client(ctx, i) })
	}
	wg.Wait()
}

// client is one caching resolver and its HTTP client.
func (l *loadgen) client(ctx context.Context, i int) {
	// Keep-alives would pin a client to one backend across answers; a new connection per
	// request follows the DNS answer, as a client behind a caching resolver does. An ALB
	// picks a target group per request, so its clients keep their connection, as browsers do.
	tr := &http.Transport{DisableKeepAlives: l.listener == ""}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Timeout: 2 * time.Second, Transport: tr}
	dc := &dns.Client{Net: "udp", Timeout: time.Second}
	var ip string
	var expires time.Time
	// Spread the clients over the interval.
	every(ctx, time.Duration(i)*l.interval/time.Duration(max(l.clients, 1)), l.interval, func() {
		if l.listener != "" {
			l.request(ctx, hc, l.listener)
			return
		}
		if time.Now().After(expires) {
			addr, ttl, err := l.resolve(ctx, dc)
			if err != nil {
				if ctx.Err() == nil {
					l.fail(err)
				}
				return
			}
			ip, expires = addr, time.Now().Add(ttl)
		}
		l.request(ctx, hc, net.JoinHostPort(ip, strconv.Itoa(l.port)))
	})
}

// resolve asks the authoritative server for the name's address and its TTL.
func (l *loadgen) resolve(ctx context.Context, dc *dns.Client) (string, time.Duration, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(l.name), dns.TypeA)
	in, _, err := dc.ExchangeContext(ctx, m, l.dnsAddr)
	if err != nil {
		return "", 0, fmt.Errorf("resolve %s: %w", l.name, err)
	}
	for _, rr := range in.Answer {
		if a, ok := rr.(*dns.A); ok {
			return a.A.String(), time.Duration(a.Hdr.Ttl) * time.Second, nil
		}
	}
	return "", 0, fmt.Errorf("resolve %s: empty answer (%s)", l.name, dns.RcodeToString[in.Rcode])
}

// request sends one request to addr (host:port) for the name, and counts where it landed.
func (l *loadgen) request(ctx context.Context, hc *http.Client, addr string) {
	url := "http://" + addr + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		l.fail(err)
		return
	}
	req.Host = l.name
	l.sent.Add(1)
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			l.fail(err)
		}
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		l.fail(fmt.Errorf("GET %s: %s", url, resp.Status))
		return
	}
	l.mu.Lock()
	l.counts[resp.Header.Get("X-Crossfade-Cluster")]++
	l.mu.Unlock()
}

func (l *loadgen) fail(err error) {
	l.mu.Lock()
	l.failures++
	l.lastErr = err.Error()
	l.mu.Unlock()
}
