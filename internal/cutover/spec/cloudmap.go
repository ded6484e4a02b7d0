package spec

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CloudMap names the Cloud Map service whose instances a cutover moves traffic between,
// and the query its clients discover it with. Clients call DiscoverInstances with
// HealthStatus HEALTHY or HEALTHY_OR_ELSE_ALL and spread over the instances returned; a
// step sets the custom health status of the instances of from and to (those whose
// ClusterAttribute is spec.from or spec.to, among those the query selects) so that to's
// share of the healthy ones is as close to the step's as the instance counts allow, and
// never leaves the answer empty.
type CloudMap struct {
	// Namespace is the namespace's name (or its id, ns-…); Service the service's name
	// (or id, srv-…). The service must have HealthCheckCustomConfig.
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	// ClusterAttribute is the instance attribute whose value is the cluster (spec.from,
	// spec.to); default "cluster", the attribute crossfade's publisher writes.
	ClusterAttribute string `json:"clusterAttribute,omitempty"`
	// QueryParameters are the clients' DiscoverInstances QueryParameters: the cutover
	// moves only the instances that have them all. They must not select the cluster.
	QueryParameters map[string]string `json:"queryParameters,omitempty"`
	// OptionalParameters are the clients' OptionalParameters, read by the
	// cloudMapDiscovery gate and verify (the lever does not narrow by them).
	OptionalParameters map[string]string `json:"optionalParameters,omitempty"`
	// HealthStatus is the clients' HealthStatus: HEALTHY_OR_ELSE_ALL (default) or
	// HEALTHY. ALL and UNHEALTHY are refused: health would not move those clients.
	HealthStatus string `json:"healthStatus,omitempty"`
}

// CloudMapDiscoveryGate calls DiscoverInstances with the clients' query (spec.cloudMap)
// and requires a non-empty answer in which to's share of from's and to's instances is
// the one the step's health assignment gives, within Tolerance.
type CloudMapDiscoveryGate struct {
	// Tolerance is the largest absolute difference allowed between to's share of the
	// instances returned and the share the step's assignment gives, 0..1; default 0.1.
	Tolerance *float64 `json:"tolerance,omitempty"`
	// MinInstances is the fewest instances the answer may hold; default 1.
	MinInstances int `json:"minInstances,omitempty"`
}

// Cloud Map defaults and values.
const (
	// DefaultClusterAttribute is spec.cloudMap.clusterAttribute's default: the cluster
	// id attribute crossfade's Cloud Map publisher writes (cloudmap.AttrCluster).
	DefaultClusterAttribute = "cluster"
	// HealthHealthyOrElseAll and HealthHealthy are the clients' health statuses the
	// Cloud Map lever moves.
	HealthHealthyOrElseAll = "HEALTHY_OR_ELSE_ALL"
	HealthHealthy          = "HEALTHY"
	// DefaultCloudMapTolerance is a cloudMapDiscovery gate's.
	DefaultCloudMapTolerance = 0.1
)

const (
	wantNamespace     = "want the Cloud Map namespace's name (e.g. apps.local) or id (ns-…), 1 to 1024 characters"
	wantService       = "want the Cloud Map service's name (1 to 127 of a-z, A-Z, 0-9, '.', '_' and '-') or id (srv-…)"
	wantAttributeKey  = "want an instance attribute key: 1 to 255 printable characters, not starting with AWS_"
	wantHealthStatus  = `want "` + HealthHealthyOrElseAll + `" or "` + HealthHealthy + `" (the HealthStatus the clients discover with)`
	wantMinInstances  = "want an integer 1..1000 (instances in a DiscoverInstances answer)"
	maxAttrKeyLength  = 255
	maxAttrValueLen   = 1024
	maxNamespaceLen   = 1024
	maxServiceNameLen = 127
	maxDiscovered     = 1000 // DiscoverInstances' MaxResults limit
)

func init() {
	wants[reflect.TypeFor[CloudMap]()] = map[string]string{"namespace": wantNamespace, "service": wantService,
		"clusterAttribute": wantAttributeKey, "healthStatus": wantHealthStatus}
	wants[reflect.TypeFor[CloudMapDiscoveryGate]()] = map[string]string{"tolerance": wantRatio, "minInstances": wantMinInstances}
}

// resolveCloudMap copies c with its defaults applied.
func resolveCloudMap(c *CloudMap) *CloudMap {
	out := *c
	out.QueryParameters = maps.Clone(c.QueryParameters)
	out.OptionalParameters = maps.Clone(c.OptionalParameters)
	if out.ClusterAttribute == "" {
		out.ClusterAttribute = DefaultClusterAttribute
	}
	if out.HealthStatus == "" {
		out.HealthStatus = HealthHealthyOrElseAll
	}
	return &out
}

