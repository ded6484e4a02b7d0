// Package route53 is crossfade's Route 53 provider, on aws-sdk-go-v2: zone discovery with
// external-dns's filters, record sets to and from the endpoint model, and one atomic
// ChangeResourceRecordSets call per batch, with a dry-run that renders the same batch as
// the AWS CLI's --change-batch JSON.
//
// Value conventions: TXT (and every type whose values are not domain names) values are
// kept exactly as Route 53 returns them, surrounding double quotes included
// (`"heritage=external-dns,external-dns/owner=a"`), and written back verbatim; the TXT
// registry parses and renders the quotes. Values of A, AAAA, CNAME, NS, PTR, MX and SRV
// sets are read lower case without a trailing dot. Names are read unescaped (`\052` → `*`),
// lower case, without the trailing dot, and written with the dot.
//
// Records returns every record set, SOA and the apex NS included: the planner leaves types
// and names it does not manage alone, and needs to see them to avoid conflicts.
package route53

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// Zone types for Config.ZoneType, as external-dns's --aws-zone-type spells them.
const (
	ZoneTypeAny     = ""
	ZoneTypePublic  = "public"
	ZoneTypePrivate = "private"
)

// Defaults.
const (
	// DefaultMaxRetries is how often a throttled or failed call is retried.
	DefaultMaxRetries = awsconfig.DefaultMaxRetries
	// DefaultRegion is used when neither Config nor the environment names one: Route 53 is
	// a global service signed in us-east-1.
	DefaultRegion = awsconfig.DefaultRegion
	// ChangeComment is the comment on every change batch crossfade sends.
	ChangeComment = "crossfade"
	// recordsPageSize is Route 53's largest ListResourceRecordSets page.
	recordsPageSize = 300
	// zonesPageSize is Route 53's largest ListHostedZones page.
	zonesPageSize = 100
)

// Config configures the provider.
type Config struct {
	// Endpoint overrides the Route 53 API URL (--aws-endpoint), e.g. the sandbox's.
	Endpoint string
	// Region overrides the region from the environment; Route 53 itself is global.
	Region string
	// DomainFilter keeps zones that can hold names it accepts (MatchZone).
	DomainFilter endpoint.DomainFilter
	// ZoneIDs keeps only these zones when non-empty (--zone-id-filter); the
	// "/hostedzone/" prefix is optional.
	ZoneIDs []string
	// ZoneType keeps public or private zones only: "", "public" or "private".
	ZoneType string
	// MaxRetries is how often the SDK retries a throttled, PriorRequestNotComplete or 5xx
	// call; 0 means DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
	// MaxBackoff caps the delay between retries; 0 keeps the SDK's 20 s.
	MaxBackoff time.Duration
	// Credentials overrides the standard credential chain (env, shared files, IRSA, IMDS).
	Credentials aws.CredentialsProvider
	// HTTPClient overrides the SDK's HTTP client; the environment's CA bundle
	// (AWS_CA_BUNDLE) is then the client's business.
	HTTPClient *http.Client
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// APIOptions are added to the SDK client's middleware stack, e.g. to count API calls
	// for metrics.
	APIOptions []func(*middleware.Stack) error
	// PreferCNAME publishes a CNAME to an AWS load balancer as the CNAME the source states
	// instead of the alias A and AAAA external-dns writes for it (external-dns's
	// --aws-prefer-cname). See AdjustEndpoints.
	PreferCNAME bool
	// RequestsPerSecond paces every request the Provider sends (each attempt of a retried
	// call too) with a token bucket, so that a cutover writing and polling a hundred zones
	// stays within the account's limit rather than being throttled: 0 means
	// DefaultRequestsPerSecond (Route 53's 10/s), a negative value turns pacing off.
	// Waiting for a slot ends with the call's context. Only New paces; NewFromClient's
	// client is the caller's.
	RequestsPerSecond float64
	// Burst is the bucket's size: requests sent at once before the rate applies; 0 means
	// DefaultBurst (Route 53's 50).
	Burst int
	// Limiter, when set, is the bucket instead of RequestsPerSecond and Burst: share one
	// (NewLimiter) between every Provider of a process calling one account. NewLimiter
	// gives none (nil) for a negative rate: a caller handing its answer on hands the rate
	// on too, else the Provider paces at the default one.
	Limiter *rate.Limiter
}

