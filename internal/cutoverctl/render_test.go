package cutoverctl

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestStatusRendering")

// TestStatusRendering renders recorded Cutovers (testdata/*.yaml, as the controller
// writes their status) as `status` prints them and compares with the golden files
// (testdata/*.golden; -update rewrites them): phase and step, weights, every condition's
// message, each step with its weights, gate verdicts, details, errors and measurements,
// the last action and who took it, who set spec.paused, the command waiting and the
// last answer.
func TestStatusRendering(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded statuses in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c v1alpha1.Cutover
			if err := yaml.UnmarshalStrict(b, &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var out bytes.Buffer
			if err := Status(&out, &c, now); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestStatusRendering -update writes it)", err)
			}
			if out.String() != string(want) {
				t.Errorf("status of %s:\n%s\nwant (%s):\n%s", file, out.String(), golden, want)
			}
		})
	}
}
