package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const (
	httpOK = `{http: {url: "https://shop.example.com/healthz"}}`
	promOK = `{prometheus: {url: "http://prom:9090", query: up, min: 1}}`
)

// TestValidationRules holds one case per rule: the exact line each problem renders as.
func TestValidationRules(t *testing.T) {
	gate := func(g string) kv { return kv{"gates": "[" + g + "]"} }
	for _, tc := range []struct {
		name      string
		top, spec kv
		want      []string
	}{
		// apiVersion, kind, metadata.
		{"apiVersion missing", kv{"apiVersion": del}, nil,
			[]string{`apiVersion: required: want "crossfade.io/v1alpha1"`}},
		{"apiVersion wrong", kv{"apiVersion": "crossfade.io/v1"}, nil,
			[]string{`apiVersion "crossfade.io/v1": want "crossfade.io/v1alpha1"`}},
		{"kind missing", kv{"kind": del}, nil,
			[]string{`kind: required: want "Cutover"`}},
		{"kind wrong case", kv{"kind": "cutover"}, nil,
			[]string{`kind "cutover": want "Cutover"`}},
		{"name missing", kv{"metadata": del}, nil,
			[]string{`metadata.name: required: ` + wantName}},
		{"name upper case", kv{"metadata": "{name: Shop}"}, nil,
			[]string{`metadata.name "Shop": ` + wantName}},
		{"name underscore", kv{"metadata": "{name: shop_1}"}, nil,
			[]string{`metadata.name "shop_1": ` + wantName}},
		{"name leading dash", kv{"metadata": "{name: -shop}"}, nil,
			[]string{`metadata.name "-shop": ` + wantName}},
		{"name too long", kv{"metadata": "{name: " + strings.Repeat("a", 64) + "}"}, nil,
			[]string{`metadata.name "` + strings.Repeat("a", 64) + `": ` + wantName}},
		{"spec missing", kv{"spec": del}, nil,
			[]string{`spec: required: want zone, records, from, to and steps`}},

		// zone and zoneID.
		{"zone and zoneID missing", nil, kv{"zone": del},
			[]string{`spec.zone: required: want the hosted zone's name (e.g. example.com), or spec.zoneID`}},
		{"zone invalid", nil, kv{"zone": "exa..com"},
			[]string{`spec.zone "exa..com": want a DNS name (empty label)`}},
		{"zone bad character", nil, kv{"zone": "exa mple.com"},
			[]string{`spec.zone "exa mple.com": want a DNS name (label "exa mple" has character ' ': want a-z, 0-9, '-', '_')`}},

		// records.
		{"records missing", nil, kv{"records": del},
			[]string{`spec.records: required: want at least one record, e.g. [{name: www.example.com}]`}},
		{"records empty", nil, kv{"records": "[]"},
			[]string{`spec.records: required: want at least one record, e.g. [{name: www.example.com}]`}},
		{"record name missing", nil, kv{"records": "[{type: A}]"},
			[]string{`spec.records[0].name: required: want the record's DNS name`}},
		{"record name invalid", nil, kv{"records": "[{name: shop..example.com}]"},
			[]string{`spec.records[0].name "shop..example.com": want a DNS name (empty label)`}},
		{"record outside zone", nil, kv{"records": "[{name: shop.example.net}]"},
			[]string{`spec.records[0].name "shop.example.net": want a name at or below the zone "example.com"`}},
		{"record type", nil, kv{"records": "[{name: shop.example.com, type: MX}]"},
			[]string{`spec.records[0].type "MX": want A, AAAA or CNAME`}},
		{"record duplicate after normalising", nil, kv{"records": "[{name: shop.example.com}, {name: Shop.Example.com., type: a}]"},
			[]string{`spec.records[1].name "Shop.Example.com.": duplicate of spec.records[0] (shop.example.com A): want each record once`}},
		{"record CNAME beside A", nil, kv{"records": "[{name: shop.example.com}, {name: shop.example.com, type: cname}]"},
			[]string{`spec.records[1].type "cname": shop.example.com also has type A at spec.records[0]: a CNAME cannot share its name with other records`}},

		// from and to.
		{"from missing", nil, kv{"from": del},
			[]string{`spec.from: required: want the set identifier of the cluster losing traffic`}},
		{"to missing", nil, kv{"to": `""`},
			[]string{`spec.to: required: want the set identifier of the cluster gaining traffic`}},
		{"from equals to", nil, kv{"to": "blue"},
			[]string{`spec.to "blue": same as spec.from: want the set identifier of another cluster`}},
		{"from too long", nil, kv{"from": strings.Repeat("b", 129)},
			[]string{`spec.from "` + strings.Repeat("b", 80) + `"…: want at most 128 characters (a Route 53 set identifier), not 129`}},
		{"from unquoted boolean", nil, kv{"from": "on"},
			[]string{`spec.from "true": want a string (YAML reads unquoted yes, no, on, off, true and false as booleans: quote the value)`}},
		{"to unquoted octal", nil, kv{"to": "0123"},
			[]string{`spec.to "83": want a string (YAML reads this unquoted value as a number: quote it)`}},

		// steps.
		{"steps missing", nil, kv{"steps": del},
			[]string{`spec.steps: required: want at least one step, e.g. [10, 50, 100]`}},
		{"steps not a list", nil, kv{"steps": "10"},
			[]string{`spec.steps "10": want a list`}},
		{"step percent and weights", nil, kv{"steps": "[{percent: 10, weights: {from: 1, to: 1}}]"},
			[]string{`spec.steps[0]: want exactly one of percent or weights, not both`}},
		{"step neither", nil, kv{"steps": "[{pause: 5m}]"},
			[]string{`spec.steps[0]: want percent or weights`}},
		{"step bare percent out of range", nil, kv{"steps": "[10, 150]"},
			[]string{`spec.steps[1] "150": want a percent 0..100`}},
		{"step percent out of range", nil, kv{"steps": "[{percent: -1}]"},
			[]string{`spec.steps[0].percent "-1": want an integer 0..100`}},
		{"step not a number", nil, kv{"steps": "[10.5]"},
			[]string{"spec.steps[0] \"10.5\": want a percent 0..100 (`- 10`) or a mapping with percent or weights"}},
		{"step weight type", nil, kv{"steps": "[{weights: {from: heavy, to: 1}}]"},
			[]string{`spec.steps[0].weights.from "heavy": want an integer 0..255`}},
		{"step weight range", nil, kv{"steps": "[{weights: {from: 1, to: 256}}]"},
			[]string{`spec.steps[0].weights.to "256": want an integer 0..255`}},
		{"step weight missing", nil, kv{"steps": "[{weights: {from: 1}}]"},
			[]string{`spec.steps[0].weights.to: required: want an integer 0..255`}},
		{"step pause negative", nil, kv{"steps": "[{percent: 10, pause: -1m}]"},
			[]string{`spec.steps[0].pause "-1m": want a duration ≥ 0 such as "90s" or "5m"`}},
		{"step unknown field", nil, kv{"steps": "[10, {pase: 5m, percent: 20}]"},
			[]string{`spec.steps[1].pase: unknown field; did you mean "pause"?`}},
		{"pause bare number", nil, kv{"pause": "5"},
			[]string{`spec.pause "5": want a duration such as "90s" or "5m"`}},
		{"pause no unit", nil, kv{"pause": `"5"`},
			[]string{`spec.pause "5": want a duration such as "90s" or "5m"`}},

		// gates: kinds.
		{"gate without kind", nil, gate(`{name: x}`),
			[]string{`spec.gates[0]: want exactly one of http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery`}},
		{"gate with two kinds", nil, gate(`{http: {url: "http://x"}, dns: {}}`),
			[]string{`spec.gates[0]: want exactly one of http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery, not http and dns`}},
		{"gate unknown kind", nil, gate(`{tcp: {}}`),
			[]string{`spec.gates[0]: want exactly one of http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery`,
				`spec.gates[0].tcp: unknown field; want one of name, http, prometheus, dns, targetHealth, albTraffic, cloudMapDiscovery`}},

		// gates: http.
		{"http nothing to probe", nil, gate(`{http: {requests: 5}}`),
			[]string{`spec.gates[0].http: want url, clusters or both: nothing to probe`}},
		{"http url scheme", nil, gate(`{http: {url: "ftp://shop.example.com/"}}`),
			[]string{`spec.gates[0].http.url "ftp://shop.example.com/": want an absolute http:// or https:// URL with a host`}},
		{"http url relative", nil, gate(`{http: {url: "/healthz"}}`),
			[]string{`spec.gates[0].http.url "/healthz": want an absolute http:// or https:// URL with a host`}},
		{"http cluster key", nil, gate(`{http: {clusters: {red: "http://10.0.0.1/"}}}`),
			[]string{`spec.gates[0].http.clusters[red]: want a key that is spec.from ("blue") or spec.to ("green")`}},
		{"http cluster url", nil, gate(`{http: {clusters: {green: "10.0.0.1"}}}`),
			[]string{`spec.gates[0].http.clusters[green] "10.0.0.1": want an absolute http:// or https:// URL with a host`}},
		{"http cluster url empty", nil, gate(`{http: {clusters: {green: ""}}}`),
			[]string{`spec.gates[0].http.clusters[green]: required: want an absolute http:// or https:// URL with a host`}},
		{"http resolver", nil, gate(`{http: {url: "http://x/", resolver: "10.0.0.2"}}`),
			[]string{`spec.gates[0].http.resolver "10.0.0.2": want host:port, e.g. "192.0.2.53:53"`}},
		{"http requests zero", nil, gate(`{http: {url: "http://x/", requests: 0}}`),
			[]string{`spec.gates[0].http.requests "0": want an integer 1..10000`}},
		{"http requests too many", nil, gate(`{http: {url: "http://x/", requests: 10001}}`),
			[]string{`spec.gates[0].http.requests "10001": want an integer 1..10000`}},
		{"http timeout zero", nil, gate(`{http: {url: "http://x/", timeout: 0s}}`),
			[]string{`spec.gates[0].http.timeout "0s": want a duration > 0 such as "2s"`}},
		{"http expectStatus", nil, gate(`{http: {url: "http://x/", expectStatus: [200, 600]}}`),
			[]string{`spec.gates[0].http.expectStatus[1] "600": want an HTTP status code 100..599`}},
		{"http expectStatus type", nil, gate(`{http: {url: "http://x/", expectStatus: [ok]}}`),
			[]string{`spec.gates[0].http.expectStatus[0] "ok": want an HTTP status code 100..599`}},
		{"http minSuccessRatio", nil, gate(`{http: {url: "http://x/", minSuccessRatio: 1.5}}`),
			[]string{`spec.gates[0].http.minSuccessRatio "1.5": want a number 0..1`}},
		{"http latency percentile", nil, gate(`{http: {url: "http://x/", latency: {percentile: 0, max: 1s}}}`),
			[]string{`spec.gates[0].http.latency.percentile "0": want a number above 0 and at most 100`}},
		{"http latency percentile high", nil, gate(`{http: {url: "http://x/", latency: {percentile: 100.5, max: 1s}}}`),
			[]string{`spec.gates[0].http.latency.percentile "100.5": want a number above 0 and at most 100`}},
		{"http latency max missing", nil, gate(`{http: {url: "http://x/", latency: {percentile: 99}}}`),
			[]string{`spec.gates[0].http.latency.max: required: want a duration > 0 such as "500ms"`}},
		{"http latency max zero", nil, gate(`{http: {url: "http://x/", latency: {max: 0s}}}`),
			[]string{`spec.gates[0].http.latency.max "0s": want a duration > 0 such as "500ms"`}},
		{"http noWorseThanFrom one cluster", nil, gate(`{http: {clusters: {green: "http://g/"}, noWorseThanFrom: true}}`),
			[]string{`spec.gates[0].http.noWorseThanFrom "true": want clusters for both "blue" and "green" to compare`}},
		{"http latencySlack", nil, gate(`{http: {url: "http://x/", latencySlack: -0.1}}`),
			[]string{`spec.gates[0].http.latencySlack "-0.1": want a number ≥ 0`}},

		// gates: prometheus.
		{"prometheus url missing", nil, gate(`{prometheus: {query: up, min: 1}}`),
			[]string{`spec.gates[0].prometheus.url: required: want an absolute http:// or https:// URL with a host`}},
		{"prometheus url bad", nil, gate(`{prometheus: {url: "prom:9090", query: up, min: 1}}`),
			[]string{`spec.gates[0].prometheus.url "prom:9090": want an absolute http:// or https:// URL with a host`}},
		{"prometheus query empty", nil, gate(`{prometheus: {url: "http://prom:9090", query: " ", min: 1}}`),
			[]string{`spec.gates[0].prometheus.query " ": want a PromQL query that yields one number`}},
		{"prometheus query missing", nil, gate(`{prometheus: {url: "http://prom:9090", min: 1}}`),
			[]string{`spec.gates[0].prometheus.query: required: want a PromQL query that yields one number`}},
		{"prometheus no bound", nil, gate(`{prometheus: {url: "http://prom:9090", query: up}}`),
			[]string{`spec.gates[0].prometheus: want min, max or both: nothing to compare the value with`}},
		{"prometheus min above max", nil, gate(`{prometheus: {url: "http://prom:9090", query: up, min: 5, max: 3}}`),
			[]string{`spec.gates[0].prometheus.min "5": want at most max (3): no value could pass`}},
		{"prometheus noData", nil, gate(`{prometheus: {url: "http://prom:9090", query: up, max: 3, noData: skip}}`),
			[]string{`spec.gates[0].prometheus.noData "skip": want "fail" (or leave it out)`}},
		{"prometheus noData pass", nil, gate(`{prometheus: {url: "http://prom:9090", query: up, max: 3, noData: pass}}`),
			[]string{`spec.gates[0].prometheus.noData "pass": a step would pass on no measurement: make the query answer when there is no data, e.g. "(up) or vector(0)", and leave noData out`}},

		// gates: dns.
		{"dns server without port", nil, gate(`{dns: {servers: ["192.0.2.53"]}}`),
			[]string{`spec.gates[0].dns.servers[0] "192.0.2.53": want host:port, e.g. "192.0.2.53:53"`}},
		{"dns server port range", nil, gate(`{dns: {servers: ["ns1.example.com:53", "192.0.2.53:65536"]}}`),
			[]string{`spec.gates[0].dns.servers[1] "192.0.2.53:65536": want host:port, e.g. "192.0.2.53:53"`}},
		{"dns samples", nil, gate(`{dns: {samples: 0}}`),
			[]string{`spec.gates[0].dns.samples "0": want an integer 1..100000`}},
		{"dns samples too many", nil, gate(`{dns: {samples: 100001}}`),
			[]string{`spec.gates[0].dns.samples "100001": want an integer 1..100000`}},
		{"dns sampleNames", nil, gate(`{dns: {sampleNames: 0}}`),
			[]string{`spec.gates[0].dns.sampleNames "0": want an integer 1..100000`}},
		{"dns tolerance", nil, gate(`{dns: {tolerance: -0.1}}`),
			[]string{`spec.gates[0].dns.tolerance "-0.1": want a number 0..1`}},

		// gates: names.
		{"gate names duplicate in spec", nil, kv{"gates": "[{name: smoke, dns: {}}, {name: smoke, dns: {}}]"},
			[]string{`spec.gates[1].name "smoke": duplicate gate name in this step (spec.gates[0] has it too): want unique names`}},
		{"step gate name taken by spec gate", nil, kv{"gates": "[{name: smoke, dns: {}}]", "steps": "[{percent: 10, gates: [{name: smoke, " + promOK[1:] + "]}]"},
			[]string{`spec.steps[0].gates[0].name "smoke": duplicate gate name in this step (spec.gates[0] has it too): want unique names`}},
		{"default gate name taken", nil, kv{"gates": "[{name: http-2, dns: {}}, " + httpOK + "]", "steps": "[{percent: 10, gates: [" + httpOK + "]}]"},
			[]string{`spec.steps[0].gates[0]: its default name "http-2" is taken by spec.gates[0]: want unique names; name one of them`}},

		// rollback.
		{"rollback mode", nil, kv{"rollback": "{mode: slow}"},
			[]string{`spec.rollback.mode "slow": want "immediate" or "gradual"`}},
		{"rollback gradual without steps", nil, kv{"rollback": "{mode: gradual}"},
			[]string{`spec.rollback.steps: required by mode "gradual": want the percents to pass through on the way back, descending, e.g. [50, 10]`}},
		{"rollback gradual not descending", nil, kv{"rollback": "{mode: gradual, steps: [50, 50]}"},
			[]string{`spec.rollback.steps[1] "50": want less than the step before (50): a gradual rollback descends`}},
		{"rollback gradual out of range", nil, kv{"rollback": "{mode: gradual, steps: [101, 10]}"},
			[]string{`spec.rollback.steps[0] "101": want an integer 0..100`}},
		{"rollback gradual pause negative", nil, kv{"rollback": "{mode: gradual, steps: [10], pause: -1s}"},
			[]string{`spec.rollback.pause "-1s": want a duration ≥ 0 such as "90s" or "5m"`}},
		{"rollback immediate with steps", nil, kv{"rollback": "{steps: [10]}"},
			[]string{`spec.rollback.steps: want none with mode "immediate" (the default); set mode: gradual to roll back in steps`}},

		// onDrift.
		{"onDrift unknown", nil, kv{"onDrift": "stop"},
			[]string{`spec.onDrift "stop": want "pause" or "rollback"`}},
		{"onDrift not a string", nil, kv{"onDrift": "[pause]"},
			[]string{`spec.onDrift: want "pause" or "rollback", not a list`}},

		// timeouts and ttl.
		{"timeout negative", nil, kv{"timeouts": "{inSync: -1s}"},
			[]string{`spec.timeouts.inSync "-1s": want a duration ≥ 0 such as "90s" or "5m"`}},
		{"timeout not a duration", nil, kv{"timeouts": "{step: 600}"},
			[]string{`spec.timeouts.step "600": want a duration such as "90s" or "5m"`}},
		{"retire with no source", nil, kv{"retire": "{window: 1m}"},
			[]string{`spec.retire: want metrics (with counter) or prometheus: where to read the from cluster's request rate`}},
		{"retire with both sources and no window", nil, kv{"retire": `{metrics: "http://a/metrics", counter: c, prometheus: {url: "http://p:9090", query: up}}`},
			[]string{`spec.retire: want exactly one of metrics, prometheus and cloudWatch, not metrics and prometheus`, `spec.retire.window: required: want a duration > 0 such as "5m"`}},
		{"retire metrics without counter, negative rate, short timeout", nil, kv{"retire": `{metrics: "ftp://a", maxRate: -1, window: 5m, timeout: 1m}`},
			[]string{`spec.retire.metrics "ftp://a": want an absolute http:// or https:// URL with a host`,
				`spec.retire.counter: required with metrics: the request counter's name, e.g. http_requests_total`,
				`spec.retire.maxRate "-1": want a number ≥ 0 (requests per second)`,
				`spec.retire.timeout "1m": want at least the window (5m0s): the rate could never stay low long enough`}},
		{"ttl lower missing", nil, kv{"ttl": "{}"},
			[]string{`spec.ttl.lower: required: want an integer 1..2147483647 (seconds)`}},
		{"ttl lower zero", nil, kv{"ttl": "{lower: 0}"},
			[]string{`spec.ttl.lower "0": want an integer 1..2147483647 (seconds)`}},
		{"ttl lower too big", nil, kv{"ttl": "{lower: 2147483648}"},
			[]string{`spec.ttl.lower "2147483648": want an integer 1..2147483647 (seconds)`}},

		// unknown fields.
		{"unknown top-level field", kv{"status": "{}"}, nil,
			[]string{`status: unknown field; want one of apiVersion, kind, metadata, spec`}},
		{"unknown field in wrong case", nil, kv{"zoneId": "Z1"},
			[]string{`spec.zoneId: unknown field; did you mean "zoneID"?`}},
		{"unknown field with odd characters", nil, kv{`"a b"`: "1"},
			[]string{`spec["a b"]: unknown field; want one of zone, zoneID, zones, records, select, alb, cloudMap, from, to, steps, pause, paused, gates, rollback, onDrift, timeouts, ttl, retire`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := planYAML(tc.top, tc.spec)
			_, err := Parse([]byte(doc), "plan.yaml")
			var want []string
			for _, w := range tc.want {
				want = append(want, "plan.yaml: "+w)
			}
			checkError(t, doc, err, want)
		})
	}
}

