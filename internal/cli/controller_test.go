package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestSDKRetries: --aws-max-retries 0 retries nothing (awsconfig's 0 is its default).
func TestSDKRetries(t *testing.T) {
	for _, tc := range []struct{ flag, want int }{{0, -1}, {1, 1}, {3, 3}} {
		if got := SDKRetries(tc.flag); got != tc.want {
			t.Errorf("SDKRetries(%d) = %d, want %d", tc.flag, got, tc.want)
		}
	}
}

// TestControllerConfig builds the controller's configuration from a command line and an
// environment: the flags win over the environment, and the pod's own namespace over
// "default"; nothing is read from the process's environment.
func TestControllerConfig(t *testing.T) {
	base := []string{"--txt-owner-id=blue", "--source=service", "--master=https://127.0.0.1:6443", "--aws-region=us-east-1"}
	inPod := ControllerEnv{PodNamespace: "dns", PodName: "crossfade-0", PodUID: "u1", Namespace: "dns", AWSEndpoint: "http://127.0.0.1:1", Identity: "crossfade-0_ab"}
	cases := []struct {
		name string
		args []string
		env  ControllerEnv
		// want* are what the configuration must hold.
		wantLeaseNS, wantAPI, wantPod string
		wantOnce, wantElect           bool
		// wantFull is --incremental=false: every reconcile re-plans the whole zone.
		wantFull bool
	}{
		{name: "outside a pod", args: base, wantLeaseNS: "default", wantElect: true},
		{name: "in a pod", args: base, env: inPod, wantLeaseNS: "dns", wantAPI: "http://127.0.0.1:1", wantPod: "dns/crossfade-0", wantElect: true},
		{name: "flags over the environment", env: inPod,
			args:        append([]string{"--leader-election-namespace=ops", "--aws-endpoint=http://127.0.0.1:2", "--once", "--leader-elect=false", "--incremental=false"}, base...),
			wantLeaseNS: "ops", wantAPI: "http://127.0.0.1:2", wantPod: "dns/crossfade-0", wantOnce: true, wantFull: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &ControllerOptions{}
			c := &cobra.Command{Use: "controller"}
			o.AddFlags(c.Flags())
			if err := c.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := o.Config(t.Context(), tc.env, nil)
			if err != nil {
				t.Fatalf("Config: %v", err)
			}
			pod := ""
			if cfg.Pod != nil {
				pod = cfg.Pod.Namespace + "/" + cfg.Pod.Name
			}
			if cfg.Leader.Namespace != tc.wantLeaseNS || cfg.HoldProbe.APIEndpoint != tc.wantAPI || pod != tc.wantPod ||
				cfg.Once != tc.wantOnce || cfg.LeaderElect != tc.wantElect || cfg.Leader.Identity != tc.env.Identity {
				t.Errorf("Config = lease namespace %q, API endpoint %q, pod %q, once %v, leader-elect %v, identity %q; want %q, %q, %q, %v, %v, %q",
					cfg.Leader.Namespace, cfg.HoldProbe.APIEndpoint, pod, cfg.Once, cfg.LeaderElect, cfg.Leader.Identity,
					tc.wantLeaseNS, tc.wantAPI, tc.wantPod, tc.wantOnce, tc.wantElect, tc.env.Identity)
			}
			if cfg.Incremental == tc.wantFull {
				t.Errorf("Config.Incremental = %v with %v: want it on unless --incremental=false", cfg.Incremental, tc.args)
			}
			if cfg.REST == nil || cfg.REST.Host != "https://127.0.0.1:6443" || cfg.Syncer == nil || cfg.Zones == nil || cfg.Metrics == nil || cfg.Owner != "blue" {
				t.Errorf("Config = REST %v, syncer %v, zones %v, metrics %v, owner %q: want --master's client, the parts built, owner blue",
					cfg.REST, cfg.Syncer, cfg.Zones, cfg.Metrics, cfg.Owner)
			}
		})
	}
}

