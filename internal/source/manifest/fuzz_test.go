package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/crossfade-io/crossfade/internal/source"
)

// FuzzDecode feeds arbitrary bytes through decoding and conversion: neither may panic,
// and every document error must name its file.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"testdata/example", "testdata/bad"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("---\n---\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[1,"a",null]}`))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: a, annotations: {external-dns.alpha.kubernetes.io/hostname: 'a.b', external-dns.alpha.kubernetes.io/target: '::1'}}\nspec: {type: NodePort, ports: [{nodePort: 30000}]}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte(headlessManifest))
	src, err := source.New(source.Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Decode(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			return
		}
		for _, e := range l.Errors {
			if e.File != "fuzz.yaml" || e.Index < 1 || e.Err == nil {
				t.Fatalf("bad error %#v", e)
			}
		}
		r := src.Endpoints(l.Snapshot)
		for _, e := range r.Endpoints {
			if len(e.Validate()) > 0 {
				t.Fatalf("invalid endpoint published: %v %v", e, e.Validate())
			}
		}
	})
}
