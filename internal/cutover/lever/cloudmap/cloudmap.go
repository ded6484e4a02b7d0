// Package cloudmap is the Cloud Map lever of a cutover: the custom health status of a
// Cloud Map service's instances (see the comment below).
package cloudmap

// The Cloud Map lever: the custom health status of a Cloud Map service's instances,
// moved by UpdateInstanceCustomHealthStatus. Both clusters register their instances into
// one service, told apart by a cluster attribute (spec.cloudMap.clusterAttribute, default
// "cluster"); clients call DiscoverInstances with HealthStatus HEALTHY_OR_ELSE_ALL (or
// HEALTHY) and spread their calls over the instances it returns. A step therefore moves
// traffic by choosing which of from's and to's instances are HEALTHY.
//
// Weights. A step's weights are a ratio: to's share is to/(from+to) (a percent p writes
// from=100-p, to=p). Of from's nFrom and to's nTo instances (those the clients' query
// parameters select), the step leaves HEALTHY the counts whose share of to is closest to
// it (gate.CloudMapHealthy), never none at all, every instance a share allows: 0 % makes
// every to instance UNHEALTHY, 100 % every from instance, and with 3 and 3 instances 10 %
// is 1 of 4 healthy. The lever's weights as read are the numbers of HEALTHY instances of
// from and to (blue=3 green=0): the start a rollback returns to is that ratio. Instances
// of a third cluster keep their status.
//
// Writes. Cloud Map has no transaction and no conditional write: a write is the step's
// intent journaled first (by the runner), then one UpdateInstanceCustomHealthStatus per
// instance whose status differs (a process's first write: per instance, which cancels a
// status an interrupted run left on its way), the HEALTHY ones first; when instances also go
// UNHEALTHY, the lever waits until Cloud Map shows the HEALTHY ones in effect (AWS
// applies a custom status after about 30 s) before sending those, so that the healthy
// set only shrinks to the new one once the new one is healthy: no client is answered
// with no instance at any moment. A write interrupted half way is redone whole by `run
// --resume` from a fresh read, instances already right skipped. InEffect is
// GetInstancesHealthStatus showing every status written.
//
// Drift. Members are the instances, weight 1 for HEALTHY and 0 for UNHEALTHY: another
// writer of a status, or an instance registered meanwhile (Cloud Map makes a new or
// re-registered instance HEALTHY), is drift, and the runner does what spec.onDrift says;
// `cutover resume` writes the step again over the instances as they are then. An
// instance deregistered is no drift.
//
// Ownership. The lever moves only instances its owner owns, as the Route 53 lever moves
// only published, owned record sets: crossfade's publisher (internal/cloudmap) registers
// an instance with crossfade.io/owner, and each of from and to has one owner. A start is
// refused, naming them, when an instance of from or to the query selects has no owner
// (another registrar's) or a cluster has instances of two owners. An instance of either
// kind that appears during a run (an owner remembered per cluster tells another's apart)
// is never written, by a step, a resume, a rollback or a release: it is logged and
// named in the write's journal entry, is a member (a new one is drift, as any instance
// registered meanwhile), and counts in the share assignment as its status is, since it
// answers clients and the cloudMapDiscovery gate measures it.
//
// Authority. Two runners of one cutover on two machines are kept apart by authority tags
// on the service (TagResource, UntagResource, ListTagsForResource on its ARN), with the
// protocol of package authority, the ALB lever's: the runner tags the service with
// crossfade.io/cutover/NAME/TOKEN = TOKEN@HOST:PID before its first
// UpdateInstanceCustomHealthStatus, reads the tags after the instances at every read (another
// runner's key: *HeldError naming it), and removes its key when the cutover ends. Cloud
// Map allows 50 tags on a resource, keys of 128 characters and values of 256.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// ServiceDiscovery is the part of the Cloud Map API the Cloud Map lever calls;
// *servicediscovery.Client (NewServiceDiscovery) implements it.
type ServiceDiscovery interface {
	ListNamespaces(ctx context.Context, in *sd.ListNamespacesInput, optFns ...func(*sd.Options)) (*sd.ListNamespacesOutput, error)
	ListServices(ctx context.Context, in *sd.ListServicesInput, optFns ...func(*sd.Options)) (*sd.ListServicesOutput, error)
	GetService(ctx context.Context, in *sd.GetServiceInput, optFns ...func(*sd.Options)) (*sd.GetServiceOutput, error)
	ListInstances(ctx context.Context, in *sd.ListInstancesInput, optFns ...func(*sd.Options)) (*sd.ListInstancesOutput, error)
	GetInstancesHealthStatus(ctx context.Context, in *sd.GetInstancesHealthStatusInput, optFns ...func(*sd.Options)) (*sd.GetInstancesHealthStatusOutput, error)
	UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, optFns ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error)
	// TagResource, UntagResource and ListTagsForResource hold the service's authority tags.
	TagResource(ctx context.Context, in *sd.TagResourceInput, optFns ...func(*sd.Options)) (*sd.TagResourceOutput, error)
	UntagResource(ctx context.Context, in *sd.UntagResourceInput, optFns ...func(*sd.Options)) (*sd.UntagResourceOutput, error)
	ListTagsForResource(ctx context.Context, in *sd.ListTagsForResourceInput, optFns ...func(*sd.Options)) (*sd.ListTagsForResourceOutput, error)
	// DiscoverInstances is the cloudMapDiscovery gate's.
	gate.DiscoveryAPI
}

var _ ServiceDiscovery = (*sd.Client)(nil)

// NewServiceDiscovery returns a Cloud Map client for cfg, sending to endpoint instead of
// AWS's when it is set (the sandbox's URL). With an endpoint, DiscoverInstances goes to
// that endpoint as it is: AWS's model puts it under the host prefix "data-" (as
// data-servicediscovery.REGION.amazonaws.com), which a local endpoint has no name for.
// The prefix is turned off inside the client's stack: a value set on the caller's
// context is cleared by the client before it would apply.
func NewServiceDiscovery(cfg aws.Config, endpoint string) *sd.Client {
	return sd.NewFromConfig(cfg, func(o *sd.Options) {
		if endpoint == "" {
			return
		}
		o.BaseEndpoint = aws.String(endpoint)
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		})
	})
}

