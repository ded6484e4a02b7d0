package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSyncKeepsWhatInvalidInputPublished (issue 13): an object that turns invalid, a
// hostname list with one bad name and a manifest file that no longer parses each cost
// nothing that was already published. The records stay, with --strict too; the output
// says which were kept and why; fixing the input lets the sync converge again.
func TestSyncKeepsWhatInvalidInputPublished(t *testing.T) {
	sb, aws, zone := exampleZone(t)
	dir := t.TempDir()
	write := func(file, doc string) {
		t.Helper()
		writeFile(t, filepath.Join(dir, file), doc)
	}
	app := func(weight string) string {
		return service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", weight)
	}
	write("app.yaml", app("100"))
	write("multi.yaml", service("multi", "127.0.0.11", "hostname", "m1.example.com,m2.example.com"))
	write("other.yaml", service("other", "127.0.0.12", "hostname", "o.example.com"))
	mustSync(t, sb, dir, "blue")
	published := aws.zoneSets(zone)
	if len(published) != 8 {
		t.Fatalf("first sync published %q, want 4 records with their TXT", published)
	}

	// The weight turns invalid and one name of the list turns bad (m2 is dropped from it).
	write("app.yaml", app("abc"))
	write("multi.yaml", service("multi", "127.0.0.11", "hostname", "m1.example.com,bad..example.com,m3.example.com"))
	for _, strict := range []bool{false, true} {
		var args []string
		if strict {
			args = []string{"--strict"}
		}
		r := crossfadeSync(t, sb, dir, "blue", args...)
		if (r.exit != 0) != strict {
			t.Errorf("strict=%v: exit %d\n%s", strict, r.exit, r.out)
		}
		for _, want := range []string{
			`service default/app: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255`,
			`service default/multi: annotation external-dns.alpha.kubernetes.io/hostname "bad..example.com": empty label`,
			"kept (no source wants them now, but they were not deleted): 2",
			"app.example.com A [blue]: not deleted: its object service/default/app is invalid now",
			"m2.example.com A: not deleted: its object service/default/multi is invalid now",
		} {
			if !strings.Contains(r.out, want) {
				t.Errorf("strict=%v: output lacks %q:\n%s", strict, want, r.out)
			}
		}
		got := aws.zoneSets(zone)
		for _, p := range published {
			if !slices.Contains(got, p) {
				t.Errorf("strict=%v: %s was lost", strict, p)
			}
		}
		if !slices.Contains(got, "m3.example.com. A 127.0.0.11") {
			t.Errorf("strict=%v: the good names of the list were not published: %q", strict, got)
		}
	}

	// A file that no longer parses: its object's record stays, and nothing is deleted.
	write("app.yaml", app("100"))
	write("multi.yaml", service("multi", "127.0.0.11", "hostname", "m1.example.com,m3.example.com"))
	write("other.yaml", "apiVersion: v1\nkind: Service\nmetadata: [this is not a mapping\n")
	r := crossfadeSync(t, sb, dir, "blue")
	if !strings.Contains(r.out, "some input could not be read: no record was deleted in this run") {
		t.Errorf("unreadable input: output does not say nothing was deleted:\n%s", r.out)
	}
	got := aws.zoneSets(zone)
	for _, keep := range []string{"o.example.com. A 127.0.0.12", "m2.example.com. A 127.0.0.11"} {
		if !slices.Contains(got, keep) {
			t.Errorf("unreadable input: %s was deleted: %q", keep, got)
		}
	}

	// All fixed: the sync converges, and m2, no longer wanted by a valid object, goes.
	write("other.yaml", service("other", "127.0.0.12", "hostname", "o.example.com"))
	mustSync(t, sb, dir, "blue")
	got = aws.zoneSets(zone)
	if slices.Contains(got, "m2.example.com. A 127.0.0.11") || !slices.Contains(got, "o.example.com. A 127.0.0.12") {
		t.Errorf("after the fix: %q", got)
	}
}
