package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/verify"
)

// VerifyOptions are `crossfade verify`'s flags, as the verify package takes them.
type VerifyOptions struct {
	// Verify is verify NAME's configuration, but for the NAME.
	Verify verify.Config
	// Route53 points at the Route 53 API (and its region at the Cloud Map API's).
	Route53 route53.Config
	// CloudMap is verify --cloudmap-service's configuration, but for the service's names.
	CloudMap verify.CloudMapConfig
	// CloudMapService is --cloudmap-service NAMESPACE/SERVICE; "" verifies a NAME.
	CloudMapService string
	// CloudMapEndpoint is the Cloud Map API URL; "" means Route53's.
	CloudMapEndpoint string
}

// AddFlags defines the flags on c and declares their checks in fc.
func (o *VerifyOptions) AddFlags(c *cobra.Command, fc *FlagChecks) {
	f := c.Flags()
	f.StringVar(&o.Verify.Type, "type", "A", "record type: A, AAAA or CNAME")
	f.StringSliceVar(&o.Verify.Servers, "dns-server", nil, "authoritative DNS servers (host:port) to ask, in turn; required for NAME")
	f.IntVar(&o.Verify.Queries, "queries", 1000, "queries to send")
	f.Float64Var(&o.Verify.Tolerance, "tolerance", 0.05, "largest allowed difference between a member's answered and written share, 0..1")
	Route53Flags(f, &o.Route53)
	f.StringVar(&o.CloudMapService, "cloudmap-service", "", "verify a Cloud Map service, NAMESPACE/SERVICE, instead of a weighted NAME")
	f.StringToStringVar(&o.CloudMap.Service.QueryParameters, "query", nil, "with --cloudmap-service: the clients' QueryParameters, k=v,…")
	f.StringToStringVar(&o.CloudMap.Service.OptionalParameters, "optional", nil, "with --cloudmap-service: the clients' OptionalParameters, k=v,…")
	f.StringVar(&o.CloudMap.Service.HealthStatus, "health-status", spec.HealthHealthyOrElseAll, "with --cloudmap-service: the clients' HealthStatus")
	f.StringVar(&o.CloudMap.Service.ClusterAttribute, "cluster-attribute", spec.DefaultClusterAttribute, "with --cloudmap-service: the instance attribute naming the cluster")
	f.StringToInt64Var(&o.CloudMap.Expect, "expect", nil, "with --cloudmap-service: two clusters' weights as the cutover plan writes them, e.g. blue=90,green=10")
	f.StringVar(&o.CloudMapEndpoint, "cloudmap-endpoint", "", "with --cloudmap-service: Cloud Map API URL (default: --aws-endpoint's)")
	DeprecatedAlias(fc, c, f, OldVerifyCloudMap, "cloudmap-service")
	DeprecatedAlias(fc, c, f, OldServiceDiscoveryEndpoint, "cloudmap-endpoint")
	fc.Want(f, "type", OneOfFold(endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME))
	fc.Want(f, "dns-server", DNSServer)
	// As a plan's dns gate's samples: 0 would be the gate's default, not "none".
	fc.Want(f, "queries", IntRange(1, 100000))
	fc.Want(f, "tolerance", Ratio)
	CheckRoute53Flags(fc, f)
	fc.Want(f, "cloudmap-service", Optional(cloudMapService))
	fc.Want(f, "health-status", OneOf(spec.HealthHealthyOrElseAll, spec.HealthHealthy, "ALL", "UNHEALTHY"))
	fc.Want(f, "cluster-attribute", CloudMapAttributeKey)
	fc.Want(f, "cloudmap-endpoint", Optional(HTTPURL))
	fc.Check(c, func() error { return verifyFlagsTogether(f, o.CloudMapService != "", o.CloudMap) })
}

// Args wants verify's NAME, or --cloudmap-service and no NAME.
func (o *VerifyOptions) Args() cobra.PositionalArgs { return VerifyArgs(&o.CloudMapService) }

// cloudMapService wants verify's --cloudmap-service NAMESPACE/SERVICE.
func cloudMapService(v string) error {
	if ns, svc, ok := strings.Cut(v, "/"); ok && ns != "" && svc != "" {
		return nil
	}
	return errors.New(`want NAMESPACE/SERVICE, e.g. "apps.local/api"`)
}

// verifyFlagsTogether refuses a flag of one form of verify given to the other (it would be
// ignored), a NAME without --dns-server, and an --expect, --query or --optional that
// cannot be what the clients send.
func verifyFlagsTogether(f *pflag.FlagSet, cloudMap bool, cm verify.CloudMapConfig) error {
	form, other := "NAME", []string{"query", "optional", "health-status", "cluster-attribute", "expect", "cloudmap-endpoint", OldServiceDiscoveryEndpoint}
	if cloudMap {
		form, other = "--cloudmap-service", []string{"type", "dns-server", "queries"}
	}
	for _, name := range other {
		if f.Changed(name) {
			return fmt.Errorf("--%s %q: not with %s, which does not use it", name, f.Lookup(name).Value.String(), form)
		}
	}
	if !cloudMap {
		if servers, _ := f.GetStringSlice("dns-server"); len(servers) == 0 {
			return errors.New("--dns-server: missing: verify NAME asks the authoritative DNS servers, host:port")
		}
		return nil
	}
	if n := len(cm.Expect); n != 0 && n != 2 {
		return fmt.Errorf("--expect %q: want two clusters' weights, e.g. blue=90,green=10", f.Lookup("expect").Value.String())
	}
	var sum int64
	for k, w := range cm.Expect {
		if w < 0 || w > 255 {
			return fmt.Errorf("--expect %s=%d: want a weight 0..255", k, w)
		}
		sum += w
	}
	if len(cm.Expect) > 0 && sum == 0 {
		return fmt.Errorf("--expect %q: want a weight above 0 for one of the clusters", f.Lookup("expect").Value.String())
	}
	for _, p := range []struct {
		flag   string
		params map[string]string
	}{{"query", cm.Service.QueryParameters}, {"optional", cm.Service.OptionalParameters}} {
		for k, v := range p.params {
			// A query may name Cloud Map's own AWS_ attributes.
			if err := CloudMapAttributeKey(strings.Replace(k, "AWS_", "aws_", 1)); err != nil {
				return fmt.Errorf("--%s %q: %w", p.flag, k+"="+v, err)
			}
			if v == "" || len(v) > 1024 {
				return fmt.Errorf("--%s %q: want an attribute value of 1 to 1024 characters", p.flag, k+"="+v)
			}
		}
	}
	return nil
}
