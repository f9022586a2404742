"""The real binary against a real HTTP server on loopback (protocol/backend.md): headers, the size
limit (`--max-response-bytes`) and redirects, which are never followed."""
from __future__ import annotations

import http.server
import json
import threading

import pytest

from harness import HostProcess

PRODUCT = {"id": "p1", "name": "稳健增利1号", "bank": "招商银行", "annualRate": 4.5, "saleStatus": "onSale",
           "termDays": 90, "minAmount": 1000}
PAGE = json.dumps({"success": True, "code": "0", "message": "ok", "data": [PRODUCT],
                   "page": {"index": 1, "size": 20, "total": 1}}).encode()


class Server:
    """A threaded HTTP server answering every GET with `answer(path) -> (status, headers, body)`."""

    def __init__(self, answer):
        self.requests: list[tuple[str, dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
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

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    made = []

    def make(answer):
        made.append(Server(answer))
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
