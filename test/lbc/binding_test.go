package lbc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/lbctest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

// TestTargetGroupBindingIP: the real controller on a real API server registers the ready
// endpoints of a Service into a target group made outside the cluster (ip target type),
// then follows the Service's EndpointSlice as it scales up and down: an endpoint added is
// registered, an endpoint removed is deregistered. Every AWS call it makes is logged, and
// none may fail.
func TestTargetGroupBindingIP(t *testing.T) {
	sb := startSandbox(t)
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	arn := targetGroup(t, api, "blue", elbtypes.TargetTypeEnumIp)

	c := newCluster(t, "blue", rec.URL)
	c.service(t, "shop", false)
	c.scale(t, "shop", "192.0.2.11", "192.0.2.12")
	c.binding(t, "shop", "shop", arn, "ip", false)
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.12:8080")

	c.scale(t, "shop", "192.0.2.11", "192.0.2.12", "192.0.2.13")
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.12:8080", "192.0.2.13:8080")

	c.scale(t, "shop", "192.0.2.13")
	waitTargets(t, api, arn, rec, "192.0.2.13:8080")

	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}

// TestTargetGroupBindingInstance: with the instance target type the controller registers
// the cluster's Ready nodes, by the EC2 instance id in their providerID, at the Service's
// node port, into a target group of target type instance made outside the cluster; the
// ALB health-checks each at its instance's private IP (mapped to a loopback backend, or
// unhealthy when not mapped); a node that goes away is deregistered.
func TestTargetGroupBindingInstance(t *testing.T) {
	sb := startSandbox(t)
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	arn := targetGroup(t, api, "blue", elbtypes.TargetTypeEnumInstance)

	c := newCluster(t, "blue", rec.URL)
	c.node(t, "node-1", "us-east-1a", "i-0000000000000001a", "192.0.2.101")
	c.node(t, "node-2", "us-east-1b", "i-0000000000000002b", "192.0.2.202")
	svc := c.service(t, "shop", true)
	nodePort := svc.Spec.Ports[0].NodePort
	c.scale(t, "shop", "192.0.2.11")
	c.binding(t, "shop", "shop", arn, "instance", false)
	waitTargets(t, api, arn, rec, fmt.Sprintf("i-0000000000000001a:%d", nodePort), fmt.Sprintf("i-0000000000000002b:%d", nodePort))
	// The ALB reaches an instance target at the instance's private IP and the port: node-1's
	// is mapped to a loopback backend and turns healthy; node-2's is not, and is unhealthy,
	// never dialled.
	// (A target group no listener forwards to is not health-checked: "unused".)
	lb, err := api.CreateLoadBalancer(t.Context(), &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	if _, err := api.CreateListener(t.Context(), &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn,
		Protocol: elbtypes.ProtocolEnumHttp, Port: aws.Int32(80), DefaultActions: cutovertest.Forward(arn, 1)}); err != nil {
		t.Fatalf("CreateListener: %v", err)
	}
	newBackends(t, sb).addPort("blue", "192.0.2.101", nodePort)
	waitHealth(t, api, "blue", arn, fmt.Sprintf("i-0000000000000001a:%d=healthy", nodePort), fmt.Sprintf("i-0000000000000002b:%d=unhealthy", nodePort))

	if err := c.cs.CoreV1().Nodes().Delete(t.Context(), "node-2", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete node node-2: %v", err)
	}
	// Deregistered from a group in use, node-2 drains (the group's deregistration delay).
	waitHealth(t, api, "blue", arn, fmt.Sprintf("i-0000000000000001a:%d=healthy", nodePort), fmt.Sprintf("i-0000000000000002b:%d=draining", nodePort))
	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}

// albIngress is a TargetGroupBinding's spec.networking letting the ALB's security group
// reach port on the targets (the pods' port, or for instance targets the node port).
func albIngress(port int32) map[string]any {
	return map[string]any{"ingress": []any{map[string]any{
		"from":  []any{map[string]any{"securityGroup": map[string]any{"groupID": "sg-alb"}}},
		"ports": []any{map[string]any{"protocol": "TCP", "port": int64(port)}},
	}}}
}

// declareNetworking declares the security groups of the networking tests in the sandbox's
// EC2: the ALB's (sg-alb) and the cluster's (sg-nodes, tagged as the cluster's, as EKS
// tags its cluster security group), and the ENIs extra names (pods' or nodes').
func declareNetworking(t *testing.T, sb *sandbox.Sandbox, extra ec2.Document) {
	t.Helper()
	doc := extra
	doc.SecurityGroups = append(doc.SecurityGroups,
		ec2.SecurityGroup{ID: "sg-alb", Name: "alb", Description: "the ALB", VPCID: lbctest.DefaultVPC},
		ec2.SecurityGroup{ID: "sg-nodes", Name: "nodes", Description: "the cluster's nodes and pods", VPCID: lbctest.DefaultVPC,
			Tags: map[string]string{"kubernetes.io/cluster/blue": "owned"}})
	if err := sb.DeclareEC2(doc); err != nil {
		t.Fatalf("sandbox: declare EC2: %v", err)
	}
}

