// Package doctest runs the shell blocks of the guides as written, against the sandbox,
// and checks what they print: a guide whose commands stop working fails `make test`.
//
// The marking convention a guide follows:
//
//   - ```sh run: a block the harness runs, in page order, with `bash -euo pipefail`, in
//     one temporary directory per page; exports and `cd` carry over to the next block, as
//     in one terminal.
//   - ```sh run background: a long-running process (the sandbox), killed with its whole
//     process group when the page ends or fails.
//   - ```sh norun: a block that is not run; the prose line right above says why.
//   - ```text output: right after a run block, what it prints: each non-empty line must
//     appear, in order, as a whole line of its output; `...` within a line matches any
//     text.
//
// Any other shell block (plain ```sh, ```bash, ```console) is an error: every command of a
// guide runs, or says why not.
//
// A guide writes the sandbox's default ports (DocumentedPorts); the harness moves them to
// free ones per page. It provides bin/crossfade (built from this checkout) and a copy of
// examples/ in the page's directory, sets sandbox credentials unless the page exports its
// own, and points every proxy variable at a closed loopback port, so that a command that
// would reach beyond loopback fails instead.
package doctest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kind is what the harness does with a fenced block.
type Kind int

// The kinds of fenced block.
const (
	// Other is a block the harness ignores: YAML, an unlabelled sample, plain text.
	Other Kind = iota
	// Run is a shell block run to completion.
	Run
	// Background is a shell block started and left running until the page ends.
	Background
	// NoRun is a shell block marked not to run.
	NoRun
	// Output is the expected output of the run block before it.
	Output
	// Unmarked is a shell block with no (or an unknown) marking: an error.
	Unmarked
)

// shellLangs are the info-string languages that hold commands for a shell.
var shellLangs = []string{"sh", "bash", "console", "shell", "shell-session", "zsh"}

// Block is one fenced block of a page.
type Block struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Info is the fence's info string ("sh run background").
	Info string
	// Kind is what the harness does with it.
	Kind Kind
	// Text is the block's content, a newline after each line.
	Text string
	// Above is the nearest non-blank line above the opening fence, "" when that is a
	// fence or the start of the page: a norun block's reason.
	Above string
}

// Page is a guide's fenced blocks, in order.
type Page struct {
	// Path names the page in errors.
	Path string
	// Blocks are its fenced blocks in page order.
	Blocks []Block
}

// fenceOpen matches an opening code fence: indentation, three or more backticks or
// tildes, the info string.
var fenceOpen = regexp.MustCompile("^([ \t]*)(`{3,}|~{3,})(.*)$")

// Parse reads a page's fenced blocks; path names it in errors. An unterminated fence is
// an error: the rest of the page would silently be one block.
func Parse(path, src string) (*Page, error) {
	p := &Page{Path: path}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	above := ""
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			if s := strings.TrimSpace(lines[i]); s != "" {
				above = s
			}
			continue
		}
		indent, fence, info := m[1], m[2], strings.TrimSpace(m[3])
		if fence[0] == '`' && strings.Contains(info, "`") {
			// Not a fence: inline code at the start of a line (```a``` prose).
			above = strings.TrimSpace(lines[i])
			continue
		}
		b := Block{Line: i + 1, Info: info, Above: above}
		closed := false
		var text strings.Builder
		for i++; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" {
				closed = true
				break
			}
			text.WriteString(strings.TrimPrefix(lines[i], indent))
			text.WriteByte('\n')
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: the fence %q is never closed", path, b.Line, fence+info)
		}
		b.Text = text.String()
		b.Kind = kindOf(info)
		p.Blocks = append(p.Blocks, b)
		above = "" // the line above the next block is a fence until prose comes
	}
	return p, nil
}

// kindOf classifies a block by its info string.
func kindOf(info string) Kind {
	words := strings.Fields(info)
	if len(words) == 0 {
		return Other
	}
	lang, marks := strings.ToLower(words[0]), strings.Join(words[1:], " ")
	switch {
	case slices.Contains(shellLangs, lang):
		switch {
		case lang != "sh":
			// Only ```sh carries a marking; ```bash run is a typo for ```sh run.
			return Unmarked
		case marks == "run":
			return Run
		case marks == "run background":
			return Background
		case marks == "norun":
			return NoRun
		}
		return Unmarked
	case lang == "text" && marks == "output":
		return Output
	}
	return Other
}

