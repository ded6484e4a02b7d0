package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
)

// TestStaleCacheNeverOverwritesAHandedOverRecord: a controller syncing from its zone
// cache, after another writer handed the record's ownership to green (only the TXT
// changed, so the record's own DELETE would still match), must not replace the record:
// the ownership record is rewritten exactly as read in the same batch, Route 53 refuses
// the batch, and after re-listing the controller reports green's ownership.
func TestStaleCacheNeverOverwritesAHandedOverRecord(t *testing.T) {
	e := newEnv(t)
	s := e.syncer(t, "blue", changes.Sync)
	s.Provider = cache.New(e.p, cache.Config{})
	www := func(ip string) *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.NewTargets(ip),
			Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/www"}}
	}
	if rep, err := s.Sync(context.Background(), []*endpoint.Endpoint{www("192.0.2.1")}); err != nil || rep.Err() != nil {
		t.Fatalf("first sync: %v %v", err, rep.Err())
	}
	// The handover: the ownership record now says green.
	green := `"heritage=external-dns,external-dns/owner=green,external-dns/resource=service/default/www"`
	blue := strings.Replace(green, "owner=green", "owner=blue", 1)
	txt := func(v string) *types.ResourceRecordSet {
		return &types.ResourceRecordSet{Name: aws.String("a-www.example.com."), Type: types.RRTypeTxt, TTL: aws.Int64(300),
			ResourceRecords: []types.ResourceRecord{{Value: aws.String(v)}}}
	}
	_, err := route53test.Client(e.sb).ChangeResourceRecordSets(context.Background(), &awsr53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(e.zone.ID),
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{
			{Action: types.ChangeActionDelete, ResourceRecordSet: txt(blue)},
			{Action: types.ChangeActionCreate, ResourceRecordSet: txt(green)},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Blue's object changes; blue plans from its cache, which still says blue owns www.
	rep, err := s.Sync(context.Background(), []*endpoint.Endpoint{www("192.0.2.2")})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.state(t); !strings.Contains(strings.Join(got, "\n"), "www.example.com A simple 192.0.2.1") {
		t.Fatalf("blue overwrote the record green owns now:\n%s", strings.Join(got, "\n"))
	}
	if rep.Refused() != 1 {
		t.Errorf("refused %d names, want 1 (the stale write)", rep.Refused())
	}
	// The refusal re-listed the zone: the next sync sees green's ownership as a conflict.
	rep, err = s.Sync(context.Background(), []*endpoint.Endpoint{www("192.0.2.2")})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Conflicts(); len(c) != 1 || !strings.Contains(c[0].Reason, "green") {
		t.Errorf("conflicts after re-listing = %v, want one naming green", c)
	}
}
