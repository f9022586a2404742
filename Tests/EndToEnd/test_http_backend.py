"""The real binary against a real HTTP server on loopback (protocol/backend.md): headers, the size
limit (`--max-response-bytes`), redirects, which are never followed, libcurl loaded by the first
call and not before, and connections kept alive across calls."""
from __future__ import annotations

import json
import os

import pytest

from harness import HostProcess, LoopbackServer, QuietHandler

PRODUCT = {"id": "p1", "name": "稳健增利1号", "bank": "招商银行", "annualRate": 4.5, "saleStatus": "onSale",
           "termDays": 90, "minAmount": 1000}
PAGE = json.dumps({"success": True, "code": "0", "message": "ok", "data": [PRODUCT],
                   "page": {"index": 1, "size": 20, "total": 1}}).encode()


class Server(LoopbackServer):
    """A threaded HTTP server answering every GET with `answer(path) -> (status, headers, body)`."""

    def __init__(self, answer, keep_alive: bool = False):
        self.requests: list[tuple[str, dict]] = []
        # The client's port of each request: one port for two requests is one connection.
        self.client_ports: list[int] = []
        outer = self

        class Handler(QuietHandler):
            # HTTP/1.1 keeps the connection open after a response; HTTP/1.0 closes it.
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_GET(self):
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                outer.client_ports.append(self.client_address[1])
                status, headers, body = answer(self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

        self.serve(Handler)


@pytest.fixture
def servers():
    made = []

    def make(answer, keep_alive=False):
        made.append(Server(answer, keep_alive))
        return made[-1]

    yield make
    for server in made:
        server.close()


def refresh(host: HostProcess):
    host.request("vm.create", {"kind": "ProductList", "id": "pl"})
    host.request("vm.subscribe", {"vm": "pl"})
    return host.request("vm.send", {"vm": "pl", "input": "refresh"})


def test_a_page_is_fetched_with_the_device_id_in_both_headers(servers):
    server = servers(lambda path: (200, {"Content-Type": "application/json"}, PAGE))
    with HostProcess("--backend", server.url) as host:
        assert refresh(host).result == {}
    [(path, headers)] = server.requests
    assert path == "/products?page=1&pageSize=20"
    assert headers["x-device-id"] == headers["uuid"]
    assert len(headers["uuid"]) == 36


def test_a_body_over_max_response_bytes_fails_as_decode(servers):
    server = servers(lambda path: (200, {"Content-Type": "application/json"}, PAGE + b" " * 2048))
    with HostProcess("--backend", server.url, "--max-response-bytes", "1024") as host:
        error = refresh(host).error
    assert error["code"] == -32004
    assert error["data"]["kind"] == "decode"
    assert error["data"]["detail"] == "the response body is larger than the limit of 1024 bytes"


def test_a_redirect_to_another_origin_is_not_followed(servers):
    other = servers(lambda path: (200, {"Content-Type": "application/json"}, PAGE))
    server = servers(lambda path: (302, {"Location": other.url + path}, b""))
    with HostProcess("--backend", server.url) as host:
        error = refresh(host).error
    assert error["data"]["kind"] == "server" and error["data"]["code"] == 302
    assert len(server.requests) == 1
    assert other.requests == []


def mapped_files(pid: int) -> set[str]:
    """The names of the files process `pid` has mapped (/proc/PID/maps)."""
    with open(f"/proc/{pid}/maps") as maps:
        return {line.split()[-1].rsplit("/", 1)[-1] for line in maps if "/" in line}


def thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_libcurl_and_its_thread_come_with_the_first_call_not_before(servers):
    server = servers(lambda path: (200, {"Content-Type": "application/json"}, PAGE))
    with HostProcess("--backend", server.url) as host:
        assert host.request("ping").result is not None
        pid = host.process.pid
        assert not [name for name in mapped_files(pid) if name.startswith("libcurl")]
        threads = thread_count(pid)
        assert refresh(host).result == {}
        assert [name for name in mapped_files(pid) if name.startswith("libcurl.so.4")]
        assert thread_count(pid) > threads


def test_a_connection_is_kept_alive_across_calls(servers):
    server = servers(lambda path: (200, {"Content-Type": "application/json"}, PAGE), keep_alive=True)
    with HostProcess("--backend", server.url) as host:
        assert refresh(host).result == {}
        assert host.request("vm.send", {"vm": "pl", "input": "refresh"}).result == {}
    assert len(server.client_ports) == 2
    assert server.client_ports[0] == server.client_ports[1]
