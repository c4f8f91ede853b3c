"""ome-operator: decides how OME model-serving workloads run."""

__version__ = "0.1.0"
#: The OME release whose behaviour this operator follows.
OME_VERSION = "v1.3"


def version_line(program: str) -> str:
    """What ``<program> version`` prints."""
    return f"{program} {__version__} (OME {OME_VERSION})\n"
