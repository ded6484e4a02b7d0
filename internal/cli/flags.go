package cli

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// Route53Flags adds the flags that point a command at a Route 53 API.
func Route53Flags(fs *pflag.FlagSet, c *route53.Config) {
	fs.StringVar(&c.Endpoint, "aws-endpoint", "", "Route 53 API URL, e.g. the sandbox's http://"+sandbox.DefaultAPIAddr)
	fs.StringVar(&c.Region, "aws-region", "", "AWS region for signing (default: from the environment, else us-east-1)")
}

// CheckPublishFlags declares what the values of the flags PublishOptions.AddFlags defined
// in fl must be, for command c.
func CheckPublishFlags(fc *FlagChecks, c *cobra.Command, fl *pflag.FlagSet) {
	fc.Want(fl, "provider", OneOf("route53", "aws"))
	fc.Want(fl, "policy", OneOf(string(changes.Sync), string(changes.UpsertOnly), string(changes.CreateOnly)))
	fc.Want(fl, "domain-filter", Domain)
	fc.Want(fl, "exclude-domains", Domain)
	// The planner compares types as written: "a" would manage nothing.
	fc.Want(fl, "managed-record-types", OneOf(endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME, endpoint.TypeTXT,
		endpoint.TypeMX, endpoint.TypeNS, endpoint.TypeSRV, endpoint.TypePTR, endpoint.TypeNAPTR))
	fc.Want(fl, "txt-owner-id", OwnerID)
	CheckTXTFlags(fc, c, fl)
	fc.Want(fl, "annotation-prefix", AnnotationPrefix)
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
}

// SDKRetries is --aws-max-retries as awsconfig takes it: there 0 means its default and
// a negative value none, while the flag's 0 says "retry nothing".
func SDKRetries(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
