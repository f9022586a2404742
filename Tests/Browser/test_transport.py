"""The WebSocket transport without a browser (websocket-client, which selenium brings): sessions,
the handshake's origin and token checks, the close codes, the static files."""
import json
import struct
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
    ws.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params else {})}))
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == id:
            return message


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
