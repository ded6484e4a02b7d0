package handover

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// owned is an A record of owner with its ownership TXT record, as a publisher writes them.
func owned(t *testing.T, name, ip, owner, set string) []*endpoint.Endpoint {
	t.Helper()
	return ownedType(t, endpoint.TypeA, name, ip, owner, set)
}

// ownedType is a record of type typ and owner with its ownership TXT record.
func ownedType(t *testing.T, typ, name, ip, owner, set string) []*endpoint.Endpoint {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	rec := &endpoint.Endpoint{Name: name, Type: typ, Targets: endpoint.NewTargets(ip), TTL: endpoint.NewTTL(60),
		Labels: endpoint.Labels{endpoint.OwnerLabel: owner, endpoint.ResourceLabel: "service/default/" + strings.Split(name, ".")[0]}}
	if set != "" {
		rec.SetIdentifier, rec.Policy = set, endpoint.WeightedPolicy(1)
	}
	return append([]*endpoint.Endpoint{rec}, reg.For(rec)...)
}

// weighted is count A members of name, all of owner, each with its ownership record; with
// dualStack, as many AAAA members too.
func weighted(t *testing.T, name, owner string, count int, dualStack bool) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for i := range count {
		set := fmt.Sprintf("member-%03d", i)
		out = append(out, owned(t, name, fmt.Sprintf("127.0.%d.%d", i/250, i%250+1), owner, set)...)
		if dualStack {
			out = append(out, ownedType(t, endpoint.TypeAAAA, name, fmt.Sprintf("2001:db8::%x", i+1), owner, set)...)
		}
	}
	return out
}

// create writes records into zone, in batches Route 53 takes.
func create(t *testing.T, p *route53.Provider, zone provider.Zone, records []*endpoint.Endpoint) {
	t.Helper()
	for chunk := range slices.Chunk(records, 200) {
		var batch changes.Batch
		for _, r := range chunk {
			batch = append(batch, changes.Change{Action: changes.Create, Endpoint: r})
		}
		if err := p.Apply(context.Background(), zone, batch); err != nil {
			t.Fatalf("create records: %v", err)
		}
	}
}

// owners are the owners the ownership records of zone name, by "name type [set]" of the
// ownership record.
func owners(t *testing.T, p *route53.Provider, zone provider.Zone) map[string]string {
	t.Helper()
	records, err := p.Records(context.Background(), zone)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range records {
		if r.Type != endpoint.TypeTXT {
			continue
		}
		labels, err := registry.ParsePayload(r.Targets[0])
		if err != nil {
			continue
		}
		out[r.Key().String()] = labels[endpoint.OwnerLabel]
	}
	return out
}

