package spec

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func ptr[T any](v T) *T { return &v }

// examplePlan is testdata/example.yaml resolved.
func examplePlan() *Plan {
	shopHTTP := func() Gate {
		return Gate{Name: "shop-http", HTTP: &HTTPGate{
			URL: "https://shop.example.com/healthz",
			Clusters: map[string]string{
				"eks-blue":  "https://blue.internal.example.com/healthz",
				"eks-green": "https://green.internal.example.com/healthz",
			},
			Resolver:        "192.0.2.53:53",
			Requests:        50,
			Timeout:         Duration{3 * time.Second},
			ExpectStatus:    []int{200, 204},
			MinSuccessRatio: ptr(0.99),
			Latency:         &Latency{Percentile: 95, Max: Duration{300 * time.Millisecond}},
			NoWorseThanFrom: true,
			LatencySlack:    ptr(0.25),
		}}
	}
	dns := func() Gate {
		return Gate{Name: "dns-1", DNS: &DNSGate{
			Servers:     []string{"198.51.100.1:53", "198.51.100.2:53"},
			Samples:     400,
			Tolerance:   ptr(0.05),
			SampleNames: 20,
		}}
	}
	canary := Gate{Name: "canary-errors", Prometheus: &PrometheusGate{
		URL:    "http://prometheus.monitoring:9090",
		Query:  `sum(rate(http_requests_total{cluster="eks-green",code=~"5.."}[5m])) / sum(rate(http_requests_total{cluster="eks-green"}[5m]))`,
		Max:    ptr(0.01),
		Min:    ptr(0.0),
		NoData: "fail",
	}}
	return &Plan{
		Name:   "shop-blue-to-green",
		Zone:   "example.com",
		ZoneID: "Z0123456789ABCDEFGHIJ",
		Records: []Record{
			{Name: "shop.example.com", Type: "A"},
			{Name: "shop.example.com", Type: "AAAA"},
			{Name: "api.shop.example.com", Type: "A"},
		},
		From: "eks-blue",
		To:   "eks-green",
		Steps: []PlanStep{
			{Weights: Weights{From: 100, To: 0}, Pause: 10 * time.Minute, PauseField: "spec.pause", Gates: []Gate{shopHTTP(), dns()}},
			{Weights: Weights{From: 90, To: 10}, Pause: 15 * time.Minute, PauseField: "spec.steps[1].pause", Gates: []Gate{shopHTTP(), dns(), canary}},
			{Weights: Weights{From: 1, To: 3}, Pause: 10 * time.Minute, PauseField: "spec.pause", Gates: []Gate{shopHTTP(), dns()}},
			{Weights: Weights{From: 0, To: 100}, Pause: 10 * time.Minute, PauseField: "spec.pause", Gates: []Gate{shopHTTP(), dns()}},
		},
		Rollback: PlanRollback{
			Mode:  RollbackGradual,
			Steps: []Weights{{From: 50, To: 50}, {From: 90, To: 10}},
			Pause: 2 * time.Minute,
		},
		OnDrift:       DriftPause,
		InSyncTimeout: 5 * time.Minute,
		StepTimeout:   20 * time.Minute,
		TotalTimeout:  3 * time.Hour,
		LowerTTL:      60,
		Retire: &Retire{Metrics: "http://10.0.3.7:9102/metrics", Counter: "http_requests_total", MaxRate: 0.5,
			Window: Duration{5 * time.Minute}, Timeout: Duration{30 * time.Minute}},
	}
}

func minimalPlan() *Plan {
	step := func(to int64) PlanStep {
		return PlanStep{Weights: Weights{From: 100 - to, To: to}, Pause: 5 * time.Minute, PauseField: "spec.pause"}
	}
	return &Plan{
		Name:          "shop",
		Zone:          "example.com",
		Records:       []Record{{Name: "shop.example.com", Type: "A"}},
		From:          "eks-blue",
		To:            "eks-green",
		Steps:         []PlanStep{step(0), step(10), step(50), step(100)},
		Rollback:      PlanRollback{Mode: RollbackImmediate},
		OnDrift:       DriftPause,
		InSyncTimeout: DefaultInSyncTimeout,
		StepTimeout:   DefaultStepTimeout,
	}
}

