// Pins the LeaderWorkerSet project, whose module ships the LeaderWorkerSet CRD the control-plane
// tier installs (config/crd/bases/). Nothing here is built; ../build.sh only downloads it.
module ome-operator.test/lws

go 1.26.0

require sigs.k8s.io/lws v0.9.0
