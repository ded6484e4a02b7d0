package spec

import (
	"reflect"
	"strings"
	"testing"
)

// cloudMapOnlyKeys are the keys only a Cloud Map plan may set, which the Route 53
// example cannot use: the plans of this file use them.
var cloudMapOnlyKeys = map[reflect.Type][]string{
	reflect.TypeFor[Gate](): {"cloudMapDiscovery"},
	reflect.TypeFor[Spec](): {"cloudMap"},
}

// cloudMapYAML is a Cloud Map plan with body as its spec's cloudMap mapping and extra
// appended to spec.
func cloudMapYAML(body, extra string) string {
	return `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata: {name: orders}
spec:
  cloudMap:
` + body + `
  from: blue
  to: green
  steps: [10, 50, 100]
  pause: 30s
` + extra
}

func TestCloudMapPlan(t *testing.T) {
	p, err := Parse([]byte(cloudMapYAML("    namespace: apps\n    service: orders\n    queryParameters: {env: prod}", "  gates:\n    - cloudMapDiscovery: {}\n")), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := p.CloudMap
	if c == nil || c.Namespace != "apps" || c.Service != "orders" || c.ClusterAttribute != DefaultClusterAttribute ||
		c.HealthStatus != HealthHealthyOrElseAll || c.QueryParameters["env"] != "prod" || p.From != "blue" || p.To != "green" {
		t.Fatalf("plan %+v, cloudMap %+v", p, c)
	}
	g := p.Steps[0].Gates[0].CloudMapDiscovery
	if g == nil || g.Tolerance == nil || *g.Tolerance != DefaultCloudMapTolerance {
		t.Errorf("gate %+v", g)
	}
	if w := p.Steps[0].Weights; w.From != 90 || w.To != 10 {
		t.Errorf("step 1 weights %+v", w)
	}
}

// TestCloudMapValidation: each mistake is named by its field.
func TestCloudMapValidation(t *testing.T) {
	base := "    namespace: apps\n    service: orders"
	for _, tc := range []struct {
		name, body, extra, want string
	}{
		{"no namespace", "    service: orders", "", "spec.cloudMap.namespace: required"},
		{"no service", "    namespace: apps", "", "spec.cloudMap.service: required"},
		{"bad service", "    namespace: apps\n    service: 'a b'", "", `spec.cloudMap.service "a b": want the Cloud Map service's name`},
		{"reserved attribute", base + "\n    clusterAttribute: AWS_INSTANCE_IPV4", "", `spec.cloudMap.clusterAttribute "AWS_INSTANCE_IPV4": want an instance attribute key`},
		{"query selects the cluster", base + "\n    queryParameters: {cluster: blue}", "", "spec.cloudMap.queryParameters[cluster] \"blue\": the clients' query must not select the cluster attribute"},
		{"health ALL", base + "\n    healthStatus: ALL", "", `spec.cloudMap.healthStatus "ALL": want "HEALTHY_OR_ELSE_ALL" or "HEALTHY"`},
		{"health typo", base + "\n    healthStatus: HEALTHY_ELSE_ALL", "", `spec.cloudMap.healthStatus "HEALTHY_ELSE_ALL"`},
		{"with a zone", base, "  zone: example.com\n", `spec.zone "example.com": not with spec.cloudMap`},
		{"with a ttl", base, "  ttl: {lower: 60}\n", "spec.ttl: not with spec.cloudMap"},
		{"dns gate", base, "  gates:\n    - dns: {servers: ['127.0.0.1:53']}\n", "spec.gates[0].dns: not with spec.cloudMap"},
		{"bad tolerance", base, "  gates:\n    - cloudMapDiscovery: {tolerance: 2}\n", "spec.gates[0].cloudMapDiscovery.tolerance \"2\": want a number 0..1"},
		{"bad minInstances", base, "  gates:\n    - cloudMapDiscovery: {minInstances: 0}\n", "spec.gates[0].cloudMapDiscovery.minInstances \"0\": want an integer 1..1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(cloudMapYAML(tc.body, tc.extra)), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	t.Run("both weights 0", func(t *testing.T) {
		y := strings.Replace(cloudMapYAML(base, ""), "steps: [10, 50, 100]", "steps: [{weights: {from: 0, to: 0}}]", 1)
		if _, err := Parse([]byte(y), ""); err == nil || !strings.Contains(err.Error(), "spec.steps[0].weights: both weights are 0: a Cloud Map step") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("gate without spec.cloudMap", func(t *testing.T) {
		y := "apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata: {name: x}\nspec:\n  zone: example.com\n  records: [{name: app.example.com}]\n  from: blue\n  to: green\n  steps: [100]\n  gates:\n    - cloudMapDiscovery: {}\n"
		if _, err := Parse([]byte(y), ""); err == nil || !strings.Contains(err.Error(), "spec.gates[0].cloudMapDiscovery: only with spec.cloudMap") {
			t.Fatalf("error %v", err)
		}
	})
}
