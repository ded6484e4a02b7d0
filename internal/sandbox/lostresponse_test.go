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
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

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
			client := route53.New(route53.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String(sb.APIURL()),
				Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
				Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
					o.MaxAttempts = 2
					o.MaxBackoff = 10 * time.Millisecond
				}),
			})
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
