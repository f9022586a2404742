"""vmhost-web against hostile and unlucky peers (issue 25): DNS rebinding, one message stalling
every session, signals with silent peers, connections that never speak, the descriptor limit,
per-session caps, replies lost at `exit`, invalid UTF-8, unmasked frames, large replies, and
the static files. Most tests speak raw bytes on a socket: what a browser would never send.

No test waits on time: every wait is a blocking read or a process wait with a deadline
(`HANG`), which only turns a hang into a failure with a message.
"""
import base64
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import threading
import urllib.error
import urllib.request

import pytest
import websocket

from conftest import WebServer

HANG = 20.0  # seconds before a missing answer counts as a hang


def request(method, id=None, params=None):
    message = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return message


class Raw:
    """A WebSocket client on a bare socket: it sends what it is told, masked or not, in one write
    or many, and reads frames as they come."""

    def __init__(self, port, host=None, headers=(), path="/rpc"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13", *headers]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            assert chunk, f"the server closed the connection during the handshake: {self.buffer!r}"
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.head = head.decode()
        self.status = int(self.head.split()[1])

    @staticmethod
    def frame(payload: bytes, opcode=1, mask=True, fin=True) -> bytes:
        first = bytes([(0x80 if fin else 0) | opcode])
        size = len(payload)
        bit = 0x80 if mask else 0
        if size < 126:
            header = first + bytes([bit | size])
        elif size < 65536:
            header = first + bytes([bit | 126]) + struct.pack("!H", size)
        else:
            header = first + bytes([bit | 127]) + struct.pack("!Q", size)
        if not mask:
            return header + payload
        key = os.urandom(4)
        return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))

    @staticmethod
    def text(message) -> bytes:
        return Raw.frame(json.dumps(message).encode())

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _exact(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def read_frame(self):
        """(opcode, payload) of the next frame; EOFError when the connection closes first."""
        first, second = self._exact(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", self._exact(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self._exact(8))[0]
        return first & 0x0F, self._exact(size)

    def read_until_close(self):
        """The text messages read before the server's close frame, and its code (None if the
        connection ended without one)."""
        messages = []
        try:
            while True:
                opcode, payload = self.read_frame()
                if opcode == 1:
                    messages.append(json.loads(payload))
                elif opcode == 8:
                    return messages, struct.unpack("!H", payload[:2])[0]
        except EOFError:
            return messages, None

    def read_message(self):
        while True:
            opcode, payload = self.read_frame()
            if opcode == 1:
                return json.loads(payload)
            assert opcode in (9, 10), f"expected a text frame, got opcode {opcode}"

    def call(self, message):
        """The reply to `message`; what came before it is kept in `seen`."""
        self.seen = []
        self.send(self.text(message))
        while True:
            reply = self.read_message()
            if isinstance(reply, dict) and reply.get("id") == message["id"]:
                return reply
            self.seen.append(reply)

    def close(self):
        self.sock.close()


def closed_by_server(sock) -> bool:
    """Reads until the server closes `sock` (True) or the hang deadline passes (False)."""
    sock.settimeout(HANG)
    try:
        while sock.recv(4096):
            pass
        return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def http_get(port, path, host=None):
    """(status, headers, body) of a plain GET; `host` replaces the Host header."""
    with socket.create_connection(("127.0.0.1", port), timeout=HANG) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


# -- 2. DNS rebinding ------------------------------------------------------------------------------


def test_a_host_the_server_does_not_answer_to_is_refused_before_any_upgrade(server):
    """A page on attacker.example rebound to 127.0.0.1 sends its own name in Host and Origin: the
    handshake is refused 403 (no 101), and so are the files."""
    name = f"attacker.example:{server.port}"
    rebound = Raw(server.port, host=name, headers=[f"Origin: http://{name}"])
    assert rebound.status == 403, rebound.head
    assert http_get(server.port, "/web/demo/index.html", host=name)[0] == 403
    assert http_get(server.port, "/rpc", host=name)[0] == 403
    # What the server answers to: loopback names, IP addresses, and its listen address.
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", f"[::1]:{server.port}", "app.localhost"):
        ws = Raw(server.port, host=host, headers=[f"Origin: http://{host}"])
        assert ws.status == 101, (host, ws.head)
        assert ws.call(request("ping", 1))["result"] == {}
        ws.close()


def test_allow_host_adds_a_name():
    web = WebServer("--allow-host", "vmhost.example", "--allow-host", "other.example,third.example")
    try:
        for name in ("vmhost.example", "VMHOST.example:8080", "third.example"):
            ws = Raw(web.port, host=name, headers=[f"Origin: http://{name.lower()}"])
            assert ws.status == 101, (name, ws.head)
            ws.close()
        assert http_get(web.port, "/js/protocol.js", host="other.example")[0] == 200
        assert http_get(web.port, "/js/protocol.js", host="vmhost.example.attacker.example")[0] == 403
    finally:
        web.stop()


# -- 3. One message cannot stall every session ------------------------------------------------------


def test_a_batch_over_1000_members_is_refused_whole_and_a_batch_of_1000_is_answered(server):
    ws = Raw(server.port)
    ws.send(Raw.text([request("ping", i) for i in range(1001)]))
    refused = ws.read_message()
    assert refused["error"]["code"] == -32600 and refused["id"] is None
    assert refused["error"]["data"] == {"name": "batchMembers", "limit": 1000}
    ws.send(Raw.text([request("ping", i) for i in range(1000)]))
    assert [r["id"] for r in ws.read_message()] == list(range(1000))
    ws.close()


def test_past_4_mib_of_replies_a_batchs_requests_are_answered_without_being_handled(server):
    ws = Raw(server.port)
    ws.send(Raw.text([request("host.describe", i) for i in range(1000)]))
    replies = ws.read_message()
    assert [r["id"] for r in replies] == list(range(1000))
    answered = [r for r in replies if "result" in r]
    refused = replies[len(answered):]
    assert answered and refused and all("error" in r for r in refused)
    assert all(r["error"]["code"] == -32600 and r["error"]["data"] == {"name": "batchReplyBytes", "limit": 4 << 20}
               for r in refused)
    sizes = [len(json.dumps(r, separators=(",", ":"), ensure_ascii=False).encode()) for r in answered]
    assert sum(sizes[:-1]) < 4 << 20 <= sum(sizes)
    assert ws.call(request("ping", "after"))["result"] == {}
    ws.close()


def test_other_sessions_are_served_between_the_requests_of_a_batch(server):
    """The manual clock is shared by every session: a batch that moves it 1 ms at a time (between
    host.describe requests, which take a while) is seen half-way by another session, which is
    served while the batch is being handled. A host thread held for the whole batch would show
    the other session the clock before the batch or after it, never in between."""
    big, other = Raw(server.port), Raw(server.port)
    members = []
    for i in range(500):
        members.append(request("control.clock.advance", f"a{i}", {"ms": 1}))
        members.append(request("host.describe", f"d{i}"))
    seen = []
    done = threading.Event()

    def poll():
        id = 0
        while not done.is_set():
            id += 1
            seen.append(other.call(request("control.clock.advance", id, {"ms": 0}))["result"]["now"])

    big.send(Raw.text(members))
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    replies = big.read_message()
    done.set()
    poller.join(HANG)
    assert len(replies) == 1000
    assert any(0 < now < 500 for now in seen), f"the other session saw only {sorted(set(seen))}"
    big.close()
    other.close()


# -- 4. Signals, whatever the peers do --------------------------------------------------------------


def silent_peers(port):
    """A session that never reads nor answers a close, a bare connection, half a request."""
    session = Raw(port)
    session.send(Raw.text(request("ping", 1)))
    bare = socket.create_connection(("127.0.0.1", port), timeout=HANG)
    half = socket.create_connection(("127.0.0.1", port), timeout=HANG)
    half.sendall(b"GET /web/demo/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return [session.sock, bare, half]


def test_sigterm_ends_the_server_whatever_its_peers_do():
    web = WebServer("--http-timeout-ms", "600000")
    peers = silent_peers(web.port)
    polite = websocket.create_connection(f"ws://127.0.0.1:{web.port}/rpc", timeout=HANG)
    polite.send(json.dumps(request("ping", 7)))
    assert json.loads(polite.recv())["id"] == 7
    web.process.send_signal(signal.SIGTERM)
    try:
        assert web.process.wait(HANG) == 0
    except subprocess.TimeoutExpired:
        web.process.kill()
        pytest.fail("vmhost-web outlived SIGTERM with silent peers")
    # A page that reads is told the server went away.
    frame = polite.recv_frame()
    assert frame.opcode == websocket.ABNF.OPCODE_CLOSE and struct.unpack("!H", frame.data[:2])[0] == 1001
    for peer in peers:
        peer.close()


def test_a_second_signal_ends_the_server_at_once():
    web = WebServer("--http-timeout-ms", "600000")
    peers = silent_peers(web.port)
    web.process.send_signal(signal.SIGTERM)
    web.process.send_signal(signal.SIGINT)
    try:
        assert web.process.wait(HANG) == 0
    except subprocess.TimeoutExpired:
        web.process.kill()
        pytest.fail("vmhost-web outlived two signals")
    for peer in peers:
        peer.close()


# -- 5. Connections that never speak, the descriptor limit ------------------------------------------


def test_connections_that_never_speak_are_closed():
    """A bare connection, half a request and a kept-alive connection after its answer are each
    closed once the HTTP timeout (here 300 ms) passes; a WebSocket session is not."""
    web = WebServer("--http-timeout-ms", "300")
    try:
        bare = socket.create_connection(("127.0.0.1", web.port), timeout=HANG)
        half = socket.create_connection(("127.0.0.1", web.port), timeout=HANG)
        half.sendall(b"GET /web/demo/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        kept = socket.create_connection(("127.0.0.1", web.port), timeout=HANG)
        kept.sendall(f"GET /js/protocol.js HTTP/1.1\r\nHost: 127.0.0.1:{web.port}\r\n\r\n".encode())
        session = Raw(web.port)
        for name, sock in (("bare", bare), ("half", half), ("kept alive", kept)):
            assert closed_by_server(sock), f"the {name} connection was not closed"
        # The session, idle as long, still serves.
        assert session.call(request("ping", 1))["result"] == {}
        session.close()
    finally:
        web.stop()


def test_at_the_descriptor_limit_connections_are_refused_and_the_server_keeps_serving():
    """With 128 descriptors, 32 connections may be open (64 kept for the server's own, and half the
    rest for connections, which may each send a file). Past them a connection is answered 503 and
    closed at once: accept never fails for want of a descriptor (which made the accepting thread
    spin), and once connections close, new ones are served."""
    web = WebServer("--http-timeout-ms", "600000",
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)))
    held = []
    try:
        session = Raw(web.port)
        held = [socket.create_connection(("127.0.0.1", web.port), timeout=HANG) for _ in range(31)]
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", web.port), timeout=HANG) as refused:
                answer = b""
                while chunk := refused.recv(4096):
                    answer += chunk
                assert answer.startswith(b"HTTP/1.1 503 "), answer
        # The session open before the limit still serves.
        assert session.call(request("ping", 1))["result"] == {}
        for sock in held:
            sock.close()
        held = []
        # Closed connections make room (the server notices each close as it happens).
        status = None
        for _ in range(200):
            try:
                status = http_get(web.port, "/js/protocol.js")[0]
            except (ValueError, ConnectionResetError):
                continue  # answered 503 before the closes were seen
            if status == 200:
                break
        assert status == 200
        session.close()
    finally:
        for sock in held:
            sock.close()
        web.stop()


# -- 6. Caps per session ----------------------------------------------------------------------------


def test_each_session_is_capped_and_told_which_cap():
    web = WebServer("--clock", "manual", "--test-controls", "--max-view-models", "3", "--max-subscriptions", "2",
                    "--max-commands-in-flight", "2")
    try:
        ws = Raw(web.port)
        for i in range(3):
            assert ws.call(request("vm.create", f"c{i}", {"kind": "ProductList", "id": f"p{i}"}))["result"]["vm"] == f"p{i}"
        refused = ws.call(request("vm.create", "c3", {"kind": "Login"}))
        assert refused["error"]["code"] == -32006
        assert refused["error"]["data"] == {"name": "viewModels", "limit": 3}
        assert ws.call(request("vm.list", "list"))["result"] == [
            {"vm": f"p{i}", "kind": "ProductList"} for i in range(3)]
        # Another session has its own room.
        other = Raw(web.port)
        assert "result" in other.call(request("vm.create", 1, {"kind": "Login"}))
        other.close()
        # Disposing makes room.
        assert ws.call(request("vm.dispose", "d", {"vm": "p2"}))["result"] == {}
        assert ws.call(request("vm.create", "c4", {"kind": "ProductList", "id": "p2"}))["result"]["vm"] == "p2"

        for i in range(2):
            assert "result" in ws.call(request("vm.subscribe", f"s{i}", {"vm": f"p{i}", "outputs": ["page"]}))
        refused = ws.call(request("vm.subscribe", "s2", {"vm": "p2"}))
        assert refused["error"]["code"] == -32006
        assert refused["error"]["data"] == {"name": "subscriptions", "limit": 2}

        # Commands wait on the backend's latency: two run, the third is refused, a notification
        # counts as well, and one ending makes room.
        assert ws.call(request("control.backend.latency", "l", {"ms": 100}))["result"] == {}
        ws.send(Raw.text(request("vm.send", None, {"vm": "p0", "input": "refresh"})))
        ws.send(Raw.text(request("vm.send", "r1", {"vm": "p1", "input": "refresh"})))
        refused = ws.call(request("vm.send", "r2", {"vm": "p2", "input": "refresh"}))
        assert refused["error"]["code"] == -32006
        assert refused["error"]["data"] == {"name": "commandsInFlight", "limit": 2}
        assert ws.call(request("control.clock.advance", "t", {"ms": 100}))["result"] == {"now": 100}
        assert [m["id"] for m in ws.seen if "id" in m] == ["r1"]
        ws.send(Raw.text(request("vm.send", "r3", {"vm": "p2", "input": "refresh"})))
        assert ws.call(request("control.clock.advance", "t2", {"ms": 100}))["result"] == {"now": 200}
        assert [m for m in ws.seen if m.get("id") == "r3"] == [{"jsonrpc": "2.0", "id": "r3", "result": {}}]
        ws.close()
    finally:
        web.stop()


# -- 7. Replies before exit -------------------------------------------------------------------------


def test_every_request_read_before_exit_is_answered(server):
    ws = Raw(server.port)
    ws.send(b"".join(Raw.text(request("ping", i)) for i in range(40)) + Raw.text(request("exit")))
    messages, code = ws.read_until_close()
    assert [m["id"] for m in messages] == list(range(40))
    assert code == 1000


# -- 8. Invalid UTF-8 -------------------------------------------------------------------------------


def test_a_text_frame_of_invalid_utf8_closes_with_1007(server):
    ws = Raw(server.port)
    ws.send(Raw.text(request("ping", 1)) + Raw.frame(b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}'))
    messages, code = ws.read_until_close()
    assert messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert code == 1007


# -- 9. The smaller ones ----------------------------------------------------------------------------


def test_an_unmasked_frame_closes_with_1002_and_is_not_handled(server):
    ws = Raw(server.port)
    # Sent with the handshake's answer still on its way: checked all the same.
    ws.send(Raw.text(request("ping", 1)) + Raw.frame(json.dumps(request("ping", 2)).encode(), mask=False))
    messages, code = ws.read_until_close()
    assert code == 1002
    assert [m["id"] for m in messages] in ([1], [])  # the masked ping may or may not be answered first
    assert 2 not in [m["id"] for m in messages]


def test_the_bearer_scheme_is_case_insensitive():
    web = WebServer("--token", "s3cret")
    try:
        for scheme in ("Bearer", "bearer", "BEARER"):
            ws = Raw(web.port, headers=[f"Authorization: {scheme} s3cret"])
            assert ws.status == 101, (scheme, ws.head)
            ws.close()
        assert Raw(web.port, headers=["Authorization: Basic s3cret"]).status == 401
    finally:
        web.stop()


def test_listening_on_every_address_without_a_token_warns():
    web = WebServer(listen="0.0.0.0:0")
    try:
        assert any("without --token" in line for line in web.lines), web.lines
    finally:
        web.stop()
    guarded = WebServer("--token", "t", listen="0.0.0.0:0")
    try:
        assert not any("without --token" in line for line in guarded.lines), guarded.lines
    finally:
        guarded.stop()


def test_an_ipv6_url_is_printed_in_brackets():
    web = WebServer(listen="[::1]:0")
    try:
        assert web.origin == f"http://[::1]:{web.port}", web.lines
    finally:
        web.stop()


def test_a_refused_handshake_is_not_logged_as_an_error():
    web = WebServer("--token", "s3cret")
    try:
        assert Raw(web.port).status == 401
        assert Raw(web.port, headers=["Origin: http://evil.example"]).status == 403
    finally:
        web.process.send_signal(signal.SIGTERM)
        web.process.wait(HANG)
    log = "".join(web.lines) + web.process.stderr.read()
    assert "error" not in log, log


def test_a_reply_over_16_mib_reaches_a_page_that_reads():
    """The 16 MiB bound is for a page that stopped reading; one that reads gets every reply."""
    web = WebServer("--max-message-bytes", str(40 << 20))
    try:
        ws = websocket.create_connection(f"ws://127.0.0.1:{web.port}/rpc", timeout=HANG)
        handle = "h" * (17 << 20)
        ws.send(json.dumps(request("vm.create", 1, {"kind": "Login", "id": handle})))
        reply = json.loads(ws.recv())
        assert reply["result"]["vm"] == handle
        ws.send(json.dumps(request("ping", 2)))
        assert json.loads(ws.recv())["id"] == 2
        ws.close()
    finally:
        web.stop()


@pytest.fixture
def static_folder(tmp_path):
    (tmp_path / "app.js").write_text("export const x = 1;\n")
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".hidden").write_text("x\n")
    web = WebServer("--static", str(tmp_path))
    yield web
    web.stop()


def test_a_control_character_in_a_path_is_refused(static_folder):
    for path in ("/app.js%00.html", "/app.js%0a.html", "/app.js%7f", "/app.js%zz"):
        status, headers, _ = http_get(static_folder.port, path)
        assert status == 400, path
        assert headers.get("content-type") != "text/html"
    status, headers, body = http_get(static_folder.port, "/app.js")
    assert status == 200 and b"export const" in body


def test_dotfiles_and_dot_folders_are_not_served(static_folder):
    for path in ("/.env", "/.git/config", "/sub/.hidden", "/%2eenv", "/sub/%2Ehidden"):
        assert http_get(static_folder.port, path)[0] == 404, path


def test_a_link_out_of_the_static_folder_is_not_served(tmp_path):
    """A link inside --static that leads outside it (to a file, or to a folder) is 404, as if
    absent; a link to a file of the folder is served."""
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("SECRET=1\n")
    (root / "ok.txt").write_text("ok\n")
    (root / "out").symlink_to(tmp_path / "secret.txt")
    (root / "outdir").symlink_to(tmp_path)
    (root / "in").symlink_to(root / "ok.txt")
    web = WebServer("--static", str(root))
    try:
        for path in ("/out", "/outdir/secret.txt", "/%6Fut"):
            status, _, body = http_get(web.port, path)
            assert status == 404 and b"SECRET" not in body, path
        status, _, body = http_get(web.port, "/in")
        assert status == 200 and body == b"ok\n"
    finally:
        web.stop()


def test_every_answer_carries_the_security_headers(static_folder):
    for path, status, caching in (("/app.js", 200, "no-cache"), ("/", 200, "no-cache"), ("/missing", 404, "no-store"),
                                  ("/.env", 404, "no-store"), ("/rpc", 426, "no-store")):
        got, headers, _ = http_get(static_folder.port, path)
        assert got == status, path
        assert headers["x-content-type-options"] == "nosniff", path
        assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        assert headers["x-frame-options"] == "DENY", path
        assert headers["cache-control"] == caching, path
    _, headers, _ = http_get(static_folder.port, "/app.js", host="attacker.example")
    assert headers["cache-control"] == "no-store" and headers["x-content-type-options"] == "nosniff"
    refused = Raw(static_folder.port, headers=["Origin: http://evil.example"])
    assert refused.status == 403 and "Cache-Control: no-store" in refused.head and "nosniff" in refused.head
