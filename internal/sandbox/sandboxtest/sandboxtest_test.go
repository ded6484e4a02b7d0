package sandboxtest

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/route53api"
)

// refused reports whether nothing listens on the API address of sb any more.
func refused(t *testing.T, sb *sandbox.Sandbox) bool {
	t.Helper()
	u, err := url.Parse(sb.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return true
	}
	conn.Close()
	return false
}

// TestStartStateful: stop closes the sandbox, one started again on the same state file
// serves what the first one held, stop is safe to call twice, and a sandbox the test
// never stopped is closed when the test ends.
func TestStartStateful(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.db")
	first, stop := StartStateful(t, state)
	if _, err := Route53Client(first).CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"),
		CallerReference: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !refused(t, first) {
		t.Fatalf("%s still accepts after stop", first.APIURL())
	}
	if err := stop(); err != nil {
		t.Errorf("stop again: %v", err)
	}

	second := StartWith(t, sandbox.Config{StatePath: state})
	zones, err := Route53Client(second).ListHostedZones(ctx, &route53.ListHostedZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(zones.HostedZones) != 1 || aws.ToString(zones.HostedZones[0].Name) != "example.com." {
		t.Errorf("zones after the restart on %s: %+v, want example.com.", state, zones.HostedZones)
	}

	var unstopped *sandbox.Sandbox
	t.Run("never stopped", func(t *testing.T) {
		unstopped, _ = StartStateful(t, filepath.Join(t.TempDir(), "state.db"))
		if refused(t, unstopped) {
			t.Fatalf("%s refuses while running", unstopped.APIURL())
		}
	})
	if !refused(t, unstopped) {
		t.Errorf("%s still accepts after its test ended", unstopped.APIURL())
	}
}

// TestCounts reads the sandbox's counters over its /metrics: API calls by operation and
// result, failed calls included, and the record-set changes by action.
func TestCounts(t *testing.T) {
	ctx := context.Background()
	sb := Start(t)
	r53 := Route53Client(sb)
	zone, err := r53.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("c")})
	if err != nil {
		t.Fatal(err)
	}
	var nf *r53types.NoSuchHostedZone
	if _, err := r53.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String("Z0000NONE")}); !errors.As(err, &nf) {
		t.Fatalf("GetHostedZone of a zone that does not exist: %v, want NoSuchHostedZone", err)
	}
	rr := func(action r53types.ChangeAction, name string) r53types.Change {
		return r53types.Change{Action: action, ResourceRecordSet: &r53types.ResourceRecordSet{Name: aws.String(name), Type: r53types.RRTypeA,
			TTL: aws.Int64(60), ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}}
	}
	if _, err := r53.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: zone.HostedZone.Id,
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{rr(r53types.ChangeActionCreate, "a.example.com"),
			rr(r53types.ChangeActionCreate, "b.example.com"), rr(r53types.ChangeActionUpsert, "c.example.com")}}}); err != nil {
		t.Fatal(err)
	}

	calls := APICalls(t, sb)
	for _, want := range []string{"CreateHostedZone ok", "GetHostedZone NoSuchHostedZone", "ChangeResourceRecordSets ok"} {
		if calls[want] != 1 {
			t.Errorf("calls[%q] = %d, want 1 (all: %v)", want, calls[want], calls)
		}
	}
	if want := map[string]int{"CREATE": 2, "UPSERT": 1}; !maps.Equal(Counts(t, sb, route53api.RecordChangesMetric, "action"), want) {
		t.Errorf("record changes %v, want %v", Counts(t, sb, route53api.RecordChangesMetric, "action"), want)
	}
}
