"""The controller runtime: a work queue of InferenceService keys, the watch-fed snapshot, and the
worker that turns a reconcile plan into API writes. No kopf import: handlers feed it."""
