package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/cli"
)

// Command lines that pass every check, to add one bad flag to.
var (
	syncLine     = []string{"sync", "--manifests=m", "--txt-owner-id=blue"}
	ctlLine      = []string{"controller", "--txt-owner-id=blue", "--source=service"}
	handoverLine = []string{"handover", "--zone=example.com", "--from=blue", "--to=green"}
	verifyLine   = []string{"verify", "--dns-server=127.0.0.1:53", "app.example.com"}
	verifyCMLine = []string{"verify", "--cloudmap-service=apps.local/api"}
)

// line is base with extra after it.
func line(base []string, extra ...string) []string { return slices.Concat(base, extra) }

// cutoverLine is `cutover sub plan.yaml` with extra.
func cutoverLine(sub string, extra ...string) []string {
	return slices.Concat([]string{"cutover", sub, "plan.yaml"}, extra)
}

// badValue is a command line with one refused flag value.
type badValue struct {
	args []string
	// flag is the flag refused; want is in the message too.
	flag, want string
}

// publishBadValues are bad values of the flags sync and controller share, after base.
func publishBadValues(base []string) []badValue {
	return []badValue{
		{line(base, "--provider=google"), "provider", `--provider "google": want route53 or aws`},
		{line(base, "--policy=upsert"), "policy", `--policy "upsert": want sync, upsert-only or create-only`},
		{line(base, "--max-delete-ratio=0"), "max-delete-ratio", `--max-delete-ratio "0": want a number above 0 and at most 1`},
		{line(base, "--max-delete-min=0"), "max-delete-min", `--max-delete-min "0": want an integer 1 or more`},
		{line(base, "--domain-filter=exa mple.com"), "domain-filter", `want a DNS domain`},
		{line(base, "--exclude-domains=a..b"), "exclude-domains", `--exclude-domains "a..b": want a DNS domain`},
		{line(base, "--managed-record-types=A,cname"), "managed-record-types", `--managed-record-types "cname": want A, AAAA, CNAME`},
		// external-dns v0.22/v0.23's types that crossfade does not publish, with none it does.
		{line(base, "--managed-record-types=DNAME,TLSA"), "managed-record-types", `--managed-record-types "DNAME,TLSA": crossfade does not publish DNAME or TLSA`},
		{line(base, "--txt-owner-id=blue,green"), "txt-owner-id", `--txt-owner-id "blue,green": want an owner id without`},
		{line(base, "--txt-owner-id="), "txt-owner-id", `--txt-owner-id "": want an owner id`},
		{line(base, "--txt-prefix=a b"), "txt-prefix", `--txt-prefix "a b": want letters`},
		{line(base, "--txt-suffix=x\"y"), "txt-suffix", `--txt-suffix "x\"y": want letters`},
		{line(base, "--txt-prefix=a-", "--txt-suffix=-b"), "txt-prefix", `--txt-prefix "a-" and --txt-suffix "-b": give one or the other`},
		{line(base, "--txt-wildcard-replacement=a.b"), "txt-wildcard-replacement", `--txt-wildcard-replacement "a.b": want 1 to 63 letters`},
		{line(base, "--annotation-prefix=example.com"), "annotation-prefix", `--annotation-prefix "example.com": want an annotation key prefix ending in "/"`},
		{line(base, "--enable-legacy-annotation-prefix", "--annotation-prefix=external-dns.alpha.kubernetes.io/"), "enable-legacy-annotation-prefix",
			`--enable-legacy-annotation-prefix: not with --annotation-prefix "external-dns.alpha.kubernetes.io/", which starts with the legacy prefix`},
		{line(base, "--annotation-prefix=dns.example.io/", "--annotation-prefix=external-dns.alpha.kubernetes.io/x/", "--enable-legacy-annotation-prefix"), "enable-legacy-annotation-prefix",
			`not with --annotation-prefix "external-dns.alpha.kubernetes.io/x/"`},
		{line(base, "--annotation-filter=a in b"), "annotation-filter", `--annotation-filter "a in b": want a selector`},
		{line(base, "--label-filter=a=b=c"), "label-filter", `--label-filter "a=b=c": want a selector`},
		{line(base, "--namespace=Kube_System"), "namespace", `--namespace "Kube_System": want a namespace name`},
		{line(base, "--aws-endpoint=127.0.0.1:10080"), "aws-endpoint", `--aws-endpoint "127.0.0.1:10080": want an http:// or https:// URL`},
		{line(base, "--aws-region=us east 1"), "aws-region", `--aws-region "us east 1": want an AWS region`},
		{line(base, "--zone-id-filter=z123"), "zone-id-filter", `--zone-id-filter "z123": want a hosted zone id`},
		{line(base, "--aws-zone-type=internal"), "aws-zone-type", `--aws-zone-type "internal": want public or private`},
		{line(base, "--aws-max-retries=-1"), "aws-max-retries", `--aws-max-retries "-1": want an integer 0 or more`},
		{line(base, "--aws-route53-rate=0"), "aws-route53-rate", `--aws-route53-rate "0": want requests per second above 0 (negative: no pacing)`},
		{line(base, "--aws-route53-rate=NaN"), "aws-route53-rate", `--aws-route53-rate "NaN": want requests per second`},
		{line(base, "--aws-route53-burst=0"), "aws-route53-burst", `--aws-route53-burst "0": want an integer 1 or more`},
	}
}

