package gate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// queryTimeout bounds one DNS query when the caller's context allows longer: an answer
// from a name server that takes more than this is as good as lost.
const queryTimeout = 2 * time.Second

// maxCNAMEHops bounds how many CNAMEs resolveHost follows, so a loop cannot hold a Check.
const maxCNAMEHops = 8

// exchange sends one query for name and qtype to server (host:port) over UDP, and again
// over TCP when the answer is truncated. rd sets Recursion Desired: off when sampling
// authoritative servers (a recursive server would answer from its cache, which says
// nothing about the weights), on when resolving as a client would.
func exchange(ctx context.Context, server, name string, qtype uint16, rd bool) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = rd
	m.SetEdns0(1232, false)
	c := &dns.Client{Net: "udp"}
	in, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s at %s: %w", dns.TypeToString[qtype], name, server, err)
	}
	return in, nil
}

// resolveHost asks the DNS server at resolver for host's addresses, A first then AAAA,
// following CNAMEs. It queries afresh every time: the point is to see the weighted choice
// a new client would get. When a CNAME leads out of what the resolver serves (an
// authoritative server answering a weighted CNAME to a load balancer's name), the rest of
// the chain is resolved by the system resolver: the weighted choice has been made by then.
func resolveHost(ctx context.Context, resolver, host string) ([]netip.Addr, error) {
	name := dns.Fqdn(host)
	for hop := 0; hop <= maxCNAMEHops; hop++ {
		addrs, target, err := lookupAddrs(ctx, resolver, name)
		switch {
		case len(addrs) > 0:
			return addrs, nil
		case target != "":
			name = target
			continue
		case hop > 0:
			// The resolver knows the first name but not where its CNAME leads.
			sys, sysErr := net.DefaultResolver.LookupNetIP(ctx, "ip", strings.TrimSuffix(name, "."))
			if sysErr != nil {
				return nil, fmt.Errorf("resolve %s: CNAME target %s: %w", host, name, errors.Join(err, sysErr))
			}
			return sys, nil
		case err != nil:
			return nil, fmt.Errorf("resolve %s at %s: %w", host, resolver, err)
		default:
			return nil, fmt.Errorf("resolve %s at %s: no A or AAAA records", host, resolver)
		}
	}
	return nil, fmt.Errorf("resolve %s at %s: more than %d CNAMEs", host, resolver, maxCNAMEHops)
}

// lookupAddrs asks for name's A records and, if there are none, its AAAA records. It
// returns the addresses, or the CNAME target to follow next, or why there is neither.
func lookupAddrs(ctx context.Context, resolver, name string) (addrs []netip.Addr, target string, err error) {
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		in, err := exchange(ctx, resolver, name, qtype, true)
		if err != nil {
			return nil, "", err
		}
		if in.Rcode != dns.RcodeSuccess {
			return nil, "", fmt.Errorf("%s %s: %s", dns.TypeToString[qtype], name, dns.RcodeToString[in.Rcode])
		}
		// The answer holds the CNAME chain, if any, then the addresses of its end.
		for _, rr := range in.Answer {
			switch rr := rr.(type) {
			case *dns.A:
				if a, ok := netip.AddrFromSlice(rr.A.To4()); ok {
					addrs = append(addrs, a)
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(rr.AAAA); ok {
					addrs = append(addrs, a)
				}
			case *dns.CNAME:
				target = rr.Target
			}
		}
		if len(addrs) > 0 {
			return addrs, "", nil
		}
		if target != "" {
			return nil, target, nil
		}
	}
	return nil, "", nil
}

// resolveTarget returns the addresses of type qtype (A or AAAA) that host, an alias's
// target, answers now, canonical and sorted. It asks the gate's servers first, without
// recursion: they answer the names of the zones they host (an alias to another record of
// the zone), and the sandbox its load balancers' names. A server that refuses the name, as
// Route 53's do for a load balancer's, sends the question to the system resolver, as a
// client would resolve the target; so does a CNAME that leads out of what the server
// answers. A loopback server's refusal is an error instead (see isLoopbackServer). Empty without error when the target has no such record.
func (d *DNS) resolveTarget(ctx context.Context, host string, qtype uint16) ([]string, error) {
	var errs []error
	for _, server := range d.servers {
		in, err := exchange(ctx, server, host, qtype, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch in.Rcode {
		case dns.RcodeSuccess:
			vals, cname := answerValues(in, qtype)
			if len(vals) > 0 || cname == "" {
				return vals, nil
			}
			if isLoopbackServer(server) {
				return nil, fmt.Errorf("resolve %s %s: %s answers a CNAME to %s, and a loopback server is not followed by the system resolver", dns.TypeToString[qtype], host, server, cname)
			}
			return d.lookupSystem(ctx, cname, qtype)
		case dns.RcodeRefused:
			if isLoopbackServer(server) {
				return nil, fmt.Errorf("resolve %s %s: %s refuses it, and a loopback server is not followed by the system resolver", dns.TypeToString[qtype], host, server)
			}
			return d.lookupSystem(ctx, host, qtype)
		default:
			errs = append(errs, fmt.Errorf("query %s %s at %s: %s", dns.TypeToString[qtype], host, server, dns.RcodeToString[in.Rcode]))
		}
	}
	return nil, errors.Join(errs...)
}

// isLoopbackServer reports whether server (host:port) is on this machine. A loopback server
// is the sandbox, which answers its load balancers' names itself, or a local recursive
// resolver, which answers every name: neither needs the system resolver behind it, and a
// test against the sandbox must never send a query off the machine.
func isLoopbackServer(server string) bool {
	host, _, err := net.SplitHostPort(server)
	if err != nil {
		host = server
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// lookupSystem resolves host's addresses of type qtype with the system resolver (d.system
// in tests). Empty without error only when host has no address of that type but has one
// of the other family: the resolver reports NODATA and a name that does not exist alike
// ("no such host"), and a target that does not exist must not read as one answering
// nothing of the type (a record carrying no traffic).
func (d *DNS) lookupSystem(ctx context.Context, host string, qtype uint16) ([]string, error) {
	network, other := "ip4", "ip6"
	if qtype == dns.TypeAAAA {
		network, other = "ip6", "ip4"
	}
	res := d.system
	if res == nil {
		res = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	// Rooted: an alias's target is a whole name, never one for the search list to extend.
	name := dns.Fqdn(host)
	addrs, err := res.LookupNetIP(ctx, network, name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		if _, otherErr := res.LookupNetIP(ctx, other, name); otherErr != nil {
			return nil, fmt.Errorf("resolve %s with the system resolver: no A or AAAA address (%w)", host, otherErr)
		}
		return nil, nil // NODATA: the target has addresses, none of this type
	}
	if err != nil {
		return nil, fmt.Errorf("resolve %s %s with the system resolver: %w", dns.TypeToString[qtype], host, err)
	}
	vals := make([]string, 0, len(addrs))
	for _, a := range addrs {
		vals = append(vals, canonicalValue(a.String()))
	}
	slices.Sort(vals)
	return slices.Compact(vals), nil
}
