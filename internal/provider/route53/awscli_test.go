package route53

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// awsCLI is Debian's AWS CLI v2; an older pyenv aws 1.x may come first on PATH.
const awsCLI = "/usr/bin/aws"

// runCLI runs the real AWS CLI against sb with throw-away credentials and no user config.
func runCLI(t *testing.T, sb *sandbox.Sandbox, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, awsCLI, append(args, "--endpoint-url", sb.APIURL(), "--output", "json")...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("aws %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String()
}

// TestChangeBatchJSONWithAWSCLI feeds the dry-run document to the real AWS CLI against one
// sandbox and Applies the same batch through the SDK against another: both zones must end
// up holding the same record sets.
func TestChangeBatchJSONWithAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the AWS CLI: skipped with -short")
	}
	if _, err := exec.LookPath(awsCLI); err != nil {
		t.Fatalf("%s not found: install Debian package awscli", awsCLI)
	}
	cliSB, sdkSB := startSandbox(t), startSandbox(t)
	cliZone := createZone(t, cliSB, "example.com", false)
	sdkZone := createZone(t, sdkSB, "example.com", false)
	cliP, sdkP := newTestProvider(t, cliSB, Config{}), newTestProvider(t, sdkSB, Config{})

	viaCLI := func(batch changes.Batch) {
		t.Helper()
		doc, err := ChangeBatchJSON(cliZone, batch, ChangeComment, []provider.Zone{cliZone})
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "batch.json")
		if err := os.WriteFile(f, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		out := runCLI(t, cliSB, "route53", "change-resource-record-sets", "--hosted-zone-id", cliZone.ID, "--change-batch", "file://"+f)
		if !strings.Contains(out, `"ChangeInfo"`) {
			t.Fatalf("aws change-resource-record-sets: %s", out)
		}
	}
	same := func(step string) {
		t.Helper()
		a, b := managed(records(t, cliP, cliZone)), managed(records(t, sdkP, sdkZone))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: zones differ\n AWS CLI %v\n Apply   %v", step, a, b)
		}
	}

	var create changes.Batch
	for _, e := range roundTripSet() {
		create = append(create, changes.Change{Action: changes.Create, Endpoint: e})
	}
	viaCLI(create)
	apply(t, sdkP, sdkZone, create)
	same("create")
	if n := len(managed(records(t, cliP, cliZone))); n != len(create) {
		t.Fatalf("AWS CLI wrote %d record sets, want %d", n, len(create))
	}

	// The routing transition: DELETE simple + CREATE weighted, with an UPSERT beside.
	cur := byKey(records(t, sdkP, sdkZone))
	simple := cur[endpoint.Key{Name: "simple.example.com", Type: "A"}]
	weighted := simple.Clone()
	weighted.SetIdentifier, weighted.Policy = "blue", endpoint.WeightedPolicy(7)
	txt := cur[endpoint.Key{Name: "txt.example.com", Type: "TXT"}].Clone()
	txt.Targets = endpoint.Targets{`"heritage=external-dns,external-dns/owner=green"`}
	transition := changes.Batch{
		{Action: changes.Delete, Endpoint: cur[endpoint.Key{Name: "www.example.com", Type: "A"}]}, // alias onto simple
		{Action: changes.Delete, Endpoint: simple},
		{Action: changes.Create, Endpoint: weighted},
		{Action: changes.Upsert, Endpoint: txt},
	}
	viaCLI(transition)
	apply(t, sdkP, sdkZone, transition)
	same("transition")
	got := byKey(records(t, cliP, cliZone))
	if w := got[weighted.Key()]; w == nil || w.Policy.Weight != 7 || got[simple.Key()] != nil {
		t.Fatalf("after transition via AWS CLI: %v", fmt.Sprint(managed(records(t, cliP, cliZone))))
	}
}
