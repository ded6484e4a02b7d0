#!/usr/bin/env bash
# Installs what crossfade's demo, tests and benchmarks need, and nothing twice:
#   - Debian packages (only the missing ones; apt-get update only when something is missing)
#   - Go tools pinned by version into ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin, outside
#     the checkout, so every clone on this machine reuses them.
# Usage: scripts/deps.sh [demo|test|bench]   (default: test)
set -euo pipefail

what=${1:-test}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/crossfade
bin=$cache/bin
mkdir -p "$bin"

# Pinned Go tools: name, module path, version.
STATICCHECK_VERSION=v0.8.2

case $what in
  demo)  pkgs=() ;;  # the demo needs nothing but Go
  test)  pkgs=(awscli bind9-dnsutils prometheus chromium) ;;
  bench) pkgs=(awscli bind9-dnsutils dnsperf knot) ;;
  *) echo "deps.sh: unknown target '$what' (want demo, test or bench)" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "deps.sh: installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$what" = test ]; then
  # A tool is rebuilt only when the pinned version is not the one already in the cache.
  stamp=$bin/.staticcheck-$STATICCHECK_VERSION
  if [ ! -x "$bin/staticcheck" ] || [ ! -e "$stamp" ]; then
    echo "deps.sh: building staticcheck $STATICCHECK_VERSION into $bin"
    (cd "$cache" && GOFLAGS=-mod=mod GOBIN=$bin GOWORK=off go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION")
    rm -f "$bin"/.staticcheck-* && touch "$stamp"
  fi
fi
