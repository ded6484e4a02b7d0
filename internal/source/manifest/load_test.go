package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/source"
)

// render prints endpoints one a line for comparisons.
func render(r source.Result) string {
	var b strings.Builder
	for _, e := range r.Endpoints {
		fmt.Fprintf(&b, "%s %s ttl=%d %s %s\n", e.Key(), strings.Join(e.Targets, ","), e.TTL, e.Policy, e.Resource())
	}
	for _, e := range r.Invalid {
		fmt.Fprintf(&b, "invalid: %s\n", e)
	}
	for _, p := range r.Pending {
		fmt.Fprintf(&b, "pending: %s\n", p)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	return b.String()
}

func TestLoadExample(t *testing.T) {
	l, err := Load("testdata/example")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Errors) != 0 {
		t.Fatalf("errors: %v", l.Errors)
	}
	if len(l.Files) != 6 {
		t.Errorf("files = %v", l.Files)
	}
	var ignored []string
	for _, i := range l.Ignored {
		ignored = append(ignored, i.Kind)
	}
	if got := strings.Join(ignored, ","); got != "Deployment,ConfigMap" && got != "ConfigMap,Deployment" {
		t.Errorf("ignored = %q", got)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := render(src.Endpoints(l.Snapshot))
	const want = `*.shop.example.com A 198.51.100.7 ttl=0 simple gateway/istio-system/public
api.example.com CNAME [cluster-a] api-a.example.net ttl=0 weighted(10) crd/infra/legacy
app.example.com CNAME [blue] blue-1234.elb.us-east-1.amazonaws.com ttl=60 weighted(100) service/shop/app-blue
app.example.com CNAME [green] green-5678.elb.us-east-1.amazonaws.com ttl=60 weighted(0) service/shop/app-green
cache.internal.example.com A 10.0.0.12 ttl=0 simple service/shop/cache
cart.shop.example.com A 198.51.100.7 ttl=0 simple virtualservice/shop/cart
legacy.example.com A 192.0.2.20,192.0.2.21 ttl=120 simple crd/infra/legacy
mesh.example.com A 198.51.100.7 ttl=0 simple gateway/istio-system/public
orders.api.example.com CNAME edge-9999.elb.us-east-1.amazonaws.com ttl=30 simple httproute/orders/orders
www.example.com A 192.0.2.10 ttl=300 simple ingress/web/www
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLoadBadDocuments(t *testing.T) {
	l, err := Load("testdata/bad/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range l.Snapshot.Services {
		names = append(names, svc.Namespace+"/"+svc.Name)
	}
	if got := strings.Join(names, ","); got != "default/good-before,default/good-after" {
		t.Errorf("services = %q", got)
	}
	want := []string{
		`testdata/bad/mixed.yaml: document 2 (Service default/broken): json: cannot unmarshal string into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort`,
		`testdata/bad/mixed.yaml: document 3: not a Kubernetes object: want a mapping with apiVersion and kind, got a string`,
		`testdata/bad/mixed.yaml: document 4 (Service no-version): apiVersion and kind are required`,
	}
	if len(l.Errors) != len(want) {
		t.Fatalf("errors = %v", l.Errors)
	}
	for i, e := range l.Errors {
		if e.Error() != want[i] {
			t.Errorf("error %d:\n got %s\nwant %s", i, e, want[i])
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in string
		services int
		errs     []string
		ignored  int
	}{
		{"empty", "", 0, nil, 0},
		{"comments only", "# nothing\n---\n# more\n", 0, nil, 0},
		{"namespace defaults", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n", 1, nil, 0},
		{"no name", "apiVersion: v1\nkind: Service\nmetadata: {}\n", 0, []string{"in.yaml: document 1 (Service): metadata.name is required"}, 0},
		{"bad yaml", "apiVersion: v1\nkind: [\n", 0, []string{"in.yaml: document 1: yaml: line 2: did not find expected node content"}, 0},
		{"list with a bad item", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Service","metadata":{"name":"b","namespace":"x"},"spec":{"type":3}}]}`,
			1, []string{"in.yaml: document 1 item 2 (Service x/b): json: cannot unmarshal number into Go struct field ServiceSpec.spec.type of type v1.ServiceType"}, 0},
		{"typed list", "apiVersion: v1\nkind: ServiceList\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n", 1, nil, 0},
		{"unknown kinds", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", 0, nil, 2},
		{"ingress of another group is ignored", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\n", 0, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Decode(strings.NewReader(tt.in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Snapshot.Services) != tt.services || len(l.Ignored) != tt.ignored {
				t.Errorf("services %d ignored %d, want %d %d", len(l.Snapshot.Services), len(l.Ignored), tt.services, tt.ignored)
			}
			if tt.services > 0 && l.Snapshot.Services[0].Namespace == "" {
				t.Error("namespace not defaulted")
			}
			if len(l.Errors) != len(tt.errs) {
				t.Fatalf("errors = %v, want %v", l.Errors, tt.errs)
			}
			for i, e := range l.Errors {
				if e.Error() != tt.errs[i] {
					t.Errorf("got  %s\nwant %s", e, tt.errs[i])
				}
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load("testdata/nope"); err == nil {
		t.Fatal("want an error for a missing path")
	}
}

// TestLoadDirectoryWithoutManifests: a directory holding no *.yaml, *.yml or *.json file
// is an error naming the directory and what was looked for, never an empty cluster
// (which would ask a sync to delete every record it owns); a directory whose manifests
// hold no object of the kinds read is read, empty.
func TestLoadDirectoryWithoutManifests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		// want are in the error; nil means no error.
		want []string
	}{
		{"empty", nil, []string{"holds no manifest", "*.yaml, *.yml or *.json", "it is empty"}},
		{"backup only", map[string]string{"app.yaml.bak": "kind: Service\n"}, []string{"holds no manifest", "1 other file", "app.yaml.bak"}},
		{"nested others", map[string]string{"sub/notes.txt": "x", "sub/app.yml~": "x", "README": "x", "a.orig": "x"}, []string{"4 other files", ", …"}},
		{"manifest without objects read", map[string]string{"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"}, nil},
		{"empty manifest", map[string]string{"empty.yaml": ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Load(dir)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if len(l.Files) != 1 {
					t.Errorf("files read: %v", l.Files)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load(%s) read %d files and no error; want an error", dir, len(l.Files))
			}
			for _, w := range append([]string{dir}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}
