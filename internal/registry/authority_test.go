package registry

import (
	"maps"
	"reflect"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// TestHolds: authority records are written and read back, by name and type, and nothing
// else is taken for one.
func TestHolds(t *testing.T) {
	rec := AuthorityRecord("app.example.com", []string{"AAAA", "A", "A"}, "app-1-21")
	if rec.Name != "_crossfade-weights.app.example.com" || rec.Targets[0] != `"heritage=crossfade,crossfade/cutover=app-1-21,crossfade/types=A;AAAA"` {
		t.Fatalf("record %s %q", rec.Name, rec.Targets)
	}
	withRunner := Authority{Name: "app.example.com", Cutover: "app-1-21", Types: []string{"A"},
		Runner: Runner{Token: "0123456789abcdef", Host: "ci-7.example.net", PID: 4242}}.Record()
	if withRunner.Targets[0] != `"heritage=crossfade,crossfade/cutover=app-1-21,crossfade/types=A,crossfade/runner=0123456789abcdef@ci-7.example.net:4242"` {
		t.Fatalf("record with runner %q", withRunner.Targets)
	}
	tests := []struct {
		name string
		in   []*endpoint.Endpoint
		want map[endpoint.Key]string
	}{
		{"round trip", []*endpoint.Endpoint{rec}, map[endpoint.Key]string{
			{Name: "app.example.com", Type: "A"}: "app-1-21", {Name: "app.example.com", Type: "AAAA"}: "app-1-21"}},
		// The runner is appended last: a reader of the older form still finds the rest.
		{"with runner", []*endpoint.Endpoint{withRunner}, map[endpoint.Key]string{{Name: "app.example.com", Type: "A"}: "app-1-21"}},
		{"ownership TXT is not authority", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=a"`}}}, nil},
		{"unquoted value", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`heritage=crossfade,crossfade/cutover=c,crossfade/types=A`}}}, nil},
		{"other name", []*endpoint.Endpoint{{Name: "x.example.com", Type: "TXT", Targets: rec.Targets}}, nil},
		{"no cutover", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`"heritage=crossfade,crossfade/types=A"`}}}, nil},
	}
	for _, tt := range tests {
		var got map[endpoint.Key]string
		for k, a := range Holds(tt.in) {
			if got == nil {
				got = map[endpoint.Key]string{}
			}
			got[k] = a.Cutover
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestHoldState: what a publisher confirms of a hold changes with the run (its token)
// and with the types held, and with nothing else (the runner's host or pid).
func TestHoldState(t *testing.T) {
	a := Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"AAAA", "A"}, Runner: Runner{Token: "t0k3n", Host: "ci", PID: 7}}
	if got := a.State(); got != "t0k3n A;AAAA" {
		t.Errorf("state %q, want %q", got, "t0k3n A;AAAA")
	}
	moved := a
	moved.Runner = Runner{Token: "t0k3n", Host: "other", PID: 8}
	newRun := a
	newRun.Runner.Token = "n3w"
	fewer := a
	fewer.Types = []string{"A"}
	if moved.State() != a.State() || newRun.State() == a.State() || fewer.State() == a.State() {
		t.Errorf("states: same run elsewhere %q, new run %q, fewer types %q; from %q", moved.State(), newRun.State(), fewer.State(), a.State())
	}
}

func TestParseAuthority(t *testing.T) {
	txt := func(v string) *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: "_crossfade-weights.app.example.com", Type: "TXT", Targets: endpoint.Targets{v}}
	}
	tests := []struct {
		name string
		in   *endpoint.Endpoint
		want Authority
		ok   bool
	}{
		{"old record: no runner", txt(`"heritage=crossfade,crossfade/cutover=c,crossfade/types=A"`),
			Authority{Name: "app.example.com", Cutover: "c", Types: []string{"A"}}, true},
		{"runner", txt(`"heritage=crossfade,crossfade/cutover=c,crossfade/types=A,crossfade/runner=tok@host-1:77"`),
			Authority{Name: "app.example.com", Cutover: "c", Types: []string{"A"}, Runner: Runner{Token: "tok", Host: "host-1", PID: 77}}, true},
		{"runner without pid", txt(`"heritage=crossfade,crossfade/cutover=c,crossfade/types=A,crossfade/runner=tok@host-1"`),
			Authority{Name: "app.example.com", Cutover: "c", Types: []string{"A"}, Runner: Runner{Token: "tok", Host: "host-1"}}, true},
		{"bare token", txt(`"heritage=crossfade,crossfade/cutover=c,crossfade/types=A,crossfade/runner=tok"`),
			Authority{Name: "app.example.com", Cutover: "c", Types: []string{"A"}, Runner: Runner{Token: "tok"}}, true},
		{"unknown keys are skipped", txt(`"heritage=crossfade,crossfade/cutover=c,crossfade/future=x,crossfade/types=A"`),
			Authority{Name: "app.example.com", Cutover: "c", Types: []string{"A"}}, true},
		{"not crossfade's", txt(`"heritage=external-dns,external-dns/owner=a"`), Authority{}, false},
		{"nil", nil, Authority{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseAuthority(tt.in)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %t; want %+v, %t", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAuthorityRunnerRoundTrip(t *testing.T) {
	tests := []struct {
		in, want Runner
	}{
		{Runner{Token: "ab12", Host: "laptop.local", PID: 1}, Runner{Token: "ab12", Host: "laptop.local", PID: 1}},
		// A host name that would break the payload is made safe, not refused.
		{Runner{Token: "ab12", Host: "bad,host=x@y:z", PID: 9}, Runner{Token: "ab12", Host: "bad-host-x-y-z", PID: 9}},
		// An old journal's runner has no token, only where it runs now.
		{Runner{Host: "h", PID: 3}, Runner{Host: "h", PID: 3}},
	}
	for _, tt := range tests {
		rec := Authority{Name: "a.example.com", Cutover: "c", Types: []string{"A"}, Runner: tt.in}.Record()
		got, ok := ParseAuthority(rec)
		if !ok || got.Runner != tt.want || got.Cutover != "c" {
			t.Errorf("%+v: read back %+v (%t) from %q, want runner %+v", tt.in, got, ok, rec.Targets[0], tt.want)
		}
	}
}

// TestHoldIDInAnOwnershipRecord: the id of a hold, as publishers write it into ownership
// records, is the runner's token (the cutover's name for a record without runner), read
// back unchanged from the external-dns payload, and keeps the payload's k=v,k=v form
// whatever the token held.
func TestHoldIDInAnOwnershipRecord(t *testing.T) {
	for _, tt := range []struct {
		a    Authority
		want string
	}{
		{Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: Runner{Token: "0a1b2c", Host: "ci", PID: 7}}, "0a1b2c"},
		{Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}}, "shop"},
		{Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: Runner{Token: "a=b,c\"d", Host: "ci"}}, "a-b-c-d"},
	} {
		read, ok := ParseAuthority(tt.a.Record())
		if !ok {
			t.Fatalf("%+v: record not read back", tt.a)
		}
		if got := read.HoldID(); got != tt.want {
			t.Errorf("%+v: hold id %q, want %q", tt.a, got, tt.want)
		}
		l := endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ConfirmsHoldLabel: read.HoldID()}
		back, err := ParsePayload(Payload(l))
		if err != nil || back[endpoint.ConfirmsHoldLabel] != tt.want || back[endpoint.OwnerLabel] != "blue" {
			t.Errorf("%+v: payload %s read back as %v, %v", tt.a, Payload(l), back, err)
		}
	}
}
