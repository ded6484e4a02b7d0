package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
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
