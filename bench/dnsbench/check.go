package main

import (
	"context"
	"fmt"
	"time"

	"github.com/miekg/dns"
)

// weightSample is how many queries checkAnswers sends to one weighted name to see that the
// sandbox really chooses per query (blue 1 : green 3), not just serves a fixed answer.
const weightSample = 400

// query sends one UDP question and returns the reply if it is NOERROR with an answer.
func query(ctx context.Context, addr, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	client := &dns.Client{Net: "udp", Timeout: time.Second}
	r, _, err := client.ExchangeContext(ctx, m, addr)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return nil, fmt.Errorf("%s %s: rcode %s, %d answers", name, dns.TypeToString[qtype], dns.RcodeToString[r.Rcode], len(r.Answer))
	}
	return r, nil
}

// answerA returns the address of a single-A answer.
func answerA(ctx context.Context, addr, name string) (string, error) {
	r, err := query(ctx, addr, name, dns.TypeA)
	if err != nil {
		return "", err
	}
	a, ok := r.Answer[0].(*dns.A)
	if !ok || len(r.Answer) != 1 {
		return "", fmt.Errorf("%s A: want one A record, got %v", name, r.Answer)
	}
	return a.A.String(), nil
}

// checkAnswers makes sure every server serves the benchmark names before any timing, so a
// fast server cannot win by answering errors or the wrong records: the first, middle and
// last names must answer one A record, 127.0.0.1 on the plain servers, and the weighted
// sandbox's choice must lean to green about 3 : 1.
func checkAnswers(ctx context.Context, targets []*target, names int) error {
	for _, t := range targets {
		// A plain server must answer 127.0.0.1 every time: asked 10 times for each of 3
		// names, a weighted pair (blue 1 / green 3) would answer it throughout with a chance
		// of 0.25^30, never in practice (3 answers alone: 1 in 64).
		asks := 10
		if t.role == roleWeighted {
			asks = 1
		}
		for _, i := range []int{0, names / 2, names - 1} {
			for range asks {
				ip, err := answerA(ctx, t.addr, hostName(i))
				if err != nil {
					return fmt.Errorf("%s at %s: %w", t.name, t.addr, err)
				}
				if t.role != roleWeighted && ip != "127.0.0.1" {
					return fmt.Errorf("%s at %s: %s A = %s, want 127.0.0.1 (%s)", t.name, t.addr, hostName(i), ip, t.kind)
				}
			}
		}
	}
	sb := findRole(targets, roleWeighted)
	if sb == nil {
		return nil
	}
	green := 0
	for range weightSample {
		ip, err := answerA(ctx, sb.addr, hostName(0))
		if err != nil {
			return fmt.Errorf("%s at %s: %w", sb.name, sb.addr, err)
		}
		switch ip {
		case "127.0.0.2":
			green++
		case "127.0.0.1":
		default:
			return fmt.Errorf("%s: %s A = %s, want 127.0.0.1 or 127.0.0.2", sb.name, hostName(0), ip)
		}
	}
	share := float64(green) / weightSample
	// 75 % expected; 400 draws put 99.99 % of honest runs within ±10 points.
	if share < 0.6 || share > 0.9 {
		return fmt.Errorf("%s: green share %.0f%% over %d queries, want about 75%%", sb.name, 100*share, weightSample)
	}
	sb.notes = append(sb.notes, fmt.Sprintf("weighted check: %.0f%% green of %d answers (want ~75%%)", 100*share, weightSample))
	return nil
}

// findRole returns the target with role r, or nil if the run has none (CoreDNS with -no-coredns).
func findRole(targets []*target, r role) *target {
	for _, t := range targets {
		if t.role == r {
			return t
		}
	}
	return nil
}