// badValues refuse at least one bad value of every flag that has a rule
// (TestFlagValueErrors checks that none is missed), and the flags that need or exclude
// another.
func badValues() []badValue {
	out := []badValue{
		{[]string{"--log-level=bogus", "cutover", "status", "plan.yaml"}, "log-level", `--log-level "bogus": want debug, info, warn or error`},
		{[]string{"sandbox", "--log-format=yaml"}, "log-format", `--log-format "yaml": want text or json`},
		{[]string{"cutover", "dashboard", "app", "--ui=192.0.2.1:8080"}, "ui", `--ui "192.0.2.1:8080": want a loopback listen address`},
		{[]string{"cutover", "dashboard", "app", "--namespace=Kube_System"}, "namespace", `--namespace "Kube_System": want a namespace name`},

		{[]string{"sandbox", "--api=127.0.0.1"}, "api", `--api "127.0.0.1": want a listen address`},
		{[]string{"sandbox", "--dns=127.0.0.1:99999"}, "dns", `--dns "127.0.0.1:99999": want a listen address`},
		{[]string{"sandbox", "--api=0.0.0.0:10080"}, "api", `--api "0.0.0.0:10080": not a loopback address`},
		{[]string{"sandbox", "--change-delay=-1s"}, "change-delay", `--change-delay "-1s": want a duration of 0s or more`},
		{[]string{"sandbox", "--target-addresses=192.0.2.11:8080=10.0.0.1:80"}, "target-addresses", `not a loopback address`},
		{[]string{"sandbox", "--cloudmap-health-delay=-1s"}, "cloudmap-health-delay", `want a duration of 0s or more`},
		{[]string{"sandbox", "--latency=-5ms"}, "latency", `--latency "-5ms": want a duration of 0s or more`},
		{[]string{"sandbox", "--throttle-rate=1.5"}, "throttle-rate", `--throttle-rate "1.5": want a number 0..1`},
		{[]string{"sandbox", "--prior-request-rate=-0.1"}, "prior-request-rate", `want a number 0..1`},
		{[]string{"sandbox", "--server-error-rate=NaN"}, "server-error-rate", `--server-error-rate "NaN": want a number 0..1`},
		{[]string{"sandbox", "--commit-then-fail-rate=2"}, "commit-then-fail-rate", `want a number 0..1`},
		{[]string{"sandbox", "--commit-then-drop-rate=2"}, "commit-then-drop-rate", `want a number 0..1`},
		{[]string{"sandbox", "--latency-rate=2"}, "latency-rate", `want a number 0..1`},
		{[]string{"sandbox", "--rate-limit=-5"}, "rate-limit", `--rate-limit "-5": want a number 0 or more`},
		{[]string{"sandbox", "--rate-burst=0"}, "rate-burst", `--rate-burst "0": want an integer 1 or more`},
		{[]string{"sandbox", "--fault-operations=change-resource-record-sets"}, "fault-operations", `want an API operation's name`},

		{[]string{"demo", "--ui=0.0.0.0:8080"}, "ui", `--ui "0.0.0.0:8080": want a loopback listen address`},
		{[]string{"demo", "--pause=0s"}, "pause", `--pause "0s": want a duration above 0`},
		{[]string{"demo", "--pause=500ms"}, "pause", `--pause "500ms": want 1s or more with --lever dns`},
		{[]string{"demo", "--clients=0"}, "clients", `--clients "0": want an integer 1 or more`},
		{[]string{"demo", "--interval=0s"}, "interval", `--interval "0s": want a duration above 0`},
		{[]string{"demo", "--lever=nlb"}, "lever", `--lever "nlb": want dns or alb`},

		{line(syncLine[:2], "--txt-owner-id=blue", "--manifests="), "manifests", `--manifests "": want a manifest file or directory`},
		{line(syncLine, "--dry-run-dir=out"), "dry-run-dir", `--dry-run-dir "out": needs --dry-run`},

		{line(ctlLine, "--master=https://"), "master", `--master "https://": want the Kubernetes API server's URL`},
		{[]string{"controller", "--txt-owner-id=blue", "--source=node", "--source=pod"}, "source", `--source "node,pod": none of these is a kind crossfade reads`},
		{[]string{"controller", "--txt-owner-id=blue", "--source=service,"}, "source", `--source "": want a kind to publish from`},
		{line(ctlLine, "--registry=dynamodb"), "registry", `--registry "dynamodb": want txt`},
		{line(ctlLine, "--crd-registry-namespace=Default"), "crd-registry-namespace", `want a namespace name`},
		{line(ctlLine, "--interval=0s"), "interval", `--interval "0s": want a duration above 0`},
		{line(ctlLine, "--debounce=-1s"), "debounce", `--debounce "-1s": want a duration above 0`},
		{line(ctlLine, "--max-delay=0s"), "max-delay", `want a duration above 0`},
		{line(ctlLine, "--resync-interval=0s"), "resync-interval", `want a duration above 0`},
		{line(ctlLine, "--crd-poll-interval=0s"), "crd-poll-interval", `want a duration above 0`},
		{line(ctlLine, "--cloudmap-operation-timeout=0s"), "cloudmap-operation-timeout", `want a duration above 0`},
		{line(ctlLine, "--kube-api-qps=0"), "kube-api-qps", `--kube-api-qps "0": want an integer 1 or more`},
		{line(ctlLine, "--kube-api-burst=0"), "kube-api-burst", `--kube-api-burst "0": want an integer 1 or more`},
		{line(ctlLine, "--full-reconcile-interval=0s"), "full-reconcile-interval", `--full-reconcile-interval "0s": want a duration above 0`},
		{line(ctlLine, "--reconcile-backoff-base=0s"), "reconcile-backoff-base", `--reconcile-backoff-base "0s": want a duration above 0`},
		{line(ctlLine, "--reconcile-backoff-max=-1s"), "reconcile-backoff-max", `--reconcile-backoff-max "-1s": want a duration above 0`},
		{line(ctlLine, "--reconcile-backoff-base=10s", "--reconcile-backoff-max=5s"), "reconcile-backoff-max", `--reconcile-backoff-max 5s is below --reconcile-backoff-base 10s`},
		{line(ctlLine, "--metrics-address=7979"), "metrics-address", `--metrics-address "7979": want a listen address`},
		{line(ctlLine, "--hold-probe-interval=-1m"), "hold-probe-interval", `--hold-probe-interval "-1m0s": want a duration of 0s or more (0 turns probing off)`},
		{line(ctlLine, "--hold-probe-servers=127.0.0.1"), "hold-probe-servers", `--hold-probe-servers "127.0.0.1": want host:port`},
		{line(ctlLine, "--cloudmap-endpoint=localhost"), "cloudmap-endpoint", `want an http:// or https:// URL`},
		{line(ctlLine, "--cloudmap-cluster-id= blue"), "cloudmap-cluster-id", `want an instance attribute value`},
		{line(ctlLine, "--cloudmap-namespace= apps.local"), "cloudmap-namespace", `want a Cloud Map namespace's name`},
		{line(ctlLine, "--leader-election-namespace=Default"), "leader-election-namespace", `want a namespace name`},
		{line(ctlLine, "--leader-election-id=crossfade_controller"), "leader-election-id", `want a Lease name`},
		{line(ctlLine, "--leader-election-lease-duration=0s"), "leader-election-lease-duration", `want a duration above 0`},
		{line(ctlLine, "--leader-election-renew-deadline=-1s"), "leader-election-renew-deadline", `want a duration above 0`},
		{line(ctlLine, "--leader-election-retry-period=0s"), "leader-election-retry-period", `want a duration above 0`},
		{line(ctlLine, "--leader-election-renew-deadline=10s"), "leader-election-renew-deadline", `want the lease duration above the renew deadline`},
		{line(ctlLine, "--leader-election-retry-period=5s"), "leader-election-retry-period", `want the renew deadline above 1.2 retry periods`},
		{line(ctlLine, "--ingress-class=Nginx"), "ingress-class", `--ingress-class "Nginx": want a IngressClass name`},
		{line(ctlLine, "--gateway-namespace=a.b"), "gateway-namespace", `want a namespace name`},
		{line(ctlLine, "--gateway-name=-gw"), "gateway-name", `want a Gateway name`},
		{line(ctlLine, "--gateway-label-filter=a in b"), "gateway-label-filter", `want a selector`},
		{line(ctlLine, "--cutovers", "--dns-server=:53"), "dns-server", `--dns-server ":53": want host:port of a DNS server`},
		{line(ctlLine, "--cutovers", "--elbv2-endpoint=x"), "elbv2-endpoint", `want an http:// or https:// URL`},
		{line(ctlLine, "--cutovers", "--cloudwatch-endpoint=x"), "cloudwatch-endpoint", `want an http:// or https:// URL`},
		{line(ctlLine, "--dns-server=192.0.2.53:53"), "dns-server", `--dns-server: only with --cutovers`},
		{line(ctlLine, "--cutovers", "--cutover-lease-duration=0s"), "cutover-lease-duration", `--cutover-lease-duration "0s": want a duration above 0`},
		{line(ctlLine, "--cutover-lease-duration=2s"), "cutover-lease-duration", `--cutover-lease-duration: only with --cutovers`},
		{line(ctlLine, "--cutovers", "--once"), "cutovers", `--cutovers: not with --once`},
		{line(ctlLine, "--cutovers", "--dry-run"), "cutovers", `--cutovers: not with --dry-run`},

		{[]string{"handover", "--zone=", "--from=blue", "--to=green"}, "zone", `--zone "": want a hosted zone's name or id`},
		{[]string{"handover", "--zone=example.com", "--from=a b", "--to=green"}, "from", `--from "a b": want an owner id without`},
		{[]string{"handover", "--zone=example.com", "--from=blue", "--to=gr=een"}, "to", `--to "gr=een": want an owner id without`},
		{[]string{"handover", "--zone=example.com", "--from=blue", "--to=blue"}, "to", `--from and --to are both "blue"`},
		{line(handoverLine, "--name=[a"), "name", `--name "[a": want a shell glob`},
		{line(handoverLine, "--txt-prefix=a b"), "txt-prefix", `want letters`},
		{line(handoverLine, "--txt-suffix=a b"), "txt-suffix", `want letters`},
		{line(handoverLine, "--txt-wildcard-replacement=*"), "txt-wildcard-replacement", `want 1 to 63 letters`},
		{line(handoverLine, "--aws-endpoint=ftp://x"), "aws-endpoint", `want an http:// or https:// URL`},
		{line(handoverLine, "--kube-api-qps=0"), "kube-api-qps", `want an integer 1 or more`},
		{line(handoverLine, "--kube-api-burst=-1"), "kube-api-burst", `want an integer 1 or more`},
		{line(handoverLine, "--aws-route53-rate=inf"), "aws-route53-rate", `want requests per second above 0`},
		{line(handoverLine, "--aws-route53-burst=-5"), "aws-route53-burst", `want an integer 1 or more`},
		{line(handoverLine, "--registry=dynamodb"), "registry", `--registry "dynamodb": want "txt" or "crd"`},
		{line(handoverLine, "--to-registry=dynamodb"), "to-registry", `--to-registry "dynamodb": want "txt" or "crd"`},
		{line(handoverLine, "--crd-registry-namespace=Default"), "crd-registry-namespace", `want a namespace name`},
		{line(handoverLine, "--master=https://"), "master", `--master "https://": want the Kubernetes API server's URL`},
		{line(handoverLine, "--aws-region=US_EAST"), "aws-region", `want an AWS region`},

		{line(verifyLine, "--type=BOGUS"), "type", `--type "BOGUS": want A, AAAA or CNAME`},
		{line(verifyLine, "--dns-server=ns1 example"), "dns-server", `--dns-server "ns1 example": want host:port of a DNS server`},
		{[]string{"verify", "app.example.com"}, "dns-server", `--dns-server: missing`},
		{line(verifyLine, "--queries=-1"), "queries", `--queries "-1": want an integer 1..100000`},
		{line(verifyLine, "--queries=0"), "queries", `--queries "0": want an integer 1..100000`},
		{line(verifyLine, "--tolerance=7"), "tolerance", `--tolerance "7": want a number 0..1`},
		{line(verifyLine, "--aws-endpoint=example.com"), "aws-endpoint", `want an http:// or https:// URL`},
		{line(verifyLine, "--aws-route53-rate=0"), "aws-route53-rate", `want requests per second above 0`},
		{line(verifyLine, "--aws-route53-burst=0"), "aws-route53-burst", `want an integer 1 or more`},
		{line(verifyLine, "--aws-region=a/b"), "aws-region", `want an AWS region`},
		{[]string{"verify", "--cloudmap-service=api"}, "cloudmap-service", `--cloudmap-service "api": want NAMESPACE/SERVICE`},
		// The old names (cli.DeprecatedAlias) are checked as the new ones, and named as given.
		{[]string{"verify", "--cloudmap=api"}, "cloudmap", `--cloudmap "api": want NAMESPACE/SERVICE`},
		{[]string{"verify", "--cloudmap=apps.local/api", "--cloudmap-service=apps.local/web"}, "cloudmap-service", `--cloudmap-service: not with --cloudmap, its old name`},
		{line(verifyCMLine, "--health-status=healthy"), "health-status", `--health-status "healthy": want HEALTHY_OR_ELSE_ALL, HEALTHY, ALL or UNHEALTHY`},
		{line(verifyCMLine, "--cluster-attribute=AWS_INSTANCE_IPV4"), "cluster-attribute", `want an instance attribute key`},
		{line(verifyCMLine, "--cloudmap-endpoint=x"), "cloudmap-endpoint", `--cloudmap-endpoint "x": want an http:// or https:// URL`},
		{line(verifyCMLine, "--servicediscovery-endpoint=x"), "servicediscovery-endpoint", `--servicediscovery-endpoint "x": want an http:// or https:// URL`},
		{line(verifyLine, "--servicediscovery-endpoint=http://127.0.0.1:1"), "servicediscovery-endpoint", `not with NAME`},
		{line(verifyCMLine, "--expect=blue=90"), "expect", `--expect "[blue=90]": want two clusters' weights`},
		{line(verifyCMLine, "--expect=blue=900,green=10"), "expect", `--expect blue=900: want a weight 0..255`},
		{line(verifyCMLine, "--expect=blue=0,green=0"), "expect", `want a weight above 0`},
		{line(verifyCMLine, "--query=cluster="), "query", `--query "cluster=": want an attribute value`},
		{line(verifyCMLine, "--optional=a b=c"), "optional", `--optional "a b=c": want an instance attribute key`},
		{line(verifyCMLine, "--type=AAAA"), "type", `--type "AAAA": not with --cloudmap`},
		{line(verifyLine, "--expect=blue=90,green=10"), "expect", `not with NAME`},

		{cutoverLine("run", "--state-dir="), "state-dir", `--state-dir "": want a directory`},
		{cutoverLine("plan", "--dns-server=:53"), "dns-server", `--dns-server ":53": want host:port of a DNS server`},
		{cutoverLine("plan", "--txt-prefix=a", "--txt-suffix=b"), "txt-prefix", `--txt-prefix "a" and --txt-suffix "b": give one or the other`},
		{cutoverLine("status", "--txt-suffix=a b"), "txt-suffix", `want letters`},
		{cutoverLine("abort", "--aws-endpoint=localhost:10080"), "aws-endpoint", `want an http:// or https:// URL`},
		{cutoverLine("run", "--aws-route53-rate=0"), "aws-route53-rate", `want requests per second above 0`},
		{cutoverLine("run", "--aws-route53-burst=0"), "aws-route53-burst", `want an integer 1 or more`},
		{cutoverLine("pause", "--aws-region=Us East"), "aws-region", `want an AWS region`},
		{cutoverLine("resume", "--elbv2-endpoint=x"), "elbv2-endpoint", `want an http:// or https:// URL`},
		{cutoverLine("promote", "--cloudmap-endpoint=x"), "cloudmap-endpoint", `--cloudmap-endpoint "x": want an http:// or https:// URL`},
		{cutoverLine("promote", "--servicediscovery-endpoint=x"), "servicediscovery-endpoint", `--servicediscovery-endpoint "x": want an http:// or https:// URL`},
		{cutoverLine("plan", "--servicediscovery-endpoint=http://127.0.0.1:1", "--cloudmap-endpoint=http://127.0.0.1:2"), "cloudmap-endpoint", `--cloudmap-endpoint: not with --servicediscovery-endpoint, its old name`},
		{cutoverLine("plan", "--cloudwatch-endpoint=x"), "cloudwatch-endpoint", `want an http:// or https:// URL`},
		{cutoverLine("run", "--write-retry-for=-1s"), "write-retry-for", `--write-retry-for "-1s": want a duration of 0s or more (0 retries nothing)`},
		{cutoverLine("run", "--ui=192.0.2.1:8080"), "ui", `--ui "192.0.2.1:8080": want a loopback listen address`},
		{cutoverLine("release", "--wait=-5s"), "wait", `--wait "-5s": want a duration of 0s or more (0 does not wait)`},
		{cutoverLine("pause", "--ack-timeout=-1s"), "ack-timeout", `--ack-timeout "-1s": want a duration of 0s or more (0 does not wait)`},
		{cutoverLine("resume", "--ack-timeout=-1s"), "ack-timeout", `want a duration of 0s or more`},
		{cutoverLine("promote", "--ack-timeout=-1s"), "ack-timeout", `want a duration of 0s or more`},
		{cutoverLine("abort", "--ack-timeout=-1s"), "ack-timeout", `want a duration of 0s or more`},

		{[]string{"kubectl", "get", "-o", "wide"}, "output", `--output "wide": want yaml or json`},
		{[]string{"kubectl", "status", "app", "-n", "Shop_1"}, "namespace", `--namespace "Shop_1": want a namespace name`},
		{[]string{"kubectl", "pause", "app", "--timeout=0s"}, "timeout", `--timeout "0s": want a duration above 0`},
		{[]string{"kubectl", "resume", "app", "--timeout=-1s"}, "timeout", `--timeout "-1s": want a duration above 0`},
		{[]string{"kubectl", "promote", "app", "--timeout=0s"}, "timeout", `want a duration above 0`},
		{[]string{"kubectl", "abort", "app", "--timeout=-5m"}, "timeout", `want a duration above 0`},
		{[]string{"kubectl", "release", "app", "--timeout=0s"}, "timeout", `want a duration above 0`},
	}
	out = append(out, publishBadValues(syncLine)...)
	return append(out, publishBadValues(ctlLine)...)
}

