package controller

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/source"
)

type sentEvent struct {
	ref            corev1.ObjectReference
	typ, reason, m string
}

type recorded struct{ events []sentEvent }

func (r *recorded) Event(obj runtime.Object, typ, reason, msg string) {
	r.events = append(r.events, sentEvent{*obj.(*corev1.ObjectReference), typ, reason, msg})
}

type uids map[string]types.UID

func (u uids) UID(kind, ns, name string) types.UID { return u[kind+"/"+ns+"/"+name] }
func (u uids) APIVersion(kind string) string {
	if kind == "Service" {
		return "v1"
	}
	return ""
}

func TestEventReporterSendsEachProblemOnce(t *testing.T) {
	web := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "web"}
	invalid := source.Result{Invalid: []*endpoint.InvalidError{{Object: web,
		Field: "annotation external-dns.alpha.kubernetes.io/aws-weight", Value: "abc", Reason: "want an integer 0..255"}}}
	api := &endpoint.Endpoint{Name: "api.example.com", Type: "A", Labels: endpoint.Labels{endpoint.ResourceLabel: "crd/team/api"}}
	conflicted := source.Result{Endpoints: []*endpoint.Endpoint{api}}
	rep := &Report{Zones: []ZoneReport{{Zone: provider.Zone{Name: "example.com"},
		Changes: &changes.Set{Conflicts: []changes.Conflict{{Key: api.Key(), Reason: "held by owner green"}}}}}}

	rec := &recorded{}
	r := NewEventReporter(rec, uids{"Service/default/web": "uid-web"}, time.Hour, nil)
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		name string
		res  source.Result
		rep  *Report
		at   time.Duration
		want []string // reason kind/namespace/name
	}{
		{"new problem", invalid, nil, 0, []string{"InvalidDNSInput Service/default/web"}},
		{"same problem, next reconcile", invalid, nil, time.Second, nil},
		{"still there after reemit", invalid, nil, time.Hour + time.Second, []string{"InvalidDNSInput Service/default/web"}},
		{"fixed", source.Result{}, nil, time.Hour + 2*time.Second, nil},
		{"back again", invalid, nil, time.Hour + 3*time.Second, []string{"InvalidDNSInput Service/default/web"}},
		{"conflict on the object that wants the record", conflicted, rep, time.Hour + 4*time.Second, []string{"DNSRecordConflict DNSEndpoint/team/api"}},
	}
	for _, s := range steps {
		rec.events = nil
		r.Report(s.res, s.rep, t0.Add(s.at))
		var got []string
		for _, e := range rec.events {
			if e.typ != corev1.EventTypeWarning {
				t.Errorf("%s: event type %s, want Warning", s.name, e.typ)
			}
			got = append(got, e.reason+" "+e.ref.Kind+"/"+e.ref.Namespace+"/"+e.ref.Name)
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: sent %q, want %q", s.name, got, s.want)
		}
	}
	rec2 := &recorded{}
	NewEventReporter(rec2, uids{"Service/default/web": "uid-web"}, 0, nil).Report(invalid, nil, t0)
	first := rec2.events[0]
	if first.ref.UID != "uid-web" || first.ref.APIVersion != "v1" {
		t.Errorf("event reference %+v lacks the UID or API version kubectl describe needs", first.ref)
	}
	if want := `annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255`; !strings.Contains(first.m, want) {
		t.Errorf("message %q does not name field, value and reason (%q)", first.m, want)
	}
}

