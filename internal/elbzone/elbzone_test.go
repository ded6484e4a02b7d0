package elbzone

import "testing"

func TestZoneFor(t *testing.T) {
	for _, tc := range []struct {
		name, dnsName, want string
	}{
		// Classic and Application Load Balancers share one zone per region.
		{"alb us-east-1", "k8s-default-web-1a2b3c4d5e-1234567890.us-east-1.elb.amazonaws.com", "Z35SXDOTRQ7X7K"},
		{"internal alb eu-west-1", "internal-k8s-app-0123456789.eu-west-1.elb.amazonaws.com", "Z32O12XQLNTSW2"},
		{"classic ap-southeast-2", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6-1234567890.ap-southeast-2.elb.amazonaws.com", "Z1GM3OXH4ZPM65"},
		{"newer region", "web-1.mx-central-1.elb.amazonaws.com", "Z023552324OKD1BB28BH5"},
		{"dualstack alb", "dualstack.k8s-default-web-1234567890.us-west-2.elb.amazonaws.com", "Z1H1FL5HABSF5"},
		{"trailing dot", "web-1.us-east-2.elb.amazonaws.com.", "Z3AADJGX6KTTL2"},
		{"upper case", "DualStack.Web-1.US-EAST-1.ELB.AmazonAWS.com.", "Z35SXDOTRQ7X7K"},
		// Network Load Balancers: region after "elb", their own zone.
		{"nlb us-east-1", "k8s-default-tcp-0123456789abcdef.elb.us-east-1.amazonaws.com", "Z26RNL4JYFTOTI"},
		{"nlb eu-central-1", "k8s-ns-svc-abcdef0123.elb.eu-central-1.amazonaws.com", "Z3F0SRJ5LGBH90"},
		{"nlb trailing dot upper case", "K8S-NLB-1.ELB.AP-NORTHEAST-1.AMAZONAWS.COM.", "Z31USIVHYNEOWT"},
		{"dualstack nlb", "dualstack.nlb-1.elb.us-west-2.amazonaws.com", "Z18D5FSROUN65G"},
		// Other partitions.
		{"china alb", "web-1.cn-north-1.elb.amazonaws.com.cn", "Z1GDH35T77C1KE"},
		{"china nlb", "nlb-1.elb.cn-northwest-1.amazonaws.com.cn", "ZQEIKTCZ8352D"},
		{"govcloud alb", "web-1.us-gov-west-1.elb.amazonaws.com", "Z33AYJ8TM3BH4J"},
		{"govcloud nlb", "nlb-1.elb.us-gov-east-1.amazonaws.com", "Z1ZSMQQ6Q24QQ8"},

		// Not load balancers.
		{"plain name", "www.example.com", ""},
		{"empty", "", ""},
		{"look-alike suffix", "web-1.us-east-1.elb.amazonaws.com.evil.test", ""},
		{"look-alike bare", "elb.amazonaws.com.evil.test", ""},
		{"look-alike label", "web-1.us-east-1.elb.amazonaws.com-evil.test", ""},
		{"look-alike domain", "web-1.us-east-1.elb.notamazonaws.com", ""},
		{"no load balancer label", "us-east-1.elb.amazonaws.com", ""},
		{"no nlb label", "elb.us-east-1.amazonaws.com", ""},
		{"empty label", "web..us-east-1.elb.amazonaws.com", ""},
		{"leading dot", ".us-east-1.elb.amazonaws.com", ""},
		{"unknown region", "web-1.xx-nowhere-9.elb.amazonaws.com", ""},
		{"other service", "bucket.s3.us-east-1.amazonaws.com", ""},
		{"vpc endpoint", "vpce-0123-abcd.vpce-svc-0123.us-east-1.vpce.amazonaws.com", ""},
		{"cloudfront", "d111111abcdef8.cloudfront.net", ""},
		{"china region outside the china domain", "web-1.cn-north-1.elb.amazonaws.com", ""},
		{"other region inside the china domain", "web-1.us-east-1.elb.amazonaws.com.cn", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ZoneFor(tc.dnsName)
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("ZoneFor(%q) = %q, %v; want %q, %v", tc.dnsName, got, ok, tc.want, tc.want != "")
			}
		})
	}
}

func TestIsCanonicalZone(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"Z35SXDOTRQ7X7K", true},            // ALB/Classic us-east-1
		{"Z26RNL4JYFTOTI", true},            // NLB us-east-1
		{"ZQEIKTCZ8352D", true},             // NLB cn-northwest-1
		{"/hostedzone/Z1H1FL5HABSF5", true}, // as Route 53 writes ids
		{"hostedzone/Z1H1FL5HABSF5", true},  // as some clients do
		{"Z2FDTNDATAQYW2", false},           // CloudFront: not a load balancer
		{"ZEXAMPLE123", false},              // a customer zone
		{"", false},
		{"z35sxdotrq7x7k", false}, // ids are upper case
	} {
		if got := IsCanonicalZone(tc.id); got != tc.want {
			t.Errorf("IsCanonicalZone(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestTableConsistent: every region resolves both families from names of both shapes,
// to distinct zones that IsCanonicalZone knows.
func TestTableConsistent(t *testing.T) {
	seen := map[string]string{}
	for region, z := range byRegion {
		domain := awsDomain
		if region[:3] == chinaPrefix {
			domain = chinaDomain
		}
		if got, ok := ZoneFor("lb-1." + region + ".elb." + domain); !ok || got != z.alb {
			t.Errorf("%s alb: %q, %v", region, got, ok)
		}
		if got, ok := ZoneFor("lb-1.elb." + region + "." + domain); !ok || got != z.nlb {
			t.Errorf("%s nlb: %q, %v", region, got, ok)
		}
		for _, id := range []string{z.alb, z.nlb} {
			if !IsCanonicalZone(id) {
				t.Errorf("%s: %s not canonical", region, id)
			}
			if other, dup := seen[id]; dup {
				t.Errorf("zone %s in both %s and %s", id, other, region)
			}
			seen[id] = region
		}
	}
}
