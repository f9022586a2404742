"""The WebSocket transport without a browser (websocket-client, which selenium brings): sessions
and what each holds alone (view-models, login), closing one, the handshake's origin and token
checks, the close codes, the static files."""
import json
import socket
import struct
import threading
import urllib.error
import urllib.request

import pytest
import websocket

from conftest import WebServer


@pytest.fixture
def guarded():
    web = WebServer("--token", "s3cret", "--allow-origin", "http://app.example:3000", "--max-message-bytes", "4096")
    yield web
    web.stop()


def connect(web, path="/rpc", **options):
    return websocket.create_connection(f"ws://127.0.0.1:{web.port}{path}", timeout=10, **options)


def call(ws, method, params=None, id=1):
    return call_seeing(ws, method, params, id)[0]


def call_seeing(ws, method, params=None, id=1):
    """The reply to a request, and the notifications read before it."""
    send(ws, method, params, id)
    seen = []
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == id:
            return message, seen
        seen.append(message)


def send(ws, method, params=None, id=None):
    ws.send(json.dumps({"jsonrpc": "2.0", **({"id": id} if id is not None else {}), "method": method,
                        **({"params": params} if params else {})}))


def close_code(ws):
    """Reads until the server's close frame; returns its code."""
    while True:
        frame = ws.recv_frame()  # the raw frame: no close frame is sent back to a closed connection
        if frame.opcode == websocket.ABNF.OPCODE_CLOSE:
            return struct.unpack("!H", frame.data[:2])[0]


def handshake_status(web, **options):
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        connect(web, **options)
    return refused.value.status_code


def test_each_connection_is_its_own_session(server):
    first, second = connect(server), connect(server)
    assert call(first, "initialize", {"protocolVersion": "1", "locale": "en"})["result"]["locale"] == "en"
    assert call(second, "initialize", {"protocolVersion": "1"})["result"]["locale"] == "zh-Hans"
    assert call(first, "vm.create", {"kind": "Login", "id": "screen"})["result"]["vm"] == "screen"
    # The same handle in another session is another view-model.
    assert call(second, "vm.create", {"kind": "Login", "id": "screen"})["result"]["vm"] == "screen"
    assert call(second, "vm.list")["result"] == [{"vm": "screen", "kind": "Login"}]
    first.close()
    assert call(second, "vm.list", id=2)["result"] == [{"vm": "screen", "kind": "Login"}]
    second.close()


def test_a_batch_in_one_frame_is_answered_in_one_frame(server):
    ws = connect(server)
    ws.send(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]))
    assert sorted(r["id"] for r in json.loads(ws.recv())) == [1, 2]
    ws.close()


def test_a_foreign_origin_is_refused_with_403(guarded):
    assert handshake_status(guarded, origin="http://evil.example", header=["Authorization: Bearer s3cret"]) == 403


def test_the_own_and_the_allowed_origins_are_accepted(guarded):
    for origin in (f"http://127.0.0.1:{guarded.port}", "http://app.example:3000"):
        ws = connect(guarded, origin=origin, header=["Authorization: Bearer s3cret"])
        assert call(ws, "ping")["result"] == {}
        ws.close()


def test_the_token_is_required_in_a_header_or_the_query(guarded):
    assert handshake_status(guarded) == 401
    assert handshake_status(guarded, header=["Authorization: Bearer wrong"]) == 401
    ws = connect(guarded, path="/rpc?token=s3cret")
    assert call(ws, "ping")["result"] == {}
    ws.close()


def test_a_binary_frame_closes_with_1003(server):
    ws = connect(server)
    ws.send_binary(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert close_code(ws) == 1003


def test_a_frame_over_the_limit_closes_with_1009(guarded):
    ws = connect(guarded, header=["Authorization: Bearer s3cret"])
    assert call(ws, "ping")["result"] == {}
    ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x" * 5000}}))
    assert close_code(ws) == 1009


def test_the_page_is_served_at_the_root(server):
    with urllib.request.urlopen(server.url) as response:
        assert response.url.endswith("/web/demo/")
        assert "<title>vmhost</title>" in response.read().decode()
    with urllib.request.urlopen(server.origin + "/js/protocol.js") as response:
        assert "export class Session" in response.read().decode()


def test_a_plain_get_of_rpc_asks_for_an_upgrade(server):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(server.origin + "/rpc")
    assert refused.value.code == 426


def test_a_flood_of_requests_is_answered_in_order_and_other_sessions_keep_serving(server):
    flood, other = connect(server), connect(server)
    count = 1000
    # Sent without reading a reply: the server reads at its own pace (it stops reading the socket
    # while 64 messages of this session wait) and answers each, in order.
    for id in range(1, count + 1):
        flood.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    assert call(other, "ping", id=1)["result"] == {}
    ids = [json.loads(flood.recv())["id"] for _ in range(count)]
    assert ids == list(range(1, count + 1))
    flood.close()
    other.close()


def test_a_page_that_stopped_reading_gets_every_reply_in_order_once_it_reads_again(server):
    """The host thread writes a session's replies itself while the socket takes them, and hands the
    writing to the session's writer while it does not: neither reorders nor loses one, and the
    host thread writes again once the page reads."""
    ws = connect(server)
    send(ws, "host.describe", id=0)
    size = len(ws.recv())
    # Several MiB of replies sent without reading: past what the sockets' buffers hold, so the
    # server's socket stops taking them for a while, well under the 16 MiB a page may owe.
    count = (8 << 20) // size
    for id in range(1, count + 1):
        send(ws, "host.describe" if id % 2 else "ping", id=id)
    ids = [json.loads(ws.recv())["id"] for _ in range(count)]
    assert ids == list(range(1, count + 1))
    for id in range(count + 1, count + 101):
        assert call(ws, "ping", id=id) == {"jsonrpc": "2.0", "id": id, "result": {}}
    ws.close()


def test_a_page_that_stopped_reading_is_closed_once_it_owes_more_than_16_mib(server):
    """While the socket takes nothing, the session's writer waits for it and its replies wait in
    its queue; past 16 MiB of them the session is closed, and the other sessions are served
    meanwhile and after."""
    stalled = connect(server, sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16),))
    other = connect(server)
    send(stalled, "host.describe", id=0)
    size = len(stalled.recv())
    # Past the 16 MiB bound and what the sockets' buffers hold (the server's may grow to 4 MiB).
    for id in range(1, (28 << 20) // size):
        send(stalled, "host.describe", id=id)
    assert call(other, "ping", id=1)["result"] == {}
    server.wait_for_log(r"stopped reading with more than 16777216 bytes of output waiting; closing it")
    assert call(other, "ping", id=2)["result"] == {}
    # What the socket held is read, then the connection ends.
    with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError)):
        while stalled.recv():
            pass
    other.close()