// TestEventReporterCloudMap: the Cloud Map publisher's problems get events of their own
// reasons, in the same call as the DNS side's (a problem absent from the call is gone), once
// per problem.
func TestEventReporterCloudMap(t *testing.T) {
	web := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "web"}
	dnsInvalid := source.Result{Invalid: []*endpoint.InvalidError{{Object: web, Field: "annotation external-dns.alpha.kubernetes.io/ttl", Value: "x", Reason: "want seconds"}}}
	cm := &cloudmap.Report{
		Invalid: []*endpoint.InvalidError{{Object: web, Field: "annotation " + cloudmap.AnnotationAttributes, Value: "cluster=green", Reason: "reserved"}},
		Problems: []cloudmap.Problem{
			{Object: web, Kind: cloudmap.ProblemConflict, ID: "blue-1", Message: "instance blue-1 is registered by another registrar"},
			{Object: web, Kind: cloudmap.ProblemRefused, ID: "blue-2", Message: "refused"},
		}}
	rec := &recorded{}
	r := NewEventReporter(rec, uids{"Service/default/web": "uid-web"}, time.Hour, nil)
	t0 := time.Unix(1_700_000_000, 0)
	for _, step := range []struct {
		name string
		cm   *cloudmap.Report
		want []string
	}{
		{"both sides", cm, []string{"InvalidDNSInput", "InvalidCloudMapInput", "CloudMapInstanceConflict", "CloudMapInstanceRefused"}},
		{"again: nothing new", cm, nil},
		{"Cloud Map fixed, then broken again", &cloudmap.Report{}, nil},
		{"broken again", cm, []string{"InvalidCloudMapInput", "CloudMapInstanceConflict", "CloudMapInstanceRefused"}},
	} {
		rec.events = nil
		r.ReportAll(dnsInvalid, nil, step.cm, t0)
		var got []string
		for _, e := range rec.events {
			got = append(got, e.reason)
			if e.ref.UID != "uid-web" || e.typ != corev1.EventTypeWarning {
				t.Errorf("%s: event %+v", step.name, e)
			}
		}
		if !slices.Equal(got, step.want) {
			t.Errorf("%s: sent %q, want %q", step.name, got, step.want)
		}
	}
}

// TestEventReporterCloudMapHeldRefusal: a Cloud Map refusal, like a DNS one, is not sent
// again while its op is held back (its message already says when it is retried), even
// past the reemit interval; after the retry it is news again.
func TestEventReporterCloudMapHeldRefusal(t *testing.T) {
	web := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "web"}
	t0 := time.Unix(1_700_000_000, 0)
	cm := &cloudmap.Report{Problems: []cloudmap.Problem{{Object: web, Kind: cloudmap.ProblemRefused, ID: "blue-2",
		Message: "refused; it is sent again after 2h", Until: t0.Add(2 * time.Hour)}}}
	rec := &recorded{}
	r := NewEventReporter(rec, nil, 50*time.Minute, nil)
	for _, step := range []struct {
		name string
		at   time.Duration
		want int
	}{
		{"refused", 0, 1},
		{"held past the reemit interval", time.Hour, 0},
		{"past its retry", 2*time.Hour + time.Second, 1},
	} {
		rec.events = nil
		r.ReportAll(source.Result{}, nil, cm, t0.Add(step.at))
		if len(rec.events) != step.want {
			t.Errorf("%s: %d events, want %d", step.name, len(rec.events), step.want)
		}
	}
}

func TestReasonOf(t *testing.T) {
	for field, want := range map[string]string{
		"annotation external-dns.alpha.kubernetes.io/aws-weight": "aws-weight",
		// Any prefix: the name is what counts.
		"annotation crossfade.io/ttl":                 "ttl",
		"annotation crossfade.io/cloudmap-attributes": "cloudmap-attributes",
		"spec.endpoints[3].recordTTL":                 "spec.endpoints[].recordTTL",
		"spec.rules[0].host":                          "spec.rules[].host",
		// Names users choose are bounded: a series is never deleted.
		"annotation crossfade.io/weight":                                                "other",
		"annotation external-dns.alpha.kubernetes.io/aws-typo-7":                        "aws-other",
		"annotation external-dns.kubernetes.io/hostnme":                                 "other",
		"spec.endpoints[0].providerSpecific[1] (aws/weight)":                            "spec.endpoints[].providerSpecific[] (aws/weight)",
		"spec.endpoints[0].providerSpecific[2] (alias)":                                 "spec.endpoints[].providerSpecific[] (alias)",
		"spec.endpoints[0].providerSpecific[1] (aws/typo-3)":                            "spec.endpoints[].providerSpecific[] (aws-other)",
		"spec.endpoints[0].providerSpecific[1] (aws/a [b] of c; d)":                     "spec.endpoints[].providerSpecific[] (aws-other)",
		"spec.endpoints[0].providerSpecific[1] (zz)":                                    "spec.endpoints[].providerSpecific[] (other)",
		"annotation external-dns.alpha.kubernetes.io/target of gateway istio-system/gw": "target",
		"spec.listeners[2].hostname of gateway team/gw":                                 "spec.listeners[].hostname",
		"EndpointSlice default/web-x7k2p endpoints[3].hostname":                         "EndpointSlice endpoints[].hostname",
		"status.loadBalancer.ingress of service a/b, c/d; annotation x of ingress e/f":  "status.loadBalancer.ingress",
	} {
		if got := reasonOf(field); got != want {
			t.Errorf("reasonOf(%q) = %q, want %q", field, got, want)
		}
	}
}

