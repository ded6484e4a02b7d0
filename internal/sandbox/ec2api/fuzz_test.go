package ec2api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// fuzzActions are the actions FuzzQueryForms sends forms to: every one the API serves.
var fuzzActions = []string{"DescribeSecurityGroups", "DescribeNetworkInterfaces", "DescribeInstances", "DescribeVpcs",
	"DescribeSubnets", "AuthorizeSecurityGroupIngress", "RevokeSecurityGroupIngress"}

// FuzzQueryForms feeds arbitrary form bodies to EC2's query protocol, against a store
// holding world. An op below len(fuzzActions) puts Action=<that action>&Version=2016-11-15&
// in front of the body; any other sends the body alone, so that the fuzzer reaches the
// Action and Version checks too. The API must never panic nor answer 5xx; a refusal is a
// 4xx in EC2's XML error shape (Response, Errors, Error with a Code and a Message, and the
// RequestID) and leaves the store as it was; an answer is the action's XML response with
// its requestId.
func FuzzQueryForms(f *testing.F) {
	for _, s := range []struct {
		op   int
		body string
	}{
		{0, "GroupId.1=sg-pods&GroupId.2=sg-node"},
		{0, "Filter.1.Name=tag:kubernetes.io/cluster/blue&Filter.1.Value.1=owned&Filter.1.Value.2=shared&Filter.2.Name=vpc-id&Filter.2.Value.1=vpc-1"},
		{0, "Filter.1.Name=group-name&Filter.1.Value.1=*&MaxResults=5&NextToken=c2ctbm9kZQ"},
		{0, "GroupId.0=sg-pods&GroupId.-1=x&GroupId.99999999999999999999=y"},
		{0, "Filter.1.Value.1=x"},
		{0, "GroupName.1=pods&MaxResults=x"},
		{1, "Filter.1.Name=addresses.private-ip-address&Filter.1.Value.1=192.0.2.12"},
		{1, "NetworkInterfaceId.1=eni-0pods&NetworkInterfaceId.3=eni-0node"},
		{2, "InstanceId.1=i-0node"},
		{2, "InstanceId.1=i-0node&MaxResults=5"},
		{3, "VpcId.1=vpc-1&DryRun=true"},
		{4, "SubnetId.1=subnet-1&Filter.1.Name=cidr-block&Filter.1.Value.1=192.0.2.0/*"},
		{5, "GroupId=sg-pods&IpPermissions.1.IpProtocol=tcp&IpPermissions.1.FromPort=8080&IpPermissions.1.ToPort=8080&IpPermissions.1.Groups.1.GroupId=sg-alb&IpPermissions.1.Groups.1.Description=elbv2.k8s.aws/targetGroupBinding=shared"},
		{5, "GroupId=sg-pods&IpPermissions.1.IpProtocol=-1&IpPermissions.1.IpRanges.1.CidrIp=10.0.0.0/8&IpPermissions.2.IpProtocol=udp&IpPermissions.2.FromPort=1&IpPermissions.2.ToPort=2&IpPermissions.2.Ipv6Ranges.1.CidrIpv6=::/0"},
		{5, "GroupId=sg-pods&IpPermissions.1.IpProtocol=tcp&IpPermissions.1.FromPort=99999999999&IpPermissions.1.ToPort=1&IpPermissions.1.PrefixListIds.1.PrefixListId=pl-1"},
		{5, "GroupId=sg-pods&CidrIp=10.0.0.0/8&IpProtocol=tcp"},
		{6, "GroupId=sg-pods&IpPermissions.1.IpProtocol=tcp&IpPermissions.1.FromPort=1&IpPermissions.1.ToPort=1&IpPermissions.1.Groups.1.GroupId=sg-alb"},
		{6, "GroupId=sg-gone&IpPermissions.1.IpProtocol=6"},
		{99, "Action=RunInstances&Version=2016-11-15"},
		{99, "Action=DescribeVpcs&Version=2015-12-01"},
		{99, "Version=2016-11-15"},
		{99, "%zz"},
	} {
		f.Add(s.op, s.body)
	}
	store, err := ec2.Open(ec2.Options{})
	if err != nil {
		f.Fatal(err)
	}
	if err := store.Declare(world); err != nil {
		f.Fatal(err)
	}
	api, err := New(Config{Store: store, Registerer: prometheus.NewRegistry()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, op int, body string) {
		if op >= 0 && op < len(fuzzActions) {
			body = "Action=" + fuzzActions[op] + "&Version=" + Version + "&" + body
		}
		before := store.Snapshot()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e errorResponse
			if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Errors.Error.Code == "" || e.Errors.Error.Message == "" || e.RequestID == "" {
				t.Fatalf("%s: %d, not EC2's error shape (%v): %s", body, rec.Code, err, rec.Body)
			}
			if after := store.Snapshot(); !reflect.DeepEqual(after, before) {
				t.Fatalf("%s: refused (%s) but the store changed", body, e.Errors.Error.Code)
			}
			return
		}
		var resp struct {
			XMLName   xml.Name
			RequestID string `xml:"requestId"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &resp); err != nil || !strings.HasSuffix(resp.XMLName.Local, "Response") ||
			resp.XMLName.Space != Namespace || resp.RequestID == "" {
			t.Fatalf("%s: %d, not an EC2 response (%v): %s", body, rec.Code, err, rec.Body)
		}
		// Undo a rule change, so that every input meets the same store.
		if after := store.Snapshot(); !reflect.DeepEqual(after, before) {
			before.SecurityGroups = append([]ec2.SecurityGroup(nil), before.SecurityGroups...)
			for i := range before.SecurityGroups {
				if before.SecurityGroups[i].Ingress == nil {
					before.SecurityGroups[i].Ingress = []ec2.Rule{}
				}
			}
			if err := store.Declare(ec2.Document{SecurityGroups: before.SecurityGroups}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
