package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
)

// sandboxProcess is the crossfade binary running `sandbox` as a child process.
type sandboxProcess struct {
	cmd *exec.Cmd
	api string
}

func startSandboxProcess(t *testing.T, state string) *sandboxProcess {
	t.Helper()
	cmd := exec.Command(crossfadeBinary(t), "sandbox", "--api", "127.0.0.1:0", "--dns", "127.0.0.1:0", "--state", state, "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &sandboxProcess{cmd: cmd}
	t.Cleanup(func() { p.kill() })
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(20*time.Second, p.kill)
	defer deadline.Stop()
	for lines.Scan() {
		if api, ok := strings.CutPrefix(lines.Text(), "route53 api: "); ok {
			p.api = strings.TrimSpace(api)
			go func() {
				for lines.Scan() {
				}
			}()
			return p
		}
	}
	t.Fatalf("sandbox printed no API address: %v", lines.Err())
	return nil
}

// kill sends SIGKILL: no shutdown code runs, as in a crash.
func (p *sandboxProcess) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

func sdkClient(endpoint string) *route53.Client {
	return route53.New(route53.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

// TestCrashMidBatch kills the sandbox with SIGKILL while 500-change batches are being
// written, restarts it on the same state file, and requires every batch to be there wholly
// or not at all, and every acknowledged batch to be there.
func TestCrashMidBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	const trials, perBatch = 8, 500
	state := filepath.Join(t.TempDir(), "state.db")
	p := startSandboxProcess(t, state)
	ctx := context.Background()
	zone, err := sdkClient(p.api).CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("crash.example.com"), CallerReference: aws.String("crash")})
	if err != nil {
		t.Fatal(err)
	}
	zoneID := zone.HostedZone.Id
	acked := map[int]bool{}
	batchNo := 0
	for trial := range trials {
		client := sdkClient(p.api)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := batchNo
				batchNo++
				changes := make([]types.Change, perBatch)
				for i := range changes {
					changes[i] = types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
						Name: aws.String(fmt.Sprintf("b%04d-%03d.crash.example.com", n, i)), Type: types.RRTypeA, TTL: aws.Int64(60),
						ResourceRecords: []types.ResourceRecord{{Value: aws.String("127.0.0.1")}},
					}}
				}
				_, err := client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: zoneID, ChangeBatch: &types.ChangeBatch{Changes: changes}})
				if err != nil {
					return // the server died under us
				}
				acked[n] = true
			}
		}()
		time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
		p.kill()
		close(stop)
		<-done

		p = startSandboxProcess(t, state)
		counts := map[int]int{}
		in := &route53.ListResourceRecordSetsInput{HostedZoneId: zoneID}
		for {
			page, err := sdkClient(p.api).ListResourceRecordSets(ctx, in)
			if err != nil {
				t.Fatalf("trial %d: list after restart: %v", trial, err)
			}
			for _, s := range page.ResourceRecordSets {
				var b, i int
				if _, err := fmt.Sscanf(*s.Name, "b%04d-%03d.", &b, &i); err == nil {
					counts[b]++
				}
			}
			if !page.IsTruncated {
				break
			}
			in.StartRecordName, in.StartRecordType, in.StartRecordIdentifier = page.NextRecordName, page.NextRecordType, page.NextRecordIdentifier
		}
		for b, n := range counts {
			if n != perBatch {
				t.Fatalf("trial %d: batch %d has %d of %d records after a crash: not atomic", trial, b, n, perBatch)
			}
		}
		for b := range acked {
			if counts[b] != perBatch {
				t.Fatalf("trial %d: batch %d was acknowledged but is gone after the crash", trial, b)
			}
		}
		t.Logf("trial %d: %d batches sent, %d acknowledged, %d on disk", trial, batchNo, len(acked), len(counts))
	}
}
