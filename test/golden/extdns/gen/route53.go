package gen

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
)

// A minimal Route 53 REST-XML API (one public hosted zone, example.com.)
// that external-dns's real AWS provider (aws-sdk-go-v2) talks to through
// AWS_ENDPOINT_URL_ROUTE_53. It serves the case's current records and records
// every ChangeResourceRecordSets request without applying it.

const (
	zoneID   = "ZGOLDEN0EXAMPLE"
	zoneName = "example.com."
	xmlns    = "https://route53.amazonaws.com/doc/2013-04-01/"
	// canonical hosted zone of us-east-1 ELBs; only used to render current alias
	// records (external-dns's Records() does not read it back).
	elbZone = "Z35SXDOTRQ7X7K"
)

type xmlAliasTarget struct {
	HostedZoneId         string `xml:"HostedZoneId"`
	DNSName              string `xml:"DNSName"`
	EvaluateTargetHealth bool   `xml:"EvaluateTargetHealth"`
}

type xmlRR struct {
	Value string `xml:"Value"`
}

type xmlRRSet struct {
	Name             string          `xml:"Name"`
	Type             string          `xml:"Type"`
	SetIdentifier    string          `xml:"SetIdentifier,omitempty"`
	Weight           *int64          `xml:"Weight,omitempty"`
	Region           string          `xml:"Region,omitempty"`
	Failover         string          `xml:"Failover,omitempty"`
	MultiValueAnswer *bool           `xml:"MultiValueAnswer,omitempty"`
	TTL              *int64          `xml:"TTL,omitempty"`
	ResourceRecords  *[]xmlRR        `xml:"ResourceRecords>ResourceRecord,omitempty"`
	AliasTarget      *xmlAliasTarget `xml:"AliasTarget,omitempty"`
	HealthCheckId    string          `xml:"HealthCheckId,omitempty"`
}

type xmlChangeRequest struct {
	XMLName     xml.Name `xml:"ChangeResourceRecordSetsRequest"`
	ChangeBatch struct {
		Comment string `xml:"Comment"`
		Changes []struct {
			Action            string   `xml:"Action"`
			ResourceRecordSet xmlRRSet `xml:"ResourceRecordSet"`
		} `xml:"Changes>Change"`
	} `xml:"ChangeBatch"`
}

// r53Change is one change as external-dns's AWS provider sent it.
type r53Change struct {
	Action        string          `json:"action"`
	Name          string          `json:"name"`
	Type          string          `json:"type"`
	SetIdentifier string          `json:"setIdentifier,omitempty"`
	Weight        *int64          `json:"weight,omitempty"`
	Failover      string          `json:"failover,omitempty"`
	TTL           *int64          `json:"ttl,omitempty"`
	Values        []string        `json:"values,omitempty"`
	AliasTarget   *r53AliasTarget `json:"aliasTarget,omitempty"`
	HealthCheckID string          `json:"healthCheckId,omitempty"`
}

type r53AliasTarget struct {
	DNSName              string `json:"dnsName"`
	HostedZoneID         string `json:"hostedZoneId"`
	EvaluateTargetHealth bool   `json:"evaluateTargetHealth"`
}

type fakeRoute53 struct {
	srv     *httptest.Server
	mu      sync.Mutex
	rrsets  []xmlRRSet
	batches [][]r53Change
}

func startFakeRoute53() *fakeRoute53 {
	f := &fakeRoute53{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_ROUTE_53":   f.srv.URL,
		"AWS_ENDPOINT_URL":            f.srv.URL,
		"AWS_ACCESS_KEY_ID":           "golden",
		"AWS_SECRET_ACCESS_KEY":       "golden",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		os.Setenv(k, v)
	}
	return f
}

func (f *fakeRoute53) close() { f.srv.Close() }

// reset loads a case's current zone, rendered as Route 53 holds it.
func (f *fakeRoute53) reset(current []caseRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = nil
	f.rrsets = nil
	for _, r := range current {
		f.rrsets = append(f.rrsets, toRRSet(r))
	}
}

func toRRSet(r caseRecord) xmlRRSet {
	name := r.Name
	if strings.HasPrefix(name, "*.") {
		name = `\052` + name[1:]
	}
	s := xmlRRSet{Name: name + ".", Type: r.Type, SetIdentifier: r.SetIdentifier, Failover: r.Failover, Weight: r.Weight}
	if v, ok := r.ProviderSpecific["aws/weight"]; ok && s.Weight == nil {
		w, _ := strconv.ParseInt(v, 10, 64)
		s.Weight = &w
	}
	if v, ok := r.ProviderSpecific["aws/failover"]; ok && s.Failover == "" {
		s.Failover = v
	}
	s.HealthCheckId = r.ProviderSpecific["aws/health-check-id"]
	if r.ProviderSpecific["alias"] == "true" && (r.Type == "A" || r.Type == "AAAA") {
		hz := r.ProviderSpecific["aws/target-hosted-zone"]
		if hz == "" {
			hz = elbZone
		}
		s.AliasTarget = &xmlAliasTarget{
			HostedZoneId:         hz,
			DNSName:              strings.TrimSuffix(r.Targets[0], ".") + ".",
			EvaluateTargetHealth: r.ProviderSpecific["aws/evaluate-target-health"] != "false",
		}
		return s
	}
	ttl := r.TTL
	if ttl == 0 {
		ttl = 300
	}
	s.TTL = &ttl
	rrs := []xmlRR{}
	for _, t := range r.Targets {
		rrs = append(rrs, xmlRR{Value: t})
	}
	s.ResourceRecords = &rrs
	return s
}

func writeXML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml")
	io.WriteString(w, xml.Header+body)
}

