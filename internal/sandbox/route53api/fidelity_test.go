package route53api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
)

func withTTL(s *types.ResourceRecordSet, ttl int64) *types.ResourceRecordSet {
	c := *s
	c.TTL = aws.Int64(ttl)
	return &c
}

func recordSet(name string, typ types.RRType, values ...string) *types.ResourceRecordSet {
	s := &types.ResourceRecordSet{Name: aws.String(name), Type: typ, TTL: aws.Int64(300)}
	for _, v := range values {
		s.ResourceRecords = append(s.ResourceRecords, types.ResourceRecord{Value: aws.String(v)})
	}
	return s
}

// TestSDKWeightedTTL: every weighted set of a name and type carries one TTL, checked at each
// change against the state the batch has reached.
func TestSDKWeightedTTL(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	const name = "www.example.com."
	blue, green := weightedSet(name, "blue", 1, "192.0.2.1"), weightedSet(name, "green", 1, "192.0.2.2")
	if err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: blue}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		changes []types.Change
		want    string
	}{
		{"CREATE with another TTL", []types.Change{{Action: types.ChangeActionCreate, ResourceRecordSet: withTTL(green, 300)}},
			"InvalidChangeBatch: [RRSet with DNS name www.example.com., type A, SetIdentifier green cannot be created as weighted sets must contain the same TTL.]"},
		{"UPSERT changing one member's TTL", []types.Change{
			{Action: types.ChangeActionCreate, ResourceRecordSet: green},
			{Action: types.ChangeActionUpsert, ResourceRecordSet: withTTL(blue, 30)}},
			"InvalidChangeBatch: [RRSet with DNS name www.example.com., type A, SetIdentifier blue cannot be created as weighted sets must contain the same TTL.]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.change(id, tc.changes...)
			if !isType[*types.InvalidChangeBatch](err) || apiCode(err) != tc.want {
				t.Fatalf("got  %s\nwant %s", apiCode(err), tc.want)
			}
		})
	}
	if err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: green}); err != nil {
		t.Fatal(err)
	}
	// Changing the group's TTL: DELETE every member, then CREATE every member, in one batch.
	err := f.change(id,
		types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: blue},
		types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: green},
		types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: withTTL(blue, 30)},
		types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: withTTL(green, 30)})
	if err != nil {
		t.Fatalf("DELETE all + CREATE all with a new TTL: %v", err)
	}
	out, err := f.client.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{
		HostedZoneId: aws.String(id), StartRecordName: aws.String(name), StartRecordType: types.RRTypeA,
	})
	if err != nil {
		t.Fatal(err)
	}
	var ttls []int64
	for _, s := range out.ResourceRecordSets {
		if aws.ToString(s.Name) == name {
			ttls = append(ttls, aws.ToInt64(s.TTL))
		}
	}
	if len(ttls) != 2 || ttls[0] != 30 || ttls[1] != 30 {
		t.Fatalf("TTLs after the batch: %v, want [30 30]", ttls)
	}
}

// TestSDKDelegationSet: DelegationSet.NameServers carry no trailing dot; the apex NS
// record's values, the same servers, do.
func TestSDKDelegationSet(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	created, err := f.client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("r1")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.client.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: created.HostedZone.Id})
	if err != nil {
		t.Fatal(err)
	}
	sets, err := f.client.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{
		HostedZoneId: created.HostedZone.Id, StartRecordName: aws.String("example.com"), StartRecordType: types.RRTypeNs, MaxItems: aws.Int32(1),
	})
	if err != nil || len(sets.ResourceRecordSets) != 1 || sets.ResourceRecordSets[0].Type != types.RRTypeNs {
		t.Fatalf("apex NS: %+v, %v", sets, err)
	}
	var apexNS []string
	for _, r := range sets.ResourceRecordSets[0].ResourceRecords {
		apexNS = append(apexNS, aws.ToString(r.Value))
	}
	for op, ns := range map[string][]string{"CreateHostedZone": created.DelegationSet.NameServers, "GetHostedZone": got.DelegationSet.NameServers} {
		if len(ns) != 4 {
			t.Fatalf("%s: %d name servers, want 4", op, len(ns))
		}
		for i, n := range ns {
			if strings.HasSuffix(n, ".") || !strings.HasPrefix(n, "ns-") || apexNS[i] != n+"." {
				t.Errorf("%s name server %q: want it without the trailing dot of the apex NS value %q", op, n, apexNS[i])
			}
		}
	}
}

