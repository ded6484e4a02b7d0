package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
)

// startupTimeout bounds how long a server may take to answer its first probe.
const startupTimeout = 30 * time.Second

// buildCrossfade builds ./cmd/crossfade of the module the benchmark runs in.
func buildCrossfade(ctx context.Context, dir string, log *slog.Logger) (string, error) {
	bin := filepath.Join(dir, "crossfade")
	log.Info("building crossfade", "out", bin)
	if _, err := output(ctx, "go", "build", "-o", bin, "github.com/crossfade-io/crossfade/cmd/crossfade"); err != nil {
		return "", fmt.Errorf("build crossfade: %w", err)
	}
	return bin, nil
}

// sandbox is a running `crossfade sandbox` child.
type sandbox struct {
	*child.Process
	apiURL  string
	dnsAddr string
}

// startSandbox starts a sandbox on free loopback ports and waits until its API is healthy.
// name tells the sandboxes of one run apart in logs and errors; its log file is name.log.
func startSandbox(ctx context.Context, binary, dir, name string, log *slog.Logger) (*sandbox, error) {
	apiPort, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	dnsPort, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	apiAddr := fmt.Sprintf("127.0.0.1:%d", apiPort)
	dnsAddr := fmt.Sprintf("127.0.0.1:%d", dnsPort)
	c, err := startChild(name, filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".log"),
		binary, "sandbox", "--api", apiAddr, "--dns", dnsAddr, "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	sb := &sandbox{Process: c, apiURL: "http://" + apiAddr, dnsAddr: dnsAddr}
	if err := waitHealthy(ctx, c, sb.apiURL+"/_sandbox/healthz"); err != nil {
		stopChild(c, log)
		return nil, err
	}
	log.Info("sandbox ready", "name", name, "api", sb.apiURL, "dns", dnsAddr)
	return sb, nil
}

// waitHealthy polls url until it answers 200 "ok", the child exits or startupTimeout passes.
func waitHealthy(ctx context.Context, c *child.Process, url string) error {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if lastErr = probeHealth(ctx, client, url); lastErr == nil {
			return nil
		}
		select {
		case <-c.Done():
			return c.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s: not healthy at %s: %w (last probe: %v)", c.Name(), url, ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

func probeHealth(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("status %d, body %q", resp.StatusCode, body)
	}
	return nil
}
