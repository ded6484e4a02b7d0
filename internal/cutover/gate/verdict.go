package gate

import "strings"

// judge sets r's verdict from what a check found, with detail the line of what it measured:
// any problem fails it, problems first; else anything not judged yet (too few requests so
// far) passes it as Pending, saying what it waits for; else it passes. The HTTP and
// albTraffic gates judge alike, so that a step holds on the same terms whichever measured.
func (r *Result) judge(problems, pending []string, detail string) {
	r.Detail = detail
	switch {
	case len(problems) > 0:
		r.Detail = strings.Join(problems, "; ") + " — " + detail
	case len(pending) > 0:
		r.Pass, r.Pending = true, true
		r.Detail = "not judged yet: " + strings.Join(pending, "; ") + " — " + detail
	default:
		r.Pass = true
	}
}
