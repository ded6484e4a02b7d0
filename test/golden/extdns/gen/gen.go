// Package gen records what external-dns plans and writes for each input case in
// test/golden/cases, using external-dns's own code: registry/txt, plan and
// provider/aws (the real AWS provider, talking to an in-process fake Route 53 REST
// API that serves the case's current zone and records every
// ChangeResourceRecordSets request).
//
// It is compiled against whichever external-dns its main module selects: the
// extdns module (v0.21.0) and the extdns023 module (v0.23.0, a trimmed copy kept by
// scripts/deps.sh) each have a main that calls Main with the release they pin, and
// Main refuses to run if the linked external-dns is another one. The code below uses
// only what both releases offer, so it is shared, not copied.
package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/provider"
	awsprovider "sigs.k8s.io/external-dns/provider/aws"
	"sigs.k8s.io/external-dns/registry/txt"
)

// ---------------------------------------------------------------- case input

type caseRecord struct {
	Name             string            `json:"name"`
	Type             string            `json:"type"`
	Targets          []string          `json:"targets"`
	TTL              int64             `json:"ttl"`
	SetIdentifier    string            `json:"setIdentifier"`
	Weight           *int64            `json:"weight"`
	Failover         string            `json:"failover"`
	Resource         string            `json:"resource,omitempty"`
	ProviderSpecific map[string]string `json:"providerSpecific"`
}

type testCase struct {
	Description string       `json:"description"`
	OwnerID     string       `json:"ownerID"`
	Policy      string       `json:"policy"`
	TXTPrefix   string       `json:"txtPrefix"`
	TXTSuffix   string       `json:"txtSuffix"`
	Current     []caseRecord `json:"current"`
	Desired     []caseRecord `json:"desired"`
}

const (
	psWeight   = "aws/weight"
	psFailover = "aws/failover"
)

// toEndpoint maps a case record onto an external-dns endpoint the way a source
// would emit it (desired) - the resource label is only set when given.
func (r caseRecord) toEndpoint() *endpoint.Endpoint {
	ep := endpoint.NewEndpointWithTTL(r.Name, r.Type, endpoint.TTL(r.TTL), r.Targets...)
	if ep == nil {
		log.Fatalf("invalid record name %q", r.Name)
	}
	ep.SetIdentifier = r.SetIdentifier
	keys := make([]string, 0, len(r.ProviderSpecific))
	for k := range r.ProviderSpecific {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ep.WithProviderSpecific(k, r.ProviderSpecific[k])
	}
	if r.Weight != nil {
		ep.WithProviderSpecific(psWeight, strconv.FormatInt(*r.Weight, 10))
	}
	if r.Failover != "" {
		ep.WithProviderSpecific(psFailover, r.Failover)
	}
	if r.Resource != "" {
		ep.Labels[endpoint.ResourceLabelKey] = r.Resource
	}
	return ep
}

// ---------------------------------------------------------------- golden output

type goldenEndpoint struct {
	Name             string            `json:"name"`
	Type             string            `json:"type"`
	Targets          []string          `json:"targets"`
	TTL              int64             `json:"ttl"`
	SetIdentifier    string            `json:"setIdentifier"`
	Weight           *int64            `json:"weight"`
	Failover         string            `json:"failover"`
	ProviderSpecific map[string]string `json:"providerSpecific"`
	Labels           map[string]string `json:"labels"`
}

type golden struct {
	Create       []goldenEndpoint `json:"create"`
	UpdateOld    []goldenEndpoint `json:"updateOld"`
	UpdateNew    []goldenEndpoint `json:"updateNew"`
	Delete       []goldenEndpoint `json:"delete"`
	Route53Order []string         `json:"route53Order"`
	// Route53ChangeBatches are the ChangeResourceRecordSets requests that
	// external-dns's real AWS provider sent to the fake Route 53 API, in the
	// order sent, one inner list per request (extra field, not in the minimal
	// format: consumers that do not know it can ignore it).
	Route53ChangeBatches [][]r53Change `json:"route53ChangeBatches"`
}

func toGolden(ep *endpoint.Endpoint) goldenEndpoint {
	g := goldenEndpoint{
		Name:             ep.DNSName,
		Type:             ep.RecordType,
		Targets:          append([]string{}, ep.Targets...),
		TTL:              int64(ep.RecordTTL),
		SetIdentifier:    ep.SetIdentifier,
		ProviderSpecific: map[string]string{},
		Labels:           map[string]string{},
	}
	for _, p := range ep.ProviderSpecific {
		switch p.Name {
		case psWeight:
			w, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil {
				log.Fatalf("endpoint %s: bad weight %q", ep.DNSName, p.Value)
			}
			g.Weight = &w
		case psFailover:
			g.Failover = p.Value
		default:
			g.ProviderSpecific[p.Name] = p.Value
		}
	}
	for k, v := range ep.Labels {
		g.Labels[k] = v
	}
	return g
}

