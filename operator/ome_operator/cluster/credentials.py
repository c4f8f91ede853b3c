"""The operator's client for its cluster: in-cluster credentials, else the kubeconfig."""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from .api import KubeApi, RequestRecorder

__all__ = ["credentials_problem", "kube_api"]


def kube_api(on_request: RequestRecorder | None = None, **options: Any) -> KubeApi:
    """A client for the cluster: in-cluster credentials, else the kubeconfig; ``on_request``
    counts each request; ``options`` are ``KubeApi``'s (``timeout``, ``fence``, ``user_agent``)."""
    configuration = k8s_client.Configuration()
    try:
        k8s_config.load_incluster_config(client_configuration=configuration)
    except k8s_config.ConfigException:
        k8s_config.load_kube_config(client_configuration=configuration)
    return KubeApi(k8s_client.ApiClient(configuration), on_request=on_request, **options)


def credentials_problem() -> str | None:
    """Why no client for a cluster can be made (None: one can), before anything starts."""
    try:
        kube_api()
    except (k8s_config.ConfigException, OSError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return (
            "no cluster to connect to (no in-cluster service account, no usable kubeconfig): "
            f"{reason}"
        )
    return None
