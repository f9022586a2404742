"""Resuming a session whose connection dropped (protocol/SPEC.md §12, "Resume"), spoken over the
wire as any client would (websocket-client): the token, the frames missed written again in order,
the page's frames counted so none is handled twice, the resync past the buffer, the grace period
on the server's clock, and a token that works once, from its own origin only."""
import json
import socket
import struct

import pytest
import websocket

from conftest import Session, WebServer


class Page(Session):
    """A page of a resumable session: counts the numbered frames it received (every frame but
    `$/session` and `$/ack`) and keeps the control frames apart."""

    def __init__(self, web, query="resume=new", origin=None, timeout=10.0):
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{web.port}/rpc?{query}", timeout=timeout, **({"origin": origin} if origin else {}))
        self.received = 0
        self.controls = []
        self.next_id = 0

    def read(self):
        """The next numbered frame, parsed; control frames read on the way are kept."""
        while True:
            message = json.loads(self.ws.recv())
            if isinstance(message, dict) and message.get("method") in ("$/session", "$/ack"):
                self.controls.append(message)
                continue
            self.received += 1
            return message

    def control(self):
        """The next control frame (after any kept)."""
        if self.controls:
            return self.controls.pop(0)
        message = json.loads(self.ws.recv())
        assert message.get("method") in ("$/session", "$/ack"), f"expected a control frame, got {message}"
        return message

    def send(self, method, params=None, id=None):
        self.ws.send(json.dumps({"jsonrpc": "2.0", **({"id": id} if id is not None else {}), "method": method,
                                 **({"params": params} if params is not None else {})}))

    def drop(self, web=None):
        """Cuts the connection as a network does: no close frame. With `web`, returns once the
        server has read everything sent before and suspended the session (its debug log)."""
        self.ws.sock.shutdown(socket.SHUT_RDWR)
        self.ws.sock.close()
        if web is not None:
            web.wait_for_log(r"session \d+ suspended")

    def close_code(self):
        while True:
            frame = self.ws.recv_frame()
            if frame.opcode == websocket.ABNF.OPCODE_CLOSE:
                return struct.unpack("!H", frame.data[:2])[0]


def login_page(web):
    """A resumable page with a Login subscribed to `usernameValid` and `canSubmit`: the page, its
    token and the view-model's handle."""
    page = Page(web)
    token = page.control()["params"]["token"]
    page.result("initialize", {"protocolVersion": "1", "locale": "en"})
    vm = page.result("vm.create", {"kind": "Login"})["vm"]
    page.result("vm.subscribe", {"vm": vm, "outputs": ["usernameValid", "canSubmit"]})
    return page, token, vm


def resume(web, token, received, origin=None):
    from urllib.parse import quote
    return Page(web, f"resume={quote(token)}&received={received}", origin=origin)


@pytest.fixture
def web():
    server = WebServer("--clock", "manual", "--test-controls", "--resume-buffer-bytes", "4096", "--log-level", "debug")
    yield server
    server.stop()


def test_a_resumable_session_gets_its_token_first(web):
    page = Page(web)
    session = page.control()
    assert session["method"] == "$/session" and "id" not in session
    assert len(session["params"]["token"]) >= 40 and session["params"]["graceMs"] == 30000
    assert "resumed" not in session["params"]
    assert page.result("ping") == {}
    # A plain connection gets no control frame: its first frame is the reply.
    plain = Page(web, query="")
    plain.send("ping", id=7)
    assert json.loads(plain.ws.recv()) == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_a_dropped_page_resumes_with_what_it_missed_and_its_view_models(web):
    page, token, vm = login_page(web)
    seen = page.received
    # Sent, not read: the page drops before it sees the answer.
    page.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=50)
    page.send("vm.send", {"vm": vm, "input": "password", "value": "secret-pw"}, id=51)
    page.drop(web)

    again = resume(web, token, seen)
    resumed = again.control()["params"]
    assert resumed["token"] != token
    # Every frame the page sent was received: none is to be sent again.
    assert resumed["resumed"] == {"received": 5, "next": seen + 1, "resync": False}
    missed = [again.read() for _ in range(4)]
    assert missed[0]["method"] == "vm.changed" and missed[0]["params"]["values"] == {"usernameValid": True}
    assert missed[1] == {"jsonrpc": "2.0", "id": 50, "result": {}}
    assert missed[2]["method"] == "vm.changed" and missed[2]["params"]["values"] == {"canSubmit": True}
    assert missed[3] == {"jsonrpc": "2.0", "id": 51, "result": {}}
    # The same session: its view-model, its subscription, its locale.
    assert again.result("vm.list") == [{"vm": vm, "kind": "Login"}]
    assert again.result("vm.get", {"vm": vm, "outputs": ["canSubmit"]}) == {"values": {"canSubmit": True}}