// TestSDKRecordTypes writes every record type Route 53 accepts through the SDK, with the
// quoted ';' values a DKIM key or a CAA parameter carries, and reads them back as written.
func TestSDKRecordTypes(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	const sha256 = "e06d44b80b8f1d39a95c0b0d7c65d08458e880409bbc683457104237c7f8ec8d"
	sets := []*types.ResourceRecordSet{
		recordSet("example.com.", types.RRTypeCaa, `0 issue "letsencrypt.org; validationmethods=dns-01"`, `128 issuewild ";"`),
		recordSet("mail.example.com.", types.RRTypeTxt, `"v=DKIM1; k=rsa; p=MIGf"`),
		recordSet("mail.example.com.", types.RRTypeSpf, `"v=spf1 -all"`),
		recordSet("sub.example.com.", types.RRTypeNs, "ns1.elsewhere.net."),
		recordSet("sub.example.com.", types.RRTypeDs, "2371 13 2 "+sha256),
		recordSet("sip.example.com.", types.RRTypeNaptr, `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`),
		recordSet("host.example.com.", types.RRTypeSshfp, "4 2 "+sha256),
		recordSet("_443._tcp.www.example.com.", types.RRTypeTlsa, "3 1 1 "+sha256),
		recordSet("_dns.example.com.", types.RRTypeSvcb, "1 dns.example.com. alpn=dot"),
		recordSet("www.example.com.", types.RRTypeHttps, "1 . alpn=h2"),
	}
	var changes []types.Change
	want := map[string]string{}
	for _, s := range sets {
		changes = append(changes, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: s})
		var vals []string
		for _, r := range s.ResourceRecords {
			vals = append(vals, aws.ToString(r.Value))
		}
		want[aws.ToString(s.Name)+" "+string(s.Type)] = strings.Join(vals, " | ")
	}
	if err := f.change(id, changes...); err != nil {
		t.Fatalf("create every type: %s", apiCode(err))
	}
	out, err := f.client.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out.ResourceRecordSets {
		k := aws.ToString(s.Name) + " " + string(s.Type)
		w, ok := want[k]
		if !ok {
			continue
		}
		var vals []string
		for _, r := range s.ResourceRecords {
			vals = append(vals, aws.ToString(r.Value))
		}
		if got := strings.Join(vals, " | "); got != w {
			t.Errorf("%s read back as %s, want %s", k, got, w)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}

	for _, tc := range []struct {
		set  *types.ResourceRecordSet
		want string
	}{
		{recordSet("bad.example.com.", types.RRTypeTxt, "v=DKIM1; k=rsa"),
			"InvalidChangeBatch: [Invalid Resource Record: 'FATAL problem: InvalidRDATA (Value is not valid TXT data: ';' outside quotation marks) encountered with 'v=DKIM1; k=rsa'']"},
		{recordSet("bad.example.com.", types.RRTypeDs, "2371 13 2 abcd"),
			"InvalidChangeBatch: [Invalid Resource Record: 'FATAL problem: InvalidRDATA (Value is not valid DS data: digest must be 64 hexadecimal digits for digest type 2) encountered with '2371 13 2 abcd'']"},
		{recordSet("bad.example.com.", types.RRTypeTlsa, "3 1 1 xyz"),
			"InvalidChangeBatch: [Invalid Resource Record: 'FATAL problem: InvalidRDATA (Value is not valid TLSA data: certificate association data is not hexadecimal) encountered with '3 1 1 xyz'']"},
		{recordSet("bad.example.com.", types.RRType("LOC"), "52 22 23.000 N 4 53 32.000 E -2.00m"),
			"InvalidInput: 1 validation error detected: Value 'LOC' at 'changeBatch.changes.1.member.resourceRecordSet.type' failed to satisfy constraint: Member must satisfy enum value set: [SOA, A, TXT, NS, CNAME, MX, NAPTR, PTR, SRV, SPF, AAAA, CAA, DS, TLSA, SSHFP, SVCB, HTTPS]"},
	} {
		if got := apiCode(f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: tc.set})); got != tc.want {
			t.Errorf("CREATE %s %v:\n got  %s\n want %s", tc.set.Type, tc.set.ResourceRecords[0].Value, got, tc.want)
		}
	}
}

