// Package report holds what the benchmark programs' Markdown reports have in common: how
// numbers and errors are spelt in them, the command line that measures the same again,
// and where a finished report goes.
package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Thousands spells n with a comma every three digits: 10000 → "10,000".
func Thousands[N ~int | ~int64](n N) string {
	s := fmt.Sprint(n)
	digits := strings.TrimPrefix(s, "-")
	sign := s[:len(s)-len(digits)]
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return sign + digits
}

// Latency renders a duration at a precision that suits it, three significant digits
// readable: "612 µs", "1.23 ms", "1.23 s".
func Latency(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
}

// OrNA is s, or "n/a" when it is empty: what was not found out.
func OrNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// ErrorCell is the first line of err for a table cell, its pipes escaped; "" for nil.
// The whole error is in the program's log.
func ErrorCell(err error) string {
	if err == nil {
		return ""
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return strings.ReplaceAll(line, "|", "\\|")
}

// Reproduce is the command line that measures the same again: command followed by args
// (the flags a run was given) less the flags in outputOnly, which change where results
// go, not what is measured. outputOnly says of each flag whether it takes a value.
func Reproduce(command string, args []string, outputOnly map[string]bool) string {
	cmd := command
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takesValue, skip := outputOnly[name]; skip && strings.HasPrefix(a, "-") {
			if takesValue && !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		cmd += " " + a
	}
	return cmd
}

// Write writes the report rep to w, and to the file path too unless it is "" (outFlag
// names the flag that set it, for the error). A failure to write one does not keep it
// from the other.
func Write(w io.Writer, rep, outFlag, path string) error {
	var errs []error
	if _, err := io.WriteString(w, rep); err != nil {
		errs = append(errs, fmt.Errorf("write the report: %w", err))
	}
	if path != "" {
		if err := os.WriteFile(path, []byte(rep), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("write %s %s: %w", outFlag, path, err))
		}
	}
	return errors.Join(errs...)
}
