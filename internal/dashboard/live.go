package dashboard

import (
	"context"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
)

// ServeLive serves the live dashboard of cfg's cutover at addr (loopback only, as Serve)
// until ctx is done, fed the same events as cfg.Progress: cfg.Progress is replaced by one
// that shows each event on both. url is the page's; stop shuts the server down and waits
// for it.
func ServeLive(ctx context.Context, cfg *cutover.Config, addr string) (url string, stop func(), err error) {
	rec := NewRecorder(cfg.Plan.Name, cfg.Plan.From, cfg.Plan.To)
	// The page shows the lever's own view from the first event on; the factory that
	// builds the lever decides which it is, so the two cannot disagree.
	rec.SetLever(levers.Kind(cfg.Plan))
	ctx, cancel := context.WithCancel(ctx)
	url, wait, err := Serve(ctx, addr, rec.Handler())
	if err != nil {
		cancel()
		return "", nil, err
	}
	progress := []cutover.Progress{rec}
	if cfg.Progress != nil {
		progress = []cutover.Progress{cfg.Progress, rec}
	}
	cfg.Progress = render.MultiProgress(progress...)
	return url, func() {
		cancel()
		wait()
	}, nil
}