// API is the part of the Route 53 client the provider uses; *route53.Client implements it.
type API interface {
	ListHostedZones(ctx context.Context, in *route53.ListHostedZonesInput, optFns ...func(*route53.Options)) (*route53.ListHostedZonesOutput, error)
	ListResourceRecordSets(ctx context.Context, in *route53.ListResourceRecordSetsInput, optFns ...func(*route53.Options)) (*route53.ListResourceRecordSetsOutput, error)
	ChangeResourceRecordSets(ctx context.Context, in *route53.ChangeResourceRecordSetsInput, optFns ...func(*route53.Options)) (*route53.ChangeResourceRecordSetsOutput, error)
	GetChange(ctx context.Context, in *route53.GetChangeInput, optFns ...func(*route53.Options)) (*route53.GetChangeOutput, error)
}

// Provider reads and writes Route 53 hosted zones. It is safe for concurrent use.
type Provider struct {
	api     API
	cfg     Config
	log     *slog.Logger
	zoneIDs map[string]bool

	mu    sync.Mutex
	known []provider.Zone // every zone of the account, unfiltered: alias targets may lie anywhere
}

var _ provider.Provider = (*Provider)(nil)

// New builds a Route 53 client from the standard AWS configuration chain (environment,
// shared config files, web identity, instance metadata) and cfg's overrides.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	awsCfg, err := awsconfig.Load(ctx, awsconfig.Options{Region: cfg.Region, MaxRetries: cfg.MaxRetries,
		MaxBackoff: cfg.MaxBackoff, Credentials: cfg.Credentials})
	if err != nil {
		return nil, fmt.Errorf("route53: %w", err)
	}
	client := route53.NewFromConfig(awsCfg, func(o *route53.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// Set here rather than through LoadDefaultConfig, which refuses a plain
		// *http.Client when the environment names a CA bundle (AWS_CA_BUNDLE).
		if cfg.HTTPClient != nil {
			o.HTTPClient = cfg.HTTPClient
		}
		o.APIOptions = append(o.APIOptions, cfg.APIOptions...)
		if lim := cfg.limiter(); lim != nil {
			o.APIOptions = append(o.APIOptions, pace(lim, cfg.logger()))
		}
	})
	return newProvider(client, cfg), nil
}

