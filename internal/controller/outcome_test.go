package controller

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/source"
)

func TestOutcome(t *testing.T) {
	zone := provider.Zone{ID: "Z1", Name: "example.com"}
	conflict := changes.Conflict{Key: endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"}, Reason: "owned by green", Advice: "pick another set identifier"}
	invalid := &endpoint.InvalidError{Object: endpoint.ObjectRef{Kind: "service", Namespace: "default", Name: "nginx"},
		Field: "annotation external-dns.alpha.kubernetes.io/aws-weight", Value: "abc", Reason: "want an integer 0..255"}
	pending := source.Pending{Object: endpoint.ObjectRef{Kind: "service", Namespace: "default", Name: "web"}, Reason: "no load balancer address yet"}
	tests := []struct {
		name     string
		out      Outcome
		findings int
		want     []string
		absent   []string
	}{
		{
			name:   "clean",
			out:    Outcome{Report: &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{}}}}},
			want:   []string{"sources: 0 records; 0 invalid, 0 pending, 0 skipped objects", "zone example.com (Z1): 0 create"},
			absent: []string{"conflicts (", "invalid (", "dry run"},
		},
		{
			name: "every kind of finding, pending is not one",
			out: Outcome{
				InputErrors: []error{errors.New("a.yaml: document 2: bad")},
				Source:      source.Result{Invalid: []*endpoint.InvalidError{invalid}, Pending: []source.Pending{pending}},
				Report:      &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{Conflicts: []changes.Conflict{conflict}}}}, Unzoned: []string{"app.other.org"}},
			},
			findings: 4,
			want: []string{
				"; 1 unreadable",
				"unreadable (skipped; everything else was read): 1\n  a.yaml: document 2: bad\n",
				`invalid (skipped, and what they published is kept; everything else is synced): 1` + "\n" + `  service default/nginx: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255`,
				"pending (not published yet): 1\n  service default/web: no load balancer address yet\n",
				"conflicts (not written; nothing was deleted): 1\n  app.example.com A [blue]: owned by green; pick another set identifier\n",
				"no managed zone holds these names: 1\n  app.other.org\n",
			},
		},
		{
			name:   "dry run prints the batch",
			out:    Outcome{DryRun: true, Report: &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{}, DryRun: [][]byte{[]byte(`{"Changes": []}`)}}}}},
			want:   []string{"batch 1 of 1, as `aws route53 change-resource-record-sets --hosted-zone-id Z1 --change-batch file://BATCH.json` takes it:\n{\"Changes\": []}\n", "dry run: nothing was sent"},
			absent: []string{"invalid ("},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.out.Findings(); got != tt.findings {
				t.Errorf("Findings() = %d, want %d", got, tt.findings)
			}
			var b strings.Builder
			if err := tt.out.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(b.String(), a) {
					t.Errorf("output has %q:\n%s", a, b.String())
				}
			}
		})
	}
}

func TestOutcomeSaveBatches(t *testing.T) {
	zone := provider.Zone{ID: "Z1", Name: "example.com"}
	docs := [][]byte{[]byte(`{"Changes": [1]}`), []byte(`{"Changes": [2]}`)}
	o := Outcome{DryRun: true, Report: &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{}, DryRun: docs}}}}
	dir := filepath.Join(t.TempDir(), "out")
	if err := o.SaveBatches(dir); err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		p := filepath.Join(dir, "Z1-"+string(rune('1'+i))+".json")
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(d)+"\n" {
			t.Errorf("%s: %q, %v; want %q", p, got, err, d)
		}
	}
	var b strings.Builder
	if err := o.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "batch 2 of 2: aws route53 change-resource-record-sets --hosted-zone-id Z1 --change-batch file://" + filepath.Join(dir, "Z1-2.json"); !strings.Contains(b.String(), want) || strings.Contains(b.String(), "Changes") {
		t.Errorf("output should name the files, not print the JSON:\n%s", b.String())
	}
}

// TestOutcomeSaveBatchesReplacesWhole: a batch file is replaced whole, never rewritten in
// place: a reader that opened the file of an earlier dry run (aws route53 …
// file://, a review tool) reads that batch to its end, never a truncated or half-new one,
// and no temporary file is left beside the batches. Before, os.WriteFile truncated and
// rewrote the file the reader had open.
func TestOutcomeSaveBatchesReplacesWhole(t *testing.T) {
	zone := provider.Zone{ID: "Z1", Name: "example.com"}
	dir := t.TempDir()
	p := filepath.Join(dir, "Z1-1.json")
	old := `{"Changes": ["from the dry run before"]}` + "\n"
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	o := Outcome{DryRun: true, Report: &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{}, DryRun: [][]byte{[]byte(`{"Changes": [2]}`)}}}}}
	if err := o.SaveBatches(dir); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(reader)
	if err != nil || string(got) != old {
		t.Errorf("the reader of the earlier batch read %q, %v; want it whole: %q", got, err, old)
	}
	if now, err := os.ReadFile(p); err != nil || string(now) != `{"Changes": [2]}`+"\n" {
		t.Errorf("%s: %q, %v; want the new batch", p, now, err)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 1 {
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		t.Errorf("files in %s: %q, want the batch only", dir, names)
	}
}
