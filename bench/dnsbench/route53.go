package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
)

const (
	zoneName = "bench.test."
	// changesPerBatch is Route 53's limit on one ChangeResourceRecordSets call; every
	// change here is a one-record CREATE, so it is also the record limit.
	changesPerBatch = 1000
)

// apiStats are the Route 53 API measurements.
type apiStats struct {
	batches []time.Duration // latency of each ChangeResourceRecordSets call, in order
	changes int
	total   time.Duration // wall time of all batches, back to back
	pages   int           // ListResourceRecordSets pages of the full walk
	sets    int           // record sets the walk returned
	walk    time.Duration
}

// hostName is the i-th benchmark name; the same list is served by both DNS servers.
func hostName(i int) string { return fmt.Sprintf("h%05d.%s", i, zoneName) }

// newRoute53Client points the real SDK client at the sandbox. route53.New with explicit
// options is what route53.NewFromConfig builds from an aws.Config; it avoids the config
// module (not a dependency of this repository) and any shared AWS settings of the user.
// Retries are off so that a failing call shows up as a failure, not as a slow batch.
func newRoute53Client(apiURL string) *route53.Client {
	return route53.New(route53.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("bench", "bench", ""),
		BaseEndpoint: aws.String(apiURL),
		Retryer:      aws.NopRetryer{},
	})
}

// zoneShape is what records each benchmark name gets in a sandbox's zone.
type zoneShape int

const (
	// weightedPairs: two weighted A sets per name, blue 1 → 127.0.0.1 and green 3 → 127.0.0.2.
	weightedPairs zoneShape = iota
	// plainA: one simple-routing A set per name, 127.0.0.1, as in Knot's and CoreDNS's zone file.
	plainA
)

func (s zoneShape) String() string {
	if s == plainA {
		return "plain A"
	}
	return "weighted A pairs"
}

// changes are the CREATEs of name in this shape.
func (s zoneShape) changes(name string) []types.Change {
	if s == plainA {
		return []types.Change{createPlain(name, "127.0.0.1")}
	}
	return []types.Change{createWeighted(name, "blue", 1, "127.0.0.1"), createWeighted(name, "green", 3, "127.0.0.2")}
}

// populateAPI creates bench.test. with names names in the given shape in 1,000-change
// batches, timing each batch, and then times a full ListResourceRecordSets walk of the zone.
func populateAPI(ctx context.Context, apiURL string, names int, shape zoneShape, log *slog.Logger) (apiStats, error) {
	client := newRoute53Client(apiURL)
	zoneID, err := createZone(ctx, client)
	if err != nil {
		return apiStats{}, err
	}
	st, err := writeBatches(ctx, client, zoneID, names, shape)
	if err != nil {
		return st, err
	}
	log.Info("zone populated", "shape", shape.String(), "zone_id", zoneID, "batches", len(st.batches), "changes", st.changes, "took", st.total.Round(time.Millisecond))
	if err := walkZone(ctx, client, zoneID, &st); err != nil {
		return st, err
	}
	// SOA and NS come with the zone; each name adds one set per change.
	if want := len(shape.changes(hostName(0)))*names + 2; st.sets != want {
		return st, fmt.Errorf("ListResourceRecordSets walk of %s (%s): %d record sets, want %d", zoneID, shape, st.sets, want)
	}
	return st, nil
}

func createZone(ctx context.Context, client *route53.Client) (string, error) {
	out, err := client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{
		Name:            aws.String(zoneName),
		CallerReference: aws.String(fmt.Sprintf("dnsbench-%d", time.Now().UnixNano())),
	})
	if err != nil {
		return "", fmt.Errorf("CreateHostedZone %s: %w", zoneName, err)
	}
	return strings.TrimPrefix(aws.ToString(out.HostedZone.Id), "/hostedzone/"), nil
}

// writeBatches sends the CREATEs back to back. Each batch is built before its timer starts,
// so the latency is the SDK call alone: serialisation, signing, HTTP and the server.
func writeBatches(ctx context.Context, client *route53.Client, zoneID string, names int, shape zoneShape) (apiStats, error) {
	var st apiStats
	changes := make([]types.Change, 0, changesPerBatch)
	flush := func() error {
		if len(changes) == 0 {
			return nil
		}
		in := &route53.ChangeResourceRecordSetsInput{
			HostedZoneId: aws.String(zoneID),
			ChangeBatch:  &types.ChangeBatch{Changes: changes, Comment: aws.String("dnsbench")},
		}
		start := time.Now()
		_, err := client.ChangeResourceRecordSets(ctx, in)
		d := time.Since(start)
		if err != nil {
			return fmt.Errorf("ChangeResourceRecordSets batch %d (%d changes): %w", len(st.batches)+1, len(changes), err)
		}
		st.batches = append(st.batches, d)
		st.changes += len(changes)
		st.total += d
		changes = make([]types.Change, 0, changesPerBatch)
		return nil
	}
	for i := range names {
		changes = append(changes, shape.changes(hostName(i))...)
		if len(changes) >= changesPerBatch {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	return st, flush()
}

func createWeighted(name, id string, weight int64, ip string) types.Change {
	return types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
		Name: aws.String(name), Type: types.RRTypeA, SetIdentifier: aws.String(id),
		Weight: aws.Int64(weight), TTL: aws.Int64(60),
		ResourceRecords: []types.ResourceRecord{{Value: aws.String(ip)}},
	}}
}

func createPlain(name, ip string) types.Change {
	return types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
		Name: aws.String(name), Type: types.RRTypeA, TTL: aws.Int64(60),
		ResourceRecords: []types.ResourceRecord{{Value: aws.String(ip)}},
	}}
}

// walkZone lists every record set of the zone with the SDK's paginator, at Route 53's
// largest page size (300), as external-dns does on each sync.
func walkZone(ctx context.Context, client *route53.Client, zoneID string, st *apiStats) error {
	p := route53.NewListResourceRecordSetsPaginator(client, &route53.ListResourceRecordSetsInput{
		HostedZoneId: aws.String(zoneID), MaxItems: aws.Int32(300),
	})
	start := time.Now()
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ListResourceRecordSets page %d: %w", st.pages+1, err)
		}
		st.pages++
		st.sets += len(page.ResourceRecordSets)
	}
	st.walk = time.Since(start)
	return nil
}
