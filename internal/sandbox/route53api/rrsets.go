package route53api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// maxRRSetPage is Route 53's page size limit for ListResourceRecordSets.
const maxRRSetPage = 300

func (a *API) listRRSets(w http.ResponseWriter, r *http.Request) error {
	max, err := maxItems(r, maxRRSetPage, maxRRSetPage)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	name, typ, ident := q.Get("name"), strings.ToUpper(q.Get("type")), q.Get("identifier")
	switch {
	case typ != "" && name == "":
		return invalidInput("The input is not valid: type was specified but name was not")
	case ident != "" && typ == "":
		return invalidInput("The input is not valid: identifier was specified but type was not")
	}
	page, err := a.cfg.Store.ListRecords(zoneID(r), name, typ, ident, max)
	if err != nil {
		return err
	}
	resp := listRRSetsResponse{MaxItems: max, ResourceRecordSets: make([]wireRRSetOut, 0, len(page.Sets))}
	for _, s := range page.Sets {
		resp.ResourceRecordSets = append(resp.ResourceRecordSets, toWireRRSet(s))
	}
	if n := page.Next; n != nil {
		resp.IsTruncated = true
		resp.NextRecordName, resp.NextRecordType, resp.NextRecordIdentifier = zones.PresentName(n.Name), n.Type, n.SetIdentifier
	}
	writeXML(w, http.StatusOK, resp)
	return nil
}

func toWireRRSet(s *zones.RRSet) wireRRSetOut {
	out := wireRRSetOut{
		Name: zones.PresentName(s.Name), Type: s.Type, SetIdentifier: s.SetIdentifier,
		Weight: s.Weight, Failover: s.Failover, TTL: s.TTL, HealthCheckID: s.HealthCheckID,
	}
	for _, v := range s.Records {
		out.ResourceRecords = append(out.ResourceRecords, wireRecord{Value: v})
	}
	if t := s.Alias; t != nil {
		out.AliasTarget = &wireAliasOut{HostedZoneID: t.HostedZoneID, DNSName: zones.PresentName(t.DNSName), EvaluateTargetHealth: t.EvaluateTargetHealth}
	}
	return out
}

func (a *API) changeRRSets(w http.ResponseWriter, r *http.Request) error {
	var req changeBatchRequest
	if err := decodeXML(r, "ChangeResourceRecordSetsRequest", &req); err != nil {
		return err
	}
	changes := make([]zones.Change, 0, len(req.ChangeBatch.Changes))
	for i, wc := range req.ChangeBatch.Changes {
		c, err := fromWireChange(i+1, wc)
		if err != nil {
			return err
		}
		changes = append(changes, c)
	}
	id := zoneID(r)
	info, err := a.cfg.Store.Apply(id, req.ChangeBatch.Comment, changes)
	if err != nil {
		return err
	}
	for _, c := range changes {
		a.changes.WithLabelValues(string(c.Action)).Inc()
	}
	a.cfg.Logger.Info("change batch applied", "zone_id", id, "change", info.ID, "changes", len(changes))
	writeXML(w, http.StatusOK, changeResponse{ChangeInfo: a.toWireChange(info)})
	return nil
}

// fromWireChange converts one decoded change, naming the field of the first bad value the
// way Route 53's validation messages do.
func fromWireChange(i int, wc wireChange) (zones.Change, error) {
	at := func(field string) string {
		return fmt.Sprintf("changeBatch.changes.%d.member.resourceRecordSet.%s", i, field)
	}
	ws := wc.Set
	if what := unsupportedRouting(ws); what != "" {
		return zones.Change{}, unsupported("Change %d (%s %s): %s is not supported by the crossfade sandbox; it serves simple, weighted and failover record sets", i, ws.Name, ws.Type, what)
	}
	c := zones.Change{Action: zones.Action(wc.Action), Set: zones.RRSet{
		Name: ws.Name, Type: ws.Type, SetIdentifier: ws.SetIdentifier,
		Failover: ws.Failover, HealthCheckID: ws.HealthCheckID,
	}}
	var err error
	if c.Set.Weight, err = parseInt(ws.Weight, at("weight")); err != nil {
		return zones.Change{}, err
	}
	if c.Set.TTL, err = parseInt(ws.TTL, at("TTL")); err != nil {
		return zones.Change{}, err
	}
	if ws.ResourceRecords != nil {
		for _, rec := range *ws.ResourceRecords {
			c.Set.Records = append(c.Set.Records, rec.Value)
		}
	}
	if t := ws.AliasTarget; t != nil {
		eth, err := parseBool(t.EvaluateTargetHealth, at("aliasTarget.evaluateTargetHealth"))
		if err != nil {
			return zones.Change{}, err
		}
		c.Set.Alias = &zones.AliasTarget{HostedZoneID: t.HostedZoneID, DNSName: t.DNSName, EvaluateTargetHealth: eth}
	}
	return c, nil
}

// unsupportedRouting names the routing policy or record source of a change that the sandbox
// does not serve, "" if it asks for none.
func unsupportedRouting(ws wireRRSetIn) string {
	switch {
	case ws.Region != nil:
		return "latency routing (Region)"
	case ws.GeoLocation != nil:
		return "geolocation routing (GeoLocation)"
	case ws.GeoProximityLocation != nil:
		return "geoproximity routing (GeoProximityLocation)"
	case ws.CidrRoutingConfig != nil:
		return "IP-based routing (CidrRoutingConfig)"
	case ws.MultiValueAnswer != nil:
		return "multivalue answer routing (MultiValueAnswer)"
	case ws.TrafficPolicyInstanceID != nil:
		return "a traffic policy instance (TrafficPolicyInstanceId)"
	}
	return ""
}

func parseInt(s *string, field string) (*int64, error) {
	if s == nil {
		return nil, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 64)
	if err != nil {
		return nil, schema.Constraint(*s, field, "Member must be an integer")
	}
	return &v, nil
}

func parseBool(s, field string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, schema.Constraint(s, field, "Member must be true or false")
}
