#!/usr/bin/env bash
# Installs what crossfade's demo, tests and benchmarks need, and nothing twice:
#   - Debian packages (only the missing ones; apt-get update only when something is missing)
#   - Go tools pinned by version into ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin, outside
#     the checkout, so every clone on this machine reuses them.
#   - for `test`, a real Kubernetes API (kube-apiserver and etcd), built from the Go module
#     proxy at pinned versions into the same directory (internal/kubetest starts them), and
#     helm (test/chart lints, renders and installs deploy/chart/crossfade with it), and the AWS
#     Load Balancer Controller with its CRDs (test/lbc runs it against the sandbox), external-dns
#     v0.21.0 and v0.23.0 (test/sidebyside) and CoreDNS (bench/dnsbench compares the sandbox's DNS
#     server with it; its test runs it).
# Usage: scripts/deps.sh [demo|test|bench]   (default: test)
set -euo pipefail

what=${1:-test}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/crossfade
bin=$cache/bin
mkdir -p "$bin"

# Pinned Go tools: name, module path, version.
STATICCHECK_VERSION=v0.8.2
# kube-apiserver comes from k8s.io/kubernetes, built against the k8s.io/* staging modules
# of the same release (v1.X.Y ↔ v0.X.Y).
KUBERNETES_VERSION=v1.31.4
KUBERNETES_STAGING_VERSION=v0.31.4
ETCD_VERSION=v3.5.16
# The external-dns release crossfade is compared with (docs/architecture.md, "Compatibility with external-dns": the newest that
# builds from the Go module proxy).
EXTERNAL_DNS_VERSION=v0.21.0
# The newest external-dns release, built beside v0.21.0 as $bin/external-dns-$EXTERNAL_DNS_V023_VERSION
# ($bin/external-dns stays v0.21.0): test/sidebyside proves crossfade against both. It needs a newer Go
# than crossfade's own (its go.mod says go 1.27.0); the Go module proxy serves that toolchain.
EXTERNAL_DNS_V023_VERSION=v0.23.0
EXTERNAL_DNS_V023_GOTOOLCHAIN=go1.27.3
# helm v3, for the chart's tests. It is built against k8s.io/client-go v0.31, so it
# renders for Kubernetes 1.31 (HELM_KUBE_MINOR), as its release build does.
HELM_VERSION=v3.16.4
HELM_KUBE_MINOR=31
# The AWS Load Balancer Controller, run by internal/lbctest against the sandbox (test/lbc). Its
# module declares itself sigs.k8s.io/aws-load-balancer-controller but the Go module proxy serves
# it only as github.com/kubernetes-sigs/aws-load-balancer-controller, at a pseudo-version: the
# commit of release LBC_VERSION (its version.txt).
LBC_VERSION=v3.2.2
LBC_MODULE=github.com/kubernetes-sigs/aws-load-balancer-controller
LBC_MODULE_VERSION=v0.0.0-20260423195125-93ff3b5fdaad

case $what in
  demo)  pkgs=() ;;  # the demo needs nothing but Go
  test)  pkgs=(awscli bind9-dnsutils prometheus chromium buildah curl nginx wrk python3) ;;
  bench) pkgs=(awscli bind9-dnsutils dnsperf knot nginx wrk) ;;
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