// NewFromClient wraps an existing client (or a test double); cfg's client settings
// (Endpoint, Region, retries, Credentials, HTTPClient) are ignored, its filters apply.
func NewFromClient(api API, cfg Config) (*Provider, error) {
	if api == nil {
		return nil, errors.New("route53: nil client")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newProvider(api, cfg), nil
}

func newProvider(api API, cfg Config) *Provider {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provider{api: api, cfg: cfg, log: log.With("provider", "route53")}
	if len(cfg.ZoneIDs) > 0 {
		p.zoneIDs = make(map[string]bool, len(cfg.ZoneIDs))
		for _, id := range cfg.ZoneIDs {
			p.zoneIDs[trimZoneID(id)] = true
		}
	}
	return p
}

func (c Config) validate() error {
	switch c.ZoneType {
	case ZoneTypeAny, ZoneTypePublic, ZoneTypePrivate:
	default:
		return fmt.Errorf("route53: zone type %q: want \"public\", \"private\" or empty for both", c.ZoneType)
	}
	return c.validatePacing()
}

// Limits are Route 53's per-request limits.
func (p *Provider) Limits() changes.Limits { return changes.Route53Limits }

// Zones lists the account's hosted zones that pass the zone-id, zone-type and domain
// filters, in the order Route 53 lists them.
func (p *Provider) Zones(ctx context.Context) ([]provider.Zone, error) {
	all, err := p.listZones(ctx)
	if err != nil {
		return nil, err
	}
	var out []provider.Zone
	for _, z := range all {
		if p.keep(z) {
			out = append(out, z)
		}
	}
	p.log.DebugContext(ctx, "zones listed", "total", len(all), "kept", len(out))
	return out, nil
}

func (p *Provider) keep(z provider.Zone) bool {
	if p.zoneIDs != nil && !p.zoneIDs[z.ID] {
		return false
	}
	switch p.cfg.ZoneType {
	case ZoneTypePublic:
		if z.Private {
			return false
		}
	case ZoneTypePrivate:
		if !z.Private {
			return false
		}
	}
	return p.cfg.DomainFilter.MatchZone(z.Name)
}

// listZones pages through ListHostedZones and remembers the result for alias resolution.
func (p *Provider) listZones(ctx context.Context) ([]provider.Zone, error) {
	var all []provider.Zone
	pages := route53.NewListHostedZonesPaginator(p.api, &route53.ListHostedZonesInput{MaxItems: aws.Int32(zonesPageSize)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			// The SDK's error names the operation ("operation error Route 53:
			// ListHostedZones"); a second name for it reads as a second failure.
			if _, named := errors.AsType[*smithy.OperationError](err); named {
				return nil, fmt.Errorf("route53: %w", err)
			}
			return nil, fmt.Errorf("route53: list hosted zones: %w", err)
		}
		for _, hz := range page.HostedZones {
			z := provider.Zone{ID: trimZoneID(aws.ToString(hz.Id)), Name: UnescapeName(aws.ToString(hz.Name))}
			if hz.Config != nil {
				z.Private = hz.Config.PrivateZone
			}
			all = append(all, z)
		}
	}
	p.mu.Lock()
	p.known = all
	p.mu.Unlock()
	return all, nil
}

// resolver returns the known zones for alias resolution, listing them once if Zones has
// not run yet.
func (p *Provider) resolver(ctx context.Context) (aliasResolver, error) {
	p.mu.Lock()
	known := p.known
	p.mu.Unlock()
	if known == nil {
		var err error
		if known, err = p.listZones(ctx); err != nil {
			return aliasResolver{}, err
		}
	}
	return aliasResolver{known: known}, nil
}

// Records lists every record set of zone, 300 per call (Route 53's largest page).
func (p *Provider) Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error) {
	r, err := p.resolver(ctx)
	if err != nil {
		return nil, fmt.Errorf("zone %s: %w", zone, err)
	}
	var out []*endpoint.Endpoint
	calls, err := p.eachSet(ctx, zone, nil, func(rs types.ResourceRecordSet) bool {
		e := toEndpoint(rs, zone, r)
		if pol, ok := e.Prop(PropRoutingPolicy); ok {
			p.log.DebugContext(ctx, "record set with unsupported routing policy; read only",
				"zone", zone.Name, "zone_id", zone.ID, "record", e.Key().String(), "policy", pol)
		}
		out = append(out, e)
		return true
	})
	if err != nil {
		return nil, err
	}
	p.log.DebugContext(ctx, "records listed", "zone", zone.Name, "zone_id", zone.ID, "records", len(out), "calls", calls)
	return out, nil
}

// Apply sends batch to zone as one ChangeResourceRecordSets call: Route 53 applies all of
// it or none. It does not wait for the change to reach INSYNC.
func (p *Provider) Apply(ctx context.Context, zone provider.Zone, batch changes.Batch) error {
	_, err := p.ApplyChange(ctx, zone, batch, ChangeComment)
	return err
}