// TestControllerCutovers: --cutovers configures the Cutover runner from the controller's
// own flags and environment: the --namespace scope, the pod's name as the holder of the
// Leases (else the host name), --dns-server, the same Kubernetes client, the levers; and
// without --cutovers there is none.
func TestControllerCutovers(t *testing.T) {
	base := []string{"--txt-owner-id=blue", "--source=service", "--master=https://127.0.0.1:6443", "--aws-region=us-east-1"}
	cases := []struct {
		name string
		args []string
		env  ControllerEnv
		// on is whether a runner is configured; the others are its configuration.
		on                      bool
		wantNS, wantID, wantDNS string
	}{
		{name: "off by default", args: base},
		{name: "in a pod, one namespace", args: append([]string{"--cutovers", "--namespace=shop", "--dns-server=192.0.2.53:53"}, base...),
			env: ControllerEnv{PodName: "crossfade-0", Hostname: "node-1", Identity: "crossfade-0_ab"},
			on:  true, wantNS: "shop", wantID: "crossfade-0", wantDNS: "192.0.2.53:53"},
		{name: "outside a pod, every namespace", args: append([]string{"--cutovers"}, base...),
			env: ControllerEnv{Hostname: "laptop", Identity: "laptop_ab"}, on: true, wantID: "laptop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &ControllerOptions{}
			c := &cobra.Command{Use: "controller"}
			o.AddFlags(c.Flags())
			if err := c.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := o.Config(t.Context(), tc.env, nil)
			if err != nil {
				t.Fatalf("Config: %v", err)
			}
			if got := cfg.Cutovers != nil; got != tc.on {
				t.Fatalf("Config: cutover runner configured %v, want %v", got, tc.on)
			}
			if !tc.on {
				return
			}
			rc, err := o.cutoverRunner(t.Context(), tc.env, cfg.REST, nil)
			if err != nil {
				t.Fatalf("cutoverRunner: %v", err)
			}
			if rc.REST != cfg.REST || rc.Namespace != tc.wantNS || rc.Identity != tc.wantID || strings.Join(rc.DNSServers, ",") != tc.wantDNS || rc.Levers == nil {
				t.Errorf("cutover runner = REST %p, namespace %q, identity %q, DNS servers %v, levers %v; want REST %p, %q, %q, %q, levers set",
					rc.REST, rc.Namespace, rc.Identity, rc.DNSServers, rc.Levers != nil, cfg.REST, tc.wantNS, tc.wantID, tc.wantDNS)
			}
		})
	}
}

// TestControllerCutoversRoute53Pacing: the cutovers' Route 53 providers take their
// requests from the publisher's bucket, one per process, so that together they keep
// within --aws-route53-rate; with --aws-route53-rate negative, neither is paced.
func TestControllerCutoversRoute53Pacing(t *testing.T) {
	sb := sandboxtest.Start(t)
	base := []string{"--txt-owner-id=blue", "--source=service", "--master=https://127.0.0.1:6443", "--aws-region=us-east-1",
		"--cutovers", "--aws-endpoint=" + sb.APIURL()}
	for _, tc := range []struct {
		name string
		args []string
		// paced is what a call waiting for a request slot says; "" for none.
		paced string
	}{
		{name: "the publisher's bucket", args: []string{"--aws-route53-rate=0.001", "--aws-route53-burst=5"}, paced: "paced at 0.001 requests/s, burst 5"},
		{name: "no pacing", args: []string{"--aws-route53-rate=-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &ControllerOptions{}
			c := &cobra.Command{Use: "controller"}
			o.AddFlags(c.Flags())
			if err := c.Flags().Parse(append(tc.args, base...)); err != nil {
				t.Fatal(err)
			}
			if _, err := o.Config(t.Context(), ControllerEnv{}, nil); err != nil {
				t.Fatalf("Config: %v", err)
			}
			cfg := o.cutoverRoute53(nil)
			cfg.Credentials = credentials.NewStaticCredentialsProvider("test", "test", "")
			dns, err := route53.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			bucket := o.route53.Limiter
			if tc.paced == "" {
				// No bucket, and a rate that builds none: a Config without a Limiter builds
				// its own from RequestsPerSecond, at the default rate when it is 0.
				if bucket != nil || cfg.Limiter != nil || cfg.RequestsPerSecond >= 0 {
					t.Errorf("publisher's bucket %v, the cutovers' %v at %v/s: want none, and a negative rate", bucket, cfg.Limiter, cfg.RequestsPerSecond)
				}
				if _, err := dns.Zones(t.Context()); err != nil {
					t.Fatalf("Zones: %v", err)
				}
				return
			}
			// With the publisher's bucket empty (at 0.001 requests a second it refills
			// nothing meanwhile), a call of the cutovers' provider waits for a slot the
			// minute it has will not bring: refused at once, naming the bucket. A bucket of
			// its own would still hold its 5.
			if !bucket.AllowN(time.Now(), 5) {
				t.Fatalf("the publisher's bucket holds %.2f requests, want its burst, 5", bucket.Tokens())
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			_, err = dns.Zones(ctx)
			if err == nil || !strings.Contains(err.Error(), "waiting for a request slot ("+tc.paced+")") {
				t.Errorf("a cutover's call with the publisher's bucket empty: %v; want it to wait for a slot, %s", err, tc.paced)
			}
		})
	}
}

// TestRESTConfigRateLimits: --kube-api-qps and --kube-api-burst reach the client's
// configuration, as external-dns's do (the CRD registry writes through it), for the
// controller and for handover alike.
func TestRESTConfigRateLimits(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	const file = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		build func() (*rest.Config, error)
	}{
		{"controller", (&ControllerOptions{kubeconfig: kubeconfig, kubeQPS: 50, kubeBurst: 100}).restConfig},
		{"handover", (&HandoverOptions{kubeconfig: kubeconfig, kubeQPS: 50, kubeBurst: 100}).RESTConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.QPS != 50 || cfg.Burst != 100 || cfg.Host != "https://127.0.0.1:6443" {
				t.Errorf("QPS %v, Burst %d, Host %s: want 50, 100 and the kubeconfig's server", cfg.QPS, cfg.Burst, cfg.Host)
			}
		})
	}
}
