package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// selects reports whether p selects what it moves instead of listing it.
func selects(p *spec.Plan) bool {
	return p.SelectAllWeighted || p.ALB != nil && p.ALB.Select != nil
}

// clonePlan returns a copy of p whose records and rules the engine may fill with a
// selection without touching the caller's plan.
func clonePlan(p *spec.Plan) *spec.Plan {
	c := *p
	c.Records = slices.Clone(p.Records)
	if p.ALB != nil {
		a := *p.ALB
		a.ListenerRules = slices.Clone(p.ALB.ListenerRules)
		c.ALB = &a
	}
	return &c
}

// applySelection makes p move what s selected.
func applySelection(p *spec.Plan, s Selection) {
	if p.SelectAllWeighted {
		p.Records = slices.Clone(s.Records)
	}
	if p.ALB != nil && p.ALB.Select != nil {
		p.ALB.ListenerRules = slices.Clone(s.ListenerRules)
	}
}

// selectNow has lv select what p moves, as the zone or the load balancers stand now,
// and makes p move it.
func selectNow(ctx context.Context, lv Lever, p *spec.Plan) (Selection, error) {
	s, err := lv.Select(ctx)
	if errors.Is(err, lever.ErrCannotSelect) {
		return Selection{}, fmt.Errorf("cutover %s selects what it moves, and the %s lever cannot select", p.Name, lv.Kind())
	}
	if err != nil {
		return Selection{}, err
	}
	applySelection(p, s)
	return s, nil
}

// fixSelection makes the runner's plan move its selection: the journal's once the
// cutover has started (never selected again: what was added since is not moved), else
// one made now, journaled with the start entry.
func (r *runner) fixSelection(ctx context.Context, st state) error {
	if !selects(r.p) {
		return nil
	}
	if st.started {
		if st.selected == nil {
			return fmt.Errorf("cutover %s selects what it moves, and its journal %s keeps no selection: it started from another plan", r.p.Name, r.store.Where())
		}
		applySelection(r.p, *st.selected)
		return nil
	}
	s, err := selectNow(ctx, r.lever, r.p)
	if err != nil {
		return err
	}
	r.selected = &s
	return nil
}

// withSelection adds s, when set, to a lever's start data.
func withSelection(raw json.RawMessage, s *Selection) json.RawMessage {
	if s == nil {
		return raw
	}
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			m = nil
		}
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m["selected"], _ = json.Marshal(s)
	b, _ := json.Marshal(m)
	return b
}
