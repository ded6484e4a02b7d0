package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
)

// The albproxy runs in a process of its own, this program started again with these
// variables set, as it runs inside `crossfade sandbox` apart from the targets: so it does
// not share a Go runtime (scheduler, GC) with the backends, and it is measured as nginx
// is, one process tree per proxy.
const (
	childEnv       = "ALBBENCH_CHILD" // its value names the role
	childALBProxy  = "albproxy"
	childConfigEnv = "ALBBENCH_ALBPROXY_CONFIG" // path of the albproxy.Config as JSON
)

// The names the albproxy's Config gives the load balancer, its listener and its groups.
const (
	lbID       = "app/albbench/0000000000000001"
	listenerID = "listener/app/albbench/0000000000000001/0000000000000001"
)

// readyTimeout bounds a proxy's start: binding, and for the albproxy its targets' first
// health checks.
const readyTimeout = 30 * time.Second

// albConfig is the albproxy's whole state: one load balancer, one listener on a free
// loopback port whose default action forwards by weight to every group (ALB weights as a
// cutover step writes them, 50/50 for two groups), each group the backends of that name
// with ALB's default health check on healthPath.
func albConfig(backends []*backend) albproxy.Config {
	var cfg albproxy.Config
	var action albproxy.ForwardAction
	for _, b := range backends {
		i := slices.IndexFunc(cfg.TargetGroups, func(g albproxy.TargetGroup) bool { return g.ID == groupID(b.group) })
		if i < 0 {
			cfg.TargetGroups = append(cfg.TargetGroups, albproxy.TargetGroup{
				ID:          groupID(b.group),
				HealthCheck: albproxy.HealthCheck{Path: healthPath},
			})
			i = len(cfg.TargetGroups) - 1
		}
		cfg.TargetGroups[i].Targets = append(cfg.TargetGroups[i].Targets, b.addr())
	}
	for _, g := range cfg.TargetGroups {
		action.TargetGroups = append(action.TargetGroups, albproxy.WeightedTargetGroup{
			TargetGroupID: g.ID, Weight: 100 / len(cfg.TargetGroups),
		})
	}
	cfg.LoadBalancers = []albproxy.LoadBalancer{{
		ID:        lbID,
		Listeners: []albproxy.Listener{{ID: listenerID, Addr: "127.0.0.1:0", DefaultAction: action}},
	}}
	return cfg
}

// groupID is the target group's ID as CloudWatch's TargetGroup dimension spells it.
func groupID(name string) string { return "targetgroup/" + name + "/0000000000000001" }

// albChild is the albproxy's process, seen from this one.
type albChild struct {
	*child.Process
	addr  string
	stdin *os.File // closing it tells the child to go, should signals fail
}

// startALBProxy starts this program again as the albproxy with cfg, and waits until it
// says that every target is healthy and where its listener is.
func startALBProxy(ctx context.Context, dir string, cfg albproxy.Config, log *slog.Logger) (*albChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("albproxy: find this program to start it again: %w", err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("albproxy: config: %w", err)
	}
	cfgPath := filepath.Join(dir, "albproxy.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return nil, fmt.Errorf("albproxy: config: %w", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("albproxy: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("albproxy: pipe: %w", err)
	}
	c, err := startChild("albproxy", filepath.Join(dir, "albproxy.log"), inR, outW,
		[]string{childEnv + "=" + childALBProxy, childConfigEnv + "=" + cfgPath}, self)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	a := &albChild{Process: c, stdin: inW}

	lines := make(chan string, 1)
	go func() {
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case line := <-lines:
		addr, ok := strings.CutPrefix(line, "ready ")
		if !ok {
			a.stop(log)
			return nil, fmt.Errorf("albproxy: unexpected first line %q; log tail:\n%s", line, c.Tail(logTailLines))
		}
		a.addr = addr
		return a, nil
	case <-c.Done():
		a.stop(log)
		return nil, c.ExitError()
	case <-timer.C:
		a.stop(log)
		return nil, fmt.Errorf("albproxy: not ready within %s; log tail:\n%s", readyTimeout, c.Tail(logTailLines))
	case <-ctx.Done():
		a.stop(log)
		return nil, context.Cause(ctx)
	}
}

// stop ends the albproxy's process.
func (a *albChild) stop(log *slog.Logger) {
	stopChild(a.Process, log)
	a.stdin.Close()
}

// serveALBProxy is the albproxy's process: it reads the Config, serves it until SIGTERM,
// SIGINT or the end of its stdin, and prints "ready <listener address>" once every target
// has passed a health check. It returns the exit code.
func serveALBProxy() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := runALBProxy(log); err != nil {
		log.Error("albproxy", "err", err)
		return 1
	}
	return 0
}

func runALBProxy(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent holds the other end while it wants us
		stop()
	}()

	b, err := os.ReadFile(os.Getenv(childConfigEnv))
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var cfg albproxy.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("config %s: %w", os.Getenv(childConfigEnv), err)
	}
	p := albproxy.New(albproxy.Options{Logger: log})
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer p.Close()
	if err := p.Apply(cfg); err != nil {
		return err
	}
	if err := waitHealthy(ctx, p, cfg); err != nil {
		return err
	}
	fmt.Printf("ready %s\n", p.Addr(listenerID))
	<-ctx.Done()
	return p.Close()
}

// waitHealthy waits until every target of every group is healthy, so that the measured
// requests go round-robin over healthy targets as they would in steady state, not through
// the fail-open path.
func waitHealthy(ctx context.Context, p *albproxy.Proxy, cfg albproxy.Config) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		var waiting []string
		for _, g := range cfg.TargetGroups {
			h := p.TargetHealth(g.ID)
			for _, t := range g.Targets {
				if h[t].State != albproxy.StateHealthy {
					waiting = append(waiting, fmt.Sprintf("%s %s: %s %s", g.ID, t, h[t].State, h[t].Reason))
				}
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("targets not healthy after %s: %s", readyTimeout, strings.Join(waiting, "; "))
		}
		select {
		case <-ctx.Done():
			return errors.New("stopped while waiting for healthy targets")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
