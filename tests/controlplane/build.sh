#!/usr/bin/env bash
# Builds what the control-plane tier runs, from three Go modules, each set into a cache folder
# keyed by its version and its module's pins (so that changing one set's pins rebuilds that set
# alone):
#
#   go/    kube-apiserver, kube-controller-manager, kube-scheduler, etcd   -> <k8s version>-<pins>/
#   kwok/  kwok (the simulated nodes), beside the RBAC its module ships   -> kwok-<version>-<pins>/
#   lws/   the LeaderWorkerSet controller (lws-controller), beside the
#          config/ folder its module ships (CRDs, webhooks, RBAC)          -> lws-<version>-<pins>/
#   helm/  helm, for the tests of charts/ome-operator/ (built by
#          helm/build.sh, which those tests also run alone)                -> helm-<version>-<pins>/
#
# and prints one line per set, `controlplane=<folder>`, `kwok=<folder>`, `lws=<folder>`,
# `helm=<folder>`. A no-op
# (well under a second: no Go command runs) when everything is there; a program missing from a
# folder (a new one, say) is built alone.
#
#   OME_CONTROLPLANE_CACHE   where the keyed folders live (default ~/.cache/ome-operator/controlplane)
#   OME_CONTROLPLANE_GO      the go command (default: go); kube-apiserver 1.36 needs Go 1.26,
#                            or Go 1.27 with GOEXPERIMENT=nojsonv2, which this script sets
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
go=${OME_CONTROLPLANE_GO:-go}
cache=${OME_CONTROLPLANE_CACHE:-$HOME/.cache/ome-operator/controlplane}

# shellcheck source=go_modules.sh
. "$here/go_modules.sh"     # required <folder> <module>, pins <folder>

k8s_version=$(required "$here/go" k8s.io/kubernetes)
kwok_version=$(required "$here/kwok" sigs.k8s.io/kwok)
lws_version=$(required "$here/lws" sigs.k8s.io/lws)
controlplane="$cache/$k8s_version-$(pins "$here/go")"
kwok="$cache/kwok-$kwok_version-$(pins "$here/kwok")"
lws="$cache/lws-$lws_version-$(pins "$here/lws")"
wanted=(
  "$controlplane/kube-apiserver" "$controlplane/kube-controller-manager"
  "$controlplane/kube-scheduler" "$controlplane/etcd"
  "$kwok/kwok" "$kwok/rbac"
  "$lws/lws-controller" "$lws/config"
)
# Helm first, by its own script (a no-op when built), before the lock below, which it takes too.
helm=$(bash "$here/helm/build.sh" | sed -n 's/^helm=//p')
ready() { for f in "${wanted[@]}"; do [ -e "$f" ] || return 1; done; }
report() { printf 'controlplane=%s\nkwok=%s\nlws=%s\nhelm=%s\n' "$controlplane" "$kwok" "$lws" "$helm"; }

build_once "the control plane is built with Go 1.26 (or newer)" ready

export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
case "$("$go" env GOVERSION)" in go1.2[7-9]*|go1.[3-9]*) export GOEXPERIMENT=nojsonv2 ;; esac

# build <module folder> <output file> <package> [ldflags]: a program, unless it is there.
build() {
  [ -x "$2" ] && return 0
  mkdir -p "$(dirname "$2")"
  echo "building $(basename "$2") from $3 into $(dirname "$2")" >&2
  local started=$SECONDS
  (cd "$1" && "$go" build -trimpath -ldflags "-s -w ${4:-}" -o "$2.partial" "$3")
  mv "$2.partial" "$2"
  echo "built $(basename "$2") in $((SECONDS - started)) s" >&2
}

# The first time: about 8-12 minutes for the control plane, 5-6 for KWOK, 8-10 for the
# LeaderWorkerSet controller on 2 cores (2-3 GB of memory, a 6 GB Go build cache); Helm, before
# them, 3-4 (helm/build.sh).
k8s="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1"
k8s="$k8s -X k8s.io/component-base/version.gitMinor=$(echo "$k8s_version" | cut -d. -f2)"
build "$here/go" "$controlplane/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$k8s"
build "$here/go" "$controlplane/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager "$k8s"
build "$here/go" "$controlplane/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler "$k8s"
build "$here/go" "$controlplane/etcd" go.etcd.io/etcd/server/v3
build "$here/kwok" "$kwok/kwok" sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version"
build "$here/lws" "$lws/lws-controller" sigs.k8s.io/lws/cmd "-X sigs.k8s.io/lws/pkg/version.GitVersion=$lws_version"

# ship <module folder> <module> <folder in it> <copy>: a folder as the module ships it (a
# download: the build above already has it), unless it is there.
ship() {
  [ -e "$4" ] && return 0
  local dir
  dir=$(cd "$1" && "$go" mod download -json "$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "error: the Go module proxy did not serve $2 (see $1/go.mod)" >&2; exit 1; }
  rm -rf "$4.partial"
  cp -r "$dir/$3" "$4.partial"
  chmod -R u+w "$4.partial"
  mv "$4.partial" "$4"
}
# KWOK's RBAC (its ClusterRole and ServiceAccount); the LeaderWorkerSet project's config/: its
# CRDs (crd/bases), webhook configurations (webhook/), RBAC (rbac/).
ship "$here/kwok" sigs.k8s.io/kwok kustomize/rbac "$kwok/rbac"
ship "$here/lws" sigs.k8s.io/lws config "$lws/config"
report
