"""The test run's network rule: connections outside 127.0.0.0/8 are refused before they start."""

import socket

import pytest

from tests.support.loopback_only import OffLoopback, check

INET, INET6 = socket.AF_INET, socket.AF_INET6


@pytest.mark.parametrize(
    ("family", "address", "allowed"),
    [
        pytest.param(INET, ("127.0.0.1", 443), True, id="127.0.0.1"),
        pytest.param(INET, ("127.1.0.1", 443), True, id="the service CIDR 127.1.0.0/16"),
        pytest.param(INET6, ("::1", 443, 0, 0), True, id="::1"),
        pytest.param(INET, ("localhost", 443), True, id="a name that resolves to loopback"),
        pytest.param(INET, ("192.0.2.1", 443), False, id="an address off the machine"),
        pytest.param(INET, ("10.96.0.1", 443), False, id="a usual service CIDR"),
        pytest.param(INET6, ("2001:db8::1", 443, 0, 0), False, id="IPv6 off the machine"),
        pytest.param(INET, ("ome.invalid", 443), False, id="a name that does not resolve"),
    ],
)
def test_only_loopback_is_allowed(family, address, allowed):
    with socket.socket(family) as sock:
        try:
            check(sock, address)
            refusal = None
        except OffLoopback as exc:
            refusal = str(exc)
    expected = f"tests connect only to 127.0.0.0/8; refused a connection to {address!r}"
    assert refusal == (None if allowed else expected)


def test_the_guard_is_on_for_the_whole_run():
    with socket.socket() as sock, pytest.raises(OffLoopback):
        sock.connect(("192.0.2.1", 443))
    with pytest.raises(OffLoopback):
        socket.create_connection(("192.0.2.1", 443), timeout=1)
