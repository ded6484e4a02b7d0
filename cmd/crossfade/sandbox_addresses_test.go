package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cli"
)

// syncBuffer is a bytes.Buffer the command writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSandboxTargetAddressesFlag runs `crossfade sandbox --target-addresses …` in process:
// the mapping it serves at GET /_sandbox/addresses is the flag's, from every value given;
// a bad entry, or a target mapped twice across values, is a usage error naming it.
func TestSandboxTargetAddressesFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := newRootCmd()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetArgs([]string{"--log-level=error", "sandbox", "--api=127.0.0.1:0", "--dns=127.0.0.1:0",
		"--target-addresses=192.0.2.11:8080=127.0.0.1:18011,192.0.2.12:8080=127.0.0.1:18012",
		"--target-addresses=192.0.2.13:80=[::1]:18013"})
	done := make(chan int, 1)
	go func() { done <- cli.Execute(ctx, root, errOut) }()

	api := regexp.MustCompile(`route53 api: (http://\S+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; {
		if m := api.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("sandbox exited %d: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox did not start within 10s: %s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(url + "/_sandbox/addresses")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"192.0.2.11:8080":"127.0.0.1:18011","192.0.2.12:8080":"127.0.0.1:18012","192.0.2.13:80":"[::1]:18013"}` + "\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("GET /_sandbox/addresses: %d %s, want %s", resp.StatusCode, body, want)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("sandbox exited %d after its context ended: %s", code, errOut.String())
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target-addresses=192.0.2.11:8080=10.0.0.1:80"}, `--target-addresses "192.0.2.11:8080=10.0.0.1:80": addresses: "192.0.2.11:8080": value "10.0.0.1:80" is not a loopback address`},
		{[]string{"--target-addresses=192.0.2.11:8080"}, `--target-addresses "192.0.2.11:8080": addresses: entry "192.0.2.11:8080": want IP:port=loopbackIP:port`},
		{[]string{"--target-addresses=192.0.2.11:8080=127.0.0.1:1", "--target-addresses=192.0.2.11:8080=127.0.0.1:2"}, `--target-addresses: addresses: entry "192.0.2.11:8080=127.0.0.1:2": 192.0.2.11:8080 is mapped twice`},
	} {
		code, _, stderr := runLine(t, append([]string{"sandbox"}, tc.args...))
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("sandbox %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, cli.ExitUsage, tc.want)
		}
	}
}
