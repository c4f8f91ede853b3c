# Sourced by the scripts that build or fetch from a Go module folder of their own (go.mod, go.sum,
# tools.go): tests/controlplane/build.sh, helm/build.sh, keda/fetch.sh and
# tests/manifests/promtool/build.sh. Each keys its cache folder by what required and pins print,
# and builds it only once (build_once).

# required <module folder> <module>: the version the folder's go.mod requires of the module.
required() {
  local found
  found=$(sed -n "s|^require $2 \(v[0-9a-z.+-]*\)$|\1|p; s|^	$2 \(v[0-9a-z.+-]*\)$|\1|p" "$1/go.mod" | head -n 1)
  [ -n "$found" ] || { echo "error: no $2 version in $1/go.mod" >&2; exit 1; }
  echo "$found"
}

# pins <module folder>: 12 hex digits of the sha256 of its go.mod and go.sum.
pins() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-12; }

# build_once <what Go builds> <check...>: when the check holds, print the report and exit; else
# make sure Go is there, take the cache's lock (one build or fetch at a time: a second caller
# waits, then finds it done) and check again. Uses the caller's $go, $cache and report.
build_once() {
  local needs=$1
  shift
  if "$@"; then report; exit 0; fi
  command -v "$go" >/dev/null || { echo "error: $needs; '$go' is not on PATH" >&2; exit 1; }
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if "$@"; then report; exit 0; fi
}
