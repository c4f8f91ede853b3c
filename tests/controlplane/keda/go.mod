// Pins the KEDA release (github.com/kedacore/keda/v2) whose CRDs (config/crd/bases/: the
// ScaledObject, ScaledJob, TriggerAuthentication and ClusterTriggerAuthentication) the
// control-plane tier installs; nothing here is built, the module is only downloaded. Don't run
// go mod tidy: nothing imports the module, so tidy would drop it. See fetch.sh.
module ome-operator.test/keda

go 1.26.0

require github.com/kedacore/keda/v2 v2.21.0
