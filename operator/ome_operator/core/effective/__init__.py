"""The effective view of an InferenceService (S12.8, S13): which runtime it follows, each
component's mode and the rule that set it, and what the live and active views say. Pure: the CLI
collects the evidence (``cluster.fetching``) and prints the report."""