# build_kube_apiserver builds kube-apiserver $KUBERNETES_VERSION from the Go module proxy.
# k8s.io/kubernetes is not meant to be a dependency: its go.mod points every k8s.io/*
# module at ./staging, which its module zip does not contain. So it is built in a
# writable copy in a throwaway directory, with those replaces swapped for the published
# staging modules of the same release. Nothing of it enters crossfade's go.mod.
build_kube_apiserver() {
  local stamp=$bin/.kube-apiserver-$KUBERNETES_VERSION
  if [ -x "$bin/kube-apiserver" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: building kube-apiserver $KUBERNETES_VERSION into $bin (a few minutes, once)"
  local start=$SECONDS work src
  work=$(mktemp -d "$cache/build-kube-apiserver.XXXXXX")
  throwaway+=("$work")
  (cd "$work" && GOWORK=off GOFLAGS= go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" >download.json) ||
    { cat "$work/download.json" >&2; exit 1; }
  src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$work/download.json")
  [ -n "$src" ] && [ -f "$src/go.mod" ] || { echo "deps.sh: k8s.io/kubernetes@$KUBERNETES_VERSION: no module directory" >&2; exit 1; }
  cp -R "$src" "$work/kubernetes"
  chmod -R u+w "$work/kubernetes"  # the module cache is read-only
  local edits=() m
  for m in $(sed -n 's|^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*|\1|p' "$work/kubernetes/go.mod"); do
    edits+=("-dropreplace=$m" "-require=$m@$KUBERNETES_STAGING_VERSION")
  done
  ((${#edits[@]})) || { echo "deps.sh: k8s.io/kubernetes@$KUBERNETES_VERSION: no ./staging replaces found in go.mod" >&2; exit 1; }
  # The version the binary reports (/version), as the release build stamps it.
  local pkg=k8s.io/component-base/version ver=${KUBERNETES_VERSION#v}
  local ldflags="-s -w -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=${ver%%.*} -X $pkg.gitMinor=$(echo "$ver" | cut -d. -f2) -X $pkg.gitTreeState=clean"
  (cd "$work/kubernetes" &&
    GOWORK=off GOFLAGS= go mod edit "${edits[@]}" &&
    GOWORK=off GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$work/kube-apiserver" ./cmd/kube-apiserver)
  mv -f "$work/kube-apiserver" "$bin/kube-apiserver"
  rm -f "$bin"/.kube-apiserver-* && touch "$stamp"
  echo "deps.sh: kube-apiserver $KUBERNETES_VERSION built in $((SECONDS - start)) s"
}

# build_etcd builds etcd $ETCD_VERSION: a main calling etcdmain.Main in a throwaway module,
# so etcd's dependencies never enter crossfade's go.mod.
build_etcd() {
  local stamp=$bin/.etcd-$ETCD_VERSION
  if [ -x "$bin/etcd" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: building etcd $ETCD_VERSION into $bin"
  local start=$SECONDS work
  work=$(mktemp -d "$cache/build-etcd.XXXXXX")
  throwaway+=("$work")
  cat >"$work/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  # go get lists every module it adds: kept in a log, shown only if it fails.
  (cd "$work" &&
    GOWORK=off GOFLAGS= go mod init crossfade.local/etcd 2>/dev/null &&
    { GOWORK=off GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >get.log 2>&1 || { cat get.log >&2; exit 1; }; } &&
    GOWORK=off GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$work/etcd" .)
  mv -f "$work/etcd" "$bin/etcd"
  rm -f "$bin"/.etcd-* && touch "$stamp"
  echo "deps.sh: etcd $ETCD_VERSION built in $((SECONDS - start)) s"
}

# build_external_dns installs external-dns $EXTERNAL_DNS_VERSION, the peer crossfade must
# interoperate with and beat (internal/externaldnstest runs it; test/sidebyside and the
# controller benchmark compare against it). Its go.mod has no replace directives, so a
# plain `go install module@version` builds it with exactly the dependency versions it
# pins, outside any module: nothing of it enters crossfade's go.mod.
build_external_dns() {
  local stamp=$bin/.external-dns-$EXTERNAL_DNS_VERSION
  if [ -x "$bin/external-dns" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: building external-dns $EXTERNAL_DNS_VERSION into $bin (a few minutes, once)"
  local start=$SECONDS
  # Flags as its release build sets them: the version it reports (--version, its user agent).
  local ldflags="-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=$EXTERNAL_DNS_VERSION"
  (cd "$cache" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod GOBIN=$bin go install -trimpath -ldflags "$ldflags" "sigs.k8s.io/external-dns@$EXTERNAL_DNS_VERSION")
  rm -f "$bin"/.external-dns-* && touch "$stamp"
  echo "deps.sh: external-dns $EXTERNAL_DNS_VERSION built in $((SECONDS - start)) s"
}

# external_dns_v023_src keeps a trimmed copy of external-dns $EXTERNAL_DNS_V023_VERSION's module in
# $src_v023 (${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/src/external-dns-v0.23.0): build_external_dns_v023
# builds the binary from it, and test/golden/extdns023 (the golden generator, run by
# test/golden/regen.sh) compiles against it through a replace directive. The whole module cannot be
# used as it is: three of the modules its go.mod requires are refused by the Go module proxy. So the
# copy has exactly these changes (each checked: a change that no longer applies stops the script):
#   - provider/civo removed, and its import and `externaldns.ProviderCivo: civo.New` line in
#     provider/factory/provider.go: it is the only user of github.com/civo/civogo, which the
#     proxy refuses; that require is dropped.
#   - provider/exoscale removed, and its import and `externaldns.ProviderExoscale: exoscale.New`
#     line in provider/factory/provider.go: the only user of github.com/exoscale/egoscale/v3,
#     which the proxy refuses; that require is dropped.
#   - source/openshift_route.go removed, and in source/store.go the OpenShift client (its import,
#     the ClientGenerator method, the SingletonClientGenerator fields and method), the
#     `openshift-route` case and buildOpenShiftRouteSource: the only users of
#     github.com/openshift/client-go, whose github.com/openshift/api the proxy refuses; that
#     require is dropped.
# Everything else, module versions included, is v0.23.0's go.mod and go.sum. The copy is made in a
# throwaway directory and moved into place whole, then stamped, so a half-made one is never used;
# it is read-only to its users (the binary is built in a copy of it).
# The toolchain ($EXTERNAL_DNS_V023_GOTOOLCHAIN) goes to the Go module cache like any module.
src_v023=$cache/src/external-dns-$EXTERNAL_DNS_V023_VERSION
external_dns_v023_src() {
  local ver=$EXTERNAL_DNS_V023_VERSION
  local stamp=$cache/src/.external-dns-$ver
  if [ -f "$src_v023/go.mod" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: making the trimmed source of external-dns $ver in $src_v023"
  local work src
  work=$(mktemp -d "$cache/build-external-dns-v023-src.XXXXXX")
  throwaway+=("$work")
  (cd "$work" && GOTOOLCHAIN=$EXTERNAL_DNS_V023_GOTOOLCHAIN GOWORK=off GOFLAGS= go mod download -json "sigs.k8s.io/external-dns@$ver" >download.json) ||
    { cat "$work/download.json" >&2; exit 1; }
  src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$work/download.json")
  [ -n "$src" ] && [ -f "$src/go.mod" ] || { echo "deps.sh: sigs.k8s.io/external-dns@$ver: no module directory" >&2; exit 1; }
  local d=$work/src
  cp -R "$src" "$d"
  chmod -R u+w "$d"  # the module cache is read-only
  rm -r "$d/provider/civo" "$d/provider/exoscale" "$d/source/openshift_route.go"
  # drop_lines FILE COUNT ERE: deletes the lines matching ERE, which must be exactly COUNT.
  drop_lines() {
    local n
    n=$(grep -cE "$3" "$1" || true)
    [ "$n" = "$2" ] || { echo "deps.sh: external-dns $ver: $1: $n lines match '$3', want $2" >&2; exit 1; }
    sed -E -i "\\#$3#d" "$1"
  }
  # drop_func FILE ERE: deletes the one top-level func whose first line matches ERE, its doc
  # comment and the blank line before it, up to its closing brace.
  drop_func() {
    local n
    n=$(grep -cE "$2" "$1" || true)
    [ "$n" = 1 ] || { echo "deps.sh: external-dns $ver: $1: $n funcs match '$2', want 1" >&2; exit 1; }
    awk -v re="$2" '
      { lines[NR] = $0 }
      END {
        for (i = 1; i <= NR; i++) if (lines[i] ~ re) { first = i; break }
        for (last = first; lines[last] != "}"; last++) ;
        while (first > 1 && lines[first-1] ~ /^\/\//) first--
        if (first > 1 && lines[first-1] == "") first--
        for (i = 1; i <= NR; i++) if (i < first || i > last) print lines[i]
      }' "$1" >"$1.new" && mv "$1.new" "$1"
  }
  local f=$d/provider/factory/provider.go
  drop_lines "$f" 2 '"sigs\.k8s\.io/external-dns/provider/(civo|exoscale)"'
  drop_lines "$f" 2 'externaldns\.Provider(Civo|Exoscale): '
  f=$d/source/store.go
  drop_func "$f" '^func \(p \*SingletonClientGenerator\) OpenShiftClient\('
  drop_func "$f" '^func buildOpenShiftRouteSource\('
  drop_lines "$f" 1 'case types\.OpenShiftRoute:'
  drop_lines "$f" 1 'return buildOpenShiftRouteSource\('
  drop_lines "$f" 1 '^[[:space:]]*openshift "github\.com/openshift/client-go/'
  drop_lines "$f" 1 '^[[:space:]]*OpenShiftClient\(\) \(openshift\.Interface, error\)$'
  drop_lines "$f" 3 '^[[:space:]]*(openshiftClient|openshiftClientErr|openshiftOnce)[[:space:]]'
  ! grep -nE 'openshift\.|civo\.|exoscale\.' "$d/provider/factory/provider.go" "$f" ||
    { echo "deps.sh: external-dns $ver: references left after the edits above" >&2; exit 1; }
  (cd "$d" && GOTOOLCHAIN=$EXTERNAL_DNS_V023_GOTOOLCHAIN GOWORK=off GOFLAGS= go mod edit -droprequire=github.com/civo/civogo \
    -droprequire=github.com/exoscale/egoscale/v3 -droprequire=github.com/openshift/api)
  mkdir -p "$cache/src"
  rm -f "$stamp"
  if [ -e "$src_v023" ]; then chmod -R u+w "$src_v023" && rm -rf "$src_v023"; fi
  mv "$d" "$src_v023"
  touch "$stamp"
}

# build_external_dns_v023 builds external-dns $EXTERNAL_DNS_V023_VERSION into
# $bin/external-dns-$EXTERNAL_DNS_V023_VERSION, beside v0.21.0. `go install module@version` cannot
# build it (three of the modules its go.mod requires are refused by the Go module proxy), so it is
# built, as kube-apiserver, in a throwaway copy of the trimmed source external_dns_v023_src keeps
# (the changes are listed there). So `--provider civo|exoscale` and `--source openshift-route` are
# unknown to this binary; no test uses them.
build_external_dns_v023() {
  local ver=$EXTERNAL_DNS_V023_VERSION
  local out=$bin/external-dns-$ver
  # Not .external-dns-*: build_external_dns removes those when it rebuilds v0.21.0.
  local stamp=$bin/.externaldns-v023-$ver
  # The trimmed source is kept even where the binary is already built: test/golden needs it.
  external_dns_v023_src
  if [ -f "$out" ] && [ -x "$out" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: building external-dns $ver into $out (a few minutes, once)"
  local start=$SECONDS work
  work=$(mktemp -d "$cache/build-external-dns-v023.XXXXXX")
  throwaway+=("$work")
  local d=$work/src
  cp -R "$src_v023" "$d"
  # The version it reports (--version, its user agent), as its release build stamps it.
  # Built from a directory, its module version is (devel): these -ldflags are what says
  # v0.23.0 in its build information (internal/externaldnstest checks it there). So no
  # -trimpath, with which go leaves -ldflags out of the build information.
  local ldflags="-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=$ver"
  (cd "$d" &&
    CGO_ENABLED=0 GOTOOLCHAIN=$EXTERNAL_DNS_V023_GOTOOLCHAIN GOWORK=off GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$work/external-dns" .)
  mv -f "$work/external-dns" "$out"
  rm -f "$bin"/.externaldns-v023-* && touch "$stamp"
  echo "deps.sh: external-dns $ver built in $((SECONDS - start)) s"
}

# build_helm installs helm $HELM_VERSION for test/chart. Its go.mod has no replace
# directives, so, as external-dns, a plain `go install module@version` builds it outside any
# module. The -X flags are those of helm's own Makefile: without them `helm version` says
# v3.16 and `helm template`/`helm lint` assume Kubernetes 1.20, not the 1.31 it is built for.
build_helm() {
  local stamp=$bin/.helm-$HELM_VERSION
  if [ -x "$bin/helm" ] && [ -e "$stamp" ]; then return; fi
  echo "deps.sh: building helm $HELM_VERSION into $bin (about a minute, once)"
  local start=$SECONDS v=helm.sh/helm/v3/internal/version
  local ldflags="-s -w -X $v.version=$HELM_VERSION -X $v.gitTreeState=clean"
  local p
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$HELM_KUBE_MINOR"
  done
  (cd "$cache" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod GOBIN=$bin go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
  rm -f "$bin"/.helm-* && touch "$stamp"
  echo "deps.sh: helm $HELM_VERSION built in $((SECONDS - start)) s"
}

# build_lbc builds the AWS Load Balancer Controller $LBC_VERSION into $bin, and copies its CRDs
# next to it as aws-load-balancer-controller-crds-$LBC_VERSION.yaml (internal/lbctest installs
# them). Its module path is not the one it declares, so `go install` refuses it: it is built in
# a writable copy of the module in a throwaway directory, with the go.mod and go.sum it pins.
build_lbc() {
  local stamp=$bin/.aws-load-balancer-controller-$LBC_VERSION
  local crds=$bin/aws-load-balancer-controller-crds-$LBC_VERSION.yaml
  if [ -x "$bin/aws-load-balancer-controller" ] && [ -e "$stamp" ] && [ -f "$crds" ]; then return; fi
  echo "deps.sh: building aws-load-balancer-controller $LBC_VERSION into $bin (a few minutes, once)"
  local start=$SECONDS work src
  work=$(mktemp -d "$cache/build-lbc.XXXXXX")
  throwaway+=("$work")
  (cd "$work" && GOWORK=off GOFLAGS= go mod download -json "$LBC_MODULE@$LBC_MODULE_VERSION" >download.json) ||
    { cat "$work/download.json" >&2; exit 1; }
  src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$work/download.json")
  [ -n "$src" ] && [ -f "$src/go.mod" ] || { echo "deps.sh: $LBC_MODULE@$LBC_MODULE_VERSION: no module directory" >&2; exit 1; }
  local got
  got=$(cat "$src/version.txt")
  [ "v$got" = "$LBC_VERSION" ] || { echo "deps.sh: $LBC_MODULE@$LBC_MODULE_VERSION is version $got, not $LBC_VERSION" >&2; exit 1; }
  cp -R "$src" "$work/lbc"
  chmod -R u+w "$work/lbc"  # the module cache is read-only
  # The version it logs at start, as its release build (Dockerfile) stamps it.
  local pkg=sigs.k8s.io/aws-load-balancer-controller/pkg/version
  local ldflags="-s -w -X $pkg.GitVersion=$LBC_VERSION -X $pkg.GitCommit=${LBC_MODULE_VERSION##*-}"
  (cd "$work/lbc" &&
    CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$work/aws-load-balancer-controller" .)
  cp "$work/lbc/helm/aws-load-balancer-controller/crds/crds.yaml" "$work/crds.yaml"
  mv -f "$work/aws-load-balancer-controller" "$bin/aws-load-balancer-controller"
  rm -f "$bin"/aws-load-balancer-controller-crds-*.yaml && mv -f "$work/crds.yaml" "$crds"
  rm -f "$bin"/.aws-load-balancer-controller-* && touch "$stamp"
  echo "deps.sh: aws-load-balancer-controller $LBC_VERSION built in $((SECONDS - start)) s"
}

# build_coredns installs CoreDNS $COREDNS_VERSION as $bin/coredns-$COREDNS_VERSION (the version is
# in the name: bench/dnsbench looks for exactly that file, so a cache holding another version is not
# taken for it). bench/dnsbench serves its zone from CoreDNS's `file` plugin beside Knot and the
# sandbox. Its go.mod has no replace directives, so, as external-dns, a plain
# `go install module@version` builds it outside any module, with every plugin of its release build
# (plugin.cfg is compiled in); GOBIN is a throwaway directory because go install names the binary
# plain `coredns`. Cold: about 3.5 minutes on 2 busy cores, downloads included.
COREDNS_VERSION=v1.11.3
build_coredns() {
  local out=$bin/coredns-$COREDNS_VERSION
  if [ -f "$out" ] && [ -x "$out" ]; then return; fi
  echo "deps.sh: building coredns $COREDNS_VERSION into $out (a few minutes, once)"
  local start=$SECONDS work
  work=$(mktemp -d "$cache/build-coredns.XXXXXX")
  throwaway+=("$work")
  (cd "$cache" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod GOBIN=$work go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION")
  mv -f "$work/coredns" "$out"
  echo "deps.sh: coredns $COREDNS_VERSION built in $((SECONDS - start)) s"
}

if [ "$what" = test ] || [ "$what" = bench ]; then
  # Throwaway build directories go when the script ends, however it ends.
  throwaway=()
  trap 'for d in "${throwaway[@]}"; do chmod -R u+w "$d" && rm -rf "$d"; done' EXIT
  # One build at a time per cache: two clones running `make test` at once wait for each other.
  exec 9>"$cache/.build.lock"
  flock -n 9 || { echo "deps.sh: waiting for another deps.sh building into $cache"; flock 9; }
  # Holding the lock, any build directory left is from a run that was killed.
  for d in "$cache"/build-*; do [ -e "$d" ] && chmod -R u+w "$d" && rm -rf "$d"; done
  # bench/kubebench runs the controller and external-dns on a real kube-apiserver too.
  build_etcd
  build_kube_apiserver
  build_external_dns
  if [ "$what" = bench ]; then build_coredns; fi
  if [ "$what" = test ]; then build_external_dns_v023; build_helm; build_lbc; build_coredns; fi
fi
