package source

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestReadsAnnotation: the controller caches only the annotations ReadsAnnotation names,
// so dropping every other one must publish exactly what the whole object publishes, for
// each way an annotation is read (either prefix, a custom prefix, the legacy ingress
// class, the annotation filter's keys), and the usual bystanders (Helm's, the load
// balancer controller's) must be dropped.
func TestReadsAnnotation(t *testing.T) {
	noise := map[string]string{
		"meta.helm.sh/release-name":                         "web",
		"service.beta.kubernetes.io/aws-load-balancer-type": "external",
		"alb.ingress.kubernetes.io/actions.ssl-redirect":    `{"Type":"redirect"}`,
		"argocd.argoproj.io/tracking-id":                    "web:/Service:default/web",
		"external-dns.alpha.kubernetes.io.evil/hostname":    "not.a.prefix.example.com",
		"kubernetes.io/ingress.class-not":                   "public",
		"example.org/hostname":                              "custom.example.com",
	}
	lb := networkingv1.IngressLoadBalancerIngress{Hostname: "ing.elb.amazonaws.com"}
	with := func(ann map[string]string) map[string]string {
		out := maps.Clone(noise)
		maps.Copy(out, ann)
		return out
	}
	tests := []struct {
		name      string
		cfg       Config
		snap      *Snapshot
		read      []string // keys that must be read
		published bool     // the case publishes something (so the comparison is not empty = empty)
	}{
		{"alpha prefix", Config{}, &Snapshot{Services: []*corev1.Service{
			lbService("web", with(map[string]string{alpha + "hostname": "web.example.com", alpha + "ttl": "60"}), ip("192.0.2.1"))}},
			[]string{alpha + "hostname", alpha + "ttl"}, true},
		{"stable prefix", Config{}, &Snapshot{Services: []*corev1.Service{
			lbService("web", with(map[string]string{PrefixStable + "hostname": "web.example.com"}), ip("192.0.2.1"))}},
			[]string{PrefixStable + "hostname"}, true},
		{"custom prefix", Config{AnnotationPrefixes: []string{"example.org/"}}, &Snapshot{Services: []*corev1.Service{
			lbService("web", with(nil), ip("192.0.2.1"))}},
			[]string{"example.org/hostname"}, true},
		{"legacy ingress class", Config{IngressClassNames: []string{"public"}}, &Snapshot{Ingresses: []*networkingv1.Ingress{
			ingress("i", with(map[string]string{"kubernetes.io/ingress.class": "public"}), []string{"a.example.com"}, nil, lb)}},
			[]string{"kubernetes.io/ingress.class"}, true},
		{"annotation filter", Config{AnnotationFilter: "team in (payments),!skip"}, &Snapshot{Services: []*corev1.Service{
			lbService("web", with(map[string]string{alpha + "hostname": "web.example.com", "team": "payments"}), ip("192.0.2.1")),
			lbService("other", with(map[string]string{alpha + "hostname": "other.example.com", "team": "payments", "skip": ""}), ip("192.0.2.2"))}},
			[]string{"team", "skip"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := mustNew(t, tc.cfg)
			for _, k := range tc.read {
				if !src.ReadsAnnotation(k) {
					t.Errorf("ReadsAnnotation(%q) = false: the source reads it", k)
				}
			}
			for k := range noise {
				if !slices.Contains(tc.read, k) && src.ReadsAnnotation(k) {
					t.Errorf("ReadsAnnotation(%q) = true: no source reads it", k)
				}
			}
			whole := show(src.Endpoints(tc.snap))
			if tc.published && whole == "" {
				t.Fatal("the case publishes nothing: the comparison below would prove nothing")
			}
			kept := &Snapshot{}
			for _, s := range tc.snap.Services {
				c := s.DeepCopy()
				maps.DeleteFunc(c.Annotations, func(k, _ string) bool { return !src.ReadsAnnotation(k) })
				kept.Services = append(kept.Services, c)
			}
			for _, i := range tc.snap.Ingresses {
				c := i.DeepCopy()
				maps.DeleteFunc(c.Annotations, func(k, _ string) bool { return !src.ReadsAnnotation(k) })
				kept.Ingresses = append(kept.Ingresses, c)
			}
			if got := show(src.Endpoints(kept)); got != whole {
				t.Errorf("with only the annotations read, published\n%s\nwant what the whole objects publish\n%s", got, whole)
			}
		})
	}
}