// cloudMapLever is the Cloud Map lever for one plan.
type cloudMapLever struct {
	lever.Base
	p   *spec.Plan
	c   *spec.CloudMap
	api ServiceDiscovery
	// serviceID and namespace are the service resolved once: its id, and its namespace's
	// name (a plan may name either by id); serviceARN carries the authority tags.
	serviceID, namespace, service, serviceARN string
	// poll is the time between reads while the lever waits for statuses to take effect.
	poll time.Duration
	// confirmed is set once this process has written every instance's status: its first
	// write sends the ones already right too, which cancels a status still on its way
	// from an interrupted run (Cloud Map shows a status only once in effect, so a read
	// cannot tell one is pending).
	confirmed bool
	// owners are from's and to's owners (cluster → crossfade.io/owner) as this process
	// first read them with one owner each (a start refuses two): an instance of another
	// owner registered later is that owner's, never this cutover's to move.
	owners map[string]string
}

var (
	_ lever.Typed[*cloudMapLive] = (*cloudMapLever)(nil)
	_ lever.Snapshot             = (*cloudMapLive)(nil)
)

func newCloudMapLever(p *spec.Plan, api ServiceDiscovery) *cloudMapLever {
	return &cloudMapLever{p: p, c: p.CloudMap, api: api, poll: 500 * time.Millisecond}
}

// New returns the Cloud Map lever of p: the custom health status of its service's
// instances, read and written with api. It calls nothing until it is pulled.
func New(p *spec.Plan, api ServiceDiscovery, opts ...Option) lever.Lever {
	c := newCloudMapLever(p, api)
	for _, o := range opts {
		o(c)
	}
	return lever.Wrap[*cloudMapLive](c)
}

// Option tunes a Cloud Map lever.
type Option func(*cloudMapLever)

// Poll sets how often the lever reads the instances' health while it waits for a status
// it wrote to take effect (500 ms by default; tests poll faster).
func Poll(d time.Duration) Option { return func(c *cloudMapLever) { c.poll = d } }

// cmInstance is one instance of the service as read.
type cmInstance struct {
	id, cluster string
	// healthy is false for UNHEALTHY only: Cloud Map answers HEALTHY (and UNKNOWN, which
	// a custom health check does not give) as healthy.
	healthy bool
	// owner is who registered it, as its crossfade.io/owner attribute says ("" when none).
	owner string
	// fixed says why the lever never sets this instance's status ("" when it does): it
	// has no owner, or another owner than its cluster's. It still answers clients as
	// its status says, so the share assignment counts it as it is.
	fixed string
}

// cloudMapLive is the service's instances as read at one moment, or as a write leaves them.
type cloudMapLive struct {
	lever.SnapshotBase
	fromName, toName string
	// where names the service: "apps.local/web (srv-…)"; serviceID is its id.
	where, serviceID string
	// insts are from's and to's instances the clients' query selects, from's first, each
	// cluster's in id order; others those of other clusters, which keep their status.
	insts, others []cmInstance
	// svc is the service's authority tags, authorityHold the runner that read them and
	// whom the next write takes the service over from (package authority).
	svc authority.Tagged
	authority.Hold
	// skipped says, for a partial read, which cluster has no instance left, and which
	// instances the lever does not move (cmInstance.fixed).
	skipped []string
}

// Kind is LeverCloudMap.
func (c *cloudMapLever) Kind() string { return lever.CloudMap }

// Read resolves the service (once), lists its instances and reads their health, then the
// service's authority tags.
func (c *cloudMapLever) Read(ctx context.Context, o lever.ReadOptions) (*cloudMapLive, error) {
	if err := c.resolve(ctx); err != nil {
		return nil, err
	}
	attrs, err := c.instances(ctx)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	health, err := c.health(ctx)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	l := &cloudMapLive{fromName: c.p.From, toName: c.p.To, serviceID: c.serviceID, where: c.where()}
	for _, id := range slices.Sorted(maps.Keys(attrs)) {
		a := attrs[id]
		if !hasAttrs(a, c.c.QueryParameters) {
			continue
		}
		in := cmInstance{id: id, cluster: a[c.c.ClusterAttribute], healthy: health[id] != string(sdtypes.HealthStatusUnhealthy), owner: a[OwnerAttribute]}
		if in.cluster == c.p.From || in.cluster == c.p.To {
			l.insts = append(l.insts, in)
		} else {
			l.others = append(l.others, in)
		}
	}
	slices.SortStableFunc(l.insts, func(a, b cmInstance) int {
		return boolInt(a.cluster != c.p.From) - boolInt(b.cluster != c.p.From)
	})
	if err := c.markOwners(l, o); err != nil {
		return nil, err
	}
	// A cluster is the member here: fewer instances than before is a deployment scaling
	// (an instance deregistered is no drift), none at all is the cluster gone from the
	// service. A started cutover (it refuses to start without an instance of each) acts on
	// that as on a record set deleted (*MemberGoneError: spec.onDrift); a rollback or a
	// release does what it can with the other cluster, and says which it could not restore.
	nf, nt, _, _ := l.counts()
	for _, cl := range []struct {
		name string
		n    int
	}{{c.p.From, nf}, {c.p.To, nt}} {
		switch {
		case cl.n > 0:
		case !o.Partial && (o.Held || o.Started):
			return nil, &lever.MemberGoneError{Member: c.clusterMember(cl.name), Where: "Cloud Map service " + c.where(),
				Fix: "register its instances again"}
		case o.Partial && countOf(l.insts, cl.name) > 0:
			// Only instances the lever does not move are left: markOwners named each.
		case o.Partial:
			l.skipped = append(l.skipped, fmt.Sprintf("%s: no instance in Cloud Map service %s (every one deregistered): its share cannot be restored", c.clusterMember(cl.name), c.where()))
		}
	}
	// The tags after the instances: a write by another runner that took the service over
	// comes after its tags, so a read that finds the new statuses finds its tags too.
	l.Me, l.Cutover, l.Takeover = o.Runner, c.p.Name, o.Takeover
	l.svc = authority.Tagged{ARN: c.serviceARN, Name: "service " + c.namespace + "/" + c.service}
	tags, err := cloudMapTags{c}.ReadTags(ctx, []string{c.serviceARN})
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	ts, ok := tags[c.serviceARN]
	if !ok {
		return nil, &lever.ReadError{Err: fmt.Errorf("%s: not found: it was deleted while the cutover read it", c.where())}
	}
	problem, err := c.authority().Check(&l.Hold, &l.svc, ts, o)
	if err != nil {
		return nil, err
	}
	if problem != "" {
		return nil, &lever.NotReadyError{Problems: []string{problem}, Lever: lever.CloudMap}
	}
	return l, nil
}

