package levertest

import (
	"context"
	"sync"

	"github.com/crossfade-io/crossfade/internal/changes"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// CountingDNS is a Route 53 lever's provider (the zone's DNS: the real SDK against the
// sandbox) that counts the change batches sent, each one ChangeResourceRecordSets call:
// what a test compares with the journal's written entries, so that nothing was sent
// without being journaled, nor twice.
type CountingDNS struct {
	lr53.DNS
	mu      sync.Mutex
	applied int
}

// ApplyChange counts the batch and sends it.
func (d *CountingDNS) ApplyChange(ctx context.Context, zone provider.Zone, batch changes.Batch, comment string) (string, error) {
	d.mu.Lock()
	d.applied++
	d.mu.Unlock()
	return d.DNS.ApplyChange(ctx, zone, batch, comment)
}

// Count is the number of batches sent so far.
func (d *CountingDNS) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.applied
}
