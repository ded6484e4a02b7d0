package elb

import (
	"slices"
	"strings"
	"testing"
)

// TestEditTargets checks the start every target write shares: the group is found, the
// targets are checked as registering or deregistering checks them, and the copy handed
// out shares no Targets array with the stored group, which readers hold without a lock.
func TestEditTargets(t *testing.T) {
	f := newFixture(t)
	if err := f.s.RegisterTargets("", f.blue, []TargetInput{{ID: "10.0.0.1"}, {ID: "10.0.0.2", Port: ptr(9090)}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name              string
		arn               string
		targets           []TargetInput
		register          bool
		wantKeys          []TargetKey
		wantCode, wantMsg string
	}{
		{name: "register defaults the port to the group's", arn: f.blue, targets: []TargetInput{{ID: "10.0.0.3"}}, register: true,
			wantKeys: []TargetKey{{ID: "10.0.0.3", Port: 8080}}},
		{name: "deregister keeps the port given", arn: f.blue, targets: []TargetInput{{ID: "10.0.0.2", Port: ptr(9090)}},
			wantKeys: []TargetKey{{ID: "10.0.0.2", Port: 9090}}},
		{name: "unknown group", arn: strings.Replace(f.blue, "/blue/", "/x/", 1), targets: []TargetInput{{ID: "10.0.0.3"}}, register: true,
			wantCode: CodeTargetGroupNotFound, wantMsg: "One or more target groups not found"},
		{name: "register checks the id", arn: f.blue, targets: []TargetInput{{ID: "not-an-ip"}}, register: true,
			wantCode: CodeValidation, wantMsg: "The IP address 'not-an-ip' is not a valid IPv4 address"},
		{name: "no targets", arn: f.blue, targets: nil,
			wantCode: CodeValidation, wantMsg: "Value null at 'targets'"},
		{name: "port out of range", arn: f.blue, targets: []TargetInput{{ID: "10.0.0.3", Port: ptr(0)}},
			wantCode: CodeValidation, wantMsg: "Value '0' at 'targets.1.member.port'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := f.s.begin()
			tg, n, keys, err := tx.editTargets("", tc.arn, tc.targets, tc.register)
			if tc.wantCode != "" {
				wantErr(t, err, tc.wantCode, tc.wantMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys, tc.wantKeys) {
				t.Fatalf("keys = %v, want %v", keys, tc.wantKeys)
			}
			if tg.ARN != tc.arn || n.ARN != tc.arn || n == tg {
				t.Fatalf("got group %s and copy %s (same: %t), want two of %s", tg.ARN, n.ARN, n == tg, tc.arn)
			}
			if !slices.Equal(n.Targets, tg.Targets) {
				t.Fatalf("copy's targets = %v, want the stored %v", n.Targets, tg.Targets)
			}
			n.Targets[0].ID = "changed"
			if tg.Targets[0].ID == "changed" {
				t.Fatal("changing the copy's targets changed the stored group's")
			}
		})
	}
}

func TestIndexTarget(t *testing.T) {
	ts := []Target{{ID: "10.0.0.1", Port: 80}, {ID: "10.0.0.1", Port: 81}, {ID: "10.0.0.2", Port: 80}}
	for _, tc := range []struct {
		k    TargetKey
		want int
	}{
		{TargetKey{ID: "10.0.0.1", Port: 80}, 0},
		{TargetKey{ID: "10.0.0.1", Port: 81}, 1}, // the port tells two registrations of one id apart
		{TargetKey{ID: "10.0.0.2", Port: 80}, 2},
		{TargetKey{ID: "10.0.0.2", Port: 81}, -1},
		{TargetKey{ID: "10.0.0.3", Port: 80}, -1},
	} {
		if got := indexTarget(ts, tc.k); got != tc.want {
			t.Errorf("indexTarget(%v) = %d, want %d", tc.k, got, tc.want)
		}
	}
}
