"""ome-operator: decides how OME model-serving workloads run."""

__version__ = "0.1.0"
