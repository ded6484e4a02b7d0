// Package controller runs watch → debounce → plan → apply in a cluster, with leader
// election, events and metrics. (Built after issue 4.)
package controller
