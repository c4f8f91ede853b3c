"""A seeded chaos run (issue 8): the operator survives whatever one object or one API answer
does to it.

A fleet of InferenceServices over three namespaces (every workload kind: Deployments,
LeaderWorkerSets and InferenceReplicas with their Services, PodDisruptionBudgets and
HorizontalPodAutoscalers; named, auto-selected and missing runtimes) is created and changed (a
runtime image, Deployments deleted, replicas, a selection that moves, routers removed) twice:
once on a calm emulator, and once while the emulator answers writes with 500s and 409s, cuts
watches (ended, or ended with a 410 ERROR event), answers watch requests with 410 Gone, and the
operator is restarted mid-flight. The faulty run must end as the calm one: the same objects,
each created once (the deleted ones twice), the same statuses, every event posted (at least
once: a fault between an event and the status it goes with may post it again, never lose it);
both runs' statuses must be the pure core's (``render_report`` run again over its own objects
and statuses until nothing changes); and once converged, nothing is written.

The fleet, the faults, the scenario and the comparison are shared with
``tests/bench/chaos.py``, which runs the same with 1,000 InferenceServices.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import pathlib
import random
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import kmock
import pytest

from ome_operator.cli.render import render_report
from ome_operator.core.instances import plan_instances
from ome_operator.core.ownership import UID_ANNOTATION
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.support.kube_access import write_kubeconfig
from tests.support.kube_emulator import DECLARED_RESOURCES, ApiServerLikeEmulator
from tests.support.operator_run import QUIET_SECONDS, RunningOperator, running_operator

ISVC = "ome.io/v1beta1/inferenceservices"
CSR = "ome.io/v1beta1/clusterservingruntimes"
SR = "ome.io/v1beta1/servingruntimes"
CBM = "ome.io/v1beta1/clusterbasemodels"
DEPLOYMENT = "apps/v1/deployments"
SERVICE = "v1/services"
PDB = "policy/v1/poddisruptionbudgets"
REPLICA = "ome.io/v1beta1/inferencereplicas"
LWS = "leaderworkerset.x-k8s.io/v1/leaderworkersets"
HPA = "autoscaling/v2/horizontalpodautoscalers"
EVENT = "v1/events"
#: The kinds the operator writes for an InferenceService.
WORKLOADS = (DEPLOYMENT, SERVICE, PDB, REPLICA, LWS, HPA)
#: The kinds the operator decides from (kopf watched them up to 473ba4a: a 410 answered to one
#: of their watch requests made kopf, and the operator with it, exit).
INPUTS = (ISVC, SR, CSR)
RESOURCES = {
    "InferenceService": ISVC,
    "ClusterServingRuntime": CSR,
    "ServingRuntime": SR,
    "ClusterBaseModel": CBM,
}

NAMESPACES = ("team-a", "team-b", "team-c")
MODE = "ome.io/deploymentMode"


# -- the fleet ----------------------------------------------------------------------------------


def _runner(image: str) -> dict[str, Any]:
    return {
        "name": "ome-container",
        "image": image,
        "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
    }


def _leader_worker(image: str, **engine: Any) -> dict[str, Any]:
    worker = {"size": 1, "runner": {"name": "ome-container", "image": image}}
    return {**engine, "leader": {"runner": _runner(image)}, "worker": worker}


def runtimes() -> list[dict[str, Any]]:
    """A cluster runtime per workload kind, one that must be named, and a namespace runtime."""
    formats = [entry(autoSelect=True, priority=1)]
    return [
        runtime_manifest(
            "vllm",
            formats=formats,
            size_range=("1B", "30B"),
            engineConfig={"runner": _runner("vllm:1")},
        ),
        runtime_manifest(
            "vllm-multinode",
            formats=formats,
            size_range=("31B", "100B"),
            engineConfig=_leader_worker("vllm:1", annotations={MODE: "MultiNode"}),
        ),
        runtime_manifest(
            "llamacpp",
            formats=[entry("gguf", "llama.cpp", autoSelect=True)],
            engineConfig=_leader_worker("llamacpp:1"),
        ),
        runtime_manifest(
            "routed",
            formats=[entry()],
            engineConfig={"runner": _runner("routed:1")},
            routerConfig={"runner": _runner("router:1")},
        ),
        runtime_manifest(
            "local",
            cluster=False,
            namespace="team-a",
            formats=formats,
            size_range=("1B", "10B"),
            engineConfig={"runner": _runner("local:1")},
        ),
    ]


def models() -> list[dict[str, Any]]:
    def storage(name: str) -> dict[str, str]:
        return {"storageUri": f"hf://meta/{name}", "path": f"/models/{name}"}

    return [
        model_manifest("llama-8b", modelParameterSize="8B", storage=storage("llama-8b")),
        model_manifest("llama-70b", modelParameterSize="70B", storage=storage("llama-70b")),
        model_manifest(
            "tiny",
            fmt="gguf",
            framework="llama.cpp",
            modelParameterSize="1B",
            storage=storage("tiny"),
        ),
    ]


PLAIN = {"model": "llama-8b"}
#: What the InferenceServices of the fleet look like, drawn with the seeded generator.
SHAPES: tuple[dict[str, Any], ...] = (
    PLAIN,  # a Deployment (team-a: of its namespace runtime)
    {"model": "llama-8b", "engine": {"minReplicas": 3}},
    {"model": "llama-70b"},  # a LeaderWorkerSet
    {"model": "tiny"},  # an InferenceReplica (a leader and a worker)
    {"model": "llama-8b", "deploymentMode": "OMENative"},
    {"model": "llama-8b", "runtime": {"name": "routed"}, "router": {}},
    # Admitted without a model (S7.2.6), then RuntimeNotFound (S8.2).
    {"model": None, "runtime": {"name": "absent"}, "engine": {"runner": _runner("custom:1")}},
)


def fleet(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` InferenceServices over the namespaces, their shapes drawn from ``seed``."""
    rng = random.Random(seed)
    return [
        isvc_manifest(
            f"isvc-{i:04d}", namespace=NAMESPACES[i % len(NAMESPACES)], **rng.choice(SHAPES)
        )
        for i in range(count)
    ]


