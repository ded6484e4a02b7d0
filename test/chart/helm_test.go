// Package chart_test tests the Helm chart in deploy/chart/crossfade with a real helm (built
// by scripts/deps.sh into the tool cache) and a real kube-apiserver (internal/kubetest):
// lint and template over a matrix of values, the schema's refusals, the rendered arguments
// parsed by the real controller binary, every rendering created (dry-run, strict field
// validation) on the API server, and a real install, upgrade and uninstall.
package chart_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// chartDir is the chart under test, from this package's directory.
const chartDir = "../../deploy/chart/crossfade"

// releaseName and namespace are the release every test renders or installs.
const (
	releaseName = "cf"
	namespace   = "crossfade-system"
	// fullname is what the chart names the release's objects: <release>-crossfade.
	fullname = releaseName + "-crossfade"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// helm runs the helm binary scripts/deps.sh builds, with its configuration, cache and
// data directories in a temporary directory: the tests read no user's helm setup and
// leave nothing behind.
type helm struct {
	bin string
	env []string
}

// newHelm returns the helm of the tool cache. It skips under -short; when helm is not
// built it fails under CI=true (CI builds it, so its absence is a broken setup that must
// not pass as a skip) and skips otherwise, as internal/kubetest does for its servers.
func newHelm(t *testing.T) *helm {
	t.Helper()
	if testing.Short() {
		t.Skip("runs helm; not under -short")
	}
	bin := kubetest.Helm(t)
	home := t.TempDir()
	env := append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"), // only --kubeconfig reaches a cluster
	)
	return &helm{bin: bin, env: env}
}

// run runs helm with args and returns its standard output, or an error holding its
// standard error.
func (h *helm) run(args ...string) (string, error) {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// must runs helm and fails the test if it fails.
func (h *helm) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// template renders the chart as release cf in namespace crossfade-system with the
// given value flags (--set …).
func (h *helm) template(values ...string) ([]*unstructured.Unstructured, error) {
	out, err := h.run(append([]string{"template", releaseName, chartDir, "--namespace", namespace}, values...)...)
	if err != nil {
		return nil, err
	}
	return decode(out)
}

// decode splits a multi-document YAML stream into objects; empty documents are skipped.
func decode(manifests string) ([]*unstructured.Unstructured, error) {
	return kubetest.DecodeManifests(strings.NewReader(manifests))
}

// rendered is one rendering of the chart, by kind and name.
type rendered struct {
	t    *testing.T
	objs []*unstructured.Unstructured
}

// kinds lists the rendered objects as "Kind/name", sorted.
func (r rendered) kinds() []string {
	var out []string
	for _, o := range r.objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// find returns the object of kind and name, or nil.
func (r rendered) find(kind, name string) *unstructured.Unstructured {
	for _, o := range r.objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// typed converts the rendered object of kind and name into into, failing the test if
// there is none or it does not convert (a field of the wrong type).
func (r rendered) typed(kind, name string, into any) {
	r.t.Helper()
	o := r.find(kind, name)
	if o == nil {
		r.t.Fatalf("no %s/%s rendered; got %v", kind, name, r.kinds())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		r.t.Fatalf("%s/%s: %v", kind, name, err)
	}
}
