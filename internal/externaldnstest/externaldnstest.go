// Package externaldnstest runs external-dns, the peer crossfade must interoperate with and
// beat, as a real process in tests: a release scripts/deps.sh builds from the Go module
// proxy into the same cache as kube-apiserver and etcd (V021, the default, or V023: see
// Release for what differs), pointed at a test's
// kube-apiserver (internal/kubetest) and at the sandbox's Route 53 API through
// AWS_ENDPOINT_URL, with dummy credentials and nothing else of the machine's AWS or
// Kubernetes configuration.
//
// external-dns logs one line when a sync loop ends ("All records are already up to date",
// "N record(s) were successfully updated", "Failed to do run once"); Process counts them,
// so a test can wait for loops instead of sleeping for intervals.
package externaldnstest

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// Version is the external-dns release Start runs unless Options.Release says otherwise:
// V021's.
const Version = "v0.21.0"

// Binary is the name of V021's binary in kubetest.BinDir().
const Binary = "external-dns"

// Release is one external-dns release scripts/deps.sh builds and Start can run, with what
// differs between releases that a test must know.
type Release struct {
	// Version is its module version, as its binary's build information records it.
	Version string
	// Binary is its file name in kubetest.BinDir().
	Binary string
	// AnnotationPrefix is the prefix it reads annotations under by default.
	AnnotationPrefix string
	// LegacyAnnotationPrefix is the prefix --enable-legacy-annotation-prefix makes it read
	// too (the new prefix wins when an object has both); "" when it has no such flag.
	LegacyAnnotationPrefix string
	// PolicyRequired is true when it refuses to start without --policy; Start then passes
	// --policy=sync unless Options.Args has one.
	PolicyRequired bool
	// AliasAOwnershipPrefix prefixes the name of the TXT record that owns an alias A record:
	// v0.21.0 keys it on CNAME ("cname-"), v0.23.0 on the record's own type ("a-").
	AliasAOwnershipPrefix string
}

// V021 is external-dns v0.21.0, $bin/external-dns: the release crossfade was first proven
// against, and the default.
var V021 = Release{
	Version:               Version,
	Binary:                Binary,
	AnnotationPrefix:      "external-dns.alpha.kubernetes.io/",
	AliasAOwnershipPrefix: "cname-",
}

// V023 is external-dns v0.23.0, $bin/external-dns-v0.23.0 (scripts/deps.sh,
// build_external_dns_v023): the new default annotation prefix (PR 6424) with the old one
// behind --enable-legacy-annotation-prefix (6703), --policy required (6508), and alias A
// records owned by an "a-" TXT record (6523).
var V023 = Release{
	Version:                "v0.23.0",
	Binary:                 "external-dns-v0.23.0",
	AnnotationPrefix:       "external-dns.kubernetes.io/",
	LegacyAnnotationPrefix: "external-dns.alpha.kubernetes.io/",
	PolicyRequired:         true,
	AliasAOwnershipPrefix:  "a-",
}

// Releases are the releases Start can run, oldest first.
var Releases = []Release{V021, V023}

// Module is external-dns's module path, as its binary's build information records it.
const Module = "sigs.k8s.io/external-dns"

// DefaultInterval is the sync interval Start uses unless told otherwise: short, so that a
// test waits for a few loops in seconds (external-dns's own default is 1 m).
const DefaultInterval = 5 * time.Second

const (
	// waitTimeout bounds WaitZone and WaitLoops. It is a failure bound, not an
	// expectation: a loop takes well under a second, but a loaded 2-core machine running
	// several suites may be slow to start the process.
	waitTimeout = 3 * time.Minute
	// pollInterval is how often WaitZone lists the zone and WaitLoops reads the log.
	pollInterval = 100 * time.Millisecond
	// logTail is how many lines of external-dns's log a failed test shows.
	logTail = 80
)

// The messages external-dns v0.21.0 and v0.23.0 log when a sync loop ends (controller.RunOnce and
// Run; provider/aws ApplyChanges logs the second once per zone it wrote).
var loopEnds = []string{
	"All records are already up to date",
	"record(s) were successfully updated",
	"Failed to do run once",
}

