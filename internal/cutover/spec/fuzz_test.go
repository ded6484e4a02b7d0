package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse feeds arbitrary bytes to Parse: it must not panic, and it must return either
// a Plan the engine can run or an *Error whose every problem names a path and a reason,
// one line each. Where the decoder accepts a document, encoding/json must read the same
// Cutover from it, and the explaining layer may never pass what sigs.k8s.io/yaml then
// refuses: the path-naming layer may not drift from the struct tags.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if js, err := yaml.YAMLToJSON(data); err == nil {
			f.Add(js)
		}
	}
	for _, s := range []string{
		"", "- 1", "a: [", "kind: Cutover\nkind: Cutover\n", "---\n---\n", "a: 1\n---\nb: 2\n",
		planYAML(nil, kv{"steps": "[150, {weights: {from: heavy}}, 10.5, null]", "pause": "5"}),
		planYAML(nil, kv{"gates": `[{http: {clusters: {"x]y": "", on: 1}, latency: {}}}, {}, null, {dns: {servers: [":0"]}}]`}),
		planYAML(kv{"metadata": "[]"}, kv{"rollback": "{mode: gradual, steps: [1, 2]}", "ttl": "{lower: 1e30}"}),
		planYAML(nil, kv{"zone": del, "zoneID": "Z1", "steps": "[{weights: {from: 0, to: 0}}, 10, {percent: 5, pause: 0s}]", "rollback": "{pause: 1m}"}),
		planYAML(nil, kv{"gates": `[{http: {clusters: {green: "http://g/", blue: "http://b/"}, noWorseThanFrom: true, expectStatus: [], minSuccessRatio: null}}, {dns: {}}]`,
			"steps": `[{percent: 10, gates: [{name: dns-extra, dns: {}}, {prometheus: {url: "http://p/", query: up, min: 0, noData: fail}}]}]`}),
		"--- {apiVersion: crossfade.io/v1alpha1, kind: Cutover, metadata: {name: a}, spec: {zone: a, records: [{name: a}], from: b, to: c, steps: [1]}}\n...\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.yaml")
		if err != nil {
			checkFuzzError(t, data, err)
			return
		}
		if p == nil {
			t.Fatalf("Parse(%q) = nil, nil", data)
		}
		checkPlan(t, data, p)
		checkDifferential(t, data)
	})
}

func checkFuzzError(t *testing.T, data []byte, err error) {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse(%q) error %T %v, want *Error", data, err, err)
	}
	if len(e.Problems) == 0 {
		t.Fatalf("Parse(%q): *Error without problems", data)
	}
	for _, p := range e.Problems {
		if p.Path == "" || p.Reason == "" {
			t.Fatalf("Parse(%q): problem %#v lacks a path or a reason", data, p)
		}
		// "not a plan" is sigs.k8s.io/yaml refusing what the explaining layer passed:
		// the two have drifted apart, and the user gets a message with no path.
		if strings.HasPrefix(p.Reason, "not a plan") {
			t.Fatalf("Parse(%q): the decoder refused what explain passed: %s", data, p)
		}
	}
	if len(e.Errors) != len(e.Problems) {
		t.Fatalf("Parse(%q): %d field errors for %d problems", data, len(e.Errors), len(e.Problems))
	}
	if n := strings.Count(e.Error(), "\n") + 1; n != len(e.Problems) {
		t.Fatalf("Parse(%q): %d problems render as %d lines:\n%s", data, len(e.Problems), n, e.Error())
	}
}

