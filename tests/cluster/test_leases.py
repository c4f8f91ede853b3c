"""Leader election over a Lease against the emulator: the first candidate creates and holds it,
another cannot take it while it is renewed and takes it once it expired (a transition counted),
a renewal keeps acquireTime, a release hands it over at once, and of two candidates writing over
the same version only one wins. A renewal's requests end before the renew deadline; a write the
fence refuses says why."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.leases import LeaseElector, LeaseTerms, NotLeading, held_by_another
from tests.support.kube_access import apply_object

START = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=datetime.UTC)
LEASE = ("coordination.k8s.io/v1/leases", "ome", "ome-operator")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += datetime.timedelta(seconds=seconds)


def candidate(api: KubeApi, identity: str, clock: Clock) -> LeaseElector:
    return LeaseElector(lambda: api, "ome", "ome-operator", identity, clock=clock)


def spec(kube) -> dict:
    return dict(kube.objects[LEASE]["spec"])


async def test_the_first_candidate_holds_and_another_waits_until_it_expires(kube, api):
    clock = Clock()
    a, b = candidate(api, "a", clock), candidate(api, "b", clock)
    assert await asyncio.to_thread(a.try_acquire_or_renew) is True
    assert spec(kube) == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "renewTime": "2026-12-01T12:00:00.000000Z",
        "acquireTime": "2026-12-01T12:00:00.000000Z",
        "leaseTransitions": 0,
    }
    clock.advance(14)
    assert await asyncio.to_thread(b.try_acquire_or_renew) is False
    clock.advance(2)  # 16 s without a renewal: expired
    assert await asyncio.to_thread(b.try_acquire_or_renew) is True
    assert spec(kube) == {
        "holderIdentity": "b",
        "leaseDurationSeconds": 15,
        "renewTime": "2026-12-01T12:00:16.000000Z",
        "acquireTime": "2026-12-01T12:00:16.000000Z",
        "leaseTransitions": 1,
    }
    assert await asyncio.to_thread(a.try_acquire_or_renew) is False


async def test_a_renewal_moves_renew_time_only(kube, api):
    clock = Clock()
    a = candidate(api, "a", clock)
    await asyncio.to_thread(a.try_acquire_or_renew)
    clock.advance(2)
    assert await asyncio.to_thread(a.try_acquire_or_renew) is True
    assert (spec(kube)["acquireTime"], spec(kube)["renewTime"], spec(kube)["leaseTransitions"]) == (
        "2026-12-01T12:00:00.000000Z",
        "2026-12-01T12:00:02.000000Z",
        0,
    )


async def test_a_release_hands_the_lease_over_at_once(kube, api):
    clock = Clock()
    a, b = candidate(api, "a", clock), candidate(api, "b", clock)
    await asyncio.to_thread(a.try_acquire_or_renew)
    await asyncio.to_thread(a.release)
    assert await asyncio.to_thread(b.try_acquire_or_renew) is True
    assert spec(kube)["holderIdentity"] == "b"


async def test_of_two_writes_over_one_version_one_wins(kube, api):
    clock = Clock()
    stale = await apply_object(
        kube,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "ome-operator", "namespace": "ome"},
            "spec": {"holderIdentity": "", "leaseDurationSeconds": 15},
        },
    )
    a, b = candidate(api, "a", clock), candidate(api, "b", clock)
    assert await asyncio.to_thread(a._write, api, stale, {"holderIdentity": "a"}) is True
    assert await asyncio.to_thread(b._write, api, stale, {"holderIdentity": "b"}) is False
    assert spec(kube)["holderIdentity"] == "a"


@pytest.mark.parametrize(
    ("lease", "expected"),
    [
        pytest.param({}, False, id="no holder"),
        pytest.param({"holderIdentity": "me"}, False, id="held by this candidate"),
        pytest.param(
            {
                "holderIdentity": "x",
                "renewTime": "2026-12-01T11:59:50.000000Z",
                "leaseDurationSeconds": 15,
            },
            True,
            id="renewed 10 s ago for 15 s",
        ),
        pytest.param(
            {
                "holderIdentity": "x",
                "renewTime": "2026-12-01T11:59:40.000000Z",
                "leaseDurationSeconds": 15,
            },
            False,
            id="renewed 20 s ago for 15 s: expired",
        ),
        pytest.param(
            {"holderIdentity": "x", "renewTime": "yesterday", "leaseDurationSeconds": 15},
            False,
            id="an unreadable renewal time can be taken over",
        ),
    ],
)
def test_who_holds_a_lease(lease, expected):
    assert held_by_another({"spec": lease}, "me", START) is expected


def test_default_terms_are_client_gos():
    assert LeaseTerms() == LeaseTerms(duration=15.0, renew_deadline=10.0, retry=2.0)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        pytest.param(LeaseTerms(), 4.0, id="the defaults: 4 s per request"),
        pytest.param(LeaseTerms(4.0, 3.0, 0.5), 1.25, id="the control-plane tests' terms"),
    ],
)
def test_a_renewal_ends_before_the_renew_deadline(terms, expected):
    """Its two requests (a read, a write), each sent once and waiting the request timeout, end
    a retry period before the deadline."""
    assert (terms.request_timeout, 2 * terms.request_timeout + terms.retry) == (
        expected,
        terms.renew_deadline,
    )


@pytest.mark.parametrize(
    ("renewed_ago", "expected"),
    [
        pytest.param(
            None,
            "PATCH /apis/apps/v1/x not sent: this replica does not hold the leader Lease",
            id="never held",
        ),
        pytest.param(
            12.345,
            "PATCH /apis/apps/v1/x not sent: the leader Lease was last renewed 12.3 s ago",
            id="held, renewed too long ago",
        ),
    ],
)
def test_a_write_not_sent_says_why(renewed_ago, expected):
    error = NotLeading.refusing("PATCH", "/apis/apps/v1/x", renewed_ago)
    assert (str(error), error.status, error.reason, error.retriable) == (
        expected,
        0,
        "NotLeading",
        True,
    )