def test_the_page_is_told_which_of_its_frames_arrived_so_none_is_handled_twice(web):
    page = Page(web)
    token = page.control()["params"]["token"]
    vm = page.result("vm.create", {"kind": "Login"})["vm"]
    page.drop(web)
    again = resume(web, token, page.received)
    session = again.control()["params"]
    # The page sent one frame and the server received it: nothing is to be sent again.
    assert session["resumed"]["received"] == 1
    # A frame the page sent after that one (lost on the way) goes on the new connection: handled once.
    again.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=9)
    assert again.result("vm.get", {"vm": vm, "outputs": ["usernameValid"]}) == {"values": {"usernameValid": True}}
    again.drop(web)
    third = resume(web, session["token"], 0)
    # Counted across connections: vm.create, the vm.send, the vm.get.
    assert third.control()["params"]["resumed"] == {"received": 3, "next": 1, "resync": False}
    frames = [third.read() for _ in range(3)]
    assert [frame.get("id") for frame in frames] == [1, 9, 1]


def test_acks_are_not_counted_and_the_server_acknowledges_every_16_frames(web):
    page = Page(web)
    page.control()
    for number in range(1, 17):
        page.send("ping", id=number)
    replies = [page.read() for _ in range(16)]
    assert [reply["id"] for reply in replies] == list(range(1, 17))
    assert page.control() == {"jsonrpc": "2.0", "method": "$/ack", "params": {"received": 16}}
    page.send("$/ack", {"received": 16})
    page.send("ping", id=17)
    assert page.read()["id"] == 17
    # An ack of frames never written ends the session.
    page.send("$/ack", {"received": 999})
    assert page.close_code() == 1008


def test_a_token_works_once_and_from_its_own_origin_only():
    other = "http://app.example:3000"
    web = WebServer("--allow-origin", other)
    try:
        page = Page(web, origin=web.origin)
        token = page.control()["params"]["token"]
        page.result("ping")
        page.drop()
        # Another origin the server allows: not this session's.
        elsewhere = resume(web, token, 1, origin=other)
        assert elsewhere.close_code() == 4404
        # The token was used up by the refused attempt too.
        again = resume(web, token, 1, origin=web.origin)
        assert again.close_code() == 4404
    finally:
        web.stop()


def test_a_used_token_gets_nothing(web):
    page = Page(web)
    token = page.control()["params"]["token"]
    page.result("ping")
    page.drop()
    first = resume(web, token, 1)
    assert first.control()["params"]["resumed"]["resync"] is False
    second = resume(web, token, 1)
    assert second.close_code() == 4404
    assert first.result("ping") == {}


def test_a_suspended_session_ends_with_its_grace_period_on_the_servers_clock(web):
    page = Page(web)
    token = page.control()["params"]["token"]
    page.result("ping")
    page.drop(web)
    other = Page(web, query="")
    other.send("control.clock.advance", {"ms": 29_999}, id=1)
    assert json.loads(other.ws.recv())["id"] == 1
    # Within the grace period: resumable. Dropped again, the period starts again.
    back = resume(web, token, 1)
    token = back.control()["params"]["token"]
    back.drop(web)
    other.send("control.clock.advance", {"ms": 30_000}, id=2)
    assert json.loads(other.ws.recv())["id"] == 2
    assert resume(web, token, 1).close_code() == 4404


