package crdstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Config configures the CRD registry.
type Config struct {
	// REST reaches the API server that holds the DNSRecords.
	REST *rest.Config
	// Namespace holds the DNSRecords (--crd-registry-namespace).
	Namespace string
	// Registry is the planner's registry: the ownership records it plans (For) are what
	// Apply turns into DNSRecord writes. Its affixes and legacy form are not used.
	Registry *registry.TXT
	// OnlyDNSRecords leaves every ownership TXT record of the zone out, not only this
	// owner's: ownership is what DNSRecords say and nothing else. For `crossfade
	// handover` between owners of this registry, whose plan must rewrite no TXT record.
	OnlyDNSRecords bool
	// DryRun makes FromTXT and ToTXT write nothing: Moved.Writes holds each write as it
	// would be sent (DNSRecords as JSON objects, zone batches as the provider renders them).
	DryRun bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Provider is a provider whose ownership lives in DNSRecords. The planner sees the zone
// as the TXT registry would: Records adds, for each record a DNSRecord owns, the
// ownership TXT record the TXT registry would read, and Apply turns the ownership TXT
// changes of a batch into DNSRecord writes and sends only the rest to the zone. So every
// ownership rule of the planner (per set identifier, never touch another owner's record,
// compare-and-swap of ownership with the write) holds unchanged, and the
// compare-and-swap is the DNSRecord's resourceVersion.
type Provider struct {
	provider.Provider
	client dynamic.ResourceInterface
	ns     string
	reg    *registry.TXT
	log    *slog.Logger
	// onlyDNSRecords is Config.OnlyDNSRecords.
	onlyDNSRecords bool
	// dryRun is Config.DryRun.
	dryRun bool

	mu sync.Mutex
	// listed is, by zone id, what the last Records saw: the ownership DNSRecords by the
	// key of the ownership record synthesised for them, and the zone's records.
	listed map[string]*listing
}

// listing is one zone as Records last read it.
type listing struct {
	// objects are the DNSRecords read as ownership, by their ownership record's key: the
	// resourceVersion every write of them is conditional on.
	objects map[endpoint.Key]*DNSRecord
	records []*endpoint.Endpoint
}

// New wraps p: its zones' ownership is read from and written to the DNSRecords in
// cfg.Namespace.
func New(p provider.Provider, cfg Config) (*Provider, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("crd registry: namespace is empty: set --crd-registry-namespace")
	}
	if cfg.Registry == nil {
		return nil, errors.New("crd registry: no registry to plan ownership with")
	}
	dyn, err := dynamic.NewForConfig(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("crd registry: client for %s: %w", cfg.REST.Host, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Provider{Provider: p, client: dyn.Resource(Resource).Namespace(cfg.Namespace), ns: cfg.Namespace,
		reg: cfg.Registry, log: log.With("registry", "crd", "namespace", cfg.Namespace), listed: map[string]*listing{},
		onlyDNSRecords: cfg.OnlyDNSRecords, dryRun: cfg.DryRun}, nil
}

// Namespace is the namespace holding the DNSRecords.
func (p *Provider) Namespace() string { return p.ns }

// Records lists zone's records and adds an ownership TXT record for each record a
// DNSRecord of the namespace owns (any owner: another owner's record must read as
// theirs). Ownership TXT records of this owner standing in the zone are left out: under
// this registry ownership is only what DNSRecords say (as external-dns v0.23's CRD
// registry reads it), and crossfade never writes TXT ownership here; another owner's stay,
// so that their records still read as theirs.
//
// A DNSRecord of this owner that is not Ready (its write was accepted but not confirmed)
// owns its record only when the zone holds the targets it names: the write landed. One
// of another owner counts whatever its status.
//
// A DNSRecord names no zone: one pinned to a hosted zone (aws/hosted-zone-id) owns only
// in that zone, and where another zone has this zone's name (a public and a private zone)
// an unpinned one owns only the record that holds the targets it names, so that the twin
// zone's record of the same name, someone else's, is not taken for it.
func (p *Provider) Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := p.Provider.Records(ctx, zone)
	if err != nil {
		return nil, err
	}
	objs, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := p.Provider.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("crd registry: zone %s: list zones: %w", zone, err)
	}
	twin := slices.ContainsFunc(zones, func(z provider.Zone) bool { return z.Name == zone.Name && z.ID != zone.ID })
	byName := make(map[string]*endpoint.Endpoint, len(recs))
	out := make([]*endpoint.Endpoint, 0, len(recs)+len(objs))
	for _, rec := range recs {
		if rec.Type == endpoint.TypeTXT && len(rec.Targets) > 0 {
			if l, err := registry.ParsePayload(rec.Targets[0]); err == nil && (p.onlyDNSRecords || l[endpoint.OwnerLabel] == p.reg.OwnerID()) {
				continue
			}
		}
		byName[ObjectName(rec.Key())] = rec
		out = append(out, rec)
	}
	l := &listing{objects: map[endpoint.Key]*DNSRecord{}, records: out}
	for _, d := range objs {
		owner := d.Owner()
		rec := byName[d.Name]
		if owner == "" || rec == nil || rec.Key() != d.Key() {
			continue
		}
		if pin := d.zonePin(); pin != "" && pin != zone.ID {
			continue
		}
		if twin && d.zonePin() == "" && !d.sameTargets(rec) {
			p.log.Debug("DNSRecord names no zone and this zone's twin exists: the zone holds other targets, not read as ownership",
				"dnsrecord", d.Name, "record", rec.Key().String(), "zone_id", zone.ID)
			continue
		}
		if owner == p.reg.OwnerID() && !d.Ready() && !d.sameTargets(rec) {
			p.log.Debug("DNSRecord not programmed and the zone holds other targets: not read as ownership",
				"dnsrecord", d.Name, "record", rec.Key().String())
			continue
		}
		labels := endpoint.Labels{}
		for k, v := range d.Spec.Endpoint.Labels {
			labels[k] = v
		}
		labels[endpoint.OwnerLabel] = owner
		owned := *rec
		owned.Labels = labels
		t := p.reg.For(&owned)[0]
		l.objects[t.Key()] = d
		out = append(out, t)
	}
	l.records = out
	p.mu.Lock()
	p.listed[zone.ID] = l
	p.mu.Unlock()
	return out, nil
}

