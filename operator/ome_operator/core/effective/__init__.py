"""The effective view of an InferenceService (docs/reference/cli.md, runtime effective): which
runtime it follows, each
component's mode and the rule that set it, and what the live and active views say. Pure: the CLI
collects the evidence (``cluster.fetching``) and prints the report."""