# -- the faults ----------------------------------------------------------------------------------

#: (what the operator must survive, status, criteria), per resource. Writes and deletions fail
#: at random (drawn from the emulator's seeded generator). Of every watched kind, the first
#: watch request is refused, the second watch ends after 0-30 events, the third ends so with
#: 410 Expired; later ones get each of these at random, twice at most. ``times`` bounds every
#: fault, so the run converges once they are spent.
WRITE_FAULTS = (
    ("500 on a create", 500, {"method": "POST", "probability": 0.08}),
    ("409 on a create", 409, {"method": "POST", "probability": 0.04}),
    ("500 on a patch", 500, {"method": "PATCH", "probability": 0.15}),
    ("409 on a patch", 409, {"method": "PATCH", "probability": 0.1}),
)
STATUS_FAULTS = (
    ("500 on a status write", 500, {"probability": 0.08}),
    ("409 on a status write", 409, {"probability": 0.04}),
)
DELETE_FAULTS = (("500 on a deletion", 500, {"probability": 0.3}),)
WATCH_FAULTS = (
    ("a watch request is answered 410 Gone", 410, {}),
    ("a watch ends", None, {"cut_after": (0, 30)}),
    ("a watch ends with 410 Expired", 410, {"cut_after": (0, 30)}),
)
GONE_ON_REQUEST = WATCH_FAULTS[0][0]


def fault_table(*, input_watch_gone: bool = True) -> list[tuple[str, int | None, dict[str, Any]]]:
    """Every fault as ``(what, status, inject_fault keywords)``; ``input_watch_gone=False``
    leaves out the 410 answered to a watch request of an InferenceService or a runtime."""
    table: list[tuple[str, int | None, dict[str, Any]]] = []
    for what, status, criteria in WRITE_FAULTS:
        for resource in (*WORKLOADS, EVENT):
            if criteria["method"] == "POST" or resource != EVENT:  # events are only created
                table.append((what, status, {"resource": resource, "times": 10_000, **criteria}))
    for what, status, criteria in STATUS_FAULTS:
        where = {"resource": ISVC, "method": "PATCH", "subresource": "status", "times": 10_000}
        table.append((what, status, {**where, **criteria}))
    for what, status, criteria in DELETE_FAULTS:  # a router's Service and budget (the test
        for resource in (SERVICE, PDB):  # deletes Deployments itself)
            where = {"resource": resource, "method": "DELETE", "times": 10_000}
            table.append((what, status, {**where, **criteria}))
    for odds in ({"probability": 1.0, "times": 1}, {"probability": 0.3, "times": 2}):
        for what, status, criteria in WATCH_FAULTS:
            for resource in (*WORKLOADS, *INPUTS):
                given = resource in INPUTS
                if what == GONE_ON_REQUEST and given and not input_watch_gone:
                    continue
                watch = {"resource": resource, "action": "watch", **odds, **criteria}
                table.append((f"{what} ({'inputs' if given else 'workloads'})", status, watch))
    return table