// Check returns every breach of the marking convention on p: an unmarked shell block, a
// norun block with no reason above it, an output block that does not follow a run block,
// a page with nothing to run, and a command the harness cannot run as written.
func Check(p *Page) []error {
	var errs []error
	bad := func(b Block, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: ```%s: %s", p.Path, b.Line, b.Info, fmt.Sprintf(format, args...)))
	}
	runs := 0
	for i, b := range p.Blocks {
		switch b.Kind {
		case Unmarked:
			bad(b, "a shell block must be marked ```sh run, ```sh run background, or ```sh norun with a reason in the line above")
		case NoRun:
			if b.Above == "" {
				bad(b, "a norun block needs a one-line reason in the prose right above it")
			}
		case Output:
			if i == 0 || p.Blocks[i-1].Kind != Run && p.Blocks[i-1].Kind != Background {
				bad(b, "an output block must come right after a ```sh run block")
			}
		case Run, Background:
			runs++
			if strings.Contains(b.Text, "make build") {
				bad(b, "runs make build: the harness provides bin/crossfade; say make build in the prose")
			}
			if sandboxWithoutPorts(b.Text) {
				bad(b, "starts crossfade sandbox without --api and --dns written out: the harness moves only the ports a page writes (%s)", documentedPortList())
			}
		}
	}
	if runs == 0 {
		errs = append(errs, fmt.Errorf("%s: no ```sh run block: a guide the harness runs must run something", p.Path))
	}
	return errs
}

// sandboxLine matches a command line that starts the sandbox.
var sandboxLine = regexp.MustCompile(`(?m)^.*crossfade sandbox\b.*$`)

// sandboxWithoutPorts reports whether text starts the sandbox on a default port it does
// not write: run so, it would listen on the real 10080 beside every other test.
func sandboxWithoutPorts(text string) bool {
	for _, l := range sandboxLine.FindAllString(text, -1) {
		if !strings.Contains(l, "--api") || !strings.Contains(l, "--dns") {
			return true
		}
	}
	return false
}

// Match checks output against want: each non-empty line of want, trailing spaces
// trimmed, must be a whole line of output, in order; `...` within a line of want matches
// any text. It returns "" on a match, else which line of want is missing.
func Match(want, output string) string {
	got := strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n")
	for i := range got {
		got[i] = strings.TrimRight(got[i], " \t")
	}
	next := 0 // the first line of output a later line of want may match
	for _, w := range strings.Split(want, "\n") {
		w = strings.TrimRight(w, " \t")
		if w == "" {
			continue
		}
		re := linePattern(w)
		found := -1
		for j := next; j < len(got); j++ {
			if re.MatchString(got[j]) {
				found = j
				break
			}
		}
		if found < 0 {
			if next > 0 {
				return fmt.Sprintf("no line %q after output line %d (%q)", w, next, got[next-1])
			}
			return fmt.Sprintf("no line %q", w)
		}
		next = found + 1
	}
	return ""
}

// linePattern is the whole-line pattern of a line of expected output: literal text,
// with `...` matching anything.
func linePattern(w string) *regexp.Regexp {
	parts := strings.Split(w, "...")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// DocumentedPorts are the ports the guides write (the sandbox's defaults: API 10080, DNS
// 10053). Tests of other packages run at the same time, so the harness moves each page to
// free ports of its own, rewriting the text it runs and the output it expects.
var DocumentedPorts = []int{10080, 10053}

// documentedPortList spells DocumentedPorts for a message.
func documentedPortList() string {
	s := make([]string, len(DocumentedPorts))
	for i, p := range DocumentedPorts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// portRef matches where a command names a port: host:port on a loopback address, and
// dig's -p PORT.
var portRef = regexp.MustCompile(`(127\.0\.0\.1:|\[::1\]:|localhost:|-p ?)([0-9]+)\b`)

// RewritePorts replaces each documented port named in text (127.0.0.1:PORT,
// [::1]:PORT, localhost:PORT, -p PORT) by the port ports maps it to. Any other number
// is left alone.
func RewritePorts(text string, ports map[int]int) string {
	return portRef.ReplaceAllStringFunc(text, func(m string) string {
		sub := portRef.FindStringSubmatch(m)
		var n int
		if _, err := fmt.Sscan(sub[2], &n); err != nil {
			return m
		}
		to, ok := ports[n]
		if !ok {
			return m
		}
		return sub[1] + fmt.Sprint(to)
	})
}

// PortsIn returns the documented ports text names, as RewritePorts finds them, in
// DocumentedPorts order.
func PortsIn(text string) []int {
	named := map[string]bool{}
	for _, m := range portRef.FindAllStringSubmatch(text, -1) {
		named[m[2]] = true
	}
	var out []int
	for _, p := range DocumentedPorts {
		if named[fmt.Sprint(p)] {
			out = append(out, p)
		}
	}
	return out
}