// cloudMapTags is the Cloud Map API as the authority protocol's tagAPI: the service's tags.
type cloudMapTags struct{ c *cloudMapLever }

// authority is the protocol over the service's tags.
func (c *cloudMapLever) authority() *authority.Protocol {
	return &authority.Protocol{API: cloudMapTags{c}, Lever: lever.CloudMap, Provider: "Cloud Map", Resource: "a resource", MaxTags: maxCloudMapTags,
		TooManyCode: "TooManyTagsException", What: "the Cloud Map service", Holds: "the service's instances", State: "the instances' health"}
}

// maxCloudMapTags is Cloud Map's limit of tags per resource.
const maxCloudMapTags = 50

// ReadTags reads the tags of each resource of arns (the service); one that is gone is
// left out.
func (t cloudMapTags) ReadTags(ctx context.Context, arns []string) (map[string][]authority.Tag, error) {
	out := map[string][]authority.Tag{}
	for _, arn := range arns {
		res, err := t.c.api.ListTagsForResource(ctx, &sd.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
		switch {
		case authority.IsAPIError(err, "ResourceNotFoundException"):
			continue
		case err != nil:
			return nil, fmt.Errorf("list tags for %s: %w", arn, err)
		}
		tags := make([]authority.Tag, 0, len(res.Tags))
		for _, tg := range res.Tags {
			tags = append(tags, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
		}
		out[arn] = tags
	}
	return out, nil
}

// AddTag puts tg on the resource arn.
func (t cloudMapTags) AddTag(ctx context.Context, arn string, tg authority.Tag) error {
	_, err := t.c.api.TagResource(ctx, &sd.TagResourceInput{ResourceARN: aws.String(arn), Tags: []sdtypes.Tag{{Key: aws.String(tg.Key), Value: aws.String(tg.Value)}}})
	return err
}

// RemoveTags removes keys from the resource arn; one that is gone has none.
func (t cloudMapTags) RemoveTags(ctx context.Context, arn string, keys []string) error {
	_, err := t.c.api.UntagResource(ctx, &sd.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys})
	if err != nil && !authority.IsAPIError(err, "ResourceNotFoundException") {
		return err
	}
	return nil
}

// LetGo removes the authority tags of the cutover from the service: this runner's, or,
// with lever.EveryRunner, every runner's, never another cutover's. It returns 1 when it untagged
// the service, and the other runners whose keys it removed.
func (c *cloudMapLever) LetGo(ctx context.Context, me registry.Runner, mode lever.LetGoMode) (int, []registry.Runner, error) {
	if err := c.resolve(ctx); err != nil {
		return 0, nil, err
	}
	return c.authority().LetGo(ctx, c.p.Name, []*authority.Tagged{{ARN: c.serviceARN, Name: "service " + c.namespace + "/" + c.service}}, me, mode)
}

// HeldWhat is what the Cloud Map lever's authority tags are on.
func (c *cloudMapLever) HeldWhat() string { return "Cloud Map services" }

// Release removes the cutover's authority tags from the service (the runner's killed
// before it could, or with r.Force every runner's): the instances keep the statuses
// written.
func (c *cloudMapLever) Release(ctx context.Context, r lever.ReleaseRequest) (lever.ReleaseResult, error) {
	return authority.Release(ctx, c, r)
}

// OwnerAttribute is the attribute crossfade's publisher records the registering
// controller's owner id in (cloudmap.AttrOwner), shown as a member's source.
const OwnerAttribute = "crossfade.io/owner"

// ownerFix is what to do about an instance of from or to the cutover may not move.
const ownerFix = "register it through crossfade's publisher, or give it a cluster attribute the cutover does not move"

// clusterOwners returns, for each of from and to, the owners of its instances in l
// (sorted, "" left out) and, by owner, their instance ids.
func (l *cloudMapLive) clusterOwners() map[string]map[string][]string {
	out := map[string]map[string][]string{l.fromName: {}, l.toName: {}}
	for _, in := range l.insts {
		if in.owner != "" {
			out[in.cluster][in.owner] = append(out[in.cluster][in.owner], in.id)
		}
	}
	return out
}

// markOwners sets which of l's instances the lever may not move (cmInstance.fixed): the
// cutover moves only instances its owner owns, like the Route 53 lever's published,
// owned members. An instance without crossfade.io/owner is another registrar's. A
// cluster's owner is the one owner of its instances as this process first read them;
// an instance of another owner is that owner's. A cluster with two owners and none
// remembered (a start refuses it: StartProblems; a process resuming a run finds it so)
// is not guessed at: a started read refuses it (a rollback leaves its instances out).
func (c *cloudMapLever) markOwners(l *cloudMapLive, o lever.ReadOptions) error {
	if c.owners == nil {
		c.owners = map[string]string{}
	}
	byCluster := l.clusterOwners()
	var ambiguous []string
	for _, cl := range []string{c.p.From, c.p.To} {
		owners := slices.Sorted(maps.Keys(byCluster[cl]))
		if c.owners[cl] == "" && len(owners) == 1 {
			c.owners[cl] = owners[0]
		}
		if c.owners[cl] == "" && len(owners) > 1 {
			ambiguous = append(ambiguous, l.twoOwners(cl, byCluster[cl]))
		}
	}
	if len(ambiguous) > 0 && (o.Started || o.Held) && !o.Partial {
		return &lever.NotReadyError{Problems: ambiguous, Lever: lever.CloudMap}
	}
	for i := range l.insts {
		in := &l.insts[i]
		own := c.owners[in.cluster]
		switch {
		case in.owner == "":
			in.fixed = fmt.Sprintf("instance %s of %s in Cloud Map service %s has no %s attribute: it is not crossfade's to move", in.id, in.cluster, l.where, OwnerAttribute)
		case own == "":
			in.fixed = fmt.Sprintf("instance %s of %s in Cloud Map service %s is owner %s's, and %s has instances of %d owners: the cutover does not guess which is its controller",
				in.id, in.cluster, l.where, in.owner, in.cluster, len(byCluster[in.cluster]))
		case in.owner != own:
			in.fixed = fmt.Sprintf("instance %s of %s in Cloud Map service %s is owner %s's, and %s's instances are owner %s's: it is not the cutover's to move",
				in.id, in.cluster, l.where, in.owner, in.cluster, own)
		}
		if in.fixed != "" && o.Partial {
			l.skipped = append(l.skipped, fmt.Sprintf("%s; left %s", in.fixed, healthWord(in.healthy)))
		}
	}
	return nil
}

// twoOwners names cluster's owners and their instances: a cluster has one controller.
func (l *cloudMapLive) twoOwners(cluster string, owners map[string][]string) string {
	var parts []string
	for _, o := range slices.Sorted(maps.Keys(owners)) {
		parts = append(parts, fmt.Sprintf("owner %s (%s)", o, strings.Join(owners[o], ", ")))
	}
	return fmt.Sprintf("cluster %s in Cloud Map service %s has instances registered by %d owners (%s): %s: a cluster has one controller, and the cutover moves only its owner's instances; "+
		"deregister the instances of the owner that is not %s's controller, or give them a cluster attribute the cutover does not move",
		cluster, l.where, len(owners), OwnerAttribute, strings.Join(parts, ", "), cluster)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hasAttrs reports whether attrs has every query parameter, as DiscoverInstances matches.
func hasAttrs(attrs, query map[string]string) bool {
	for k, v := range query {
		if got, ok := attrs[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// clusterMember names cluster as the lever's member: "cluster green's instances
// (cluster=green)", with the clients' query parameters that select them.
func (c *cloudMapLever) clusterMember(cluster string) string {
	sel := map[string]string{c.c.ClusterAttribute: cluster}
	maps.Copy(sel, c.c.QueryParameters)
	return fmt.Sprintf("cluster %s's instances (%s)", cluster, formatAttrs(sel))
}

// where names the service for people.
func (c *cloudMapLever) where() string {
	return fmt.Sprintf("%s/%s (%s)", c.namespace, c.service, c.serviceID)
}

// resolve finds the service's id by its namespace's and its own name (or ids), and
// refuses a service without HealthCheckCustomConfig; done once per lever.
func (c *cloudMapLever) resolve(ctx context.Context) error {
	if c.serviceID != "" {
		return nil
	}
	if c.api == nil {
		return fmt.Errorf("cutover %s moves Cloud Map instances (spec.cloudMap), and no Cloud Map client is configured", c.p.Name)
	}
	notReady := func(format string, args ...any) error {
		return &lever.NotReadyError{Problems: []string{fmt.Sprintf(format, args...)}, Lever: lever.CloudMap}
	}
	var nsID, nsName string
	in := &sd.ListNamespacesInput{}
	for nsID == "" {
		out, err := c.api.ListNamespaces(ctx, in)
		if err != nil {
			return &lever.ReadError{Err: fmt.Errorf("list namespaces: %w", err)}
		}
		for _, n := range out.Namespaces {
			if aws.ToString(n.Name) == c.c.Namespace || aws.ToString(n.Id) == c.c.Namespace {
				nsID, nsName = aws.ToString(n.Id), aws.ToString(n.Name)
				break
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if nsID == "" {
		return notReady("spec.cloudMap.namespace %s: no such Cloud Map namespace", c.c.Namespace)
	}
	var svcID string
	sin := &sd.ListServicesInput{Filters: []sdtypes.ServiceFilter{{Name: sdtypes.ServiceFilterNameNamespaceId, Values: []string{nsID}, Condition: sdtypes.FilterConditionEq}}}
	for svcID == "" {
		out, err := c.api.ListServices(ctx, sin)
		if err != nil {
			return &lever.ReadError{Err: fmt.Errorf("list services of namespace %s: %w", nsID, err)}
		}
		for _, s := range out.Services {
			if aws.ToString(s.Name) == c.c.Service || aws.ToString(s.Id) == c.c.Service {
				svcID = aws.ToString(s.Id)
				break
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		sin.NextToken = out.NextToken
	}
	if svcID == "" {
		return notReady("spec.cloudMap.service %s: no such service in namespace %s (%s)", c.c.Service, nsName, nsID)
	}
	out, err := c.api.GetService(ctx, &sd.GetServiceInput{Id: aws.String(svcID)})
	if err != nil {
		return &lever.ReadError{Err: fmt.Errorf("get service %s: %w", svcID, err)}
	}
	if out.Service == nil || out.Service.HealthCheckCustomConfig == nil {
		return notReady("spec.cloudMap.service %s (%s in %s) has no HealthCheckCustomConfig: the Cloud Map lever moves traffic by custom health status "+
			"(UpdateInstanceCustomHealthStatus), which only a service created with --health-check-custom-config has (it cannot be added later: create the service with it)",
			c.c.Service, svcID, nsName)
	}
	if aws.ToString(out.Service.Arn) == "" {
		return &lever.ReadError{Err: fmt.Errorf("get service %s: Cloud Map returned no ARN, which would carry the cutover's authority tag", svcID)}
	}
	c.serviceID, c.namespace, c.service, c.serviceARN = svcID, nsName, aws.ToString(out.Service.Name), aws.ToString(out.Service.Arn)
	return nil
}

// instances lists every instance of the service with its attributes, page by page.
func (c *cloudMapLever) instances(ctx context.Context) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	in := &sd.ListInstancesInput{ServiceId: aws.String(c.serviceID)}
	for {
		page, err := c.api.ListInstances(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list instances of %s: %w", c.where(), err)
		}
		for _, i := range page.Instances {
			out[aws.ToString(i.Id)] = i.Attributes
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// health reads every instance's health status as in effect, page by page.
func (c *cloudMapLever) health(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	in := &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(c.serviceID)}
	for {
		page, err := c.api.GetInstancesHealthStatus(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("get instances health status of %s: %w", c.where(), err)
		}
		for id, st := range page.Status {
			out[id] = string(st)
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// counts returns from's and to's instances the lever moves and how many of each are
// healthy (instances it does not move: fixedHealthy).
func (l *cloudMapLive) counts() (nFrom, nTo, hFrom, hTo int) {
	for _, in := range l.insts {
		if in.fixed != "" {
			continue
		}
		if in.cluster == l.fromName {
			nFrom, hFrom = nFrom+1, hFrom+boolInt(in.healthy)
		} else {
			nTo, hTo = nTo+1, hTo+boolInt(in.healthy)
		}
	}
	return nFrom, nTo, hFrom, hTo
}

// fixedHealthy returns how many of from's and to's instances the lever does not move
// are healthy: they answer clients whatever a step writes.
func (l *cloudMapLive) fixedHealthy() (hFrom, hTo int) {
	for _, in := range l.insts {
		if in.fixed == "" || !in.healthy {
			continue
		}
		if in.cluster == l.fromName {
			hFrom++
		} else {
			hTo++
		}
	}
	return hFrom, hTo
}

// assign returns how many of from's and to's instances the lever moves weights w leave
// healthy; ok is false when no assignment exists (no instance, or both weights 0). The
// healthy instances it does not move count in the share clients see (healthyAround).
func (l *cloudMapLive) assign(w map[string]int64) (hFrom, hTo int, ok bool) {
	nf, nt, _, _ := l.counts()
	ff, ft := l.fixedHealthy()
	return healthyAround(nf, nt, ff, ft, w[l.fromName], w[l.toName])
}

// healthyAround is gate.CloudMapHealthy with fixedFrom and fixedTo healthy instances the
// lever cannot change besides nFrom and nTo it can: the counts hFrom ≤ nFrom, hTo ≤ nTo
// whose share of to, (hTo+fixedTo)/(hFrom+hTo+fixedFrom+fixedTo), is closest to
// wTo/(wFrom+wTo), with gate.CloudMapHealthy's ties (the most instances, then the smaller
// share). At least one of the lever's own is left healthy: the answer never rests on
// instances nobody here controls. Without fixed instances it is gate.CloudMapHealthy,
// which the cloudMapDiscovery gate judges by.
func healthyAround(nFrom, nTo, fixedFrom, fixedTo int, wFrom, wTo int64) (hFrom, hTo int, ok bool) {
	if fixedFrom == 0 && fixedTo == 0 {
		return gate.CloudMapHealthy(nFrom, nTo, wFrom, wTo)
	}
	if nFrom+nTo == 0 || wFrom < 0 || wTo < 0 || wFrom+wTo == 0 {
		return 0, 0, false
	}
	w := wFrom + wTo
	bestF, bestT := -1, -1
	var bestNum, bestDen, bestTo, bestAll int64
	for hf := 0; hf <= nFrom; hf++ {
		for ht := 0; ht <= nTo; ht++ {
			if hf+ht == 0 {
				continue
			}
			to, all := int64(ht+fixedTo), int64(hf+ht+fixedFrom+fixedTo)
			// The distance |to/all - wTo/w| as the fraction num/den, compared exactly.
			num := to*w - wTo*all
			if num < 0 {
				num = -num
			}
			den := all * w
			better := bestF < 0
			if !better {
				switch c := num*bestDen - bestNum*den; {
				case c < 0:
					better = true
				case c == 0:
					sameShare := to*bestAll == bestTo*all
					better = sameShare && hf+ht > bestF+bestT || !sameShare && to*bestAll < bestTo*all
				}
			}
			if better {
				bestF, bestT, bestNum, bestDen, bestTo, bestAll = hf, ht, num, den, to, all
			}
		}
	}
	return bestF, bestT, true
}

// with returns l with the step of weights w applied (nil: l as it is): in each cluster,
// the instances healthy now stay healthy first, in id order, so that a step changes as
// few statuses as it can.
func (l *cloudMapLive) with(w map[string]int64) *cloudMapLive {
	n := *l
	n.insts = slices.Clone(l.insts)
	if w == nil {
		return &n
	}
	hf, ht, ok := l.assign(w)
	if !ok {
		return &n
	}
	for cluster, keep := range map[string]int{l.fromName: hf, l.toName: ht} {
		var idx []int
		for i, in := range n.insts {
			if in.cluster == cluster && in.fixed == "" {
				idx = append(idx, i)
			}
		}
		// Healthy ones first, each group in id order (insts are in id order).
		slices.SortStableFunc(idx, func(a, b int) int { return boolInt(!n.insts[a].healthy) - boolInt(!n.insts[b].healthy) })
		for k, i := range idx {
			n.insts[i].healthy = k < keep
		}
	}
	return &n
}

// Weights are the numbers of HEALTHY instances of from and to, those the lever does not
// move included: their ratio is what the clients see.
func (l *cloudMapLive) Weights() map[string]int64 {
	_, _, hf, ht := l.counts()
	ff, ft := l.fixedHealthy()
	return map[string]int64{l.fromName: int64(hf + ff), l.toName: int64(ht + ft)}
}

// Members are from's and to's instances, weight 1 when healthy.
func (l *cloudMapLive) Members() []lever.Member {
	var out []lever.Member
	for _, in := range l.insts {
		src := "cluster " + in.cluster
		if in.owner != "" {
			src += ", registered by owner " + in.owner
		} else {
			src += ", no " + OwnerAttribute + " attribute"
		}
		if in.fixed != "" {
			src += ", not the cutover's to move: it never sets its status"
		}
		out = append(out, lever.Member{Key: "instance " + in.id, Name: fmt.Sprintf("instance %s of %s (1 HEALTHY, 0 UNHEALTHY)", in.id, in.cluster),
			Weight: int64(boolInt(in.healthy)), Source: src})
	}
	return out
}

// TTL is 0: the lever waits for a status to take effect, and a client's own cache of its
// DiscoverInstances answer is for the step's pause to cover.
func (l *cloudMapLive) TTL() int64 { return 0 }

// GateInput is empty: the Cloud Map lever has neither records for a DNS gate nor target
// groups (its cloudMapDiscovery gates ask the service itself).
func (l *cloudMapLive) GateInput(map[string]int64) lever.GateInput { return lever.GateInput{} }

// NoTraffic names the service when weights w (nil: as read) leave no instance of from or
// to healthy.
func (l *cloudMapLive) NoTraffic(w map[string]int64) string {
	if w == nil {
		if _, _, hf, ht := l.counts(); hf+ht == 0 {
			return "Cloud Map service " + l.where
		}
		return ""
	}
	if _, _, ok := l.assign(w); !ok {
		return "Cloud Map service " + l.where
	}
	return ""
}

// Skipped names, for a partial read, a cluster with no instance left: a rollback cannot
// give it its share back.
func (l *cloudMapLive) Skipped() []string { return l.skipped }

// TakenOver are the runners whose authority tags the next write removes from the service
// (an abort or a forced release taking it over).
func (l *cloudMapLive) TakenOver() []registry.Runner { return l.Hold.TakenOver }

// StartData names the lever, for the report.
func (l *cloudMapLive) StartData() json.RawMessage {
	b, _ := json.Marshal(struct {
		Lever string `json:"lever,omitempty"`
	}{lever.CloudMap})
	return b
}

// LogAttr names the service.
func (l *cloudMapLive) LogAttr() slog.Attr { return slog.String("cloudmap", l.where) }

// problems lists why weights w cannot be written on l: a cluster given a share has no
// instance, or there is none at all.
func (l *cloudMapLive) problems(w map[string]int64) []string {
	nf, nt, _, _ := l.counts()
	var out []string
	for _, c := range []struct {
		name string
		n    int
	}{{l.fromName, nf}, {l.toName, nt}} {
		if w[c.name] > 0 && c.n == 0 {
			out = append(out, fmt.Sprintf("weights %s give %s a share, and %s has no instance of %s the query selects: its share would go to the other cluster", lever.FormatWeights(w), c.name, l.where, c.name))
		}
	}
	if _, _, ok := l.assign(w); !ok && len(out) == 0 {
		out = append(out, fmt.Sprintf("weights %s leave no instance of %s healthy: clients would find none", lever.FormatWeights(w), l.where))
	}
	return out
}

// StartProblems refuses a start with an instance of from or to the lever may not move
// (ownerProblems), with no healthy instance of from or to (a rollback would have nothing
// to return to), and steps that give a share to a cluster with no instance.
func (c *cloudMapLever) StartProblems(l *cloudMapLive) []string {
	if out := l.ownerProblems(); len(out) > 0 {
		// The rest would only restate them (a cluster with no instance the lever moves).
		return append(out, c.authority().TooMany([]*authority.Tagged{&l.svc})...)
	}
	var out []string
	if at := l.NoTraffic(nil); at != "" {
		out = append(out, fmt.Sprintf("%s: no instance of %s or %s is HEALTHY: a cutover from there would roll back onto it; make %s's instances healthy first", at, l.fromName, l.toName, l.fromName))
	}
	out = append(out, c.authority().TooMany([]*authority.Tagged{&l.svc})...)
	seen := map[string]bool{}
	for i, st := range c.p.Steps {
		w := map[string]int64{l.fromName: st.Weights.From, l.toName: st.Weights.To}
		for _, p := range l.problems(w) {
			if !seen[p] {
				out = append(out, fmt.Sprintf("spec.steps[%d]: %s", i, p))
				seen[p] = true
			}
		}
	}
	return out
}

// ownerProblems lists, for a start, every instance of from or to the clients' query
// selects that has no crossfade.io/owner (another registrar's: not the cutover's to
// move, as a Route 53 record set without an ownership TXT record), and every cluster
// with instances of two owners (a cluster has one controller).
func (l *cloudMapLive) ownerProblems() []string {
	var out []string
	for _, in := range l.insts {
		if in.owner == "" {
			out = append(out, fmt.Sprintf("instance %s of cluster %s in Cloud Map service %s has no %s attribute: crossfade only moves instances its publisher registered and an owner owns; %s",
				in.id, in.cluster, l.where, OwnerAttribute, ownerFix))
		}
	}
	owners := l.clusterOwners()
	for _, cl := range []string{l.fromName, l.toName} {
		if len(owners[cl]) > 1 {
			out = append(out, l.twoOwners(cl, owners[cl]))
		}
	}
	return out
}

// Check refuses TTLs and weights no assignment of the instances can give.
func (c *cloudMapLever) Check(l *cloudMapLive, ch lever.Change) []string {
	var out []string
	if len(ch.TTLs) > 0 {
		out = append(out, "the Cloud Map lever has no TTL to set (spec.ttl is for Route 53 records)")
	}
	if ch.Weights != nil {
		out = append(out, l.problems(ch.Weights)...)
	}
	return out
}

// healthUpdate is one UpdateInstanceCustomHealthStatus call.
type healthUpdate struct {
	Instance string `json:"instance"`
	Cluster  string `json:"cluster"`
	Status   string `json:"status"`
}

// updates are the calls that take l to want: HEALTHY ones first, then UNHEALTHY ones;
// with all, also those of instances already at their status.
func (l *cloudMapLive) updates(want *cloudMapLive, all bool) (up, down []healthUpdate) {
	for i, in := range want.insts {
		if in.fixed != "" {
			// Never written, not even by a process's first write.
			continue
		}
		if in.healthy == l.insts[i].healthy && !all {
			continue
		}
		if in.healthy {
			up = append(up, healthUpdate{in.id, in.cluster, string(sdtypes.CustomHealthStatusHealthy)})
		} else {
			down = append(down, healthUpdate{in.id, in.cluster, string(sdtypes.CustomHealthStatusUnhealthy)})
		}
	}
	return up, down
}

// assignment is what the journal keeps of a write: every instance's status written, and
// the statuses of those the lever does not move (Untouched), as read.
type assignment struct {
	Service   string         `json:"service"`
	Healthy   map[string]int `json:"healthy"`
	Instances []healthUpdate `json:"instances"`
	Untouched []healthUpdate `json:"untouched,omitempty"`
}

func (l *cloudMapLive) assignment() assignment {
	a := assignment{Service: l.where, Healthy: map[string]int{l.fromName: 0, l.toName: 0}}
	for _, in := range l.insts {
		st := string(sdtypes.CustomHealthStatusUnhealthy)
		if in.healthy {
			st = string(sdtypes.CustomHealthStatusHealthy)
			a.Healthy[in.cluster]++
		}
		if in.fixed != "" {
			a.Untouched = append(a.Untouched, healthUpdate{in.id, in.cluster, st})
			continue
		}
		a.Instances = append(a.Instances, healthUpdate{in.id, in.cluster, st})
	}
	return a
}

// fixedInsts are from's and to's instances the lever does not move.
func (l *cloudMapLive) fixedInsts() []cmInstance {
	var out []cmInstance
	for _, in := range l.insts {
		if in.fixed != "" {
			out = append(out, in)
		}
	}
	return out
}

// Write sends the step's statuses (see the file's comment for the order and what it
// makes safe).
func (c *cloudMapLever) Write(ctx context.Context, l *cloudMapLive, ch lever.Change, env lever.Env[*cloudMapLive]) (lever.Written, error) {
	if len(ch.TTLs) > 0 {
		return lever.Written{}, fmt.Errorf("%s: the Cloud Map lever has no TTL to set", env.What)
	}
	if err := env.BeforeSend(l); err != nil {
		return lever.Written{}, err
	}
	// The authority tag before any status: a runner that loses the service writes nothing.
	if err := c.authority().Hold(ctx, &l.Hold, []*authority.Tagged{&l.svc}, l, authority.HoldEnv{BeforeSend: func() error { return env.BeforeSend(l) }, Log: env.Log}); err != nil {
		return lever.Written{}, fmt.Errorf("%s: %w", env.What, err)
	}
	want := l.with(ch.Weights)
	up, down := l.updates(want, !c.confirmed)
	fixed := l.fixedInsts()
	for _, in := range fixed {
		env.Log.Warn("instance left as it is: the cutover moves only its owner's instances", "instance", in.id, "cluster", in.cluster,
			"owner", in.owner, "status", healthWord(in.healthy), "problem", in.fixed, "fix", ownerFix)
	}
	sent := 0
	send := func(us []healthUpdate) error {
		for _, u := range us {
			_, err := c.api.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{
				ServiceId: aws.String(c.serviceID), InstanceId: aws.String(u.Instance), Status: sdtypes.CustomHealthStatus(u.Status)})
			if err != nil {
				err = fmt.Errorf("%s: set instance %s of %s %s (%d of %d calls): %w", env.What, u.Instance, u.Cluster, u.Status, sent+1, len(up)+len(down), err)
				if sent > 0 {
					err = fmt.Errorf("%w; %d of the %d statuses are written (Cloud Map has no transaction): `crossfade cutover run --resume` writes the step again (instances already right are skipped), `crossfade cutover abort` rolls back", err, sent, len(up)+len(down))
				}
				return err
			}
			sent++
			env.Log.Debug("instance health written", "instance", u.Instance, "cluster", u.Cluster, "status", u.Status)
		}
		return nil
	}
	if err := send(up); err != nil {
		return lever.Written{}, err
	}
	if len(up) > 0 && len(down) > 0 {
		// The new healthy set must answer before the old one shrinks to it.
		if err := c.waitStatuses(ctx, up); err != nil {
			return lever.Written{}, fmt.Errorf("%s: waiting for %d instances to be HEALTHY before setting %d UNHEALTHY: %w", env.What, len(up), len(down), err)
		}
	}
	if err := send(down); err != nil {
		return lever.Written{}, err
	}
	c.confirmed = true
	hf, ht := want.Weights()[l.fromName], want.Weights()[l.toName]
	detail := fmt.Sprintf("%d UpdateInstanceCustomHealthStatus (%d HEALTHY, %d UNHEALTHY); healthy %s %d of %d, %s %d of %d",
		len(up)+len(down), len(up), len(down), l.fromName, hf, countOf(l.insts, l.fromName), l.toName, ht, countOf(l.insts, l.toName))
	if len(fixed) > 0 {
		var ids []string
		for _, in := range fixed {
			ids = append(ids, fmt.Sprintf("%s of %s %s", in.id, in.cluster, healthWord(in.healthy)))
		}
		detail += fmt.Sprintf("; left as they are, not the cutover's to move (no %s, or another owner's): %s", OwnerAttribute, strings.Join(ids, ", "))
	}
	data, _ := json.Marshal(want.assignment())
	return lever.Written{Detail: detail, Calls: len(up) + len(down), Data: data, After: want,
		Pending: "the custom health statuses written are not yet in effect (GetInstancesHealthStatus)"}, nil
}

func countOf(insts []cmInstance, cluster string) int {
	n := 0
	for _, in := range insts {
		n += boolInt(in.cluster == cluster)
	}
	return n
}

// waitStatuses polls GetInstancesHealthStatus until every update in us is in effect (an
// instance gone counts as done), for at most the plan's inSync timeout.
func (c *cloudMapLever) waitStatuses(ctx context.Context, us []healthUpdate) error {
	ctx, cancel := context.WithTimeout(ctx, c.p.InSyncTimeout)
	defer cancel()
	for {
		health, err := c.health(ctx)
		if err == nil && inEffect(health, us) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not in effect after %s (last error: %v)", c.p.InSyncTimeout, err)
		case <-time.After(c.poll):
		}
	}
}

// inEffect reports whether health shows every update of us (an instance missing from it
// was deregistered: nothing is left to wait for).
func inEffect(health map[string]string, us []healthUpdate) bool {
	for _, u := range us {
		st, ok := health[u.Instance]
		if !ok {
			continue
		}
		if (st == string(sdtypes.HealthStatusUnhealthy)) != (u.Status == string(sdtypes.CustomHealthStatusUnhealthy)) {
			return false
		}
	}
	return true
}

// InEffect reads the instances' health and reports whether each shows the status written.
func (c *cloudMapLever) InEffect(ctx context.Context, _ lever.Written, want *cloudMapLive) (bool, error) {
	if want == nil {
		return false, errors.New("not a Cloud Map write")
	}
	health, err := c.health(ctx)
	if err != nil {
		return false, err
	}
	return inEffect(health, want.assignment().Instances), nil
}

// DryRun renders the write's UpdateInstanceCustomHealthStatus calls as `aws
// servicediscovery` commands, one per line, in the order Write sends them.
func (c *cloudMapLever) DryRun(_ context.Context, l *cloudMapLive, ch lever.Change) (lever.Rendered, error) {
	if len(ch.TTLs) > 0 {
		return lever.Rendered{}, errors.New("the Cloud Map lever has no TTL to set")
	}
	want := l.with(ch.Weights)
	up, down := l.updates(want, false)
	var lines []string
	if !l.svc.Held && len(up)+len(down) > 0 {
		// The first write tags the service with the runner's authority first (see hold).
		tag := fmt.Sprintf(`[{"Key":%q,"Value":%q}]`, authority.Key(l.Cutover, l.Me.Token), authority.Value(l.Me))
		lines = append(lines, fmt.Sprintf("aws servicediscovery tag-resource --resource-arn %s --tags %s", l.svc.ARN, lever.ShellQuote(tag)))
		want.svc.Held = true
	}
	line := func(u healthUpdate) string {
		return fmt.Sprintf("aws servicediscovery update-instance-custom-health-status --service-id %s --instance-id %s --status %s # %s",
			l.serviceID, lever.ShellQuote(u.Instance), u.Status, u.Cluster)
	}
	for _, in := range l.fixedInsts() {
		lines = append(lines, fmt.Sprintf("# instance %s of %s left %s: not the cutover's to move (owner %q)", in.id, in.cluster, healthWord(in.healthy), in.owner))
	}
	for _, u := range up {
		lines = append(lines, line(u))
	}
	if len(up) > 0 && len(down) > 0 {
		lines = append(lines, fmt.Sprintf("# then wait until `aws servicediscovery get-instances-health-status --service-id %s` shows them HEALTHY", l.serviceID))
	}
	for _, u := range down {
		lines = append(lines, line(u))
	}
	return lever.Rendered{Doc: []byte(strings.Join(lines, "\n")), Calls: len(up) + len(down), After: want}, nil
}

// Describe lists the service, each cluster's instances and their health, and the Cloud
// Map lever's warnings and notes.
func (c *cloudMapLever) Describe(_ context.Context, l *cloudMapLive, pv *lever.Description) error {
	pv.Lever = lever.CloudMap
	q := "every instance"
	if len(c.c.QueryParameters) > 0 {
		q = "query parameters " + formatAttrs(c.c.QueryParameters)
	}
	pv.Rules = append(pv.Rules, fmt.Sprintf("Cloud Map service %s: clients discover %s with HealthStatus %s; cluster attribute %q", l.where, q, c.c.HealthStatus, c.c.ClusterAttribute))
	// Every instance of each cluster, those the lever does not move (marked) included:
	// they answer clients too.
	w := l.Weights()
	nf, nt, ht := countOf(l.insts, l.fromName), countOf(l.insts, l.toName), int(w[l.toName])
	for _, cl := range []struct {
		name    string
		n, h    int
		members []string
	}{{l.fromName, nf, int(w[l.fromName]), nil}, {l.toName, nt, ht, nil}} {
		for _, in := range l.insts {
			if in.cluster != cl.name {
				continue
			}
			m := in.id + "=" + healthWord(in.healthy)
			if in.fixed != "" {
				m += "(not moved)"
				pv.Warnings = append(pv.Warnings, fmt.Sprintf("%s; the cutover leaves it %s, and it keeps its share of the answers", in.fixed, healthWord(in.healthy)))
			}
			cl.members = append(cl.members, m)
		}
		pv.Health = append(pv.Health, fmt.Sprintf("cluster %s: %d HEALTHY of %d instances (%s)", cl.name, cl.h, cl.n, strings.Join(cl.members, " ")))
	}
	if len(l.others) > 0 {
		var ids []string
		for _, in := range l.others {
			ids = append(ids, fmt.Sprintf("%s (%s=%q, %s)", in.id, c.c.ClusterAttribute, in.cluster, healthWord(in.healthy)))
		}
		pv.Warnings = append(pv.Warnings, fmt.Sprintf("the clients' query also returns %d instances of neither %s nor %s: %s; the cutover leaves their status as it is, so they keep a share of the answers",
			len(l.others), l.fromName, l.toName, strings.Join(ids, ", ")))
	}
	if ht > 0 && len(c.p.Steps) > 0 && c.p.Steps[0].Weights.To > 0 {
		pv.Notes = append(pv.Notes, fmt.Sprintf("%d instances of %s are HEALTHY already (Cloud Map makes a new instance HEALTHY): clients reach %s before step 1; a first step of 0 takes them out of the answers", ht, l.toName, l.toName))
	}
	pv.Notes = append(pv.Notes,
		"each step sets the custom health status of instances, one UpdateInstanceCustomHealthStatus each, HEALTHY ones first; when some also go UNHEALTHY, the run waits until the HEALTHY ones are in effect (AWS: about 30 s) before sending those, so the answer is never empty",
		"an instance registered during the cutover (a new pod; a re-registration makes it HEALTHY) or a status changed by another writer is drift (spec.onDrift); `cutover resume` writes the step again over the instances as they are then",
		fmt.Sprintf("the cutover sets only the statuses of instances its owner registered (%s, one owner per cluster); an instance registered during the run without it, or by another owner, is never written, by a step or a rollback: it keeps its status and its share of the answers", OwnerAttribute),
		"a client caches its DiscoverInstances answer as it likes: a step's pause should cover that cache",
		fmt.Sprintf("the first write tags the service with the runner's authority (%s%s/TOKEN), which keeps a second runner of this cutover (another machine) out; the run removes it when it ends", authority.TagPrefix, c.p.Name))
	return nil
}

func healthWord(healthy bool) string {
	if healthy {
		return "HEALTHY"
	}
	return "UNHEALTHY"
}

// formatAttrs renders attributes as k=v,k=v in key order.
func formatAttrs(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// Summary names the service and the instances, for the start entry.
func (c *cloudMapLever) Summary(l *cloudMapLive) string {
	nf, nt, hf, ht := l.counts()
	return fmt.Sprintf("Cloud Map service %s, HEALTHY instances %s %d of %d, %s %d of %d, from %s to %s",
		l.where, l.fromName, hf, nf, l.toName, ht, nt, c.p.From, c.p.To)
}

// DriftCause is what usually changes an instance's health behind the cutover's back.
func (c *cloudMapLever) DriftCause() string {
	return "another writer set an instance's custom health status (a health checker calling UpdateInstanceCustomHealthStatus), or an instance was registered or re-registered meanwhile (Cloud Map makes it HEALTHY): " +
		"`cutover resume` writes the step again over the instances as they are now"
}
