// Package provider defines the small Provider interface (zones, records, apply) and its
// DNS back ends: route53, rfc2136, pdns. (Built with issue 4.)
package provider
