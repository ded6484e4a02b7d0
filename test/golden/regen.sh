#!/usr/bin/env bash
# Regenerates the goldens from external-dns's own code: testdata/*.golden.json from v0.21.0
# (extdns/) and testdata/v0.23.0/*.golden.json from v0.23.0 (extdns023/). Not run by CI, which
# compares crossfade with the committed files (golden_test.go); README.md beside this file
# has the details.
#
# v0.23.0 is the trimmed copy of its module that `scripts/deps.sh test` keeps in
# ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/src/external-dns-v0.23.0 (the whole module cannot
# be fetched). extdns023/go.mod reaches it through a replace by the relative path
# ./external-dns-v0.23.0, a symlink this script makes (it names this machine's cache, so it is
# not committed). v0.23.0 needs Go 1.27: the toolchain is the one deps.sh builds it with.
# Usage: test/golden/regen.sh [021|023]   (default: both)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/src/external-dns-v0.23.0
toolchain=$(sed -n 's/^EXTERNAL_DNS_V023_GOTOOLCHAIN=//p' "$here/../../scripts/deps.sh")
[ -n "$toolchain" ] || { echo "regen.sh: no EXTERNAL_DNS_V023_GOTOOLCHAIN in scripts/deps.sh" >&2; exit 1; }

releases=("$@")
((${#releases[@]})) || releases=(021 023)
for v in "${releases[@]}"; do
  case $v in
    021)
      (cd "$here/extdns" && GOWORK=off go run . -cases ../cases -out ../testdata) ;;
    023)
      [ -f "$src/go.mod" ] || { echo "regen.sh: no trimmed external-dns v0.23.0 source in $src: run scripts/deps.sh test" >&2; exit 1; }
      ln -sfn "$src" "$here/extdns023/external-dns-v0.23.0"
      mkdir -p "$here/testdata/v0.23.0"
      (cd "$here/extdns023" && GOTOOLCHAIN=$toolchain GOWORK=off go run . -cases ../cases -out ../testdata/v0.23.0) ;;
    *) echo "regen.sh: unknown release '$v' (want 021 or 023)" >&2; exit 2 ;;
  esac
done
