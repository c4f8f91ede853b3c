#!/usr/bin/env bash
# Fetches the KEDA CRDs the control-plane tier installs: the release pinned in go.mod beside this
# script (github.com/kedacore/keda/v2, nothing built, the module only downloaded), its
# config/crd/bases/*.yaml copied into a cache folder keyed by that version and the module's pins,
#
#   keda-<version>-<pins>/crds/   keda.sh_scaledobjects.yaml, keda.sh_scaledjobs.yaml,
#                                 keda.sh_triggerauthentications.yaml,
#                                 keda.sh_clustertriggerauthentications.yaml, and the
#                                 eventing.keda.sh CloudEventSource CRDs
#
# and prints `keda=<folder>`. A no-op (no Go command runs) when that folder is there.
#
#   OME_CONTROLPLANE_CACHE   where the keyed folders live (default ~/.cache/ome-operator/controlplane)
#   OME_CONTROLPLANE_GO      the go command (default: go)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
go=${OME_CONTROLPLANE_GO:-go}
cache=${OME_CONTROLPLANE_CACHE:-$HOME/.cache/ome-operator/controlplane}
module=github.com/kedacore/keda/v2

# shellcheck source=../go_modules.sh
. "$here/../go_modules.sh"     # required <folder> <module>, pins <folder>
version=$(required "$here" "$module")
pins=$(pins "$here")
keda="$cache/keda-$version-$pins"

report() { printf 'keda=%s\n' "$keda"; }
build_once "the KEDA CRDs are fetched with Go" test -d "$keda"

export GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
started=$SECONDS
# Checked against go.sum: a module whose hash differs from the pinned one is refused.
answer=$(cd "$here" && "$go" mod download -json "$module") || {
  echo "error: the Go module proxy did not serve $module $version (see $here/go.mod):" >&2
  echo "$answer" >&2
  exit 1
}
dir=$(printf '%s\n' "$answer" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$dir/config/crd/bases" ] || { echo "error: no config/crd/bases in $module $version ($dir)" >&2; exit 1; }

rm -rf "$keda.partial"
mkdir -p "$keda.partial/crds"
cp "$dir"/config/crd/bases/*.yaml "$keda.partial/crds/"
chmod -R u+w "$keda.partial"
mv "$keda.partial" "$keda"
echo "fetched the KEDA $version CRDs into $keda in $((SECONDS - started)) s" >&2
report
