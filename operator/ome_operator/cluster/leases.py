"""Leader election over a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection does.

A candidate holds the Lease while it renews it more often than ``LeaseTerms.duration``; a Lease
nobody renewed for that long may be taken over. Every write names the version it read (a merge
patch carrying ``metadata.resourceVersion``), so of two candidates racing for one Lease exactly
one wins and the other is answered Conflict. ``release`` (on a clean stop) hands the Lease over
at once instead of after ``duration``.

A leader writes only while its Lease is held with margin (``controller.leading``): a write that
finds it is not is refused here, as ``NotLeading``, before it is sent.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models.object_metadata import metadata_of
from .api import KubeApi
from .errors import ApiError, Conflict, NotFound
from .resources import resource_named

__all__ = ["LeaseElector", "LeaseTerms", "NotLeading", "held_by_another"]

Clock = Callable[[], datetime.datetime]


class NotLeading(ApiError):
    """A write refused before it was sent: this replica does not hold the leader Lease with
    margin (never held it, or its last renewal is older than the renew deadline). Status 0: no
    request was made; the pass is retried like any passing failure, by the next leader."""

    @classmethod
    def refusing(cls, method: str, path: str, renewed_ago: float | None) -> NotLeading:
        held = (
            "this replica does not hold the leader Lease"
            if renewed_ago is None
            else f"the leader Lease was last renewed {renewed_ago:.1f} s ago"
        )
        return cls(0, f"{method} {path} not sent: {held}", "NotLeading")


@dataclass(frozen=True)
class LeaseTerms:
    """client-go's defaults: a leader renews every ``retry`` seconds, gives up leading when it
    could not renew for ``renew_deadline``, and others take over after ``duration``.

    ``duration`` > ``renew_deadline`` > ``retry``: the gap between the first two is the margin a
    write sent just before the renew deadline has to reach the API server before another replica
    may take over (5 s by default)."""

    duration: float = 15.0
    renew_deadline: float = 10.0
    retry: float = 2.0

    @property
    def request_timeout(self) -> float:
        """Seconds each request of a renewal (a read, then a write) waits for its answer, sent
        once (no client retries): an attempt started right after a renewal ends before the
        renew deadline, with a retry period to spare (4 s by default)."""
        return (self.renew_deadline - self.retry) / 2


def _micro_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: Any) -> datetime.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def held_by_another(lease: Mapping[str, Any], identity: str, now: datetime.datetime) -> bool:
    """Whether another candidate holds ``lease``: it names a holder that is not ``identity``,
    renewed less than its ``leaseDurationSeconds`` ago."""
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity") or ""
    if not holder or holder == identity:
        return False
    renewed = _parse_time(spec.get("renewTime")) or _parse_time(spec.get("acquireTime"))
    duration = spec.get("leaseDurationSeconds")
    if renewed is None or not isinstance(duration, int):
        return False
    return now < renewed + datetime.timedelta(seconds=duration)


class LeaseElector:
    """One candidate for the Lease ``namespace/name``; every call is one round trip or two."""

    def __init__(
        self,
        api: Callable[[], KubeApi],
        namespace: str,
        name: str,
        identity: str,
        *,
        terms: LeaseTerms = LeaseTerms(),
        clock: Clock = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self._api, self._clock = api, clock
        self.identity, self.terms = identity, terms
        self._ref = {
            "apiVersion": resource_named("Lease").api_version,
            "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace},
        }

    def try_acquire_or_renew(self) -> bool:
        """Hold the Lease after this call: True when it is ours (taken or renewed)."""
        api, now = self._api(), self._clock()
        try:
            lease = api.get(self._ref)
        except NotFound:
            try:
                api.create({**self._ref, "spec": self._spec(now, acquired=True, transitions=0)})
            except Conflict:
                return False  # another candidate created it first
            return True
        if held_by_another(lease, self.identity, now):
            return False
        spec = lease.get("spec") or {}
        ours = spec.get("holderIdentity") == self.identity
        transitions = spec.get("leaseTransitions")
        transitions = transitions if isinstance(transitions, int) else 0
        fresh = self._spec(now, acquired=not ours, transitions=transitions + (not ours))
        if ours:
            fresh["acquireTime"] = spec.get("acquireTime") or fresh["renewTime"]
        return self._write(api, lease, fresh)

    def release(self) -> None:
        """Let another candidate take over now (a clean stop); a Lease no longer ours is left."""
        api = self._api()
        try:
            lease = api.get(self._ref)
        except NotFound:
            return
        spec = lease.get("spec") or {}
        if spec.get("holderIdentity") != self.identity:
            return
        self._write(api, lease, {**spec, "holderIdentity": "", "leaseDurationSeconds": 1})

    def _spec(self, now: datetime.datetime, *, acquired: bool, transitions: int) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.terms.duration),
            "renewTime": _micro_time(now),
            "leaseTransitions": transitions,
        }
        if acquired:
            spec["acquireTime"] = spec["renewTime"]
        return spec

    def _write(self, api: KubeApi, lease: Mapping[str, Any], spec: dict[str, Any]) -> bool:
        """Write ``spec`` over the version of ``lease`` read; False when another wrote first."""
        version = metadata_of(lease).get("resourceVersion")
        patch = {"metadata": {"resourceVersion": version}, "spec": spec}
        try:
            api.merge_patch(self._ref, patch)
        except Conflict:
            return False
        return True