def inject(kube: Any, table: Iterable[tuple[str, int | None, dict[str, Any]]]) -> list[Any]:
    """Inject the faults; ``(what, Fault)`` pairs, whose ``hits`` count what was answered."""
    return [(what, kube.inject_fault(status, **criteria)) for what, status, criteria in table]


def hits(injected: Iterable[tuple[str, Any]]) -> dict[str, int]:
    """How often each kind of fault was answered."""
    found: collections.Counter[str] = collections.Counter()
    for what, fault in injected:
        found[what] += fault.hits
    return dict(found)


# -- the changes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """A write made while the operator works: a create (POST), a merge patch, or a delete."""

    method: str
    path: str
    body: dict[str, Any] | None = None


def api_path(resource: str, namespace: str | None, name: str | None = None) -> str:
    info = kmock.resource(resource)
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    scope = f"/namespaces/{namespace}" if namespace else ""
    return f"{root}{scope}/{info.plural}" + (f"/{name}" if name else "")


def creates(manifests: Iterable[Mapping[str, Any]]) -> list[Change]:
    return [
        Change("POST", api_path(RESOURCES[m["kind"]], m["metadata"].get("namespace")), dict(m))
        for m in manifests
    ]


def image_change() -> list[Change]:
    """A cluster runtime's image changes under every InferenceService that runs on it."""
    image = {"spec": {"engineConfig": {"runner": {"image": "vllm:2"}}}}
    return [Change("PATCH", api_path(CSR, None, "vllm"), image)]


def doomed_deployments(isvcs: Iterable[Mapping[str, Any]], count: int = 5) -> list[Key]:
    """Deployments the test deletes: the operator must create them again (once each)."""
    found = [i["metadata"] for i in isvcs if i["spec"] == isvc_manifest(**PLAIN)["spec"]]
    return [("Deployment", m["namespace"], f"{m['name']}-engine") for m in found[:count]]


def deletions(keys: Iterable[Key]) -> list[Change]:
    return [Change("DELETE", api_path(DEPLOYMENT, namespace, name)) for _, namespace, name in keys]


def scaling(isvcs: Iterable[Mapping[str, Any]]) -> list[Change]:
    """Every tenth InferenceService gets two replicas (its generation moves): both bounds, so
    that no autoscaler takes ``replicas`` over (its HorizontalPodAutoscaler, if any, is
    deleted) and the operator applies them."""
    two = {"spec": {"engine": {"minReplicas": 2, "maxReplicas": 2}}}
    return [
        Change("PATCH", api_path(ISVC, i["metadata"]["namespace"], i["metadata"]["name"]), two)
        for i in list(isvcs)[::10]
    ]


def later_changes(isvcs: Iterable[Mapping[str, Any]]) -> list[Change]:
    """A namespace runtime for large models: team-c's move from LeaderWorkerSets to Deployments
    (S3.6: the LeaderWorkerSets stay); every other router removed (S3.7: its objects are
    deleted); and a label-only change to a cluster runtime (decides nothing)."""
    big = runtime_manifest(
        "big-local",
        cluster=False,
        namespace="team-c",
        formats=[entry(autoSelect=True, priority=1)],
        size_range=("31B", "100B"),
        engineConfig={"runner": _runner("big-local:1")},
    )
    routed = [i["metadata"] for i in isvcs if "router" in i["spec"]]
    unrouted = [
        Change("PATCH", api_path(ISVC, m["namespace"], m["name"]), {"spec": {"router": None}})
        for m in routed[::2]
    ]
    touched = {"metadata": {"labels": {"touched": "1"}}}
    return [
        *creates([big]),
        *unrouted,
        Change("PATCH", api_path(CSR, None, "llamacpp"), touched),
    ]


