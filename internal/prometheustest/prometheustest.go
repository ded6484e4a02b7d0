// Package prometheustest runs the real Prometheus (Debian's /usr/bin/prometheus, installed
// by scripts/deps.sh test) for tests: on a free loopback port, scraping one target every
// second, stopped when the test ends.
package prometheustest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// attempts is how often Start tries another port: a port found free may be taken by
	// another process before Prometheus binds it, and then it exits at once.
	attempts = 3
	// readyTimeout bounds the wait for /-/ready: a failure bound, it is ready in about a
	// second.
	readyTimeout = 30 * time.Second
	poll         = 100 * time.Millisecond
)

// Server is a running Prometheus owned by one test.
type Server struct {
	// URL is its HTTP API, http://127.0.0.1:PORT.
	URL string
	// Log is the file holding its output.
	Log string

	stop func()
}

// Stop kills it and waits for it to exit; the test's cleanup does the same.
func (s *Server) Stop() { s.stop() }

// Start runs Prometheus scraping target (host:port) every second and returns it once
// /-/ready answers. A missing binary fails the test, saying how to install it.
func Start(t testing.TB, target string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (%v): run scripts/deps.sh test, or apt-get install prometheus", err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: test\n    static_configs: [{targets: [%q]}]\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := range attempts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		logPath := filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt))
		logFile, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin,
			"--config.file="+cfg,
			"--storage.tsdb.path="+filepath.Join(dir, fmt.Sprintf("data-%d", attempt)),
			"--web.listen-address="+addr,
			"--web.console.templates="+dir, "--web.console.libraries="+dir,
			"--log.level=warn")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			_ = logFile.Close()
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); _ = logFile.Close(); close(exited) }()
		var once sync.Once
		s := &Server{URL: "http://" + addr, Log: logPath, stop: func() {
			once.Do(func() { _ = cmd.Process.Kill(); <-exited })
		}}
		t.Cleanup(s.stop)
		if s.waitReady(t, exited) {
			return s
		}
		s.stop()
	}
	t.Fatalf("prometheus did not start on a free port in %d tries", attempts)
	return nil
}

// waitReady polls /-/ready; false if the process exits first.
func (s *Server) waitReady(t testing.TB, exited <-chan struct{}) bool {
	t.Helper()
	for deadline := time.Now().Add(readyTimeout); time.Now().Before(deadline); {
		select {
		case <-exited:
			out, _ := os.ReadFile(s.Log)
			t.Logf("prometheus exited before ready:\n%s", out)
			return false
		case <-time.After(poll):
		}
		if resp, err := http.Get(s.URL + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
	}
	out, _ := os.ReadFile(s.Log)
	t.Fatalf("prometheus at %s not ready in %s:\n%s", s.URL, readyTimeout, out)
	return false
}

// WaitScraped waits until the target has been scraped n times within the last n seconds,
// so that a rate or increase over that range has the samples it needs.
func (s *Server) WaitScraped(t testing.TB, n int) {
	t.Helper()
	q := url.QueryEscape(fmt.Sprintf("count_over_time(up[%ds]) >= %d", n, n))
	for deadline := time.Now().Add(readyTimeout); time.Now().Before(deadline); time.Sleep(poll) {
		resp, err := http.Get(s.URL + "/api/v1/query?query=" + q)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"value"`) {
			return
		}
	}
	out, _ := os.ReadFile(s.Log)
	t.Fatalf("prometheus at %s did not scrape its target %d times in %s:\n%s", s.URL, n, readyTimeout, out)
}
