package sandbox

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
)

// startGuarded starts a sandbox on free loopback ports and closes it when the test ends.
func startGuarded(t *testing.T, allowRemote bool) *Sandbox {
	t.Helper()
	sb, err := Start(context.Background(), Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", AllowRemote: allowRemote})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb
}

// TestBrowserGuard sends GET /_sandbox/healthz through the API server's real handler with
// each Host and browser header, with and without --allow-remote: a Host that is not a
// loopback name is refused unless AllowRemote (DNS rebinding), and whatever a web page
// sends (Origin, or Sec-Fetch-Site other than "none") is refused always.
func TestBrowserGuard(t *testing.T) {
	const (
		ok          = ""
		notLoopback = "not a loopback name"
		webPage     = "made by a web page"
	)
	type header struct{ origin, site string }
	const noOrigin = "\x00" // header.origin: send no Origin header at all
	for _, allowRemote := range []bool{false, true} {
		sb := startGuarded(t, allowRemote)
		_, p, err := net.SplitHostPort(sb.apiAddr.String())
		if err != nil {
			t.Fatal(err)
		}
		port := ":" + p
		// remote is what a Host check refuses without --allow-remote and lets through with it.
		remote := notLoopback
		if allowRemote {
			remote = ok
		}
		for _, tc := range []struct {
			name string
			host string
			h    header
			want string
		}{
			{"ipv4", "127.0.0.1" + port, header{noOrigin, ""}, ok},
			{"ipv4 other loopback", "127.0.0.2" + port, header{noOrigin, ""}, ok},
			{"ipv6", "[::1]" + port, header{noOrigin, ""}, ok},
			{"localhost", "localhost" + port, header{noOrigin, ""}, ok},
			{"localhost no port", "localhost", header{noOrigin, ""}, ok},
			{"localhost root dot", "localhost." + port, header{noOrigin, ""}, ok},
			{"localhost upper case", "LOCALHOST" + port, header{noOrigin, ""}, ok},
			{"under localhost", "app.localhost" + port, header{noOrigin, ""}, ok},
			{"AWS host prefix on loopback IP", "data-127.0.0.1" + port, header{noOrigin, ""}, ok},
			{"rebinding name", "evil.example" + port, header{noOrigin, ""}, remote},
			{"rebinding to loopback service", "127.0.0.1.nip.io" + port, header{noOrigin, ""}, remote},
			{"localhost label elsewhere", "localhost.evil.example" + port, header{noOrigin, ""}, remote},
			{"AWS host prefix on a name", "data-evil.example" + port, header{noOrigin, ""}, remote},
			{"AWS host prefix on localhost", "data-localhost" + port, header{noOrigin, ""}, remote},
			{"any address", "0.0.0.0" + port, header{noOrigin, ""}, remote},
			{"empty host", "", header{noOrigin, ""}, remote},
			{"typed in the address bar", "127.0.0.1" + port, header{noOrigin, "none"}, ok},
			{"own origin", "127.0.0.1" + port, header{"http://127.0.0.1" + port, "same-origin"}, webPage},
			{"own origin, no fetch metadata", "127.0.0.1" + port, header{"http://127.0.0.1" + port, ""}, webPage},
			{"same-origin GET has no Origin", "127.0.0.1" + port, header{noOrigin, "same-origin"}, webPage},
			{"other origin", "127.0.0.1" + port, header{"http://evil.example", ""}, webPage},
			{"other origin cross-site", "127.0.0.1" + port, header{"http://evil.example", "cross-site"}, webPage},
			{"other port on loopback", "127.0.0.1" + port, header{"http://127.0.0.1:3000", "same-site"}, webPage},
			{"null origin", "127.0.0.1" + port, header{"null", "cross-site"}, webPage},
			{"empty origin", "127.0.0.1" + port, header{"", ""}, webPage},
			{"cross-site without Origin (img, link)", "127.0.0.1" + port, header{noOrigin, "cross-site"}, webPage},
			{"same-site without Origin", "localhost" + port, header{noOrigin, "same-site"}, webPage},
			{"unknown fetch site", "127.0.0.1" + port, header{noOrigin, "elsewhere"}, webPage},
			// With --allow-remote a rebinding page's requests are its own origin's: still refused.
			{"rebinding page, same origin", "evil.example" + port, header{"http://evil.example" + port, "same-origin"}, map[bool]string{false: notLoopback, true: webPage}[allowRemote]},
		} {
			name := tc.name
			if allowRemote {
				name += " allow-remote"
			}
			t.Run(name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodGet, "/_sandbox/healthz", nil)
				req.Host = tc.host
				if tc.h.origin != noOrigin {
					req.Header["Origin"] = []string{tc.h.origin}
				}
				if tc.h.site != "" {
					req.Header.Set("Sec-Fetch-Site", tc.h.site)
				}
				rec := httptest.NewRecorder()
				sb.http.Handler.ServeHTTP(rec, req)
				body := rec.Body.String()
				if tc.want == ok {
					if rec.Code != http.StatusOK || body != "ok\n" {
						t.Errorf("Host %q %+v: %d %q, want 200 ok", tc.host, tc.h, rec.Code, body)
					}
					return
				}
				if rec.Code != http.StatusForbidden || !strings.Contains(body, tc.want) {
					t.Fatalf("Host %q %+v: %d %q, want 403 saying %q", tc.host, tc.h, rec.Code, body, tc.want)
				}
				// The refusal says what to do instead.
				advice := "--allow-remote"
				if tc.want == webPage {
					advice = "AWS CLI, an AWS SDK or curl (endpoint " + sb.APIURL() + ")"
				}
				if !strings.Contains(body, advice) {
					t.Errorf("Host %q %+v: refusal %q does not say %q", tc.host, tc.h, body, advice)
				}
			})
		}
	}
}

