package cli

import (
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// externalDNSFlags are the flags external-dns defines (its pkg/apis/externaldns/types.go),
// by name, true for a boolean one: the union of v0.21.0's and v0.23.0's, so that a command
// line of either runs (v0.22.0 adds nothing v0.23.0 lacks). `crossfade controller` accepts
// those it does not define itself, with a warning, so that an external-dns command line
// copied unchanged does not crash-loop; any other flag it does not know is a usage error,
// so that a typo such as --dryrun never runs the controller for real. Those crossfade
// defines keep external-dns's meaning (--enable-legacy-annotation-prefix, --policy, ...).
var externalDNSFlags = map[string]bool{
	// akamai-*, pihole-api-version, plural-* and transip-*: v0.21.0 only (removed by v0.23.0).
	"akamai-access-token":                               false,
	"akamai-client-secret":                              false,
	"akamai-client-token":                               false,
	"akamai-edgerc-path":                                false,
	"akamai-edgerc-section":                             false,
	"akamai-serviceconsumerdomain":                      false,
	"alibaba-cloud-config-file":                         false,
	"alibaba-cloud-zone-type":                           false,
	"always-publish-not-ready-addresses":                true,
	"annotation-filter":                                 false,
	"annotation-prefix":                                 false,
	"aws-api-retries":                                   false,
	"aws-assume-role":                                   false,
	"aws-assume-role-external-id":                       false,
	"aws-batch-change-interval":                         false,
	"aws-batch-change-size":                             false,
	"aws-batch-change-size-bytes":                       false,
	"aws-batch-change-size-values":                      false,
	"aws-evaluate-target-health":                        true,
	"aws-prefer-cname":                                  true,
	"aws-profile":                                       false,
	"aws-sd-create-tag":                                 false,
	"aws-sd-service-cleanup":                            true,
	"aws-zone-match-parent":                             true,
	"aws-zone-tags":                                     false,
	"aws-zone-type":                                     false,
	"aws-zones-cache-duration":                          false,
	"azure-config-file":                                 false,
	"azure-maxretries-count":                            false,
	"azure-resource-group":                              false,
	"azure-subscription-id":                             false,
	"azure-user-assigned-identity-client-id":            false,
	"azure-zones-cache-duration":                        false,
	"batch-change-interval":                             false,
	"batch-change-size":                                 false,
	"cloudflare-custom-hostnames":                       true,
	"cloudflare-custom-hostnames-certificate-authority": false,
	"cloudflare-custom-hostnames-min-tls-version":       false,
	"cloudflare-dns-records-per-page":                   false,
	"cloudflare-proxied":                                true,
	"cloudflare-record-comment":                         false,
	"cloudflare-region-key":                             false,
	"cloudflare-regional-services":                      true,
	"combine-fqdn-annotation":                           true,
	"compatibility":                                     false,
	"connector-source-server":                           false,
	"coredns-prefix":                                    false,
	"coredns-strictly-owned":                            true,
	"crd-registry-namespace":                            false, // v0.23.0: the CRD registry's namespace
	"crd-source-apiversion":                             false,
	"crd-source-kind":                                   false,
	"create-ptr":                                        true,
	"default-targets":                                   false,
	"domain-filter":                                     false,
	"dry-run":                                           true,
	"dynamodb-region":                                   false,
	"dynamodb-table":                                    false,
	"enable-legacy-annotation-prefix":                   true, // v0.23.0 (crossfade defines it)
	"events":                                            true,
	"events-emit":                                       false,
	"exclude-domains":                                   false,
	"exclude-record-types":                              false,
	"exclude-target-net":                                false,
	"exclude-unschedulable":                             true,
	"exoscale-apienv":                                   false,
	"exoscale-apikey":                                   false,
	"exoscale-apisecret":                                false,
	"exoscale-apizone":                                  false,
	"exoscale-zones-cache-duration":                     false, // v0.23.0
	"expose-internal-ipv6":                              true,
	"force-default-targets":                             true,
	"fqdn-target-template":                              false,
	"fqdn-template":                                     false,
	"gateway-label-filter":                              false,
	"gateway-listener-sets":                             true,
	"gateway-name":                                      false,
	"gateway-namespace":                                 false,
	"gloo-namespace":                                    false,
	"godaddy-api-key":                                   false,
	"godaddy-api-ote":                                   true,
	"godaddy-api-secret":                                false,
	"godaddy-api-ttl":                                   false,
	"google-batch-change-interval":                      false,
	"google-batch-change-size":                          false,
	"google-project":                                    false,
	"google-zone-visibility":                            false,
	"ignore-hostname-annotation":                        true,
	"ignore-ingress-rules-spec":                         true,
	"ignore-ingress-tls-spec":                           true,
	"ignore-non-host-network-pods":                      true,
	"ingress-class":                                     false,
	"inmemory-zone":                                     false,
	"interval":                                          false,
	"kube-api-burst":                                    false,
	"kube-api-qps":                                      false,
	"kube-api-request-timeout":                          false,
	"kubeconfig":                                        false,
	"label-filter":                                      false,
	"listen-endpoint-events":                            true,
	"log-format":                                        false,
	"log-level":                                         false,
	"managed-record-types":                              false,
	"metrics-address":                                   false,
	"migrate-from-txt-owner":                            false,
	"min-event-sync-interval":                           false,
	"min-ttl":                                           false,
	"namespace":                                         false,
	"nat64-networks":                                    false,
	"ns1-endpoint":                                      false,
	"ns1-ignoressl":                                     true,
	"ns1-min-ttl":                                       false,
	"oci-auth-instance-principal":                       true,
	"oci-compartment-ocid":                              false,
	"oci-config-file":                                   false,
	"oci-zone-scope":                                    false,
	"oci-zones-cache-duration":                          false,
	"once":                                              true,
	"openshift-router-name":                             false,
	"ovh-api-rate-limit":                                false,
	"ovh-enable-cname-relative":                         true,
	"ovh-endpoint":                                      false,
	"pdns-api-key":                                      false,
	"pdns-server":                                       false,
	"pdns-server-id":                                    false,
	"pdns-skip-tls-verify":                              true,
	"pihole-api-version":                                false,
	"pihole-password":                                   false,
	"pihole-server":                                     false,
	"pihole-tls-skip-verify":                            true,
	"plural-cluster":                                    false,
	"plural-provider":                                   false,
	"pod-source-domain":                                 false,
	"policy":                                            false,
	"prefer-alias":                                      true,
	"provider-cache-time":                               false,
	"publish-host-ip":                                   true,
	"publish-internal-services":                         true,
	"regex-domain-exclusion":                            false,
	"regex-domain-filter":                               false,
	"registry":                                          false,
	"request-timeout":                                   false,
	"resolve-service-load-balancer-hostname":            true,
	"rfc2136-axfr":                                      true, // v0.23.0, replacing rfc2136-tsig-axfr
	"rfc2136-batch-change-size":                         false,
	"rfc2136-gss-tsig":                                  true,
	"rfc2136-host":                                      false,
	"rfc2136-insecure":                                  true,
	"rfc2136-kerberos-password":                         false,
	"rfc2136-kerberos-realm":                            false,
	"rfc2136-kerberos-username":                         false,
	"rfc2136-load-balancing-strategy":                   false,
	"rfc2136-min-ttl":                                   false,
	"rfc2136-port":                                      false,
	"rfc2136-skip-tls-verify":                           true,
	"rfc2136-tsig-axfr":                                 true,
	"rfc2136-tsig-keyname":                              false,
	"rfc2136-tsig-secret":                               false,
	"rfc2136-tsig-secret-alg":                           false,
	"rfc2136-use-tls":                                   true,
	"rfc2136-zone":                                      false,
	"server":                                            false,
	"service-type-filter":                               false,
	"skipper-routegroup-groupversion":                   false,
	"target-net-filter":                                 false,
	"target-template":                                   false,
	"tls-ca":                                            false,
	"tls-client-cert":                                   false,
	"tls-client-cert-key":                               false,
	"traefik-disable-new":                               true,
	"traefik-enable-legacy":                             true,
	"transip-account":                                   false,
	"transip-keyfile":                                   false,
	"txt-cache-interval":                                false,
	"txt-encrypt-aes-key":                               false,
	"txt-encrypt-enabled":                               true,
	"txt-owner-id":                                      false,
	"txt-prefix":                                        false,
	"txt-suffix":                                        false,
	"txt-wildcard-replacement":                          false,
	"unstructured-resource":                             false,
	"webhook-provider-idle-timeout":                     false, // v0.23.0
	"webhook-provider-max-body-size":                    false, // v0.23.0
	"webhook-provider-read-header-timeout":              false, // v0.23.0
	"webhook-provider-read-timeout":                     false,
	"webhook-provider-url":                              false,
	"webhook-provider-write-timeout":                    false,
	"webhook-server":                                    true,
	"zone-id-filter":                                    false,
	"zone-name-filter":                                  false,
}

// ignoredFlags say why some external-dns flags change nothing in crossfade (see
// AcceptExternalDNSFlags; the others are warned about as having no such setting).
var ignoredFlags = map[string]string{
	"min-event-sync-interval":   "crossfade debounces events itself (--debounce, --max-delay)",
	"txt-cache-interval":        "crossfade caches zones between reconciles and re-lists every --resync-interval",
	"aws-batch-change-size":     "batches follow Route 53's limits",
	"aws-batch-change-interval": "batches are written back to back",
	"request-timeout":           "client-go's defaults apply",
}

// AcceptExternalDNSFlags defines, hidden, every external-dns flag that c (the controller,
// already under its root, whose persistent flags count as its own) does not define, so that
// an external-dns command line parses; any other unknown flag stays a usage error. Boolean
// ones take kingpin's --no-NAME form too.
func AcceptExternalDNSFlags(c *cobra.Command) {
	fl := c.Flags()
	known := func(name string) bool { return fl.Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil }
	for name, boolean := range externalDNSFlags {
		names := []string{name}
		// --no-NAME of a flag crossfade defines stays unknown: ignoring it could ignore
		// what the line means, and pflag has no --no- form to honour it with.
		if boolean && !known(name) {
			names = append(names, "no-"+name)
		}
		for _, n := range names {
			if known(n) {
				continue
			}
			why := ignoredFlags[n]
			if why == "" {
				why = "crossfade has no such setting"
			}
			if boolean {
				fl.Bool(n, false, "external-dns flag, accepted and ignored: "+why)
			} else {
				fl.StringArray(n, nil, "external-dns flag, accepted and ignored: "+why)
			}
			_ = fl.MarkHidden(n)
			_ = fl.SetAnnotation(n, ExternalDNSOnly, []string{why})
		}
	}
}

// ExternalDNSOnly annotates the flags AcceptExternalDNSFlags defined.
const ExternalDNSOnly = "crossfade.io/external-dns-only"

// WarnIgnoredFlags logs each external-dns flag given that crossfade accepts but ignores.
func WarnIgnoredFlags(log *slog.Logger, fl *pflag.FlagSet) {
	fl.Visit(func(f *pflag.Flag) {
		if why, ok := f.Annotations[ExternalDNSOnly]; ok {
			log.Warn("flag accepted for external-dns compatibility and ignored", "flag", "--"+f.Name, "why", why[0])
		}
	})
}
