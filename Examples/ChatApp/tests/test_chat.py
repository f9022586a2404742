"""The chat host against its loopback server: screens loaded from the server, a message sent,
every failure the app maps (timeout on the host's clock, 500, a malformed body, no server), a
cancelled search whose transfer the server sees aborted, and the long-poll bound to the thread's
view-model, aborted at ``vm.dispose``."""
import socket

import pytest
import vmhost

from conftest import advance, spawn, until


def texts(values):
    return [m["text"] for m in values.get("messages", [])]


def test_the_thread_loads_receives_pushes_sends_and_stops_listening_at_dispose(server, host):
    thread = host.create("Thread")
    thread.subscribe()
    # The first long-poll answers with the thread so far; the next one is held by the server.
    until(thread, "thread from the server", lambda v: texts(v) == ["Hello from the server", "Swift on Linux works"])
    server.log(wait="waiting", path="/messages", count=1)
    # A message from someone else wakes the held poll: it reaches the screen with no request.
    server.post("grace", "Pushed to you")
    until(thread, "pushed message", lambda v: texts(v)[-1:] == ["Pushed to you"])
    server.log(wait="waiting", path="/messages", count=2)
    thread.send("draft", "  Sent from vmhost ")
    sent = thread.send("send")
    assert sent == {"id": 4, "author": "me", "text": "Sent from vmhost"}
    assert texts(thread.values)[-1] == "Sent from vmhost"
    posts = [e for e in server.log() if e["event"] == "request" and e["method"] == "POST"]
    assert [p["body"] for p in posts[-1:]] == ['{"author":"me","text":"Sent from vmhost"}']
    # The reader's own message does not wake its poll; the next message from someone else comes
    # with it, which is not shown twice.
    server.post("ada", "Seen it")
    until(thread, "the next push", lambda v: texts(v)[-1:] == ["Seen it"])
    assert texts(thread.values)[-2:] == ["Sent from vmhost", "Seen it"]
    server.log(wait="waiting", path="/messages", count=3)
    assert [e["query"] for e in server.events("request", "/messages")][-2:] == ["after=3&reader=me", "after=5&reader=me"]
    # Disposing of the view-model ends its listener: the held poll's transfer is aborted.
    assert server.events("aborted", "/messages") == []
    thread.dispose()
    server.log(wait="aborted", path="/messages", count=1)
    polls = len(server.events("request", "/messages"))
    server.post("ada", "Nobody listens")
    # The server answers nothing more: no poll followed the dispose (a later search is a barrier).
    search = host.create("Search")
    search.send("query", "listens")
    search.send("search")
    assert len(server.events("request", "/messages")) == polls


def test_a_search_shows_the_servers_results(server, host):
    search = host.create("Search")
    search.subscribe()
    search.send("query", "swift")
    search.send("search")
    assert [m["text"] for m in search["results"]] == ["Swift on Linux works"]
    assert search["loadState"] == "loaded"
    assert server.events("request", "/search")[-1]["query"] == "q=swift"


def failed(search, query):
    search.send("query", query)
    with pytest.raises(vmhost.CommandFailed) as failure:
        search.send("search")
    return failure.value


def test_a_500_and_a_malformed_body_are_the_apps_errors(server, host):
    search = host.create("Search")
    search.subscribe()
    error = failed(search, "boom")
    assert (error.kind, error.error["code"], error.user_message) == ("server", 500, "Something went wrong on the server.")
    assert search["loadState"] == "failed" and search["lastError"]["kind"] == "server"
    error = failed(search, "garbled")
    assert error.kind == "malformed"
    # The decoding failure names the member that did not fit, never the body's text.
    assert "$.messages[0].id" in error.detail and "ada" not in error.detail


def test_a_call_times_out_on_the_hosts_clock_and_the_server_sees_it_aborted(server, host):
    search = host.create("Search")
    search.send("query", "slow")
    pending = search.send_async("search")
    server.log(wait="waiting", path="/search")
    # No real time passes: the deadline (10 s, the default --timeout-ms) runs on the manual clock.
    advance(host, 9_999)
    # The advance's reply follows everything it caused: the search is still waiting.
    assert not pending.done()
    advance(host, 1)
    with pytest.raises(vmhost.CommandFailed) as failure:
        pending.result(timeout=10)
    assert failure.value.kind == "slow"
    server.log(wait="aborted", path="/search")


def test_a_cancelled_search_aborts_its_transfer(server, host):
    search = host.create("Search")
    search.subscribe()
    search.send("query", "slow")
    pending = search.send_async("search")
    server.log(wait="waiting", path="/search", count=1)
    pending.cancel()  # $/cancelRequest
    with pytest.raises(vmhost.RequestCancelled):
        pending.result(timeout=10)
    server.log(wait="aborted", path="/search", count=1)
    # A new search (the latest only) aborts the one in flight too, and shows its own results.
    pending = search.send_async("search")
    server.log(wait="waiting", path="/search", count=2)
    search.send("query", "hello")
    search.send("search")
    with pytest.raises(vmhost.RequestCancelled):
        pending.result(timeout=10)
    server.log(wait="aborted", path="/search", count=2)
    assert [m["text"] for m in search["results"]] == ["Hello from the server"]
    assert server.events("answered", "/search")[-1]["status"] == 200


def test_no_server_is_offline():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with spawn(url) as host:
        search = host.create("Search")
        error = failed(search, "swift")
        assert (error.kind, error.user_message) == ("offline", "You are offline. Try again.")


def test_the_app_depends_on_a_version_of_vmhost_and_resolves_swift_log_alone():
    """vmhost resolved at a version, as an app outside this repository depends on it (here the tag
    of HEAD that scripts/use-tagged-vmhost.sh made); its HTTP client brings no other package."""
    import json

    from conftest import PACKAGE

    pins = {pin["identity"]: pin["state"] for pin in json.loads((PACKAGE / "Package.resolved").read_text())["pins"]}
    assert pins["vmhost"].get("version") == (PACKAGE.parents[1] / "VERSION").read_text().strip(), pins["vmhost"]
    assert set(pins) == {"vmhost", "swift-log"}, sorted(pins)
