package route53api

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

type fixture struct {
	api    *API
	store  *zones.Store
	faults *faults.Injector
	srv    *httptest.Server
	client *route53.Client
}

// newFixture serves the API on loopback and points the real SDK client at it.
func newFixture(t *testing.T, delay time.Duration) *fixture {
	t.Helper()
	store, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inj, _ := faults.New(faults.Config{})
	api, err := New(Config{Store: store, Faults: inj, Registerer: prometheus.NewRegistry(), ChangeDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client := route53.New(route53.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 10 * time.Millisecond }),
	})
	return &fixture{api: api, store: store, faults: inj, srv: srv, client: client}
}

func (f *fixture) createZone(t *testing.T, name string) string {
	t.Helper()
	out, err := f.client.CreateHostedZone(context.Background(), &route53.CreateHostedZoneInput{
		Name: aws.String(name), CallerReference: aws.String("ref-" + name),
	})
	if err != nil {
		t.Fatalf("CreateHostedZone %s: %v", name, err)
	}
	return strings.TrimPrefix(*out.HostedZone.Id, "/hostedzone/")
}

func weightedSet(name, id string, w int64, ip string) *types.ResourceRecordSet {
	return &types.ResourceRecordSet{
		Name: aws.String(name), Type: types.RRTypeA, SetIdentifier: aws.String(id), Weight: aws.Int64(w),
		TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String(ip)}},
	}
}

func simpleSet(name string, ip string) *types.ResourceRecordSet {
	return &types.ResourceRecordSet{
		Name: aws.String(name), Type: types.RRTypeA, TTL: aws.Int64(60),
		ResourceRecords: []types.ResourceRecord{{Value: aws.String(ip)}},
	}
}

func (f *fixture) change(zoneID string, changes ...types.Change) error {
	_, err := f.client.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zoneID),
		ChangeBatch:  &types.ChangeBatch{Changes: changes},
	})
	return err
}

func TestSDKZoneLifecycle(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	out, err := f.client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{
		Name: aws.String("example.com"), CallerReference: aws.String("r1"),
		HostedZoneConfig: &types.HostedZoneConfig{Comment: aws.String("demo")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if *out.HostedZone.Name != "example.com." || len(out.DelegationSet.NameServers) != 4 || out.ChangeInfo.Status != types.ChangeStatusInsync {
		t.Fatalf("CreateHostedZone = %+v / %+v", out.HostedZone, out.DelegationSet)
	}
	id := strings.TrimPrefix(*out.HostedZone.Id, "/hostedzone/")
	if _, err := f.client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("r1")}); !isType[*types.HostedZoneAlreadyExists](err) {
		t.Fatalf("same caller reference: %v", err)
	}
	got, err := f.client.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: out.HostedZone.Id})
	if err != nil || *got.HostedZone.Config.Comment != "demo" || *got.HostedZone.ResourceRecordSetCount != 2 {
		t.Fatalf("GetHostedZone = %+v, %v", got, err)
	}
	f.createZone(t, "example.org")
	f.createZone(t, "a.example.com")

	// ListHostedZones pages by marker.
	var names []string
	var marker *string
	for {
		page, err := f.client.ListHostedZones(ctx, &route53.ListHostedZonesInput{MaxItems: aws.Int32(1), Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range page.HostedZones {
			names = append(names, *z.Name)
		}
		if !page.IsTruncated {
			break
		}
		marker = page.NextMarker
	}
	if strings.Join(names, " ") != "example.com. example.org. a.example.com." {
		t.Fatalf("ListHostedZones pages: %v", names)
	}
	// ListHostedZonesByName sorts by reversed labels.
	byName, err := f.client.ListHostedZonesByName(ctx, &route53.ListHostedZonesByNameInput{DNSName: aws.String("example.com")})
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, z := range byName.HostedZones {
		names = append(names, *z.Name)
	}
	if strings.Join(names, " ") != "example.com. a.example.com. example.org." {
		t.Fatalf("ListHostedZonesByName: %v", names)
	}

	if err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: simpleSet("www.example.com", "192.0.2.1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.DeleteHostedZone(ctx, &route53.DeleteHostedZoneInput{Id: aws.String(id)}); !isType[*types.HostedZoneNotEmpty](err) {
		t.Fatalf("delete non-empty zone: %v", err)
	}
	if _, err := f.client.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String("ZNOPE")}); !isType[*types.NoSuchHostedZone](err) {
		t.Fatalf("unknown zone: %v", err)
	}
}