// TestFlagValueErrors: a bad flag value is a usage error (exit status 2) naming the
// command, the flag, the value and what the flag wants, before the command runs; every
// flag with a rule has a bad value refused here, and every command refuses a bad
// --log-level, which all inherit.
func TestFlagValueErrors(t *testing.T) {
	covered := map[string]bool{} // "<path of the command that defines it> --<flag>"
	root := newRootCmd()
	for _, bv := range badValues() {
		c, _, err := root.Find(bv.args)
		if err != nil {
			t.Fatalf("%v: %v", bv.args, err)
		}
		for p := c; p != nil; p = p.Parent() {
			covered[p.CommandPath()+" --"+bv.flag] = true
		}
		code, _, stderr := runLine(t, bv.args)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.CommandPath()+": ") || !strings.Contains(stderr, "--"+bv.flag) || !strings.Contains(stderr, bv.want) {
			t.Errorf("`crossfade %s` exited %d, stderr:\n%s\nwant exit status %d and a message from %q about --%s containing %q",
				strings.Join(bv.args, " "), code, stderr, cli.ExitUsage, c.CommandPath(), bv.flag, bv.want)
		}
	}
	cli.Walk(root, func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if _, ok := f.Annotations[cli.CheckedAnnotation]; ok && !covered[c.CommandPath()+" --"+f.Name] {
					t.Errorf("%s --%s has a rule, but no bad value of it is refused in badValues", c.CommandPath(), f.Name)
				}
			})
		}
		if c.HasSubCommands() {
			return
		}
		args := slices.Concat(strings.Fields(c.CommandPath())[1:], cmdSpecs[c.CommandPath()].args, requiredFlags(c), []string{"--log-level=loud"})
		code, _, stderr := runLine(t, args)
		if code != cli.ExitUsage || !strings.Contains(stderr, `--log-level "loud": want`) {
			t.Errorf("`crossfade %s` exited %d, stderr:\n%s\nwant exit status %d refusing --log-level", strings.Join(args, " "), code, stderr, cli.ExitUsage)
		}
	})
}

