# Sourced by the scripts that build or fetch from a Go module folder of their own (go.mod, go.sum,
# tools.go): tests/controlplane/build.sh, helm/build.sh, keda/fetch.sh and
# tests/manifests/promtool/build.sh. Each keys its cache folder by what these two print.

# required <module folder> <module>: the version the folder's go.mod requires of the module.
required() {
  local found
  found=$(sed -n "s|^require $2 \(v[0-9a-z.+-]*\)$|\1|p; s|^	$2 \(v[0-9a-z.+-]*\)$|\1|p" "$1/go.mod" | head -n 1)
  [ -n "$found" ] || { echo "error: no $2 version in $1/go.mod" >&2; exit 1; }
  echo "$found"
}

# pins <module folder>: 12 hex digits of the sha256 of its go.mod and go.sum.
pins() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-12; }
