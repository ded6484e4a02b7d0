package cloudmap

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// instanceIDPattern and its length are Cloud Map's rule for an instance id.
var instanceIDPattern = regexp.MustCompile(`^[0-9a-zA-Z_/:.@-]{1,64}$`)

func TestInstanceID(t *testing.T) {
	base := InstanceID("blue", "shop", "web", "10.0.1.1", 8080)
	for _, tc := range []struct {
		name   string
		id     string
		same   bool   // equal to base
		prefix string // its readable prefix
	}{
		{"deterministic", InstanceID("blue", "shop", "web", "10.0.1.1", 8080), true, "blue-"},
		{"another owner", InstanceID("green", "shop", "web", "10.0.1.1", 8080), false, "green-"},
		{"another Service namespace", InstanceID("blue", "shop2", "web", "10.0.1.1", 8080), false, "blue-"},
		{"another Service", InstanceID("blue", "shop", "web2", "10.0.1.1", 8080), false, "blue-"},
		{"another address", InstanceID("blue", "shop", "web", "10.0.1.2", 8080), false, "blue-"},
		{"another port", InstanceID("blue", "shop", "web", "10.0.1.1", 8081), false, "blue-"},
		{"IPv6", InstanceID("blue", "shop", "web", "fd00::1", 8080), false, "blue-"},
		{"owner with characters an id cannot hold", InstanceID("team a/eks+blue", "shop", "web", "10.0.1.1", 8080), false, "team_a/eks_blue-"},
		{"long owner", InstanceID(strings.Repeat("x", 80), "shop", "web", "10.0.1.1", 8080), false, strings.Repeat("x", 32) + "-"},
		{"empty owner", InstanceID("", "shop", "web", "10.0.1.1", 8080), false, "crossfade-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !instanceIDPattern.MatchString(tc.id) || len(tc.id) > 57 {
				t.Errorf("%q is not an instance id Cloud Map takes (or longer than 57)", tc.id)
			}
			if (tc.id == base) != tc.same {
				t.Errorf("%q vs %q: same %v, want %v", tc.id, base, tc.id == base, tc.same)
			}
			if !strings.HasPrefix(tc.id, tc.prefix) || len(tc.id) != len(tc.prefix)+24 {
				t.Errorf("%q: want prefix %q and 24 hex digits", tc.id, tc.prefix)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	const res = "service/shop/web"
	mine := func(addr string, extra ...string) map[string]string {
		m := map[string]string{AttrIPv4: addr, AttrPort: "8080", AttrCluster: "blue", AttrOwner: "blue", AttrResource: res}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	want := func(pairs ...string) map[string]Instance {
		out := map[string]Instance{}
		for i := 0; i+1 < len(pairs); i += 2 {
			out[pairs[i]] = Instance{ID: pairs[i], Attributes: mine(pairs[i+1]), Resource: res}
		}
		return out
	}
	other := func(owner string) map[string]string {
		if owner == "" {
			return map[string]string{}
		}
		return map[string]string{AttrOwner: owner}
	}
	for _, tc := range []struct {
		name      string
		want      map[string]Instance
		have      map[string]map[string]string
		keep      Keep
		ops       []string
		conflicts []string
	}{
		{name: "nothing there: register", want: want("b", "10.0.1.2", "a", "10.0.1.1"), ops: []string{"register a", "register b"}},
		{name: "as wanted: nothing", want: want("a", "10.0.1.1"), have: map[string]map[string]string{"a": mine("10.0.1.1")}},
		{name: "ours with other attributes: register again",
			want: want("a", "10.0.1.1"), have: map[string]map[string]string{"a": mine("10.0.1.1", "version", "v1")},
			ops: []string{"register a (update)"}},
		{name: "ours, not wanted: deregister; registrations first",
			want: want("b", "10.0.1.2"), have: map[string]map[string]string{"a": mine("10.0.1.1")},
			ops: []string{"register b", "deregister a"}},
		{name: "another cluster's id wanted: conflict, never written",
			want: want("a", "10.0.1.1"), have: map[string]map[string]string{"a": other("green")},
			conflicts: []string{"a held by green"}},
		{name: "a foreign registrar's id wanted: conflict",
			want: want("a", "10.0.1.1"), have: map[string]map[string]string{"a": other("")},
			conflicts: []string{"a held by "}},
		{name: "an owner value that only looks like ours is not ours",
			want: want("a", "10.0.1.1"), have: map[string]map[string]string{"a": other("blue "), "b": other("Blue"), "c": other("blue-2")},
			conflicts: []string{"a held by blue "}},
		{name: "others' instances nothing wants: untouched",
			have: map[string]map[string]string{"g": other("green"), "f": other(""), "blue-1": {AttrCluster: "blue"}}},
		{name: "incomplete objects: nothing deregistered, registrations go on",
			want: want("b", "10.0.1.2"), have: map[string]map[string]string{"a": mine("10.0.1.1")}, keep: Keep{All: true},
			ops: []string{"register b"}},
		{name: "an invalid object's instances are kept",
			have: map[string]map[string]string{"a": mine("10.0.1.1"), "z": mine("10.0.9.9", AttrResource, "service/shop/other")},
			keep: Keep{Held: map[string]bool{res: true}}, ops: []string{"deregister z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, conflicts := Diff(tc.want, tc.have, "blue", tc.keep)
			var got, gotC []string
			for _, op := range ops {
				s := string(op.Action) + " " + op.ID
				if op.Update {
					s += " (update)"
				}
				got = append(got, s)
				if op.Action == Register && op.Resource != res {
					t.Errorf("%s: resource %q", s, op.Resource)
				}
			}
			for _, c := range conflicts {
				gotC = append(gotC, fmt.Sprintf("%s held by %s", c.ID, c.Owner))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.ops) || fmt.Sprint(gotC) != fmt.Sprint(tc.conflicts) {
				t.Errorf("ops %q conflicts %q, want %q %q", got, gotC, tc.ops, tc.conflicts)
			}
		})
	}
}
