package cutover_test

import (
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
)

// init gives the engine's tests the text rendering they cannot import (see cutover.Text).
func init() {
	cutover.Text.Report, cutover.Text.Status = render.Report, render.Status
	cutover.Text.Preview, cutover.Text.PreviewSummary = render.Preview, render.PreviewSummary
	cutover.Text.Resume, cutover.Text.EventLine = render.Resume, render.EventLine
}