func toGoldenList(eps []*endpoint.Endpoint) []goldenEndpoint {
	out := make([]goldenEndpoint, 0, len(eps))
	for _, ep := range eps {
		out = append(out, toGolden(ep))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.SetIdentifier != b.SetIdentifier {
			return a.SetIdentifier < b.SetIdentifier
		}
		return strings.Join(a.Targets, "\x00") < strings.Join(b.Targets, "\x00")
	})
	return out
}

// ---------------------------------------------------------------- capturing provider

// captureProvider is the provider the TXT registry wraps. It delegates to
// external-dns's real AWS provider (which reads the case's zone from the fake
// Route 53 API) and records the *plan.Changes the registry hands it, i.e.
// exactly what external-dns would give the AWS provider, TXT records included.
type captureProvider struct {
	inner  provider.Provider
	adjust bool
	// normalizeAlias ports external-dns v0.23's AliasNormalizingMiddleware (see
	// normalizeAliases); v0.21 has no such step.
	normalizeAlias bool
	captured       *golden // nil until ApplyChanges is called
	changes        *plan.Changes
}

func (c *captureProvider) Records(ctx context.Context) ([]*endpoint.Endpoint, error) {
	return c.inner.Records(ctx)
}

func (c *captureProvider) ApplyChanges(ctx context.Context, changes *plan.Changes) error {
	// Snapshot before the AWS provider sees them.
	c.captured = &golden{
		Create:    toGoldenList(changes.Create),
		UpdateOld: toGoldenList(changes.UpdateOld),
		UpdateNew: toGoldenList(changes.UpdateNew),
		Delete:    toGoldenList(changes.Delete),
	}
	c.changes = &plan.Changes{
		Create:    deepCopy(changes.Create),
		UpdateOld: deepCopy(changes.UpdateOld),
		UpdateNew: deepCopy(changes.UpdateNew),
		Delete:    deepCopy(changes.Delete),
	}
	return c.inner.ApplyChanges(ctx, changes)
}

func deepCopy(eps []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, e.DeepCopy())
	}
	return out
}

func (c *captureProvider) AdjustEndpoints(eps []*endpoint.Endpoint) ([]*endpoint.Endpoint, error) {
	if !c.adjust {
		return eps, nil
	}
	eps, err := c.inner.AdjustEndpoints(eps)
	if err != nil || !c.normalizeAlias {
		return eps, err
	}
	normalizeAliases(eps)
	return eps, nil
}

// normalizeAliases is a port of external-dns v0.23's
// provider/factory.AliasNormalizingMiddleware.AdjustEndpoints, which its
// provider/factory.Select wraps around every provider: an A record still marked alias
// "A", or an AAAA marked "AAAA", after the provider's AdjustEndpoints is marked "true",
// as Records reads an alias back. The generator builds the AWS provider with
// provider/aws.New rather than Select, which would compile every provider in, so it
// applies the port instead (it is four lines; the constructor is unexported).
func normalizeAliases(eps []*endpoint.Endpoint) {
	for _, ep := range eps {
		a, _ := ep.GetProviderSpecificProperty("alias")
		if (ep.RecordType == endpoint.RecordTypeA && a == "A") || (ep.RecordType == endpoint.RecordTypeAAAA && a == "AAAA") {
			ep.SetProviderSpecificProperty("alias", "true")
		}
	}
}

func (c *captureProvider) GetDomainFilter() endpoint.DomainFilterInterface {
	return c.inner.GetDomainFilter()
}

// ---------------------------------------------------------------- run one case

