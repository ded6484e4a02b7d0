// Package crdstore is the CRD ownership registry: ownership kept in external-dns v0.23's
// DNSRecord objects (externaldns.k8s.io/v1alpha1) instead of TXT records in the zone,
// read and written exactly as external-dns's registry/crd writes them, so that a zone
// moves between external-dns and crossfade with no change.
package crdstore

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Resource is where DNSRecord objects live.
var Resource = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsrecords"}

// The names external-dns v0.23's apis/v1alpha1 gives the owner label and the Ready
// condition's reasons.
const (
	// OwnerLabel ties a DNSRecord to the owner id (--txt-owner-id) that owns its record.
	OwnerLabel = "externaldns.k8s.io/owner"
	// ReadyCondition is True once the record is live in the zone.
	ReadyCondition = "Ready"
	// AcceptedReason: taken into a plan, not yet written to the zone (Ready=False).
	AcceptedReason = "Accepted"
	// ProgrammedReason: written to the zone (Ready=True).
	ProgrammedReason = "Programmed"
	// FailedReason: the zone refused the batch it was in (Ready=False).
	FailedReason = "Failed"
)

// The providerSpecific names external-dns's AWS provider gives routing and alias
// properties.
const (
	propWeight   = "aws/weight"
	propFailover = "aws/failover"
	// propHostedZoneID pins a record to one hosted zone of its name (v0.23's
	// aws-hosted-zone-id annotation, provider/aws providerSpecificHostedZoneID).
	propHostedZoneID = "aws/hosted-zone-id"
)

// DNSRecord is external-dns v0.23's DNSRecord, declared with the CRD's JSON names so that
// crossfade reads and writes the objects external-dns does without importing it.
type DNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DNSRecordSpec   `json:"spec,omitempty"`
	Status            DNSRecordStatus `json:"status,omitempty"`
}

// DNSRecordSpec holds the one record a DNSRecord owns.
type DNSRecordSpec struct {
	Endpoint Endpoint `json:"endpoint"`
}

// DNSRecordStatus holds the Ready condition.
type DNSRecordStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Endpoint is external-dns's endpoint.Endpoint as serialised in the CRD.
type Endpoint struct {
	DNSName          string             `json:"dnsName,omitempty"`
	Targets          []string           `json:"targets,omitempty"`
	RecordType       string             `json:"recordType,omitempty"`
	SetIdentifier    string             `json:"setIdentifier,omitempty"`
	RecordTTL        int64              `json:"recordTTL,omitempty"`
	Labels           map[string]string  `json:"labels,omitempty"`
	ProviderSpecific []ProviderSpecific `json:"providerSpecific,omitempty"`
}

// ProviderSpecific is one providerSpecific {name, value} pair.
type ProviderSpecific struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// Owner returns the owner the object's label names ("" when none): external-dns selects
// its records by this label, not by the spec's labels.
func (d *DNSRecord) Owner() string { return d.Labels[OwnerLabel] }

// Ready reports whether the Ready condition is True: the record was written to the zone.
func (d *DNSRecord) Ready() bool {
	for _, c := range d.Status.Conditions {
		if c.Type == ReadyCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// Key is the record the object speaks for: its name normalised, as crossfade keys records.
func (d *DNSRecord) Key() endpoint.Key {
	e := d.Spec.Endpoint
	return endpoint.Key{Name: endpoint.NormalizeName(e.DNSName), Type: strings.ToUpper(e.RecordType), SetIdentifier: e.SetIdentifier}
}

// nameInvalidChars is what external-dns replaces by "-" in an object name.
var nameInvalidChars = regexp.MustCompile(`[^a-z0-9]+`)

// ObjectName is the name external-dns v0.23 (registry/crd recordObjectName) gives the
// DNSRecord of the record set key: the dashed DNS name, cut to fit, and 8 hex characters
// of the SHA-256 of "name/TYPE/set-identifier", so both writers address the same object.
func ObjectName(key endpoint.Key) string {
	dnsName := strings.TrimSuffix(strings.ToLower(key.Name), ".")
	hash := sha256.Sum256([]byte(strings.Join([]string{dnsName, strings.ToUpper(key.Type), key.SetIdentifier}, "/")))
	suffix := fmt.Sprintf("-%x", hash[:4])
	base := strings.Trim(nameInvalidChars.ReplaceAllString(dnsName, "-"), "-")
	if maxBase := 253 - len(suffix); len(base) > maxBase {
		base = strings.Trim(base[:maxBase], "-")
	}
	if base == "" {
		base = "record"
	}
	return base + suffix
}

// FromEndpoint renders rec, labelled with labels, as external-dns's AWS provider holds it
// in a DNSRecord: an alias as alias=true, routing as aws/weight or aws/failover, and the
// health check and evaluate-target-health properties under their AWS names.
func FromEndpoint(rec *endpoint.Endpoint, labels endpoint.Labels) Endpoint {
	e := Endpoint{DNSName: rec.Name, Targets: slices.Clone([]string(rec.Targets)), RecordType: rec.Type,
		SetIdentifier: rec.SetIdentifier, Labels: maps.Clone(map[string]string(labels))}
	if rec.TTL > 0 {
		e.RecordTTL = int64(rec.TTL)
	}
	props := map[string]string{}
	if rec.IsAlias() {
		props[endpoint.PropAlias] = "true"
	}
	switch rec.Policy.Kind {
	case endpoint.Weighted:
		props[propWeight] = strconv.FormatInt(rec.Policy.Weight, 10)
	case endpoint.Failover:
		props[propFailover] = rec.Policy.Role
	}
	for _, name := range []string{endpoint.PropHealthCheckID, endpoint.PropEvaluateTargetHealth, endpoint.PropAliasZoneID, propHostedZoneID} {
		if v, ok := rec.Prop(name); ok {
			props[name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		e.ProviderSpecific = append(e.ProviderSpecific, ProviderSpecific{Name: name, Value: props[name]})
	}
	return e
}

// zonePin is the hosted zone id the record is pinned to (aws/hosted-zone-id), without
// "/hostedzone/"; "" when it is not pinned.
func (d *DNSRecord) zonePin() string {
	for _, p := range d.Spec.Endpoint.ProviderSpecific {
		if p.Name == propHostedZoneID {
			return strings.TrimPrefix(p.Value, "/hostedzone/")
		}
	}
	return ""
}

// sameTargets reports whether the object's targets are rec's (order aside): the zone
// holds what the object says.
func (d *DNSRecord) sameTargets(rec *endpoint.Endpoint) bool {
	return endpoint.NewTargets(d.Spec.Endpoint.Targets...).Same(rec.Targets)
}
