// Package binding registers a cluster's endpoints into ELBv2 target groups and Cloud Map
// services it owns, and never touches others'. (Built in a later issue.)
package binding
