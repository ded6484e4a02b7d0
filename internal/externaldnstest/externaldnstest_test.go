package externaldnstest

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestPublishesAService runs external-dns against a real kube-apiserver and the sandbox:
// a LoadBalancer Service whose status (written here, as no controller-manager runs) holds
// an IP gets its A record and external-dns's type-prefixed ownership TXT record; the loops
// after that change nothing; Stop ends the process.
func TestPublishesAService(t *testing.T) {
	kube := kubetest.Start(t)
	sb := sandboxtest.Start(t)
	ctx := t.Context()
	out, err := route53test.Client(sb).CreateHostedZone(ctx, &route53.CreateHostedZoneInput{
		Name: aws.String("example.org"), CallerReference: aws.String(t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	zoneID := aws.ToString(out.HostedZone.Id)

	cs := kube.Clientset(t)
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/hostname": "web.example.org",
			"external-dns.alpha.kubernetes.io/ttl":      "60",
		}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	if _, err := cs.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	p := Start(t, Options{Kubeconfig: kube.Kubeconfig, Route53URL: sb.APIURL(), OwnerID: "blue", DomainFilters: []string{"example.org"}})
	want := []string{
		"a-web.example.org. TXT ttl=300 \"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/web\"",
		"web.example.org. A ttl=60 192.0.2.10",
	}
	p.WaitZone(t, zoneID, "the Service's A and TXT records", func(sets []types.ResourceRecordSet) bool {
		return len(published(sets)) == len(want)
	})
	// The loop that wrote them has ended; the next one finds nothing to do.
	before := sandboxtest.APICalls(t, sb)
	p.WaitLoops(t, 2)
	after := sandboxtest.APICalls(t, sb)
	if n := after["ChangeResourceRecordSets ok"] - before["ChangeResourceRecordSets ok"]; n != 0 {
		t.Errorf("%d ChangeResourceRecordSets calls after the records stood", n)
	}
	sets, err := ListSets(ctx, route53test.Client(sb), zoneID)
	if err != nil {
		t.Fatal(err)
	}
	if got := published(sets); !slices.Equal(got, want) {
		t.Errorf("zone:\n got %q\nwant %q", got, want)
	}

	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if gone, _ := p.exited(); !gone {
		t.Fatal("external-dns still running after Stop")
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// published is Render less the apex SOA and NS sets every zone has.
func published(sets []types.ResourceRecordSet) []string {
	return slices.DeleteFunc(Render(sets), func(l string) bool {
		return strings.Contains(l, " SOA ") || strings.Contains(l, " NS ")
	})
}

func TestCountLoops(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      int
	}{
		{"empty", "", 0},
		{"up to date", `{"level":"info","msg":"All records are already up to date","time":"t"}`, 1},
		{"wrote, then idle twice", strings.Join([]string{
			`{"level":"info","msg":"Desired change: CREATE web.example.org A","profile":"default","time":"t"}`,
			`{"level":"info","msg":"2 record(s) were successfully updated","profile":"default","time":"t"}`,
			`{"level":"info","msg":"All records are already up to date","time":"t"}`,
			`{"level":"info","msg":"All records are already up to date","time":"t"}`,
		}, "\n"), 3},
		{"a failed loop ends too", `{"level":"error","msg":"Failed to do run once: soft error","time":"t"}`, 1},
		{"text lines and other messages are not loops", strings.Join([]string{
			`time="t" level=info msg="All records are already up to date"`,
			`{"level":"info","msg":"Instantiating new Kubernetes client","time":"t"}`,
			`{"level":"info","msg":"Applying provider record filter for domains: [example.org.]","time":"t"}`,
		}, "\n"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := countLoops([]byte(tc.log)); got != tc.want {
				t.Errorf("countLoops = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	base := Options{Kubeconfig: "/k", Route53URL: "http://127.0.0.1:1", OwnerID: "blue"}
	got, err := base.args()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--source=service", "--source=ingress", "--provider=aws", "--registry=txt", "--txt-owner-id=blue",
		"--kubeconfig=/k", "--interval=5s", "--aws-zone-type=", "--metrics-address=127.0.0.1:0", "--log-format=json"}
	if !slices.Equal(got, want) {
		t.Errorf("defaults:\n got %q\nwant %q", got, want)
	}

	o := base
	o.Sources, o.Interval, o.ZoneType = []string{"crd"}, time.Minute, "public"
	o.DomainFilters, o.Args = []string{"a.example", "b.example"}, []string{"--policy=upsert-only"}
	got, err = o.args()
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"--source=crd", "--provider=aws", "--registry=txt", "--txt-owner-id=blue", "--kubeconfig=/k",
		"--interval=1m0s", "--aws-zone-type=public", "--metrics-address=127.0.0.1:0", "--log-format=json",
		"--domain-filter=a.example", "--domain-filter=b.example", "--policy=upsert-only"}
	if !slices.Equal(got, want) {
		t.Errorf("set:\n got %q\nwant %q", got, want)
	}

	// v0.23.0 requires --policy: sync unless the test says otherwise; it alone has
	// --enable-legacy-annotation-prefix.
	o = base
	o.Release, o.LegacyAnnotationPrefix = V023, true
	got, err = o.args()
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"--source=service", "--source=ingress", "--provider=aws", "--registry=txt", "--txt-owner-id=blue",
		"--kubeconfig=/k", "--interval=5s", "--aws-zone-type=", "--metrics-address=127.0.0.1:0", "--log-format=json",
		"--enable-legacy-annotation-prefix", "--policy=sync"}
	if !slices.Equal(got, want) {
		t.Errorf("v0.23.0:\n got %q\nwant %q", got, want)
	}
	o = base
	o.Release, o.Registry, o.Args = V023, "crd", []string{"--crd-registry-namespace=dns"}
	got, err = o.args()
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"--source=service", "--source=ingress", "--provider=aws", "--registry=crd", "--txt-owner-id=blue",
		"--kubeconfig=/k", "--interval=5s", "--aws-zone-type=", "--metrics-address=127.0.0.1:0", "--log-format=json",
		"--policy=sync", "--crd-registry-namespace=dns"}
	if !slices.Equal(got, want) {
		t.Errorf("v0.23.0, CRD registry:\n got %q\nwant %q", got, want)
	}
	for _, policy := range [][]string{{"--policy=upsert-only"}, {"--policy", "create-only"}} {
		o = base
		o.Release, o.Args = V023, policy
		got, err = o.args()
		if err != nil {
			t.Fatal(err)
		}
		if n := slices.IndexFunc(got, func(a string) bool { return strings.HasPrefix(a, "--policy") }); !slices.Equal(got[n:], policy) {
			t.Errorf("v0.23.0 with %q: got %q", policy, got)
		}
	}

	legacy := base
	legacy.LegacyAnnotationPrefix = true // v0.21.0 has no such flag
	for _, bad := range []Options{{Route53URL: "u", OwnerID: "o"}, {Kubeconfig: "k", OwnerID: "o"}, {Kubeconfig: "k", Route53URL: "u"}, legacy} {
		if _, err := bad.args(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestEnv(t *testing.T) {
	got := env([]string{"PATH=/bin", "AWS_PROFILE=prod", "AWS_ACCESS_KEY_ID=real", "KUBECONFIG=/root/.kube/config", "HOME=/root", "GOFLAGS=-mod=mod"},
		"/tmp/home", "http://127.0.0.1:9")
	want := []string{"PATH=/bin", "GOFLAGS=-mod=mod", "HOME=/tmp/home", "AWS_ENDPOINT_URL=http://127.0.0.1:9",
		"AWS_ACCESS_KEY_ID=externaldnstest", "AWS_SECRET_ACCESS_KEY=externaldnstest", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
	if !slices.Equal(got, want) {
		t.Errorf("env:\n got %q\nwant %q", got, want)
	}
}

// TestCheckBinary: a missing file, a file that is not a Go binary and a Go binary of
// another module are all refused with a reason; only external-dns Version passes.
func TestCheckBinary(t *testing.T) {
	dir := t.TempDir()
	if err := checkBinary(filepath.Join(dir, Binary), V021); err == nil || !strings.Contains(err.Error(), "not built") {
		t.Errorf("missing: %v", err)
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkBinary(script, V021); err == nil || !strings.Contains(err.Error(), "build information") {
		t.Errorf("not a Go binary: %v", err)
	}
	self, err := os.Executable() // the test binary: a Go binary of another module
	if err != nil {
		t.Fatal(err)
	}
	if err := checkBinary(self, V021); err == nil || !strings.Contains(err.Error(), "want "+Module+"@"+Version) {
		t.Errorf("another module: %v", err)
	}
	if err := checkBinary(self, V023); err == nil || !strings.Contains(err.Error(), "want "+Module+"@v0.23.0") {
		t.Errorf("another module, v0.23.0: %v", err)
	}
	if testing.Short() {
		return
	}
	for _, rel := range Releases {
		if path := filepath.Join(kubetest.BinDir(), rel.Binary); checkBinary(path, rel) != nil && testenv.CI() {
			t.Errorf("under CI=true external-dns %s must be built: %v", rel.Version, checkBinary(path, rel))
		}
	}
}

// TestStampedVersion: a binary `go build` made in a copy of the module says (devel); its
// version is the one its -ldflags stamp, as deps.sh's build_external_dns_v023 sets it.
func TestStampedVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"stamped", []debug.BuildSetting{{Key: "-trimpath", Value: "true"},
			{Key: "-ldflags", Value: "-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=v0.23.0"}}, "v0.23.0"},
		{"stamped first", []debug.BuildSetting{{Key: "-ldflags", Value: "-X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=v0.23.0 -s"}}, "v0.23.0"},
		{"other -X", []debug.BuildSetting{{Key: "-ldflags", Value: "-X main.Version=v0.23.0"}}, "(devel)"},
		{"no ldflags", nil, "(devel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stampedVersion(&debug.BuildInfo{Settings: tc.settings}); got != tc.want {
				t.Errorf("stampedVersion = %q, want %q", got, tc.want)
			}
		})
	}
}
