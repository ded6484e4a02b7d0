package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

const guardService = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
  annotations:
    external-dns.alpha.kubernetes.io/hostname: web.example.com
spec:
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
      - ip: 192.0.2.10
`

const guardDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
`

// manifestDir writes files into a new directory and returns it.
func manifestDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSyncDeletionGuardCLI runs `crossfade sync` against a sandbox zone holding the
// owner's one record: a manifests directory without manifests is an error that deletes
// nothing; manifests that yield no record are a mass deletion the guard holds, failing
// the run (dry run too); --allow-mass-delete lets it through.
func TestSyncDeletionGuardCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb := sandboxtest.Start(t)
	p, zone := route53test.Zone(t, sb, "example.com")
	aNames := func() []string {
		t.Helper()
		recs, err := p.Records(context.Background(), zone)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			if r.Type == "A" {
				out = append(out, r.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	sync := func(manifests string, extra ...string) (int, string, string) {
		t.Helper()
		args := slices.Concat([]string{"sync", "--manifests", manifests, "--txt-owner-id", "blue",
			"--aws-endpoint", sb.APIURL(), "--aws-region", "us-east-1"}, extra)
		return runCLI(t, args...)
	}
	if code, out, errOut := sync(manifestDir(t, map[string]string{"app.yaml": guardService})); code != 0 {
		t.Fatalf("first sync exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	published := []string{"web.example.com"}
	if got := aNames(); !slices.Equal(got, published) {
		t.Fatalf("zone holds %q after the first sync", got)
	}

	for _, tc := range []struct {
		name      string
		files     map[string]string
		extra     []string
		wantCode  int
		wantErr   []string
		wantOut   []string
		wantAfter []string
	}{
		{name: "empty directory", wantCode: 1,
			wantErr: []string{"--manifests", "holds no manifest", "*.yaml, *.yml or *.json", "it is empty"}, wantAfter: published},
		{name: "backup file only", files: map[string]string{"app.yaml.bak": guardService}, wantCode: 1,
			wantErr: []string{"holds no manifest", "app.yaml.bak"}, wantAfter: published},
		{name: "dry run: no record wanted", files: map[string]string{"deploy.yaml": guardDeployment}, extra: []string{"--dry-run"}, wantCode: 1,
			wantErr:   []string{"the deletion guard would hold 1 deletion (", "zone example.com", "1 of the 1 records of owner blue", "--allow-mass-delete"},
			wantOut:   []string{"1 delete held by the deletion guard", "the deletion guard would hold 1 deletion of the 1 record owner blue", "those records would stay, creates and updates would be written;", "dry run: nothing was sent"},
			wantAfter: published},
		{name: "no record wanted", files: map[string]string{"deploy.yaml": guardDeployment}, wantCode: 1,
			wantErr: []string{"the deletion guard held 1 deletion (", "zone example.com", "1 of the 1 records of owner blue", "--allow-mass-delete"},
			wantOut: []string{"sources: 0 records", "0 delete,", "1 delete held by the deletion guard", "held by the deletion guard (not deleted): 1",
				"the deletion guard held 1 deletion of the 1 record owner blue owned there before the guard first held them", "    web.example.com A\n"},
			wantAfter: published},
		{name: "no record wanted, allowed", files: map[string]string{"deploy.yaml": guardDeployment}, extra: []string{"--allow-mass-delete"}, wantCode: 0,
			wantOut: []string{"1 delete,"}, wantAfter: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := manifestDir(t, tc.files)
			code, out, errOut := sync(dir, tc.extra...)
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			if tc.wantCode != 0 && !strings.Contains(errOut, dir) && len(tc.files) == 0 {
				t.Errorf("stderr does not name %s:\n%s", dir, errOut)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if got := aNames(); !slices.Equal(got, tc.wantAfter) {
				t.Errorf("zone holds %q, want %q", got, tc.wantAfter)
			}
		})
	}
}

// TestDeleteGuardFlagValues: the guard's flags refuse what they cannot mean, as usage
// errors naming the flag, for sync and controller alike.
func TestDeleteGuardFlagValues(t *testing.T) {
	for _, base := range [][]string{
		{"sync", "--manifests=m.yaml", "--txt-owner-id=blue"},
		{"controller", "--txt-owner-id=blue", "--source=service"},
	} {
		for _, tc := range []struct {
			arg, want string
		}{
			{"--max-delete-ratio=0", `--max-delete-ratio "0": want a number above 0 and at most 1`},
			{"--max-delete-ratio=1.5", `--max-delete-ratio "1.5": want a number above 0 and at most 1`},
			{"--max-delete-ratio=NaN", `--max-delete-ratio "NaN": want a number above 0 and at most 1`},
			{"--max-delete-ratio=-0.1", `--max-delete-ratio "-0.1": want a number above 0 and at most 1`},
			{"--max-delete-min=0", `--max-delete-min "0": want an integer 1 or more`},
			{"--max-delete-min=-3", `--max-delete-min "-3": want an integer 1 or more`},
		} {
			args := append(slices.Clone(base), tc.arg)
			code, _, stderr := runLine(t, args)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("`crossfade %s` exited %d, stderr:\n%s\nwant exit status %d and %q", strings.Join(args, " "), code, stderr, cli.ExitUsage, tc.want)
			}
		}
	}
}
