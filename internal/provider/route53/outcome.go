package route53

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// countAttempts counts the attempts the SDK makes for one call, retries included: its
// middleware sits after the retry loop, which runs it once per attempt.
func countAttempts(n *int) func(*route53.Options) {
	return func(o *route53.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("crossfadeCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					*n++
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	}
}

// invalidChange finds the change of batch that toChangeBatch could not convert, for a
// typed error the caller can act on (drop that change's name, send the rest).
func invalidChange(zone provider.Zone, batch changes.Batch, r aliasResolver, err error) error {
	for i, c := range batch {
		if _, cerr := toChangeBatch(zone, changes.Batch{c}, "", r); cerr != nil {
			return &provider.InvalidChangeError{Zone: zone, Index: i, Change: c, Err: cerr}
		}
	}
	return err
}

// lookupKeysLimit is how many names and types holdsOutcome looks up one by one; past it,
// one listing of the whole zone costs fewer calls.
const lookupKeysLimit = 20

// holdsOutcome reports whether the zone holds what cb leaves behind: every set it
// creates or upserts as written, every set it only deletes absent.
func (p *Provider) holdsOutcome(ctx context.Context, zone provider.Zone, cb *types.ChangeBatch) (bool, error) {
	want := map[string]*types.ResourceRecordSet{} // set key -> the set, nil for "absent"
	var order []string
	type nameType struct{ name, typ string }
	var lookups []nameType
	for _, c := range cb.Changes {
		rs := c.ResourceRecordSet
		k := setKey(rs)
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		if c.Action == types.ChangeActionDelete {
			want[k] = nil
		} else {
			want[k] = rs
		}
		nt := nameType{UnescapeName(aws.ToString(rs.Name)), string(rs.Type)}
		if !slices.Contains(lookups, nt) {
			lookups = append(lookups, nt)
		}
	}
	have := map[string]types.ResourceRecordSet{}
	add := func(sets []types.ResourceRecordSet) {
		for _, rs := range sets {
			have[setKey(&rs)] = rs
		}
	}
	if len(lookups) > lookupKeysLimit {
		sets, err := p.listSets(ctx, zone, nil)
		if err != nil {
			return false, err
		}
		add(sets)
	} else {
		for _, nt := range lookups {
			sets, err := p.listSets(ctx, zone, &route53.ListResourceRecordSetsInput{
				StartRecordName: aws.String(nt.name + "."), StartRecordType: types.RRType(nt.typ),
			})
			if err != nil {
				return false, err
			}
			add(sets)
		}
	}
	for _, k := range order {
		got, ok := have[k]
		switch w := want[k]; {
		case w == nil && ok, w != nil && !ok:
			return false, nil
		case w != nil && canonicalSet(w) != canonicalSet(&got):
			return false, nil
		}
	}
	return true, nil
}

// eachSet pages through the zone's record sets, 300 a call (Route 53's largest page), from
// start (nil: the whole zone) and hands each to visit until visit returns false. It
// returns how many pages it read.
func (p *Provider) eachSet(ctx context.Context, zone provider.Zone, start *route53.ListResourceRecordSetsInput, visit func(types.ResourceRecordSet) bool) (int, error) {
	in := &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zone.ID), MaxItems: aws.Int32(recordsPageSize)}
	if start != nil {
		in.StartRecordName, in.StartRecordType = start.StartRecordName, start.StartRecordType
	}
	pages := route53.NewListResourceRecordSetsPaginator(p.api, in)
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("zone %s: list record sets (page %d): %w", zone, n+1, err)
		}
		n++
		for _, rs := range page.ResourceRecordSets {
			if !visit(rs) {
				return n, nil
			}
		}
	}
	return n, nil
}

// listSets lists the zone's record sets from start (nil: the whole zone); with a start,
// only the sets of its name and type, which Route 53 lists together.
func (p *Provider) listSets(ctx context.Context, zone provider.Zone, start *route53.ListResourceRecordSetsInput) ([]types.ResourceRecordSet, error) {
	var name string
	var typ types.RRType
	if start != nil {
		name, typ = UnescapeName(aws.ToString(start.StartRecordName)), start.StartRecordType
	}
	var out []types.ResourceRecordSet
	_, err := p.eachSet(ctx, zone, start, func(rs types.ResourceRecordSet) bool {
		if start != nil && (UnescapeName(aws.ToString(rs.Name)) != name || rs.Type != typ) {
			return false
		}
		out = append(out, rs)
		return true
	})
	return out, err
}

// setKey identifies a record set: name, type, set identifier.
func setKey(rs *types.ResourceRecordSet) string {
	return UnescapeName(aws.ToString(rs.Name)) + " " + string(rs.Type) + " " + aws.ToString(rs.SetIdentifier)
}

// canonicalSet renders every field of a set that Route 53 stores, normalised as Route
// 53 compares them (names case-insensitively, values as a set), to compare what was
// written with what is read back.
func canonicalSet(rs *types.ResourceRecordSet) string {
	var b strings.Builder
	b.WriteString(setKey(rs))
	if rs.Weight != nil {
		b.WriteString(" w=" + strconv.FormatInt(*rs.Weight, 10))
	}
	b.WriteString(" f=" + string(rs.Failover))
	if rs.TTL != nil {
		b.WriteString(" ttl=" + strconv.FormatInt(*rs.TTL, 10))
	}
	b.WriteString(" hc=" + aws.ToString(rs.HealthCheckId))
	if a := rs.AliasTarget; a != nil {
		fmt.Fprintf(&b, " alias=%s/%s/%t", trimZoneID(aws.ToString(a.HostedZoneId)), UnescapeName(aws.ToString(a.DNSName)), a.EvaluateTargetHealth)
	}
	vals := make([]string, len(rs.ResourceRecords))
	for i, rr := range rs.ResourceRecords {
		v := aws.ToString(rr.Value)
		if hostnameTypes[string(rs.Type)] {
			v = strings.ToLower(strings.TrimSuffix(v, "."))
		}
		vals[i] = v
	}
	slices.Sort(vals)
	b.WriteString(" v=" + strings.Join(vals, "\x00"))
	return b.String()
}