// checkPlan asserts what the engine relies on.
func checkPlan(t *testing.T, data []byte, p *Plan) {
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("Parse(%q): "+format, append([]any{data}, args...)...)
	}
	// A plan pulls one lever: Route 53 records in a zone, or ALB listener rules.
	dnsLever := p.ALB == nil && (p.Zone != "" || p.ZoneID != "") && len(p.Records) > 0
	albLever := p.ALB != nil && len(p.ALB.ListenerRules) > 0 && p.ALB.From != "" && p.ALB.To != "" &&
		p.Zone == "" && p.ZoneID == "" && len(p.Records) == 0 && p.LowerTTL == 0
	if !isLabel(p.Name) || !(dnsLever || albLever) || p.From == "" || p.To == "" || p.From == p.To || len(p.Steps) == 0 {
		fail("incomplete plan %+v", p)
	}
	maxW := int64(maxWeight)
	if p.ALB != nil {
		maxW = maxALBWeight
	}
	if p.InSyncTimeout <= 0 || p.StepTimeout <= 0 || p.TotalTimeout < 0 || p.LowerTTL < 0 {
		fail("timeouts %v %v %v, ttl %d", p.InSyncTimeout, p.StepTimeout, p.TotalTimeout, p.LowerTTL)
	}
	for i, s := range p.Steps {
		if s.Weights.From < 0 || s.Weights.From > maxW || s.Weights.To < 0 || s.Weights.To > maxW || s.Pause < 0 {
			fail("step %d: %+v", i, s)
		}
		names := map[string]bool{}
		for _, g := range s.Gates {
			if g.Name == "" || names[g.Name] {
				fail("step %d: gate name %q empty or repeated", i, g.Name)
			}
			names[g.Name] = true
			switch {
			case g.HTTP != nil:
				h := g.HTTP
				if h.MinSuccessRatio == nil || h.LatencySlack == nil || h.Requests <= 0 || h.Timeout.Duration <= 0 ||
					(h.Latency != nil && (h.Latency.Percentile <= 0 || h.Latency.Max.Duration <= 0)) {
					fail("step %d: http gate %s without defaults: %+v", i, g.Name, h)
				}
			case g.Prometheus != nil:
				if g.Prometheus.NoData == "" || (g.Prometheus.Min == nil && g.Prometheus.Max == nil) {
					fail("step %d: prometheus gate %s: %+v", i, g.Name, g.Prometheus)
				}
			case g.DNS != nil:
				if g.DNS.Tolerance == nil || g.DNS.Samples <= 0 {
					fail("step %d: dns gate %s without defaults: %+v", i, g.Name, g.DNS)
				}
			case g.TargetHealth != nil:
				if p.ALB == nil || g.TargetHealth.MinHealthy < 1 {
					fail("step %d: targetHealth gate %s: %+v", i, g.Name, g.TargetHealth)
				}
			case g.ALBTraffic != nil:
				a := g.ALBTraffic
				if p.ALB == nil || a.Tolerance == nil || a.MinRequests < 1 || !ValidPeriod(a.Period) || a.Window.Duration < 0 {
					fail("step %d: albTraffic gate %s without defaults: %+v", i, g.Name, a)
				}
			default:
				fail("step %d: gate %s of no kind", i, g.Name)
			}
		}
	}
	switch p.Rollback.Mode {
	case RollbackImmediate:
		if len(p.Rollback.Steps) > 0 {
			fail("immediate rollback with steps")
		}
	case RollbackGradual:
		if len(p.Rollback.Steps) == 0 {
			fail("gradual rollback without steps")
		}
	default:
		fail("rollback mode %q", p.Rollback.Mode)
	}
}

// checkDifferential decodes the document with encoding/json too and compares.
func checkDifferential(t *testing.T, data []byte) {
	ps := newProblems()
	mine := decode(data, ps)
	if mine == nil || len(ps.errs) > 0 {
		t.Fatalf("Parse(%q) succeeded but decode reports %v", data, sorted(ps.errs))
	}
	doc, _ := singleDocument(data, newProblems())
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("YAMLToJSON(%q): %v", data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var theirs Cutover
	if err := dec.Decode(&theirs); err != nil {
		t.Fatalf("Parse(%q) succeeded but encoding/json says %v", data, err)
	}
	if !reflect.DeepEqual(*mine, theirs) {
		t.Fatalf("Parse(%q): decoder and encoding/json disagree:\n%s\n%s", data, dump(mine), dump(theirs))
	}
	// The plan as a decoded object (a resource's) passes the same rules.
	if errs, _ := ValidateCutover(mine); len(errs) > 0 {
		t.Fatalf("Parse(%q) succeeded but ValidateCutover says %v", data, errs)
	}
}
