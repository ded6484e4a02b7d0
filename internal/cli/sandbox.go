package cli

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// SandboxOptions are `crossfade sandbox`'s flags.
type SandboxOptions struct {
	cfg     sandbox.Config
	latency time.Duration
}

// AddFlags defines the flags on c and declares their checks in fc.
func (o *SandboxOptions) AddFlags(c *cobra.Command, fc *FlagChecks) {
	cfg := &o.cfg
	f := c.Flags()
	f.StringVar(&cfg.APIAddr, "api", sandbox.DefaultAPIAddr, "listen address of the Route 53, ELBv2, CloudWatch and Cloud Map APIs, /metrics and /_sandbox/")
	f.StringVar(&cfg.DNSAddr, "dns", sandbox.DefaultDNSAddr, "listen address of the DNS server (UDP and TCP)")
	f.StringVar(&cfg.StatePath, "state", "", "bbolt file that keeps zones, the ELBv2 and the Cloud Map state across restarts (default: memory only)")
	f.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow non-loopback listen addresses and API requests addressed to any host name (the API has no authentication; requests from web pages stay refused)")
	f.DurationVar(&cfg.ChangeDelay, "change-delay", 0, "how long GetChange reports PENDING before INSYNC, and a Cloud Map operation PENDING before its result")
	f.DurationVar(&cfg.CloudMapHealthDelay, "cloudmap-health-delay", 0, "how long Cloud Map waits before UpdateInstanceCustomHealthStatus takes effect (AWS: about 30s)")
	f.Float64Var(&cfg.Faults.ThrottleRate, "throttle-rate", 0, "fraction of API calls answered Throttling: Rate exceeded")
	f.Float64Var(&cfg.Faults.PriorRequestRate, "prior-request-rate", 0, "fraction of API calls answered PriorRequestNotComplete")
	f.Float64Var(&cfg.Faults.ServerErrorRate, "server-error-rate", 0, "fraction of API calls answered HTTP 500")
	f.Float64Var(&cfg.Faults.CommitThenFailRate, "commit-then-fail-rate", 0, "fraction of API calls served (a change batch commits) and then answered HTTP 500: a lost response")
	f.Float64Var(&cfg.Faults.CommitThenDropRate, "commit-then-drop-rate", 0, "fraction of API calls served (a change batch commits) and then cut off by closing the connection")
	f.DurationVar(&o.latency, "latency", 0, "delay added to API calls")
	f.Float64Var(&cfg.Faults.LatencyRate, "latency-rate", 0, "fraction of API calls delayed by --latency (0: all)")
	f.Float64Var(&cfg.Faults.RequestsPerSecond, "rate-limit", 0, "cap on API requests per second, as Route 53 caps an account (5); 0: none")
	f.IntVar(&cfg.Faults.Burst, "rate-burst", 1, "token bucket size for --rate-limit")
	f.StringSliceVar(&cfg.Faults.Operations, "fault-operations", nil, "limit faults to these operations (default: all)")
	for _, name := range []string{"api", "dns"} {
		fc.Want(f, name, ListenAddr)
	}
	for _, name := range []string{"change-delay", "cloudmap-health-delay", "latency"} {
		fc.Want(f, name, DurationAtLeast(0, ""))
	}
	for _, name := range []string{"throttle-rate", "prior-request-rate", "server-error-rate", "commit-then-fail-rate", "commit-then-drop-rate", "latency-rate"} {
		fc.Want(f, name, Ratio)
	}
	fc.Want(f, "rate-limit", NonNegativeNumber)
	fc.Want(f, "rate-burst", IntRange(1, -1))
	fc.Want(f, "fault-operations", FaultOperation)
	// The API has no authentication: another machine reaches it only when asked for.
	fc.Check(c, func() error {
		if cfg.AllowRemote {
			return nil
		}
		for _, a := range []struct{ flag, addr string }{{"api", cfg.APIAddr}, {"dns", cfg.DNSAddr}} {
			if LoopbackAddr(a.addr) != nil {
				return fmt.Errorf("--%s %q: not a loopback address; the sandbox has no authentication, so pass --allow-remote to listen there on purpose", a.flag, a.addr)
			}
		}
		return nil
	})
}

// Config is the sandbox configuration the flags ask for, logging to log.
func (o *SandboxOptions) Config(log *slog.Logger) sandbox.Config {
	cfg := o.cfg
	cfg.Logger = log
	cfg.Faults.Latency = faults.Duration(o.latency)
	return cfg
}

// NewSandboxCommand is `crossfade sandbox` as its users see it: usage, help, flags (into o)
// and their checks (into fc). What it runs (RunE) is the caller's.
func NewSandboxCommand(o *SandboxOptions, fc *FlagChecks) *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Serve local Route 53, ELBv2, CloudWatch and Cloud Map APIs, an authoritative DNS server and a weighted ALB proxy",
		Long: `sandbox serves, on loopback, the Route 53 REST API (2013-04-01) that the AWS SDKs and
CLI speak, and an authoritative DNS server (UDP and TCP) that answers from the same records
with Route 53's weighted, failover and alias semantics.

On the same address it serves the ELBv2 API (2015-12-01: load balancers, target groups,
targets, listeners, rules with weighted forward actions) and CloudWatch's GetMetricData and
GetMetricStatistics for AWS/ApplicationELB. Every ELBv2 listener is a real HTTP reverse
proxy on its own free loopback port (GET /_sandbox/elb/listeners maps listener ARNs to
127.0.0.1:port): it routes by the rules and weights (a change is live when the API call
answers), health checks the targets for DescribeTargetHealth, drains deregistered targets,
and counts the requests that CloudWatch reports. An ALB's DNS name answers 127.0.0.1 to
Route 53 aliases; clients still need the listener's port. A Network Load Balancer's TCP
listeners are weighted TCP proxies the same way: each new connection follows the weights,
open ones stay where they are (AWS/NetworkELB flow counts in CloudWatch, by load balancer
only, as AWS publishes them: an NLB's split between target groups is not in CloudWatch).

Targets registered with non-loopback addresses (pods' TEST-NET-1 192.0.2.x) are reached only
through --target-addresses / PUT /_sandbox/addresses, which map each IP:port to a loopback
backend: an unmapped target is unhealthy ("no route in the sandbox") and never dialled.
The EC2 calls the AWS Load Balancer Controller makes for a TargetGroupBinding (DescribeVpcs,
DescribeSubnets, DescribeSecurityGroups, DescribeNetworkInterfaces, DescribeInstances,
Authorize/RevokeSecurityGroupIngress) are served too, on what PUT /_sandbox/ec2 declares.

It also serves the Cloud Map API (servicediscovery 2017-03-14): HTTP, private and public DNS
namespaces, services, instances with custom attributes and custom health, DiscoverInstances
and the operations. A DNS namespace is a hosted zone of the same DNS server, which answers
the A, AAAA and SRV records Cloud Map writes for its instances.

Point clients at it with --endpoint-url / AWS_ENDPOINT_URL and any dummy credentials.
Metrics are at /metrics; faults and health checks are set at /_sandbox/faults and
/_sandbox/health/{id} (see README).

The API has no authentication, so it refuses with 403 what a web page could send: a
request addressed to a Host that is not a loopback name (127.0.0.1, [::1], localhost: DNS
rebinding) unless --allow-remote, and any request a browser page makes (an Origin header,
or Sec-Fetch-Site other than none), with --allow-remote too. AWS SDKs, the AWS CLI and
curl send neither.`,
		Args: cobra.NoArgs,
	}
	o.AddFlags(c, fc)
	return c
}