// TestSDKUnsupported: what the sandbox deliberately does not implement is refused, through
// the real SDK, with a message that says it is the sandbox's limit, not a Route 53 rule.
func TestSDKUnsupported(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	id := f.createZone(t, "example.com")
	routed := func(mod func(s *types.ResourceRecordSet)) error {
		s := weightedSet("r.example.com.", "x", 1, "192.0.2.1")
		s.Weight = nil
		mod(s)
		return f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: s})
	}
	for _, tc := range []struct {
		name string
		call func() error
		what string
	}{
		{"latency", func() error {
			return routed(func(s *types.ResourceRecordSet) { s.Region = types.ResourceRecordSetRegionUsEast1 })
		}, "latency routing"},
		{"geolocation", func() error {
			return routed(func(s *types.ResourceRecordSet) {
				s.GeoLocation = &types.GeoLocation{CountryCode: aws.String("DE")}
			})
		}, "geolocation routing"},
		{"geoproximity", func() error {
			return routed(func(s *types.ResourceRecordSet) {
				s.GeoProximityLocation = &types.GeoProximityLocation{AWSRegion: aws.String("us-east-1"), Bias: aws.Int32(0)}
			})
		}, "geoproximity routing"},
		{"cidr", func() error {
			return routed(func(s *types.ResourceRecordSet) {
				s.CidrRoutingConfig = &types.CidrRoutingConfig{CollectionId: aws.String("c"), LocationName: aws.String("l")}
			})
		}, "IP-based routing"},
		{"multivalue", func() error { return routed(func(s *types.ResourceRecordSet) { s.MultiValueAnswer = aws.Bool(true) }) }, "multivalue answer routing"},
		{"traffic policy", func() error {
			return f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
				Name: aws.String("r.example.com."), Type: types.RRTypeA, TrafficPolicyInstanceId: aws.String("tp-1")}})
		}, "traffic policy instance"},
		{"reusable delegation set", func() error {
			_, err := f.client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.net"), CallerReference: aws.String("r2"), DelegationSetId: aws.String("N1")})
			return err
		}, "reusable delegation sets"},
		{"zones of a delegation set", func() error {
			_, err := f.client.ListHostedZones(ctx, &route53.ListHostedZonesInput{DelegationSetId: aws.String("N1")})
			return err
		}, "reusable delegation sets"},
		{"health checks", func() error {
			_, err := f.client.CreateHealthCheck(ctx, &route53.CreateHealthCheckInput{CallerReference: aws.String("h1"),
				HealthCheckConfig: &types.HealthCheckConfig{Type: types.HealthCheckTypeHttp, FullyQualifiedDomainName: aws.String("www.example.com")}})
			return err
		}, "POST /2013-04-01/healthcheck is not supported by the crossfade sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := apiCode(tc.call())
			if !strings.Contains(got, tc.what) || !strings.Contains(got, "not supported by the crossfade sandbox") {
				t.Fatalf("got %s\nwant a refusal naming %q as not supported by the crossfade sandbox", got, tc.what)
			}
		})
	}
	if p, _ := f.store.ListRecords(id, "", "", "", 300); len(p.Sets) != 2 {
		t.Fatalf("refused changes changed the zone: %d sets", len(p.Sets))
	}
	if n := len(f.store.Zones()); n != 1 {
		t.Fatalf("%d zones after a refused CreateHostedZone, want 1", n)
	}
}

// TestSDKLoadBalancerAlias: an alias to an AWS load balancer is taken when its HostedZoneId
// is the load balancer's canonical zone, and refused in Route 53's words when it is not.
func TestSDKLoadBalancerAlias(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	const alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
	alias := func(zoneID string) *types.ResourceRecordSet {
		return &types.ResourceRecordSet{Name: aws.String("www.example.com"), Type: types.RRTypeA,
			AliasTarget: &types.AliasTarget{HostedZoneId: aws.String(zoneID), DNSName: aws.String(alb), EvaluateTargetHealth: true}}
	}
	// Z26RNL4JYFTOTI is the NLB zone of us-east-1; an ALB's is Z35SXDOTRQ7X7K.
	want := "InvalidChangeBatch: [Tried to create an alias that targets " + alb + "., type A in zone Z26RNL4JYFTOTI, but the alias target name does not lie within the target zone, " +
		"Tried to create an alias that targets " + alb + "., type A in zone Z26RNL4JYFTOTI, but that target was not found]"
	if got := apiCode(f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: alias("Z26RNL4JYFTOTI")})); got != want {
		t.Fatalf("alias with the NLB zone:\n got  %s\n want %s", got, want)
	}
	if err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: alias("Z35SXDOTRQ7X7K")}); err != nil {
		t.Fatalf("alias with the ALB zone: %s", apiCode(err))
	}
	out, err := f.client.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{
		HostedZoneId: aws.String(id), StartRecordName: aws.String("www.example.com"), StartRecordType: types.RRTypeA, MaxItems: aws.Int32(1),
	})
	if err != nil || len(out.ResourceRecordSets) != 1 {
		t.Fatalf("list: %+v, %v", out, err)
	}
	if a := out.ResourceRecordSets[0].AliasTarget; a == nil || aws.ToString(a.HostedZoneId) != "Z35SXDOTRQ7X7K" || aws.ToString(a.DNSName) != alb+"." || !a.EvaluateTargetHealth {
		t.Fatalf("alias read back as %+v", a)
	}
	// DELETE must name the same zone id, as for any alias.
	if err := f.change(id, types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: alias("Z35SXDOTRQ7X7K")}); err != nil {
		t.Fatalf("delete the alias: %s", apiCode(err))
	}
}
