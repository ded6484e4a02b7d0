package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Reasons shared by the plan-file decoder and the JSON methods, so that both say the same.
const (
	wantDuration = `want a duration such as "90s" or "5m"`
	wantStep     = "want a percent 0..100 (`- 10`) or a mapping with percent or weights"
)

// parseDuration reads a Go duration string; reason is empty when it is valid. A bare
// number is refused: "5" could mean seconds or minutes, and a pause is no place to guess.
func parseDuration(s string) (Duration, string) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return Duration{}, wantDuration
	}
	if d < 0 {
		return Duration{}, `want a duration ≥ 0 such as "90s" or "5m"`
	}
	return Duration{d}, ""
}

// MarshalJSON writes the duration as a Go duration string, the form the plan file uses.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Duration.String())
}

// UnmarshalJSON reads a Go duration string ("90s", "1h30m"); numbers and negative
// durations are errors.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("duration %s: %s", data, wantDuration)
	}
	v, reason := parseDuration(s)
	if reason != "" {
		return fmt.Errorf("duration %q: %s", s, reason)
	}
	*d = v
	return nil
}

// stepFields decodes a step's mapping form without recursing into Step.UnmarshalJSON.
type stepFields Step

// UnmarshalJSON reads a step as a bare integer (its percent to `to`) or as a mapping.
// Unknown keys are errors: a misspelt pause would otherwise silently fall back to
// spec.pause.
func (s *Step) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case string(data) == "null":
		return nil
	case len(data) > 0 && data[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var f stepFields
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("step: %w", err)
		}
		*s = Step(f)
		return nil
	}
	p, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return errors.New("step " + string(data) + ": " + wantStep)
	}
	*s = Step{Percent: &p}
	return nil
}
