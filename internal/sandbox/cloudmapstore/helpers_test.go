package cloudmapstore

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// fixture is a store over a real in-memory zones store.
type fixture struct {
	t     *testing.T
	s     *Store
	zones *zones.Store
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	zs := opts.Zones
	if zs == nil {
		z, err := zones.Open(zones.Options{})
		if err != nil {
			t.Fatal(err)
		}
		zs = z
	}
	opts.Zones = zs
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &fixture{t: t, s: s, zones: zs.(*zones.Store)}
}

// fileFixture keeps both stores in one bbolt file, as the sandbox does; reopen closes and
// opens both again.
func fileFixture(t *testing.T, opts Options) (*fixture, func() *fixture) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *fixture {
		zs, err := zones.Open(zones.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = zs.Close() })
		o := opts
		o.DB, o.Zones = zs.DB(), zs
		return newFixture(t, o)
	}
	f := open()
	return f, func() *fixture {
		_ = f.s.Close()
		_ = f.zones.Close()
		f = open()
		return f
	}
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return "non-API error: " + err.Error()
}

func wantCode(t *testing.T, err error, want, msgPart string) {
	t.Helper()
	if got := code(err); got != want {
		t.Fatalf("error %v: code %q, want %q", err, got, want)
	}
	if msgPart != "" && !strings.Contains(err.Error(), msgPart) {
		t.Fatalf("error %q does not contain %q", err, msgPart)
	}
}

// namespace creates a namespace and returns it.
func (f *fixture) namespace(typ, name, vpc string) Namespace {
	f.t.Helper()
	opID, err := f.s.CreateNamespace(CreateNamespaceInput{Type: typ, Name: name, VPC: vpc})
	if err != nil {
		f.t.Fatalf("create namespace %s: %v", name, err)
	}
	op, err := f.s.GetOperation(opID)
	if err != nil || op.Status != StatusSuccess {
		f.t.Fatalf("create namespace %s: operation %+v, %v", name, op, err)
	}
	ns, err := f.s.GetNamespace(op.Targets[TargetNamespace])
	if err != nil {
		f.t.Fatal(err)
	}
	return ns
}

func (f *fixture) service(ns Namespace, name string, dns *DNSConfig, custom bool) Service {
	f.t.Helper()
	svc, err := f.s.CreateService(CreateServiceInput{Name: name, NamespaceID: ns.ID, DNS: dns, CustomHealth: custom})
	if err != nil {
		f.t.Fatalf("create service %s: %v", name, err)
	}
	return svc
}

func (f *fixture) register(svc Service, id string, attrs ...string) {
	f.t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(attrs); i += 2 {
		m[attrs[i]] = attrs[i+1]
	}
	opID, err := f.s.RegisterInstance(RegisterInstanceInput{ServiceID: svc.ID, InstanceID: id, Attributes: m})
	if err != nil {
		f.t.Fatalf("register %s: %v", id, err)
	}
	if op, _ := f.s.GetOperation(opID); op.Status != StatusSuccess {
		f.t.Fatalf("register %s: operation %+v", id, op)
	}
}

// records lists what the namespace's zone holds at name: "TYPE [set id] w=weight hc=yes
// value,value".
func (f *fixture) records(ns Namespace, name string) []string {
	f.t.Helper()
	node := f.zones.LookupIn(ns.HostedZoneID, zones.CanonicalName(name))
	if node == nil {
		return nil
	}
	var out []string
	for _, s := range node.Sets {
		line := s.Type
		if s.SetIdentifier != "" {
			line += " [" + s.SetIdentifier + "]"
		}
		if s.Weight != nil {
			line += " w=1"
		}
		if s.HealthCheckID != "" {
			line += " hc"
		}
		vals := slices.Clone(s.Records)
		slices.Sort(vals)
		out = append(out, line+" "+strings.Join(vals, ","))
	}
	slices.Sort(out)
	return out
}

func dnsA(policy string, types ...string) *DNSConfig {
	c := &DNSConfig{RoutingPolicy: policy}
	for _, t := range types {
		c.Records = append(c.Records, DNSRecord{Type: t, TTL: 60})
	}
	return c
}
