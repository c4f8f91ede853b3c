"""A kubeconfig's proxy: every request goes to the proxy with the whole URL of the API server,
as a forward proxy needs it (the connection-pool shortcut of ``KubeApi`` is for direct use)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s_client

from ome_operator.cluster.api import KubeApi
from tests.support.socket_servers import shut

#: The API server's address: never connected to, the proxy answers for it.
API_SERVER = "http://127.0.0.1:9"


class _Proxy(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.requestline)
        body = json.dumps({"kind": "NamespaceList", "items": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Proxy.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    shut(server)


def test_a_proxied_request_names_the_whole_url(proxy: str) -> None:
    configuration = k8s_client.Configuration()
    configuration.host, configuration.proxy = API_SERVER, proxy
    api = KubeApi(k8s_client.ApiClient(configuration))

    first = api.request("GET", "/api/v1/namespaces", query={"limit": "5"})
    second = api.request("GET", "/api/v1/namespaces")

    assert (first, second) == ({"kind": "NamespaceList", "items": []},) * 2
    assert _Proxy.seen == [
        f"GET {API_SERVER}/api/v1/namespaces?limit=5 HTTP/1.1",
        f"GET {API_SERVER}/api/v1/namespaces HTTP/1.1",
    ]
