// Package cutovertest holds the fixtures that the end-to-end and the IAM tests of
// `crossfade cutover` share: an ALB on a sandbox's ELBv2 API, made through aws-sdk-go-v2
// as a person's tooling would, and the plan files they run.
package cutovertest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// DNSPlan writes, as NAME.yaml in a fresh directory, a plan moving app.example.com in
// zone example.com from → to (owners) in 0/10/50/100 % steps of 1 s, each gated on 100
// answers of the authoritative server at dnsServer (tolerance 0.25), and returns its path.
func DNSPlan(t testing.TB, name, from, to, dnsServer string) string {
	t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: %s
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: %s
  to: %s
  steps: [0, 10, 50, 100]
  pause: 1s
  gates:
    - name: answers
      dns:
        servers: [%q]
        samples: 100
        tolerance: 0.25
`, name, from, to, dnsServer)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatalf("cutovertest: write plan %s: %v", path, err)
	}
	return path
}