// cloudMap checks the Cloud Map lever's service, query and health status, and that
// nothing of another lever is set beside it.
func (v validator) cloudMap(sp *field.Path) (errs field.ErrorList) {
	s := &v.c.Spec
	const other = "not with spec.cloudMap: a Cloud Map cutover moves instances' custom health status, no DNS record nor listener rule; set one lever"
	for _, f := range []struct {
		key string
		set bool
	}{{"zone", s.Zone != ""}, {"zoneID", s.ZoneID != ""}, {"zones", len(s.Zones) > 0}, {"records", len(s.Records) > 0}, {"select", s.Select != nil}, {"alb", s.ALB != nil}} {
		if f.set {
			errs = append(errs, v.ps.forbidden(sp.Child(f.key), "", other))
		}
	}
	cp := sp.Child("cloudMap")
	c := s.CloudMap
	switch n := utf8.RuneCountInString(c.Namespace); {
	case c.Namespace == "":
		errs = append(errs, v.ps.required(cp.Child("namespace"), wantNamespace))
	case n > maxNamespaceLen || strings.TrimSpace(c.Namespace) != c.Namespace:
		errs = append(errs, v.ps.invalid(cp.Child("namespace"), c.Namespace, wantNamespace))
	}
	switch {
	case c.Service == "":
		errs = append(errs, v.ps.required(cp.Child("service"), wantService))
	case !isServiceName(c.Service):
		errs = append(errs, v.ps.invalid(cp.Child("service"), c.Service, wantService))
	}
	attr := c.ClusterAttribute
	if attr == "" {
		attr = DefaultClusterAttribute
	} else if !isAttributeKey(attr) {
		errs = append(errs, v.ps.invalid(cp.Child("clusterAttribute"), attr, wantAttributeKey))
	}
	for _, m := range []struct {
		key    string
		params map[string]string
	}{{"queryParameters", c.QueryParameters}, {"optionalParameters", c.OptionalParameters}} {
		for k, val := range m.params {
			kp := mapKey(cp.Child(m.key), k)
			switch {
			case !isAttributeKey(k) && !strings.HasPrefix(k, "AWS_"):
				errs = append(errs, v.ps.invalid(kp, k, wantAttributeKey))
			case val == "" || utf8.RuneCountInString(val) > maxAttrValueLen:
				errs = append(errs, v.ps.invalid(kp, val, "want an attribute value of 1 to 1024 characters"))
			case k == attr:
				errs = append(errs, v.ps.invalid(kp, val, fmt.Sprintf("the clients' query must not select the cluster attribute %q: the cutover moves traffic between the instances of %q and %q that one query returns", attr, s.From, s.To)))
			}
		}
	}
	switch c.HealthStatus {
	case "", HealthHealthyOrElseAll, HealthHealthy:
	case "ALL", "UNHEALTHY":
		errs = append(errs, v.ps.invalid(cp.Child("healthStatus"), c.HealthStatus, wantHealthStatus+": clients that discover "+c.HealthStatus+" instances are not moved by health status"))
	default:
		errs = append(errs, v.ps.invalid(cp.Child("healthStatus"), c.HealthStatus, wantHealthStatus))
	}
	return errs
}

// cloudMapDiscoveryGate checks a cloudMapDiscovery gate: only with spec.cloudMap.
func (v validator) cloudMapDiscoveryGate(p *field.Path, g *CloudMapDiscoveryGate) (errs field.ErrorList) {
	if v.c.Spec.CloudMap == nil {
		errs = append(errs, v.ps.forbidden(p, "", "only with spec.cloudMap: it reads what DiscoverInstances returns for the clients' query of the service a Cloud Map cutover moves"))
		return errs
	}
	if t := g.Tolerance; t != nil && !(*t >= 0 && *t <= 1) {
		errs = append(errs, v.ps.invalid(p.Child("tolerance"), formatFloat(*t), wantRatio))
	}
	if mp := p.Child("minInstances"); v.ps.present(mp) && (g.MinInstances < 1 || g.MinInstances > maxDiscovered) {
		errs = append(errs, v.ps.invalid(mp, fmt.Sprint(g.MinInstances), wantMinInstances))
	}
	return errs
}

// isServiceName reports whether s is a Cloud Map service name or id.
func isServiceName(s string) bool {
	if len(s) < 1 || len(s) > maxServiceNameLen {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isAttributeKey reports whether k is a custom attribute key: printable, at most 255
// characters, not one of Cloud Map's reserved AWS_ keys.
func isAttributeKey(k string) bool {
	if k == "" || len(k) > maxAttrKeyLength || strings.HasPrefix(k, "AWS_") {
		return false
	}
	for _, r := range k {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}
