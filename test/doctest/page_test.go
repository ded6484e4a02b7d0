package doctest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fence is three backticks, which a Go raw string cannot hold.
const fence = "```"

// md turns a page written with ”' for fences into markdown.
func md(s string) string { return strings.ReplaceAll(s, "'''", fence) }

// TestParse: every fenced block is found with its line, info string, kind, text and the
// prose line above it, whatever its fence (backticks, tildes, longer, indented in a list).
func TestParse(t *testing.T) {
	type want struct {
		line  int
		info  string
		kind  Kind
		text  string
		above string
	}
	for _, tc := range []struct {
		name string
		src  string
		want []want
	}{
		{name: "the kinds", src: md("# T\n\nStart it:\n\n'''sh run background\nsandbox\n'''\n\n'''sh run\necho hi\n'''\n'''text output\nhi\n'''\nReal AWS only:\n'''sh norun\naws iam\n'''\n'''yaml\na: 1\n'''\n'''\nsample\n'''\n"),
			want: []want{
				{5, "sh run background", Background, "sandbox\n", "Start it:"},
				{9, "sh run", Run, "echo hi\n", ""},
				{12, "text output", Output, "hi\n", ""},
				{16, "sh norun", NoRun, "aws iam\n", "Real AWS only:"},
				{19, "yaml", Other, "a: 1\n", ""},
				{22, "", Other, "sample\n", ""},
			}},
		{name: "unmarked and unknown marks", src: md("'''sh\nls\n'''\n'''bash\nls\n'''\n'''console\n$ ls\n'''\n'''sh runn\nls\n'''\n'''bash run\nls\n'''\n'''SH run\nls\n'''\n"),
			want: []want{
				{1, "sh", Unmarked, "ls\n", ""},
				{4, "bash", Unmarked, "ls\n", ""},
				{7, "console", Unmarked, "$ ls\n", ""},
				{10, "sh runn", Unmarked, "ls\n", ""},
				{13, "bash run", Unmarked, "ls\n", ""},
				{16, "SH run", Run, "ls\n", ""}, // the language's case does not matter
			}},
		{name: "a longer fence holds a shorter one", src: "`" + fence + "sh run\ncat <<EOF\n" + fence + "\nEOF\n`" + fence + "\n",
			want: []want{{1, "sh run", Run, "cat <<EOF\n" + fence + "\nEOF\n", ""}}},
		{name: "tildes", src: "~~~sh run\necho ~\n~~~\n",
			want: []want{{1, "sh run", Run, "echo ~\n", ""}}},
		{name: "indented in a list item", src: md("1. Run:\n\n   '''sh run\n   echo a\n     echo b\n   '''\n"),
			want: []want{{3, "sh run", Run, "echo a\n  echo b\n", "1. Run:"}}},
		{name: "inline code is not a fence", src: md("'''sh''' is inline\n'''sh run\necho\n'''\n"),
			want: []want{{2, "sh run", Run, "echo\n", md("'''sh''' is inline")}}},
		{name: "CRLF", src: md("'''sh run\r\necho\r\n'''\r\n"),
			want: []want{{1, "sh run", Run, "echo\n", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("page.md", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, b := range p.Blocks {
				got = append(got, want{b.Line, b.Info, b.Kind, b.Text, b.Above})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("blocks:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestParseUnclosed: a fence never closed is an error naming the page and line, not a
// block holding the rest of the page.
func TestParseUnclosed(t *testing.T) {
	_, err := Parse("docs/x.md", md("text\n'''sh run\necho\n'''sh run\n"))
	if err == nil || !strings.Contains(err.Error(), "docs/x.md:2: the fence") {
		t.Errorf("Parse: got %v, want an error at docs/x.md:2", err)
	}
	_, err = Parse("docs/x.md", "`"+fence+"sh run\necho\n"+fence+"\n")
	if err == nil {
		t.Error("a four-backtick fence closed by three: got no error")
	}
}

// TestCheck: each breach of the convention is reported at its line; a page that keeps
// it has none.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string // substrings, one per error, in order
	}{
		{name: "a good page", src: md("Start:\n'''sh run background\nbin/crossfade sandbox --api 127.0.0.1:10080 --dns 127.0.0.1:10053\n'''\n'''sh run\necho hi\n'''\nIt prints:\n'''text output\nhi\n'''\nOn real AWS only, so not run:\n'''sh norun\naws iam create-role\n'''\n'''yaml\nx: 1\n'''\n")},
		{name: "plain sh", src: md("'''sh run\necho\n'''\n'''sh\nls\n'''\n"), want: []string{"page.md:4: " + fence + "sh: a shell block must be marked"}},
		{name: "bash and console", src: md("'''sh run\necho\n'''\n'''bash\nls\n'''\n'''console\n$ ls\n'''\n"),
			want: []string{"page.md:4: " + fence + "bash: a shell block must be marked", "page.md:7: " + fence + "console: a shell block must be marked"}},
		{name: "a typo in the mark", src: md("'''sh run\necho\n'''\n'''sh rnu\nls\n'''\n"), want: []string{"page.md:4: " + fence + "sh rnu: a shell block must be marked"}},
		{name: "norun without a reason", src: md("'''sh run\necho\n'''\n'''sh norun\nls\n'''\n"), want: []string{"page.md:4: " + fence + "sh norun: a norun block needs a one-line reason"}},
		{name: "norun at the top", src: md("'''sh norun\nls\n'''\n'''sh run\necho\n'''\n"), want: []string{"page.md:1: " + fence + "sh norun: a norun block needs"}},
		{name: "output first", src: md("'''text output\nhi\n'''\n'''sh run\necho\n'''\n"), want: []string{"page.md:1: " + fence + "text output: an output block must come right after"}},
		{name: "output after yaml", src: md("'''sh run\necho\n'''\n'''yaml\na: 1\n'''\n'''text output\nhi\n'''\n"), want: []string{"page.md:7: " + fence + "text output: an output block must come right after"}},
		{name: "output after norun", src: md("'''sh run\necho\n'''\nwhy:\n'''sh norun\nls\n'''\n'''text output\nhi\n'''\n"), want: []string{"page.md:8: " + fence + "text output: an output block must come right after"}},
		{name: "two outputs", src: md("'''sh run\necho\n'''\n'''text output\nhi\n'''\n'''text output\nhi\n'''\n"), want: []string{"page.md:7: " + fence + "text output: an output block must come right after"}},
		{name: "nothing to run", src: md("'''yaml\na: 1\n'''\nwhy:\n'''sh norun\nls\n'''\n"), want: []string{"page.md: no " + fence + "sh run block"}},
		{name: "make build", src: md("'''sh run\nmake build\n'''\n"), want: []string{"page.md:1: " + fence + "sh run: runs make build"}},
		{name: "sandbox on its default ports", src: md("'''sh run background\nbin/crossfade sandbox\n'''\n'''sh run\nbin/crossfade sandbox --api 127.0.0.1:10080\n'''\n"),
			want: []string{"page.md:1: " + fence + "sh run background: starts crossfade sandbox without --api and --dns", "page.md:4: " + fence + "sh run: starts crossfade sandbox without"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("page.md", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			errs := Check(p)
			if len(errs) != len(tc.want) {
				t.Fatalf("Check: got %d errors %v, want %d %q", len(errs), errs, len(tc.want), tc.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tc.want[i]) {
					t.Errorf("error %d: got %q, want it to contain %q", i, err, tc.want[i])
				}
			}
		})
	}
}

// TestMatch: each non-empty expected line must be a whole output line, in order, with
// `...` for any text; anything else is a mismatch that names the missing line.
func TestMatch(t *testing.T) {
	out := "route53 api: http://127.0.0.1:10080   \ndns:         127.0.0.1:10053 (udp+tcp)\n\ncutover app: completed\n  step 1 of 2  blue=50 green=50  passed\n  step 2 of 2  blue=0 green=100  passed\n"
	for _, tc := range []struct {
		name, want, output string
		miss               string // "" for a match, else a substring of the miss
	}{
		{name: "exact lines", want: "route53 api: http://127.0.0.1:10080\ndns:         127.0.0.1:10053 (udp+tcp)\n", output: out},
		{name: "a subset in order, blank lines ignored", want: "\nroute53 api: http://127.0.0.1:10080\n\n  step 2 of 2  blue=0 green=100  passed\n", output: out},
		{name: "trailing spaces trimmed on both sides", want: "cutover app: completed  \t\n", output: "cutover app: completed \n"},
		{name: "ellipsis", want: "cutover ...: completed\n  step 1 of 2 ... passed\n...step 2...\n", output: out},
		{name: "ellipsis matches nothing", want: "cutover app:... completed\n", output: out},
		{name: "empty expected", want: "\n\n", output: out},
		{name: "CRLF output", want: "a\nb\n", output: "a\r\nb\r\n"},
		{name: "out of order", want: "  step 2 of 2  blue=0 green=100  passed\n  step 1 of 2  blue=50 green=50  passed\n", output: out,
			miss: `no line "  step 1 of 2  blue=50 green=50  passed" after output line 6`},
		{name: "a part of a line is not a line", want: "completed\n", output: out, miss: `no line "completed"`},
		{name: "leading spaces count", want: "step 1 of 2  blue=50 green=50  passed\n", output: out, miss: "no line"},
		{name: "regexp characters are literal", want: "dns:         127.0.0.1:10053 (udp.tcp)\n", output: out, miss: "no line"},
		{name: "a line used once", want: "a\na\n", output: "a\nb\n", miss: `no line "a" after output line 1`},
		{name: "empty output", want: "x\n", output: "", miss: `no line "x"`},
		{name: "ellipsis does not span lines", want: "a...b\n", output: "a\nb\n", miss: `no line "a...b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Match(tc.want, tc.output)
			switch {
			case tc.miss == "" && got != "":
				t.Errorf("Match: got %q, want a match", got)
			case tc.miss != "" && !strings.Contains(got, tc.miss):
				t.Errorf("Match: got %q, want a miss containing %q", got, tc.miss)
			}
		})
	}
}

// TestRewritePorts: the documented ports move wherever a command names them, and
// nothing else does.
func TestRewritePorts(t *testing.T) {
	ports := map[int]int{10080: 41001, 10053: 41002}
	for _, tc := range []struct{ in, want string }{
		{"--aws-endpoint http://127.0.0.1:10080", "--aws-endpoint http://127.0.0.1:41001"},
		{"dig +short -p 10053 @127.0.0.1 app.example.com A", "dig +short -p 41002 @127.0.0.1 app.example.com A"},
		{"dig -p10053 @::1", "dig -p41002 @::1"},
		{`servers: ["127.0.0.1:10053"]`, `servers: ["127.0.0.1:41002"]`},
		{"http://localhost:10080/ and http://[::1]:10080/", "http://localhost:41001/ and http://[::1]:41001/"},
		{"127.0.0.1:100800 127.0.0.1:1008 127.0.0.1:8080", "127.0.0.1:100800 127.0.0.1:1008 127.0.0.1:8080"},
		{"weight 10080, port 10053, 10.0.0.1:10080", "weight 10080, port 10053, 10.0.0.1:10080"},
		{"mkdir -p out", "mkdir -p out"},
	} {
		if got := RewritePorts(tc.in, ports); got != tc.want {
			t.Errorf("RewritePorts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"bin/crossfade sandbox --api 127.0.0.1:10080 --dns 127.0.0.1:10053", []int{10080, 10053}},
		{"dig -p 10053 @127.0.0.1 x", []int{10053}},
		{"sleep 10080", nil},
	} {
		if got := PortsIn(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("PortsIn(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got, want := fmt.Sprint(DocumentedPorts), "[10080 10053]"; got != want {
		t.Errorf("DocumentedPorts = %s, want %s (the sandbox's defaults)", got, want)
	}
}
