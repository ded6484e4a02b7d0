// Package cutover shifts traffic between clusters in gated, TTL-paced steps with a
// crash-safe journal and automatic rollback: traffic moves only after a measurement says
// the last step held (never blind), and a run killed at any moment resumes from its
// journal (Run with resume) or rolls back (Abort).
//
// The runner pulls one Lever (package lever, the seam), built by the factory Config.Levers
// gives (package levers picks it by the plan): the Route 53 lever moves the weights of
// weighted record sets (lever/route53), the ALB lever the target-group weights of ALB
// listener rules (lever/alb), the Cloud Map lever which instances of a shared service are
// HEALTHY (lever/cloudmap). Steps, gates, pause/resume/promote/abort, rollback, the
// journal, the report, the progress table and the dashboard's events are the same for
// all three.
//
// While a cutover holds a name it writes an authority record (the ALB lever: authority
// tags on the rule), so that crossfade's publishers keep its weights instead of their own,
// and it keeps comparing the weights it reads with those it wrote: another writer's
// change is drift, which pauses the cutover (or rolls it back: spec.onDrift) rather than
// being fought. Release hands the weights back to the
// publishers once the cutover is over; DryRun previews every write a run would send
// (`cutover plan`) without sending any. Package render turns previews, reports, status
// and progress into the text a person reads; this package keeps their data.
package cutover
