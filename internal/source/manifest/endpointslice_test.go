package manifest

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/source"
)

// headlessManifest is a headless Service with its EndpointSlice (no namespace: it
// defaults), a Node, and the Pod behind the endpoint, which crossfade does not read.
const headlessManifest = `apiVersion: v1
kind: Service
metadata:
  name: db
  annotations:
    external-dns.alpha.kubernetes.io/hostname: db.example.com
spec:
  clusterIP: None
  selector: {app: db}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-x7k2p
  labels: {kubernetes.io/service-name: db}
addressType: IPv4
endpoints:
- addresses: [10.2.0.1]
  conditions: {ready: true}
  hostname: db-0
  nodeName: n1
  targetRef: {kind: Pod, namespace: default, name: db-0}
- addresses: [10.2.0.2]
  conditions: {ready: false}
  nodeName: n1
  targetRef: {kind: Pod, namespace: default, name: db-1}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses: [{type: InternalIP, address: 10.1.0.1}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0}
`

// TestDecodeEndpointSlice: EndpointSlices are decoded into the snapshot (namespace
// defaulted), so a manifest can publish a headless Service; Pods stay ignored.
func TestDecodeEndpointSlice(t *testing.T) {
	l, err := Decode(strings.NewReader(headlessManifest), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Errors) != 0 {
		t.Fatalf("errors: %v", l.Errors)
	}
	if len(l.Snapshot.EndpointSlices) != 1 || l.Snapshot.EndpointSlices[0].Namespace != "default" {
		t.Fatalf("EndpointSlices = %v, want one in default", l.Snapshot.EndpointSlices)
	}
	if len(l.Ignored) != 1 || l.Ignored[0].Kind != "Pod" {
		t.Errorf("ignored = %v, want the Pod", l.Ignored)
	}
	for _, tt := range []struct {
		cfg  source.Config
		want string
	}{
		{source.Config{}, "db-0.db.example.com A 10.2.0.1 ttl=0 simple service/default/db\ndb.example.com A 10.2.0.1 ttl=0 simple service/default/db\n"},
		{source.Config{PublishHostIP: true}, "db-0.db.example.com A 10.1.0.1 ttl=0 simple service/default/db\ndb.example.com A 10.1.0.1 ttl=0 simple service/default/db\n"},
	} {
		src, err := source.New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(src.Endpoints(l.Snapshot)); got != tt.want {
			t.Errorf("%+v: got\n%s\nwant\n%s", tt.cfg, got, tt.want)
		}
	}
}
