package gate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// KindCloudMapDiscovery is the Cloud Map lever's gate.
const KindCloudMapDiscovery = "cloudMapDiscovery"

// cloudMapTimeout bounds one check's DiscoverInstances calls.
const cloudMapTimeout = 10 * time.Second

// maxDiscover is DiscoverInstances' largest MaxResults: an answer of up to this many
// instances is the whole set the query selects, not a random sample of it.
const maxDiscover = 1000

// DiscoveryAPI is the part of the Cloud Map API the cloudMapDiscovery gate (and verify)
// call; *servicediscovery.Client implements it.
type DiscoveryAPI interface {
	DiscoverInstances(ctx context.Context, in *sd.DiscoverInstancesInput, optFns ...func(*sd.Options)) (*sd.DiscoverInstancesOutput, error)
}

var _ DiscoveryAPI = (*sd.Client)(nil)

// CloudMapHealthy returns how many of from's nFrom and to's nTo instances a step of
// weights wFrom, wTo leaves HEALTHY: the pair whose to-share hTo/(hFrom+hTo) is closest to
// wTo/(wFrom+wTo), never both 0 (an empty answer), and among pairs with that share the
// one with the most instances (every instance a share allows keeps serving). Ties between
// two shares equally close go to the smaller share of to, so that the share never goes
// down as the step's goes up. ok is false when there is no instance at all or both
// weights are 0.
func CloudMapHealthy(nFrom, nTo int, wFrom, wTo int64) (hFrom, hTo int, ok bool) {
	if nFrom+nTo == 0 || wFrom < 0 || wTo < 0 || wFrom+wTo == 0 {
		return 0, 0, false
	}
	w := wFrom + wTo
	bestF, bestT := -1, -1
	// The distance |ht/(hf+ht) - wTo/w| as the fraction num/den, compared exactly.
	var bestNum, bestDen int64
	for hf := 0; hf <= nFrom; hf++ {
		for ht := 0; ht <= nTo; ht++ {
			n := int64(hf + ht)
			if n == 0 {
				continue
			}
			num := int64(ht)*w - wTo*n
			if num < 0 {
				num = -num
			}
			den := n * w
			if bestF < 0 {
				bestF, bestT, bestNum, bestDen = hf, ht, num, den
				continue
			}
			switch c := num*bestDen - bestNum*den; {
			case c < 0:
				bestF, bestT, bestNum, bestDen = hf, ht, num, den
			case c == 0:
				// Same distance: the same share with more instances, or the smaller share.
				sameShare := int64(ht)*int64(bestF+bestT) == int64(bestT)*n
				if sameShare && hf+ht > bestF+bestT || !sameShare && int64(ht)*int64(bestF+bestT) < int64(bestT)*n {
					bestF, bestT, bestNum, bestDen = hf, ht, num, den
				}
			}
		}
	}
	return bestF, bestT, true
}

// CloudMapDiscovery asks DiscoverInstances what the clients' query returns, and compares
// to's share of from's and to's instances in the answer with the share the step's health
// assignment gives (CloudMapHealthy over the instances the query selects at any health).
// An empty answer fails it at once: a client would find no instance.
type CloudMapDiscovery struct {
	name      string
	tolerance float64
	min       int
	svc       spec.CloudMap
	api       DiscoveryAPI
}

// NewCloudMapDiscovery builds the gate for the plan's service and query; it calls nothing.
func NewCloudMapDiscovery(name string, g spec.CloudMapDiscoveryGate, svc *spec.CloudMap, api DiscoveryAPI) (*CloudMapDiscovery, error) {
	if api == nil {
		return nil, fmt.Errorf("gate %s: no Cloud Map client to call DiscoverInstances with", name)
	}
	if svc == nil {
		return nil, fmt.Errorf("gate %s: a cloudMapDiscovery gate needs spec.cloudMap", name)
	}
	d := &CloudMapDiscovery{name: name, tolerance: spec.DefaultCloudMapTolerance, min: max(g.MinInstances, 1), svc: *svc, api: api}
	if g.Tolerance != nil {
		d.tolerance = *g.Tolerance
	}
	if d.svc.ClusterAttribute == "" {
		d.svc.ClusterAttribute = spec.DefaultClusterAttribute
	}
	if d.svc.HealthStatus == "" {
		d.svc.HealthStatus = spec.HealthHealthyOrElseAll
	}
	return d, nil
}