func runCase(ctx context.Context, fake *fakeRoute53, tc testCase, adjust, normalizeAlias bool) (*golden, error) {
	fake.reset(tc.Current)

	cfg := &externaldns.Config{
		TXTOwnerID:               tc.OwnerID,
		TXTPrefix:                tc.TXTPrefix,
		TXTSuffix:                tc.TXTSuffix,
		ManagedDNSRecordTypes:    []string{endpoint.RecordTypeA, endpoint.RecordTypeAAAA, endpoint.RecordTypeCNAME},
		AWSAPIRetries:            3,
		AWSBatchChangeSize:       1000,
		AWSBatchChangeSizeBytes:  32000,
		AWSBatchChangeSizeValues: 1000,
		AWSEvaluateTargetHealth:  true,
	}
	awsP, err := awsprovider.New(ctx, cfg, endpoint.NewDomainFilter(nil))
	if err != nil {
		return nil, fmt.Errorf("aws provider: %w", err)
	}
	cp := &captureProvider{inner: awsP, adjust: adjust, normalizeAlias: normalizeAlias}
	reg, err := txt.New(cfg, cp)
	if err != nil {
		return nil, fmt.Errorf("txt registry: %w", err)
	}
	policy, ok := plan.Policies[tc.Policy]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q", tc.Policy)
	}

	// Mirror controller.RunOnce.
	records, err := reg.Records(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry records: %w", err)
	}
	ctx = context.WithValue(ctx, provider.RecordsContextKey, records)
	var source []*endpoint.Endpoint
	for _, d := range tc.Desired {
		source = append(source, d.toEndpoint())
	}
	desired, err := reg.AdjustEndpoints(source)
	if err != nil {
		return nil, fmt.Errorf("adjust endpoints: %w", err)
	}
	p := &plan.Plan{
		Policies:       []plan.Policy{policy},
		Current:        records,
		Desired:        desired,
		DomainFilter:   endpoint.MatchAllDomainFilters{&endpoint.DomainFilter{}, reg.GetDomainFilter()},
		ManagedRecords: cfg.ManagedDNSRecordTypes,
		OwnerID:        reg.OwnerID(),
	}
	p = p.Calculate()
	if p.Changes.HasChanges() {
		if err := reg.ApplyChanges(ctx, p.Changes); err != nil {
			return nil, fmt.Errorf("apply changes: %w", err)
		}
	}

	g := cp.captured
	if g == nil {
		g = &golden{Create: []goldenEndpoint{}, UpdateOld: []goldenEndpoint{}, UpdateNew: []goldenEndpoint{}, Delete: []goldenEndpoint{}}
	}
	g.Route53ChangeBatches = fake.batches
	if g.Route53ChangeBatches == nil {
		g.Route53ChangeBatches = [][]r53Change{}
	}

	// route53Order from the real batches; ties (same action, name, type) that
	// external-dns leaves in map-iteration order are broken by set identifier.
	real := []r53Change{}
	for _, b := range fake.batches {
		real = append(real, b...)
	}
	sort.SliceStable(real, func(i, j int) bool { return lessChange(real[i], real[j]) })
	g.Route53Order = []string{}
	for _, c := range real {
		g.Route53Order = append(g.Route53Order, orderLine(c.Action, c.Name, c.Type, c.SetIdentifier))
	}

	// Cross-check against the port of sortChangesByActionNameType.
	var ported []string
	if cp.changes != nil {
		ported = portedOrder(cp.changes)
	}
	if strings.Join(ported, "\n") != strings.Join(g.Route53Order, "\n") {
		return nil, fmt.Errorf("ported route53 order differs from the real AWS provider's:\nport: %q\nreal: %q", ported, g.Route53Order)
	}
	return g, nil
}

func orderLine(action, name, typ, setID string) string {
	return strings.TrimSpace(strings.Join([]string{action, name, typ, setID}, " "))
}

func lessChange(a, b r53Change) bool {
	if a.Action != b.Action {
		return a.Action > b.Action // UPSERT > DELETE > CREATE
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	if a.Type != b.Type {
		return a.Type < b.Type
	}
	return a.SetIdentifier < b.SetIdentifier
}

// ---------------------------------------------------------------- main

// externalDNSModule is the module whose code the goldens record.
const externalDNSModule = "sigs.k8s.io/external-dns"

// linkedRelease is the version of external-dns this binary was built with, as its
// main module requires it (a replace by a directory keeps the required version).
func linkedRelease() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build information: cannot tell which %s is linked", externalDNSModule)
	}
	for _, d := range bi.Deps {
		if d.Path == externalDNSModule {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency of %s", externalDNSModule, bi.Main.Path)
}

// Main runs the generator with the command line's flags: every case in -cases is
// run through the linked external-dns, which must be release (e.g. "v0.21.0"), and
// its golden written to -out (defaultOut unless given).
func Main(release, defaultOut string) {
	casesDir := flag.String("cases", "../cases", "directory of NN-name.json input cases")
	outDir := flag.String("out", defaultOut, "directory for NN-name.golden.json output")
	adjust := flag.Bool("aws-adjust", true, "pass desired endpoints through the AWS provider's AdjustEndpoints, as external-dns --provider=aws does")
	verbose := flag.Bool("v", false, "external-dns debug logging")
	flag.Parse()

	// A golden recorded from another release than the directory says would make the
	// comparison lie, so a dependency upgrade that moved external-dns stops here.
	got, err := linkedRelease()
	if err != nil || got != release {
		fmt.Fprintf(os.Stderr, "golden generator: want %s@%s linked, have %q (%v)\n", externalDNSModule, release, got, err)
		os.Exit(1)
	}

	log.SetOutput(io.Discard)
	if *verbose {
		log.SetOutput(os.Stderr)
		log.SetLevel(log.DebugLevel)
	}
	fake := startFakeRoute53()
	defer fake.close()

	files, err := filepath.Glob(filepath.Join(*casesDir, "*.json"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "no cases in %s\n", *casesDir)
		os.Exit(1)
	}
	sort.Strings(files)
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	failed := false
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var tc testCase
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tc); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			failed = true
			continue
		}
		g, err := runCase(context.Background(), fake, tc, *adjust, release != "v0.21.0")
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			failed = true
			continue
		}
		out, err := json.MarshalIndent(g, "", "  ")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json") + ".golden.json"
		if err := os.WriteFile(filepath.Join(*outDir, name), append(out, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%-45s create=%d updateOld=%d updateNew=%d delete=%d route53=%d\n", name,
			len(g.Create), len(g.UpdateOld), len(g.UpdateNew), len(g.Delete), len(g.Route53Order))
	}
	if failed {
		os.Exit(1)
	}
}