func TestRefOfResource(t *testing.T) {
	for res, want := range map[string]string{
		"service/default/web":  "Service default/web",
		"crd/team/api":         "DNSEndpoint team/api",
		"httproute/gw/shop":    "HTTPRoute gw/shop",
		"virtualservice/a/b/c": "VirtualService a/b/c",
		"pod/default/x":        "",
		"service/web":          "",
	} {
		ref, ok := refOfResource(res)
		got := ""
		if ok {
			got = ref.Kind + " " + ref.Namespace + "/" + ref.Name
		}
		if got != want {
			t.Errorf("refOfResource(%q) = %q, want %q", res, got, want)
		}
	}
}

func TestDropKinds(t *testing.T) {
	svc := &endpoint.Endpoint{Name: "a.example.com", Type: "A", Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/gw"}}
	vs := &endpoint.Endpoint{Name: "b.example.com", Type: "A", Labels: endpoint.Labels{endpoint.ResourceLabel: "virtualservice/default/shop"}}
	ref := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "gw"}
	shop := endpoint.ObjectRef{Kind: "VirtualService", Namespace: "default", Name: "shop"}
	in := source.Result{Endpoints: []*endpoint.Endpoint{svc, vs}, Held: []string{"service/default/gw"},
		Invalid: []*endpoint.InvalidError{{Object: ref, Field: "f"}}, Pending: []source.Pending{{Object: ref}},
		Overridden: []source.Skipped{{Object: ref, Reason: "r"}, {Object: shop, Reason: "r"}}}
	out := dropKinds(in, []string{"Service"})
	if len(out.Endpoints) != 1 || out.Endpoints[0] != vs || len(out.Held)+len(out.Invalid)+len(out.Pending) != 0 ||
		len(out.Overridden) != 1 || out.Overridden[0].Object != shop {
		t.Errorf("dropKinds kept %+v", out)
	}
	if got := dropKinds(in, nil); len(got.Endpoints) != 2 {
		t.Errorf("dropKinds without kinds dropped records")
	}
}

// TestLogOverridden: a set-aside annotation is logged when it appears, not again while it
// stays, and again if it comes back after it was gone.
func TestLogOverridden(t *testing.T) {
	var buf strings.Builder
	c := &Controller{log: slog.New(slog.NewTextHandler(&buf, nil))}
	a := source.Skipped{Object: endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "web"}, Reason: "legacy ttl set aside"}
	b := source.Skipped{Object: endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "api"}, Reason: "legacy weight set aside"}
	for i, tc := range []struct {
		found []source.Skipped
		want  int
	}{
		{[]source.Skipped{a}, 1},
		{[]source.Skipped{a}, 0},
		{[]source.Skipped{a, b}, 1},
		{nil, 0},
		{[]source.Skipped{a}, 1},
	} {
		buf.Reset()
		c.logOverridden(tc.found)
		if got := strings.Count(buf.String(), "annotation set aside"); got != tc.want {
			t.Errorf("reconcile %d: %d warnings, want %d:\n%s", i, got, tc.want, buf.String())
		}
	}
}

// changingSource is an objects source whose changes the test sends.
type changingSource struct{ c chan struct{} }

func (c changingSource) Changed() <-chan struct{}           { return c.c }
func (c changingSource) Snapshot() (*source.Snapshot, bool) { return &source.Snapshot{}, true }

// TestWaitConvergesUnderConstantChange: a cluster that never stops changing still gets
// a reconcile, at the latest MaxDelay after the first change.
func TestWaitConvergesUnderConstantChange(t *testing.T) {
	ch := changingSource{make(chan struct{}, 1)}
	c := &Controller{cfg: Config{Debounce: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond}, objects: ch}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			select {
			case ch.c <- struct{}{}:
			default:
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	done := make(chan bool)
	go func() { done <- c.wait(ctx, nil) }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("wait reported a stop")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("wait never returned while objects kept changing: no ceiling")
	}
	cancel()
	if c.wait(ctx, nil) {
		t.Error("wait after stop reported a change")
	}
}

