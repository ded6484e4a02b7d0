package authority

import (
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossfade-io/crossfade/internal/registry"
)

// saneToken is a runner token as this code can write it into a key and read it back: a
// token of newToken (hex), or the preview's; tokens are never read from anywhere else.
var saneToken = regexp.MustCompile(`^[0-9A-Za-z._-]{1,64}$`)

// FuzzAuthorityTags feeds authority tags as they are read back from ELBv2 or Cloud Map
// (written by other runners, other versions, or by hand) through the parsing and the
// classification the protocol decides on. Nothing may panic. A tag is this runner's only
// when its key is exactly the one this runner writes, whatever its value says; a key that
// parses is exactly the key this code would write for what it read, and is reported as
// another runner's hold of this cutover (named by the key's token, not the value) or as
// another cutover's tag, naming it. And what this code writes (the key for a cutover and
// token, the value for a runner with any host name and pid) reads back as the same
// holder, within the tag value's length.
func FuzzAuthorityTags(f *testing.F) {
	for _, s := range []struct {
		key, value, cutover, token, host string
		pid                              int
	}{
		{"crossfade.io/cutover/shop/0a1b2c3d4e5f6071", "0a1b2c3d4e5f6071@laptop.local:7", "shop", "0a1b2c3d4e5f6071", "laptop.local", 7},
		{"crossfade.io/cutover/shop/ffff", "ffff@other:1", "shop", "0a1b", "my host,x=y", 1},
		{"crossfade.io/cutover/other/ffff", "ffff@other:1", "shop", "0a1b", "", 0},
		{"crossfade.io/cutover/shop/", "x", "shop", "0a1b", "h", -1},
		{"crossfade.io/cutover/shop", "x", "shop", "0a1b", "h", 1 << 40},
		{"crossfade.io/cutover/shop/0a/1b", "0a@h:1", "shop", "0a", "h:1", 2},
		{"crossfade.io/cutover//0a1b", "", "shop", "0a1b", strings.Repeat("h", 300), 99999},
		{"crossfade.io/cutover/", "", "shop", "TOKEN", "", 0},
		{"crossfade.io/cutover/Shop/0a1b", "0a1b", "shop", "0a1b", "日本", 3},
		{"crossfade.io/cutover-shop", "v", "shop", "0a1b", "h", 3},
		{"crossfade.io/cutover/shop/0a1b ", "0a1b@h:3", "shop", "0a1b", "h", 3},
		{"crossfade.io/cutover/shop/0a1b", "someone@else:12", "shop", "0a1b", "h", 3},
		{"crossfade.io/cutover/shop/0a1b", "garbage", "shop", "", "h", 3},
		{"team", "payments", "shop", "0a1b", "h", 3},
	} {
		f.Add(s.key, s.value, s.cutover, s.token, s.host, s.pid)
	}
	f.Fuzz(func(t *testing.T, key, value, cutover, token, host string, pid int) {
		if len(validation.IsDNS1123Label(cutover)) > 0 {
			cutover = "shop" // a plan's name is a DNS label (spec)
		}
		if !saneToken.MatchString(token) {
			token = hex.EncodeToString([]byte(token)[:min(len(token), 8)])
		}
		me := registry.Runner{Token: token, Host: "me.local", PID: 1}

		checkReadKey(t, key, value, cutover, me)

		// What this code writes reads back as the same holder.
		if token == "" {
			return
		}
		r := registry.Runner{Token: token, Host: host, PID: pid}
		k, v := Key(cutover, token), Value(r)
		if c, tok, ok := parseAuthorityKey(k); !ok || c != cutover || tok != token {
			t.Fatalf("key %q read back as %q %q %v", k, c, tok, ok)
		}
		if len(v) > maxTagValue {
			t.Fatalf("value %q: %d characters, a tag takes %d", v, len(v), maxTagValue)
		}
		holder := tagHolder(token, v)
		if holder.Token != token || holder.PID != max(pid, 0) || holder.String() != v {
			t.Fatalf("runner %+v written as %q read back as %+v", r, v, holder)
		}
		if want := hostChars(host); !strings.HasPrefix(want, holder.Host) || (holder.Host != want && len(v) != maxTagValue) {
			t.Fatalf("host %q written as %q, read back as %q", host, v, holder.Host)
		}
		other := registry.Runner{Token: token + "x"}
		if a := readAuthority([]Tag{{k, v}}, cutover, other); a.mine || !slices.Equal(a.others, []string{k}) || !slices.Equal(a.holders, []registry.Runner{holder}) {
			t.Fatalf("another runner reads %s=%s as %+v", k, v, a)
		}
		if a := readAuthority([]Tag{{k, v}}, cutover, r); !a.mine || len(a.others) > 0 || a.foreign != "" {
			t.Fatalf("the runner reads its own %s=%s as %+v", k, v, a)
		}
	})
}

// checkReadKey checks how runner me of cutover reads a resource carrying key=value beside
// a tag of someone else's: by the key alone, as parseAuthorityKey reads it. A key that
// does not parse is no authority tag, however much it looks like one (no crossfade runner
// writes it: cutover names are labels, tokens hex; TestAuthorityTagsRead's "a key that only
// looks like one"), and is never this runner's.
func checkReadKey(t *testing.T, key, value, cutover string, me registry.Runner) {
	t.Helper()
	c, tok, parsed := parseAuthorityKey(key)
	if parsed && (Key(c, tok) != key || c == "" || tok == "" || strings.Contains(c, "/") || strings.Contains(tok, "/")) {
		t.Fatalf("key %q accepted as cutover %q, token %q", key, c, tok)
	}
	if !parsed && strings.Count(key, "/") == 3 && strings.HasPrefix(key, TagPrefix) && !strings.Contains(key, "//") && !strings.HasSuffix(key, "/") {
		t.Fatalf("key %q of the form %sNAME/TOKEN refused", key, TagPrefix)
	}
	tags := []Tag{{"team", "payments"}, {key, value}}
	a := readAuthority(tags, cutover, me)
	ours := me.Token != "" && key == Key(cutover, me.Token)
	switch {
	case a.count != len(tags):
		t.Fatalf("count %d of %d tags", a.count, len(tags))
	case a.mine != ours:
		t.Fatalf("%s=%s read by runner %q of %s: mine %v", key, value, me.Token, cutover, a.mine)
	case !parsed || ours:
		if a.foreign != "" || len(a.others) > 0 {
			t.Fatalf("%s=%s read by runner %q of %s as %+v", key, value, me.Token, cutover, a)
		}
	case c == cutover:
		if !slices.Equal(a.others, []string{key}) || len(a.holders) != 1 || a.holders[0].Token != tok || a.foreign != "" {
			t.Fatalf("another runner's %s=%s read as %+v", key, value, a)
		}
	case a.foreign == "" || !strings.Contains(a.foreign, key) || len(a.others) > 0:
		t.Fatalf("cutover %s's %s=%s read by runner %q of %s as %+v", c, key, value, me.Token, cutover, a)
	}
}

// hostChars is the host name in the characters a tag value may hold, as Value
// promises: letters, digits, '.', '-' and '_', each other character one '-'.
func hostChars(host string) string {
	var b strings.Builder
	for _, c := range host {
		if c < 0x80 && (c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
