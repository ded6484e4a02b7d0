package cutover

import (
	"context"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// lostIDDNS passes every write through but loses the change id of every other one, as
// the provider reports a batch that committed on an attempt whose answer was lost.
type lostIDDNS struct {
	DNS
	calls, lost int
}

func (d *lostIDDNS) ApplyChange(ctx context.Context, z provider.Zone, b changes.Batch, comment string) (string, error) {
	id, err := d.DNS.ApplyChange(ctx, z, b, comment)
	d.calls++
	if err == nil && d.calls%2 == 1 {
		d.lost++
		return "", nil
	}
	return id, err
}

// TestLostChangeIDIsFollowedAnyway: a write that landed without its change id is
// followed to INSYNC all the same, through one more write of the authority record alone,
// and the cutover completes with every written entry carrying an id.
func TestLostChangeIDIsFollowedAnyway(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := e.config(testPlan(t))
	d := &lostIDDNS{DNS: e.DNS}
	cfg.Levers = e.Levers(d)
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v (outcome %v)", err, rep)
	}
	if d.lost == 0 || d.calls != 2*d.lost {
		t.Errorf("%d writes, %d ids lost: want every lost one followed by one more write", d.calls, d.lost)
	}
	if w, _ := e.Weights(t); w["green"] != 100 || w["blue"] != 0 {
		t.Errorf("weights %v", w)
	}
}
