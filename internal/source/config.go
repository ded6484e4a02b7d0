package source

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Annotation prefixes external-dns reads: the new one (default from external-dns 0.22) and
// the alpha one that most clusters carry today.
const (
	PrefixStable = "external-dns.kubernetes.io/"
	PrefixAlpha  = "external-dns.alpha.kubernetes.io/"
)

// DefaultAnnotationPrefixes are read when Config.AnnotationPrefixes is empty.
var DefaultAnnotationPrefixes = []string{PrefixStable, PrefixAlpha}

// Config selects which objects a Source reads and how, mirroring external-dns's flags.
type Config struct {
	// AnnotationPrefixes are the annotation key prefixes read, in order (--annotation-prefix);
	// empty means DefaultAnnotationPrefixes. One key set under two prefixes with different
	// values makes the object invalid: guessing which one the user meant could publish the
	// wrong record.
	AnnotationPrefixes []string
	// LegacyAnnotationPrefix reads PrefixAlpha after AnnotationPrefixes (default: after
	// PrefixStable alone) as a fallback, as external-dns v0.23's
	// --enable-legacy-annotation-prefix does: a key set under an earlier prefix wins over
	// the same key under PrefixAlpha, and the legacy value is set aside (Result.Overridden)
	// rather than making the object invalid. An AnnotationPrefixes entry that starts with
	// PrefixAlpha is an error with it, as in external-dns.
	LegacyAnnotationPrefix bool
	// AnnotationFilter selects objects by their annotations in label-selector syntax
	// (--annotation-filter), e.g. "kubernetes.io/ingress.class in (public)".
	AnnotationFilter string
	// LabelFilter selects objects by their labels (--label-filter).
	LabelFilter string
	// Namespace limits the objects read to one namespace; "" reads all (--namespace).
	Namespace string
	// IgnoreHostnameAnnotation drops names from the hostname annotation
	// (--ignore-hostname-annotation).
	IgnoreHostnameAnnotation bool
	// IgnoreIngressTLSSpec drops names from Ingress spec.tls (--ignore-ingress-tls-spec).
	IgnoreIngressTLSSpec bool
	// IgnoreIngressRulesSpec drops names from Ingress spec.rules (--ignore-ingress-rules-spec).
	IgnoreIngressRulesSpec bool
	// IngressClassNames keeps only Ingresses of these classes (--ingress-class); empty keeps all.
	IngressClassNames []string
	// ServiceTypes keeps only Services of these types (--service-type-filter); empty keeps all.
	ServiceTypes []corev1.ServiceType
	// PublishInternal publishes ClusterIP Services' cluster IPs under their hostname
	// annotation (--publish-internal-services).
	PublishInternal bool
	// PublishHostIP publishes, for a headless Service's endpoints, the address of the
	// Node each runs on instead of the endpoint's own address (--publish-host-ip): the
	// Node's first InternalIP, else its first ExternalIP, which is the host IP the kubelet
	// gives its Pods. An endpoints-type annotation of NodeExternalIP takes precedence, as
	// in external-dns.
	PublishHostIP bool
	// AlwaysPublishNotReadyAddresses publishes headless Services' endpoints that are not
	// ready as well, as if every such Service set spec.publishNotReadyAddresses
	// (--always-publish-not-ready-addresses).
	AlwaysPublishNotReadyAddresses bool
	// GatewayNamespace limits the Gateway API Gateways read (--gateway-namespace).
	GatewayNamespace string
	// GatewayName limits routes to parents of this name (--gateway-name).
	GatewayName string
	// GatewayLabelFilter selects Gateway API Gateways by label (--gateway-label-filter).
	GatewayLabelFilter string
}

// Source converts snapshots of Kubernetes objects into endpoints. It keeps no state
// between calls and is safe for concurrent use.
type Source struct {
	cfg      Config
	prefixes []string
	// fallback is the index in prefixes of the legacy prefix that yields to the others
	// (Config.LegacyAnnotationPrefix), -1 when none does.
	fallback    int
	annotations labels.Selector // nil matches everything
	filterKeys  map[string]bool // the annotation keys annotations names
	labels      labels.Selector
	gwLabels    labels.Selector
	svcTypes    map[corev1.ServiceType]bool
}

