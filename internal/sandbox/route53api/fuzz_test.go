package route53api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// FuzzChangeBatchXML feeds arbitrary request bodies to ChangeResourceRecordSets: the API
// must never panic, must answer 200 or Route 53's error shape, and a refused body must
// leave the zone exactly as it was.
func FuzzChangeBatchXML(f *testing.F) {
	f.Add(`<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>w.example.com</Name><Type>A</Type><SetIdentifier>b</SetIdentifier><Weight>1</Weight><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.1</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`)
	f.Add(`<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>DELETE</Action><ResourceRecordSet><Name>example.com</Name><Type>SOA</Type><TTL>900</TTL><ResourceRecords><ResourceRecord><Value>x</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`)
	f.Add(`<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>UPSERT</Action><ResourceRecordSet><Name>a.example.com</Name><Type>A</Type><AliasTarget><HostedZoneId>Z</HostedZoneId><DNSName>b.example.com</DNSName><EvaluateTargetHealth>true</EvaluateTargetHealth></AliasTarget></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`)
	f.Add(`<ChangeResourceRecordSetsRequest><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>t.example.com</Name><Type>TXT</Type><TTL>1</TTL><ResourceRecords><ResourceRecord><Value>"a" "b"</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`)
	f.Add(`<x>`)
	f.Fuzz(func(t *testing.T, body string) {
		store, _ := zones.Open(zones.Options{})
		z, _, err := store.CreateZone("example.com", "ref", "", false)
		if err != nil {
			t.Fatal(err)
		}
		api, err := New(Config{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		before, _ := store.ListRecords(z.ID, "", "", "", 300)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/2013-04-01/hostedzone/"+z.ID+"/rrset/", strings.NewReader(body))
		api.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			return
		case rec.Code >= 400 && rec.Code < 500:
			var e errorResponse
			if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("status %d without Route 53's error shape: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		after, _ := store.ListRecords(z.ID, "", "", "", 300)
		if len(after.Sets) != len(before.Sets) {
			t.Fatalf("refused body changed the zone: %d sets, was %d", len(after.Sets), len(before.Sets))
		}
	})
}
