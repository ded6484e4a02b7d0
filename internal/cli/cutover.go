package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"
)

// CutoverPlanOptions are `crossfade cutover plan`'s own flags.
type CutoverPlanOptions struct {
	// Batches prints every batch, not the summary.
	Batches bool
	// AllowFailingGates exits 0 when a gate fails at the current weights.
	AllowFailingGates bool
}

// AddFlags defines the flags on c.
func (o *CutoverPlanOptions) AddFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.Batches, "batches", false, "print every change batch the run and its rollback would send, in full")
	c.Flags().BoolVar(&o.AllowFailingGates, "allow-failing-gates", false, "exit 0 even when a gate fails at the current weights (a run would fail step 1 on it unless what it measures changes)")
}

// CutoverRunOptions are `crossfade cutover run`'s own flags (CheckCutoverFlags checks them).
type CutoverRunOptions struct {
	// Resume continues the cutover from its journal.
	Resume bool
	// LogFile, when not empty, is where the logs go instead of stderr.
	LogFile string
	// WriteRetryFor bounds the retries of a forward write that fails transiently.
	WriteRetryFor time.Duration
	// UI is the loopback address of the live dashboard; "" serves none.
	UI string
}

// AddFlags defines the flags on c.
func (o *CutoverRunOptions) AddFlags(c *cobra.Command) {
	fl := c.Flags()
	fl.BoolVar(&o.Resume, "resume", false, "continue the cutover from its journal (after a crash or kill)")
	fl.StringVar(&o.LogFile, "log-file", "", "append the logs to this file instead of stderr, keeping the terminal for the progress display")
	fl.DurationVar(&o.WriteRetryFor, "write-retry-for", 5*time.Minute, "how long a step's write that AWS keeps throttling or failing (after the SDK's own retries) is retried before the run stops for run --resume; 0 retries nothing; a rollback's write is retried until it lands")
	fl.StringVar(&o.UI, "ui", "", "serve the live dashboard at this loopback address, e.g. 127.0.0.1:8080 (port 0 picks one)")
}

// EngineWriteRetryFor is WriteRetryFor as cutover.Config takes it, where 0 is the
// engine's default: the flag's 0 retries nothing.
func (o *CutoverRunOptions) EngineWriteRetryFor() time.Duration {
	if o.WriteRetryFor == 0 {
		return -1
	}
	return o.WriteRetryFor
}

// CutoverReleaseOptions are `crossfade cutover release`'s own flags (CheckCutoverFlags
// checks them).
type CutoverReleaseOptions struct {
	// Force releases without the publishers' confirmations, saying what will change.
	Force bool
	// Wait is how long to wait for the confirmations.
	Wait time.Duration
}

// AddFlags defines the flags on c.
func (o *CutoverReleaseOptions) AddFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.Force, "force", false, "release even when the cutover is unfinished, has no journal here, another runner of it (another machine) holds its weights, "+
		"a publisher has not confirmed the hold, or asks for another weight than the zone holds or for no member at all (which it then writes at its next sync)")
	c.Flags().DurationVar(&o.Wait, "wait", 0, "wait up to this long for every publisher to confirm the hold and every source to ask for the weight the zone holds (a controller confirms within 5 minutes), reading the zone every 10 to 30 s, then release")
}

// IsTerminal reports whether w is a terminal, where progress is redrawn in place.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
