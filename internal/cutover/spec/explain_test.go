package spec

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		path    string
		want    []string // substrings of the output, in order
		wantErr string
	}{
		{path: "", want: []string{"KIND:     Cutover", "VERSION:  crossfade.io/v1alpha1", "FIELDS:", "apiVersion\t<string>", "spec\t<Spec>"}},
		{path: "spec", want: []string{"FIELD:    spec <Spec>", "zone\t<string>", "steps\t<[]Step>", "pause\t<duration>", "onDrift\t<string>\t(default pause)", "retire\t<Retire>"}},
		{path: "spec.gates.http", want: []string{"FIELD:    spec.gates.http <HTTPGate>", "HTTPGate probes over HTTP",
			"requests\t<integer>\t(default " + strconv.Itoa(DefaultHTTPRequests) + ")", "timeout\t<duration>\t(default 2s)",
			"minSuccessRatio\t<number>\t(default 1)", "latencySlack\t<number>\t(default 0.2)"}},
		{path: "spec.timeouts.inSync", want: []string{"FIELD:    spec.timeouts.inSync <duration>\nDEFAULT:  5m\n", "InSync bounds the wait"}},
		// List indices are the same field.
		{path: "spec.steps[2].gates.dns", want: []string{"FIELD:    spec.steps.gates.dns <DNSGate>", "samples\t<integer>\t(default 200)", "tolerance\t<number>\t(default 0.1)"}},
		{path: "spec.records.type", want: []string{"DEFAULT:  A\n"}},
		{path: "spec.alb.cloudWatch.delay", want: []string{"DEFAULT:  2m\n"}},
		{path: "spec.retire", want: []string{"window\t<duration>\n", "timeout\t<duration>\t(default 10m)"}},
		{path: "spec.retire.cloudWatch.period", want: []string{"DEFAULT:  60\n"}},
		{path: "spec.cloudMap", want: []string{"clusterAttribute\t<string>\t(default cluster)", "healthStatus\t<string>\t(default HEALTHY_OR_ELSE_ALL)"}},
		{path: "spec.gates.prometheus.noData", want: []string{"DEFAULT:  fail\n"}},
		{path: "spec.rollback.mode", want: []string{"DEFAULT:  immediate\n"}},
		{path: "spec.stepz", wantErr: `unknown field "spec.stepz": spec has no field "stepz"; did you mean "spec.steps"?`},
		{path: "spec.gates.htp.url", wantErr: `unknown field "spec.gates.htp.url": spec.gates has no field "htp"; did you mean "spec.gates.http"?`},
		{path: "metdata", wantErr: `unknown field "metdata": the plan file has no field "metdata"; did you mean "metadata"?`},
		{path: "spec.xyzzy", wantErr: `spec has no field "xyzzy"; want one of zone, zoneID, zones, records,`},
		{path: "spec.pause.seconds", wantErr: `unknown field "spec.pause.seconds": spec.pause <duration> has no fields`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := Explain(tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Explain(%q) error = %v, want it to contain %q", tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Explain(%q): %v", tc.path, err)
			}
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Explain(%q) lacks %q (in order) in:\n%s", tc.path, w, got)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestExplainNoInventedDefaults: a field the resolver leaves unset has no default shown,
// whatever its comment says ("default none", "default: the records' TTL").
func TestExplainNoInventedDefaults(t *testing.T) {
	for _, path := range []string{"spec.pause", "spec.timeouts.total", "spec.rollback.pause", "spec.retire.window",
		"spec.gates.http.latency.max", "spec.gates.albTraffic.maxErrorRate", "spec.gates.name", "spec.from"} {
		got, err := Explain(path)
		if err != nil {
			t.Fatalf("Explain(%q): %v", path, err)
		}
		if strings.Contains(got, "DEFAULT:") {
			t.Errorf("Explain(%q) shows a default the resolver does not apply:\n%s", path, got)
		}
	}
}

// TestExplainEveryFieldDocumented: every field the decoder reads has a meaning, and the
// hand-written meanings are only for fields types.go leaves without a comment.
func TestExplainEveryFieldDocumented(t *testing.T) {
	var walk func(f *explainField)
	keys := map[string]bool{}
	walk = func(f *explainField) {
		if f.path != "" {
			keys[f.key] = true
			if f.doc == "" {
				t.Errorf("%s (%s) has no meaning: give it a doc comment in the spec package and run go generate ./internal/cutover/spec/", f.path, f.key)
			}
		}
		for _, k := range f.kids {
			walk(k)
		}
	}
	walk(explainTree())
	for k := range extraDocs {
		if !keys[k] {
			t.Errorf("extraDocs[%q] names no field of the plan file: remove it", k)
		}
		if fieldDocs[k] != "" {
			t.Errorf("extraDocs[%q]: the field has a doc comment now: remove the entry", k)
		}
	}
}

// TestExplainDocsFresh fails when explain_docs.go differs from the doc comments it is
// generated from.
func TestExplainDocsFresh(t *testing.T) {
	want, err := GenerateDocsSource(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("explain_docs.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("explain_docs.go is stale: the plan types' doc comments changed; run go generate ./internal/cutover/spec/")
	}
}

// TestPlanReferenceFresh fails when docs/plan-reference.md differs from what the plan's
// types generate.
func TestPlanReferenceFresh(t *testing.T) {
	got, err := os.ReadFile("../../../docs/plan-reference.md")
	if err != nil {
		t.Fatal(err)
	}
	want := Reference()
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/plan-reference.md is stale (run go generate ./internal/cutover/spec/): line %d is\n%s\nwant\n%s", i+1, g, w)
			}
		}
	}
}

// TestReferenceListsEveryField: the page has every field's path, type and default.
func TestReferenceListsEveryField(t *testing.T) {
	ref := Reference()
	paths := ExplainPaths()
	if len(paths) < 50 {
		t.Fatalf("ExplainPaths() = %d paths, want every field of the plan file", len(paths))
	}
	for _, p := range paths {
		f, err := lookupField(p)
		if err != nil {
			t.Fatal(err)
		}
		parent := p[:max(strings.LastIndex(p, "."), 0)]
		heading := "\n## `" + parent + "`\n"
		if parent == "" {
			heading = "\n## (top level)\n"
		}
		i := strings.Index(ref, heading)
		if i < 0 {
			t.Fatalf("reference has no section %q for %s", heading, p)
		}
		section := ref[i+len(heading):]
		if j := strings.Index(section, "\n## "); j >= 0 {
			section = section[:j]
		}
		name := "`" + f.name + "`"
		if len(f.kids) > 0 {
			name = "[`" + f.name + "`](#" + anchor(f.path) + ")"
		}
		row := "| " + name + " | `" + typeName(f.typ) + "` | "
		if f.dflt != "" {
			row += "`" + f.dflt + "`"
		}
		if !strings.Contains(section, row) {
			t.Errorf("reference section for %s lacks row starting %q", parent, row)
		}
	}
}
