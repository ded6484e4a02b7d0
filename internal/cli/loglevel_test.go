package cli

import (
	"log/slog"
	"testing"
)

// TestParseLogLevel: slog's level names, and external-dns's logrus names a copied command
// line may carry, each as the nearest slog level; anything else is refused.
func TestParseLogLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"debug", slog.LevelDebug, true},
		{"info", slog.LevelInfo, true},
		{"warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"debug-4", slog.LevelDebug - 4, true},
		{"trace", slog.LevelDebug, true},
		{"warning", slog.LevelWarn, true},
		{"WARNING", slog.LevelWarn, true},
		{"fatal", slog.LevelError, true},
		{"panic", slog.LevelError, true},
		{"bogus", 0, false},
		{"", 0, false},
	} {
		got, ok := ParseLogLevel(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseLogLevel(%q) = %v, %t; want %v, %t", tc.in, got, ok, tc.want, tc.ok)
		}
		if err := LogLevel(tc.in); (err == nil) != tc.ok {
			t.Errorf("LogLevel(%q) = %v, want ok %t", tc.in, err, tc.ok)
		}
	}
}
