package cutover

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old      string // "" = none
		dirAtDst bool   // path is a non-empty directory: the rename fails
		tmpElse  bool   // tmp in another directory
		wantErr  bool
		want     string // path's content afterwards
	}{
		{name: "new report", want: "{\"outcome\":\"completed\"}\n"},
		{name: "replaces the previous report whole", old: strings.Repeat("x", 1<<16), want: "{}\n"},
		{name: "rename fails: no temporary file left", dirAtDst: true, wantErr: true},
		{name: "temporary file elsewhere: refused, old report kept", old: "old\n", tmpElse: true, wantErr: true, want: "old\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.json")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.dirAtDst {
				if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			tmp := path + ".tmp"
			if tc.tmpElse {
				tmp = filepath.Join(t.TempDir(), "report.json.tmp")
			}
			data := tc.want
			if tc.wantErr {
				data = "new\n"
			}
			err := writeFileAtomic(tmp, path, []byte(data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("writeFileAtomic error = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			if !tc.dirAtDst {
				got, rerr := os.ReadFile(path)
				if rerr != nil || string(got) != tc.want {
					t.Errorf("%s = %q (%v), want %q", path, got, rerr, tc.want)
				}
			}
			des, rerr := os.ReadDir(dir)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var names []string
			for _, de := range des {
				names = append(names, de.Name())
			}
			if !slices.Equal(names, []string{"report.json"}) {
				t.Errorf("directory holds %v, want only report.json", names)
			}
		})
	}
}
