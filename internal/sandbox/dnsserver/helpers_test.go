package dnsserver

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// newStore returns an in-memory record store closed when the test ends.
func newStore(t testing.TB) *zones.Store {
	t.Helper()
	st, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newZone creates a hosted zone and returns its id.
func newZone(t testing.TB, st *zones.Store, name string) string {
	t.Helper()
	z, _, err := st.CreateZone(name, "ref-"+name, "", false)
	if err != nil {
		t.Fatalf("create zone %s: %v", name, err)
	}
	return z.ID
}

// apply applies a change batch or fails the test.
func apply(t testing.TB, st *zones.Store, zoneID string, changes ...zones.Change) {
	t.Helper()
	if _, err := st.Apply(zoneID, "", changes); err != nil {
		t.Fatalf("apply %d changes: %v", len(changes), err)
	}
}

func ptr[T any](v T) *T { return &v }

// simple is a CREATE of a simple set.
func simple(name, typ string, ttl int64, values ...string) zones.Change {
	return zones.Change{Action: zones.Create, Set: zones.RRSet{Name: name, Type: typ, TTL: ptr(ttl), Records: values}}
}

// weighted is a CREATE of a weighted set.
func weighted(name, typ, id string, w int64, values ...string) zones.Change {
	return zones.Change{Action: zones.Create, Set: zones.RRSet{
		Name: name, Type: typ, SetIdentifier: id, Weight: ptr(w), TTL: ptr(int64(60)), Records: values,
	}}
}

// failover is a CREATE of a failover set with an optional health check.
func failover(name, role, hc string, values ...string) zones.Change {
	return zones.Change{Action: zones.Create, Set: zones.RRSet{
		Name: name, Type: "A", SetIdentifier: role, Failover: role, HealthCheckID: hc, TTL: ptr(int64(30)), Records: values,
	}}
}

// alias is a CREATE of a (simple) alias set.
func alias(name, typ, zoneID, target string, eth bool) zones.Change {
	return zones.Change{Action: zones.Create, Set: zones.RRSet{
		Name: name, Type: typ, Alias: &zones.AliasTarget{HostedZoneID: zoneID, DNSName: target, EvaluateTargetHealth: eth},
	}}
}

// serve starts a server for recs on loopback and returns its UDP and TCP addresses. The
// server is stopped, and its goroutines waited for, when the test ends, even on failure.
func serve(t testing.TB, recs Records) (udp, tcp string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ udp, tcp net.Addr }
	readyc := make(chan addrs, 1)
	errc := make(chan error, 1)
	srv := New(recs, slog.New(slog.DiscardHandler))
	go func() {
		errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(u, t net.Addr) { readyc <- addrs{u, t} })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("ListenAndServe: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("ListenAndServe did not return after cancel")
		}
	})
	select {
	case a := <-readyc:
		return a.udp.String(), a.tcp.String()
	case err := <-errc:
		t.Fatalf("ListenAndServe: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatalf("server did not start")
	}
	return "", ""
}

// query builds a query; bufsize > 0 adds an OPT record advertising it.
func query(name string, qtype uint16, bufsize uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	if bufsize > 0 {
		m.SetEdns0(bufsize, false)
	}
	return m
}

// exchange sends m over network ("udp" or "tcp") to addr and returns the reply.
func exchange(t testing.TB, network, addr string, m *dns.Msg) *dns.Msg {
	t.Helper()
	// Without OPT the client reads at most 512 bytes over UDP, so an oversized reply fails.
	c := &dns.Client{Net: network, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("exchange %s %s over %s: %v", m.Question[0].Name, dns.TypeToString[m.Question[0].Qtype], network, err)
	}
	if r.Id != m.Id {
		t.Fatalf("reply id %d, query id %d", r.Id, m.Id)
	}
	return r
}

// normalize parses zone-file lines and returns them as miekg prints them, sorted, so that
// expected and received records compare whatever their spacing and order.
func normalize(t testing.TB, lines []string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil || rr == nil {
			t.Fatalf("bad expected record %q: %v", l, err)
		}
		out = append(out, rr.String())
	}
	sort.Strings(out)
	return out
}

// texts prints records, sorted.
func texts(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// answerIPs returns the addresses of a reply's A records.
func answerIPs(r *dns.Msg) []string {
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	return ips
}

// Addresses the in-process writer reports; shared so that calls do not allocate.
var (
	udpLocal   net.Addr = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	tcpLocal   net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	remoteAddr net.Addr = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 5353}
)

// recorder is an in-process dns.ResponseWriter that keeps the last packet written.
type recorder struct {
	local  net.Addr
	wrote  []byte
	writes int
}

func newRecorder(udp bool) *recorder {
	if udp {
		return &recorder{local: udpLocal}
	}
	return &recorder{local: tcpLocal}
}

func (w *recorder) LocalAddr() net.Addr  { return w.local }
func (w *recorder) RemoteAddr() net.Addr { return remoteAddr }
func (w *recorder) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
func (w *recorder) Write(b []byte) (int, error) {
	w.wrote = append(w.wrote[:0], b...)
	w.writes++
	return len(b), nil
}
func (w *recorder) Close() error        { return nil }
func (w *recorder) TsigStatus() error   { return nil }
func (w *recorder) TsigTimersOnly(bool) {}
func (w *recorder) Hijack()             {}

// serveDirect runs ServeDNS in process and returns the unpacked reply, nil if none was sent.
func serveDirect(t testing.TB, s *Server, q *dns.Msg, udp bool) *dns.Msg {
	t.Helper()
	w := newRecorder(udp)
	s.ServeDNS(w, q)
	if w.writes == 0 {
		return nil
	}
	r := new(dns.Msg)
	if err := r.Unpack(w.wrote); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	return r
}
