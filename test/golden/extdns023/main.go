// Command crossfade-golden-extdns023 records what external-dns v0.23.0 plans and
// writes for each input case in ../cases, with the generator of ../extdns (package
// gen) compiled against v0.23.0's code. Run it with ../regen.sh, which makes the
// symlink go.mod's replace names and sets the toolchain v0.23.0 needs.
package main

import "crossfade-golden-extdns/gen"

func main() { gen.Main("v0.23.0", "../testdata/v0.23.0") }
