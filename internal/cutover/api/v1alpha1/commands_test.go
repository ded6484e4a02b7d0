package v1alpha1

import (
	"strings"
	"testing"
)

// TestParseCommandRequest: the commands the annotation may carry decode, and every
// malformed one is refused naming the annotation and the field.
func TestParseCommandRequest(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  CommandRequest
		err   string
	}{
		{value: `{"command":"promote"}`, want: CommandRequest{Command: RequestPromote}},
		{value: `{"command":"promote","skipGates":true,"id":"k-1a2b","by":"alice"}`, want: CommandRequest{Command: RequestPromote, SkipGates: true, ID: "k-1a2b", By: "alice"}},
		{value: `{"command":"abort"}`, want: CommandRequest{Command: RequestAbort}},
		{value: `{"command":"release","force":true}`, want: CommandRequest{Command: RequestRelease, Force: true}},
		{value: `promote`, err: "want JSON"},
		{value: `{"command":"pause"}`, err: "command: \"pause\" is set through spec.paused"},
		{value: `{"command":"resume","by":"alice"}`, want: CommandRequest{Command: RequestResume, By: "alice"}},
		{value: `{}`, err: "command: missing"},
		{value: `{"command":"rollback"}`, err: `command: "rollback"`},
		{value: `{"command":"abort","skipGates":true}`, err: "skipGates: only a promote"},
		{value: `{"command":"promote","force":true}`, err: "force: only a release"},
		{value: `{"command":"abort","id":"../x"}`, err: "id: \"../x\""},
		{value: `{"command":"abort","when":"now"}`, err: "unknown field"},
		{value: `{"command":"abort"}{"command":"promote"}`, err: "more than one"},
	} {
		got, err := ParseCommandRequest(tc.value)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), CommandAnnotation) {
				t.Errorf("ParseCommandRequest(%s) = %+v, %v; want an error naming %s and containing %q", tc.value, got, err, CommandAnnotation, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCommandRequest(%s) = %+v, %v; want %+v", tc.value, got, err, tc.want)
		}
	}
}
