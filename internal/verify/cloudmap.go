package verify

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// CloudMapConfig says which Cloud Map service and query to verify, and what to expect.
type CloudMapConfig struct {
	// Service is the namespace, service, cluster attribute and the clients' query
	// (QueryParameters, OptionalParameters, HealthStatus), as a plan's spec.cloudMap.
	Service spec.CloudMap
	// Expect, when set, is two clusters' weights as a plan writes them (blue=90,
	// green=10): the answer must give the second cluster in key order the share of the
	// instances the Cloud Map lever's assignment of those weights gives it. Empty
	// expects only a non-empty answer.
	Expect map[string]int64
	// Tolerance is the largest allowed difference between that share answered and
	// expected.
	Tolerance float64
}

// CloudMapCluster is one cluster's instances: those the query selects at any health, and
// those the clients' query answers.
type CloudMapCluster struct {
	Cluster  string
	Selected int
	Answered int
	// Share is its share of the instances answered.
	Share float64
}

// CloudMapResult is the verification of one Cloud Map service and query.
type CloudMapResult struct {
	Service  spec.CloudMap
	Clusters []CloudMapCluster
	// Instances are the ids answered.
	Instances []string
	Pass      bool
	Detail    string
}

// RunCloudMap calls DiscoverInstances as the clients do, and at every health, and judges
// the answer with the cloudMapDiscovery gate when cfg expects weights (else it passes
// any non-empty answer).
func RunCloudMap(ctx context.Context, api gate.DiscoveryAPI, cfg CloudMapConfig) (*CloudMapResult, error) {
	c := cfg.Service
	if c.ClusterAttribute == "" {
		c.ClusterAttribute = spec.DefaultClusterAttribute
	}
	if c.HealthStatus == "" {
		c.HealthStatus = spec.HealthHealthyOrElseAll
	}
	what := c.Namespace + "/" + c.Service
	if len(cfg.Expect) != 0 && len(cfg.Expect) != 2 {
		return nil, fmt.Errorf("verify %s: expect two clusters' weights (from and to), not %d", what, len(cfg.Expect))
	}
	// Discover's error names the service ("discover instances of NAMESPACE/SERVICE"): it
	// is not named again.
	all, err := gate.Discover(ctx, api, c, "ALL", false)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	got, err := gate.Discover(ctx, api, c, c.HealthStatus, true)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	out := &CloudMapResult{Service: c, Instances: slices.Sorted(slices.Values(got.Instances))}
	clusters := map[string]bool{}
	for k := range all.ByCluster {
		clusters[k] = true
	}
	for k := range cfg.Expect {
		clusters[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(clusters)) {
		cl := CloudMapCluster{Cluster: k, Selected: all.ByCluster[k], Answered: got.ByCluster[k]}
		if len(got.Instances) > 0 {
			cl.Share = float64(cl.Answered) / float64(len(got.Instances))
		}
		out.Clusters = append(out.Clusters, cl)
	}
	if len(cfg.Expect) == 0 {
		out.Pass = len(got.Instances) > 0
		out.Detail = fmt.Sprintf("%s answers %d instances", c.HealthStatus, len(got.Instances))
		if !out.Pass {
			out.Detail += ": a client would find none"
		}
		return out, nil
	}
	names := slices.Sorted(maps.Keys(cfg.Expect))
	tol := cfg.Tolerance
	g, err := gate.NewCloudMapDiscovery("verify", spec.CloudMapDiscoveryGate{Tolerance: &tol}, &c, api)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", what, err)
	}
	res := g.Check(ctx, gate.Step{Index: -1, From: names[0], To: names[1], Weights: cfg.Expect})
	if res.Err != "" {
		// The gate's failures are Discover's, which name the service.
		if strings.Contains(res.Err, what) {
			return nil, fmt.Errorf("verify: %s", res.Err)
		}
		return nil, fmt.Errorf("verify %s: %s", what, res.Err)
	}
	out.Pass, out.Detail = res.Pass, res.Detail
	return out, nil
}

// WriteText prints each cluster's instances selected and answered, and the verdict.
func (r *CloudMapResult) WriteText(w io.Writer) error {
	var b strings.Builder
	q := "every instance"
	if len(r.Service.QueryParameters) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Service.QueryParameters)) {
			parts = append(parts, k+"="+r.Service.QueryParameters[k])
		}
		q = strings.Join(parts, ",")
	}
	fmt.Fprintf(&b, "Cloud Map %s/%s, query %s, %s: %d instances answered\n", r.Service.Namespace, r.Service.Service, q, r.Service.HealthStatus, len(r.Instances))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\tSELECTED\tANSWERED\tSHARE\n", strings.ToUpper(r.Service.ClusterAttribute))
	for _, c := range r.Clusters {
		name := c.Cluster
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%.1f%%\n", name, c.Selected, c.Answered, 100*c.Share)
	}
	tw.Flush()
	fmt.Fprintf(&b, "  instances: %s\n", strings.Join(r.Instances, " "))
	verdict := "ok: " + r.Detail
	if !r.Pass {
		verdict = "MISMATCH: " + r.Detail
	}
	fmt.Fprintf(&b, "%s\n", verdict)
	_, err := io.WriteString(w, b.String())
	return err
}