func (f *fakeRoute53) serve(w http.ResponseWriter, req *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodGet && path == "/2013-04-01/hostedzone":
		writeXML(w, fmt.Sprintf(`<ListHostedZonesResponse xmlns=%q><HostedZones><HostedZone><Id>/hostedzone/%s</Id><Name>%s</Name><CallerReference>golden</CallerReference><Config><PrivateZone>false</PrivateZone></Config><ResourceRecordSetCount>%d</ResourceRecordSetCount></HostedZone></HostedZones><IsTruncated>false</IsTruncated><MaxItems>100</MaxItems></ListHostedZonesResponse>`,
			xmlns, zoneID, zoneName, len(f.rrsets)))
	case req.Method == http.MethodGet && path == "/2013-04-01/hostedzone/"+zoneID+"/rrset":
		out, err := xml.Marshal(struct {
			XMLName  xml.Name   `xml:"ListResourceRecordSetsResponse"`
			Xmlns    string     `xml:"xmlns,attr"`
			Sets     []xmlRRSet `xml:"ResourceRecordSets>ResourceRecordSet"`
			IsTrunc  bool       `xml:"IsTruncated"`
			MaxItems string     `xml:"MaxItems"`
		}{Xmlns: xmlns, Sets: f.rrsets, MaxItems: "300"})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeXML(w, string(out))
	case req.Method == http.MethodPost && path == "/2013-04-01/hostedzone/"+zoneID+"/rrset":
		var in xmlChangeRequest
		if err := xml.NewDecoder(req.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var batch []r53Change
		for _, c := range in.ChangeBatch.Changes {
			s := c.ResourceRecordSet
			rc := r53Change{Action: c.Action, Name: s.Name, Type: s.Type, SetIdentifier: s.SetIdentifier,
				Weight: s.Weight, Failover: s.Failover, TTL: s.TTL, HealthCheckID: s.HealthCheckId}
			if s.ResourceRecords != nil {
				for _, rr := range *s.ResourceRecords {
					rc.Values = append(rc.Values, rr.Value)
				}
			}
			if s.AliasTarget != nil {
				rc.AliasTarget = &r53AliasTarget{DNSName: s.AliasTarget.DNSName, HostedZoneID: s.AliasTarget.HostedZoneId,
					EvaluateTargetHealth: s.AliasTarget.EvaluateTargetHealth}
			}
			batch = append(batch, rc)
		}
		f.batches = append(f.batches, batch)
		writeXML(w, fmt.Sprintf(`<ChangeResourceRecordSetsResponse xmlns=%q><ChangeInfo><Id>/change/CGOLDEN%d</Id><Status>PENDING</Status><SubmittedAt>2024-01-01T00:00:00Z</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>`,
			xmlns, len(f.batches)))
	default:
		http.Error(w, fmt.Sprintf("fake route53: unsupported %s %s", req.Method, req.URL.Path), http.StatusNotImplemented)
	}
}

// ---------------------------------------------------------------- port of the AWS provider's ordering

// portedOrder is a port of provider/aws ApplyChanges → createUpdateChanges
// (requiresDeleteCreate) → batchChangeSet → sortChangesByActionNameType from
// external-dns v0.21.0, unchanged in v0.23.0 (one zone, everything fits one batch), with ties
// (same action, name, type) broken by set identifier. It is only used to
// cross-check the order the real provider sent.
func portedOrder(ch *plan.Changes) []string {
	type c struct{ action, name, typ, setID string }
	mk := func(action string, eps []*endpoint.Endpoint) []c {
		var out []c
		for _, e := range eps {
			out = append(out, c{action, e.DNSName, e.RecordType, e.SetIdentifier})
		}
		return out
	}
	var creates, upserts, deletes []*endpoint.Endpoint
	for i, n := range ch.UpdateNew {
		if i >= len(ch.UpdateOld) || ch.UpdateOld[i] == nil {
			continue
		}
		o := ch.UpdateOld[i]
		if requiresDeleteCreate(o, n) {
			deletes = append(deletes, o)
			creates = append(creates, n)
		} else {
			upserts = append(upserts, n)
		}
	}
	all := mk("CREATE", ch.Create)
	all = append(all, mk("DELETE", ch.Delete)...)
	all = append(all, mk("CREATE", creates)...)
	all = append(all, mk("UPSERT", upserts)...)
	all = append(all, mk("DELETE", deletes)...)
	rs := make([]r53Change, 0, len(all))
	for _, x := range all {
		rs = append(rs, r53Change{Action: x.action, Name: x.name, Type: x.typ, SetIdentifier: x.setID})
	}
	sortStable(rs)
	var lines []string
	for _, r := range rs {
		lines = append(lines, orderLine(r.Action, r.Name, r.Type, r.SetIdentifier))
	}
	return lines
}

func sortStable(rs []r53Change) {
	// insertion sort keeps it obviously stable
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && lessChange(rs[j], rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func requiresDeleteCreate(old, newE *endpoint.Endpoint) bool {
	if old.RecordType != newE.RecordType {
		return true
	}
	if old.RecordType == endpoint.RecordTypeA {
		oa, _ := old.GetProviderSpecificProperty("alias")
		na, _ := newE.GetProviderSpecificProperty("alias")
		if oa != na {
			return true
		}
	}
	if old.SetIdentifier != newE.SetIdentifier {
		return true
	}
	for _, p := range []string{"aws/weight", "aws/region", "aws/failover", "aws/geolocation-continent-code",
		"aws/geolocation-country-code", "aws/geolocation-subdivision-code"} {
		_, o := old.GetProviderSpecificProperty(p)
		_, n := newE.GetProviderSpecificProperty(p)
		if o != n {
			return true
		}
	}
	return false
}