def multinode_in_team_c(isvcs: Iterable[Mapping[str, Any]]) -> list[Where]:
    """The InferenceServices ``later_changes`` moves off their LeaderWorkerSets."""
    return [
        _where(i)
        for i in isvcs
        if i["metadata"]["namespace"] == "team-c"
        and i["spec"].get("model") == {"name": "llama-70b"}
    ]


# -- the outcome and the comparison --------------------------------------------------------------

Key = tuple[str, str | None, str]  # (kind, namespace, name)
Where = tuple[str, str]  # (namespace, InferenceService)
#: Metadata the API server sets: left out of every comparison.
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


@dataclass(frozen=True)
class Outcome:
    """What a run leaves: the operator's objects, the statuses, and the events' decisions."""

    objects: Mapping[Key, Mapping[str, Any]]
    statuses: Mapping[Where, Mapping[str, Any]]
    events: Mapping[tuple[str, str, str, str], int]


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace"), meta["name"]


def _where(obj: Mapping[str, Any]) -> Where:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]


def plain(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object without the server's metadata and without status, as a client writes it."""
    found = copy.deepcopy(dict(obj))
    for name in SERVER_METADATA:
        found.get("metadata", {}).pop(name, None)
    found.pop("status", None)
    return found


def timeless(status: Mapping[str, Any]) -> dict[str, Any]:
    """A status without the conditions' lastTransitionTime (its own, and those its components'
    lifecycles mirror)."""
    found = copy.deepcopy(dict(status))
    lifecycles = [c.get("lifecycle") or {} for c in (found.get("components") or {}).values()]
    for holder in (found, *lifecycles):
        for condition in holder.get("conditions") or []:
            condition.pop("lastTransitionTime", None)
    return found


def outcome_of(live: Iterable[Mapping[str, Any]]) -> Outcome:
    """The outcome in live objects: the owned kinds, InferenceServices and Events. An owner
    reference's uid, and the InferenceService uid an object records, are compared with its
    owner's: ``"<owner's>"`` when it is the live one's."""
    live = list(live)
    uids = {_where(o): o["metadata"]["uid"] for o in live if o["kind"] == "InferenceService"}
    objects, statuses = {}, {}
    events: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
    for obj in live:
        if obj["kind"] == "InferenceService":
            statuses[_where(obj)] = timeless(obj.get("status") or {})
        elif obj["kind"] == "Event":
            involved = obj["involvedObject"]
            events[involved["namespace"], involved["name"], obj["reason"], obj["message"]] += 1
        else:
            found = plain(obj)
            live_uids = set()
            for owner in found["metadata"].get("ownerReferences") or []:
                if owner["uid"] == uids.get((found["metadata"]["namespace"], owner["name"])):
                    live_uids.add(owner["uid"])
                    owner["uid"] = "<owner's>"
            annotations = found["metadata"].get("annotations") or {}
            if annotations.get(UID_ANNOTATION) in live_uids:
                annotations[UID_ANNOTATION] = "<owner's>"
            objects[key_of(found)] = found
    return Outcome(objects, statuses, dict(events))


_CORE_TIME = "2026-01-01T00:00:00Z"


def core_statuses(stored: Iterable[Mapping[str, Any]], *, passes: int = 5) -> dict[Where, Any]:
    """The statuses the pure core settles on for the runtimes, models and InferenceServices the
    server holds: ``render_report`` again over its own objects and statuses until a pass
    changes nothing."""
    isvcs, others = [], []
    for obj in stored:
        found = copy.deepcopy(dict(obj))
        found.pop("status", None)  # the uid and generation stay: the owner refs name them
        (isvcs if found["kind"] == "InferenceService" else others).append(found)
    objects: dict[Key, dict[str, Any]] = {}
    statuses: dict[Where, dict[str, Any]] = {}
    for _ in range(passes):
        bodies = [
            {**i, "status": statuses[_where(i)]} if _where(i) in statuses else i for i in isvcs
        ]
        report = render_report([*others, *bodies, *objects.values()], now=_CORE_TIME)
        passed_objects, passed_statuses = {}, {}
        pods: dict[Key, list[dict[str, Any]]] = collections.defaultdict(list)
        for item in report["items"]:
            assert item["admission"]["allowed"], item  # no webhook turns them away here
            where = (item["inferenceService"]["namespace"], item["inferenceService"]["name"])
            passed_statuses[where] = item["status"]
            for obj in item["objects"]:
                if obj["kind"] == "Pod":  # the InferenceReplica controller's, as it makes them
                    owner = obj["metadata"]["ownerReferences"][0]["name"]
                    pods["InferenceReplica", obj["metadata"]["namespace"], owner].append(obj)
                else:
                    passed_objects[key_of(obj)] = obj
        for key, obj in passed_objects.items():
            held = ((objects.get(key) or {}).get("spec") or {}).get("replicas")
            if held is not None and "replicas" not in obj.get("spec", {}):
                # An autoscaled workload, as render shows it once it exists: the server keeps
                # the replicas the apply leaves out.
                obj["spec"] = {**obj["spec"], "replicas": held}
            if obj["kind"] == "InferenceReplica":  # its status as that controller writes it
                before = {**obj, "status": (objects.get(key) or {}).get("status") or {}}
                obj["status"] = plan_instances(before, pods[key], now=_CORE_TIME).status
        if (passed_objects, passed_statuses) == (objects, statuses):
            return {where: timeless(status) for where, status in statuses.items()}
        objects, statuses = passed_objects, passed_statuses
    raise AssertionError(f"the core found no fixpoint in {passes} passes")


@dataclass(frozen=True)
class Differences:
    duplicates: list[Any]  # objects created more than once, events posted more than once
    missing: list[Any]  # objects and events of the fault-free run that are not there
    unexpected: list[Key]  # objects that are there but not in the fault-free run
    objects: list[Key]  # objects that differ from the fault-free run's
    statuses: list[Where]  # statuses that differ from the fault-free run's or from the core's


def differences(run: Run, reference: Run, recreated: Iterable[Key]) -> Differences:
    """How ``run`` differs from the fault-free ``reference``; ``recreated``: the objects the
    scenario deletes (the operator creates those twice)."""
    found, wanted, again = run.outcome, reference.outcome, set(recreated)
    events = found.events.keys() | wanted.events.keys()
    statuses = _differing(found.statuses, wanted.statuses) + _differing(
        found.statuses, run.core_statuses
    )
    return Differences(
        # Events are at least once: a fault (or a restart) between an event and the status
        # it goes with may post it again, never lose it; objects are exactly once.
        duplicates=sorted(k for k, n in run.created.items() if n > 1 + (k in again)),
        missing=sorted(wanted.objects.keys() - found.objects.keys())
        + sorted(k for k in events if found.events.get(k, 0) < wanted.events.get(k, 0)),
        unexpected=sorted(found.objects.keys() - wanted.objects.keys()),
        objects=_differing(found.objects, wanted.objects),
        statuses=sorted(set(statuses)),
    )


def _differing(found: Mapping[Any, Any], wanted: Mapping[Any, Any]) -> list[Any]:
    return sorted(k for k in found.keys() | wanted.keys() if found.get(k) != wanted.get(k))


# -- the scenario ----------------------------------------------------------------------------------

SEED = 8
COUNT = 240
#: Seconds the operator must stay quiet (no write) once converged: longer than any backoff.
QUIET = QUIET_SECONDS
TIMEOUT = 30.0
#: Every watch ends after this long (a real server's request timeout, shortened): a watch
#: kopf leaves behind when it fails ends too, so that nothing outlives the test.
WATCH_SECONDS = 5


class Cluster(Protocol):
    """Where the scenario runs: the emulator in this loop, or one in a process of its own."""

    async def send(self, changes: Iterable[Change]) -> None: ...

    async def live(self, *resources: str) -> list[dict[str, Any]]: ...

    async def creations(self) -> dict[Key, int]:
        """How many times each owned object was created (each creation has its own uid)."""

    async def writes(self) -> list[str]:
        """``METHOD path`` of every write the operator made so far."""


@dataclass(frozen=True)
class Run:
    outcome: Outcome
    core_statuses: Mapping[Where, Any]  # what the core decides for the same inputs
    created: Mapping[Key, int]
    in_flight: int  # InferenceServices queued when the first operator stopped
    writes: list[str]  # every write the operator made
    late: list[str]  # the writes within QUIET seconds after convergence
    seconds: float  # from the first InferenceService to convergence


@dataclass
class Operator:
    """The operator running in this loop, and kopf's task (done: kopf stopped, or failed)."""

    running: RunningOperator
    kopf: asyncio.Task[Any]

    async def until(self, probe: Any, timeout: float, interval: float) -> bool:
        """Whether the coroutine function ``probe`` answered true within ``timeout``; fails at
        once if kopf stopped meanwhile."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not await probe():
            if self.kopf.done():
                raise AssertionError("kopf stopped; the operator is gone")
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(interval)
        return True


@contextlib.asynccontextmanager
async def operator_running(**options: Any) -> AsyncIterator[Operator]:
    """The operator in this loop. When kopf itself fails, what it leaves running (its watchers,
    the controller's informers) is stopped too: a crashed process would take it along."""
    before = asyncio.all_tasks()
    controller = None
    try:
        async with running_operator(**options) as running:
            controller = running.controller
            (kopf,) = [t for t in asyncio.all_tasks() - before if _coroutine(t) == "run_tasks"]
            yield Operator(running, kopf)
    finally:
        if controller is not None:
            await controller.stop()
        leftovers = [t for t in asyncio.all_tasks() if _is_kopf(t) and not t.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.wait(leftovers, timeout=2 * WATCH_SECONDS)


def _async(probe: Any) -> Any:
    async def probed() -> Any:
        return probe()

    return probed


def _coroutine(task: asyncio.Task[Any]) -> str:
    return getattr(getattr(task.get_coro(), "cr_code", None), "co_name", "")


def _is_kopf(task: asyncio.Task[Any]) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    return code is not None and "/kopf/" in code.co_filename


async def scenario(
    cluster: Cluster,
    isvcs: list[dict[str, Any]],
    *,
    restart: bool,
    timeout: float = TIMEOUT,
    poll: float = 0.1,
    **options: Any,
) -> Run:
    """Seed; create the first half of the fleet, change a runtime's image, delete Deployments;
    (restart the operator;) create the rest, scale, move team-c's selection; converge (the
    statuses are the core's and nothing is queued); then count the writes of a quiet window.

    ``timeout`` bounds the whole (a wait that runs out goes on, and the comparison shows what
    is missing); ``poll`` is the interval of every wait; ``options`` go to the operator."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(deadline - time.monotonic(), 0.0)

    await cluster.send(creates([*runtimes(), *models()]))
    first_half, second_half = isvcs[: len(isvcs) // 2], isvcs[len(isvcs) // 2 :]
    doomed = doomed_deployments(first_half)
    multinode = multinode_in_team_c(isvcs)

    async def multinode_reconciled() -> bool:  # the status is written last in a pass
        found = {_where(i): i for i in await cluster.live(ISVC)}
        return all(
            status.get("observedGeneration") == isvc["metadata"]["generation"]
            and status.get("components", {}).get("engine", {}).get("deploymentMode") == "MultiNode"
            for isvc in (found[w] for w in multinode)
            for status in [isvc.get("status") or {}]
        )

    async def present(keys: list[Key]) -> bool:
        return set(keys) <= {key_of(o) for o in await cluster.live(DEPLOYMENT, LWS)}

    async with contextlib.AsyncExitStack() as stack:
        operator = await stack.enter_async_context(operator_running(**options))
        started = time.monotonic()
        await cluster.send(creates(first_half))
        await operator.until(lambda: present(doomed), left(), poll)
        await cluster.send([*image_change(), *deletions(doomed)])
        queue = operator.running.controller.queue
        await operator.until(_async(lambda: len(queue) > 0), left(), 0.01)  # re-queued all
        in_flight = len(queue)
        if restart:
            await stack.aclose()
            operator = await stack.enter_async_context(operator_running(**options))
        await cluster.send([*creates(second_half), *scaling(isvcs)])
        await operator.until(multinode_reconciled, left(), poll)
        await cluster.send(later_changes(isvcs))
        core = core_statuses(await cluster.live(ISVC, CSR, SR, CBM))

        async def converged() -> bool:
            found = outcome_of(await cluster.live(ISVC))
            return found.statuses == core and len(operator.running.controller.queue) == 0

        await operator.until(converged, left(), max(poll, 0.25))
        seconds = time.monotonic() - started
        mark = len(await cluster.writes())
        await asyncio.sleep(QUIET)
        writes = await cluster.writes()
    outcome = outcome_of(await cluster.live(*WORKLOADS, ISVC, EVENT))
    created = await cluster.creations()
    return Run(outcome, core, created, in_flight, writes, writes[mark:], seconds)


# -- in the test's event loop ----------------------------------------------------------------------

WRITES = frozenset({kmock.method.POST, kmock.method.PATCH, kmock.method.PUT, kmock.method.DELETE})


@dataclass
class LocalCluster:
    """The emulator of this loop. The test's own client sends no credentials; the operator's
    requests carry its kubeconfig's token: those are the operator's writes."""

    kube: Any

    async def send(self, changes: Iterable[Change], *, concurrency: int = 8) -> None:
        pending = list(changes)
        merge = {"Content-Type": "application/merge-patch+json"}
        verbs = {"POST": self.kube.post, "PATCH": self.kube.patch, "DELETE": self.kube.delete}

        async def one(change: Change) -> None:
            headers = merge if change.method == "PATCH" else {}
            send = verbs[change.method]
            async with send(change.path, json=change.body, headers=headers) as answer:
                if answer.status >= 400:
                    text = await answer.text()
                    raise AssertionError(f"{change.method} {change.path}: {answer.status} {text}")

        for start in range(0, len(pending), concurrency):
            await asyncio.gather(*(one(c) for c in pending[start : start + concurrency]))

    async def live(self, *resources: str) -> list[dict[str, Any]]:
        wanted = {kmock.resource(r) for r in resources}
        return [
            copy.deepcopy(versions.raw)
            for (resource, _, _), versions in self.kube.objects.items()
            if resource in wanted and not versions.deleted
        ]

    async def creations(self) -> dict[Key, int]:
        return creations(self.kube)

    async def writes(self) -> list[str]:
        return [
            f"{r.method.name} {r.url.path}"
            for r in list(self.kube)
            if r.method in WRITES and "Authorization" in r.headers
        ]


def creations(kube: Any) -> dict[Key, int]:
    """How many times ``kube`` created each owned object (each creation has its own uid)."""
    owned = {kmock.resource(r) for r in WORKLOADS}
    found = {}
    for (resource, namespace, name), versions in kube.objects.items():
        if resource in owned:
            stored = [v for v in versions.history if v is not None]
            found[stored[0]["kind"], namespace, name] = len({v["metadata"]["uid"] for v in stored})
    return found


@contextlib.asynccontextmanager
async def emulator(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """Another emulator, as the ``kube`` fixture makes one, made the operator's cluster."""
    import kubernetes.config.kube_config

    async with ApiServerLikeEmulator(watch_seconds=WATCH_SECONDS) as kube, kmock.Server(kube):
        kube.resources.load_bundled()
        kube.declare(*DECLARED_RESOURCES)
        path = str(write_kubeconfig(tmp_path / "reference-kubeconfig", str(kube.url)))
        with monkeypatch.context() as patched:
            patched.setenv("KUBECONFIG", path)
            patched.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", path)
            yield kube


@pytest.mark.timeout(120)
async def test_a_seeded_chaos_run_ends_as_the_fault_free_run_and_the_core(
    kube, kubeconfig, tmp_path, monkeypatch
):
    isvcs = fleet(COUNT, SEED)
    async with emulator(tmp_path, monkeypatch) as calm:
        reference = await scenario(LocalCluster(calm), isvcs, restart=False)
    kube.watch_seconds = WATCH_SECONDS
    injected = inject(kube, fault_table())
    run = await scenario(LocalCluster(kube), isvcs, restart=True)

    assert run.in_flight > 0  # the restart came mid-flight
    fired = hits(injected)
    assert {what: n > 0 for what, n in fired.items()} == dict.fromkeys(fired, True)
    assert reference.outcome.statuses == reference.core_statuses
    doomed = doomed_deployments(isvcs[: COUNT // 2])
    assert differences(run, reference, doomed) == Differences([], [], [], [], [])
    assert (run.late, reference.late) == ([], [])
