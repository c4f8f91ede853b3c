#!/usr/bin/env bash
# Builds Helm, which the chart's tests run (helm lint, helm template; helm install, upgrade and
# uninstall on the control plane): the release pinned in go.mod beside this script
# (helm.sh/helm/v3, its cmd/helm), into a cache folder keyed by that version and the module's pins,
#
#   helm-<version>-<pins>/helm
#
# and prints `helm=<folder>`. A no-op (no Go command runs) when the program is there. ../build.sh
# runs it first, so the control-plane tier's build also builds Helm; the chart's offline tests
# (tests/manifests/test_chart*.py) run it alone, and build nothing else.
#
# The first time (measured on 2 cores that other builds were using): 3 minutes with an empty Go
# build cache and the modules already downloaded, 4 minutes with their download too (410 MB of
# modules); 2.3 minutes of CPU time, under 1 GB of memory, a 0.7 GB Go build cache.
#
#   OME_CONTROLPLANE_CACHE   where the keyed folders live (default ~/.cache/ome-operator/controlplane)
#   OME_CONTROLPLANE_GO      the go command (default: go); Helm 3.22 needs Go 1.26
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
go=${OME_CONTROLPLANE_GO:-go}
cache=${OME_CONTROLPLANE_CACHE:-$HOME/.cache/ome-operator/controlplane}
module=helm.sh/helm/v3

# shellcheck source=../go_modules.sh
. "$here/../go_modules.sh"     # required <folder> <module>, pins <folder>
version=$(required "$here" "$module")
pins=$(pins "$here")
helm="$cache/helm-$version-$pins"

report() { printf 'helm=%s\n' "$helm"; }
build_once "Helm is built with Go 1.26 (or newer)" test -x "$helm/helm"

export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
# As Helm's Makefile: its version, and the Kubernetes version its client libraries are (1.<minor>
# of k8s.io/client-go v0.<minor>), which `helm template` reports as .Capabilities.KubeVersion
# and `helm lint` checks deprecated APIs against.
client_go=$(cd "$here" && "$go" list -f '{{.Version}}' -m k8s.io/client-go)
minor=$(echo "$client_go" | cut -d. -f2)
ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.gitTreeState=clean"
for package in pkg/lint/rules pkg/chartutil; do
  ldflags="$ldflags -X $module/$package.k8sVersionMajor=1 -X $module/$package.k8sVersionMinor=$minor"
done

echo "building helm $version into $helm" >&2
started=$SECONDS
mkdir -p "$helm"
(cd "$here" && "$go" build -trimpath -ldflags "$ldflags" -o "$helm/helm.partial" "$module/cmd/helm")
mv "$helm/helm.partial" "$helm/helm"
echo "built helm in $((SECONDS - started)) s" >&2
report
