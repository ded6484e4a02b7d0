// Package zones holds the sandbox's hosted zones and record sets and enforces Route 53's
// change-batch rules: a batch is validated as a whole and then applied atomically, in memory
// and in the persistent store, or not at all.
package zones

import (
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Action is a change-batch action.
type Action string

// The three change actions Route 53 accepts.
const (
	Create Action = "CREATE"
	Delete Action = "DELETE"
	Upsert Action = "UPSERT"
)

// Failover roles.
const (
	Primary   = "PRIMARY"
	Secondary = "SECONDARY"
)

// Zone is a hosted zone's metadata.
type Zone struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	CallerReference string            `json:"callerReference"`
	Comment         string            `json:"comment,omitempty"`
	Private         bool              `json:"private,omitempty"`
	Created         time.Time         `json:"created"`
	NameServers     []string          `json:"nameServers"`
	Tags            map[string]string `json:"tags,omitempty"`
	// RecordCount is the number of record sets in the zone, maintained by the store.
	RecordCount int `json:"-"`
}

// AliasTarget points an alias record at another record set.
type AliasTarget struct {
	HostedZoneID         string `json:"hostedZoneId"`
	DNSName              string `json:"dnsName"`
	EvaluateTargetHealth bool   `json:"evaluateTargetHealth"`
}

// RRSet is one resource record set, as Route 53 models it. Once stored an RRSet is never
// mutated: a change replaces it, so readers may keep a pointer without a lock.
type RRSet struct {
	Name          string       `json:"name"`
	Type          string       `json:"type"`
	SetIdentifier string       `json:"setIdentifier,omitempty"`
	Weight        *int64       `json:"weight,omitempty"`
	Failover      string       `json:"failover,omitempty"`
	TTL           *int64       `json:"ttl,omitempty"`
	Records       []string     `json:"records,omitempty"`
	Alias         *AliasTarget `json:"alias,omitempty"`
	HealthCheckID string       `json:"healthCheckId,omitempty"`

	// rrs is Records parsed once at write time so the DNS path never parses text.
	rrs []dns.RR
}

// DNSRecords returns the parsed records of a non-alias set. Callers must not modify them.
func (s *RRSet) DNSRecords() []dns.RR { return s.rrs }

// Policy names the routing policy of a set: "simple", "weighted" or "failover".
func (s *RRSet) Policy() string {
	switch {
	case s.Weight != nil:
		return "weighted"
	case s.Failover != "":
		return "failover"
	default:
		return "simple"
	}
}

// Change is one entry of a change batch.
type Change struct {
	Action Action
	Set    RRSet
}

// ChangeInfo is the status of an applied batch.
type ChangeInfo struct {
	ID          string    `json:"id"`
	SubmittedAt time.Time `json:"submittedAt"`
	Comment     string    `json:"comment,omitempty"`
}

// Status reports PENDING until delay has passed since submission, then INSYNC.
func (c ChangeInfo) Status(now time.Time, delay time.Duration) string {
	if now.Before(c.SubmittedAt.Add(delay)) {
		return "PENDING"
	}
	return "INSYNC"
}

// Node is every record set at one owner name. Nodes are immutable once published.
type Node struct {
	Sets []*RRSet
	// groups is Sets by type, prepared for answering when the node is built (newNode).
	groups []Group
}

// setKey identifies a record set inside a zone.
type setKey struct {
	name, typ, id string
}

func keyOf(s *RRSet) setKey { return setKey{s.Name, s.Type, s.SetIdentifier} }

// CanonicalName lower-cases a DNS name, adds the final dot and turns Route 53's octal escape
// for '*' into the character, so that one name has one spelling inside the store.
func CanonicalName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.ReplaceAll(name, `\052`, "*")
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}

// PresentName spells a stored name the way Route 53 returns it: '*' as \052.
func PresentName(name string) string {
	return strings.ReplaceAll(name, "*", `\052`)
}

// inZone reports whether name is the zone apex or below it.
func inZone(name, zone string) bool {
	return name == zone || strings.HasSuffix(name, "."+zone) || zone == "."
}

// reverseKey is the Route 53 listing order key: labels reversed, so that
// www.example.com. sorts as com.example.www.
func reverseKey(name string) string {
	labels := dns.SplitDomainName(name)
	var b strings.Builder
	b.Grow(len(name))
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteString(labels[i])
		b.WriteByte('.')
	}
	return b.String()
}

func sortZonesByCreation(zs []Zone) {
	slices.SortStableFunc(zs, func(a, b Zone) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
