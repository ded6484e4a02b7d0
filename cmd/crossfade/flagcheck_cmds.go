package main

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
// renamed or removed panics at the first build of the tree (flagChecks.want), so that
// every test of the command line fails on it.

// leaderJitter is client-go's leaderelection.JitterFactor: its elector refuses a renew
// deadline that is not above this many retry periods.
const leaderJitter = 1.2

// checkControllerFlags declares what the values of `crossfade controller`'s flags must be.
// The external-dns flags it accepts and ignores (acceptExternalDNSFlags) are left alone.
func checkControllerFlags(fc *flagChecks, c *cobra.Command) {
	fl := c.Flags()
	checkPublishFlags(fc, c, fl)
	fc.want(fl, "master", optional(kubeAPIServer))
	fc.want(fl, "source", notEmpty("a kind to publish from: "+strings.Join(controller.Sources, ", ")))
	// Kinds external-dns reads and crossfade does not are warned about and skipped, so that
	// an external-dns command line runs; a line with none crossfade reads would publish
	// nothing.
	fc.check(c, func() error {
		sources, _ := fl.GetStringSlice("source")
		for _, s := range sources {
			if slices.Contains(controller.Sources, s) {
				return nil
			}
		}
		return fmt.Errorf("--source %q: none of these is a kind crossfade reads; want one or more of %s", strings.Join(sources, ","), strings.Join(controller.Sources, ", "))
	})
	fc.want(fl, "registry", oneOf("txt"))
	// 0 would be the controller's default for each, not what the value says.
	for _, name := range []string{"interval", "debounce", "max-delay", "resync-interval", "crd-poll-interval", "cloudmap-operation-timeout",
		"reconcile-backoff-base", "reconcile-backoff-max"} {
		fc.want(fl, name, positiveDuration)
	}
	// A cap below the first wait would quietly become the first wait (controller.newBackoff).
	fc.check(c, func() error {
		base, _ := fl.GetDuration("reconcile-backoff-base")
		ceil, _ := fl.GetDuration("reconcile-backoff-max")
		if ceil < base {
			return fmt.Errorf("--reconcile-backoff-max %s is below --reconcile-backoff-base %s: want a cap of at least the first wait", ceil, base)
		}
		return nil
	})
	fc.want(fl, "metrics-address", listenAddr)
	fc.want(fl, "hold-probe-interval", durationAtLeast(0, "0 turns probing off"))
	fc.want(fl, "hold-probe-servers", hostPort)
	fc.want(fl, "cloudmap-endpoint", optional(httpURL))
	fc.want(fl, "cloudmap-cluster-id", optional(cloudMapAttributeValue))
	fc.want(fl, "cloudmap-namespace", func(v string) error {
		if v == "" || len(v) > 1024 || strings.TrimSpace(v) != v {
			return errors.New("want a Cloud Map namespace's name (e.g. apps.local) or id (ns-…), 1 to 1024 characters")
		}
		return nil
	})
	fc.want(fl, "leader-election-namespace", optional(k8sName("namespace", true)))
	fc.want(fl, "leader-election-id", k8sName("Lease", false))
	for _, name := range []string{"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period"} {
		fc.want(fl, name, positiveDuration)
	}
	// client-go's elector refuses these otherwise, once the informers have started.
	fc.check(c, func() error {
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
	fc.want(fl, "ingress-class", k8sName("IngressClass", false))
	fc.want(fl, "gateway-namespace", optional(k8sName("namespace", true)))
	fc.want(fl, "gateway-name", optional(k8sName("Gateway", false)))
	fc.want(fl, "gateway-label-filter", selector("GatewayLabelFilter"))
}

// checkCutoverFlags declares what the values of `crossfade cutover`'s flags must be: its
// persistent ones, checked in every subcommand, and its subcommands' own.
func checkCutoverFlags(fc *flagChecks, c *cobra.Command) {
	pf := c.PersistentFlags()
	fc.want(pf, "state-dir", notEmpty("a directory for the journal, lock, control and report files"))
	fc.want(pf, "dns-server", dnsServer)
	checkTXTFlags(fc, c, pf)
	checkRoute53Flags(fc, pf)
	for _, name := range []string{"elbv2-endpoint", "servicediscovery-endpoint", "cloudwatch-endpoint"} {
		fc.want(pf, name, optional(httpURL))
	}
	sub := func(name string) *cobra.Command {
		for _, s := range c.Commands() {
			if s.Name() == name {
				return s
			}
		}
		panic("flag checks for cutover " + name + ", which is not a command")
	}
	run := sub("run").Flags()
	fc.want(run, "write-retry-for", durationAtLeast(0, "0 retries nothing"))
	fc.want(run, "ui", optional(loopbackAddr))
	fc.want(sub("release").Flags(), "wait", durationAtLeast(0, "0 does not wait"))
	for _, name := range []string{cutover.CommandPause, cutover.CommandResume, cutover.CommandPromote, cutover.CommandAbort} {
		fc.want(sub(name).Flags(), "ack-timeout", durationAtLeast(0, "0 does not wait"))
	}
}

// kubeAPIServer wants a Kubernetes API server's URL, or its host:port (https), as
// client-go reads --master.
func kubeAPIServer(v string) error {
	u := v
	if !strings.Contains(v, "://") {
		u = "https://" + v
	}
	if httpURL(u) != nil {
		return errors.New(`want the Kubernetes API server's URL, e.g. "https://10.0.0.1:6443"`)
	}
	return nil
}

// cloudMapAttributeValue wants a Cloud Map instance attribute value: 1 to 1024 printable
// characters, no space at either end.
func cloudMapAttributeValue(v string) error {
	if v != "" && len(v) <= 1024 && strings.TrimSpace(v) == v && strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) < 0 {
		return nil
	}
	return errors.New("want an instance attribute value: 1 to 1024 printable characters")
}