// New checks cfg and returns a Source. A bad selector or prefix is an error naming the
// field.
func New(cfg Config) (*Source, error) {
	s := &Source{cfg: cfg, prefixes: slices.Clone(cfg.AnnotationPrefixes), fallback: -1}
	switch {
	case len(s.prefixes) == 0 && cfg.LegacyAnnotationPrefix:
		s.prefixes = []string{PrefixStable}
	case len(s.prefixes) == 0:
		s.prefixes = slices.Clone(DefaultAnnotationPrefixes)
	}
	for _, p := range s.prefixes {
		if p == "" || !strings.HasSuffix(p, "/") {
			return nil, fmt.Errorf("source: AnnotationPrefixes: %q: want a prefix ending in \"/\", e.g. %q", p, PrefixAlpha)
		}
		if cfg.LegacyAnnotationPrefix && strings.HasPrefix(p, PrefixAlpha) {
			return nil, fmt.Errorf("source: AnnotationPrefixes: %q starts with the legacy prefix %q, which LegacyAnnotationPrefix adds as a fallback: drop one of them", p, PrefixAlpha)
		}
	}
	if cfg.LegacyAnnotationPrefix {
		s.fallback = len(s.prefixes)
		s.prefixes = append(s.prefixes, PrefixAlpha)
	}
	var err error
	if s.annotations, err = annotationSelector(cfg.AnnotationFilter); err != nil {
		return nil, fmt.Errorf("source: AnnotationFilter %q: %w", cfg.AnnotationFilter, err)
	}
	if s.annotations != nil {
		reqs, _ := s.annotations.Requirements()
		s.filterKeys = make(map[string]bool, len(reqs))
		for _, r := range reqs {
			s.filterKeys[r.Key()] = true
		}
	}
	if s.labels, err = labelSelector(cfg.LabelFilter); err != nil {
		return nil, fmt.Errorf("source: LabelFilter %q: %w", cfg.LabelFilter, err)
	}
	if s.gwLabels, err = labelSelector(cfg.GatewayLabelFilter); err != nil {
		return nil, fmt.Errorf("source: GatewayLabelFilter %q: %w", cfg.GatewayLabelFilter, err)
	}
	if len(cfg.ServiceTypes) > 0 {
		s.svcTypes = map[corev1.ServiceType]bool{}
		for _, t := range cfg.ServiceTypes {
			switch t {
			case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
				s.svcTypes[t] = true
			default:
				return nil, fmt.Errorf("source: ServiceTypes: %q: want ClusterIP, NodePort, LoadBalancer or ExternalName", t)
			}
		}
	}
	return s, nil
}

// annotationSelector parses the filter as external-dns does: through metav1's label
// selector parser, so that "a=b,c in (d)" means what it means there.
func annotationSelector(filter string) (labels.Selector, error) {
	if strings.TrimSpace(filter) == "" {
		return nil, nil
	}
	ls, err := metav1.ParseToLabelSelector(filter)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil || sel.Empty() {
		return nil, err
	}
	return sel, nil
}

func labelSelector(filter string) (labels.Selector, error) {
	if strings.TrimSpace(filter) == "" {
		return nil, nil
	}
	sel, err := labels.Parse(filter)
	if err != nil || sel.Empty() {
		return nil, err
	}
	return sel, nil
}

// ReadsAnnotation reports whether the sources read the annotation key: one under an
// annotation prefix, the legacy ingress class, or one the annotation filter names. A
// cache of the objects may drop every other annotation without changing what is
// published.
func (s *Source) ReadsAnnotation(key string) bool {
	if key == ingressClassAnnotation || s.filterKeys[key] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// selects reports whether an object passes the namespace, label and annotation filters.
func (s *Source) selects(meta *metav1.ObjectMeta) bool {
	if s.cfg.Namespace != "" && meta.Namespace != s.cfg.Namespace {
		return false
	}
	if s.labels != nil && !s.labels.Matches(labels.Set(meta.Labels)) {
		return false
	}
	return s.annotations == nil || s.annotations.Matches(labels.Set(meta.Annotations))
}

// inNamespace reports whether a helper object (an ingress-gateway Service, an Istio
// Gateway behind a VirtualService) may be read: external-dns looks these up through
// listers scoped to --namespace only, without the label and annotation filters.
func (s *Source) inNamespace(ns string) bool {
	return s.cfg.Namespace == "" || ns == s.cfg.Namespace
}
