package faults

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		op       string
		wantCode string
		delay    time.Duration
		after    AfterCommit
	}{
		{"nothing", Config{}, "GetChange", "", 0, Respond},
		{"always throttled", Config{ThrottleRate: 1}, "GetChange", "Throttling", 0, Respond},
		{"prior request", Config{PriorRequestRate: 1}, "ChangeResourceRecordSets", "PriorRequestNotComplete", 0, Respond},
		{"server error", Config{ServerErrorRate: 1}, "GetChange", "InternalFailure", 0, Respond},
		{"latency on all", Config{Latency: Duration(time.Second)}, "GetChange", "", time.Second, Respond},
		{"other operation untouched", Config{ThrottleRate: 1, Operations: []string{"GetChange"}}, "ListHostedZones", "", 0, Respond},
		{"named operation hit", Config{ThrottleRate: 1, Operations: []string{"GetChange"}}, "GetChange", "Throttling", 0, Respond},
		{"commit then fail", Config{CommitThenFailRate: 1}, "ChangeResourceRecordSets", "", 0, FailAfterCommit},
		{"commit then drop", Config{CommitThenDropRate: 1}, "ChangeResourceRecordSets", "", 0, DropAfterCommit},
		{"commit then drop, other operation", Config{CommitThenDropRate: 1, Operations: []string{"ChangeResourceRecordSets"}}, "GetChange", "", 0, Respond},
		{"an error answer comes first", Config{ThrottleRate: 1, CommitThenFailRate: 1}, "ChangeResourceRecordSets", "Throttling", 0, Respond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := in.Decide(tt.op)
			got := ""
			if d.Fault != nil {
				got = d.Fault.Code
			}
			if got != tt.wantCode || d.Delay != tt.delay || d.After != tt.after {
				t.Fatalf("Decide(%s) = %q/%v/%v, want %q/%v/%v", tt.op, got, d.Delay, d.After, tt.wantCode, tt.delay, tt.after)
			}
		})
	}
}

func TestRateCap(t *testing.T) {
	in, err := New(Config{RequestsPerSecond: 5, Burst: 5})
	if err != nil {
		t.Fatal(err)
	}
	throttled := 0
	for range 20 {
		if d := in.Decide("GetChange"); d.Fault != nil {
			throttled++
		}
	}
	// 20 back-to-back requests against a bucket of 5 refilling at 5/s: 14 or 15 throttled.
	if throttled < 14 || throttled > 15 {
		t.Fatalf("throttled %d of 20 at 5/s burst 5, want 14-15", throttled)
	}
}

func TestValidateNamesField(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{ThrottleRate: 1.5}, "throttleRate"},
		{Config{ServerErrorRate: -1}, "serverErrorRate"},
		{Config{CommitThenFailRate: 1.1}, "commitThenFailRate"},
		{Config{CommitThenDropRate: -0.5}, "commitThenDropRate"},
		{Config{RequestsPerSecond: -2}, "requestsPerSecond"},
		{Config{Latency: Duration(-time.Second)}, "latency"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	var c Config
	if err := json.Unmarshal([]byte(`{"latency":"250ms","throttleRate":0.5,"commitThenFailRate":0.25,"commitThenDropRate":0.125}`), &c); err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Latency) != 250*time.Millisecond || c.ThrottleRate != 0.5 || c.CommitThenFailRate != 0.25 || c.CommitThenDropRate != 0.125 {
		t.Fatalf("decoded %+v", c)
	}
	if err := json.Unmarshal([]byte(`{"latency":"soon"}`), &c); err == nil || !strings.Contains(err.Error(), "latency") {
		t.Fatalf("bad latency: err = %v", err)
	}
}