func TestLoadTestdata(t *testing.T) {
	for _, tc := range []struct {
		file string
		want *Plan
	}{
		{"testdata/example.yaml", examplePlan()},
		{"testdata/minimal.yaml", minimalPlan()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Load(tc.file)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Load(%s) =\n%s\nwant\n%s", tc.file, dump(got), dump(tc.want))
			}
		})
	}
}

// TestParseJSON checks that a plan written as JSON means the same as in YAML.
func TestParseJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(js, "plan.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if want := examplePlan(); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(JSON) =\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// albOnlyKeys are the keys that only an ALB plan may set, which the Route 53 example
// cannot use: alb.yaml documents them.
var albOnlyKeys = map[reflect.Type][]string{
	reflect.TypeFor[Gate]():   {"targetHealth", "albTraffic"},
	reflect.TypeFor[Retire](): {"cloudWatch"},
}

// TestExampleDocumentsEveryField guards the README reference: every key of the schema
// appears in testdata/example.yaml, and every line with a key has a comment.
func TestExampleDocumentsEveryField(t *testing.T) {
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Cutover](), reflect.TypeFor[Metadata](), reflect.TypeFor[Spec](),
		reflect.TypeFor[Record](), reflect.TypeFor[Step](), reflect.TypeFor[Weights](),
		reflect.TypeFor[Gate](), reflect.TypeFor[HTTPGate](), reflect.TypeFor[Latency](),
		reflect.TypeFor[PrometheusGate](), reflect.TypeFor[DNSGate](), reflect.TypeFor[Rollback](),
		reflect.TypeFor[Timeouts](), reflect.TypeFor[TTL](), reflect.TypeFor[Retire](), reflect.TypeFor[RetireQuery](),
	} {
		for _, name := range jsonNames(typ) {
			if slices.Contains(albOnlyKeys[typ], name) || slices.Contains(cloudMapOnlyKeys[typ], name) {
				continue // documented in alb.yaml (TestALBDocumentsEveryField)
			}
			if !regexp.MustCompile(`(?m)^[ -]*` + name + `:`).Match(data) {
				t.Errorf("example.yaml does not use %s.%s", typ.Name(), name)
			}
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(line, "#") {
			t.Errorf("example.yaml line %d has no comment: %s", i+1, line)
		}
	}
}