func checkError(t *testing.T, doc string, err error, want []string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse(\n%s) = %v, want an *Error", doc, err)
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("Parse(\n%s) error:\n%s\nwant:\n%s", doc, got, strings.Join(want, "\n"))
	}
}

// TestManyProblems checks that one pass reports every problem, in the order of the
// plan's fields, whatever their order in the file.
func TestManyProblems(t *testing.T) {
	doc := `
spec:
  ttl: {lower: 0}
  steps:
    - weights: {from: heavy, to: 300}
    - 150
  to: blue
  from: blue
  zone: example.com
  records: [{name: www.example.net}]
  pause: 5
kind: Cutover
apiVersion: crossfade.io/v1
metadata: {name: Shop}
`
	_, err := Parse([]byte(doc), "plan.yaml")
	checkError(t, doc, err, []string{
		`plan.yaml: apiVersion "crossfade.io/v1": want "crossfade.io/v1alpha1"`,
		`plan.yaml: metadata.name "Shop": ` + wantName,
		`plan.yaml: spec.records[0].name "www.example.net": want a name at or below the zone "example.com"`,
		`plan.yaml: spec.to "blue": same as spec.from: want the set identifier of another cluster`,
		`plan.yaml: spec.steps[0].weights.from "heavy": want an integer 0..255`,
		`plan.yaml: spec.steps[0].weights.to "300": want an integer 0..255`,
		`plan.yaml: spec.steps[1] "150": want a percent 0..100`,
		`plan.yaml: spec.pause "5": want a duration such as "90s" or "5m"`,
		`plan.yaml: spec.ttl.lower "0": want an integer 1..2147483647 (seconds)`,
	})
	var e *Error
	errors.As(err, &e)
	for _, p := range e.Problems {
		if p.Path == "" || p.Reason == "" {
			t.Errorf("problem %#v lacks a path or a reason", p)
		}
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "apiVersion" {
		t.Errorf("errors.As(*FieldError) = %v, want the first problem", fe)
	}
}

// TestDocumentProblems covers what is wrong with the file as a whole.
func TestDocumentProblems(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"empty", "", []string{"(document): empty: want a Cutover plan with apiVersion, kind, metadata and spec"}},
		{"only comments", "# nothing yet\n", []string{"(document): empty: want a Cutover plan with apiVersion, kind, metadata and spec"}},
		{"a list", "- 1\n", []string{"(document): want a mapping with apiVersion, kind, metadata and spec, not a list"}},
		{"a scalar", "cutover\n", []string{"(document): want a mapping with apiVersion, kind, metadata and spec, not a string"}},
		{"syntax", "kind: Cutover\nspec: [\n", []string{"line 2: invalid YAML: did not find expected node content"}},
		{"tab", "kind: Cutover\n\tspec: {}\n", []string{"line 2: invalid YAML: found a tab character that violates indentation"}},
		// Duplicates are named by their path, in schema order, with both lines.
		{"duplicate keys", "kind: Cutover\nkind: Cutover\nspec: {}\nspec: {}\n", []string{
			`kind: duplicate field on line 2 (first set on line 1): want each key once`,
			`spec: duplicate field on line 4 (first set on line 3): want each key once`,
		}},
		{"duplicate keys deep in lists and maps", planYAML(nil, kv{
			"steps": "[10, {percent: 50, pause: 5m, pause: 6m}]",
			"gates": `[{http: {clusters: {green: "http://g/", green: "http://h/"}}}]`,
		}), []string{
			`spec.steps[1].pause: duplicate field set twice on line 9: want each key once`,
			`spec.gates[0].http.clusters[green]: duplicate field set twice on line 10: want each key once`,
		}},
		// YAML 1.1 reads on and true as one key; the node tree (YAML 1.2) does not, so the
		// line is all there is to name.
		{"duplicate keys only to YAML 1.1", "kind: Cutover\non: 1\ntrue: 2\n", []string{
			`line 3: invalid YAML: key true already set in map`,
		}},
		{"two documents", planYAML(nil, nil) + "---\n" + planYAML(nil, nil), []string{
			"line 10: a second YAML document: want one Cutover per file",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "plan.yaml")
			var want []string
			for _, w := range tc.want {
				want = append(want, "plan.yaml: "+w)
			}
			checkError(t, tc.doc, err, want)
		})
	}
}

