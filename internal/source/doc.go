// Package source turns Kubernetes objects (from informers or manifest files) into
// endpoints, reading annotations as external-dns reads them. (Built with issue 4.)
package source
