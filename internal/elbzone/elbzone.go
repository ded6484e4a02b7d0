// Package elbzone knows the canonical hosted zone ids of AWS load balancers: the Route 53
// zone an alias record must name (AliasTarget.HostedZoneId) when its target is an Elastic
// Load Balancing DNS name.
//
// AWS fixes one such zone per region and per load balancer family: Classic and
// Application Load Balancers share one, Network Load Balancers have another. The table is
// the one AWS publishes in "Elastic Load Balancing endpoints and quotas"
// (https://docs.aws.amazon.com/general/latest/gr/elb.html#elb_region); external-dns v0.21
// and the Terraform AWS provider carry the same values. A region AWS opens later is
// simply not known here: its load balancers need an explicit zone id until the table is
// updated.
//
// The family is told by the shape of the DNS name, as AWS assigns them:
//
//	Classic / ALB:  [dualstack.][internal-]name-123.<region>.elb.amazonaws.com
//	NLB:            name-0123abcd.elb.<region>.amazonaws.com
//
// with `.amazonaws.com.cn` in the China regions.
package elbzone

import (
	"slices"
	"strings"
)

// zones are the canonical hosted zone ids of one region.
type zones struct {
	alb string // Classic and Application Load Balancers
	nlb string // Network Load Balancers
}

// byRegion is AWS's table by region.
var byRegion = map[string]zones{
	"af-south-1":     {alb: "Z268VQBMOI5EKX", nlb: "Z203XCE67M25HM"},
	"ap-east-1":      {alb: "Z3DQVH9N71FHZ0", nlb: "Z12Y7K3UBGUAD1"},
	"ap-east-2":      {alb: "Z02789141MW7T1WBU19PO", nlb: "Z09176273OC2HWIAUNYW"},
	"ap-northeast-1": {alb: "Z14GRHDCWA56QT", nlb: "Z31USIVHYNEOWT"},
	"ap-northeast-2": {alb: "ZWKZPGTI48KDX", nlb: "ZIBE1TIR4HY56"},
	"ap-northeast-3": {alb: "Z5LXEXXYW11ES", nlb: "Z1GWIQ4HH19I5X"},
	"ap-south-1":     {alb: "ZP97RAFLXTNZK", nlb: "ZVDDRBQ08TROA"},
	"ap-south-2":     {alb: "Z0173938T07WNTVAEPZN", nlb: "Z0711778386UTO08407HT"},
	"ap-southeast-1": {alb: "Z1LMS91P8CMLE5", nlb: "ZKVM4W9LS7TM"},
	"ap-southeast-2": {alb: "Z1GM3OXH4ZPM65", nlb: "ZCT6FZBF4DROD"},
	"ap-southeast-3": {alb: "Z08888821HLRG5A9ZRTER", nlb: "Z01971771FYVNCOVWJU1G"},
	"ap-southeast-4": {alb: "Z09517862IB2WZLPXG76F", nlb: "Z01156963G8MIIL7X90IV"},
	"ap-southeast-5": {alb: "Z06010284QMVVW7WO5J", nlb: "Z026317210H9ACVTRO6FB"},
	"ap-southeast-6": {alb: "Z023301818UFJ50CIO0MV", nlb: "Z01392953RKV2Q3RBP0KU"},
	"ap-southeast-7": {alb: "Z0390008CMBRTHFGWBCB", nlb: "Z054363131YWATEMWRG5L"},
	"ca-central-1":   {alb: "ZQSVJUPU6J1EY", nlb: "Z2EPGBW3API2WT"},
	"ca-west-1":      {alb: "Z06473681N0SF6OS049SD", nlb: "Z02754302KBB00W2LKWZ9"},
	"cn-north-1":     {alb: "Z1GDH35T77C1KE", nlb: "Z3QFB96KMJ7ED6"},
	"cn-northwest-1": {alb: "ZM7IZAIOVVDZF", nlb: "ZQEIKTCZ8352D"},
	"eu-central-1":   {alb: "Z215JYRZR1TBD5", nlb: "Z3F0SRJ5LGBH90"},
	"eu-central-2":   {alb: "Z06391101F2ZOEP8P5EB3", nlb: "Z02239872DOALSIDCX66S"},
	"eu-north-1":     {alb: "Z23TAZ6LKFMNIO", nlb: "Z1UDT6IFJ4EJM"},
	"eu-south-1":     {alb: "Z3ULH7SSC9OV64", nlb: "Z23146JA1KNAFP"},
	"eu-south-2":     {alb: "Z0956581394HF5D5LXGAP", nlb: "Z1011216NVTVYADP1SSV"},
	"eu-west-1":      {alb: "Z32O12XQLNTSW2", nlb: "Z2IFOLAFXWLO4F"},
	"eu-west-2":      {alb: "ZHURV8PSTC4K8", nlb: "ZD4D7Y8KGAS4G"},
	"eu-west-3":      {alb: "Z3Q77PNBQS71R4", nlb: "Z1CMS0P5QUZ6D5"},
	"il-central-1":   {alb: "Z09170902867EHPV2DABU", nlb: "Z0313266YDI6ZRHTGQY4"},
	"me-central-1":   {alb: "Z08230872XQRWHG2XF6I", nlb: "Z00282643NTTLPANJJG2P"},
	"me-south-1":     {alb: "ZS929ML54UICD", nlb: "Z3QSRYVP46NYYV"},
	"mx-central-1":   {alb: "Z023552324OKD1BB28BH5", nlb: "Z02031231H3ID6HYJ9A7U"},
	"sa-east-1":      {alb: "Z2P70J7HTTTPLU", nlb: "ZTK26PT1VY4CU"},
	"us-east-1":      {alb: "Z35SXDOTRQ7X7K", nlb: "Z26RNL4JYFTOTI"},
	"us-east-2":      {alb: "Z3AADJGX6KTTL2", nlb: "ZLMOA37VPKANP"},
	"us-gov-east-1":  {alb: "Z166TLBEWOO7G0", nlb: "Z1ZSMQQ6Q24QQ8"},
	"us-gov-west-1":  {alb: "Z33AYJ8TM3BH4J", nlb: "ZMG1MZ2THAWF1"},
	"us-west-1":      {alb: "Z368ELLRRE2KJ0", nlb: "Z24FKFUX50B4VW"},
	"us-west-2":      {alb: "Z1H1FL5HABSF5", nlb: "Z18D5FSROUN65G"},
}

