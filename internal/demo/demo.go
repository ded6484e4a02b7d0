// Package demo runs crossfade's walk-through on the embedded sandbox: it writes a weighted
// record with the real AWS CLI and shows what real DNS queries answer.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// Config names the real tools the demo drives.
type Config struct {
	// AWSCLI is the AWS CLI v2 binary (Debian's awscli at /usr/bin/aws).
	AWSCLI string
	// Dig is the dig binary.
	Dig string
	// Queries is how many DNS queries show the weighted split.
	Queries int
	Out     io.Writer
	Logger  *slog.Logger
}

const (
	zoneName = "demo.crossfade.test"
	appName  = "app." + zoneName
)

// Run starts a sandbox, creates a zone and a blue/green weighted pair with the AWS CLI,
// and queries the sandbox's DNS server with dig.
func Run(ctx context.Context, cfg Config) error {
	for _, tool := range []struct{ flag, path, pkg string }{{"--aws-cli", cfg.AWSCLI, "awscli"}, {"--dig", cfg.Dig, "bind9-dnsutils"}} {
		if _, err := exec.LookPath(tool.path); err != nil {
			return fmt.Errorf("%s %s: not found (install Debian package %s, or run `make demo`, which does)", tool.flag, tool.path, tool.pkg)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	sb, err := sandbox.Start(ctx, sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", Logger: cfg.Logger})
	if err != nil {
		return fmt.Errorf("start sandbox: %w", err)
	}
	defer sb.Close()
	out := cfg.Out
	fmt.Fprintf(out, "== sandbox: Route 53 API at %s, DNS at %s\n\n", sb.APIURL(), sb.DNSAddr())

	tmp, err := os.MkdirTemp("", "crossfade-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	aws := &awsCLI{path: cfg.AWSCLI, endpoint: sb.APIURL(), home: tmp, out: out}

	var created struct{ HostedZone struct{ Id string } }
	ref := fmt.Sprintf("crossfade-demo-%d", time.Now().UnixNano())
	if err := aws.run(ctx, &created, "route53", "create-hosted-zone", "--name", zoneName, "--caller-reference", ref); err != nil {
		return err
	}
	zoneID := strings.TrimPrefix(created.HostedZone.Id, "/hostedzone/")

	batch := filepath.Join(tmp, "batch.json")
	if err := os.WriteFile(batch, []byte(weightedBatch), 0o600); err != nil {
		return err
	}
	if err := aws.run(ctx, nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zoneID, "--change-batch", "file://"+batch); err != nil {
		return err
	}
	var listed struct {
		ResourceRecordSets []struct {
			Name, Type, SetIdentifier string
			Weight                    *int
			TTL                       int
			ResourceRecords           []struct{ Value string }
		}
	}
	if err := aws.run(ctx, &listed, "route53", "list-resource-record-sets", "--hosted-zone-id", zoneID); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tSET ID\tWEIGHT\tTTL\tVALUE")
	for _, s := range listed.ResourceRecordSets {
		w := "-"
		if s.Weight != nil {
			w = fmt.Sprint(*s.Weight)
		}
		v := ""
		if len(s.ResourceRecords) > 0 {
			v = s.ResourceRecords[0].Value
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.Type, s.SetIdentifier, w, s.TTL, v)
	}
	tw.Flush()

	host, port, _ := net.SplitHostPort(sb.DNSAddr())
	digArgs := []string{"@" + host, "-p", port, appName, "A"}
	fmt.Fprintf(out, "\n$ dig %s +noall +answer\n", strings.Join(digArgs, " "))
	one, err := runTool(ctx, cfg.Dig, nil, append(digArgs, "+noall", "+answer")...)
	if err != nil {
		return err
	}
	fmt.Fprint(out, one)

	counts := map[string]int{}
	for range cfg.Queries {
		ans, err := runTool(ctx, cfg.Dig, nil, append(digArgs, "+short")...)
		if err != nil {
			return err
		}
		counts[strings.TrimSpace(ans)]++
	}
	fmt.Fprintf(out, "\n%d queries with dig (weights blue 1 : green 3):\n", cfg.Queries)
	answers := make([]string, 0, len(counts))
	for a := range counts {
		answers = append(answers, a)
	}
	sort.Strings(answers)
	for _, a := range answers {
		fmt.Fprintf(out, "  %-12s %4d  %5.1f%%  %s\n", a, counts[a], 100*float64(counts[a])/float64(cfg.Queries), member[a])
	}
	if len(counts) != 2 {
		return fmt.Errorf("dig saw %d distinct answers %v, want the blue and the green member", len(counts), answers)
	}
	fmt.Fprintln(out, "\nThe cutover itself (gates, pacing, rollback) arrives with `crossfade cutover`.")
	return nil
}

var member = map[string]string{"127.0.0.10": "(blue)", "127.0.0.20": "(green)"}

// weightedBatch is the change batch a newcomer would write by hand: one name, two clusters.
const weightedBatch = `{
  "Comment": "crossfade demo: blue and green members of one name",
  "Changes": [
    {"Action": "CREATE", "ResourceRecordSet": {"Name": "` + appName + `", "Type": "A",
      "SetIdentifier": "blue", "Weight": 1, "TTL": 5, "ResourceRecords": [{"Value": "127.0.0.10"}]}},
    {"Action": "CREATE", "ResourceRecordSet": {"Name": "` + appName + `", "Type": "A",
      "SetIdentifier": "green", "Weight": 3, "TTL": 5, "ResourceRecords": [{"Value": "127.0.0.20"}]}}
  ]
}`

// awsCLI runs the real AWS CLI against the sandbox with throw-away credentials and no user
// configuration, so nothing on the machine changes what it sends.
type awsCLI struct {
	path, endpoint, home string
	out                  io.Writer
}

func (a *awsCLI) run(ctx context.Context, into any, args ...string) error {
	full := append(args, "--endpoint-url", a.endpoint, "--output", "json")
	fmt.Fprintf(a.out, "$ aws %s\n", strings.Join(full, " "))
	env := append(os.Environ(),
		"AWS_ACCESS_KEY_ID=crossfade", "AWS_SECRET_ACCESS_KEY=crossfade", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE="+filepath.Join(a.home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(a.home, "credentials"),
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
	stdout, err := runTool(ctx, a.path, env, full...)
	if err != nil {
		return err
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(stdout), into); err != nil {
		return fmt.Errorf("aws %s: decode output: %w", args[1], err)
	}
	return nil
}

func runTool(ctx context.Context, path string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(path), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