// TestBrowserGuardOverTCP drives a started sandbox through the real AWS SDK v2 (Route 53,
// ELBv2, Cloud Map: all still served), then sends the same ChangeResourceRecordSets and
// a faults change as a rebinding page and as cross-origin pages would: each is refused
// with 403 and changes nothing, and the same request with no browser headers is served.
func TestBrowserGuardOverTCP(t *testing.T) {
	ctx := context.Background()
	sb := startGuarded(t, false)
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	r53 := route53.New(route53.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()), Credentials: creds})
	zone, err := r53.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("guard")})
	if err != nil {
		t.Fatalf("SDK CreateHostedZone: %v", err)
	}
	zoneID := strings.TrimPrefix(aws.ToString(zone.HostedZone.Id), "/hostedzone/")
	if _, err := r53.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: &zoneID,
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionCreate,
			ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String("www.example.com"), Type: r53types.RRTypeA, TTL: aws.Int64(60),
				ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}}}}}); err != nil {
		t.Fatalf("SDK ChangeResourceRecordSets: %v", err)
	}
	if sb.Store().LookupIn(zoneID, "www.example.com.") == nil {
		t.Fatal("the SDK's record is not in the store")
	}
	if _, err := elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()), Credentials: creds}).
		DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{}); err != nil {
		t.Fatalf("SDK DescribeLoadBalancers: %v", err)
	}
	if _, err := sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()), Credentials: creds}).
		ListNamespaces(ctx, &sd.ListNamespacesInput{}); err != nil {
		t.Fatalf("SDK ListNamespaces: %v", err)
	}

	const change = `<?xml version="1.0" encoding="UTF-8"?>
<ChangeResourceRecordSetsRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><ChangeBatch><Changes><Change><Action>CREATE</Action>` +
		`<ResourceRecordSet><Name>evil.example.com.</Name><Type>A</Type><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.66</Value>` +
		`</ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`
	rrsets := sb.APIURL() + "/2013-04-01/hostedzone/" + zoneID + "/rrset"
	faultsURL := sb.APIURL() + AdminPrefix + "faults"
	send := func(method, url, body, host string, hdr map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	_, faultsBefore := send(http.MethodGet, faultsURL, "", "", nil)
	_, port, err := net.SplitHostPort(sb.apiAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		host string
		hdr  map[string]string
		want string
	}{
		{"DNS rebinding", "evil.example:" + port, map[string]string{"Content-Type": "text/plain"}, "not a loopback name"},
		{"cross-origin fetch", "", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, "made by a web page"},
		{"form from a sandboxed frame", "", map[string]string{"Origin": "null", "Content-Type": "text/plain"}, "made by a web page"},
		{"no Origin, fetch metadata only", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, "made by a web page"},
	} {
		if code, body := send(http.MethodPost, rrsets, change, tc.host, tc.hdr); code != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("%s: ChangeResourceRecordSets answered %d %q, want 403 saying %q", tc.name, code, body, tc.want)
		}
		if n := sb.Store().LookupIn(zoneID, "evil.example.com."); n != nil {
			t.Fatalf("%s: the refused change created evil.example.com.: %+v", tc.name, n)
		}
		if code, body := send(http.MethodPut, faultsURL, `{"serverErrorRate": 1}`, tc.host, tc.hdr); code != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("%s: PUT faults answered %d %q, want 403 saying %q", tc.name, code, body, tc.want)
		}
		if _, faults := send(http.MethodGet, faultsURL, "", "", nil); faults != faultsBefore {
			t.Fatalf("%s: the refused PUT changed the faults: %s, was %s", tc.name, faults, faultsBefore)
		}
	}
	// The same request from a program is served: the refusals above were the guard's.
	if code, body := send(http.MethodPost, rrsets, change, "", nil); code != http.StatusOK {
		t.Fatalf("ChangeResourceRecordSets from a program: %d %s", code, body)
	}
	if sb.Store().LookupIn(zoneID, "evil.example.com.") == nil {
		t.Fatal("the served change is not in the store")
	}
}
