package cloudmapstore

import (
	"fmt"
	"strings"
	"testing"
)

// TestRetag checks the write every tag change shares: edit sees the resource's tags and
// what it returns is stored; an edit that fails, or an ARN that names nothing, stores
// nothing.
func TestRetag(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceHTTP, "shop", "")
	if err := f.s.TagResource(ns.ARN, []Tag{{"team", "web"}}); err != nil {
		t.Fatal(err)
	}
	refuse := errorf(CodeTooManyTags, "refused")
	for _, tc := range []struct {
		name     string
		arn      string
		edit     func(have []Tag) ([]Tag, *Error)
		wantSeen string // the tags edit saw; "" when it must not run
		wantCode string
		wantTags string // after the call
	}{
		{name: "edit stores what it returns", arn: ns.ARN,
			edit:     func(have []Tag) ([]Tag, *Error) { return append(have, Tag{"env", "dev"}), nil },
			wantSeen: "[{team web}]", wantTags: "[{team web} {env dev}]"},
		{name: "a failed edit stores nothing", arn: ns.ARN,
			edit:     func([]Tag) ([]Tag, *Error) { return nil, refuse },
			wantSeen: "[{team web} {env dev}]", wantCode: CodeTooManyTags, wantTags: "[{team web} {env dev}]"},
		{name: "an ARN naming nothing", arn: strings.Replace(ns.ARN, ns.ID, "ns-gone", 1),
			edit:     func(have []Tag) ([]Tag, *Error) { return nil, nil },
			wantCode: CodeResourceNotFound, wantTags: "[{team web} {env dev}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := ""
			err := f.s.retag(tc.arn, func(have []Tag) ([]Tag, *Error) {
				seen = fmt.Sprint(have)
				return tc.edit(have)
			})
			if tc.wantCode != "" {
				wantCode(t, err, tc.wantCode, "")
			} else if err != nil {
				t.Fatal(err)
			}
			if seen != tc.wantSeen {
				t.Errorf("edit saw %q, want %q", seen, tc.wantSeen)
			}
			got, err := f.s.ListTagsForResource(ns.ARN)
			if err != nil || fmt.Sprint(got) != tc.wantTags {
				t.Errorf("tags after = %v, %v; want %s", got, err, tc.wantTags)
			}
		})
	}
}
