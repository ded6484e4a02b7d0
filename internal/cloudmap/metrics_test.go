package cloudmap

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestAPIOptionCountsCalls: a client given APIOption counts each Cloud Map request in
// NameAPICalls by operation and result, a refused one as an error.
func TestAPIOptionCountsCalls(t *testing.T) {
	sb := sandboxtest.Start(t)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	api := sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions:  []func(*middleware.Stack) error{m.APIOption()}})
	ctx := context.Background()
	if _, err := api.ListNamespaces(ctx, &sd.ListNamespacesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetService(ctx, &sd.GetServiceInput{Id: aws.String("srv-nosuchservice1")}); err == nil {
		t.Fatal("GetService of no service succeeded")
	}
	for _, tc := range []struct {
		op, result string
		want       float64
	}{
		{"ListNamespaces", "ok", 1},
		{"GetService", "error", 1},
		{"GetService", "ok", 0},
	} {
		if got := testutil.ToFloat64(m.apiCalls.WithLabelValues(tc.op, tc.result)); got != tc.want {
			t.Errorf("%s{operation=%q,result=%q} = %v, want %v", NameAPICalls, tc.op, tc.result, got, tc.want)
		}
	}
}
