"""The command lines of the control plane's components (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler) and the settings they share; ``control_plane`` runs them
in a folder of its own (certificates, tokens, kubeconfigs, logs).

``Features`` turns on what a default cluster leaves off: alpha feature gates, the API versions
that come with them, the controllers they add. ``NO_FEATURES``, the default, adds no flag at all:
the components run with Kubernetes' own defaults.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import yaml

__all__ = [
    "AUDIT_LOG",
    "AUDIT_POLICY",
    "CA_FILE",
    "CONTROLLERS",
    "HPA_TIMING",
    "NODE_MONITOR",
    "NO_FEATURES",
    "SERVICE_CIDR",
    "Features",
    "apiserver_argv",
    "controller_manager_argv",
    "etcd_argv",
    "scheduler_argv",
]

SERVICE_CIDR = "127.1.0.0/16"
#: Files of the control plane's folder its components read or write.
CA_FILE, AUDIT_LOG = "ca.crt", "audit.log"
#: The controllers kube-controller-manager runs: the workload controllers the operator's objects
#: need (Deployments, LeaderWorkerSets' StatefulSets, budgets, HPAs), the garbage collector and
#: namespace deletion, ServiceAccounts, and node failure (node lifecycle, taint eviction, pod GC).
#: horizontalpodautoscaling starts without a metrics server (it logs an error per HPA it syncs).
#: persistentvolume-binder binds claims to volumes, so the scheduler places pods of models read
#: from a PersistentVolumeClaim.
CONTROLLERS = (
    "garbagecollector,namespace,serviceaccount,serviceaccount-token,deployment,replicaset,"
    "disruption,statefulset,podgc,nodelifecycle,taint-eviction-controller,"
    "horizontalpodautoscaling,persistentvolume-binder"
)
#: A node whose lease is not renewed for the grace period is Unknown (NotReady), its pods
#: Ready=False: checked every second, after 12 s (the kubelet's defaults are 5 s and 50 s with a
#: 10 s lease renewal; KWOK renews every 2.5 s here, see kwok_nodes.LEASE_SECONDS).
NODE_MONITOR = ("--node-monitor-period=1s", "--node-monitor-grace-period=12s")
#: The HPA controller, when a test serves resource metrics (``resource_metrics``): every HPA
#: synced each second (default 15 s); a scale-down after 5 s of lower recommendations (default
#: 5 min); a pod's CPU sample skipped only in its first 5 s, and a readiness change taken as
#: its first only in its first 5 s (defaults 5 min and 30 s), as KWOK's pods are Ready at once.
HPA_TIMING = (
    "--horizontal-pod-autoscaler-sync-period=1s",
    "--horizontal-pod-autoscaler-downscale-stabilization=5s",
    "--horizontal-pod-autoscaler-cpu-initialization-period=5s",
    "--horizontal-pod-autoscaler-initial-readiness-delay=5s",
)
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata"}],
}


@dataclass(frozen=True)
class Features:
    """What the components run with beyond Kubernetes' defaults."""

    #: Feature gates turned on in kube-apiserver, kube-controller-manager and kube-scheduler.
    gates: tuple[str, ...] = ()
    #: API group versions the API server serves beyond its defaults (``--runtime-config``).
    api_versions: tuple[str, ...] = ()
    #: Controllers kube-controller-manager runs beside CONTROLLERS.
    controllers: tuple[str, ...] = ()

    def gate_flags(self) -> list[str]:
        """``--feature-gates`` with each gate true, or nothing when there is none."""
        gates = ",".join(f"{g}=true" for g in self.gates)
        return [f"--feature-gates={gates}"] if gates else []

    def runtime_config_flags(self) -> list[str]:
        """``--runtime-config`` with each API version on, or nothing when there is none."""
        versions = ",".join(f"{v}=true" for v in self.api_versions)
        return [f"--runtime-config={versions}"] if versions else []


NO_FEATURES = Features()


def etcd_argv(binaries: pathlib.Path, folder: pathlib.Path, client: int, peer: int) -> list[str]:
    """One etcd member on loopback, without fsync (a test cluster's data need not survive)."""
    etcd = f"http://127.0.0.1:{client}"
    return [
        str(binaries / "etcd"),
        "--name=test",
        f"--data-dir={folder / 'etcd'}",
        f"--listen-client-urls={etcd}",
        f"--advertise-client-urls={etcd}",
        f"--listen-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-cluster=test=http://127.0.0.1:{peer}",
        "--listen-metrics-urls=",
        "--unsafe-no-fsync",
        "--log-level=warn",
    ]


def apiserver_argv(
    binaries: pathlib.Path,
    folder: pathlib.Path,
    url: str,
    etcd: str,
    port: int,
    features: Features = NO_FEATURES,
) -> list[str]:
    return [
        str(binaries / "kube-apiserver"),
        f"--etcd-servers={etcd}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={folder / 'apiserver.crt'}",
        f"--tls-private-key-file={folder / 'apiserver.key'}",
        f"--client-ca-file={folder / CA_FILE}",
        f"--token-auth-file={folder / 'tokens.csv'}",
        "--authorization-mode=RBAC",
        f"--service-account-issuer={url}",
        f"--service-account-key-file={folder / 'sa.pub'}",
        f"--service-account-signing-key-file={folder / 'sa.key'}",
        "--api-audiences=https://kubernetes.default.svc",
        "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--audit-policy-file={folder / 'audit-policy.yaml'}",
        f"--audit-log-path={folder / AUDIT_LOG}",
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
        "--profiling=false",
        "--enable-priority-and-fairness=false",
        # An APIService's Service is dialled at its ClusterIP (inside the service CIDR,
        # 127.1.0.0/16), never at an endpoint's address.
        "--enable-aggregator-routing=false",
        *features.gate_flags(),
        *features.runtime_config_flags(),
        "--v=1",
    ]


def controller_manager_argv(
    binaries: pathlib.Path, folder: pathlib.Path, features: Features = NO_FEATURES
) -> list[str]:
    """kube-controller-manager as ``system:kube-controller-manager``, each controller with its
    own ServiceAccount's credentials (and so its own bootstrap ClusterRole), one instance."""
    controllers = ",".join((CONTROLLERS, *features.controllers))
    return [
        str(binaries / "kube-controller-manager"),
        f"--kubeconfig={folder / 'kcm.kubeconfig'}",
        f"--controllers={controllers}",
        *NODE_MONITOR,
        *HPA_TIMING,
        "--use-service-account-credentials=true",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
        f"--service-account-private-key-file={folder / 'sa.key'}",
        f"--root-ca-file={folder / CA_FILE}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        *features.gate_flags(),
        "--v=1",
    ]


def scheduler_argv(
    binaries: pathlib.Path, folder: pathlib.Path, port: int, features: Features = NO_FEATURES
) -> list[str]:
    """kube-scheduler as ``system:kube-scheduler``, one instance (no leader election), serving
    its health checks on 127.0.0.1 only; its configuration written to the folder. Its back-off
    for a pod that failed to schedule is 1 s, at most 2 s (defaults: 1 s and 10 s), so a pod is
    placed soon after a test labels a node for it. Its default profile has the plugins the
    feature gates add (GangScheduling, TopologyPlacementGenerator and PodGroupPodsCount come
    with their gates)."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(folder / "scheduler.kubeconfig")},
        "leaderElection": {"leaderElect": False},
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
    }
    path = folder / "scheduler-config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return [
        str(binaries / "kube-scheduler"),
        f"--config={path}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={folder / 'kube-scheduler-certs'}",
        *features.gate_flags(),
        "--v=1",
    ]
