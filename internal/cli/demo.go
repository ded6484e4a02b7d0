package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/demo"
)

// demoTTL is the TTL of the DNS demo's records (internal/demo's ttl): a cutover refuses a
// pause shorter than the TTL it must hold for.
const demoTTL = time.Second

// DemoOptions are `crossfade demo`'s flags.
type DemoOptions struct {
	cfg demo.Config
	// Kube runs each cluster as a real kube-apiserver (--kube): with --lever dns each with
	// its own crossfade controller, with --lever alb each with its own AWS Load Balancer
	// Controller when it is built.
	Kube bool
}

// AddFlags defines the flags on c and declares their checks in fc.
func (o *DemoOptions) AddFlags(c *cobra.Command, fc *FlagChecks) {
	cfg := &o.cfg
	f := c.Flags()
	f.StringVar(&cfg.UI, "ui", "127.0.0.1:0", "dashboard listen address (loopback only)")
	f.BoolVar(&cfg.Keep, "keep", false, "leave everything running after the cutover, until Ctrl-C, and print aws and dig commands that explore the zone (--lever alb: aws and curl commands that explore the ALB)")
	f.DurationVar(&cfg.Pause, "pause", 5*time.Second, "how long each step holds (the TTL is 1s)")
	f.IntVar(&cfg.Clients, "clients", 10, "simulated clients, each with its own DNS cache (--lever dns) or its own connection to the ALB (--lever alb)")
	f.DurationVar(&cfg.Interval, "interval", 100*time.Millisecond, "time between one client's requests")
	// No back quotes in the usage: pflag would show their text as the flag's value name.
	f.BoolVar(&o.Kube, "kube", false, "run each cluster as a real kube-apiserver (needs the binaries 'make test' builds): with --lever dns its own crossfade controller publishes from a Service; with --lever alb its own AWS Load Balancer Controller registers its pods through a TargetGroupBinding")
	f.StringVar(&cfg.Lever, "lever", demo.LeverDNS, "the lever the cutover pulls: dns (Route 53 weighted records) or alb (an ALB listener rule's target-group weights: no DNS change)")
	fc.Want(f, "ui", LoopbackAddr)
	fc.Want(f, "pause", PositiveDuration)
	fc.Want(f, "clients", IntRange(1, -1))
	fc.Want(f, "interval", PositiveDuration)
	fc.Want(f, "lever", OneOf(demo.LeverDNS, demo.LeverALB))
	fc.Check(c, func() error {
		if cfg.Lever != demo.LeverDNS {
			return nil
		}
		// A step must hold for the records' TTL (the cutover refuses a shorter pause).
		if cfg.Pause < demoTTL {
			return fmt.Errorf("--pause %q: want %s or more with --lever %s, the records' TTL", cfg.Pause, demoTTL, demo.LeverDNS)
		}
		return nil
	})
}

// Config is the demo's configuration as the flags ask for it; the caller sets what is
// not a flag (logger, output, progress, the binary --kube runs).
func (o *DemoOptions) Config() demo.Config { return o.cfg }

// NewDemoCommand is `crossfade demo` as its users see it: usage, help, flags (into o)
// and their checks (into fc). What it runs (RunE) is the caller's.
func NewDemoCommand(o *DemoOptions, fc *FlagChecks) *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run a real cutover between two simulated clusters under real traffic, with the live dashboard (--lever dns or alb)",
		Long: `demo starts the sandbox (Route 53 API and DNS on loopback), two simulated clusters,
blue (app v1) and green (app v2), each publishing its member of app.demo.crossfade.test from
its own manifests, clients that resolve the name like caching resolvers and send real
requests, and a gated cutover 0 → 10 → 50 → 100 % from blue to green. It prints the
dashboard's URL, the report and where the traffic went, and exits 0 when every step
passed, the final split is 0/100 and no request failed.

With --kube each cluster is a real etcd + kube-apiserver holding the app's LoadBalancer
Service, and its own 'crossfade controller' (this binary, owner id = cluster id)
publishes the cluster's member from that Service; the cutover then runs over what the
controllers published, and they hold its weights rather than revert them. It needs the
binaries 'make test' (scripts/deps.sh test) builds into
${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin; plain demo needs nothing but Go.

With --lever alb the same two clusters sit behind one sandbox ALB (ELBv2 API, a real
weighted HTTP proxy behind its listener, CloudWatch metrics from its counts): a target
group per cluster, into which each cluster registers its own two pods; a listener rule
for app.demo.crossfade.test forwarding to both groups by weight; clients that send every
request to the listener. The cutover moves the rule's and the listener's weights 0 → 10
→ 50 → 100 %, gated on target health and on CloudWatch's request counts per group, and
changes no DNS record. The dashboard shows the weights, the request share per group (as
the clients saw it and as CloudWatch counted it) and each group's target health.

With --lever alb --kube each cluster is a real etcd + kube-apiserver holding the app's
Service, two Pods at TEST-NET-1 addresses (192.0.2.x, which the sandbox maps to the
pods' loopback backends and never dials) and their EndpointSlice. When the AWS Load
Balancer Controller is built ('make test', or scripts/deps.sh test) each cluster runs
its own (its own --cluster-name) with a TargetGroupBinding binding its Service to its
target group, and the controllers register the targets; without it the demo's own
registrar stands in and says so. The cutover runs as above.`,
		Args: cobra.NoArgs,
	}
	o.AddFlags(c, fc)
	return c
}
