package spec

// PlanOf validates a Cutover that is already decoded (a Cutover object's, as the
// in-cluster controller reads it from the API server) by the plan file's rules and
// resolves it into the Plan the engine runs, as Parse does for a file. Its problems come
// back in an *Error whose File is "cutover/NAME", one per field by its path
// (spec.steps[1], …), so that a Failed status names the object and the field. spec.paused
// is allowed here: on an object it is the pause switch, not a plan file's mistake.
func PlanOf(c *Cutover) (*Plan, error) {
	errs, warnings := ValidateCutover(c)
	if len(errs) > 0 {
		return nil, &Error{File: "cutover/" + c.Metadata.Name, Problems: fieldErrors(errs), Errors: errs}
	}
	// resolve keeps slices and pointers of what it reads: the caller's object stays its
	// own (an informer's cache must not be written through).
	p := resolve(c.DeepCopy())
	p.Warnings = fieldErrors(warnings)
	return p, nil
}