// ingressOf lists the ingress rules of security group id as "protocol from-to from
// source", sorted.
func ingressOf(t *testing.T, sb *sandbox.Sandbox, id string) []string {
	t.Helper()
	var out []string
	for _, g := range sb.EC2().Snapshot().SecurityGroups {
		if g.ID != id {
			continue
		}
		for _, r := range g.Ingress {
			out = append(out, fmt.Sprintf("%s %d-%d from %s%s%s", r.Protocol, r.FromPort, r.ToPort, r.CIDR, r.GroupID, r.PrefixListID))
		}
	}
	slices.Sort(out)
	return out
}

// waitIngress waits until security group id's ingress rules are exactly want.
func waitIngress(t *testing.T, sb *sandbox.Sandbox, rec *lbctest.Recorder, id string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(convergeWithin)
	for {
		got := ingressOf(t, sb, id)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("security group %s: ingress %v after %s, want %v; failed AWS calls: %v", id, got, convergeWithin, want, rec.Failed())
		}
		time.Sleep(pollEvery)
	}
}

// TestTargetGroupBindingNetworkingIP: with spec.networking, the controller finds the pods'
// ENIs in EC2 (through their node's instance), authorizes the ALB's security group on the pods' port in
// the ENIs' security group (the one tagged as the cluster's), registers the pods, and
// revokes the rule when the binding is deleted.
func TestTargetGroupBindingNetworkingIP(t *testing.T) {
	sb := startSandbox(t)
	// The VPC CNI gives pods secondary addresses of their node's ENIs.
	declareNetworking(t, sb, ec2.Document{
		Instances: []ec2.Instance{
			{ID: "i-0000000000000001a", SubnetID: "subnet-1", PrivateIP: "192.0.2.101", State: ec2.StateRunning, SecurityGroups: []string{"sg-nodes"}},
		},
		NetworkInterfaces: []ec2.NetworkInterface{
			{ID: "eni-0000000000000001a", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.101", "192.0.2.11", "192.0.2.12"},
				SecurityGroups: []string{"sg-nodes"}, InstanceID: "i-0000000000000001a"},
		},
	})
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	arn := targetGroup(t, api, "blue", elbtypes.TargetTypeEnumIp)

	c := newCluster(t, "blue", rec.URL)
	c.node(t, "node-1", "us-east-1a", "i-0000000000000001a", "192.0.2.101")
	c.service(t, "shop", false)
	c.scale(t, "shop", "192.0.2.11", "192.0.2.12")
	c.bindingWith(t, "shop", "shop", arn, "ip", false, albIngress(appPort))
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.12:8080")
	waitIngress(t, sb, rec, "sg-nodes", "tcp 8080-8080 from sg-alb")

	if err := c.dyn.Resource(tgbResource).Namespace(ns).Delete(t.Context(), "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete TargetGroupBinding shop: %v", err)
	}
	waitTargets(t, api, arn, rec)
	waitIngress(t, sb, rec, "sg-nodes")
	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}

// TestTargetGroupBindingNetworkingInstance: the same with the instance target type: the
// controller reads the nodes' instances (and their ENIs) from EC2, authorizes the ALB's
// security group on the node port (the port the binding's networking names) in the nodes'
// security group, and registers the nodes.
func TestTargetGroupBindingNetworkingInstance(t *testing.T) {
	sb := startSandbox(t)
	declareNetworking(t, sb, ec2.Document{
		Instances: []ec2.Instance{
			{ID: "i-0000000000000001a", SubnetID: "subnet-1", PrivateIP: "192.0.2.101", State: ec2.StateRunning, SecurityGroups: []string{"sg-nodes"}},
		},
		NetworkInterfaces: []ec2.NetworkInterface{
			{ID: "eni-0000000000000001a", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.101"}, SecurityGroups: []string{"sg-nodes"}, InstanceID: "i-0000000000000001a"},
		},
	})
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	arn := targetGroup(t, api, "blue", elbtypes.TargetTypeEnumInstance)

	c := newCluster(t, "blue", rec.URL)
	c.node(t, "node-1", "us-east-1a", "i-0000000000000001a", "192.0.2.101")
	svc := c.service(t, "shop", true)
	nodePort := svc.Spec.Ports[0].NodePort
	c.scale(t, "shop", "192.0.2.11")
	c.bindingWith(t, "shop", "shop", arn, "instance", false, albIngress(nodePort))
	waitTargets(t, api, arn, rec, fmt.Sprintf("i-0000000000000001a:%d", nodePort))
	waitIngress(t, sb, rec, "sg-nodes", fmt.Sprintf("tcp %d-%d from sg-alb", nodePort, nodePort))
	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}