// TestRun hands records over in a zone of an in-process sandbox through the Route 53
// provider, and checks what moved, what was refused and said, and how many change
// batches were sent.
func TestRun(t *testing.T) {
	cases := []struct {
		name string
		// records are created in the zone (the first, when two share its name).
		records func(t *testing.T) []*endpoint.Endpoint
		// twoZones creates a second zone named example.com.
		twoZones bool
		// zoneRef is --zone, given the zones' ids ("" for example.com).
		zoneRef func(ids []string) string
		dryRun  bool
		// wantErr is part of the error, "" for none.
		wantErr string
		// wantOut are parts of the output.
		wantOut []string
		// wantOwner is the owner of every ownership record afterwards, by name prefix.
		wantOwner map[string]string
		// wantBatches is how many ChangeResourceRecordSets calls the handover sent.
		wantBatches int
	}{{
		name: "every name moves whole, all names in one batch",
		records: func(t *testing.T) []*endpoint.Endpoint {
			return slices.Concat(owned(t, "web.example.com", "127.0.0.1", "cluster-a", ""),
				weighted(t, "app.example.com", "cluster-a", 3, false),
				owned(t, "shop.example.com", "127.0.0.2", "cluster-c", ""))
		},
		wantOut:     []string{"handover cluster-a -> cluster-b: 4 records moved, 0 refused; 8 ownership record changes in 1 change batch"},
		wantOwner:   map[string]string{"a-web.": "cluster-b", "a-app.": "cluster-b", "a-shop.": "cluster-c"},
		wantBatches: 1,
	}, {
		// 100 A and 100 AAAA members (Route 53's most of a weighted set): their ownership
		// records change by 400 values of about 90 characters, more than the 32,000
		// characters of one batch. Part of them moving would leave the name owned by two
		// owners at once.
		name: "a name too large for one batch is refused, the others still move",
		records: func(t *testing.T) []*endpoint.Endpoint {
			return slices.Concat(weighted(t, "big.example.com", "cluster-a", 100, true), owned(t, "web.example.com", "127.0.0.1", "cluster-a", ""))
		},
		wantErr:     "200 records were not handed over",
		wantOut:     []string{"changes exceed one change batch", "handover cluster-a -> cluster-b: 1 record moved, 200 refused"},
		wantOwner:   map[string]string{"a-big.": "cluster-a", "a-web.": "cluster-b"},
		wantBatches: 1,
	}, {
		name: "a dry run renders the batch and writes nothing",
		records: func(t *testing.T) []*endpoint.Endpoint {
			return owned(t, "web.example.com", "127.0.0.1", "cluster-a", "")
		},
		dryRun: true,
		wantOut: []string{"would move web.example.com A", `"Action": "DELETE"`, `"Action": "CREATE"`, "external-dns/owner=cluster-b",
			"2 ownership record changes in 1 change batch", "dry run: nothing was sent"},
		wantOwner: map[string]string{"a-web.": "cluster-a"},
	}, {
		name:     "a zone name two zones have is refused, naming both ids",
		twoZones: true,
		records: func(t *testing.T) []*endpoint.Endpoint {
			return owned(t, "web.example.com", "127.0.0.1", "cluster-a", "")
		},
		wantErr:   `--zone "example.com": 2 hosted zones have this name (`,
		wantOwner: map[string]string{"a-web.": "cluster-a"},
	}, {
		name:     "the id picks one of two zones of a name",
		twoZones: true,
		zoneRef:  func(ids []string) string { return "/hostedzone/" + ids[0] },
		records: func(t *testing.T) []*endpoint.Endpoint {
			return owned(t, "web.example.com", "127.0.0.1", "cluster-a", "")
		},
		wantOut:     []string{"1 record moved"},
		wantOwner:   map[string]string{"a-web.": "cluster-b"},
		wantBatches: 1,
	}, {
		name:    "a zone nobody has is refused",
		zoneRef: func([]string) string { return "example.org" },
		records: func(t *testing.T) []*endpoint.Endpoint {
			return owned(t, "web.example.com", "127.0.0.1", "cluster-a", "")
		},
		wantErr:   `--zone "example.org": no hosted zone has this name or id`,
		wantOwner: map[string]string{"a-web.": "cluster-a"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			p, zone := route53test.Zone(t, sb, "example.com")
			ids := []string{zone.ID}
			if tc.twoZones {
				_, other := route53test.Zone(t, sb, "example.com")
				ids = append(ids, other.ID)
			}
			create(t, p, zone, tc.records(t))
			ref := "example.com"
			if tc.zoneRef != nil {
				ref = tc.zoneRef(ids)
			}
			before := sandboxtest.APICalls(t, sb)["ChangeResourceRecordSets ok"]
			var out bytes.Buffer
			// A fresh provider, as the command builds one: no zone list cached.
			err := Run(t.Context(), route53test.New(t, sb), Config{Zone: ref, From: "cluster-a", To: "cluster-b", DryRun: tc.dryRun}, &out)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Run: %v\n%s", err, out.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Run: error %v, want one containing %q\n%s", err, tc.wantErr, out.String())
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if got := sandboxtest.APICalls(t, sb)["ChangeResourceRecordSets ok"] - before; got != tc.wantBatches {
				t.Errorf("%d change batches sent, want %d", got, tc.wantBatches)
			}
			for key, owner := range owners(t, p, zone) {
				for prefix, want := range tc.wantOwner {
					if strings.HasPrefix(key, prefix) && owner != want {
						t.Errorf("%s owned by %q, want %q", key, owner, want)
					}
				}
			}
		})
	}
}

// TestFindZone picks --zone's zone by id or by name, and refuses a name that several
// zones have or that none has, saying what to pass instead.
func TestFindZone(t *testing.T) {
	zones := []provider.Zone{{ID: "Z1", Name: "example.com"}, {ID: "Z2", Name: "example.com"}, {ID: "Z3", Name: "example.org"}}
	cases := []struct {
		want, wantID, wantErr string
	}{
		{want: "Z2", wantID: "Z2"},
		{want: "/hostedzone/Z1", wantID: "Z1"},
		{want: "example.org", wantID: "Z3"},
		{want: "Example.ORG.", wantID: "Z3"},
		{want: "example.com", wantErr: `--zone "example.com": 2 hosted zones have this name (Z1, Z2): pass the id`},
		{want: "example.net", wantErr: `--zone "example.net": no hosted zone has this name or id`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			z, err := findZone(zones, tc.want)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("findZone(%q) = %v, %v; want error %q", tc.want, z, err, tc.wantErr)
				}
				return
			}
			if err != nil || z.ID != tc.wantID {
				t.Fatalf("findZone(%q) = %v, %v; want zone %s", tc.want, z, err, tc.wantID)
			}
		})
	}
}
