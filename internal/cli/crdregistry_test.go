package cli

import (
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
)

// TestControllerCRDRegistry: --registry crd puts the zone's provider behind the CRD
// registry, its DNSRecords in --crd-registry-namespace, else the pod's namespace, else
// default; --registry txt leaves it as it is; and --cutovers, whose levers read TXT
// ownership, is refused beside it.
func TestControllerCRDRegistry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		podNS   string
		wantNS  string // "" when the provider stays as it is
		wantErr string
	}{
		{name: "txt", args: []string{"--registry=txt"}},
		{name: "crd, flag", args: []string{"--registry=crd", "--crd-registry-namespace=dns"}, podNS: "ops", wantNS: "dns"},
		{name: "crd, pod namespace", args: []string{"--registry=crd"}, podNS: "ops", wantNS: "ops"},
		{name: "crd, outside a pod", args: []string{"--registry=crd"}, wantNS: "default"},
		{name: "crd with cutovers", args: []string{"--registry=crd", "--cutovers"}, wantErr: "--cutovers needs --registry txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &ControllerOptions{}
			c := NewControllerCommand(o)
			if err := c.Flags().Parse(append([]string{"--txt-owner-id=blue", "--source=service"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			reg, err := registry.New(registry.Config{OwnerID: "blue", Prefix: "x-"})
			if err != nil {
				t.Fatal(err)
			}
			dns := &route53.Provider{}
			p := &Parts{Syncer: &controller.Syncer{Provider: dns, Registry: reg}}
			err = o.crdRegistry(p, &rest.Config{Host: "https://127.0.0.1:1"}, ControllerEnv{Namespace: tc.podNS}, slog.New(slog.DiscardHandler))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			crd, ok := p.Syncer.Provider.(*crdstore.Provider)
			switch {
			case tc.wantNS == "" && (ok || p.Syncer.Registry != reg):
				t.Fatalf("--registry txt changed the syncer: %T", p.Syncer.Provider)
			case tc.wantNS == "":
			case !ok:
				t.Fatalf("provider %T, want the CRD registry's", p.Syncer.Provider)
			case crd.Namespace() != tc.wantNS:
				t.Errorf("namespace %q, want %q", crd.Namespace(), tc.wantNS)
			case p.Syncer.Registry.OwnerID() != "blue" || p.Syncer.Registry == reg:
				// --txt-prefix and its kin name TXT records, which this registry does not write.
				t.Errorf("registry %+v: want owner blue's, without the TXT affixes", p.Syncer.Registry)
			}
		})
	}
}
