package route53api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

func toWireZone(z zones.Zone) wireZone {
	return wireZone{
		ID:                     "/hostedzone/" + z.ID,
		Name:                   zones.PresentName(z.Name),
		CallerReference:        z.CallerReference,
		Config:                 wireZoneConfig{Comment: z.Comment, PrivateZone: z.Private},
		ResourceRecordSetCount: z.RecordCount,
	}
}

// delegationSet spells a zone's name servers as Route 53's DelegationSet does: without the
// trailing dot that the apex NS record's values carry (ns-2048.awsdns-64.com).
func delegationSet(z zones.Zone) wireDelegationSet {
	ns := make([]string, len(z.NameServers))
	for i, n := range z.NameServers {
		ns[i] = strings.TrimSuffix(n, ".")
	}
	return wireDelegationSet{NameServers: ns}
}

func (a *API) toWireChange(c zones.ChangeInfo) wireChangeInfo {
	return wireChangeInfo{
		ID:          "/change/" + c.ID,
		Status:      c.Status(a.now(), a.cfg.ChangeDelay),
		SubmittedAt: timestamp(c.SubmittedAt),
		Comment:     c.Comment,
	}
}

func (a *API) createHostedZone(w http.ResponseWriter, r *http.Request) error {
	var req createHostedZoneRequest
	if err := decodeXML(r, "CreateHostedZoneRequest", &req); err != nil {
		return err
	}
	if req.Name == "" {
		return schema.NotNull("name")
	}
	if req.DelegationSetID != "" {
		return unsupported("CreateHostedZone %s: reusable delegation sets (DelegationSetId %s) are not supported by the crossfade sandbox; every zone gets its own name servers", req.Name, req.DelegationSetID)
	}
	comment, private := "", req.VPC != nil
	if c := req.HostedZoneConfig; c != nil {
		comment, private = c.Comment, private || c.PrivateZone
	}
	z, change, err := a.cfg.Store.CreateZone(req.Name, req.CallerReference, comment, private)
	if err != nil {
		return err
	}
	a.cfg.Logger.Info("hosted zone created", "zone", z.Name, "id", z.ID)
	w.Header().Set("Location", "http://"+r.Host+"/2013-04-01/hostedzone/"+z.ID)
	writeXML(w, http.StatusCreated, createHostedZoneResponse{
		HostedZone:    toWireZone(z),
		ChangeInfo:    a.toWireChange(change),
		DelegationSet: delegationSet(z),
	})
	return nil
}

func (a *API) getHostedZone(w http.ResponseWriter, r *http.Request) error {
	z, err := a.cfg.Store.Zone(zoneID(r))
	if err != nil {
		return err
	}
	resp := getHostedZoneResponse{HostedZone: toWireZone(z)}
	if !z.Private {
		ds := delegationSet(z)
		resp.DelegationSet = &ds
	}
	writeXML(w, http.StatusOK, resp)
	return nil
}

func (a *API) deleteHostedZone(w http.ResponseWriter, r *http.Request) error {
	change, err := a.cfg.Store.DeleteZone(zoneID(r))
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, deleteHostedZoneResponse{ChangeInfo: a.toWireChange(change)})
	return nil
}

// maxItems reads the maxitems parameter: default def, at most limit.
func maxItems(r *http.Request, def, limit int) (int, error) {
	s := r.URL.Query().Get("maxitems")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, schema.Constraint(s, "maxItems", "Member must be a positive integer")
	}
	return min(n, limit), nil
}

func (a *API) listHostedZones(w http.ResponseWriter, r *http.Request) error {
	max, err := maxItems(r, 100, 100)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if id := q.Get("delegationsetid"); id != "" {
		return unsupported("ListHostedZones: reusable delegation sets (delegationsetid %s) are not supported by the crossfade sandbox", id)
	}
	all := a.cfg.Store.Zones()
	if t := q.Get("hostedzonetype"); t != "" && t != "PrivateHostedZone" {
		return schema.Constraint(t, "hostedZoneType", "Member must satisfy enum value set: [PrivateHostedZone]")
	} else if t != "" {
		all = slices.DeleteFunc(all, func(z zones.Zone) bool { return !z.Private })
	}
	start := 0
	if m := q.Get("marker"); m != "" {
		start = slices.IndexFunc(all, func(z zones.Zone) bool { return z.ID == m })
		if start < 0 {
			return invalidInput("The marker %s is not a hosted zone id returned by a previous ListHostedZones call", m)
		}
	}
	end := min(start+max, len(all))
	resp := listHostedZonesResponse{Marker: q.Get("marker"), MaxItems: max, HostedZones: []wireZone{}}
	for _, z := range all[start:end] {
		resp.HostedZones = append(resp.HostedZones, toWireZone(z))
	}
	if end < len(all) {
		resp.IsTruncated, resp.NextMarker = true, all[end].ID
	}
	writeXML(w, http.StatusOK, resp)
	return nil
}