// Options configures one external-dns process.
type Options struct {
	// Kubeconfig is the file external-dns reads the cluster from (kubetest.Cluster's).
	Kubeconfig string
	// Route53URL is the Route 53 API it talks to (the sandbox's APIURL), given as
	// AWS_ENDPOINT_URL.
	Route53URL string
	// OwnerID is --txt-owner-id; required, as it is what ownership is compared by.
	OwnerID string
	// Sources are --source values; nil means service and ingress.
	Sources []string
	// Interval is --interval; 0 means DefaultInterval.
	Interval time.Duration
	// ZoneType is --aws-zone-type: "public", "private" or "" for both.
	ZoneType string
	// DomainFilters are --domain-filter values.
	DomainFilters []string
	// Args are further flags, appended last (e.g. "--policy=upsert-only", "--events").
	Args []string
	// Release is the external-dns to run; the zero Release means V021.
	Release Release
	// LegacyAnnotationPrefix passes --enable-legacy-annotation-prefix; only for a Release
	// that has the flag.
	LegacyAnnotationPrefix bool
	// Registry is --registry: "" means txt. (Not in Args: v0.23.0 refuses a repeated flag.)
	Registry string
}

// release is o.Release, V021 when unset.
func (o Options) release() Release {
	if o.Release.Version == "" {
		return V021
	}
	return o.Release
}

// Process is a running external-dns. Start returns it; it is stopped when the test ends.
type Process struct {
	// Log is the path of its log, one JSON object per line.
	Log string
	// Args are the flags it was started with.
	Args []string

	route53URL string
	proc       *child.Process
}

// Start runs external-dns opts.Release from kubetest.BinDir() with opts. It skips under
// -short; when the binary is missing or is not that release it fails the test under CI=true (CI builds it,
// so its absence is a broken setup) and skips it otherwise, saying how to build it. The
// process is stopped when t ends, and its log shown if t failed.
func Start(t testing.TB, opts Options) *Process {
	t.Helper()
	if testing.Short() {
		t.Skip("externaldnstest: runs external-dns; not under -short")
	}
	rel := opts.release()
	bin := filepath.Join(kubetest.BinDir(), rel.Binary)
	if err := checkBinary(bin, rel); err != nil {
		testenv.Missingf(t, "externaldnstest: %v: `make test` builds it (scripts/deps.sh test)", err)
	}
	args, err := opts.args()
	if err != nil {
		t.Fatalf("externaldnstest: %v", err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := start(bin, filepath.Join(dir, "external-dns.log"), args, env(os.Environ(), home, opts.Route53URL))
	if err != nil {
		t.Fatalf("externaldnstest: %v", err)
	}
	p.route53URL = opts.Route53URL
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("externaldnstest: %v", err)
		}
		if t.Failed() {
			t.Logf("externaldnstest: external-dns %s log (last %d lines of %s):\n%s", strings.Join(p.Args, " "), logTail, p.Log, p.tail(logTail))
		}
	})
	return p
}

// checkBinary says why path is not external-dns rel, nil if it is. The version is read
// from the binary's build information: module sigs.k8s.io/external-dns at rel.Version,
// which `go install module@version` records whatever its -ldflags. A release built with
// `go build .` in a copy of its module (v0.23.0: deps.sh's build_external_dns_v023) is
// recorded as (devel); its version is then the one its -ldflags stamp into
// pkg/apis/externaldns.Version, which the build information records too.
func checkBinary(path string, rel Release) error {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s not built in %s", rel.Binary, filepath.Dir(path))
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: no Go build information: %w", path, err)
	}
	version := info.Main.Version
	if version == "(devel)" {
		version = stampedVersion(info)
	}
	if info.Main.Path != Module || version != rel.Version {
		return fmt.Errorf("%s is %s@%s, want %s@%s", path, info.Main.Path, version, Module, rel.Version)
	}
	return nil
}

// versionFlag is the -X flag external-dns's release build sets its version with.
const versionFlag = "-X " + Module + "/pkg/apis/externaldns.Version="