// freeFlags are the flags that take any value, each with why; every other flag that is
// not boolean has a rule (TestEveryFlagValueChecked).
var freeFlags = map[string]string{
	"crossfade sandbox --state":                "a file path: opening it is the sandbox's first read",
	"crossfade controller --kubeconfig":        "a file path: reading it is the controller's first read",
	"crossfade handover --kubeconfig":          "a file path: read as the controller reads it, before anything else",
	"crossfade cutover run --log-file":         "a file path: opened (created) when the run starts",
	"crossfade sync --dry-run-dir":             "a directory, written with --dry-run only (syncFlags.check)",
	"crossfade cutover dashboard --kubeconfig": "a file path: read as kubectl reads it, by the command",
	"crossfade kubectl --kubeconfig":           "a file path: read as kubectl reads it, by the command",
	"crossfade kubectl --context":              "a kubeconfig context's name, which may be any string (the kubeconfig says whether it exists)",
	"crossfade verify --query":                 "a map, checked as a whole with --cloudmap-service (verifyFlagsTogether)",
	"crossfade verify --optional":              "a map, checked as a whole with --cloudmap-service (verifyFlagsTogether)",
	"crossfade verify --expect":                "a map, checked as a whole with --cloudmap-service (verifyFlagsTogether)",
}

