package loopback

import "testing"

func TestListen(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.9.9.9", true},
		{"::1", true},
		{"localhost", true},
		{"", false}, // every interface
		{"0.0.0.0", false},
		{"::", false},
		{"192.0.2.1", false},
		{"example.com", false},
		{"app.localhost", false}, // a listen address resolves it through the system, not a browser
	} {
		if got := Listen(tc.host); got != tc.want {
			t.Errorf("Listen(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestName(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.255.0.7", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"localhost", true},
		{"localhost.", true},
		{"LocalHost", true},
		{"app.localhost", true},
		{"app.localhost.", true},
		{"", false},
		{".localhost", false},
		{"localhost..", false},
		{"0.0.0.0", false},
		{"192.0.2.1", false},
		{"::", false},
		{"evil.example", false},
		{"127.0.0.1.nip.io", false},
		{"localhost.evil.example", false},
		{"evillocalhost", false},
	} {
		if got := Name(tc.host); got != tc.want {
			t.Errorf("Name(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestHost(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1:10080", "127.0.0.1"},
		{"[::1]:10080", "::1"},
		{"[::1]", "::1"},
		{"LOCALHOST:80", "localhost"},
		{"localhost.", "localhost."},
		{"evil.example", "evil.example"},
		{"", ""},
	} {
		if got := Host(tc.in); got != tc.want {
			t.Errorf("Host(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
