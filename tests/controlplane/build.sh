#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver, kube-controller-manager, etcd) from the Go
# module in go/ into a cache folder keyed by the Kubernetes version and the module's pins,
# puts beside them the LeaderWorkerSet CRD that the module pinned in lws/ ships
# (leaderworkerset-crd.yaml), and prints that folder. A no-op (well under a second) when
# they are there.
#
#   OME_CONTROLPLANE_CACHE   where the keyed folders live (default ~/.cache/ome-operator/controlplane)
#   OME_CONTROLPLANE_GO      the go command (default: go); kube-apiserver 1.36 needs Go 1.26,
#                            or Go 1.27 with GOEXPERIMENT=nojsonv2, which this script sets
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module="$here/go"
go=${OME_CONTROLPLANE_GO:-go}
version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p; s/^\tk8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$module/go.mod" | head -n 1)
[ -n "$version" ] || { echo "error: no k8s.io/kubernetes version in $module/go.mod" >&2; exit 1; }
pins=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
cache=${OME_CONTROLPLANE_CACHE:-$HOME/.cache/ome-operator/controlplane}
out="$cache/$version-$pins"
programs=(kube-apiserver kube-controller-manager etcd)
ready() { for p in "${programs[@]}"; do [ -x "$out/$p" ] || return 1; done; }
lws_pins=$(cat "$here/lws/go.mod" "$here/lws/go.sum" | sha256sum | cut -c1-12)
crd_ready() { [ "$(cat "$out/leaderworkerset-crd.pins" 2>/dev/null)" = "$lws_pins" ]; }

# The CRD of the LeaderWorkerSet project, as its Go module ships it (a download, no build).
fetch_crd() {
  local dir
  dir=$(cd "$here/lws" && GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local \
        "$go" mod download -json sigs.k8s.io/lws | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "error: the Go module proxy did not serve sigs.k8s.io/lws (see $here/lws/go.mod)" >&2; exit 1; }
  cp "$dir/config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml" "$out/leaderworkerset-crd.yaml.partial"
  chmod u+w "$out/leaderworkerset-crd.yaml.partial"
  mv "$out/leaderworkerset-crd.yaml.partial" "$out/leaderworkerset-crd.yaml"
  echo "$lws_pins" >"$out/leaderworkerset-crd.pins"
}

if ready && crd_ready; then echo "$out"; exit 0; fi

command -v "$go" >/dev/null || { echo "error: the control plane is built with Go 1.26 (or newer); '$go' is not on PATH" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9                       # one build at a time; a second caller waits, then finds it built
if ready; then crd_ready || fetch_crd; echo "$out"; exit 0; fi
tmp="$out.partial"
rm -rf "$tmp"; mkdir -p "$tmp"
echo "building the control plane $version into $out (first time: about 8-12 minutes, 2-3 GB of memory)" >&2
cd "$module"
export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
case "$("$go" env GOVERSION)" in go1.2[7-9]*|go1.[3-9]*) export GOEXPERIMENT=nojsonv2 ;; esac
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)"
"$go" build -trimpath -ldflags "$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
"$go" build -trimpath -ldflags "$ldflags" -o "$tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
"$go" build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
rm -rf "$out"; mv "$tmp" "$out"
fetch_crd
echo "$out"
