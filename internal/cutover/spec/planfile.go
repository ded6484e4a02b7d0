package spec

import "k8s.io/apimachinery/pkg/util/validation/field"

// wantUnpaused says what a plan file for `cutover run` holds in spec.paused instead of
// true, and how a CLI run is paused.
const wantUnpaused = "true pauses a Cutover object (kubectl apply) that the in-cluster controller runs; " +
	"`cutover run` does not start paused: leave it out or false, and pause the run with `crossfade cutover pause FILE`"

// planFileRules checks what a plan file run by the CLI must not say though a Cutover
// object may (ValidateCutover does not call it): spec.paused true. Read and ignored, it
// would start moving traffic that the file says to hold; read as "start paused", it
// would make `cutover run` a command that does nothing until another is given. Parse
// calls it after validate.
func planFileRules(c *Cutover, ps *problems) {
	if c.Spec.Paused {
		ps.keep(field.ErrorList{ps.forbidden(field.NewPath("spec", "paused"), "true", wantUnpaused)})
	}
}
