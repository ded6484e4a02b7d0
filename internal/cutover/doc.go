// Package cutover shifts traffic between clusters in gated, TTL-paced steps with a
// crash-safe journal and automatic rollback. (Built with issue 5.)
//
// The runner pulls one Lever (lever.go): the Route 53 lever moves the weights of weighted
// record sets (lever_dns.go), the ALB lever the target-group weights of ALB listener
// rules (lever_alb.go, issue 16). Steps, gates, pause/resume/promote/abort, rollback, the
// journal, the report, the progress table and the dashboard's events are the same for
// both.
package cutover
