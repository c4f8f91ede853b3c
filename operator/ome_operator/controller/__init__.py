"""The controller runtime: the operator's own watches and the caches they feed, a work queue of
InferenceService keys, and the worker that turns a reconcile plan into API writes. No kopf
import: start-up starts it, admission reads its caches."""
