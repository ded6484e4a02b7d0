package cutover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCommandsReportsBadFiles: a file in the control directory that is not a command,
// or whose id is not its name, is reported saying which and why, and left alone.
func TestReadCommandsReportsBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"not JSON", "c1.json", "{", "not a command file: unexpected end of JSON input"},
		{"id is not the name", "c2.json", `{"id":"c9"}`, `not a command file: its id is "c9", not "c2", the file's name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			cmds, errs := readCommands(dir)
			if len(cmds) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) || strings.Contains(errs[0].Error(), "<nil>") {
				t.Fatalf("readCommands = %v, %v; want one error saying %q", cmds, errs, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, tc.file)); err != nil {
				t.Errorf("the file was not left alone: %v", err)
			}
		})
	}
}