// stampedVersion is the version info's -ldflags set with versionFlag, "(devel)" if none.
func stampedVersion(info *buildinfo.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key != "-ldflags" {
			continue
		}
		if _, v, ok := strings.Cut(s.Value, versionFlag); ok {
			v, _, _ = strings.Cut(v, " ")
			return v
		}
	}
	return "(devel)"
}

// args renders opts as external-dns's command line.
func (o Options) args() ([]string, error) {
	switch {
	case o.Kubeconfig == "":
		return nil, errors.New("options: Kubeconfig is empty")
	case o.Route53URL == "":
		return nil, errors.New("options: Route53URL is empty")
	case o.OwnerID == "":
		return nil, errors.New("options: OwnerID is empty")
	}
	rel := o.release()
	if o.LegacyAnnotationPrefix && rel.LegacyAnnotationPrefix == "" {
		return nil, fmt.Errorf("options: LegacyAnnotationPrefix: external-dns %s has no --enable-legacy-annotation-prefix", rel.Version)
	}
	sources := o.Sources
	if sources == nil {
		sources = []string{"service", "ingress"}
	}
	interval := o.Interval
	if interval == 0 {
		interval = DefaultInterval
	}
	registry := o.Registry
	if registry == "" {
		registry = "txt"
	}
	var args []string
	for _, s := range sources {
		args = append(args, "--source="+s)
	}
	args = append(args,
		"--provider=aws",
		"--registry="+registry,
		"--txt-owner-id="+o.OwnerID,
		"--kubeconfig="+o.Kubeconfig,
		"--interval="+interval.String(),
		"--aws-zone-type="+o.ZoneType,
		// Its default, :7979, listens on every interface: tests stay on loopback.
		"--metrics-address=127.0.0.1:0",
		"--log-format=json",
	)
	for _, d := range o.DomainFilters {
		args = append(args, "--domain-filter="+d)
	}
	if o.LegacyAnnotationPrefix {
		args = append(args, "--enable-legacy-annotation-prefix")
	}
	if rel.PolicyRequired && !slices.ContainsFunc(o.Args, func(a string) bool { return a == "--policy" || strings.HasPrefix(a, "--policy=") }) {
		// external-dns's default before it was required; crossfade's too.
		args = append(args, "--policy=sync")
	}
	return append(args, o.Args...), nil
}

// env is the environment external-dns runs with: the test's, less everything that would
// point it at a real AWS account or another cluster, plus the sandbox's endpoint, dummy
// static credentials (the SDK's chain stops at them), a region, and home as HOME so that no
// ~/.aws or ~/.kube file of the machine is read. Instance metadata is switched off: the
// SDK would otherwise try 169.254.169.254, which is not loopback.
func env(base []string, home, route53URL string) []string {
	out := make([]string, 0, len(base)+8)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || k == "KUBECONFIG" || k == "HOME" {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"HOME="+home,
		"AWS_ENDPOINT_URL="+route53URL,
		"AWS_ACCESS_KEY_ID=externaldnstest",
		"AWS_SECRET_ACCESS_KEY=externaldnstest",
		"AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
	)
}

// start runs bin in its own process group with its output in logPath.
func start(bin, logPath string, args, env []string) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	c, err := child.Start(cmd, logPath)
	if err != nil {
		return nil, err
	}
	return &Process{Log: logPath, Args: args, proc: c}, nil
}

// Stop kills external-dns and waits until it has exited. It may be called more than
// once; the test's cleanup calls it too.
//
// SIGKILL: a test stops external-dns between loops it has waited for, and a batch in
// flight is atomic in the sandbox anyway; nothing is gained by a graceful exit.
func (p *Process) Stop() error {
	return p.proc.Kill()
}

// exited reports whether the process has ended, and how.
func (p *Process) exited() (bool, error) {
	select {
	case <-p.proc.Done():
		return true, p.proc.Err()
	default:
		return false, nil
	}
}

// Loops returns how many sync loops external-dns has ended so far, read from its log.
func (p *Process) Loops() int {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return 0
	}
	return countLoops(data)
}

// countLoops counts the lines of an external-dns JSON log that end a sync loop. A loop
// that wrote to several zones logs one line per zone and is counted once per zone; a
// waiter for "at least n loops" only ever waits less than n intervals for it, never more.
func countLoops(log []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if slices.ContainsFunc(loopEnds, func(end string) bool { return strings.Contains(line.Msg, end) }) {
			n++
		}
	}
	return n
}

