package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestLostResponseAfterCommit is the lost-response case through the real SDK: the sandbox
// commits a CREATE and then answers HTTP 500, or closes the connection unanswered; the
// SDK retries and the retry is refused because the set already exists. Every attempt is
// counted on /metrics, and the committed change is there for GetChange.
func TestLostResponseAfterCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults string
		first  string // the first attempt's result label
	}{
		{"fail", `{"commitThenFailRate": 1, "operations": ["ChangeResourceRecordSets"]}`, "InternalFailure"},
		{"drop", `{"commitThenDropRate": 1, "operations": ["ChangeResourceRecordSets"]}`, "ConnectionDropped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			sb := sandboxtest.StartWith(t, sandbox.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			ctx := context.Background()
			client := route53.NewFromConfig(twoAttempts(sb))
			zone, err := client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("r1")})
			if err != nil {
				t.Fatal(err)
			}
			sandboxtest.SetFaults(t, sb, tc.faults)

			_, err = client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
				HostedZoneId: zone.HostedZone.Id,
				ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
					Name: aws.String("www.example.com"), Type: types.RRTypeA, TTL: aws.Int64(60),
					ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}},
				}}}},
			})
			var icb *types.InvalidChangeBatch
			want := "[Tried to create resource record set [name='www.example.com.', type='A'] but it already exists]"
			if !errors.As(err, &icb) || icb.ErrorMessage() != want {
				t.Fatalf("ChangeResourceRecordSets: %v\nwant InvalidChangeBatch %s", err, want)
			}

			calls := sandboxtest.APICalls(t, sb)
			if calls["ChangeResourceRecordSets "+tc.first] != 1 || calls["ChangeResourceRecordSets InvalidChangeBatch"] != 1 || calls["ChangeResourceRecordSets ok"] != 0 {
				t.Fatalf("ChangeResourceRecordSets attempts on /metrics: %v; want one %s, then one InvalidChangeBatch", calls, tc.first)
			}
			// The first attempt committed: the set is served and its change id exists.
			sets, err := client.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{
				HostedZoneId: zone.HostedZone.Id, StartRecordName: aws.String("www.example.com"), StartRecordType: types.RRTypeA, MaxItems: aws.Int32(1),
			})
			if err != nil || len(sets.ResourceRecordSets) != 1 || aws.ToString(sets.ResourceRecordSets[0].Name) != "www.example.com." {
				t.Fatalf("ListResourceRecordSets after the lost response: %+v, %v", sets, err)
			}
			id := appliedChange(t, logs)
			got, err := client.GetChange(ctx, &route53.GetChangeInput{Id: aws.String(id)})
			if err != nil || got.ChangeInfo.Status != types.ChangeStatusInsync {
				t.Fatalf("GetChange %s of the lost response: %+v, %v", id, got, err)
			}
		})
	}
}

// TestCloudWatchFaults injects each fault into the sandbox's CloudWatch API, as into the
// others, and reads through the real aws-sdk-go-v2 CloudWatch client (rpc-v2-cbor): the
// client gets the fault, never a result, and retries what it retries elsewhere (every
// attempt counted on /metrics). A CloudWatch read commits nothing, so a response lost after
// it ran is simply a failed read; once the faults are cleared the same read answers.
func TestCloudWatchFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults string
		code   string // the SDK's error code; "" for a dropped connection
		result string // the result label of each attempt
	}{
		{"throttle", `{"throttleRate": 1, "operations": ["GetMetricData"]}`, "Throttling", "Throttling"},
		{"prior request", `{"priorRequestRate": 1, "operations": ["GetMetricData"]}`, "PriorRequestNotComplete", "PriorRequestNotComplete"},
		{"server error", `{"serverErrorRate": 1, "operations": ["GetMetricData"]}`, "InternalFailure", "InternalFailure"},
		{"lost after the read", `{"commitThenFailRate": 1, "operations": ["GetMetricData"]}`, "InternalFailure", "InternalFailure"},
		{"dropped after the read", `{"commitThenDropRate": 1, "operations": ["GetMetricData"]}`, "", "ConnectionDropped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			ctx := context.Background()
			client := cloudwatch.NewFromConfig(twoAttempts(sb))
			now := time.Now().UTC().Truncate(time.Minute)
			in := &cloudwatch.GetMetricDataInput{
				StartTime: aws.Time(now.Add(-5 * time.Minute)), EndTime: aws.Time(now),
				MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("m1"), MetricStat: &cwtypes.MetricStat{
					Metric: &cwtypes.Metric{Namespace: aws.String("AWS/ApplicationELB"), MetricName: aws.String("RequestCount"),
						Dimensions: []cwtypes.Dimension{{Name: aws.String("LoadBalancer"), Value: aws.String("app/web/50dc6c495c0c9188")}}},
					Period: aws.Int32(60), Stat: aws.String("Sum")}}},
			}
			sandboxtest.SetFaults(t, sb, tc.faults)

			out, err := client.GetMetricData(ctx, in)
			if err == nil || out != nil {
				t.Fatalf("GetMetricData under %s: result %t, error %v; want an error and no result", tc.faults, out != nil, err)
			}
			var ae smithy.APIError
			switch {
			case tc.code == "" && errors.As(err, &ae):
				t.Fatalf("GetMetricData under %s: API error %v, want the connection dropped", tc.faults, err)
			case tc.code != "" && (!errors.As(err, &ae) || ae.ErrorCode() != tc.code):
				t.Fatalf("GetMetricData under %s: %v, want %s", tc.faults, err, tc.code)
			}
			calls := sandboxtest.APICalls(t, sb)
			if calls["GetMetricData "+tc.result] != 2 || calls["GetMetricData ok"] != 0 {
				t.Fatalf("GetMetricData attempts on /metrics: %v; want two %s (the SDK retries it), none ok", calls, tc.result)
			}

			sandboxtest.SetFaults(t, sb, `{}`)
			if out, err := client.GetMetricData(ctx, in); err != nil || len(out.MetricDataResults) != 1 {
				t.Fatalf("GetMetricData with the faults cleared: %+v, %v", out, err)
			}
		})
	}
}

// twoAttempts configures an SDK client of sb whose standard retryer makes one retry after
// a short backoff.
func twoAttempts(sb *sandbox.Sandbox) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 2
				o.MaxBackoff = 10 * time.Millisecond
			})
		},
	}
}

// appliedChange returns the id of the one change batch the sandbox logged as applied: the
// client never saw it.
func appliedChange(t *testing.T, logs *syncBuffer) string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			Msg    string `json:"msg"`
			Change string `json:"change"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg == "change batch applied" {
			ids = append(ids, rec.Change)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d change batches logged as applied, want 1: %v", len(ids), ids)
	}
	return ids[0]
}

// syncBuffer is a bytes.Buffer the sandbox's goroutines may log into while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