// canonical holds every zone id of byRegion, for IsCanonicalZone.
var canonical = func() map[string]bool {
	m := make(map[string]bool, 2*len(byRegion))
	for _, z := range byRegion {
		m[z.alb], m[z.nlb] = true, true
	}
	return m
}()

// Partition domains: the China regions live under their own.
const (
	awsDomain   = "amazonaws.com"
	chinaDomain = "amazonaws.com.cn"
	chinaPrefix = "cn-"
)

// ZoneFor returns the canonical hosted zone id of the load balancer whose DNS name is
// dnsName, and false when dnsName is not a load balancer name of a known region. Case
// and a trailing dot do not matter. A name must lie inside AWS's own domain for its
// region's partition (`.amazonaws.com`, `.amazonaws.com.cn` for cn-* regions) and have
// at least one label (the load balancer's) before the region's ELB suffix; anything
// else, look-alikes such as `x.us-east-1.elb.amazonaws.com.example.net` included, is not
// a load balancer.
func ZoneFor(dnsName string) (zoneID string, ok bool) {
	name := strings.ToLower(strings.TrimSuffix(dnsName, "."))
	var rest, domain string
	// The partition domain: the China regions have their own.
	if r, found := strings.CutSuffix(name, "."+chinaDomain); found {
		rest, domain = r, chinaDomain
	} else if r, found := strings.CutSuffix(name, "."+awsDomain); found {
		rest, domain = r, awsDomain
	} else {
		return "", false
	}
	labels := strings.Split(rest, ".")
	n := len(labels)
	// The load balancer's own label(s), then two labels of ELB suffix.
	if n < 3 || slices.Contains(labels, "") {
		return "", false
	}
	var region string
	var nlb bool
	switch {
	case labels[n-1] == "elb": // <lb>.<region>.elb.amazonaws.com: Classic, ALB
		region = labels[n-2]
	case labels[n-2] == "elb": // <lb>.elb.<region>.amazonaws.com: NLB
		region, nlb = labels[n-1], true
	default:
		return "", false
	}
	if strings.HasPrefix(region, chinaPrefix) != (domain == chinaDomain) {
		return "", false
	}
	z, known := byRegion[region]
	if !known {
		return "", false
	}
	if nlb {
		return z.nlb, true
	}
	return z.alb, true
}

// IsCanonicalZone reports whether zoneID is the canonical hosted zone id of the load
// balancers of some region and family. Route 53's "/hostedzone/" prefix is accepted;
// ids compare exactly, as Route 53 returns them (upper case).
func IsCanonicalZone(zoneID string) bool {
	id := strings.TrimPrefix(strings.TrimPrefix(zoneID, "/"), "hostedzone/")
	return canonical[id]
}
