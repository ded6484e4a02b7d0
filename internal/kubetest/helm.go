package kubetest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

// helmBinary is the name scripts/deps.sh builds helm under in BinDir.
const helmBinary = "helm"

// Helm returns the helm that scripts/deps.sh builds beside etcd and kube-apiserver. When
// it is not built, the test fails under CI=true (CI builds it, so its absence is a broken
// setup that must not pass as a skip) and is skipped otherwise, as Start does.
func Helm(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(BinDir(), helmBinary)
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		testenv.Missing(t, "helm not built at "+bin+": `make test` builds it (scripts/deps.sh test)")
	}
	return bin
}

// DecodeManifests splits a stream of YAML (or JSON) documents, as `helm template` prints
// them, into objects. Empty documents are skipped; an error names the document by its
// place in the stream.
func DecodeManifests(r io.Reader) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for doc := 1; ; doc++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(obj) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
}
