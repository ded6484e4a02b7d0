package dnsserver

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// chiSquare1DF is the chi-square critical value for one degree of freedom at p = 10⁻⁶: at
// p = 0.001 the three random cases failed a correct server about once in 300 runs, while
// a real misweighting (1:3 served as 1:2 over 4000 queries) still scores above 100.
const chiSquare1DF = 23.928

// TestWeightedShares sends real UDP queries at two-member weighted groups and checks the
// answer shares: a chi-square goodness-of-fit test where both members may answer, and a
// count of exactly zero for a member that must never answer.
func TestWeightedShares(t *testing.T) {
	type member struct {
		weight  int64
		healthy bool
	}
	tests := []struct {
		name    string
		members [2]member
		queries int
		share   [2]float64 // expected share of each member
		// unchecked leaves the members without health checks: the store then settles the
		// choice when it publishes the name, and the server draws from its running sums.
		unchecked bool
	}{
		{"weights 1:3", [2]member{{1, true}, {3, true}}, 4000, [2]float64{0.25, 0.75}, false},
		{"weights 0:1 never answer the 0", [2]member{{0, true}, {1, true}}, 1000, [2]float64{0, 1}, false},
		{"weights 0:0 are equally likely", [2]member{{0, true}, {0, true}}, 2000, [2]float64{0.5, 0.5}, false},
		{"unhealthy member is skipped", [2]member{{1, true}, {3, false}}, 500, [2]float64{1, 0}, false},
		{"0-weight answers when every non-zero one is unhealthy", [2]member{{1, false}, {0, true}}, 500, [2]float64{0, 1}, false},
		{"all unhealthy count as healthy", [2]member{{1, false}, {3, false}}, 2000, [2]float64{0.25, 0.75}, false},
		{"healthy 0-weight before unhealthy 0-weight", [2]member{{0, true}, {0, false}}, 500, [2]float64{1, 0}, false},
		{"unchecked weights 1:3", [2]member{{1, true}, {3, true}}, 4000, [2]float64{0.25, 0.75}, true},
		{"unchecked weights 3:1", [2]member{{3, true}, {1, true}}, 4000, [2]float64{0.75, 0.25}, true},
		{"unchecked weights 0:1 never answer the 0", [2]member{{0, true}, {1, true}}, 1000, [2]float64{0, 1}, true},
		{"unchecked weights 0:0 are equally likely", [2]member{{0, true}, {0, true}}, 2000, [2]float64{0.5, 0.5}, true},
	}
	st := newStore(t)
	zoneID := newZone(t, st, "example.com")
	for i, tc := range tests {
		name := fmt.Sprintf("w%d.example.com", i)
		for j, m := range tc.members {
			c := weighted(name, "A", fmt.Sprintf("m%d", j), m.weight, fmt.Sprintf("192.0.2.%d", j+1))
			c.Set.HealthCheckID = fmt.Sprintf("hc-%d-%d", i, j)
			if tc.unchecked {
				c.Set.HealthCheckID = ""
			}
			apply(t, st, zoneID, c)
			if tc.unchecked {
				continue
			}
			if err := st.SetHealth(c.Set.HealthCheckID, m.healthy); err != nil {
				t.Fatal(err)
			}
		}
	}
	udpAddr, _ := serve(t, st)

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			counts := countAnswers(t, udpAddr, fmt.Sprintf("w%d.example.com.", i), tc.queries)
			got := [2]int{counts["192.0.2.1"], counts["192.0.2.2"]}
			if got[0]+got[1] != tc.queries {
				t.Fatalf("answers %v, want %d single-member answers", counts, tc.queries)
			}
			if tc.share[0] == 0 || tc.share[1] == 0 {
				for j := range got {
					if tc.share[j] == 0 && got[j] != 0 {
						t.Fatalf("member %d answered %d of %d times, want never", j, got[j], tc.queries)
					}
				}
				return
			}
			chi2 := 0.0
			for j := range got {
				e := tc.share[j] * float64(tc.queries)
				d := float64(got[j]) - e
				chi2 += d * d / e
			}
			t.Logf("counts %v over %d queries in %v: chi-square %.3f", got, tc.queries, time.Since(start), chi2)
			if chi2 > chiSquare1DF {
				t.Errorf("counts %v do not fit shares %v: chi-square %.3f > %.3f", got, tc.share, chi2, chiSquare1DF)
			}
		})
	}
}

// countAnswers asks n A queries for qname over UDP from several connections at once and
// counts the addresses answered; every reply must hold exactly one A record.
func countAnswers(t *testing.T, addr, qname string, n int) map[string]int {
	t.Helper()
	const workers = 8
	var (
		mu     sync.Mutex
		counts = map[string]int{}
		wg     sync.WaitGroup
		errs   = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
			conn, err := c.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			local := map[string]int{}
			for i := w; i < n; i += workers {
				r, _, err := c.ExchangeWithConn(query(qname, dns.TypeA, 0), conn)
				if err != nil {
					errs <- err
					return
				}
				if ips := answerIPs(r); len(ips) != 1 || r.Rcode != dns.RcodeSuccess {
					errs <- fmt.Errorf("reply %s with answers %v, want one A", dns.RcodeToString[r.Rcode], ips)
					return
				} else {
					local[ips[0]]++
				}
			}
			mu.Lock()
			for k, v := range local {
				counts[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("query %s: %v", qname, err)
	}
	return counts
}

// TestWeightedPickUnit checks pickWeighted's choice rules in process, without the network.
func TestWeightedPickUnit(t *testing.T) {
	set := func(id string, w int64, hc string) *zones.RRSet {
		return &zones.RRSet{Name: "x.", Type: "A", SetIdentifier: id, Weight: ptr(w), HealthCheckID: hc}
	}
	health := healthMap{"down": false}
	r := resolver{recs: health, budget: healthBudget}
	g := []*zones.RRSet{set("a", 0, ""), set("b", 5, "down"), set("c", 0, "down"), set("d", 2, "")}
	for range 1000 {
		if got := r.pickWeighted(g, 0); got.SetIdentifier != "d" {
			t.Fatalf("picked %s, want d: the only healthy non-zero set", got.SetIdentifier)
		}
	}
	big := make([]*zones.RRSet, 300) // more than the stack-tracked maximum
	for i := range big {
		big[i] = set(fmt.Sprint(i), 0, "down")
	}
	big[299] = set("last", 1, "")
	for range 100 {
		if got := r.pickWeighted(big, 0); got.SetIdentifier != "last" {
			t.Fatalf("picked %s from a large group, want last", got.SetIdentifier)
		}
	}
}

// healthMap is a Records holding only health statuses; unknown ids are healthy.
type healthMap map[string]bool

func (h healthMap) Lookup(string) (zones.Answer, bool)  { return zones.Answer{}, false }
func (h healthMap) LookupIn(string, string) *zones.Node { return nil }
func (h healthMap) Healthy(id string) bool {
	ok, known := h[id]
	return !known || ok
}
