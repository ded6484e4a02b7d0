// Command crossfade-golden-extdns records what the pinned external-dns v0.21.0
// plans and writes for each input case in ../cases (package gen has the
// generator, shared with ../extdns023, which runs it against v0.23.0).
//
// Usage (from test/golden/extdns):
//
//	GOWORK=off go run . -cases ../cases -out ../testdata
package main

import "crossfade-golden-extdns/gen"

func main() { gen.Main("v0.21.0", "../testdata") }