def test_past_the_buffer_a_resume_is_a_resync_of_every_subscription(web):
    page = Page(web)
    token = page.control()["params"]["token"]
    page.result("initialize", {"protocolVersion": "1", "locale": "en"})
    vm = page.result("vm.create", {"kind": "Login"})["vm"]
    page.result("vm.subscribe", {"vm": vm})
    seen = page.received
    # More than the 4 KiB kept, never acknowledged: the page drops before reading any of it.
    for number in range(40):
        value = "13800138000" if number % 2 == 0 else "1"
        page.send("vm.send", {"vm": vm, "input": "username", "value": value}, id=100 + number)
    page.result("ping")
    page.drop(web)
    again = resume(web, token, seen)
    resumed = again.control()["params"]["resumed"]
    assert resumed["resync"] is True and resumed["pending"] == [] and resumed["received"] == 44
    state = again.read()
    assert state["method"] == "vm.changed"
    assert state["params"]["resync"] is True and state["params"]["vm"] == vm
    assert state["params"]["values"]["usernameValid"] is False and state["params"]["values"]["mode"] == "password"
    assert again.received == 1 and resumed["next"] > seen + 1
    assert again.result("vm.get", {"vm": vm, "outputs": ["usernameValid"]}) == {"values": {"usernameValid": False}}


def test_a_malformed_resume_is_refused_before_the_upgrade(web):
    for query in ("resume=new&received=3", "resume=abc", "received=2", "resume=abc&received=-1", "resume=a%20b&received=1"):
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            Page(web, query=query)
        assert refused.value.status_code == 400, query


def test_the_token_is_never_traced(tmp_path):
    trace = tmp_path / "trace.jsonl"
    server = WebServer("--clock", "manual", "--test-controls", "--trace", str(trace), "--log-level", "debug")
    try:
        page = Page(server)
        token = page.control()["params"]["token"]
        page.result("ping")
        page.drop()
        again = resume(server, token, 1)
        new_token = again.control()["params"]["token"]
        again.send("$/ack", {"received": 1})
        assert again.result("ping") == {}
    finally:
        server.stop()
    text = trace.read_text() + "".join(server.lines)
    assert '"ping"' in trace.read_text()
    assert token not in text and new_token not in text and "$/session" not in text and "$/ack" not in text


def test_the_example_exchange_of_the_spec(web):
    """protocol/SPEC.md §12, Resume: its example, step by step, against the server."""
    import re
    from pathlib import Path
    spec = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()
    block = spec.split("An example (G = 30000", 1)[1].split("```", 2)[1]
    tokens: dict[str, str] = {}
    page = None
    steps = 0
    for line in block.strip().splitlines():
        line = line.strip()
        if line.startswith("GET /rpc?"):
            query = re.sub(r"\bT\d\b", lambda name: tokens[name.group(0)], line[len("GET /rpc?"):])
            page = Page(web, query)
        elif line.startswith("→"):
            page.ws.send(line[1:].strip())
        elif line.startswith("…"):
            page.drop(web)
        elif line.startswith("←"):
            text = line[1:].strip()
            numbered = re.match(r"\(frame (\d+)\) ", text)
            if numbered:
                text = text[numbered.end():]
                before = page.received
                actual = page.read()
                assert page.received == before + 1
            else:
                actual = page.control()
            written = json.dumps(actual, separators=(",", ":"), ensure_ascii=False)
            pattern = "".join(
                "(?P<%s>[A-Za-z0-9._-]+)" % part if re.fullmatch(r"T\d", part) and part not in tokens
                else re.escape(tokens[part]) if re.fullmatch(r"T\d", part)
                else ".*" if part == "…" else re.escape(part)
                for part in re.split(r"(\bT\d\b|…)", text) if part)
            match = re.fullmatch(pattern, written)
            assert match, f"{line}\n  got {written}"
            tokens.update(match.groupdict())
        else:
            raise AssertionError(f"a line of the example this test does not read: {line}")
        steps += 1
    assert steps == 10 and set(tokens) == {"T1", "T2"}


# MARK: In Chromium: the web demo's page resumes by itself


def cut(browser):
    """Closes the page's socket under it, as a network that drops would (the page did not ask)."""
    browser.execute_script("window.vmhost.socket.close(4000, 'cut by the test')")


def resumed(page):
    """Waits until the page's session is open again (resumed, not a new one)."""
    page.until(lambda d: d.execute_script("return window.vmhost.state") == "open"
               and "reconnecting" not in (d.find_element("tag name", "body").get_attribute("class") or ""),
               "the page never resumed its session")


def test_a_page_cut_while_typing_keeps_its_login_form(browser, server):
    from page import DemoPage
    page = DemoPage(browser, server)
    page.open_and_type_username(typed=3)
    cut(browser)
    resumed(page)
    page.finish_login_with_kept_username()


