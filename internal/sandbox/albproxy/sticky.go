package albproxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strings"
	"time"
)

// The cookies ALB sets for target group stickiness. AWSALBTGCORS carries the same value
// with SameSite=None for cross-origin requests; either one is honoured.
const (
	CookieGroup     = "AWSALBTG"
	CookieGroupCORS = "AWSALBTGCORS"
)

// stickyCodec seals the group and expiry into the cookie, as ALB encrypts its own: a
// client cannot pick its group by writing a cookie, and a cookie from another proxy
// instance (another key) is ignored.
type stickyCodec struct {
	key [32]byte
}

func newStickyCodec() *stickyCodec {
	c := &stickyCodec{}
	_, _ = rand.Read(c.key[:]) // crypto/rand.Read never fails on supported platforms
	return c
}

var b64 = base64.RawURLEncoding

func (c *stickyCodec) seal(groupID string, until time.Time) string {
	payload := binary.BigEndian.AppendUint64(nil, uint64(until.UnixMilli()))
	payload = append(payload, groupID...)
	mac := hmac.New(sha256.New, c.key[:])
	mac.Write(payload)
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(mac.Sum(nil)[:16])
}

// open returns the group a valid, unexpired cookie value names.
func (c *stickyCodec) open(value string, now time.Time) (groupID string, ok bool) {
	p, s, found := strings.Cut(value, ".")
	if !found {
		return "", false
	}
	payload, err1 := b64.DecodeString(p)
	sum, err2 := b64.DecodeString(s)
	if err1 != nil || err2 != nil || len(payload) < 8 {
		return "", false
	}
	mac := hmac.New(sha256.New, c.key[:])
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)[:16]) {
		return "", false
	}
	if until := int64(binary.BigEndian.Uint64(payload)); now.UnixMilli() >= until {
		return "", false
	}
	return string(payload[8:]), true
}

// stuckGroup returns the group the request's stickiness cookie pins it to, if any.
func (c *stickyCodec) stuckGroup(r *http.Request, now time.Time) (string, bool) {
	for _, name := range []string{CookieGroup, CookieGroupCORS} {
		if ck, err := r.Cookie(name); err == nil {
			if id, ok := c.open(ck.Value, now); ok {
				return id, true
			}
		}
	}
	return "", false
}

// setCookies pins the client to groupID until the stickiness duration from now ends.
func (c *stickyCodec) setCookies(h http.Header, groupID string, now time.Time, d time.Duration) {
	until := now.Add(d)
	v := c.seal(groupID, until)
	// Expires has whole seconds on the wire: round up, so the client keeps the cookie at
	// least as long as the sealed expiry, which is what decides.
	expires := until.Truncate(time.Second)
	if expires.Before(until) {
		expires = expires.Add(time.Second)
	}
	h.Add("Set-Cookie", (&http.Cookie{Name: CookieGroup, Value: v, Path: "/", Expires: expires}).String())
	h.Add("Set-Cookie", (&http.Cookie{Name: CookieGroupCORS, Value: v, Path: "/", Expires: expires,
		SameSite: http.SameSiteNoneMode, Secure: true}).String())
}