ACCOUNT, PASSWORD = "13800138000", "123456"


def test_a_login_belongs_to_its_own_session(server):
    first, second = connect(server), connect(server)
    for ws in (first, second):
        assert call(ws, "vm.create", {"kind": "Session", "id": "session"})["result"]["vm"] == "session"
        assert call(ws, "vm.subscribe", {"vm": "session"}, id=2)["result"]["values"] == {
            "isLoggedIn": False, "username": None}
    assert call(first, "vm.create", {"kind": "Login", "id": "login"}, id=3)["result"]["vm"] == "login"
    send(first, "vm.send", {"vm": "login", "input": "username", "value": ACCOUNT})
    send(first, "vm.send", {"vm": "login", "input": "password", "value": PASSWORD})
    submitted, seen = call_seeing(first, "vm.send", {"vm": "login", "input": "submit"}, id=4)
    assert submitted["result"] == {}
    assert {"isLoggedIn": True, "username": ACCOUNT} in [
        m["params"]["values"] for m in seen if m.get("method") == "vm.changed" and m["params"]["vm"] == "session"]
    # The other page heard nothing of it (a shared session would have sent it a vm.changed before
    # this reply), and is logged out; so is a page opened after the login.
    pinged, seen = call_seeing(second, "ping", id=5)
    assert pinged["result"] == {} and seen == []
    assert call(second, "vm.create", {"kind": "Session", "id": "again"}, id=6)["result"]["vm"] == "again"
    assert call(second, "vm.subscribe", {"vm": "again"}, id=7)["result"]["values"] == {
        "isLoggedIn": False, "username": None}
    third = connect(server)
    assert call(third, "vm.create", {"kind": "Session", "id": "session"})["result"]["vm"] == "session"
    assert call(third, "vm.subscribe", {"vm": "session"}, id=2)["result"]["values"] == {
        "isLoggedIn": False, "username": None}
    for ws in (first, second, third):
        ws.close()


class HangingBackend:
    """An HTTP backend that never answers: it notes each request, and when vmhost-web closes the
    connection a request came on (the request was cancelled)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requested = threading.Event()
        self.closed = threading.Event()
        self.paths = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.hold, args=(connection,), daemon=True).start()

    def hold(self, connection):
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                head += chunk
            self.paths.append(head.split(b" ")[1].decode())
            self.requested.set()
            while connection.recv(4096):  # until the client closes it
                pass
            self.closed.set()

    def stop(self):
        self.listener.close()


def test_closing_the_socket_disposes_its_view_models_and_cancels_their_commands():
    backend = HangingBackend()
    web = WebServer("--backend", backend.url, "--log-level", "debug")
    try:
        ws = connect(web)
        assert call(ws, "vm.create", {"kind": "ProductList", "id": "list"})["result"]["vm"] == "list"
        assert call(ws, "vm.create", {"kind": "Login", "id": "login"}, id=2)["result"]["vm"] == "login"
        send(ws, "vm.send", {"vm": "list", "input": "refresh"}, id=3)  # its backend call hangs
        assert backend.requested.wait(20), "the refresh reached no backend"
        assert backend.paths[0].startswith("/products")
        assert not backend.closed.is_set()
        ws.close()
        # The server ends the session: the running request is cancelled, both view-models are
        # disposed, and the backend request is cancelled for real (its connection closed).
        closed = web.wait_for_log(r"session (\d+) closed: (\d+) request\(s\) cancelled; view-models alive (\d+), now (\d+)")
        assert closed.groups()[1:] == ("1", "2", "0")
        assert backend.closed.wait(20), "the backend request was not cancelled"
    finally:
        web.stop()
        backend.stop()