// list reads every DNSRecord of the namespace.
func (p *Provider) list(ctx context.Context) ([]*DNSRecord, error) {
	var out []*DNSRecord
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := p.client.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("crd registry: list DNSRecords in namespace %s: %w", p.ns, err)
		}
		for i := range l.Items {
			d, err := fromUnstructured(&l.Items[i])
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// op is one DNSRecord write a batch asks for.
type op struct {
	// old is the object read as the ownership being replaced or deleted; nil for a create.
	old *DNSRecord
	// rec and labels are the record and the ownership it gets; rec is nil for a delete.
	rec    *endpoint.Endpoint
	labels endpoint.Labels
	// obj is the object as last written.
	obj *DNSRecord
}

// Apply writes batch: its ownership TXT changes as DNSRecord writes, the rest to the zone.
//
// Before the zone is written, every DNSRecord the batch replaces or deletes gets
// Ready=False/Accepted, conditional on the resourceVersion Records read (the
// compare-and-swap: if another writer changed or handed it over since, nothing is
// written), and every one it creates is created Accepted (it fails if one exists that is
// not this owner's unconfirmed write). Once the zone took the batch, replaced objects get
// their new record and owner, created and replaced ones Ready=True/Programmed, and deleted
// ones go, again conditional on their resourceVersion. If the zone refuses the batch they
// are marked Failed and the error is the zone's, so that its refusal is split as usual.
func (p *Provider) Apply(ctx context.Context, zone provider.Zone, batch changes.Batch) error {
	ops, rest, index, err := p.split(zone, batch)
	if err != nil {
		return err
	}
	for _, o := range ops {
		if err := p.accept(ctx, o); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		if err := p.Provider.Apply(ctx, zone, rest); err != nil {
			var inv *provider.InvalidChangeError
			if errors.As(err, &inv) && inv.Index >= 0 && inv.Index < len(index) {
				// The index is into the batch the caller gave.
				inv.Index = index[inv.Index]
			}
			for _, o := range ops {
				if o.obj != nil {
					p.setStatus(ctx, o, FailedReason, fmt.Sprintf("Provider rejected the batch: %v", err))
				}
			}
			return err
		}
	}
	var errs []error
	for _, o := range ops {
		if err := p.commit(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dryRunWrite is one DNSRecord write as DryRun renders it.
type dryRunWrite struct {
	// Action is CREATE, UPDATE or DELETE.
	Action string `json:"action"`
	// ResourceVersion is the version read, that an UPDATE or DELETE is conditional on.
	ResourceVersion string `json:"ifResourceVersion,omitempty"`
	// Object is the DNSRecord as it would stand after the write (its name, for a DELETE).
	Object *DNSRecord `json:"object"`
}

// DryRun renders batch as it would be written: each DNSRecord write (the object as it
// would stand, with its Ready condition once the zone took the batch) and the zone's part
// as the wrapped provider renders it, in one JSON document
// {"dnsRecords": [...], "changeBatch": {...}}.
func (p *Provider) DryRun(ctx context.Context, zone provider.Zone, batch changes.Batch) ([]byte, error) {
	ops, rest, _, err := p.split(zone, batch)
	if err != nil {
		return nil, err
	}
	doc := struct {
		DNSRecords  []dryRunWrite   `json:"dnsRecords"`
		ChangeBatch json.RawMessage `json:"changeBatch,omitempty"`
	}{DNSRecords: []dryRunWrite{}}
	for _, o := range ops {
		w := dryRunWrite{}
		switch {
		case o.rec == nil:
			w.Action, w.ResourceVersion = "DELETE", o.old.ResourceVersion
			w.Object = &DNSRecord{TypeMeta: o.old.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: o.old.Name, Namespace: p.ns}}
		case o.old != nil:
			w.Action, w.ResourceVersion = "UPDATE", o.old.ResourceVersion
			w.Object = o.old.DeepCopy()
			w.Object.Labels = map[string]string{OwnerLabel: o.labels[endpoint.OwnerLabel]}
			w.Object.Spec.Endpoint = FromEndpoint(o.rec, o.labels)
			w.Object.ManagedFields = nil
		default:
			w.Action, w.Object = "CREATE", p.newObject(o.rec, o.labels)
		}
		if w.Object.Spec.Endpoint.DNSName != "" {
			meta.SetStatusCondition(&w.Object.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionTrue,
				Reason: ProgrammedReason, Message: "Endpoint applied to the DNS provider"})
		}
		doc.DNSRecords = append(doc.DNSRecords, w)
	}
	if len(rest) > 0 {
		if doc.ChangeBatch, err = p.Provider.DryRun(ctx, zone, rest); err != nil {
			return nil, err
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// DryRunFormat says what DryRun renders, for the people reading it.
func (p *Provider) DryRunFormat() string {
	return fmt.Sprintf("as the DNSRecord writes in namespace %s (dnsRecords) and the zone's change batch (changeBatch, as `aws route53 change-resource-record-sets --change-batch` takes it)", p.ns)
}

// split sorts batch into DNSRecord writes and the changes for the zone (with, for each,
// its index in batch).
func (p *Provider) split(zone provider.Zone, batch changes.Batch) ([]*op, changes.Batch, []int, error) {
	p.mu.Lock()
	l := p.listed[zone.ID]
	p.mu.Unlock()
	if l == nil {
		l = &listing{}
	}
	var rest changes.Batch
	var index []int
	// The records the batch writes, by the key of their ownership record.
	writes := map[endpoint.Key]*endpoint.Endpoint{}
	for _, c := range batch {
		if p.ownership(c.Endpoint) {
			continue
		}
		if c.Action != changes.Delete {
			writes[p.reg.For(c.Endpoint)[0].Key()] = c.Endpoint
		}
	}
	byKey := map[endpoint.Key]*op{}
	var ops []*op
	// listed indexes the zone as listed, built only for an ownership change whose record
	// the batch does not write (a handover, an adoption of the legacy form).
	var listed map[endpoint.Key]*endpoint.Endpoint
	for i, c := range batch {
		if !p.ownership(c.Endpoint) {
			rest = append(rest, c)
			index = append(index, i)
			continue
		}
		k := c.Endpoint.Key()
		o := byKey[k]
		if o == nil {
			o = &op{}
			byKey[k] = o
			ops = append(ops, o)
		}
		switch c.Action {
		case changes.Delete:
			o.old = l.objects[k]
			if o.old == nil {
				return nil, nil, nil, fmt.Errorf("crd registry: zone %s: ownership of %s: no DNSRecord was read for it in namespace %s; the next sync reads it again", zone, k, p.ns)
			}
		default:
			labels, err := registry.ParsePayload(c.Endpoint.Targets[0])
			if err != nil {
				return nil, nil, nil, fmt.Errorf("crd registry: zone %s: ownership record %s: %w", zone, k, err)
			}
			rec := writes[k]
			if rec == nil {
				if listed == nil {
					listed = l.index(p.reg)
				}
				rec = listed[k]
			}
			if rec == nil {
				return nil, nil, nil, fmt.Errorf("crd registry: zone %s: ownership record %s: the record it owns is neither in the batch nor in the zone", zone, k)
			}
			o.rec, o.labels = rec, labels
		}
	}
	return ops, rest, index, nil
}

// index returns the listed records by the key of their ownership record.
func (l *listing) index(reg *registry.TXT) map[endpoint.Key]*endpoint.Endpoint {
	out := make(map[endpoint.Key]*endpoint.Endpoint, len(l.records))
	for _, rec := range l.records {
		if rec.Type != endpoint.TypeTXT {
			out[reg.For(rec)[0].Key()] = rec
		}
	}
	return out
}

// ownership reports whether e is an ownership TXT record: under this registry every one
// the planner writes is a DNSRecord.
func (p *Provider) ownership(e *endpoint.Endpoint) bool {
	if e.Type != endpoint.TypeTXT || len(e.Targets) == 0 {
		return false
	}
	_, err := registry.ParsePayload(e.Targets[0])
	return err == nil
}

// accept records the intent of o before the zone is written; see Apply.
func (p *Provider) accept(ctx context.Context, o *op) error {
	if o.old != nil {
		o.obj = o.old.DeepCopy()
		return p.writeStatus(ctx, o, AcceptedReason, "Endpoint accepted by crossfade; not yet programmed")
	}
	d := p.newObject(o.rec, o.labels)
	name := d.Name
	created, err := p.create(ctx, d)
	if apierrors.IsAlreadyExists(err) {
		// This owner's object whose record the zone does not hold (a write that did not
		// land, or a record deleted whose object could not be) is taken over: the zone
		// refuses the CREATE if the record is there after all. Another owner's was
		// written since the zone was read.
		existing, gerr := p.get(ctx, name)
		if gerr != nil {
			return gerr
		}
		if existing.Owner() != o.labels[endpoint.OwnerLabel] {
			return fmt.Errorf("crd registry: DNSRecord %s/%s (%s): created by owner %q since the zone was read; nothing written, the next sync reads it again",
				p.ns, name, o.rec.Key(), existing.Owner())
		}
		existing.Spec = d.Spec
		if created, err = p.update(ctx, existing); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	o.obj = created
	return p.writeStatus(ctx, o, AcceptedReason, "Endpoint accepted by crossfade; not yet programmed")
}

// newObject is the DNSRecord that owns rec with labels, as it is created.
func (p *Provider) newObject(rec *endpoint.Endpoint, labels endpoint.Labels) *DNSRecord {
	return &DNSRecord{
		TypeMeta:   metav1.TypeMeta{APIVersion: Resource.GroupVersion().String(), Kind: "DNSRecord"},
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName(rec.Key()), Namespace: p.ns, Labels: map[string]string{OwnerLabel: labels[endpoint.OwnerLabel]}},
		Spec:       DNSRecordSpec{Endpoint: FromEndpoint(rec, labels)},
	}
}

// commit completes o once the zone took its batch; see Apply.
func (p *Provider) commit(ctx context.Context, o *op) error {
	if o.rec == nil {
		err := p.client.Delete(ctx, o.obj.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &o.obj.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("crd registry: delete DNSRecord %s/%s: %w", p.ns, o.obj.Name, err)
		}
		p.log.Debug("deleted DNSRecord", "dnsrecord", o.obj.Name)
		return nil
	}
	if o.old != nil {
		o.obj.Labels = map[string]string{OwnerLabel: o.labels[endpoint.OwnerLabel]}
		o.obj.Spec.Endpoint = FromEndpoint(o.rec, o.labels)
		updated, err := p.update(ctx, o.obj)
		if err != nil {
			return err
		}
		o.obj = updated
	}
	return p.writeStatus(ctx, o, ProgrammedReason, "Endpoint applied to the DNS provider")
}

// writeStatus sets the Ready condition of o.obj, conditional on its resourceVersion.
func (p *Provider) writeStatus(ctx context.Context, o *op, reason, message string) error {
	status := metav1.ConditionFalse
	if reason == ProgrammedReason {
		status = metav1.ConditionTrue
	}
	d := o.obj.DeepCopy()
	meta.SetStatusCondition(&d.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: status, Reason: reason, Message: message})
	u, err := toUnstructured(d)
	if err != nil {
		return err
	}
	got, err := p.client.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("crd registry: DNSRecord %s/%s changed since the zone was read (resourceVersion %s); nothing written, the next sync reads it again: %w",
				p.ns, d.Name, o.obj.ResourceVersion, err)
		}
		return fmt.Errorf("crd registry: DNSRecord %s/%s: status %s: %w", p.ns, d.Name, reason, err)
	}
	if o.obj, err = fromUnstructured(got); err != nil {
		return err
	}
	return nil
}

// setStatus is writeStatus whose failure is logged: the zone's own error is the one that
// matters.
func (p *Provider) setStatus(ctx context.Context, o *op, reason, message string) {
	if err := p.writeStatus(ctx, o, reason, message); err != nil {
		p.log.Warn("DNSRecord status not written", "dnsrecord", o.obj.Name, "reason", reason, "err", err)
	}
}

func (p *Provider) create(ctx context.Context, d *DNSRecord) (*DNSRecord, error) {
	u, err := toUnstructured(d)
	if err != nil {
		return nil, err
	}
	got, err := p.client.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		return nil, fmt.Errorf("crd registry: create DNSRecord %s/%s: %w", p.ns, d.Name, err)
	}
	return fromUnstructured(got)
}

func (p *Provider) update(ctx context.Context, d *DNSRecord) (*DNSRecord, error) {
	u, err := toUnstructured(d)
	if err != nil {
		return nil, err
	}
	got, err := p.client.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("crd registry: update DNSRecord %s/%s (resourceVersion %s): %w", p.ns, d.Name, d.ResourceVersion, err)
	}
	return fromUnstructured(got)
}

