package elb

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// DefaultAccountID is the account the sandbox's ARNs name unless Options say otherwise:
// the example account of AWS's own documentation.
const DefaultAccountID = "123456789012"

// DefaultRegion is the region of a request that does not name one (an unsigned request).
const DefaultRegion = "us-east-1"

// SandboxVPCID is the VPC of every sandbox load balancer: the sandbox has no EC2, so there
// is one made-up VPC. Target groups keep the VpcId they are given.
const SandboxVPCID = "vpc-0c0ffee5a4db0c0de"

// resource kinds, as the ARN's resource part begins.
const (
	kindLoadBalancer = "loadbalancer"
	kindTargetGroup  = "targetgroup"
	kindListener     = "listener"
	kindRule         = "listener-rule"
)

func (s *Store) arnPrefix(region string) string {
	return "arn:" + awsapi.Partition(region) + ":elasticloadbalancing:" + region + ":" + s.account + ":"
}

// newHexID is the 16-hex-digit id ELBv2 puts at the end of its ARNs.
func newHexID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dnsName is an ALB's DNS name, <name>-<number>.<region>.elb.amazonaws.com, with
// "internal-" in front for an internal one, as ELBv2 assigns them.
func dnsName(name, region string, internal bool) string {
	n, _ := rand.Int(rand.Reader, big.NewInt(9_000_000_000))
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	prefix := ""
	if internal {
		prefix = "internal-"
	}
	return fmt.Sprintf("%s%s-%d.%s.elb.%s", prefix, name, n.Int64()+1_000_000_000, region, domain)
}

// arnParts splits an ELBv2 ARN into its region and resource kind and reports whether it has
// the shape of one: arn:<partition>:elasticloadbalancing:<region>:<account>:<kind>/….
func arnParts(arn string) (region, kind string, ok bool) {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[2] != "elasticloadbalancing" || f[3] == "" {
		return "", "", false
	}
	kind, rest, found := strings.Cut(f[5], "/")
	if !found || rest == "" {
		return "", "", false
	}
	return f[3], kind, true
}

// arnKindNames are how ELBv2 names each kind in "'x' is not a valid … ARN".
var arnKindNames = map[string]string{
	kindLoadBalancer: "load balancer",
	kindTargetGroup:  "target group",
	kindListener:     "listener",
	kindRule:         "listener rule",
}

// checkARN refuses a string that is not an ARN of kind, as ELBv2 does before looking it up.
func checkARN(arn, kind string) *Error {
	if _, k, ok := arnParts(arn); !ok || k != kind {
		return validationf("'%s' is not a valid %s ARN", arn, arnKindNames[kind])
	}
	return nil
}

// lastSegments returns the part of an ARN after its kind: for a load balancer
// "app/<name>/<id>", for a listener "app/<name>/<lb id>/<id>".
func lastSegments(arn string) string {
	f := strings.SplitN(arn, ":", 6)
	_, rest, _ := strings.Cut(f[len(f)-1], "/")
	return rest
}