func isType[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return fmt.Sprint(err)
}

func TestSDKChangeBatchErrors(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	name := "www.example.com."
	if err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: simpleSet(name, "192.0.2.1")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		changes []types.Change
		code    string
	}{
		{"already exists", []types.Change{{Action: types.ChangeActionCreate, ResourceRecordSet: simpleSet(name, "192.0.2.1")}},
			"InvalidChangeBatch: [Tried to create resource record set [name='www.example.com.', type='A'] but it already exists]"},
		{"not found", []types.Change{{Action: types.ChangeActionDelete, ResourceRecordSet: simpleSet("x.example.com.", "192.0.2.1")}},
			"InvalidChangeBatch: [Tried to delete resource record set [name='x.example.com.', type='A'] but it was not found]"},
		{"values differ", []types.Change{{Action: types.ChangeActionDelete, ResourceRecordSet: simpleSet(name, "192.0.2.9")}},
			"InvalidChangeBatch: [Tried to delete resource record set [name='www.example.com.', type='A'] but the values provided do not match the current values]"},
		{"weighted beside simple", []types.Change{{Action: types.ChangeActionCreate, ResourceRecordSet: weightedSet(name, "blue", 1, "192.0.2.1")}},
			"InvalidChangeBatch: [RRSet with DNS name www.example.com., type A, SetIdentifier blue cannot be created as a non-weighted set exists with the same name and type.]"},
		{"weight 256", []types.Change{{Action: types.ChangeActionCreate, ResourceRecordSet: weightedSet("w.example.com.", "blue", 256, "192.0.2.1")}},
			"InvalidInput: 1 validation error detected: Value '256' at 'changeBatch.changes.1.member.resourceRecordSet.weight' failed to satisfy constraint: Member must have value less than or equal to 255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.change(id, tc.changes...)
			if got := apiCode(err); got != tc.code {
				t.Fatalf("got  %s\nwant %s", got, tc.code)
			}
		})
	}
	// The SDK hands InvalidChangeBatch back as its typed error.
	err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: simpleSet(name, "192.0.2.1")})
	if !isType[*types.InvalidChangeBatch](err) {
		t.Fatalf("want *types.InvalidChangeBatch, got %T", err)
	}
	// Transition simple → weighted in one batch works: the fix for external-dns issue 1411.
	err = f.change(id,
		types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: simpleSet(name, "192.0.2.1")},
		types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: weightedSet(name, "blue", 1, "192.0.2.1")})
	if err != nil {
		t.Fatalf("transition batch: %v", err)
	}
}

func TestSDKListPagingAndChange(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	ctx := context.Background()
	id := f.createZone(t, "example.com")
	var changes []types.Change
	for i := range 350 {
		changes = append(changes,
			types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: weightedSet(fmt.Sprintf("h%03d.example.com.", i), "blue", 1, "192.0.2.1")},
			types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: weightedSet(fmt.Sprintf("h%03d.example.com.", i), "green", 3, "192.0.2.2")})
	}
	out, err := f.client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(id), ChangeBatch: &types.ChangeBatch{Changes: changes},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.ChangeInfo.Status != types.ChangeStatusPending {
		t.Fatalf("fresh change status %s, want PENDING", out.ChangeInfo.Status)
	}
	waiter := route53.NewResourceRecordSetsChangedWaiter(f.client, func(o *route53.ResourceRecordSetsChangedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	})
	if err := waiter.Wait(ctx, &route53.GetChangeInput{Id: out.ChangeInfo.Id}, 5*time.Second); err != nil {
		t.Fatalf("wait for INSYNC: %v", err)
	}

	seen, pages := 0, 0
	in := &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id)}
	prev := ""
	for {
		page, err := f.client.ListResourceRecordSets(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.ResourceRecordSets) > 300 {
			t.Fatalf("page of %d sets, Route 53 returns at most 300", len(page.ResourceRecordSets))
		}
		for _, s := range page.ResourceRecordSets {
			key := *s.Name + string(s.Type) + aws.ToString(s.SetIdentifier)
			if key <= prev && prev != "" && !strings.HasPrefix(key, "example.com.") {
				t.Fatalf("order broken: %s after %s", key, prev)
			}
			prev = key
			seen++
		}
		if !page.IsTruncated {
			break
		}
		in.StartRecordName, in.StartRecordType, in.StartRecordIdentifier = page.NextRecordName, page.NextRecordType, page.NextRecordIdentifier
	}
	if seen != 702 || pages != 3 {
		t.Fatalf("listed %d sets in %d pages, want 702 in 3", seen, pages)
	}
}

