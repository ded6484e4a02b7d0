package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestKubeWithoutBinaries: without etcd and kube-apiserver in the cache, demo --kube
// fails at once with an error that says `make test` (scripts/deps.sh test) builds them,
// before it starts or prints anything.
func TestKubeWithoutBinaries(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, Config{Kube: &KubeConfig{Crossfade: "crossfade"}, Out: &out})
	if !errors.Is(err, kubetest.ErrNotBuilt) {
		t.Fatalf("Run = %v, want kubetest.ErrNotBuilt", err)
	}
	for _, want := range []string{"`make test` builds them", "scripts/deps.sh test", "etcd and kube-apiserver not built in " + kubetest.BinDir()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Count(err.Error(), "not built in") != 1 {
		t.Errorf("the error repeats itself per cluster: %v", err)
	}
	if out.Len() > 0 {
		t.Errorf("the demo started something before finding the binaries missing:\n%s", out.String())
	}
}

// TestAppServicePublishesItsMember: each cluster's Service, read by the source every
// controller runs, asks for exactly the member the demo then waits for — once its
// controller owns it — and memberProblem names what differs when the zone holds
// anything else.
func TestAppServicePublishesItsMember(t *testing.T) {
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*cluster{
		{id: "blue", ip: "127.0.0.2", port: 8080, weight: 100},
		{id: "green", ip: "127.0.0.3", port: 8080, weight: 0},
	} {
		t.Run(c.id, func(t *testing.T) {
			svc := appService(c)
			if svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts {
				t.Errorf("spec.allocateLoadBalancerNodePorts = %v, want false", svc.Spec.AllocateLoadBalancerNodePorts)
			}
			res := src.Endpoints(&source.Snapshot{Services: []*corev1.Service{svc}})
			if len(res.Invalid) > 0 {
				t.Fatalf("the source finds the Service invalid: %+v", res.Invalid)
			}
			if len(res.Endpoints) != 1 {
				t.Fatalf("the Service yields %d records, want 1: %+v", len(res.Endpoints), res.Endpoints)
			}
			e := res.Endpoints[0]
			e.Labels[endpoint.OwnerLabel] = c.id // what its controller adds
			if p := memberProblem(e, c); p != "" {
				t.Errorf("the Service's record is not the member the demo waits for: %s (%+v)", p, e)
			}
			if e.TTL != ttl {
				t.Errorf("TTL %d, want the demo's %d", e.TTL, ttl)
			}
		})
	}
}

// TestMemberProblem: the zone's member counts as published by c's controller from c's
// Service only when every part matches.
func TestMemberProblem(t *testing.T) {
	c := &cluster{id: "blue", ip: "127.0.0.2", weight: 100}
	good := func() *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: appName, Type: endpoint.TypeA, SetIdentifier: "blue", Targets: endpoint.Targets{"127.0.0.2"},
			TTL: ttl, Policy: endpoint.WeightedPolicy(100),
			Labels: endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/shop/app"}}
	}
	for _, tc := range []struct {
		name   string
		change func(*endpoint.Endpoint) *endpoint.Endpoint
		want   string // in the problem; "" for none
	}{
		{"published", func(e *endpoint.Endpoint) *endpoint.Endpoint { return e }, ""},
		{"absent", func(*endpoint.Endpoint) *endpoint.Endpoint { return nil }, "no member blue yet"},
		{"other owner", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Labels[endpoint.OwnerLabel] = "green"; return e }, `owned by "green"`},
		{"no owner", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Labels = nil; return e }, `owned by ""`},
		{"other Service", func(e *endpoint.Endpoint) *endpoint.Endpoint {
			e.Labels[endpoint.ResourceLabel] = "service/default/app"
			return e
		}, `comes from "service/default/app"`},
		{"other address", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Targets = endpoint.Targets{"127.0.0.3"}; return e }, "not at the Service's load balancer 127.0.0.2"},
		{"other weight", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Policy = endpoint.WeightedPolicy(90); return e }, "not weight 100"},
		{"not weighted", func(e *endpoint.Endpoint) *endpoint.Endpoint { e.Policy = endpoint.RoutingPolicy{}; return e }, "not weight 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memberProblem(tc.change(good()), c)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("memberProblem = %q, want %q", got, tc.want)
			}
		})
	}
}
