#!/usr/bin/env bash
# Builds promtool (Prometheus's rule checker and rule unit tester) from the Go module beside this
# script (github.com/prometheus/prometheus, pinned in go.mod), into a cache folder keyed by that
# version and the module's pins,
#
#   promtool-<version>-<pins>/promtool
#
# and prints `promtool=<file>`. A no-op (no Go command runs) when the file is there. The first
# build takes about 5 minutes on 2 cores once the modules are downloaded (its service discoveries
# pull in the cloud SDKs).
# tests/manifests/test_prometheusrule_promtool.py runs the file this prints.
#
#   OME_PROMTOOL_CACHE   where the keyed folders live (default ~/.cache/ome-operator/promtool)
#   OME_PROMTOOL_GO      the go command (default: go); Go 1.26.7 or newer (go.mod)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
go=${OME_PROMTOOL_GO:-go}
cache=${OME_PROMTOOL_CACHE:-$HOME/.cache/ome-operator/promtool}
module=github.com/prometheus/prometheus

# shellcheck source=../../controlplane/go_modules.sh
. "$here/../../controlplane/go_modules.sh"     # required <folder> <module>, pins <folder>
version=$(required "$here" "$module")
pins=$(pins "$here")
promtool="$cache/promtool-$version-$pins/promtool"

report() { printf 'promtool=%s\n' "$promtool"; }
build_once "promtool is built with Go 1.26.7 (or newer)" test -x "$promtool"

export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
mkdir -p "$(dirname "$promtool")"
echo "building promtool $version into $(dirname "$promtool")" >&2
started=$SECONDS
(cd "$here" && "$go" build -trimpath -ldflags "-s -w" -o "$promtool.partial" "$module/cmd/promtool")
mv "$promtool.partial" "$promtool"
echo "built promtool in $((SECONDS - started)) s" >&2
report
