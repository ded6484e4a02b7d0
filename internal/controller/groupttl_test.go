package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// TestSyncSharedGroupTTLFollowsPublishers: a weighted group published by two owners (a
// cluster each) moves to a new TTL through its publishers alone, as after a cutover
// restored TTL 30 and both clusters were then annotated ttl: "1". The first publisher to
// sync cannot move the group (the other member still carries 30, and Route 53 keeps one
// TTL per group): it publishes at 30, records that it asks for 1, and its note names what
// each member asks. The second, asking 1 too, moves both sets in one batch; after one more
// sync each, the group is at 1, neither ownership record asks for anything, and syncing
// again writes nothing.
func TestSyncSharedGroupTTLFollowsPublishers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	ip := map[string]string{"blue": "192.0.2.1", "green": "192.0.2.2"}
	member := func(owner string, ttl endpoint.TTL) *endpoint.Endpoint {
		m := svc("app.example.com", ip[owner], owner, 1)
		m.TTL = ttl
		return m
	}
	for _, o := range []string{"blue", "green"} {
		e.sync(t, o, changes.Sync, member(o, 30))
	}

	steps := []struct {
		owner string
		ttls  string // the group's TTLs after the sync, blue's then green's
		txt   string // the owner's ownership record after the sync
		notes []string
	}{
		{"blue", "30 30", `"heritage=external-dns,external-dns/crossfade-wants-ttl=1,external-dns/owner=blue,external-dns/resource=service/default/app"`,
			[]string{`they ask: green (owner "green") carries 30 and records no TTL it asks for`}},
		{"green", "1 1", `"heritage=external-dns,external-dns/owner=green,external-dns/resource=service/default/app"`, nil},
		{"blue", "1 1", `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`, nil},
		{"green", "1 1", `"heritage=external-dns,external-dns/owner=green,external-dns/resource=service/default/app"`, nil},
	}
	for i, st := range steps {
		rep := e.sync(t, st.owner, changes.Sync, member(st.owner, 1))
		ttls, txt := e.group(t)
		if ttls != st.ttls || txt[st.owner] != st.txt {
			t.Errorf("step %d, %s synced: TTLs %s, ownership record %s; want TTLs %s, %s", i, st.owner, ttls, txt[st.owner], st.ttls, st.txt)
		}
		notes := rep.Notes()
		if len(notes) != len(st.notes) {
			t.Errorf("step %d, %s synced: notes %v, want %d", i, st.owner, notes, len(st.notes))
			continue
		}
		for j, n := range notes {
			if !strings.Contains(n.String(), st.notes[j]) {
				t.Errorf("step %d, %s synced: note %q lacks %q", i, st.owner, n, st.notes[j])
			}
		}
	}
	before := e.calls(t, "ChangeResourceRecordSets")
	for _, o := range []string{"blue", "green"} {
		e.sync(t, o, changes.Sync, member(o, 1))
	}
	if n := e.calls(t, "ChangeResourceRecordSets") - before; n != 0 {
		t.Errorf("steady state made %d change calls", n)
	}
}

// group returns the TTLs of app.example.com's weighted A sets, blue's then green's, and
// each owner's ownership record of it.
func (e *env) group(t *testing.T) (string, map[string]string) {
	t.Helper()
	recs, err := e.p.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	ttl := map[string]string{}
	txt := map[string]string{}
	for _, r := range recs {
		switch {
		case r.Name == "app.example.com" && r.Type == "A":
			ttl[r.SetIdentifier] = fmt.Sprint(r.TTL.Seconds())
		case r.Name == "a-app.example.com" && r.Type == "TXT":
			txt[r.SetIdentifier] = strings.Join(r.Targets, "")
		}
	}
	return ttl["blue"] + " " + ttl["green"], txt
}
