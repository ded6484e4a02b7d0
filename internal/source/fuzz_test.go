package source

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// FuzzParseAnnotations feeds arbitrary annotations (keys and values split from one
// string, "key\x00value\x01key\x00value") through parsing and a full Service conversion:
// nothing may panic, every error must be an *endpoint.InvalidError naming the object,
// and no published endpoint may fail validation.
func FuzzParseAnnotations(f *testing.F) {
	seeds := []string{
		"hostname\x00a.example.com",
		"hostname\x00a.example.com,b.example.com\x01ttl\x0060\x01set-identifier\x00blue\x01aws-weight\x00100",
		"hostname\x00a.example.com\x01aws-weight\x00abc",
		"hostname\x00a.example.com\x01aws-failover\x00primary\x01set-identifier\x00x",
		"hostname\x00x\x01ttl\x00-1s\x01alias\x00maybe\x01record-type\x00ptr",
		"internal-hostname\x00i.example.com\x01target\x00::1,1.2.3.4,h.example.net",
		"controller\x00other\x01hostname\x00a",
		"aws-region\x00us-east-1\x01aws-health-check-id\x00\x01aws-evaluate-target-health\x00T",
		"hostname\x00" + strings.Repeat("a.", 200),
	}
	for _, s := range seeds {
		f.Add(s, true)
	}
	src := mustNew(f, Config{})
	f.Fuzz(func(t *testing.T, in string, stable bool) {
		prefix := PrefixAlpha
		if stable {
			prefix = PrefixStable
		}
		ann := map[string]string{}
		for _, kv := range strings.Split(in, "\x01") {
			k, v, _ := strings.Cut(kv, "\x00")
			ann[prefix+k] = v
			ann[PrefixAlpha+k+"-other"] = v
		}
		ref := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "fuzz"}
		a, errs := src.parseAnnotations(ref, ann)
		for _, err := range errs {
			var ie *endpoint.InvalidError
			if !errors.As(error(err), &ie) || ie.Object != ref || !strings.HasPrefix(ie.Field, "annotation ") {
				t.Fatalf("bad error %#v", err)
			}
		}
		for _, name := range []string{annAccess, annIngressHostnameSource} {
			if _, bad := a.enum(name, true, "x", "y"); bad != nil && bad.Object != ref {
				t.Fatalf("bad enum error %#v", bad)
			}
		}
		svc := lbService("fuzz", ann, ip("192.0.2.1"), host("lb.example.net"))
		np := &corev1.Service{ObjectMeta: meta("default", "np", ann), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{NodePort: 30000}}}}
		r := src.Endpoints(&Snapshot{Services: []*corev1.Service{svc, np}})
		for _, e := range r.Endpoints {
			if errs := e.Validate(); len(errs) > 0 {
				t.Fatalf("published an invalid endpoint %v: %v", e, errs)
			}
		}
		for _, e := range r.Invalid {
			if e.Object.Kind != "Service" || e.Field == "" || e.Reason == "" {
				t.Fatalf("incomplete error %#v", e)
			}
		}
	})
}