// byNameOrder sorts zones as ListHostedZonesByName does: name with labels reversed, then id.
func byNameOrder(all []zones.Zone) {
	slices.SortFunc(all, func(x, y zones.Zone) int {
		if c := strings.Compare(reversed(x.Name), reversed(y.Name)); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
}

func reversed(name string) string {
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}

func (a *API) listHostedZonesByName(w http.ResponseWriter, r *http.Request) error {
	max, err := maxItems(r, 100, 100)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	dnsName, startID := q.Get("dnsname"), q.Get("hostedzoneid")
	if startID != "" && dnsName == "" {
		return invalidInput("The input is not valid: hostedzoneid was specified but dnsname was not")
	}
	all := a.cfg.Store.Zones()
	byNameOrder(all)
	start := 0
	if dnsName != "" {
		key := reversed(zones.CanonicalName(dnsName))
		start, _ = slices.BinarySearchFunc(all, key, func(z zones.Zone, k string) int {
			if c := strings.Compare(reversed(z.Name), k); c != 0 || startID == "" {
				return c
			}
			return strings.Compare(z.ID, startID)
		})
	}
	end := min(start+max, len(all))
	resp := listHostedZonesByNameResponse{DNSName: dnsName, HostedZoneID: startID, MaxItems: max, HostedZones: []wireZone{}}
	for _, z := range all[start:end] {
		resp.HostedZones = append(resp.HostedZones, toWireZone(z))
	}
	if end < len(all) {
		resp.IsTruncated = true
		resp.NextDNSName, resp.NextHostedZoneID = zones.PresentName(all[end].Name), all[end].ID
	}
	writeXML(w, http.StatusOK, resp)
	return nil
}

func (a *API) hostedZoneCount(w http.ResponseWriter, r *http.Request) error {
	writeXML(w, http.StatusOK, hostedZoneCountResponse{HostedZoneCount: len(a.cfg.Store.Zones())})
	return nil
}

func (a *API) getChange(w http.ResponseWriter, r *http.Request) error {
	id := strings.TrimPrefix(strings.TrimPrefix(r.PathValue("id"), "/"), "change/")
	c, err := a.cfg.Store.Change(id)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, getChangeResponse{ChangeInfo: a.toWireChange(c)})
	return nil
}

func tagSet(typ, id string, tags map[string]string) wireTagSet {
	set := wireTagSet{ResourceType: typ, ResourceID: id, Tags: []wireTag{}}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		set.Tags = append(set.Tags, wireTag{Key: k, Value: tags[k]})
	}
	return set
}

// tagsOf returns a resource's tags. Health checks are not modelled yet: they have none.
func (a *API) tagsOf(typ, id string) (map[string]string, error) {
	switch typ {
	case "hostedzone":
		z, err := a.cfg.Store.Zone(id)
		if err != nil {
			return nil, err
		}
		return z.Tags, nil
	case "healthcheck":
		return nil, nil
	default:
		return nil, schema.Constraint(typ, "resourceType", "Member must satisfy enum value set: [healthcheck, hostedzone]")
	}
}

func (a *API) listTagsForResource(w http.ResponseWriter, r *http.Request) error {
	typ, id := r.PathValue("type"), zoneID(r)
	tags, err := a.tagsOf(typ, id)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, listTagsForResourceResponse{ResourceTagSet: tagSet(typ, id, tags)})
	return nil
}

func (a *API) listTagsForResources(w http.ResponseWriter, r *http.Request) error {
	var req listTagsRequest
	if err := decodeXML(r, "ListTagsForResourcesRequest", &req); err != nil {
		return err
	}
	if len(req.ResourceIDs) == 0 || len(req.ResourceIDs) > 10 {
		return invalidInput("1 validation error detected: Value at 'resourceIds' failed to satisfy constraint: Member must have length between 1 and 10 (got %d)", len(req.ResourceIDs))
	}
	typ := r.PathValue("type")
	resp := listTagsForResourcesResponse{ResourceTagSets: []wireTagSet{}}
	for _, id := range req.ResourceIDs {
		id = strings.TrimPrefix(id, "/hostedzone/")
		tags, err := a.tagsOf(typ, id)
		if err != nil {
			return err
		}
		resp.ResourceTagSets = append(resp.ResourceTagSets, tagSet(typ, id, tags))
	}
	writeXML(w, http.StatusOK, resp)
	return nil
}

func (a *API) changeTags(w http.ResponseWriter, r *http.Request) error {
	typ, id := r.PathValue("type"), zoneID(r)
	var req changeTagsRequest
	if err := decodeXML(r, "ChangeTagsForResourceRequest", &req); err != nil {
		return err
	}
	if typ != "hostedzone" {
		return unsupported("ChangeTagsForResource: tags on resource type %q are not supported by the crossfade sandbox; only on hostedzone", typ)
	}
	add := map[string]string{}
	for i, t := range req.AddTags {
		if t.Key == "" || len(t.Key) > 128 || len(t.Value) > 256 {
			return invalidInput("1 validation error detected: Value at 'addTags.%d.member' failed to satisfy constraint: Key must be 1-128 characters and Value at most 256", i+1)
		}
		add[t.Key] = t.Value
	}
	if err := a.cfg.Store.ChangeTags(id, add, req.RemoveTagKeys); err != nil {
		return err
	}
	writeXML(w, http.StatusOK, changeTagsResponse{})
	return nil
}