func TestResolveDefaults(t *testing.T) {
	doc := planYAML(nil, kv{
		"pause": "2m",
		"gates": `[{http: {url: "http://shop.example.com/", latency: {max: 1s}}}, {dns: {}}, {prometheus: {url: "http://p:9090", query: up, max: 1}}]`,
		"steps": `[0, {percent: 50, pause: 0s, gates: [{http: {url: "http://a/"}}, {name: extra, dns: {}}, {dns: {}}]}, {weights: {from: 10, to: 30}, pause: 1h}]`,
	})
	got, err := Parse([]byte(doc), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	httpGate := func(name, url string, latency *Latency) Gate {
		return Gate{Name: name, HTTP: &HTTPGate{URL: url, Requests: DefaultHTTPRequests, Timeout: Duration{DefaultHTTPTimeout},
			MinSuccessRatio: ptr(1.0), LatencySlack: ptr(DefaultLatencySlack), Latency: latency}}
	}
	dnsGate := func(name string) Gate {
		return Gate{Name: name, DNS: &DNSGate{Samples: DefaultDNSSamples, Tolerance: ptr(DefaultDNSTolerance)}}
	}
	spec := []Gate{
		httpGate("http-1", "http://shop.example.com/", &Latency{Percentile: DefaultPercentile, Max: Duration{time.Second}}),
		dnsGate("dns-1"),
		{Name: "prometheus-1", Prometheus: &PrometheusGate{URL: "http://p:9090", Query: "up", Max: ptr(1.0), NoData: "fail"}},
	}
	want := []PlanStep{
		{Weights: Weights{From: 100, To: 0}, Pause: 2 * time.Minute, PauseField: "spec.pause", Gates: spec},
		{Weights: Weights{From: 50, To: 50}, Pause: 0, PauseField: "spec.steps[1].pause", Gates: append(append([]Gate{}, spec...),
			httpGate("http-2", "http://a/", nil), dnsGate("extra"), dnsGate("dns-3"))},
		{Weights: Weights{From: 10, To: 30}, Pause: time.Hour, PauseField: "spec.steps[2].pause", Gates: spec},
	}
	if !reflect.DeepEqual(got.Steps, want) {
		t.Errorf("steps =\n%s\nwant\n%s", dump(got.Steps), dump(want))
	}
	// Each step holds its own copies: the engine may keep state in them.
	got.Steps[0].Gates[0].HTTP.Requests = 1
	*got.Steps[0].Gates[1].DNS.Tolerance = 0.5
	if got.Steps[1].Gates[0].HTTP.Requests != DefaultHTTPRequests || *got.Steps[1].Gates[1].DNS.Tolerance != DefaultDNSTolerance {
		t.Error("steps share gate values")
	}
}

func TestDurationJSON(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{`"90s"`, 90 * time.Second, ""},
		{`"1h30m"`, 90 * time.Minute, ""},
		{`"0"`, 0, ""},
		{`5`, 0, `duration 5: want a duration such as "90s" or "5m"`},
		{`"5"`, 0, `duration "5": want a duration such as "90s" or "5m"`},
		{`"-1s"`, 0, `duration "-1s": want a duration ≥ 0 such as "90s" or "5m"`},
	} {
		var d Duration
		err := json.Unmarshal([]byte(tc.in), &d)
		switch {
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("Unmarshal(%s) error = %v, want %s", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || d.Duration != tc.want):
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", tc.in, d, err, tc.want)
		}
	}
	b, err := json.Marshal(struct {
		D Duration
		P *Duration
	}{Duration{90 * time.Second}, &Duration{time.Hour}})
	if err != nil || string(b) != `{"D":"1m30s","P":"1h0m0s"}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

func TestStepJSON(t *testing.T) {
	var steps []Step
	if err := json.Unmarshal([]byte(`[10, {"weights": {"from": 1, "to": 2}, "pause": "1m"}, null]`), &steps); err != nil {
		t.Fatal(err)
	}
	want := []Step{{Percent: ptr(int64(10))}, {Weights: &Weights{From: 1, To: 2}, Pause: &Duration{time.Minute}}, {}}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("steps = %s, want %s", dump(steps), dump(want))
	}
	for _, in := range []string{`"10"`, `10.5`, `{"pase": "1m"}`, `[1]`} {
		var s Step
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", in, s)
		}
	}
}

func TestErrorRendering(t *testing.T) {
	e := &Error{File: "plan.yaml", Problems: []*FieldError{
		{Path: "spec.from", Reason: "required"},
		{Path: "spec.to", Value: "a\nb", Reason: "bad"},
		{Path: "spec.zone", Value: strings.Repeat("é", 100), Reason: "long"},
	}}
	want := "plan.yaml: spec.from: required\n" +
		`plan.yaml: spec.to "a\nb": bad` + "\n" +
		`plan.yaml: spec.zone "` + strings.Repeat("é", 80) + `"…: long`
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	e.File = ""
	if got := e.Error(); !strings.HasPrefix(got, "spec.from: required\nspec.to") {
		t.Errorf("Error() without file = %s", got)
	}
	p := mapKey(child(field.NewPath("spec"), reflect.TypeFor[Spec](), "a.b").Index(2).Child("http").Child("clusters"), "x]y")
	if got := p.String(); got != `spec["a.b"][2].http.clusters["x]y"]` {
		t.Errorf("path = %s", got)
	}
	names, sub := pathSegments(p.String())
	if want := []string{"spec", "a.b", "2", "http", "clusters", "x]y"}; !slices.Equal(names, want) || !slices.Equal(sub, []bool{false, true, true, false, false, true}) {
		t.Errorf("pathSegments(%s) = %q %v, want %q", p, names, sub, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(name)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), name) {
		t.Errorf("Load(%s) = %v, want a not-exist error naming the file", name, err)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("Load of a missing file = %T, want a plain error", err)
	}
}

func TestLoadNamesFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(name, []byte(planYAML(nil, kv{"pause": "5"})), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(name)
	if want := name + `: spec.pause "5": want a duration such as "90s" or "5m"`; err == nil || err.Error() != want {
		t.Errorf("Load = %v, want %s", err, want)
	}
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
