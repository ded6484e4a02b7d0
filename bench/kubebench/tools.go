package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The tools kubebench can run, as --tools names them, in the default order.
const (
	toolCrossfade         = "crossfade"
	toolExternalDNS       = "external-dns"
	toolExternalDNSEvents = "external-dns-events"
)

var toolNames = []string{toolCrossfade, toolExternalDNS, toolExternalDNSEvents}

// ownerID is every tool's --txt-owner-id: the same scheme for all, each on its own zone.
const ownerID = "kubebench"

// zoneSuffix is the parent of every tool's zone: <tool>.kubebench.test.
const zoneSuffix = "kubebench.test"

type toolKind int

const (
	kindCrossfade toolKind = iota
	kindExternalDNS
)

// tool is one controller configuration under test.
type tool struct {
	name  string // as --tools names it
	title string // the report's column header
	kind  toolKind
	// events adds external-dns's --events (crossfade always reconciles on events).
	events bool
	// samples is how many change-to-answer samples it gets.
	samples int
	// cycle is the period of what the tool does on its own schedule, which a change may
	// have to wait for: external-dns syncs every --interval (1 m), and with --events 5 s
	// after an event (hard-coded in its controller's ScheduleRunOnce, v0.21.0). crossfade's
	// debounce starts at the change, so it has none (its --interval reconcile takes about
	// 0.1 s of every minute).
	cycle time.Duration
}

// zone is the tool's fresh zone (no final dot).
func (t tool) zone() string { return t.name + "." + zoneSuffix }

// selectTools returns the tools --tools asks for, with their sample counts.
func (o options) selectTools() ([]tool, error) {
	var out []tool
	for _, name := range o.tools {
		switch name {
		case toolCrossfade:
			out = append(out, tool{name: name, title: "crossfade", kind: kindCrossfade, samples: o.samples})
		case toolExternalDNS:
			out = append(out, tool{name: name, title: "external-dns (default)", kind: kindExternalDNS, samples: o.intervalSamples, cycle: time.Minute})
		case toolExternalDNSEvents:
			out = append(out, tool{name: name, title: "external-dns --events", kind: kindExternalDNS, events: true, samples: o.samples, cycle: 5 * time.Second})
		default:
			return nil, fmt.Errorf("unknown tool %q", name)
		}
	}
	if slices.ContainsFunc(out, func(t tool) bool { return t.kind == kindExternalDNS }) {
		if fi, err := os.Stat(o.externalDNS); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("--external-dns %s: not an executable: `scripts/deps.sh test` builds external-dns v0.21.0 there, or: cd $(mktemp -d) && GOWORK=off GOFLAGS=-mod=mod GOBIN=%s go install sigs.k8s.io/external-dns@v0.21.0",
				o.externalDNS, filepath.Dir(o.externalDNS))
		}
	}
	return out, nil
}

// command returns the tool's command line and the environment it adds. Both tools get
// the same settings where they share them: one source (service), the TXT registry with
// the same owner id, the tool's zone as the domain filter, sync policy, AWS provider; every
// other setting is the tool's default, as a user would run it. Neither listens beyond
// loopback: metrics on 127.0.0.1, a free port.
func (t tool) command(o options, kubeconfig, apiURL string) (args, env []string) {
	env = []string{
		"AWS_ACCESS_KEY_ID=kubebench", "AWS_SECRET_ACCESS_KEY=kubebench", "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
		// How external-dns's aws-sdk-go-v2 reaches the sandbox.
		"AWS_ENDPOINT_URL=" + apiURL,
	}
	common := []string{"--kubeconfig", kubeconfig, "--source", "service", "--provider", "aws", "--registry", "txt",
		"--txt-owner-id", ownerID, "--domain-filter", t.zone(), "--policy", "sync",
		"--metrics-address", "127.0.0.1:0", "--log-format", "json", "--log-level", "info"}
	switch t.kind {
	case kindCrossfade:
		args = append([]string{o.crossfade, "controller", "--aws-endpoint", apiURL, "--aws-region", "us-east-1",
			"--leader-election-namespace", namespace}, common...)
	default:
		args = append([]string{o.externalDNS}, common...)
		if t.events {
			args = append(args, "--events")
		}
	}
	return args, env
}

// crossfadePackage is the command kubebench builds when --crossfade is not given. By
// import path, so the build works from anywhere inside the module.
const crossfadePackage = "github.com/crossfade-io/crossfade/cmd/crossfade"

// buildCrossfade builds crossfadePackage into dir.
func buildCrossfade(ctx context.Context, dir string, log *slog.Logger) (string, error) {
	bin := filepath.Join(dir, "crossfade")
	log.Info("building crossfade", "out", bin)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, crossfadePackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s (run kubebench inside the crossfade module, or pass --crossfade): %w\n%s", crossfadePackage, err, out)
	}
	return bin, nil
}

// version names the tool's build for the report, "" when it cannot tell: for crossfade
// the checkout's commit, for external-dns the module version its binary was built from.
func (t tool) version(ctx context.Context, o options) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if t.kind == kindCrossfade {
		rev, err := output(ctx, "git", "rev-parse", "--short", "HEAD")
		if err != nil {
			return ""
		}
		if dirty, err := output(ctx, "git", "status", "--porcelain"); err == nil && dirty != "" {
			rev += " + uncommitted changes"
		}
		return "crossfade " + rev
	}
	out, err := output(ctx, "go", "version", "-m", o.externalDNS)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" {
			return "external-dns " + f[2]
		}
	}
	return ""
}
