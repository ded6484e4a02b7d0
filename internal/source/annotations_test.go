package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const (
	alpha  = PrefixAlpha
	stable = PrefixStable
)

// TestServiceAnnotations runs every annotation through a LoadBalancer Service, under
// both prefixes, and asserts the exact records or error text.
func TestServiceAnnotations(t *testing.T) {
	elb := host("lb-1.elb.amazonaws.com")
	tests := []struct {
		name string
		ann  map[string]string
		lb   []corev1.LoadBalancerIngress
		want string
	}{
		{"no annotations publishes nothing", nil, []corev1.LoadBalancerIngress{elb}, ""},
		{"hostname alpha", map[string]string{alpha + "hostname": "app.example.com"}, []corev1.LoadBalancerIngress{elb},
			"app.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"hostname stable", map[string]string{stable + "hostname": "App.Example.com."}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"app.example.com A 192.0.2.1 ttl=0 simple service/default/web\n"},
		{"hostname list with spaces and a trailing comma", map[string]string{alpha + "hostname": " a.example.com, b.example.com ,"}, []corev1.LoadBalancerIngress{ip("192.0.2.1"), ip("2001:db8::1")},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web\na.example.com AAAA 2001:db8::1 ttl=0 simple service/default/web\n" +
				"b.example.com A 192.0.2.1 ttl=0 simple service/default/web\nb.example.com AAAA 2001:db8::1 ttl=0 simple service/default/web\n"},
		{"same value under both prefixes", map[string]string{alpha + "hostname": "a.example.com", stable + "hostname": "a.example.com"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web\n"},
		{"different values under both prefixes", map[string]string{alpha + "hostname": "a.example.com", stable + "hostname": "b.example.com"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "a.example.com": conflicts with external-dns.kubernetes.io/hostname "b.example.com": set one of them, or both to the same value` + "\n"},
		{"ttl seconds", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "60"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 192.0.2.1 ttl=60 simple service/default/web\n"},
		{"ttl duration", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "1m30s"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 192.0.2.1 ttl=90 simple service/default/web\n"},
		{"ttl zero means unset", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "0"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web\n"},
		{"ttl not a number", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "soon"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/ttl "soon": want an integer number of seconds 1..2147483647 or a duration such as "5m"` + "\n"},
		{"ttl negative", map[string]string{alpha + "hostname": "a.example.com", stable + "ttl": "-5"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.kubernetes.io/ttl "-5": want an integer number of seconds 1..2147483647 or a duration such as "5m"` + "\n"},
		{"ttl too large", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "2147483648"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/ttl "2147483648": want an integer number of seconds 1..2147483647 or a duration such as "5m"` + "\n"},
		{"ttl below a second", map[string]string{alpha + "hostname": "a.example.com", alpha + "ttl": "500ms"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/ttl "500ms": want an integer number of seconds 1..2147483647 or a duration such as "5m"` + "\n"},
		{"target overrides status", map[string]string{alpha + "hostname": "a.example.com", alpha + "target": "198.51.100.1,198.51.100.2."}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 198.51.100.1,198.51.100.2 ttl=0 simple service/default/web\n"},
		{"target hostname", map[string]string{alpha + "hostname": "a.example.com", alpha + "target": "Edge.Example.net."}, nil,
			"a.example.com CNAME edge.example.net ttl=0 simple service/default/web\n"},
		{"bad target", map[string]string{alpha + "hostname": "a.example.com", alpha + "target": "not a host!"}, nil,
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/target "notahost!": want a hostname: label "notahost!" has character '!': want a-z, 0-9, '-', '_'` + "\n"},
		{"two hostname targets", map[string]string{alpha + "hostname": "a.example.com", alpha + "target": "x.example.net,y.example.net"}, nil,
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/target "x.example.net,y.example.net": a CNAME takes exactly one target` + "\n"},
		{"weighted", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "255"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME [blue] lb-1.elb.amazonaws.com ttl=0 weighted(255) service/default/web\n"},
		{"weight not a number", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "abc"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255` + "\n"},
		{"weight over 255", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "256"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "256": want an integer 0..255` + "\n"},
		{"weight negative", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "-1"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "-1": want an integer 0..255` + "\n"},
		{"weight without set identifier", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-weight": "10"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "10": set without set-identifier: a weighted record needs one` + "\n"},
		{"set identifier without policy", map[string]string{stable + "hostname": "a.example.com", stable + "set-identifier": "blue"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.kubernetes.io/set-identifier "blue": set without a routing policy: add a weight or a failover role` + "\n"},
		{"failover", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "one", alpha + "aws-failover": "primary"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME [one] lb-1.elb.amazonaws.com ttl=0 failover(PRIMARY) service/default/web\n"},
		{"failover bad role", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "one", alpha + "aws-failover": "first"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-failover "first": want PRIMARY or SECONDARY` + "\n"},
		{"failover without set identifier", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-failover": "SECONDARY"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-failover "SECONDARY": set without set-identifier: a failover record needs one` + "\n"},
		{"weight and failover", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "one", alpha + "aws-failover": "PRIMARY", alpha + "aws-weight": "1"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "1": a record takes one routing policy: set aws-weight or aws-failover, not both` + "\n"},
		{"health check and evaluate target health", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-health-check-id": "abc-123", alpha + "aws-evaluate-target-health": "False", alpha + "alias": "true"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web map[alias:true aws/evaluate-target-health:false aws/health-check-id:abc-123]\n"},
		{"empty health check", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-health-check-id": ""}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-health-check-id: want a Route 53 health check id` + "\n"},
		{"evaluate target health not a bool", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-evaluate-target-health": "yes"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-evaluate-target-health "yes": want "true" or "false"` + "\n"},
		{"alias false", map[string]string{alpha + "hostname": "a.example.com", alpha + "alias": "false"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"alias not a bool", map[string]string{alpha + "hostname": "a.example.com", alpha + "alias": "sure"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/alias "sure": want "true" or "false"` + "\n"},
		{"latency routing unsupported", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "x", alpha + "aws-region": "us-east-1"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-region "us-east-1": not supported by crossfade: it publishes simple, weighted and failover records (aws-weight, aws-failover, aws-health-check-id, aws-evaluate-target-health, aws-hosted-zone-id)` + "\n"},
		{"hosted zone id pins the record", map[string]string{stable + "hostname": "a.example.com", stable + "aws-hosted-zone-id": "Z0PRIVATE1"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web map[aws/hosted-zone-id:Z0PRIVATE1]\n"},
		{"hosted zone id with its path", map[string]string{alpha + "hostname": "a.example.com", alpha + "aws-hosted-zone-id": "/hostedzone/Z0PRIVATE1"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web map[aws/hosted-zone-id:Z0PRIVATE1]\n"},
		{"hosted zone id not one", map[string]string{stable + "hostname": "a.example.com", stable + "aws-hosted-zone-id": "z0private1"}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.kubernetes.io/aws-hosted-zone-id "z0private1": want a hosted zone id, e.g. "Z1D633PJN98FT9" or "/hostedzone/Z1D633PJN98FT9"` + "\n"},
		{"hosted zone id empty", map[string]string{stable + "hostname": "a.example.com", stable + "aws-hosted-zone-id": ""}, []corev1.LoadBalancerIngress{ip("192.0.2.1")},
			`invalid: service default/web: annotation external-dns.kubernetes.io/aws-hosted-zone-id: want a hosted zone id, e.g. "Z1D633PJN98FT9" or "/hostedzone/Z1D633PJN98FT9"` + "\n"},
		{"alias A on an annotation", map[string]string{stable + "hostname": "a.example.com", stable + "alias": "A"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.kubernetes.io/alias "A": ` + reasonAliasOnly + "\n"},
		{"alias AAAA on an annotation", map[string]string{alpha + "hostname": "a.example.com", alpha + "alias": "AAAA"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/alias "AAAA": external-dns v0.23.0 ignores "A" and "AAAA" on this annotation (it reads only "true" here, and publishes as if the annotation were absent): set "true" or remove it, or publish the record from a DNSEndpoint with providerSpecific alias "A" or "AAAA"` + "\n"},
		{"record-type empty is fine", map[string]string{alpha + "hostname": "a.example.com", alpha + "record-type": ""}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"record-type ptr unsupported", map[string]string{alpha + "hostname": "a.example.com", alpha + "record-type": "ptr"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/record-type "ptr": PTR records are not supported by crossfade: remove the annotation` + "\n"},
		{"record-type other", map[string]string{alpha + "hostname": "a.example.com", alpha + "record-type": "A"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/record-type "A": want "ptr" or ""` + "\n"},
		{"bad hostname", map[string]string{alpha + "hostname": "a..example.com"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "a..example.com": empty label` + "\n"},
		{"controller mismatch is skipped", map[string]string{alpha + "hostname": "a.example.com", alpha + "controller": "other", alpha + "aws-weight": "abc"}, []corev1.LoadBalancerIngress{elb},
			`skipped: service default/web: annotation external-dns.alpha.kubernetes.io/controller is "other", not "dns-controller"` + "\n"},
		{"controller dns-controller is ours", map[string]string{alpha + "hostname": "a.example.com", alpha + "controller": "dns-controller"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"access is checked where read only", map[string]string{alpha + "hostname": "a.example.com", alpha + "access": "wide"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"unknown annotation ignored", map[string]string{alpha + "hostname": "a.example.com", alpha + "cloudflare-proxied": "true"}, []corev1.LoadBalancerIngress{elb},
			"a.example.com CNAME lb-1.elb.amazonaws.com ttl=0 simple service/default/web\n"},
		{"invalid without hostname is still reported", map[string]string{alpha + "aws-weight": "x"}, []corev1.LoadBalancerIngress{elb},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "x": want an integer 0..255` + "\n"},
		{"pending without load balancer", map[string]string{alpha + "hostname": "a.example.com"}, nil,
			"pending: service default/web: status.loadBalancer.ingress is empty: waiting for the load balancer's address\n"},
		{"hostname and ip in status make invalid DNS", map[string]string{alpha + "hostname": "a.example.com"}, []corev1.LoadBalancerIngress{{IP: "192.0.2.1", Hostname: "lb.example.net"}},
			`invalid: service default/web: status.loadBalancer.ingress "192.0.2.1,lb.example.net": a CNAME cannot share its name a.example.com with A records: the targets mix hostnames and addresses` + "\n"},
	}
	src := mustNew(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, src.Endpoints(&Snapshot{Services: []*corev1.Service{lbService("web", tt.ann, tt.lb...)}}), tt.want)
		})
	}
}

func TestCustomPrefix(t *testing.T) {
	src := mustNew(t, Config{AnnotationPrefixes: []string{"dns.example.io/"}})
	snap := &Snapshot{Services: []*corev1.Service{
		lbService("custom", map[string]string{"dns.example.io/hostname": "c.example.com", "dns.example.io/ttl": "5m"}, ip("192.0.2.1")),
		lbService("alpha", map[string]string{alpha + "hostname": "a.example.com"}, ip("192.0.2.2")),
	}}
	check(t, src.Endpoints(snap), "c.example.com A 192.0.2.1 ttl=300 simple service/default/custom\n")
}

// TestLegacyAnnotationPrefix: with LegacyAnnotationPrefix (--enable-legacy-annotation-prefix)
// the legacy prefix is read after the configured one (default: the stable one alone), which
// wins where both set a key, as external-dns v0.23 reads them; the legacy value is set aside
// in Result.Overridden, not made an error. Without it, a conflict stays an error.
func TestLegacyAnnotationPrefix(t *testing.T) {
	conflict := map[string]string{stable + "hostname": "s.example.com", alpha + "hostname": "l.example.com", alpha + "ttl": "60"}
	tests := []struct {
		name string
		cfg  Config
		ann  map[string]string
		want string
	}{
		{"legacy alone is read", Config{LegacyAnnotationPrefix: true}, map[string]string{alpha + "hostname": "l.example.com"},
			"l.example.com A 192.0.2.1 ttl=0 simple service/default/web\n"},
		{"the stable prefix wins", Config{LegacyAnnotationPrefix: true}, conflict,
			"s.example.com A 192.0.2.1 ttl=60 simple service/default/web\n" +
				`overridden: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "l.example.com" ignored: external-dns.kubernetes.io/hostname "s.example.com" is set and wins (--enable-legacy-annotation-prefix)` + "\n"},
		{"the same value under both is no news", Config{LegacyAnnotationPrefix: true}, map[string]string{stable + "hostname": "s.example.com", alpha + "hostname": "s.example.com"},
			"s.example.com A 192.0.2.1 ttl=0 simple service/default/web\n"},
		{"a custom prefix wins", Config{AnnotationPrefixes: []string{"dns.example.io/"}, LegacyAnnotationPrefix: true},
			map[string]string{"dns.example.io/hostname": "c.example.com", alpha + "hostname": "l.example.com", stable + "ttl": "60"},
			"c.example.com A 192.0.2.1 ttl=0 simple service/default/web\n" +
				`overridden: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "l.example.com" ignored: dns.example.io/hostname "c.example.com" is set and wins (--enable-legacy-annotation-prefix)` + "\n"},
		{"a bad legacy value yields too", Config{LegacyAnnotationPrefix: true}, map[string]string{stable + "hostname": "s.example.com", stable + "ttl": "30", alpha + "ttl": "soon"},
			"s.example.com A 192.0.2.1 ttl=30 simple service/default/web\n" +
				`overridden: service default/web: annotation external-dns.alpha.kubernetes.io/ttl "soon" ignored: external-dns.kubernetes.io/ttl "30" is set and wins (--enable-legacy-annotation-prefix)` + "\n"},
		{"another controller's object is not read", Config{LegacyAnnotationPrefix: true}, map[string]string{stable + "controller": "other", stable + "hostname": "s.example.com", alpha + "hostname": "l.example.com"},
			`skipped: service default/web: annotation external-dns.kubernetes.io/controller is "other", not "dns-controller"` + "\n"},
		{"without the flag both are read and a conflict is an error", Config{}, conflict,
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "l.example.com": conflicts with external-dns.kubernetes.io/hostname "s.example.com": set one of them, or both to the same value` + "\n"},
		{"a configured prefix alone does not read the legacy one", Config{AnnotationPrefixes: []string{stable}}, map[string]string{alpha + "hostname": "l.example.com"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, mustNew(t, tt.cfg).Endpoints(&Snapshot{Services: []*corev1.Service{lbService("web", tt.ann, ip("192.0.2.1"))}}), tt.want)
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{AnnotationFilter: "a in (b"}, `source: AnnotationFilter "a in (b": `},
		{Config{LabelFilter: "!!"}, `source: LabelFilter "!!": `},
		{Config{GatewayLabelFilter: "a=(b"}, `source: GatewayLabelFilter "a=(b": `},
		{Config{AnnotationPrefixes: []string{"nope"}}, `source: AnnotationPrefixes: "nope": want a prefix ending in "/", e.g. "external-dns.alpha.kubernetes.io/"`},
		{Config{ServiceTypes: []corev1.ServiceType{"Headless"}}, `source: ServiceTypes: "Headless": want ClusterIP, NodePort, LoadBalancer or ExternalName`},
		{Config{AnnotationPrefixes: []string{alpha + "team/"}, LegacyAnnotationPrefix: true}, `source: AnnotationPrefixes: "external-dns.alpha.kubernetes.io/team/" starts with the legacy prefix "external-dns.alpha.kubernetes.io/", which LegacyAnnotationPrefix adds as a fallback: drop one of them`},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || len(err.Error()) < len(tt.want) || err.Error()[:len(tt.want)] != tt.want {
			t.Errorf("New(%+v) = %v, want prefix %q", tt.cfg, err, tt.want)
		}
	}
}

func TestParseTTL(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "60": 60, "1h": 3600, "2147483647": 2147483647, "1.9s": 1, "0s": 0} {
		got, ok := parseTTL(in)
		if !ok || int64(got) != want {
			t.Errorf("parseTTL(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "-1s", "x", "1e3", "9223372036854775808", "1000000h"} {
		if _, ok := parseTTL(in); ok {
			t.Errorf("parseTTL(%q) accepted", in)
		}
	}
}
