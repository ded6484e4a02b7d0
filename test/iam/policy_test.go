// Package iam_test proves deploy/iam-policy.json, deploy/iam-policy-cutover.json and
// deploy/iam-policy-cutover-alb.json against the code: the policies are well formed IAM
// identity policies that put each action on the resource type AWS authorizes it on, and
// (TestPoliciesMatchObservedCalls, TestALBPolicyMatchesObservedCalls) the Route 53, ELBv2
// and CloudWatch operations crossfade really calls, as the sandbox counts them, are
// exactly the actions each policy grants: not one more, not one fewer.
package iam_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/provider/route53"
)

// The policies, relative to this package.
const (
	// publishPolicyFile is for the in-cluster controller, `crossfade sync` and `crossfade
	// handover`: they list zones, read and write record sets.
	publishPolicyFile = "../../deploy/iam-policy.json"
	// cutoverPolicyFile is for the cutover runner (and `crossfade verify`), which also
	// follows each change to INSYNC with GetChange.
	cutoverPolicyFile = "../../deploy/iam-policy-cutover.json"
	// albPolicyFile is for the runner of an ALB cutover (spec.alb): it reads and writes
	// listener and listener-rule forward weights, reads target health and the ALB's
	// CloudWatch metrics, and touches no hosted zone.
	albPolicyFile = "../../deploy/iam-policy-cutover-alb.json"
)

// policyFiles are every policy the shape checks read.
var policyFiles = []string{publishPolicyFile, cutoverPolicyFile, albPolicyFile}

// resourceTypes is the resource type each action is authorized on, from the Service
// Authorization Reference ("Actions, resources, and condition keys for Amazon Route 53",
// "… for AWS Elastic Load Balancing V2", "… for Amazon CloudWatch"): "*" for an action
// that takes no resource (ListHostedZones, which lists the whole account; ELBv2's
// Describe* calls and CloudWatch's GetMetricData, which support no resource-level
// permissions), else the ARN's resource type. ELBv2's listener and listener-rule types
// cover Application (…/app/…) and Network (…/net/…) Load Balancers alike: the lever moves
// both's weighted forward actions. An action crossfade
// starts to call must be added here, from that table, before a policy may grant it.
var resourceTypes = map[string]string{
	"route53:ListHostedZones":                   "*",
	"route53:ListResourceRecordSets":            "hostedzone",
	"route53:ChangeResourceRecordSets":          "hostedzone",
	"route53:GetChange":                         "change",
	"elasticloadbalancing:DescribeListeners":    "*",
	"elasticloadbalancing:DescribeRules":        "*",
	"elasticloadbalancing:DescribeTargetGroups": "*",
	"elasticloadbalancing:DescribeTargetHealth": "*",
	"elasticloadbalancing:ModifyRule":           "listener-rule",
	"elasticloadbalancing:ModifyListener":       "listener",
	// The ALB lever's authority tags: on listener rules only (a listener's default
	// action through its default rule); DescribeTags, like every Describe call, takes no
	// resource.
	"elasticloadbalancing:AddTags":      "listener-rule",
	"elasticloadbalancing:RemoveTags":   "listener-rule",
	"elasticloadbalancing:DescribeTags": "*",
	"cloudwatch:GetMetricData":          "*",
	// The Cloud Map cutover's calls ("Actions, resources, and condition keys for AWS Cloud
	// Map"): the namespace and service lists and DiscoverInstances take no resource
	// (DiscoverInstances is narrowed by the servicediscovery:NamespaceName and ServiceName
	// condition keys), the rest a service.
	"servicediscovery:ListNamespaces":                   "*",
	"servicediscovery:ListServices":                     "*",
	"servicediscovery:DiscoverInstances":                "*",
	"servicediscovery:GetService":                       "service",
	"servicediscovery:ListInstances":                    "service",
	"servicediscovery:GetInstancesHealthStatus":         "service",
	"servicediscovery:UpdateInstanceCustomHealthStatus": "service",
	// The Cloud Map lever's authority tags, on the service only (the tagging actions also
	// take a namespace, which crossfade never tags).
	"servicediscovery:TagResource":         "service",
	"servicediscovery:UntagResource":       "service",
	"servicediscovery:ListTagsForResource": "service",
}

// changeActionsKey is the condition key that limits the changes a ChangeResourceRecordSets
// call may carry. crossfade sends CREATE and DELETE only (every replacement is a DELETE
// of the set exactly as read plus a CREATE: Route 53's only compare-and-swap), so the
// policies refuse an UPSERT, the blind overwrite.
const changeActionsKey = "route53:ChangeResourceRecordSetsActions"