// WaitLoops waits until external-dns has ended n more sync loops than it had when called,
// and returns the new count. It fails the test if external-dns exits first.
func (p *Process) WaitLoops(t testing.TB, n int) int {
	t.Helper()
	want := p.Loops() + n
	var got int
	p.wait(t, fmt.Sprintf("%d more sync loops", n), func() (bool, string) {
		got = p.Loops()
		return got >= want, fmt.Sprintf("%d of %d loops", got, want)
	})
	return got
}

// WaitZone lists the hosted zone zoneID every pollInterval until ready accepts its record
// sets, as Route 53 returns them, and returns them. It fails the test if external-dns
// exits first, or if the zone does not get there within a bound that only a broken run
// reaches; what describes the wait in that message.
func (p *Process) WaitZone(t testing.TB, zoneID, what string, ready func([]types.ResourceRecordSet) bool) []types.ResourceRecordSet {
	t.Helper()
	api := route53.New(route53.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(p.route53URL),
		Credentials:  credentials.NewStaticCredentialsProvider("externaldnstest", "externaldnstest", ""),
	})
	var sets []types.ResourceRecordSet
	p.wait(t, what, func() (bool, string) {
		var err error
		sets, err = ListSets(t.Context(), api, zoneID)
		if err != nil {
			return false, err.Error()
		}
		return ready(sets), fmt.Sprintf("zone holds %s", strings.Join(Render(sets), "; "))
	})
	return sets
}

// wait polls ready until it holds, external-dns exits, or waitTimeout passes; state
// describes the last poll in the failure message.
func (p *Process) wait(t testing.TB, what string, ready func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, state := ready()
		if ok {
			return
		}
		if gone, err := p.exited(); gone {
			t.Fatalf("externaldnstest: waiting for %s: external-dns exited (%v); last: %s", what, err, state)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("externaldnstest: waiting for %s: %v; last: %s", what, context.Cause(ctx), state)
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of the log.
func (p *Process) tail(n int) string { return child.Tail(p.Log, n) }

// ListSets returns every record set of the hosted zone zoneID, as Route 53 returns them.
func ListSets(ctx context.Context, api *route53.Client, zoneID string) ([]types.ResourceRecordSet, error) {
	var out []types.ResourceRecordSet
	pages := route53.NewListResourceRecordSetsPaginator(api, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("zone %s: list record sets: %w", zoneID, err)
		}
		out = append(out, page.ResourceRecordSets...)
	}
	return out, nil
}

// Render writes each record set on one line, with everything Route 53 holds for it
// (name, type, set identifier, weight or failover role, TTL, values, alias target with
// its zone and EvaluateTargetHealth, health check), sorted: two listings that render the
// same hold the same records.
func Render(sets []types.ResourceRecordSet) []string {
	out := make([]string, 0, len(sets))
	for _, rs := range sets {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", aws.ToString(rs.Name), rs.Type)
		if rs.SetIdentifier != nil {
			fmt.Fprintf(&b, " [%s]", aws.ToString(rs.SetIdentifier))
		}
		if rs.Weight != nil {
			fmt.Fprintf(&b, " weight=%d", *rs.Weight)
		}
		if rs.Failover != "" {
			fmt.Fprintf(&b, " failover=%s", rs.Failover)
		}
		if rs.TTL != nil {
			fmt.Fprintf(&b, " ttl=%d", *rs.TTL)
		}
		if a := rs.AliasTarget; a != nil {
			fmt.Fprintf(&b, " alias=%s zone=%s evaluate=%t", aws.ToString(a.DNSName), aws.ToString(a.HostedZoneId), a.EvaluateTargetHealth)
		}
		values := make([]string, 0, len(rs.ResourceRecords))
		for _, r := range rs.ResourceRecords {
			values = append(values, aws.ToString(r.Value))
		}
		slices.Sort(values)
		if len(values) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(values, " "))
		}
		if rs.HealthCheckId != nil {
			fmt.Fprintf(&b, " health-check=%s", aws.ToString(rs.HealthCheckId))
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}
