package source_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/source"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// parityDifferences are the parity cases where crossfade publishes something other than
// external-dns v0.21.0, because it reads EndpointSlices where external-dns reads Pods: why,
// and what crossfade publishes instead (pinned, so that the difference stays the one
// described).
var parityDifferences = map[string]struct{ why, crossfade string }{
	"11-headless-hostname-other-subdomain": {
		"the EndpointSlice carries a Pod's hostname only when its spec.subdomain names the Service; external-dns reads spec.hostname from the Pod",
		"web.example.com A 10.2.0.1 ttl=0 set= props= service/default/web\n"},
	"12-headless-pod-target-annotation": {
		"a Pod's target annotation is on the Pod, which crossfade does not cache; it publishes the Pod's address",
		"web.example.com A 10.2.0.1 ttl=0 set= props= service/default/web\n"},
	"18-nodeport-local-pending-pod": {
		"with no Pod ready, external-dns counts only Pods in phase Running; an EndpointSlice lists a starting Pod (phase Pending, with an address) as not ready like a running one",
		"_np._tcp.np.example.com SRV 0 50 30080 np.example.com. ttl=0 set= props= service/default/np\n" +
			"np.example.com A 203.0.113.1,203.0.113.3 ttl=0 set= props= service/default/np\n"},
}

// TestParityWithExternalDNS converts each case in testdata/parity (Services, EndpointSlices,
// Nodes and the Pods behind them, as the EndpointSlice controller and kubelet would have
// them) and requires exactly the records external-dns v0.21.0's service source publishes
// from the same objects, recorded in NN-name.golden by the program in testdata/parity/extdns
// (which runs external-dns's own NewServiceSource over a fake clientset; it reads the
// Pods, crossfade does not: manifest.Decode ignores them). Regenerate with
//
//	cd internal/source/testdata/parity/extdns && GOWORK=off go run . -cases ..
func TestParityWithExternalDNS(t *testing.T) {
	cases, err := filepath.Glob("testdata/parity/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	seen := map[string]bool{}
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			l, err := manifest.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Errors) > 0 {
				t.Fatalf("case does not decode: %v", l.Errors)
			}
			src, err := source.New(parityConfig(t, file))
			if err != nil {
				t.Fatal(err)
			}
			r := src.Endpoints(l.Snapshot)
			if len(r.Invalid) > 0 {
				t.Fatalf("invalid: %v", r.Invalid)
			}
			got := renderParity(r.Endpoints)
			diff, differs := parityDifferences[name]
			switch {
			case differs && got == string(want):
				t.Errorf("listed as a difference (%s), but crossfade now publishes what external-dns does: drop it from parityDifferences", diff.why)
			case differs && got != diff.crossfade:
				t.Errorf("differs from external-dns (%s); crossfade publishes\n%s\nwant\n%s", diff.why, got, diff.crossfade)
			case !differs && got != string(want):
				t.Errorf("crossfade publishes\n%s\nexternal-dns v0.21.0 publishes\n%s\npending: %v", got, want, r.Pending)
			}
		})
	}
	for name := range parityDifferences {
		if !seen[name] {
			t.Errorf("parityDifferences names %s, which is no case", name)
		}
	}
}

// parityConfig reads a case's flags from its ConfigMap parity-case, which the decoder
// ignores as it ignores every ConfigMap.
func parityConfig(t *testing.T, file string) source.Config {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cfg source.Config
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil || cm.Kind != "ConfigMap" || cm.Name != "parity-case" {
			continue
		}
		for key, dst := range map[string]*bool{"publishHostIP": &cfg.PublishHostIP, "alwaysPublishNotReadyAddresses": &cfg.AlwaysPublishNotReadyAddresses} {
			if v, ok := cm.Data[key]; ok {
				if *dst, err = strconv.ParseBool(v); err != nil {
					t.Fatalf("parity-case %s: %v", key, err)
				}
			}
		}
	}
	return cfg
}

// renderParity prints records as the generator prints external-dns's: name, type, sorted
// targets, TTL, set identifier, provider-specific properties with the routing policy as
// external-dns carries it (aws/weight, aws/failover), resource label.
func renderParity(eps []*endpoint.Endpoint) string {
	lines := make([]string, 0, len(eps))
	for _, e := range eps {
		props := maps.Clone(e.ProviderSpecific)
		if props == nil {
			props = map[string]string{}
		}
		switch e.Policy.Kind {
		case endpoint.Weighted:
			props["aws/weight"] = strconv.FormatInt(int64(e.Policy.Weight), 10)
		case endpoint.Failover:
			props["aws/failover"] = e.Policy.Role
		}
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(props)) {
			ps = append(ps, k+"="+props[k])
		}
		targets := slices.Sorted(slices.Values(e.Targets))
		lines = append(lines, fmt.Sprintf("%s %s %s ttl=%d set=%s props=%s %s", e.Name, e.Type, strings.Join(targets, ","),
			e.TTL, e.SetIdentifier, strings.Join(ps, ";"), e.Resource()))
	}
	slices.Sort(lines)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}