func TestSDKRetriesThrottling(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	if err := f.faults.Set(faults.Config{ThrottleRate: 1, Operations: []string{"ChangeResourceRecordSets"}}); err != nil {
		t.Fatal(err)
	}
	err := f.change(id, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: simpleSet("www.example.com.", "192.0.2.1")})
	if got := apiCode(err); got != "Throttling: Rate exceeded" {
		t.Fatalf("throttled call: %s", got)
	}
	// The SDK's standard retryer makes 3 attempts; every one is counted.
	if n := f.api.chain.Calls.Count("ChangeResourceRecordSets", "Throttling"); n != 3 {
		t.Fatalf("counted %v throttled attempts, want 3", n)
	}
	if a, _ := f.store.Lookup("www.example.com."); a.Node != nil {
		t.Fatal("a throttled change was applied")
	}
	// PriorRequestNotComplete is retryable too: with half the calls failing the change lands.
	if err := f.faults.Set(faults.Config{PriorRequestRate: 0.5}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		name := fmt.Sprintf("p%d.example.com.", i)
		if err := f.change(id, types.Change{Action: types.ChangeActionUpsert, ResourceRecordSet: simpleSet(name, "192.0.2.1")}); err != nil && !strings.Contains(apiCode(err), "PriorRequestNotComplete") {
			t.Fatalf("change %d: %v", i, err)
		}
	}
}

