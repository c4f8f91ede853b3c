"""A paused replica (SIGSTOP) answers no readiness probe, so the webhook Service stops sending it
reviews; once it runs again, /readyz says so for a few seconds while its watches catch up, then
it is Ready again (handlers/loop_stalls.py; README, "High availability")."""

from __future__ import annotations

import re
import signal

import pytest

from tests.support.installed_cluster import eventually

pytestmark = pytest.mark.controlplane

STALLED = re.compile(
    r"not ready: the event loop (has not run for \d+ s|stood still for \d+ s; "
    r"ready 5 s after it ran again)\n"
)


def test_a_paused_replica_is_unready_until_it_ran_again_for_a_while(operator):
    eventually(lambda: operator.readiness()[0] == 200)
    assert operator.popen is not None
    operator.popen.send_signal(signal.SIGSTOP)
    try:
        # Each probe waits 2 s for an answer: two of them pause it past the 3 s of a stall.
        during = [operator.readiness() for _ in range(2)]
    finally:
        operator.popen.send_signal(signal.SIGCONT)
    status, reason = operator.readiness()
    assert (during, status, bool(STALLED.fullmatch(reason))) == ([(0, "")] * 2, 503, True), reason
    eventually(lambda: operator.readiness()[0] == 200, timeout=15)
