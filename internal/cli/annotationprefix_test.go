package cli

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/source"
)

// TestControllerAnnotationPrefixes: the annotations `crossfade controller` reads with
// --annotation-prefix and --enable-legacy-annotation-prefix, as external-dns v0.23 reads
// them with the same flags (the configured prefix, the stable one by default, wins over the
// legacy one), and as crossfade reads them with neither (both prefixes; a key set
// differently under each makes the object invalid).
func TestControllerAnnotationPrefixes(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{
			source.PrefixStable + "hostname": "new.example.com", source.PrefixAlpha + "hostname": "old.example.com",
			source.PrefixAlpha + "ttl": "60", "dns.example.io/hostname": "custom.example.com"}},
		Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1"},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
	for _, tc := range []struct {
		name string
		args []string
		// want are the records published ("name ttl"), or the start of the one problem.
		want    []string
		invalid string
	}{
		{"neither flag: both prefixes, a conflict is an error", nil, nil,
			`service default/web: annotation external-dns.alpha.kubernetes.io/hostname "old.example.com": conflicts with external-dns.kubernetes.io/hostname "new.example.com"`},
		{"legacy fallback: the stable prefix wins, the legacy ttl is read", []string{"--enable-legacy-annotation-prefix"}, []string{"new.example.com 60"}, ""},
		{"a custom prefix alone", []string{"--annotation-prefix=dns.example.io/"}, []string{"custom.example.com 0"}, ""},
		{"a custom prefix with the legacy fallback", []string{"--annotation-prefix=dns.example.io/", "--enable-legacy-annotation-prefix"}, []string{"custom.example.com 60"}, ""},
		{"the stable prefix alone, as external-dns v0.23 by default", []string{"--annotation-prefix=" + source.PrefixStable}, []string{"new.example.com 0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &ControllerOptions{}
			c := &cobra.Command{Use: "controller"}
			o.AddFlags(c.Flags())
			if err := c.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			src, err := source.New(o.source)
			if err != nil {
				t.Fatal(err)
			}
			res := src.Endpoints(&source.Snapshot{Services: []*corev1.Service{svc}})
			var got []string
			for _, e := range res.Endpoints {
				got = append(got, e.Name+" "+strconv.FormatInt(int64(e.TTL), 10))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("published %q, want %q", got, tc.want)
			}
			switch {
			case tc.invalid == "" && len(res.Invalid) > 0:
				t.Errorf("invalid: %v", res.Invalid)
			case tc.invalid != "" && (len(res.Invalid) != 1 || !strings.HasPrefix(res.Invalid[0].Error(), tc.invalid)):
				t.Errorf("invalid %v, want one starting %q", res.Invalid, tc.invalid)
			}
		})
	}
}