// TestEveryFlagValueChecked is the audit of the flags: every flag of every command that
// takes a value has a rule or is one of freeFlags, so that a new flag is considered
// too. The external-dns flags the controller ignores are left alone.
func TestEveryFlagValueChecked(t *testing.T) {
	seen := map[string]bool{}
	cli.Walk(newRootCmd(), func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				key := c.CommandPath() + " --" + f.Name
				seen[key] = true
				_, ignored := f.Annotations[cli.ExternalDNSOnly]
				_, checked := f.Annotations[cli.CheckedAnnotation]
				if ignored || checked || f.Value.Type() == "bool" || freeFlags[key] != "" {
					return
				}
				t.Errorf("%s: no rule for its values: declare one (cli.FlagChecks.Want) or list it in freeFlags with why", key)
			})
		}
	})
	for key := range freeFlags {
		if !seen[key] {
			t.Errorf("freeFlags names %q, which is not a flag", key)
		}
	}
}

// TestFlagValuesAccepted: the edges of what the rules allow still reach the command.
func TestFlagValuesAccepted(t *testing.T) {
	for _, args := range [][]string{
		{"--log-level=DEBUG", "--log-format=json", "sandbox"},
		{"sandbox", "--api=127.0.0.1:0", "--dns=[::1]:0", "--throttle-rate=0", "--server-error-rate=1", "--rate-limit=0", "--latency=0s", "--fault-operations=ChangeResourceRecordSets,ModifyRule"},
		{"sandbox", "--allow-remote", "--api=0.0.0.0:10080", "--dns=:10053"},
		{"demo", "--lever=alb", "--pause=100ms", "--ui=localhost:0"},
		{"demo", "--pause=1s", "--clients=1"},
		line(syncLine, "--dry-run", "--dry-run-dir=out", "--aws-max-retries=0", "--zone-id-filter=/hostedzone/Z1D633PJN98FT9", "--domain-filter=.example.com.", "--managed-record-types=A,TXT", "--aws-zone-type=private", "--txt-prefix=%{record_type}-", "--annotation-filter=a in (b)"),
		line(ctlLine, "--cutovers", "--dns-server=ns1.example.com", "--elbv2-endpoint=http://127.0.0.1:10080", "--cloudwatch-endpoint=https://monitoring.us-east-1.amazonaws.com"),
		line(ctlLine, "--source=node", "--hold-probe-interval=0s", "--master=10.0.0.1:6443", "--metrics-address=127.0.0.1:0", "--hold-probe-servers=[::1]:53", "--aws-endpoint=http://127.0.0.1:10080"),
		// An external-dns Deployment's arguments, as test/controller runs them.
		{"controller", "--source=service", "--source=ingress", "--source=node", "--domain-filter=example.com", "--provider=aws",
			"--policy=upsert-only", "--aws-zone-type=public", "--registry=txt", "--txt-owner-id=my-identifier",
			"--txt-prefix=", "--interval=1m", "--events", "--aws-sd-service-cleanup", "--txt-cache-interval=1h",
			"--min-event-sync-interval", "5s", "--aws-zones-cache-duration=3h", "--once"},
		line(ctlLine, "--enable-legacy-annotation-prefix", "--annotation-prefix=external-dns.kubernetes.io/"),
		line(ctlLine, "--enable-legacy-annotation-prefix", "--annotation-prefix=dns.example.io/"),
		line(syncLine, "--enable-legacy-annotation-prefix"),
		line(syncLine, "--aws-route53-rate=-1", "--aws-route53-burst=1"),
		line(syncLine, "--aws-route53-rate=0.5", "--aws-route53-burst=500"),
		line(syncLine, "--enable-legacy-annotation-prefix", "--annotation-prefix=external-dns.kubernetes.io/"),
		// external-dns v0.22/v0.23's DNAME and TLSA beside a type crossfade publishes.
		line(syncLine, "--managed-record-types=A,AAAA,CNAME,DNAME,TLSA"),
		line(ctlLine, "--managed-record-types=A", "--managed-record-types=TLSA", "--managed-record-types=DNAME"),
		line(handoverLine, "--zone=/hostedzone/Z123", "--name=*.shop.example.com"),
		line(verifyLine, "--type=aaaa", "--tolerance=0", "--dns-server=192.0.2.53", "--queries=100000"),
		line(verifyCMLine, "--tolerance=1", "--expect=blue=90,green=10", "--query=AWS_INSTANCE_PORT=80", "--health-status=ALL"),
		cutoverLine("release", "--wait=0s"),
		cutoverLine("abort", "--ack-timeout=0s"),
		cutoverLine("run", "--write-retry-for=0s", "--ui=127.0.0.1:0", "--dns-server=ns1.example.com"),
	} {
		code, _, stderr := runLine(t, args)
		if code != cli.ExitFailure || !strings.Contains(stderr, errRan.Error()) {
			t.Errorf("`crossfade %s` exited %d, stderr:\n%s\nwant it to reach the command", strings.Join(args, " "), code, stderr)
		}
	}
}
