package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/time/rate"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/source"
)

// Route53Flags adds the flags that point a command at a Route 53 API.
func Route53Flags(fs *pflag.FlagSet, c *route53.Config) {
	fs.StringVar(&c.Endpoint, "aws-endpoint", "", "Route 53 API URL, e.g. the sandbox's http://"+sandbox.DefaultAPIAddr)
	fs.StringVar(&c.Region, "aws-region", "", "AWS region for signing (default: from the environment, else us-east-1)")
	fs.Float64Var(&c.RequestsPerSecond, "aws-route53-rate", route53.DefaultRequestsPerSecond,
		"Route 53 requests per second this process sends at most, retries included: Route 53's account limit is 10/s (negative: no pacing)")
	fs.IntVar(&c.Burst, "aws-route53-burst", route53.DefaultBurst, "Route 53 requests sent at once before --aws-route53-rate applies (Route 53's bucket holds 50)")
}

// Route53Limiter is the one token bucket every Route 53 client of the process shares
// (the publisher's, and each cutover's), so that together they keep within
// --aws-route53-rate; nil when pacing is off. Set once, before the first client.
func Route53Limiter(c *route53.Config) *rate.Limiter {
	if c.Limiter == nil {
		c.Limiter = route53.NewLimiter(c.RequestsPerSecond, c.Burst)
	}
	return c.Limiter
}

// Renamed flags: each old name is a hidden, deprecated alias of its new one for one
// minor version, so that a script written for the old name keeps working and is told the
// new one. DeprecatedAlias defines them.
const (
	// OldServiceDiscoveryEndpoint is cutover's and verify's old --cloudmap-endpoint: the
	// controller, the plan (spec.cloudMap) and the docs say Cloud Map.
	OldServiceDiscoveryEndpoint = "servicediscovery-endpoint"
	// OldVerifyCloudMap is verify's old --cloudmap-service: on the controller --cloudmap
	// is a switch, and the Service annotation is crossfade.io/cloudmap-service.
	OldVerifyCloudMap = "cloudmap"
)

// DeprecatedAlias defines old on fs as a hidden, deprecated name of fs's flag name, for
// command c: the two share one value (and so name's rule checks it), giving old prints
// "Flag --old has been deprecated, use --name", and giving both is a usage error, as the
// last one would otherwise win unseen.
func DeprecatedAlias(fc *FlagChecks, c *cobra.Command, fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("alias --%s of --%s, which is not defined", old, name))
	}
	alias := &pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal,
		// Its value is name's, which name's rules check.
		Annotations: map[string][]string{CheckedAnnotation: {"true"}}}
	fs.AddFlag(alias)
	// MarkDeprecated hides it too.
	_ = fs.MarkDeprecated(old, "use --"+name)
	if fc.aliases == nil {
		fc.aliases = map[*pflag.Flag]*pflag.Flag{}
	}
	fc.aliases[f] = alias
	fc.Check(c, func() error {
		if fs.Changed(old) && fs.Changed(name) {
			return fmt.Errorf("--%s: not with --%s, its old name; give --%s only", name, old, name)
		}
		return nil
	})
}

