// Package cutover shifts traffic between clusters in gated, TTL-paced steps with a
// crash-safe journal and automatic rollback. (Built with issue 5.)
package cutover
