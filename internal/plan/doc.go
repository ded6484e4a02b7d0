// Package plan turns desired and current records into change batches under a policy,
// with routing-policy transitions kept in one batch. (Built with issue 4.)
package plan