// ApplyChange is Apply with a comment of the caller's, returning the change id that
// GetChange follows to INSYNC: "" for an empty batch, and for a batch that an earlier
// attempt committed but whose answer was lost (the retry was refused, and the zone was
// found to hold the batch's outcome), whose id cannot be known.
func (p *Provider) ApplyChange(ctx context.Context, zone provider.Zone, batch changes.Batch, comment string) (string, error) {
	if len(batch) == 0 {
		return "", nil
	}
	r, err := p.resolver(ctx)
	if err != nil {
		return "", fmt.Errorf("zone %s: apply %d changes: %w", zone, len(batch), err)
	}
	cb, err := toChangeBatch(zone, batch, comment, r)
	if err != nil {
		return "", fmt.Errorf("zone %s: apply %d changes: %w", zone, len(batch), invalidChange(zone, batch, r, err))
	}
	start := time.Now()
	var attempts int
	out, err := p.api.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zone.ID), ChangeBatch: cb,
	}, countAttempts(&attempts))
	if err != nil {
		err = rejected(zone, err)
		var rej *provider.RejectedError
		if errors.As(err, &rej) && attempts > 1 {
			// The SDK retried: an earlier attempt may have committed and lost its
			// response, and the retry then fails on what it wrote ("already exists").
			// Route 53 applies a batch whole or not at all, so the batch committed when
			// the zone holds its outcome now.
			done, rerr := p.holdsOutcome(ctx, zone, cb)
			switch {
			case rerr != nil:
				// Not a refusal: the batch may well have landed. The caller retries on its
				// next read of the zone instead of splitting the batch as refused.
				err = fmt.Errorf("zone %s: a retry was refused (%s) and checking whether an earlier attempt committed failed: %w", zone, rej.Error(), rerr)
			case done:
				p.log.InfoContext(ctx, "change batch committed by an earlier attempt whose response was lost",
					"zone", zone.Name, "zone_id", zone.ID, "changes", len(batch), "attempts", attempts, "refusal", rej.Error())
				return "", nil
			}
		}
		// Debug only: the error is returned with this context and the caller logs it once.
		p.log.DebugContext(ctx, "change batch failed", "zone", zone.Name, "zone_id", zone.ID,
			"changes", len(batch), "attempts", attempts, "err", err)
		return "", fmt.Errorf("zone %s: apply %d changes: %w", zone, len(batch), err)
	}
	attrs := []any{"zone", zone.Name, "zone_id", zone.ID, "changes", len(batch), "duration", time.Since(start)}
	var id string
	if out.ChangeInfo != nil {
		id = aws.ToString(out.ChangeInfo.Id)
		attrs = append(attrs, "change_id", id, "status", string(out.ChangeInfo.Status))
	}
	p.log.InfoContext(ctx, "change batch applied", attrs...)
	return id, nil
}

// InSync reports whether the change id has reached INSYNC: every Route 53 name server
// answers with it.
func (p *Provider) InSync(ctx context.Context, id string) (bool, error) {
	out, err := p.api.GetChange(ctx, &route53.GetChangeInput{Id: aws.String(id)})
	if err != nil {
		return false, fmt.Errorf("get change %s: %w", id, err)
	}
	return out.ChangeInfo != nil && out.ChangeInfo.Status == types.ChangeStatusInsync, nil
}

// DryRun returns the --change-batch JSON of exactly what Apply would send for batch.
func (p *Provider) DryRun(ctx context.Context, zone provider.Zone, batch changes.Batch) ([]byte, error) {
	r, err := p.resolver(ctx)
	if err != nil {
		return nil, fmt.Errorf("zone %s: dry run: %w", zone, err)
	}
	cb, err := toChangeBatch(zone, batch, ChangeComment, r)
	if err != nil {
		return nil, fmt.Errorf("zone %s: dry run: %w", zone, err)
	}
	return marshalChangeBatch(cb)
}

// rejected turns Route 53's refusal of a batch (InvalidChangeBatch, InvalidInput) into a
// *provider.RejectedError and returns other errors unchanged.
func rejected(zone provider.Zone, err error) error {
	var icb *types.InvalidChangeBatch
	if errors.As(err, &icb) {
		msgs := slices.Clone(icb.Messages)
		if len(msgs) == 0 && icb.ErrorMessage() != "" {
			msgs = []string{icb.ErrorMessage()}
		}
		return &provider.RejectedError{Zone: zone, Code: icb.ErrorCode(), Messages: msgs, Err: err}
	}
	var ii *types.InvalidInput
	if errors.As(err, &ii) {
		return &provider.RejectedError{Zone: zone, Code: ii.ErrorCode(), Messages: []string{ii.ErrorMessage()}, Err: err}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidChangeBatch" {
		return &provider.RejectedError{Zone: zone, Code: ae.ErrorCode(), Messages: []string{ae.ErrorMessage()}, Err: err}
	}
	return err
}
