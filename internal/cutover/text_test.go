package cutover

import "io"

// Text is the text rendering (package render) as this package's tests reach it. render
// imports this package, so a test in it cannot import render; text_hook_test.go, in the
// external test package, fills Text in before any test runs, so that a test of a run
// still asserts what a person reads.
var Text struct {
	// Report is render.Report; Status render.Status.
	Report func(io.Writer, *Report) error
	Status func(io.Writer, *Status) error
	// Preview is render.Preview (`cutover plan --batches`); PreviewSummary
	// render.PreviewSummary (`cutover plan`).
	Preview, PreviewSummary func(io.Writer, *Preview) error
	// Resume is render.Resume; EventLine render.EventLine.
	Resume    func(ResumeReport) string
	EventLine func(Event) string
}