// Name is the gate's name.
func (d *CloudMapDiscovery) Name() string { return d.name }

// Answer is what one DiscoverInstances call returned, counted by cluster.
type Answer struct {
	// Instances are the ids returned; ByCluster counts them by the cluster attribute's
	// value ("" for an instance without it).
	Instances []string
	ByCluster map[string]int
}

// Discover calls DiscoverInstances for svc's service with health (the clients' health
// status, or ALL), its QueryParameters and, when optional, its OptionalParameters.
func Discover(ctx context.Context, api DiscoveryAPI, svc spec.CloudMap, health string, optional bool) (Answer, error) {
	in := &sd.DiscoverInstancesInput{NamespaceName: aws.String(svc.Namespace), ServiceName: aws.String(svc.Service),
		HealthStatus: sdtypes.HealthStatusFilter(health), QueryParameters: maps.Clone(svc.QueryParameters), MaxResults: aws.Int32(maxDiscover)}
	if optional {
		in.OptionalParameters = maps.Clone(svc.OptionalParameters)
	}
	out, err := api.DiscoverInstances(ctx, in)
	if err != nil {
		return Answer{}, fmt.Errorf("discover instances of %s/%s: %w", svc.Namespace, svc.Service, err)
	}
	a := Answer{ByCluster: map[string]int{}}
	for _, i := range out.Instances {
		a.Instances = append(a.Instances, aws.ToString(i.InstanceId))
		a.ByCluster[i.Attributes[svc.ClusterAttribute]]++
	}
	return a, nil
}

// Check discovers the instances twice, at every health (what the step assigns health
// over) and as the clients do, and judges the clients' answer.
func (d *CloudMapDiscovery) Check(ctx context.Context, s Step) Result {
	r := Result{Gate: d.name, Kind: KindCloudMapDiscovery}
	ctx, cancel := context.WithTimeout(ctx, cloudMapTimeout)
	defer cancel()
	all, err := Discover(ctx, d.api, d.svc, "ALL", false)
	if err != nil {
		return r.fail(err)
	}
	got, err := Discover(ctx, d.api, d.svc, d.svc.HealthStatus, true)
	if err != nil {
		return r.fail(err)
	}
	nf, nt := all.ByCluster[s.From], all.ByCluster[s.To]
	gf, gt := got.ByCluster[s.From], got.ByCluster[s.To]
	r.set("answer.instances", float64(len(got.Instances)))
	r.set(s.From+".instances", float64(gf))
	r.set(s.To+".instances", float64(gt))
	var parts []string
	for _, c := range sortedKeys(got.ByCluster) {
		name := c
		if name == "" {
			name = "(no " + d.svc.ClusterAttribute + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, got.ByCluster[c]))
	}
	summary := fmt.Sprintf("%s answers %d instances (%s)", d.svc.HealthStatus, len(got.Instances), strings.Join(parts, ", "))
	if len(got.Instances) < d.min {
		r.Detail = fmt.Sprintf("%s: want at least %d: a client would find %s", summary, d.min, map[bool]string{true: "no instance", false: "too few instances"}[len(got.Instances) == 0])
		return r
	}
	wf, wt := s.Weights[s.From], s.Weights[s.To]
	hf, ht, ok := CloudMapHealthy(nf, nt, wf, wt)
	if !ok {
		r.Detail = fmt.Sprintf("%s; the query selects %d instances of %s and %d of %s: no assignment of weights %s=%d %s=%d to judge it by", summary, nf, s.From, nt, s.To, s.From, wf, s.To, wt)
		return r
	}
	want := float64(ht) / float64(hf+ht)
	share := 0.0
	if gf+gt > 0 {
		share = float64(gt) / float64(gf+gt)
	}
	r.set(s.To+".share", share)
	r.set(s.To+".expected", want)
	detail := fmt.Sprintf("%s; %s's share %s, the step's assignment %d of %s and %d of %s healthy gives %s (±%s)",
		summary, s.To, fmtPct(share), hf, s.From, ht, s.To, fmtPct(want), fmtPct(d.tolerance))
	switch {
	case gf+gt == 0:
		r.Detail = detail + ": no instance of " + s.From + " or " + s.To + " answers"
	case math.Abs(share-want) > d.tolerance+1e-9:
		r.Detail = detail + ": off by more than the tolerance"
	default:
		r.Pass, r.Detail = true, detail
	}
	return r
}
