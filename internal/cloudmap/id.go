package cloudmap

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"strconv"
	"strings"
)

// maxOwnerPrefix bounds the owner id's share of an instance id: with the hash, an id stays
// within Cloud Map's 64 characters.
const maxOwnerPrefix = 32

// InstanceID is the Cloud Map instance id of an endpoint: the owner id (made to fit
// Cloud Map's [0-9a-zA-Z_/:.@-], at most 32 characters), "-", and 24 hex digits of the
// SHA-256 of the owner id, the Service's namespace/name and the endpoint's address:port.
//
// Deterministic, so that a restarted controller finds its instances under the same ids and
// writes nothing; unique per cluster (the owner id is hashed in, so two clusters with the
// same Service and pod addresses get different ids) and per Service; at most 57
// characters. The readable prefix lets a person listing a service see whose an instance
// is; ownership itself is decided by the AttrOwner attribute, never by the id.
func InstanceID(owner, namespace, name, address string, port int32) string {
	h := sha256.New()
	for _, part := range []string{owner, namespace + "/" + name, net.JoinHostPort(address, strconv.Itoa(int(port)))} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return idPrefix(owner) + "-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// idPrefix maps the owner id into the characters an instance id may hold.
func idPrefix(owner string) string {
	var b strings.Builder
	for _, r := range owner {
		if b.Len() >= maxOwnerPrefix {
			break
		}
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', strings.ContainsRune("_/:.@-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "crossfade"
	}
	return b.String()
}