func TestSDKTags(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	id := f.createZone(t, "example.com")
	_, err := f.client.ChangeTagsForResource(ctx, &route53.ChangeTagsForResourceInput{
		ResourceType: types.TagResourceTypeHostedzone, ResourceId: aws.String(id),
		AddTags: []types.Tag{{Key: aws.String("team"), Value: aws.String("sre")}, {Key: aws.String("gone"), Value: aws.String("x")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.client.ChangeTagsForResource(ctx, &route53.ChangeTagsForResourceInput{
		ResourceType: types.TagResourceTypeHostedzone, ResourceId: aws.String(id), RemoveTagKeys: []string{"gone"},
	})
	if err != nil {
		t.Fatal(err)
	}
	one, err := f.client.ListTagsForResource(ctx, &route53.ListTagsForResourceInput{ResourceType: types.TagResourceTypeHostedzone, ResourceId: aws.String(id)})
	if err != nil || len(one.ResourceTagSet.Tags) != 1 || *one.ResourceTagSet.Tags[0].Key != "team" {
		t.Fatalf("ListTagsForResource = %+v, %v", one, err)
	}
	many, err := f.client.ListTagsForResources(ctx, &route53.ListTagsForResourcesInput{ResourceType: types.TagResourceTypeHostedzone, ResourceIds: []string{id}})
	if err != nil || len(many.ResourceTagSets) != 1 || *many.ResourceTagSets[0].Tags[0].Value != "sre" {
		t.Fatalf("ListTagsForResources = %+v, %v", many, err)
	}
}

// TestBadRequests sends what no SDK would: each gets Route 53's error shape naming the
// problem, and the zone is unchanged.
func TestBadRequests(t *testing.T) {
	f := newFixture(t, 0)
	id := f.createZone(t, "example.com")
	big := "<ChangeResourceRecordSetsRequest>" + strings.Repeat("<x/>", DefaultMaxBodyBytes/4+1) + "</ChangeResourceRecordSetsRequest>"
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"malformed xml", "POST", "/2013-04-01/hostedzone/" + id + "/rrset/", "<ChangeResourceRecordSetsRequest><ChangeBatch>", 400, "InvalidInput: Invalid XML ; ChangeResourceRecordSetsRequest"},
		{"wrong root", "POST", "/2013-04-01/hostedzone/" + id + "/rrset/", "<Foo/>", 400, "expected element type <ChangeResourceRecordSetsRequest>"},
		{"weight not a number", "POST", "/2013-04-01/hostedzone/" + id + "/rrset/", `<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>w.example.com</Name><Type>A</Type><SetIdentifier>b</SetIdentifier><Weight>abc</Weight><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.1</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`, 400, "InvalidInput: 1 validation error detected: Value 'abc' at 'changeBatch.changes.1.member.resourceRecordSet.weight' failed to satisfy constraint: Member must be an integer"},
		{"evaluate target health not a bool", "POST", "/2013-04-01/hostedzone/" + id + "/rrset/", `<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>a.example.com</Name><Type>A</Type><AliasTarget><HostedZoneId>` + id + `</HostedZoneId><DNSName>example.com</DNSName><EvaluateTargetHealth>maybe</EvaluateTargetHealth></AliasTarget></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`, 400, "InvalidInput: 1 validation error detected: Value 'maybe' at 'changeBatch.changes.1.member.resourceRecordSet.aliasTarget.evaluateTargetHealth' failed to satisfy constraint: Member must be true or false"},
		{"zone without name", "POST", "/2013-04-01/hostedzone", "<CreateHostedZoneRequest><CallerReference>r1</CallerReference></CreateHostedZoneRequest>", 400, "InvalidInput: 1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null"},
		{"bad hosted zone type", "GET", "/2013-04-01/hostedzone?hostedzonetype=PublicHostedZone", "", 400, "InvalidInput: 1 validation error detected: Value 'PublicHostedZone' at 'hostedZoneType' failed to satisfy constraint: Member must satisfy enum value set: [PrivateHostedZone]"},
		{"bad tag resource type", "GET", "/2013-04-01/tags/bucket/" + id, "", 400, "InvalidInput: 1 validation error detected: Value 'bucket' at 'resourceType' failed to satisfy constraint: Member must satisfy enum value set: [healthcheck, hostedzone]"},
		{"unknown zone", "POST", "/2013-04-01/hostedzone/ZNOPE/rrset/", `<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>w.example.com</Name><Type>A</Type><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.1</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`, 404, "NoSuchHostedZone: No hosted zone found with ID: ZNOPE"},
		{"oversized body", "POST", "/2013-04-01/hostedzone/" + id + "/rrset/", big, 400, "is larger than"},
		{"empty body", "POST", "/2013-04-01/hostedzone", "", 400, "request body is empty"},
		{"unknown operation", "PUT", "/2013-04-01/hostedzone/" + id, "", 400, "InvalidAction: "},
		{"type without name", "GET", "/2013-04-01/hostedzone/" + id + "/rrset?type=A", "", 400, "type was specified but name was not"},
		{"bad maxitems", "GET", "/2013-04-01/hostedzone/" + id + "/rrset?maxitems=zero", "", 400, "InvalidInput: 1 validation error detected: Value 'zero' at 'maxItems' failed to satisfy constraint: Member must be a positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.srv.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var e errorResponse
			if err := xml.Unmarshal(body, &e); err != nil {
				t.Fatalf("not Route 53's error shape: %v: %s", err, body)
			}
			got := e.Error.Code + ": " + e.Error.Message
			if resp.StatusCode != tc.status || !strings.Contains(got, tc.want) || e.RequestID == "" {
				t.Fatalf("status %d %s\nwant %d containing %q", resp.StatusCode, got, tc.status, tc.want)
			}
		})
	}
	if p, _ := f.store.ListRecords(id, "", "", "", 300); len(p.Sets) != 2 {
		t.Fatalf("bad requests changed the zone: %d sets", len(p.Sets))
	}
}