// CheckPublishFlags declares what the values of the flags PublishOptions.AddFlags defined
// in fl must be, for command c.
func CheckPublishFlags(fc *FlagChecks, c *cobra.Command, fl *pflag.FlagSet) {
	fc.Want(fl, "provider", OneOf("route53", "aws"))
	fc.Want(fl, "policy", OneOf(string(changes.Sync), string(changes.UpsertOnly), string(changes.CreateOnly)))
	fc.Want(fl, "domain-filter", Domain)
	fc.Want(fl, "exclude-domains", Domain)
	// The planner compares types as written: "a" would manage nothing.
	fc.Want(fl, "managed-record-types", OneOf(append([]string{endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME, endpoint.TypeTXT,
		endpoint.TypeMX, endpoint.TypeNS, endpoint.TypeSRV, endpoint.TypePTR, endpoint.TypeNAPTR}, UnpublishedTypes...)...))
	// UnpublishedTypes alone would run a sync that manages nothing and says it succeeded.
	fc.Check(c, func() error {
		types, _ := fl.GetStringSlice("managed-record-types")
		if planned, unpublished := splitManagedTypes(types); len(planned) == 0 && len(unpublished) > 0 {
			return fmt.Errorf("--managed-record-types %q: crossfade does not publish %s (accepted only beside a type it publishes), so nothing would be managed; want one or more of A, AAAA, CNAME, TXT, MX, NS, SRV, PTR, NAPTR",
				strings.Join(types, ","), strings.Join(unpublished, " or "))
		}
		return nil
	})
	fc.Want(fl, "txt-owner-id", OwnerID)
	CheckTXTFlags(fc, c, fl)
	fc.Want(fl, "annotation-prefix", AnnotationPrefix)
	// As external-dns v0.23 refuses it: the legacy prefix would be read twice, as the
	// configured one and as the fallback that yields to it.
	fc.Check(c, func() error {
		if legacy, _ := fl.GetBool("enable-legacy-annotation-prefix"); !legacy {
			return nil
		}
		prefixes, _ := fl.GetStringSlice("annotation-prefix")
		for _, p := range prefixes {
			if strings.HasPrefix(p, source.PrefixAlpha) {
				return fmt.Errorf("--enable-legacy-annotation-prefix: not with --annotation-prefix %q, which starts with the legacy prefix %s that it adds as a fallback", p, source.PrefixAlpha)
			}
		}
		return nil
	})
	fc.Want(fl, "annotation-filter", Selector("AnnotationFilter"))
	fc.Want(fl, "label-filter", Selector("LabelFilter"))
	fc.Want(fl, "namespace", Optional(K8sName("namespace", true)))
	CheckRoute53Flags(fc, fl)
	fc.Want(fl, "zone-id-filter", ZoneID)
	fc.Want(fl, "aws-zone-type", Optional(OneOf(route53.ZoneTypePublic, route53.ZoneTypePrivate)))
	fc.Want(fl, "aws-max-retries", IntRange(0, -1))
	fc.Want(fl, "max-delete-ratio", DeleteRatio)
	fc.Want(fl, "max-delete-min", IntRange(1, -1))
}

// DeleteRatio wants a share above 0 and at most 1 (NaN is not one): 0 would hold every
// deletion, and the guard takes 0 for its default.
func DeleteRatio(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil && x > 0 && x <= 1 {
		return nil
	}
	return errors.New("want a number above 0 and at most 1")
}

// CheckTXTFlags declares the rules of the ownership TXT name flags (--txt-prefix,
// --txt-suffix, --txt-wildcard-replacement) that fl defines.
func CheckTXTFlags(fc *FlagChecks, c *cobra.Command, fl *pflag.FlagSet) {
	fc.Want(fl, "txt-prefix", Optional(TXTAffix))
	fc.Want(fl, "txt-suffix", Optional(TXTAffix))
	if fl.Lookup("txt-wildcard-replacement") != nil {
		fc.Want(fl, "txt-wildcard-replacement", Optional(DNSLabelChars))
	}
	// The registry reads one form of ownership name, not both.
	fc.Check(c, func() error {
		return NotBoth("txt-prefix", "txt-suffix", fl.Lookup("txt-prefix").Value.String(), fl.Lookup("txt-suffix").Value.String())
	})
}

// CheckRoute53Flags declares the rules of Route53Flags' flags in fl.
func CheckRoute53Flags(fc *FlagChecks, fl *pflag.FlagSet) {
	fc.Want(fl, "aws-endpoint", Optional(HTTPURL))
	fc.Want(fl, "aws-region", Optional(AWSRegion))
	fc.Want(fl, "aws-route53-rate", PaceRate)
	fc.Want(fl, "aws-route53-burst", IntRange(1, -1))
}

// PaceRate wants a request rate: a finite number above 0, or below 0 for no pacing. 0
// would send nothing at all.
func PaceRate(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil && x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
		return nil
	}
	return errors.New("want requests per second above 0 (negative: no pacing)")
}

// SDKRetries is --aws-max-retries as awsconfig takes it: there 0 means its default and
// a negative value none, while the flag's 0 says "retry nothing".
func SDKRetries(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