def test_a_countdown_goes_on_across_a_cut(browser, server):
    from page import DemoPage
    page = DemoPage(browser, server)
    page.open()
    page.click("tab-code")
    page.type("phone", "13912345678")
    page.click("send-code")
    page.text_is("send-code", "重新发送(60s)")
    cut(browser)
    # Sent while the page reconnects: it waits, then goes once the session is back.
    page.control("control.clock.advance", {"ms": 2000})
    resumed(page)
    page.text_is("send-code", "重新发送(58s)")
    page.ready("login", 1)


def test_a_refresh_in_flight_across_a_cut_is_applied_once(browser, server):
    from page import DemoPage
    page = DemoPage(browser, server)
    page.log_in()
    page.click("load-more")
    page.count_is("product-list", 40)
    page.control("control.backend.script", {"endpoint": "products", "outcomes": ["delay:5000"]})
    browser.execute_script("window.scrollTo(0, 0)")  # the header covers a button scrolled under it
    page.click("refresh")
    page.visible("products-refreshing")
    cut(browser)
    # The refresh's answer arrives while the page is away; it is sent once the page is back.
    page.control("control.clock.advance", {"ms": 5000})
    resumed(page)
    page.hidden("products-refreshing")
    # Applied once: the first page again, not appended to the 40 shown.
    page.count_is("product-list", 20)
    page.ready("products", 1)
    assert not page.element("products-error").is_displayed()


def test_with_workers_a_resume_reaches_the_worker_holding_its_session():
    """The supervisor hands a resume to the worker its token names, whatever the balance says."""
    web = WebServer("--workers", "2")
    try:
        pages = [Page(web) for _ in range(6)]
        held = {}
        for page in pages:
            token = page.control()["params"]["token"]
            worker = page.ws.getheaders()["vmhost-worker"]
            assert token.startswith(f"{worker}.")
            held[token] = worker
            assert page.result("ping") == {}
        assert set(held.values()) == {"1", "2"}
        for page in pages:
            page.drop()
        # Worker 2's sessions first: balancing alone would hand the first of them to worker 1.
        for token, worker in sorted(held.items(), key=lambda item: item[1], reverse=True):
            again = resume(web, token, 1)
            session = again.control()["params"]
            assert session["resumed"]["resync"] is False, session
            assert again.ws.getheaders()["vmhost-worker"] == worker
            assert again.result("ping") == {}
    finally:
        web.stop()


def test_a_recording_of_a_session_that_resumed_replays(tmp_path):
    """The recording holds the session's traffic as if the connection had never dropped: what was
    written again is not recorded twice, the control frames and the token not at all."""
    from test_record import replay
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder), "--log-level", "debug")
    try:
        page, token, vm = login_page(web)
        seen = page.received
        page.send("vm.send", {"vm": vm, "input": "username", "value": "13800138000"}, id=50)
        page.drop(web)
        again = resume(web, token, seen)
        new_token = again.control()["params"]["token"]
        assert [again.read().get("id") for _ in range(2)] == [None, 50]
        again.next_id = 60
        again.result("vm.send", {"vm": vm, "input": "password", "value": "123456"})
        again.send("exit")
        assert again.close_code() == 1000
        written = web.wait_for_log(r"recorded a session to (\S+)").group(1)
    finally:
        web.stop()
    text = open(written, encoding="utf-8").read()
    assert token not in text and new_token not in text and "$/session" not in text and "123456" not in text
    # Each message once: the username's change was written twice on the wire, recorded once.
    assert text.count('"usernameValid":true') == 1
    done = replay(written)
    assert done.returncode == 0 and f"PASS {written}" in done.stdout, done.stdout


def test_a_suspended_session_counts_against_the_connection_cap():
    """A suspended session holds the connection it had until it resumes or ends: with a cap of
    2, a page suspended and one connected leave no room for a third."""
    web = WebServer("--clock", "manual", "--test-controls", "--max-connections", "2", "--log-level", "debug")
    try:
        page, token, vm = login_page(web)
        other = Page(web, query="")
        page.drop(web)
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            Page(web)
        assert refused.value.status_code == 503
        # The grace period ends: the session closes and gives its room back.
        assert other.result("control.clock.advance", {"ms": 30_001}) is not None
        third = Page(web)
        assert third.control()["method"] == "$/session"
    finally:
        web.stop()
