// Package provider defines the small Provider interface (zones, records, apply) that the
// planner and controller write through, with the batch limits the planner splits by and the
// typed error for a batch the DNS service rejects. Back ends live in subpackages: route53.
package provider