// get reads one DNSRecord by name through a list (so that the registry needs no get
// grant beside list).
func (p *Provider) get(ctx context.Context, name string) (*DNSRecord, error) {
	l, err := p.client.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return nil, fmt.Errorf("crd registry: read DNSRecord %s/%s: %w", p.ns, name, err)
	}
	if len(l.Items) != 1 {
		return nil, fmt.Errorf("crd registry: read DNSRecord %s/%s: %d found", p.ns, name, len(l.Items))
	}
	return fromUnstructured(&l.Items[0])
}

func toUnstructured(d *DNSRecord) (*unstructured.Unstructured, error) {
	d.APIVersion, d.Kind = Resource.GroupVersion().String(), "DNSRecord"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, fmt.Errorf("crd registry: DNSRecord %s/%s: %w", d.Namespace, d.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func fromUnstructured(u *unstructured.Unstructured) (*DNSRecord, error) {
	var d DNSRecord
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
		return nil, fmt.Errorf("crd registry: DNSRecord %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &d, nil
}

// DeepCopy returns a copy of d that shares nothing with it.
func (d *DNSRecord) DeepCopy() *DNSRecord {
	c := *d
	d.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Endpoint.Targets = append([]string(nil), d.Spec.Endpoint.Targets...)
	c.Spec.Endpoint.ProviderSpecific = append([]ProviderSpecific(nil), d.Spec.Endpoint.ProviderSpecific...)
	if d.Spec.Endpoint.Labels != nil {
		c.Spec.Endpoint.Labels = make(map[string]string, len(d.Spec.Endpoint.Labels))
		for k, v := range d.Spec.Endpoint.Labels {
			c.Spec.Endpoint.Labels[k] = v
		}
	}
	c.Status.Conditions = nil
	for _, cond := range d.Status.Conditions {
		c.Status.Conditions = append(c.Status.Conditions, *cond.DeepCopy())
	}
	return &c
}

// Registry is reg as the planner of this registry sees it: the same ownership records,
// and conflict advice that names the DNSRecord and `crossfade handover --registry crd`
// rather than an ownership TXT record to write.
func (p *Provider) Registry() *AdvisingRegistry {
	return &AdvisingRegistry{TXT: p.reg, ns: p.ns}
}

// AdvisingRegistry is the planner's registry under the CRD registry; see Provider.Registry.
type AdvisingRegistry struct {
	*registry.TXT
	ns string
}

// TakeOver says how owner comes to own rec under the CRD registry (changes.TakeOverAdvisor).
func (r *AdvisingRegistry) TakeOver(rec *endpoint.Endpoint, owner string) string {
	name := ObjectName(rec.Key())
	if o := rec.Owner(); o != "" {
		return fmt.Sprintf("hand it over (`crossfade handover --registry crd --crd-registry-namespace %s --from %s --to %s`, which rewrites its DNSRecord %s/%s)",
			r.ns, o, owner, r.ns, name)
	}
	return fmt.Sprintf("adopt it: create its DNSRecord %s/%s with label %s=%s and spec.endpoint as the record stands (or, where its ownership TXT records name %s, `crossfade handover --to-registry crd --crd-registry-namespace %s --from %s --to %s`)",
		r.ns, name, OwnerLabel, owner, owner, r.ns, owner, owner)
}
