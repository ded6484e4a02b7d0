package awsapi

import "slices"

// MergeTags returns have with add applied as every tagging API applies it: a key have
// holds takes the new value in its place, a new key goes at the end. key reads a tag's
// key: each store keeps its own Tag type, persisted in its own JSON shape.
func MergeTags[T any](have, add []T, key func(T) string) []T {
	out := slices.Clone(have)
	for _, a := range add {
		if i := slices.IndexFunc(out, func(t T) bool { return key(t) == key(a) }); i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	return out
}