// TestEventReporterKeepsWhatItCannotSee: a zone that could not be listed, or a reconcile
// without a report (the zone list failed), does not make its problems gone, so they are not
// sent again when the zone is read again; problems outside zones are judged as ever; and a
// refused name held back past the reemit interval is not sent again before it is retried.
func TestEventReporterKeepsWhatItCannotSee(t *testing.T) {
	zone := provider.Zone{ID: "Z1", Name: "example.com"}
	api := &endpoint.Endpoint{Name: "api.example.com", Type: "A", Labels: endpoint.Labels{endpoint.ResourceLabel: "crd/team/api"}}
	web := endpoint.ObjectRef{Kind: "Service", Namespace: "default", Name: "web"}
	invalid := []*endpoint.InvalidError{{Object: web, Field: "annotation external-dns.alpha.kubernetes.io/ttl", Value: "x", Reason: "want seconds"}}
	t0 := time.Unix(1_700_000_000, 0)
	held := &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{},
		Refused:   []changes.Conflict{{Key: api.Key(), Reason: "refused", Advice: "sent again after 2h"}},
		heldUntil: map[endpoint.Key]time.Time{api.Key(): t0.Add(2 * time.Hour)}}}}
	planned := func(conflicts ...changes.Conflict) *Report {
		return &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{Conflicts: conflicts}}}}
	}
	unlisted := &Report{Zones: []ZoneReport{{Zone: zone}}, Unplanned: []string{zone.ID}}
	conflict := changes.Conflict{Key: api.Key(), Reason: "held by owner green"}
	note := changes.Conflict{Key: api.Key(), Reason: "published with TTL 60"}

	rec := &recorded{}
	r := NewEventReporter(rec, nil, 50*time.Minute, nil)
	steps := []struct {
		name    string
		invalid []*endpoint.InvalidError
		rep     *Report
		at      time.Duration
		want    []string
	}{
		{"conflict and invalid object", invalid, planned(conflict), 0, []string{"InvalidDNSInput", "DNSRecordConflict"}},
		{"zone not listed, object fixed", nil, unlisted, time.Second, nil},
		{"zone listed again: no news", nil, planned(conflict), 2 * time.Second, nil},
		{"no report, object broken again", invalid, nil, 3 * time.Second, []string{"InvalidDNSInput"}},
		{"zone listed again after no report: no news", invalid, planned(conflict), 4 * time.Second, nil},
		{"conflict gone", invalid, planned(), 5 * time.Second, nil},
		{"conflict back", invalid, planned(conflict), 6 * time.Second, []string{"DNSRecordConflict"}},
		{"a note: its own reason", nil, &Report{Zones: []ZoneReport{{Zone: zone, Changes: &changes.Set{Notes: []changes.Conflict{note}}}}}, 7 * time.Second, []string{"DNSRecordAdjusted"}},
		{"refused, held for 2 h", nil, held, 8 * time.Second, []string{"DNSRecordRefused"}},
		{"still held after the reemit interval", nil, held, time.Hour, nil},
		{"held past its retry: reemitted", nil, held, 2*time.Hour + time.Second, []string{"DNSRecordRefused"}},
	}
	for _, s := range steps {
		rec.events = nil
		r.Report(source.Result{Endpoints: []*endpoint.Endpoint{api}, Invalid: s.invalid}, s.rep, t0.Add(s.at))
		var got []string
		for _, e := range rec.events {
			got = append(got, e.reason)
			if e.typ != corev1.EventTypeWarning {
				t.Errorf("%s: event type %s, want Warning", s.name, e.typ)
			}
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: sent %q, want %q", s.name, got, s.want)
		}
	}
}

// TestEventOnAHeldMemberNoSourceWants: a member a cutover holds, which no source asks for
// any more, is reported as a conflict on the object that published it (its ownership
// record's resource), as a held weight is reported on the object that wants it.
func TestEventOnAHeldMemberNoSourceWants(t *testing.T) {
	key := endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"}
	rep := &Report{Zones: []ZoneReport{{Zone: provider.Zone{Name: "example.com"},
		Changes: &changes.Set{Conflicts: []changes.Conflict{{Key: key, Reason: "held by cutover shop: no source asks for this member any more",
			Advice: "publish it again", Resource: "service/default/app"}}}}}}
	rec := &recorded{}
	NewEventReporter(rec, uids{"Service/default/app": "uid-app"}, time.Hour, nil).Report(source.Result{}, rep, time.Unix(1_700_000_000, 0))
	if len(rec.events) != 1 || rec.events[0].reason != ReasonConflict || rec.events[0].ref.Name != "app" || rec.events[0].ref.UID != "uid-app" ||
		!strings.Contains(rec.events[0].m, "held by cutover shop") {
		t.Errorf("events %+v, want one DNSRecordConflict on Service default/app", rec.events)
	}
}
