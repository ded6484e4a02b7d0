package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// callCounts are Route 53 API calls by "Operation result" (e.g. "ListResourceRecordSets
// ok"), as the sandbox counts them in crossfade_sandbox_api_calls_total.
type callCounts map[string]int

// total is the number of calls of every operation and result.
func (c callCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// since returns the calls made between an earlier reading and c, leaving out operations
// whose count did not move.
func (c callCounts) since(before callCounts) callCounts {
	out := callCounts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// String lists the counts as "Op result ×N" sorted by operation, "none" when empty.
func (c callCounts) String() string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// readCalls reads the sandbox's API-call counters from its /metrics (which costs no call:
// the sandbox does not count it).
func readCalls(ctx context.Context, apiURL string) (callCounts, error) {
	calls, err := apicalls.ReadCalls(ctx, apiURL)
	return callCounts(calls), err
}

// pollEvery is how often the store is read while waiting for a first sync. Reading it
// takes a read lock for a map look-up per name; it costs no API call.
const pollEvery = 20 * time.Millisecond

// converged reports whether zone holds an A record with loadBalancerIP(i) at svc-i for
// every i < n. It counts first (one look-up) and checks every name only when enough
// record sets are there, so a poll during the sync costs next to nothing.
func converged(store *zones.Store, zoneID, zoneName string, n int) (bool, error) {
	z, err := store.Zone(zoneID)
	if err != nil {
		return false, err
	}
	// SOA, NS and an A record per Service at least (ownership TXT records come on top).
	if z.RecordCount < n+2 {
		return false, nil
	}
	for i := range n {
		if !answers(store, hostname(i, zoneName), loadBalancerIP(i)) {
			return false, nil
		}
	}
	return true, nil
}

// answers reports whether the store holds an A record set at name that includes ip.
func answers(store *zones.Store, name, ip string) bool {
	a, ok := store.Lookup(zones.CanonicalName(name))
	if !ok || a.Node == nil {
		return false
	}
	for _, set := range a.Node.Sets {
		if set.Type == "A" && slices.Contains(set.Records, ip) {
			return true
		}
	}
	return false
}

// dnsPollEvery is how often the DNS server is asked during a change-to-answer sample.
const dnsPollEvery = 10 * time.Millisecond

// waitAnswer asks the DNS server at addr for name's A records every dnsPollEvery until
// the answer holds ip, and returns when it first did. Each query has its own short
// timeout: a lost UDP answer costs one poll, not the sample.
func waitAnswer(ctx context.Context, addr, name, ip string) (time.Time, error) {
	client := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	msg := new(dns.Msg)
	msg.SetQuestion(dns.Fqdn(name), dns.TypeA)
	tick := time.NewTicker(dnsPollEvery)
	defer tick.Stop()
	var lastErr error
	for {
		resp, _, err := client.ExchangeContext(ctx, msg, addr)
		now := time.Now()
		if err == nil && hasA(resp, ip) {
			return now, nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return time.Time{}, fmt.Errorf("%s A %s: not answered (last query error: %v): %w", name, ip, lastErr, context.Cause(ctx))
			}
			return time.Time{}, fmt.Errorf("%s A %s: not answered: %w", name, ip, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// hasA reports whether a DNS response answers with an A record for ip.
func hasA(resp *dns.Msg, ip string) bool {
	if resp == nil || resp.Rcode != dns.RcodeSuccess {
		return false
	}
	for _, rr := range resp.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
			return true
		}
	}
	return false
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of samples: the
// smallest sample with at least p % of the samples at or below it. With 50 samples, p99
// is the largest. ok is false when there are none.
func percentile(samples []time.Duration, p float64) (d time.Duration, ok bool) {
	if len(samples) == 0 || p <= 0 || p > 100 {
		return 0, false
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1], true
}