// TestDocumentMarkers checks that empty documents around the plan are allowed and that
// line numbers still match the file.
func TestDocumentMarkers(t *testing.T) {
	doc := "# header\n---\n" + planYAML(nil, kv{"pause": "5m"}) + "...\n"
	if _, err := Parse([]byte(doc), "plan.yaml"); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	doc = "--- # the plan\n" + `{apiVersion: crossfade.io/v1alpha1, kind: Cutover, metadata: {name: shop}, spec: {zone: example.com,
  records: [{name: shop.example.com}], from: blue, to: green, steps: [100]}}` + "\n"
	if _, err := Parse([]byte(doc), "plan.yaml"); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	doc = "--- {apiVersion: crossfade.io/v1alpha1, kind: Cutover}\n"
	_, err := Parse([]byte(doc), "plan.yaml")
	checkError(t, doc, err, []string{
		"plan.yaml: metadata.name: required: " + wantName,
		"plan.yaml: spec: required: want zone, records, from, to and steps",
	})
	doc = "---\n# comment\n---\nkind: Cutover\nspec: [\n"
	_, err = Parse([]byte(doc), "plan.yaml")
	checkError(t, doc, err, []string{"plan.yaml: line 5: invalid YAML: did not find expected node content"})
}

// TestWarnings covers legal settings that probably do not mean what was intended.
func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec kv
		want []string
	}{
		{"none", nil, nil},
		{"both weights zero", kv{"steps": "[{weights: {from: 0, to: 0}}, 100]"}, []string{
			`spec.steps[0].weights: both weights are 0: Route 53 then answers with every member evenly; it does not mean "off"`,
		}},
		{"share decreases", kv{"steps": "[10, 50, 20, {weights: {from: 1, to: 1}}, 100]"}, []string{
			`spec.steps[2] "20": the share of traffic to "green" falls from 50% (spec.steps[1]) to 20%: this step moves traffic back`,
		}},
		{"share decreases after an even split", kv{"steps": "[{weights: {from: 0, to: 0}}, 10]"}, []string{
			`spec.steps[0].weights: both weights are 0: Route 53 then answers with every member evenly; it does not mean "off"`,
			`spec.steps[1] "10": the share of traffic to "green" falls from 50% (spec.steps[0]) to 10%: this step moves traffic back`,
		}},
		{"immediate rollback with pause", kv{"rollback": "{pause: 1m}"}, []string{
			`spec.rollback.pause "1m": ignored: an immediate rollback does not pause`,
		}},
		{"total shorter than pauses", kv{"pause": "10m", "steps": "[10, {percent: 100, pause: 30m}]", "timeouts": "{total: 30m}"}, []string{
			`spec.timeouts.total "30m": shorter than the steps' pauses together (40m0s): the cutover cannot finish in time and will roll back`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := planYAML(nil, tc.spec)
			p, err := Parse([]byte(doc), "plan.yaml")
			if err != nil {
				t.Fatalf("Parse(\n%s): %v", doc, err)
			}
			var got []string
			for _, w := range p.Warnings {
				got = append(got, w.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestValidVariants are plans that must parse: the rules are not stricter than meant.
func TestValidVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec kv
	}{
		{"zoneID only", kv{"zone": del, "zoneID": "Z123", "records": "[{name: anything.example.org}]"}},
		{"zone with trailing dot and case", kv{"zone": "Example.COM.", "records": "[{name: SHOP.example.com.}]"}},
		{"record at the apex", kv{"records": "[{name: example.com}]"}},
		{"wildcard record", kv{"records": "[{name: \"*.example.com\"}]"}},
		{"A and AAAA of one name", kv{"records": "[{name: shop.example.com}, {name: shop.example.com, type: aaaa}]"}},
		{"zero pause", kv{"pause": "0s", "steps": "[{percent: 10, pause: \"0\"}]"}},
		{"null fields are unset", kv{"pause": "null", "gates": "null", "ttl": "null", "rollback": "{mode: null}"}},
		{"cluster gates for one member", kv{"gates": `[{http: {clusters: {green: "http://10.0.0.1:8080/healthz"}}}]`}},
		{"noWorseThanFrom", kv{"gates": `[{http: {clusters: {green: "http://g/", blue: "http://b/"}, noWorseThanFrom: true}}]`}},
		{"prometheus min only", kv{"gates": "[" + promOK + "]"}},
		{"dns host names", kv{"gates": `[{dns: {servers: ["ns-1.awsdns-01.org:53", "[2001:db8::1]:53"]}}]`}},
		{"resolver", kv{"gates": `[{http: {url: "http://shop.example.com/", resolver: "localhost:5353"}}]`}},
		{"gradual rollback to 0", kv{"rollback": "{mode: gradual, steps: [90, 50, 0]}"}},
		{"explicit immediate", kv{"rollback": "{mode: immediate}"}},
		{"onDrift pause", kv{"onDrift": "pause"}},
		{"onDrift rollback", kv{"onDrift": "rollback"}},
		{"set identifier of 128 characters", kv{"from": strings.Repeat("x", 128)}},
		{"quoted numeric set identifier", kv{"from": `"0123"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := planYAML(nil, tc.spec)
			p, err := Parse([]byte(doc), "plan.yaml")
			if err != nil {
				t.Fatalf("Parse(\n%s): %v", doc, err)
			}
			if len(p.Warnings) > 0 {
				t.Errorf("unexpected warnings: %v", p.Warnings)
			}
		})
	}
}

// TestStepsBounded: more than MaxSteps steps is refused, naming the field and the bound;
// MaxSteps itself is a plan. Past 97 steps a gradual rollback's stops would be journaled
// under the TTL writes' step numbers.
func TestStepsBounded(t *testing.T) {
	steps := func(n int) string {
		var p []string
		for i := range n {
			p = append(p, strconv.Itoa((i+1)*100/n))
		}
		return "[" + strings.Join(p, ", ") + "]"
	}
	if _, err := Parse([]byte(planYAML(nil, kv{"steps": steps(MaxSteps)})), "plan.yaml"); err != nil {
		t.Errorf("%d steps: %v", MaxSteps, err)
	}
	_, err := Parse([]byte(planYAML(nil, kv{"steps": steps(MaxSteps + 1)})), "plan.yaml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("plan.yaml: spec.steps \"%d steps\": want at most %d steps", MaxSteps+1, MaxSteps)) {
		t.Errorf("%d steps: %v, want spec.steps refused naming the bound", MaxSteps+1, err)
	}
}
