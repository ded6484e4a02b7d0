package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover"
)

// The flags of `controller` and `cutover` are checked from here, by name, rather than
// beside their definitions: those files change often, and a rule here whose flag is
// renamed or removed panics at the first build of the tree (FlagChecks.Want), so that
// every test of the command line fails on it.

// leaderJitter is client-go's leaderelection.JitterFactor: its elector refuses a renew
// deadline that is not above this many retry periods.
const leaderJitter = 1.2

// CheckControllerFlags declares what the values of `crossfade controller`'s flags must be.
// The external-dns flags it accepts and ignores (AcceptExternalDNSFlags) are left alone.
func CheckControllerFlags(fc *FlagChecks, c *cobra.Command) {
	fl := c.Flags()
	CheckPublishFlags(fc, c, fl)
	fc.Want(fl, "master", Optional(KubeAPIServer))
	fc.Want(fl, "source", NotEmpty("a kind to publish from: "+strings.Join(controller.Sources, ", ")))
	// Kinds external-dns reads and crossfade does not are warned about and skipped, so that
	// an external-dns command line runs; a line with none crossfade reads would publish
	// nothing.
	fc.Check(c, func() error {
		sources, _ := fl.GetStringSlice("source")
		for _, s := range sources {
			if slices.Contains(controller.Sources, s) {
				return nil
			}
		}
		return fmt.Errorf("--source %q: none of these is a kind crossfade reads; want one or more of %s", strings.Join(sources, ","), strings.Join(controller.Sources, ", "))
	})
	fc.Want(fl, "registry", OneOf("txt", "crd"))
	fc.Want(fl, "crd-registry-namespace", Optional(K8sName("namespace", true)))
	fc.Want(fl, "kube-api-qps", IntRange(1, -1))
	fc.Want(fl, "kube-api-burst", IntRange(1, -1))
	// 0 would be the controller's default for each, not what the value says.
	for _, name := range []string{"interval", "full-reconcile-interval", "debounce", "max-delay", "resync-interval", "crd-poll-interval", "cloudmap-operation-timeout",
		"reconcile-backoff-base", "reconcile-backoff-max"} {
		fc.Want(fl, name, PositiveDuration)
	}
	// A cap below the first wait would quietly become the first wait (controller.newBackoff).
	fc.Check(c, func() error {
		base, _ := fl.GetDuration("reconcile-backoff-base")
		ceil, _ := fl.GetDuration("reconcile-backoff-max")
		if ceil < base {
			return fmt.Errorf("--reconcile-backoff-max %s is below --reconcile-backoff-base %s: want a cap of at least the first wait", ceil, base)
		}
		return nil
	})
	fc.Want(fl, "metrics-address", ListenAddr)
	fc.Want(fl, "hold-probe-interval", DurationAtLeast(0, "0 turns probing off"))
	fc.Want(fl, "hold-probe-servers", HostPort)
	fc.Want(fl, "cloudmap-endpoint", Optional(HTTPURL))
	fc.Want(fl, "cloudmap-cluster-id", Optional(CloudMapAttributeValue))
	fc.Want(fl, "cloudmap-namespace", func(v string) error {
		if v == "" || len(v) > 1024 || strings.TrimSpace(v) != v {
			return errors.New("want a Cloud Map namespace's name (e.g. apps.local) or id (ns-…), 1 to 1024 characters")
		}
		return nil
	})
	fc.Want(fl, "leader-election-namespace", Optional(K8sName("namespace", true)))
	fc.Want(fl, "leader-election-id", K8sName("Lease", false))
	for _, name := range []string{"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period"} {
		fc.Want(fl, name, PositiveDuration)
	}
	// client-go's elector refuses these otherwise, once the informers have started.
	fc.Check(c, func() error {
		lease, _ := fl.GetDuration("leader-election-lease-duration")
		renew, _ := fl.GetDuration("leader-election-renew-deadline")
		retry, _ := fl.GetDuration("leader-election-retry-period")
		switch {
		case lease <= renew:
			return fmt.Errorf("--leader-election-lease-duration %s, --leader-election-renew-deadline %s: want the lease duration above the renew deadline", lease, renew)
		case float64(renew) <= leaderJitter*float64(retry):
			return fmt.Errorf("--leader-election-renew-deadline %s, --leader-election-retry-period %s: want the renew deadline above %g retry periods (%s)",
				renew, retry, leaderJitter, time.Duration(leaderJitter*float64(retry)))
		}
		return nil
	})
	fc.Want(fl, "ingress-class", K8sName("IngressClass", false))
	fc.Want(fl, "gateway-namespace", Optional(K8sName("namespace", true)))
	fc.Want(fl, "gateway-name", Optional(K8sName("Gateway", false)))
	fc.Want(fl, "gateway-label-filter", Selector("GatewayLabelFilter"))
}

// CheckCutoverFlags declares what the values of `crossfade cutover`'s flags must be: its
// persistent ones, checked in every subcommand, and its subcommands' own.
func CheckCutoverFlags(fc *FlagChecks, c *cobra.Command) {
	pf := c.PersistentFlags()
	fc.Want(pf, "state-dir", NotEmpty("a directory for the journal, lock, control and report files"))
	CheckCutoverRunnerFlags(fc, pf)
	CheckTXTFlags(fc, c, pf)
	CheckRoute53Flags(fc, pf)
	fc.Want(pf, "cloudmap-endpoint", Optional(HTTPURL))
	sub := func(name string) *cobra.Command {
		for _, s := range c.Commands() {
			if s.Name() == name {
				return s
			}
		}
		panic("flag checks for cutover " + name + ", which is not a command")
	}
	run := sub("run").Flags()
	fc.Want(run, "write-retry-for", DurationAtLeast(0, "0 retries nothing"))
	fc.Want(run, "ui", Optional(LoopbackAddr))
	fc.Want(sub("release").Flags(), "wait", DurationAtLeast(0, "0 does not wait"))
	for _, name := range []string{cutover.CommandPause, cutover.CommandResume, cutover.CommandPromote, cutover.CommandAbort} {
		fc.Want(sub(name).Flags(), "ack-timeout", DurationAtLeast(0, "0 does not wait"))
	}
}

// KubeAPIServer wants a Kubernetes API server's URL, or its host:port (https), as
// client-go reads --master.
func KubeAPIServer(v string) error {
	u := v
	if !strings.Contains(v, "://") {
		u = "https://" + v
	}
	if HTTPURL(u) != nil {
		return errors.New(`want the Kubernetes API server's URL, e.g. "https://10.0.0.1:6443"`)
	}
	return nil
}

// CloudMapAttributeValue wants a Cloud Map instance attribute value: 1 to 1024 printable
// characters, no space at either end.
func CloudMapAttributeValue(v string) error {
	if v != "" && len(v) <= 1024 && strings.TrimSpace(v) == v && strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) < 0 {
		return nil
	}
	return errors.New("want an instance attribute value: 1 to 1024 printable characters")
}