// conditionKeys are the condition keys the policies may use, per action, with the values
// each key can take (Service Authorization Reference; the values as Route 53 normalizes
// them: upper case).
var conditionKeys = map[string]map[string][]string{
	"route53:ChangeResourceRecordSets": {changeActionsKey: {"CREATE", "DELETE", "UPSERT"}},
}

// conditionOperators are the operators the policies may use: ForAllValues, because the
// change-set keys are multivalued (one value per change of the batch), and every value
// must be allowed.
var conditionOperators = []string{"ForAllValues:StringEquals"}

// policy is an IAM identity policy document, as much of its grammar as the files may use.
type policy struct {
	Version   string
	Id        string `json:",omitempty"`
	Statement []statement
}

type statement struct {
	Sid       string
	Effect    string
	Action    stringOrList
	Resource  stringOrList
	Condition map[string]map[string]stringOrList `json:",omitempty"`
}

// stringOrList is an IAM element that is a string or a list of strings.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings, got %s", b)
	}
	*s = many
	return nil
}

// loadPolicy reads a policy strictly: an element it does not know (NotAction,
// NotResource, Principal, a misspelling) fails the test.
func loadPolicy(t *testing.T, path string) policy {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p policy
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON document", path)
	}
	return p
}

// changeActions returns the change actions (CREATE, DELETE, UPSERT) the policy lets a
// ChangeResourceRecordSets call carry, sorted: all three unless a condition limits them.
func (p policy) changeActions() []string {
	var out []string
	for _, st := range p.Statement {
		if !slices.Contains(st.Action, "route53:ChangeResourceRecordSets") {
			continue
		}
		allowed := conditionKeys["route53:ChangeResourceRecordSets"][changeActionsKey]
		for _, keys := range st.Condition {
			if v, ok := keys[changeActionsKey]; ok {
				allowed = v
			}
		}
		out = append(out, allowed...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// actions returns the policy's actions without their service prefix ("route53:",
// "elasticloadbalancing:", "cloudwatch:"), sorted: the operation names the sandbox counts.
// The shape check keeps each name on its own service.
func (p policy) actions() []string {
	var out []string
	for _, st := range p.Statement {
		for _, a := range st.Action {
			_, op, _ := strings.Cut(a, ":")
			out = append(out, op)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	// sidPattern is what IAM accepts as a statement id.
	sidPattern = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	// actionPattern is one Route 53, ELBv2 or CloudWatch action, named in full: no wildcard.
	actionPattern = regexp.MustCompile(`^(route53|elasticloadbalancing|cloudwatch):[A-Z][A-Za-z0-9]+$`)
	// arnPattern is a Route 53 resource ARN in any partition (aws, aws-cn, aws-us-gov):
	// Route 53 is global, so region and account are empty. The id is a zone or change id
	// (upper-case letters and digits) or "*".
	arnPattern = regexp.MustCompile(`^arn:aws(-cn|-us-gov)?:route53:::(hostedzone|change)/(\*|[A-Z0-9]+)$`)
	// elbARNPattern is an Application or Network Load Balancer listener or listener-rule
	// ARN in any partition, region ("*" or a name) and account ("*" or 12 digits), down to
	// listener/app/NAME/ID/ID or listener-rule/net/NAME/ID/ID/ID, or ending in "*" after
	// the load balancer type.
	elbARNPattern = regexp.MustCompile(`^arn:aws(-cn|-us-gov)?:elasticloadbalancing:(\*|[a-z]{2}(-[a-z]+)+-\d):(\*|\d{12}):(listener|listener-rule)/(app|net)/([A-Za-z0-9*/-]+)$`)
)

// arnResourceType is the resource type of a Route 53 or ELBv2 ARN, as resourceTypes names
// them; "" for any other string.
func arnResourceType(arn string) string {
	if m := arnPattern.FindStringSubmatch(arn); m != nil {
		return m[2]
	}
	if m := elbARNPattern.FindStringSubmatch(arn); m != nil {
		return m[5]
	}
	return ""
}

// TestPolicyShape checks each policy file as IAM would read it, and more strictly: version
// 2012-10-17, every statement an Allow with a Sid, actions named in full, each action on
// the resource type AWS authorizes it on and on nothing broader, "*" only where the action
// takes no resource.
func TestPolicyShape(t *testing.T) {
	for _, path := range policyFiles {
		t.Run(strings.TrimPrefix(path, "../../deploy/"), func(t *testing.T) {
			p := loadPolicy(t, path)
			if p.Version != "2012-10-17" {
				t.Errorf("Version %q, want 2012-10-17 (the older 2008-10-17 has no policy variables)", p.Version)
			}
			if len(p.Statement) == 0 {
				t.Fatal("no Statement")
			}
			sids := map[string]bool{}
			granted := map[string]string{} // action -> Sid of the statement granting it
			for i, st := range p.Statement {
				where := fmt.Sprintf("Statement[%d] (Sid %q)", i, st.Sid)
				switch {
				case !sidPattern.MatchString(st.Sid):
					t.Errorf("%s: Sid must be non-empty letters and digits", where)
				case sids[st.Sid]:
					t.Errorf("%s: Sid used twice", where)
				}
				sids[st.Sid] = true
				if st.Effect != "Allow" {
					t.Errorf("%s: Effect %q, want Allow", where, st.Effect)
				}
				if len(st.Action) == 0 || len(st.Resource) == 0 {
					t.Errorf("%s: needs Action and Resource", where)
					continue
				}
				var types []string
				for _, a := range st.Action {
					if !actionPattern.MatchString(a) {
						t.Errorf("%s: action %q: want service:Operation (route53, elasticloadbalancing or cloudwatch), named in full (no wildcard)", where, a)
						continue
					}
					if sid, ok := granted[a]; ok {
						t.Errorf("%s: %s is already granted by statement %q", where, a, sid)
					}
					granted[a] = st.Sid
					typ, ok := resourceTypes[a]
					if !ok {
						t.Errorf("%s: %s: its resource type is not in this test's table: add it from the Service Authorization Reference for its service", where, a)
						continue
					}
					types = append(types, typ)
				}
				// One statement, one resource type: a statement mixing ListHostedZones
				// ("*") with zone actions would grant the zone actions on every zone.
				slices.Sort(types)
				if types = slices.Compact(types); len(types) > 1 {
					t.Errorf("%s: mixes actions on resource types %v; give each its own statement", where, types)
					continue
				}
				for op, keys := range st.Condition {
					if !slices.Contains(conditionOperators, op) {
						t.Errorf("%s: condition operator %q: want one of %v", where, op, conditionOperators)
					}
					for key, values := range keys {
						for _, a := range st.Action {
							allowed, ok := conditionKeys[a][key]
							if !ok {
								t.Errorf("%s: condition key %q: not one %s supports (or not in this test's table)", where, key, a)
								continue
							}
							for _, v := range values {
								if !slices.Contains(allowed, v) {
									t.Errorf("%s: %s value %q: want one of %v", where, key, v, allowed)
								}
							}
						}
					}
				}
				for _, r := range st.Resource {
					switch {
					case len(types) == 0:
					case types[0] == "*" && r != "*":
						t.Errorf("%s: resource %q: %v take no resource, so IAM only matches them with \"*\"", where, r, st.Action)
					case types[0] != "*" && r == "*":
						t.Errorf("%s: resource \"*\" for %v: too broad, want an ARN of type %s", where, st.Action, types[0])
					case types[0] != "*":
						switch got := arnResourceType(r); got {
						case "":
							t.Errorf("%s: resource %q is not a Route 53 hosted zone or change ARN, nor an ALB or NLB listener or listener-rule ARN", where, r)
						case types[0]:
						default:
							t.Errorf("%s: resource %q is a %s ARN; %v are authorized on %s", where, r, got, st.Action, types[0])
						}
					}
				}
			}
		})
	}
}

// TestPoliciesCoverProviderAPI: every Route 53 operation of the provider's client
// interface (route53.API: every call crossfade makes goes through it) is granted by one of
// the policies, and the policies grant nothing outside it. It catches a new operation in
// a code path the end-to-end run below does not reach.
func TestPoliciesCoverProviderAPI(t *testing.T) {
	api := reflect.TypeFor[route53.API]()
	var methods []string
	for i := range api.NumMethod() {
		methods = append(methods, api.Method(i).Name)
	}
	slices.Sort(methods)
	all := append(loadPolicy(t, publishPolicyFile).actions(), loadPolicy(t, cutoverPolicyFile).actions()...)
	slices.Sort(all)
	all = slices.Compact(all)
	if !slices.Equal(all, methods) {
		t.Errorf("the policies grant %v; the provider's client interface (internal/provider/route53.API) has %v", all, methods)
	}
}
