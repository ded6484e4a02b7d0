package albproxy

import (
	"strings"
	"testing"
	"time"
)

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "example.org", false},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"api-?.example.com", "api-1.example.com", true},
		{"api-?.example.com", "api-12.example.com", false},
		{"api-?.example.com", "api-.example.com", false},
		{"/static/*", "/static/", true},
		{"/static/*", "/static/css/a.css", true},
		{"/static/*", "/static", false},
		{"/v?/*", "/v1/users", true},
		{"/v?/*", "/v12/users", false},
		{"*", "", true},
		{"*", "/anything", true},
		{"**a", "bbba", true},
		{"*a*b", "xaybzb", true},
		{"*a*b", "xaybz", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"?", "", false},
	}
	for _, tt := range tests {
		if got := wildcardMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParseMatcher(t *testing.T) {
	tests := []struct {
		in      string
		ok      []int
		notOK   []int
		wantErr bool
	}{
		{in: "200", ok: []int{200}, notOK: []int{201, 500}},
		{in: "200,202", ok: []int{200, 202}, notOK: []int{201}},
		{in: "200-399", ok: []int{200, 302, 399}, notOK: []int{400, 199}},
		{in: "500", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "300-200", wantErr: true},
	}
	for _, tt := range tests {
		m, err := parseMatcher(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseMatcher(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		for _, c := range tt.ok {
			if !m.match(c) {
				t.Errorf("matcher %q does not match %d", tt.in, c)
			}
		}
		for _, c := range tt.notOK {
			if m.match(c) {
				t.Errorf("matcher %q matches %d", tt.in, c)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	good := func() Config {
		return Config{
			LoadBalancers: []LoadBalancer{{ID: "lb", Listeners: []Listener{{
				ID: "l1", Addr: "127.0.0.1:0",
				Rules: []Rule{{ID: "r1", Priority: 1, Conditions: []Condition{{Field: FieldHostHeader, Values: []string{"a.test"}}},
					Action: forward("g1", 1)}},
				DefaultAction: forward("g1", 1, "g2", 0),
			}}}},
			TargetGroups: []TargetGroup{{ID: "g1", Targets: []string{"127.0.0.1:1"}}, {ID: "g2"}},
		}
	}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"valid", func(*Config) {}, ""},
		{"weight out of range", func(c *Config) { c.LoadBalancers[0].Listeners[0].DefaultAction.TargetGroups[0].Weight = 1000 },
			`listener l1: default action: target group "g1": weight 1000 not in 0-999`},
		{"unknown group", func(c *Config) { c.LoadBalancers[0].Listeners[0].Rules[0].Action = forward("nope", 1) },
			`rule r1 (priority 1): target group "nope" does not exist`},
		{"six groups", func(c *Config) {
			c.LoadBalancers[0].Listeners[0].DefaultAction = forward("g1", 1, "g1", 1, "g1", 1, "g1", 1, "g1", 1, "g1", 1)
		}, "6 target groups, at most 5"},
		{"duplicate priority", func(c *Config) {
			l := &c.LoadBalancers[0].Listeners[0]
			l.Rules = append(l.Rules, Rule{ID: "r2", Priority: 1, Conditions: l.Rules[0].Conditions, Action: forward("g1", 1)})
		}, "rule r2 (priority 1): priority in use"},
		{"unsupported condition", func(c *Config) {
			c.LoadBalancers[0].Listeners[0].Rules[0].Conditions[0].Field = "http-header"
		}, `condition field "http-header" not supported`},
		{"remote address", func(c *Config) { c.LoadBalancers[0].Listeners[0].Addr = "0.0.0.0:80" }, "not a loopback address"},
		{"bad target", func(c *Config) { c.TargetGroups[0].Targets = []string{"nohost"} }, `target group g1: target "nohost"`},
		{"timeout not below interval", func(c *Config) {
			c.TargetGroups[0].HealthCheck = HealthCheck{Interval: time.Second, Timeout: time.Second}
		}, "must be positive and less than the interval"},
		{"bad matcher", func(c *Config) { c.TargetGroups[0].HealthCheck.Matcher = "600" }, `matcher "600"`},
		{"stickiness without duration", func(c *Config) {
			c.LoadBalancers[0].Listeners[0].DefaultAction.Stickiness = GroupStickiness{Enabled: true}
		}, "stickiness duration 0s not in 1s-168h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.mutate(&c)
			err := c.validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestStickyCodec(t *testing.T) {
	c, other := newStickyCodec(), newStickyCodec()
	now := time.Now()
	v := c.seal("tg-blue", now.Add(time.Minute))
	if id, ok := c.open(v, now); !ok || id != "tg-blue" {
		t.Fatalf("open(seal) = %q, %v", id, ok)
	}
	if _, ok := c.open(v, now.Add(time.Minute)); ok {
		t.Error("expired cookie accepted")
	}
	if _, ok := other.open(v, now); ok {
		t.Error("cookie from another key accepted")
	}
	forged := strings.Replace(v, v[:4], "AAAA", 1)
	if _, ok := c.open(forged, now); ok {
		t.Error("tampered cookie accepted")
	}
}

func TestSeriesBuckets(t *testing.T) {
	s := newSeries(10 * time.Second)
	base := time.Unix(1_700_000_000, 0)
	for i := range 15 {
		s.record(base.Add(time.Duration(i)*time.Second+300*time.Millisecond),
			outcome{status: 200, target: "t", rt: time.Duration(i+1) * time.Millisecond, hasRT: true})
	}
	s.record(base.Add(14*time.Second), outcome{status: 503, fromELB: true})
	got := s.buckets(base, base.Add(time.Hour))
	if len(got) != 10 { // only the window's last 10 seconds are kept
		t.Fatalf("%d buckets, want 10", len(got))
	}
	if !got[0].Start.Equal(base.Add(5 * time.Second)) {
		t.Errorf("oldest bucket starts %v, want %v", got[0].Start, base.Add(5*time.Second))
	}
	last := got[len(got)-1]
	if last.RequestCount != 2 || last.HTTPCodeTarget2XX != 1 || last.HTTPCodeELB5XX() != 1 ||
		last.TargetResponseTimeCount != 1 || last.TargetResponseTimeMax != 15*time.Millisecond {
		t.Errorf("last bucket %+v", last)
	}
	// A from inside a second leaves that second out; to is exclusive.
	if got := s.buckets(base.Add(10*time.Second+time.Millisecond), base.Add(12*time.Second)); len(got) != 1 {
		t.Errorf("partial range: %d buckets, want 1", len(got))
	}
	c := s.counts()
	if c.Requests != 16 || c.Target2XX != 15 || c.ELB503 != 1 || c.PerTarget["t"] != 15 || c.TargetResponses != 15 {
		t.Errorf("counts %+v", c)
	}
}
