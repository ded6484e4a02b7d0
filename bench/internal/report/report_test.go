package report

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1000: "-1,000", -999: "-999",
		math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
		if n > math.MinInt32 && n < math.MaxInt32 {
			if got := Thousands(int(n)); got != want {
				t.Errorf("Thousands(int %d) = %q, want %q", n, got, want)
			}
		}
	}
}

func TestLatency(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 µs"},
		{612 * time.Microsecond, "612 µs"},
		{1234 * time.Microsecond, "1.23 ms"},
		{1500 * time.Millisecond, "1.50 s"},
	} {
		if got := Latency(tc.d); got != tc.want {
			t.Errorf("Latency(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestCells(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("dial a|b: refused\nlog tail:\nmore"), `dial a\|b: refused`},
	} {
		if got := ErrorCell(tc.err); got != tc.want {
			t.Errorf("ErrorCell(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if OrNA("") != "n/a" || OrNA("x") != "x" {
		t.Errorf(`OrNA("") = %q, OrNA("x") = %q`, OrNA(""), OrNA("x"))
	}
}

func TestReproduce(t *testing.T) {
	outputOnly := map[string]bool{"out": true, "keep": false}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ./bench/x"},
		{[]string{"-duration", "10s", "-out", "r.md", "-keep"}, "go run ./bench/x -duration 10s"},
		{[]string{"--out=r.md", "--keep=true", "--n", "3"}, "go run ./bench/x --n 3"},
		{[]string{"-nginx", "/opt/my nginx", "-q", "it's"}, `go run ./bench/x -nginx '/opt/my nginx' -q 'it'\''s'`},
		// A value that looks like an output flag's name is still a value.
		{[]string{"-name", "out"}, "go run ./bench/x -name out"},
	} {
		if got := Reproduce("go run ./bench/x", tc.args, outputOnly); got != tc.want {
			t.Errorf("Reproduce(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.md")
	var b strings.Builder
	if err := Write(&b, "# report\n", "-out", out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "# report\n" || b.String() != "# report\n" {
		t.Errorf("wrote %q and %q (%v); want the report in both", b.String(), got, err)
	}
	if err := Write(&b, "x", "-out", ""); err != nil {
		t.Errorf("Write with no -out = %v", err)
	}
	// The file is still written when the writer fails, and both failures are told.
	out2 := filepath.Join(dir, "r2.md")
	err := Write(failingWriter{}, "y", "--out", out2)
	if got, _ := os.ReadFile(out2); err == nil || !strings.Contains(err.Error(), "write the report: closed") || string(got) != "y" {
		t.Errorf("Write to a failing writer = %v, file %q", err, got)
	}
	err = Write(&b, "y", "--out", filepath.Join(dir, "no", "such", "dir"))
	if err == nil || !strings.Contains(err.Error(), "write --out ") {
		t.Errorf("Write to a missing dir = %v; want an error naming --out", err)
	}
}
