package authority

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/registry"
)

// TestAuthorityValue: the runner as a tag value keeps its token and pid whole, and makes
// the host name fit the tag characters and length both providers take; a key parses back
// to its cutover and token only when it is one.
func TestAuthorityValue(t *testing.T) {
	for _, tc := range []struct {
		r    registry.Runner
		want string
	}{
		{registry.Runner{Token: "0a1b", Host: "laptop.local", PID: 7}, "0a1b@laptop.local:7"},
		{registry.Runner{Token: "0a1b", Host: "my host,x=y", PID: 7}, "0a1b@my-host-x-y:7"},
		{registry.Runner{Token: "0a1b", Host: strings.Repeat("h", 300), PID: 7}, "0a1b@" + strings.Repeat("h", 256-len("0a1b@:7")) + ":7"},
	} {
		got := Value(tc.r)
		if got != tc.want || len(got) > maxTagValue {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
		if r := tagHolder(tc.r.Token, got); r.Token != tc.r.Token || r.PID != tc.r.PID {
			t.Errorf("%q read back as %+v", got, r)
		}
	}
	for _, tc := range []struct {
		key            string
		cutover, token string
		ok             bool
	}{
		{"crossfade.io/cutover/shop/0a1b", "shop", "0a1b", true},
		{"crossfade.io/cutover/shop/", "", "", false},
		{"crossfade.io/cutover/shop", "", "", false},
		{"crossfade.io/cutover/shop/0a/1b", "", "", false},
		{"crossfade.io/cutover-shop", "", "", false},
	} {
		c, tok, ok := parseAuthorityKey(tc.key)
		if ok != tc.ok || (ok && (c != tc.cutover || tok != tc.token)) {
			t.Errorf("%q: %q %q %v", tc.key, c, tok, ok)
		}
	}
}
