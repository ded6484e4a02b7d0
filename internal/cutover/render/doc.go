// Package render is the text a person reads about a cutover, apart from the engine that
// runs it (package cutover): the `cutover plan` preview (summary and --batches), the
// report and `cutover status`, and the progress table a run draws on the terminal. The
// engine computes the data (cutover.Preview, cutover.Report, cutover.Status,
// cutover.Event); this package only turns it into lines on an io.Writer.
package render
