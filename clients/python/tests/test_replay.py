"""`python3 -m vmhost.replay` on recordings the host made (`vmhost --record FILE`): a session
replays green with and without a backend, a changed behaviour fails at the line where it shows
with the JSON path, a missing secret is named, `--update` rewrites the expectations and shows the
diff, and the exit status tells CI what happened. Every host runs on a manual clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import vmhost
from vmhost.replay import Secrets, Transcript, dumps, read_steps, replay, step_spans, step_text, update

CLIENT = Path(__file__).resolve().parents[1]
PASSWORD = "123456"  # the demo account's (protocol/backend.md)


def cli(*args: str, env: Dict[str, str] | None = None) -> "subprocess.CompletedProcess[str]":
    environment = dict(os.environ, PYTHONPATH=str(CLIENT))
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "vmhost.replay", *args], capture_output=True,
                          text=True, env=environment, timeout=120)


def record(path: Path) -> Path:
    """A session recorded by the host: a login typed key by key, a list, a page, a failed refresh."""
    with vmhost.Host.spawn("--clock", "manual", "--test-controls", "--record", str(path),
                           stderr=subprocess.DEVNULL) as host:
        login = host.create("Login")
        login.subscribe(outputs=["passwordValid", "canSubmit"])
        login.send("username", "13800138000")
        for end in range(1, len(PASSWORD) + 1):
            login.send("password", PASSWORD[:end])
        login.send("submit")
        products = host.create("ProductList", {"pageSize": 20})
        products.subscribe(outputs=["page", "hasMore", "loadState"])
        products.send("refresh")
        products.send("loadMore")
        host.request("control.backend.script", {"endpoint": "products", "outcomes": ["http:500"]})
        with pytest.raises(vmhost.CommandFailed):
            products.send("refresh")
    return path


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return record(tmp_path / "session.jsonl")


def number_of_first(path: Path, text: str) -> int:
    """The line of the first step that holds *text* (a step's first line: what a replay reports)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for first, last in step_spans(lines):
        if text in "\n".join(lines[first - 1:last]):
            return first
    raise AssertionError(f"{text!r} is not in {path}")


def test_a_recording_replays_with_and_without_a_backend(recording: Path) -> None:
    text = recording.read_text(encoding="utf-8")
    assert PASSWORD not in text and "demo-token" not in text  # never in clear
    assert '"$secret:password:6"' in text
    secrets = {"VMHOST_SECRET_PASSWORD": PASSWORD}
    done = cli(str(recording), env=secrets)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PASS {recording}" in done.stdout and "1 of 1 passed" in done.stdout
    done = cli("--offline", str(recording), env=secrets)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_missing_secret_fails_at_its_line_and_names_it(recording: Path) -> None:
    done = cli(str(recording))
    assert done.returncode == 1
    line = number_of_first(recording, "$secret:password:1")
    assert f"FAIL {recording}:{line}: the transcript needs the secret 'password'" in done.stdout
    assert "VMHOST_SECRET_PASSWORD" in done.stdout


def test_a_secrets_file_gives_the_secrets(recording: Path, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.json"
    secrets.write_text(json.dumps({"password": PASSWORD}), encoding="utf-8")
    done = cli("--secrets", str(secrets), str(recording))
    assert done.returncode == 0, done.stdout


def test_a_changed_behaviour_fails_at_the_line_where_it_shows(recording: Path) -> None:
    # The second page of a catalogue of 39 products holds 19: the load more says no more pages.
    steps = read_steps(recording)
    steps[0]["args"] += ["--demo-products", "39"]
    changed = recording.with_name("changed.jsonl")
    changed.write_text("".join(json.dumps(s, ensure_ascii=False, separators=(",", ":")) + "\n" for s in steps),
                       encoding="utf-8")
    done = cli(str(changed), env={"VMHOST_SECRET_PASSWORD": PASSWORD})
    assert done.returncode == 1
    line = number_of_first(changed, '"page":2')
    assert f"FAIL {changed}:{line}: $.params.values: unexpected member(s) ['hasMore']" in done.stdout, done.stdout
    assert "expected:" in done.stdout and "got:" in done.stdout and "diff:" in done.stdout
    assert PASSWORD not in done.stdout


def test_an_edited_expectation_fails_with_its_json_path(recording: Path) -> None:
    text = recording.read_text(encoding="utf-8")
    edited = recording.with_name("edited.jsonl")
    edited.write_text(text.replace('"page":2', '"page":3', 1), encoding="utf-8")
    failure = replay(edited, secrets=Secrets({"password": PASSWORD}, environ={}))
    assert failure is not None
    assert failure.line == number_of_first(edited, '"page":3')
    assert failure.why == "$.params.values.page: expected 3, got 2"


def test_update_rewrites_what_changed_keeps_the_rest_and_shows_the_diff(recording: Path) -> None:
    original = recording.read_text(encoding="utf-8")
    edited = recording.with_name("edited.jsonl")
    # One expectation changed, one dropped (the host writes it: it must come back).
    changed = original.replace('"page":2', '"page":3', 1)
    dropped = step_text(next(step for step in read_steps(recording)
                             if "expect" in step and '"loadState":"failed"' in dumps(step)))
    assert dropped + "\n" in changed
    edited.write_text(changed.replace(dropped + "\n", "", 1), encoding="utf-8")
    done = cli("--update", str(edited), env={"VMHOST_SECRET_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stdout
    assert f"UPDATED {edited}" in done.stdout
    assert '-{"expect":' in done.stdout and '"page":3' in done.stdout and '+{"expect":' in done.stdout
    updated = edited.read_text(encoding="utf-8")
    assert '"page":2' in updated and '"page":3' not in updated and '"loadState":"failed"' in updated
    # Lines that matched are kept as they were: comments, placeholders, captures.
    for line in original.splitlines():
        if '"comment"' in line or '"send"' in line or "$capture:" in line:
            assert line in updated, line
    assert PASSWORD not in updated
    assert replay(edited, secrets=Secrets({"password": PASSWORD}, environ={})) is None
    assert replay(edited, offline=True, secrets=Secrets({"password": PASSWORD}, environ={})) is None
    done = cli("--update", str(edited), env={"VMHOST_SECRET_PASSWORD": PASSWORD})
    assert f"UNCHANGED {edited}" in done.stdout


def test_update_records_the_backend_anew(recording: Path) -> None:
    # A transcript whose backend lines are stale: an update with the backend writes them again.
    edited = recording.with_name("stale.jsonl")
    edited.write_text("".join(step_text(step) + "\n" for step in read_steps(recording) if "backend" not in step),
                      encoding="utf-8")
    secrets = Secrets({"password": PASSWORD}, environ={})
    assert replay(edited, offline=True, secrets=secrets) is not None
    result = update(edited, secrets=secrets)
    assert result.failure is None, result.failure and result.failure.report()
    edited.write_text(result.new, encoding="utf-8")
    assert sum("backend" in step for step in read_steps(edited)) == 4  # login, two pages, the failure
    assert PASSWORD not in result.new
    assert replay(edited, offline=True, secrets=secrets) is None


def test_exit_status_and_unreadable_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"args": []}\nnot json\n', encoding="utf-8")
    done = cli(str(bad))
    assert done.returncode == 2 and "not JSON" in done.stdout
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"args": []}\n{"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}\n'
                     '{"expect": {"jsonrpc": "2.0", "id": 1, "result": {}}}\n', encoding="utf-8")
    assert cli(str(plain)).returncode == 0
    done = cli("--offline", str(plain))
    assert done.returncode == 2 and "no offlineArgs" in done.stdout
    assert cli("--secrets", str(tmp_path / "none.json"), str(plain)).returncode == 2


def test_a_recording_names_its_secrets_and_keeps_what_the_replay_needs(recording: Path) -> None:
    steps = read_steps(recording)
    assert steps[0]["args"] == ["--clock", "manual", "--test-controls"]
    assert steps[0]["offlineArgs"] == ["--clock", "manual", "--test-controls", "--backend", "recorded:$transcript"]
    comments = [s["comment"] for s in steps if "comment" in s]
    assert not any("system clock" in c for c in comments)
    assert any("$secret:password (6 characters" in c and "VMHOST_SECRET_" in c for c in comments)
    assert any("$secret:token" in c and "does not need" in c for c in comments)
    sends = [s["send"] for s in steps if "send" in s]
    typed = [s["params"]["value"] for s in sends if s.get("params", {}).get("input") == "password"]
    assert typed == [f"$secret:password:{n}" for n in range(1, 7)]
    assert Transcript.load(recording).secret_names() == ["password"]


def test_a_users_sends_are_marked_and_recordings_with_or_without_markers_replay(recording: Path,
                                                                              tmp_path: Path) -> None:
    """Each `vm.send` the client made carries `user` (its input); a recording made before the
    marker existed (none) replays as well, and a marker that is no string, or stands on no send,
    makes the file unusable (status 2)."""
    steps = read_steps(recording)
    marked = [s for s in steps if "user" in s]
    assert marked and all(s["send"]["method"] == "vm.send" and s["user"] == s["send"]["params"]["input"]
                          for s in marked)
    assert [s["user"] for s in marked][:8] == ["username"] + ["password"] * 6 + ["submit"]
    assert all("user" not in s for s in steps if "send" in s and s["send"].get("method") != "vm.send")
    env = {"VMHOST_SECRET_PASSWORD": PASSWORD}
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in s.items() if k != "user"}) + "\n" for s in steps),
                   encoding="utf-8")
    for path in (recording, old):
        done = cli(str(path), env=env)
        assert done.returncode == 0 and f"PASS {path}" in done.stdout, done.stdout + done.stderr
    for name, step in (("number.jsonl", {"user": 1, "send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}),
                       ("alone.jsonl", {"user": "password"})):
        bad = tmp_path / name
        bad.write_text(json.dumps({"args": []}) + "\n" + json.dumps(step) + "\n", encoding="utf-8")
        done = cli(str(bad))
        assert done.returncode == 2 and "user: the marker of a user's send" in done.stdout, done.stdout


# -- a recording made on the system clock: one turn's changes split or merged differently ------------

SYSTEM_CLOCK = {"comment": "Recorded on the system clock: timers, backend latency and timeouts ran in real time."}


def changed(values: Dict[str, Any], splices: Dict[str, Any] | None = None, subscription: str = "s1") -> Dict[str, Any]:
    params: Dict[str, Any] = {"subscription": subscription, "vm": "vm1", "values": values}
    if splices:
        params["splices"] = splices
    return {"jsonrpc": "2.0", "method": "vm.changed", "params": params}


def test_fold_changes_compares_where_the_notifications_end() -> None:
    from vmhost.replay import Mismatch, fold_changes
    before = {"loading": False, "loadState": "idle", "items": []}
    insert = {"items": [{"index": 0, "remove": 0, "insert": [1, 2]}]}
    # Written as two notifications where the recording had one: `loading` went up and back.
    fold_changes([changed({"loadState": "loaded"}, insert)],
                 [changed({"loading": True}), changed({"loading": False, "loadState": "loaded"}, insert)], before, {})
    # Two recorded notifications written as one.
    fold_changes([changed({"loading": True}), changed({"loading": False, "loadState": "loaded"})],
                 [changed({"loadState": "loaded"})], before, {})
    # List edits follow each other; a whole value replaces the edits before it.
    more = {"items": [{"index": 2, "remove": 0, "insert": [3]}]}
    fold_changes([changed({}, insert), changed({}, more)],
                 [changed({}, {"items": insert["items"] + more["items"]})], before, {})
    fold_changes([changed({}, insert), changed({"items": [9]})], [changed({"items": [9]})], before, {})
    # Where they end differs: a mismatch naming the member.
    with pytest.raises(Mismatch, match="loadState"):
        fold_changes([changed({"loadState": "loaded"})], [changed({"loadState": "failed"})], before, {})
    with pytest.raises(Mismatch):
        fold_changes([changed({}, insert)], [changed({}, more)], before, {})


def split_a_notification(path: Path, comment: bool) -> int:
    """Rewrites *path*: its first vm.changed of two members or more as two lines, one member each
    side (and, with *comment*, says it was recorded on the system clock). The line number of the
    first of the two."""
    steps = read_steps(path)
    for index, step in enumerate(steps):
        values = step.get("expect", {}).get("params", {}).get("values", {}) if step.get("expect", {}).get("method") == "vm.changed" else {}
        if len(values) >= 2 and "splices" not in step["expect"]["params"]:
            names = list(values)
            first = json.loads(json.dumps(step))
            first["expect"]["params"]["values"] = {names[0]: values[names[0]]}
            rest = json.loads(json.dumps(step))
            rest["expect"]["params"]["values"] = {name: values[name] for name in names[1:]}
            steps[index:index + 1] = [first, rest]
            if comment:
                steps.insert(1, SYSTEM_CLOCK)
            path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in steps), encoding="utf-8")
            return index + 1 + (1 if comment else 0)
    raise AssertionError(f"no vm.changed of two members in {path}")


def test_a_system_clock_recording_replays_when_a_turn_was_written_in_another_split(recording: Path) -> None:
    env = {"VMHOST_SECRET_PASSWORD": PASSWORD}
    split_a_notification(recording, comment=True)
    done = cli(str(recording), env=env)
    assert done.returncode == 0, done.stdout


def test_a_manual_clock_recording_is_replayed_exactly(recording: Path) -> None:
    env = {"VMHOST_SECRET_PASSWORD": PASSWORD}
    line = split_a_notification(recording, comment=False)
    done = cli(str(recording), env=env)
    assert done.returncode == 1 and f"FAIL {recording}:{line}:" in done.stdout, done.stdout


# -- a transcript from a stranger: options that write, open or reach something are refused ----------

def hostile(tmp_path: Path, args: List[Any], secret: bool = False) -> Path:
    """A transcript in a folder of its own starting the host with *args*; with *secret*, it sends
    the password as a `$secret:` placeholder."""
    folder = tmp_path / "received"
    folder.mkdir(exist_ok=True)
    path = folder / "hostile.jsonl"
    steps: List[Dict[str, Any]] = [{"args": args}]
    if secret:
        steps.append({"send": {"jsonrpc": "2.0", "id": 1, "method": "vm.create", "params": {"kind": "Login", "id": "l"}}})
        steps.append({"send": {"jsonrpc": "2.0", "id": 2, "method": "vm.send",
                               "params": {"vm": "l", "input": "password", "value": "$secret:password"}}})
    steps.append({"send": {"jsonrpc": "2.0", "id": 3, "method": "ping"}})
    path.write_text("".join(json.dumps(s) + "\n" for s in steps), encoding="utf-8")
    return path


def assert_refused(path: Path, *options: str, env: Dict[str, str] | None = None) -> str:
    done = cli(*options, str(path), env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"REFUSED {path}:1: not replayed:" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr
    return done.stdout


def test_a_transcript_asking_for_a_trace_a_recording_or_a_state_dir_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    script = outside / "build.sh"
    script.write_text("echo build\n", encoding="utf-8")
    cases = [
        (["--trace", str(outside / "trace.ndjson")], "--trace"),
        (["--clock", "manual", "--record", str(script)], "--record"),
        (["--record=" + str(script)], "--record"),
        (["--state-dir", str(outside / "state")], "--state-dir"),
        (["--clock", "--trace", str(outside / "trace.ndjson")], "--clock has no value"),
        (["--clock", "manual", "extra"], "'extra' is no option"),
        (["-h"], "'-h' is no option"),
    ]
    for args, named in cases:
        out = assert_refused(hostile(tmp_path, args))
        assert named in out, out
        assert "--trust-args" in out or "no option" in out or "no value" in out
    assert sorted(p.name for p in outside.iterdir()) == ["build.sh"]
    assert script.read_text(encoding="utf-8") == "echo build\n"
    # The same through the module's API: Refused, before any host starts.
    from vmhost.replay import Refused
    with pytest.raises(Refused, match="--trace"):
        replay(hostile(tmp_path, ["--trace", str(outside / "trace.ndjson")]))
    with pytest.raises(Refused, match="--state-dir"):
        update(hostile(tmp_path, ["--state-dir", str(outside / "state")]))
    assert sorted(p.name for p in outside.iterdir()) == ["build.sh"]


def test_a_backend_address_is_refused_and_the_secret_never_sent(tmp_path: Path) -> None:
    import socket
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        port = server.getsockname()[1]
        for args in (["--backend", f"http://127.0.0.1:{port}"], [f"--backend=http://127.0.0.1:{port}"],
                     ["--backend", "embedded", "--backend", f"http://127.0.0.1:{port}"]):
            out = assert_refused(hostile(tmp_path, args, secret=True), env={"VMHOST_SECRET_PASSWORD": "s3cret-pw"})
            assert "--backend" in out and "s3cret-pw" not in out
        # The replayer has exited: a connection it made would be waiting to be accepted.
        with pytest.raises(BlockingIOError):
            server.accept()


def test_a_recorded_backend_must_be_a_file_beside_the_transcript(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text('{"args": []}\n', encoding="utf-8")
    path = hostile(tmp_path, [])
    (path.parent / "link.jsonl").symlink_to(outside)
    os.mkfifo(path.parent / "fifo.jsonl")
    for value, why in ((f"recorded:{outside}", "outside"), ("recorded:../elsewhere.jsonl", "beside"),
                       ("recorded:link.jsonl", "outside"), ("recorded:fifo.jsonl", "not a regular file"),
                       ("recorded:", "beside"), ("https://example.org", "embedded backend or recorded")):
        out = assert_refused(hostile(tmp_path, ["--backend", value]))
        assert why in out, out
    # Beside it, by name or as the transcript itself: replayed (the host reads the real path).
    (path.parent / "answers.jsonl").write_text('{"args": []}\n', encoding="utf-8")
    for value in ("recorded:answers.jsonl", "recorded:" + str(path.parent / "hostile.jsonl")):
        done = cli(str(hostile(tmp_path, ["--clock", "manual", "--backend", value])))
        assert done.returncode == 1 and "FAIL" in done.stdout, done.stdout  # started; the ping was never expected


def test_an_http_replay_must_be_a_file_beside_the_transcript_and_its_lines_are_no_steps(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text('{"args": []}\n', encoding="utf-8")
    path = hostile(tmp_path, [])
    os.mkfifo(path.parent / "fifo.jsonl")
    for value, why in ((str(outside), "outside"), ("../elsewhere.jsonl", "beside"), ("fifo.jsonl", "not a regular file")):
        out = assert_refused(hostile(tmp_path, ["--http-replay", value]))
        assert "--http-replay" in out and why in out, out
    # Beside it (the transcript itself, as offlineArgs name it): the host answers the app's HTTP
    # clients from its http lines, which the replayer passes over like backend lines.
    steps = [{"args": ["--clock", "manual"], "offlineArgs": ["--clock", "manual", "--http-replay", "$transcript",
                                                              "--http-replay-ignore", "header:X-Request-Id"]},
             {"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
             {"http": {"method": "GET", "path": "/api/notes", "headers": [], "ms": 0,
                       "response": {"status": 200, "headers": [], "body": []}}},
             {"expect": {"jsonrpc": "2.0", "id": 1, "result": {}}}, {"close": True}]
    recorded = tmp_path / "received" / "notes.jsonl"
    recorded.write_text("".join(json.dumps(s) + "\n" for s in steps), encoding="utf-8")
    for offline in ([], ["--offline"]):
        done = cli(*offline, str(recorded))
        assert done.returncode == 0 and "PASS" in done.stdout, done.stdout + done.stderr


def test_trust_args_passes_the_options_as_they_are(tmp_path: Path) -> None:
    trace = tmp_path / "trace.ndjson"
    path = hostile(tmp_path, ["--trace", str(trace)])
    steps = read_steps(path) + [{"expect": {"jsonrpc": "2.0", "id": 3, "result": {}}}]
    path.write_text("".join(json.dumps(s) + "\n" for s in steps), encoding="utf-8")
    done = cli("--trust-args", str(path))
    assert done.returncode == 0, done.stdout
    assert trace.exists()


def test_deep_nesting_and_hostile_lines_end_the_replayer_with_status_2(tmp_path: Path) -> None:
    cases = {
        "deep.jsonl": '{"args": []}\n{"send": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "deepish.jsonl": '{"args": []}\n{"send": ' + "[" * 300 + "]" * 300 + "}\n",
        "raw.jsonl": '{"args": []}\n{"sendRaw": 5}\n',
        "exit.jsonl": '{"args": []}\n{"exit": "zero"}\n',
        "args.jsonl": '{"args": [1, {"a": 2}]}\n',
        "bytes.bin": '{"args": []}\n\udcff\n',
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        done = cli(str(path))
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and (f"ERROR {path}" in done.stdout or "REFUSED" in done.stdout), done.stdout
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    done = cli(str(fifo))
    assert done.returncode == 2 and "not a regular file" in done.stdout


# -- --update keeps the session -------------------------------------------------------------------

def test_update_of_a_recording_with_backend_latency_keeps_the_session(tmp_path: Path) -> None:
    """On the system clock every backend call takes 150 ms: a reply comes after a ping would. The
    update waits for the replies the recorded client had before each send, so the updated file is
    the same session, and replays green every time."""
    path = tmp_path / "latency.jsonl"
    with vmhost.Host.spawn("--test-controls", "--record", str(path), stderr=subprocess.DEVNULL) as host:
        host.request("control.backend.latency", {"ms": 150})
        login = host.create("Login")
        login.send("username", "13800138000")
        login.send("password", PASSWORD)
        login.send("submit")
        products = host.create("ProductList", {"pageSize": 20})
        products.subscribe(outputs=["page", "hasMore", "isRefreshing", "isLoadingMore"])
        products.send("refresh")
        products.send("loadMore")
    secrets = Secrets({"password": PASSWORD}, environ={})
    old_steps = read_steps(path)
    # An intended change to pick up: the first page's number edited away.
    text = path.read_text(encoding="utf-8")
    assert '"page":2' in text
    path.write_text(text.replace('"page":2', '"page":7', 1), encoding="utf-8")
    result = update(path, secrets=secrets)
    assert result.failure is None, result.failure.report()
    path.write_text(result.new, encoding="utf-8")
    new = result.new
    assert '"page":2' in new and '"page":7' not in new
    assert "-32800" not in new and "-32003" not in new  # nothing cancelled or refused
    new_steps = read_steps(path)
    assert [s for s in new_steps if "send" in s] == [s for s in old_steps if "send" in s]
    assert sum("expect" in s for s in new_steps) == sum("expect" in s for s in old_steps)
    for _ in range(10):
        failure = replay(path, secrets=secrets)
        assert failure is None, failure.report()


def test_update_refuses_when_a_reply_the_session_had_never_comes(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    steps = [{"args": ["--clock", "manual", "--test-controls"]},
             {"send": {"jsonrpc": "2.0", "id": 1, "method": "vm.create", "params": {"kind": "ProductList", "id": "p"}}},
             {"expect": {"jsonrpc": "2.0", "id": 1, "result": "$any"}},
             {"send": {"jsonrpc": "2.0", "id": 2, "method": "control.backend.latency", "params": {"ms": 1000}}},
             {"expect": {"jsonrpc": "2.0", "id": 2, "result": {}}},
             # A refresh that waits for a clock nothing moves: its reply, recorded before the next
             # send, cannot come.
             {"send": {"jsonrpc": "2.0", "id": 3, "method": "vm.send", "params": {"vm": "p", "input": "refresh"}}},
             {"expect": {"jsonrpc": "2.0", "id": 3, "result": None}},
             {"send": {"jsonrpc": "2.0", "id": 4, "method": "ping"}},
             {"expect": {"jsonrpc": "2.0", "id": 4, "result": {}}}]
    path.write_text("".join(json.dumps(s) + "\n" for s in steps), encoding="utf-8")
    result = update(path, read_limit=1.0)
    assert result.failure is not None
    assert result.failure.line == 8
    assert "cannot keep the session: the recording had the reply to the request with id 3" in result.failure.why


# -- reading a failure; another backend ---------------------------------------------------------------

def test_a_failure_names_the_step_it_followed_and_shows_long_messages_cut(recording: Path) -> None:
    text = recording.read_text(encoding="utf-8")
    edited = recording.with_name("edited.jsonl")
    edited.write_text(text.replace('"page":2', '"page":3,"note":"' + "x" * 400 + '"', 1), encoding="utf-8")
    env = {"VMHOST_SECRET_PASSWORD": PASSWORD}
    done = cli(str(edited), env=env)
    assert done.returncode == 1
    failing = number_of_first(edited, '"page":3')
    sends = [n for n, step in Transcript.load(edited).steps if n < failing and "send" in step]
    assert f"  after:    line {sends[-1]}: " in done.stdout and '"input":"loadMore"' in done.stdout, done.stdout
    assert "--full shows them all" in done.stdout and "x" * 400 not in done.stdout.split("diff:")[0]
    full = cli("--full", str(edited), env=env)
    assert "--full shows them all" not in full.stdout and len(full.stdout) > len(done.stdout)


class _Products:
    """An HTTP backend on loopback answering every call with an empty page, counting calls."""

    def __init__(self) -> None:
        import http.server
        import threading
        calls = self.calls = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                calls.append(self.path)
                body = json.dumps({"success": True, "code": "0", "message": "ok", "data": [],
                                   "page": {"index": 1, "size": 20, "total": 0}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_backend_url_points_a_recording_at_another_backend_and_a_failure_suggests_offline(tmp_path: Path) -> None:
    path = tmp_path / "http.jsonl"
    first = _Products()
    try:
        with vmhost.Host.spawn("--clock", "manual", "--test-controls", "--backend", first.url, "--record", str(path),
                               stderr=subprocess.DEVNULL) as host:
            products = host.create("ProductList", {"pageSize": 20})
            products.subscribe(outputs=["isEmpty", "loadState"])
            products.send("refresh")
    finally:
        first.close()
    # The recorded server is gone: refused as it stands (an address), failed with it trusted, and
    # the failure suggests --offline.
    assert cli(str(path)).returncode == 2
    done = cli("--trust-args", str(path))
    assert done.returncode == 1, done.stdout
    assert "hint: this recording holds its backend's answers" in done.stdout and "--offline" in done.stdout
    assert cli("--offline", str(path)).returncode == 0
    second = _Products()
    try:
        done = cli("--backend-url", second.url, str(path))
        assert done.returncode == 0, done.stdout
        assert second.calls == ["/products?page=1&pageSize=20"]
    finally:
        second.close()
    assert cli("--backend-url", "ftp://x", str(path)).returncode == 2


# -- --update shows the values that changed ---------------------------------------------------------

def changed_lines(diff: str) -> List[str]:
    """The lines a unified diff removes or adds, its two file headers left out."""
    return [line for line in diff.splitlines()
            if line[:1] in "-+" and not line.startswith(("--- ", "+++ "))]


def test_a_recording_is_laid_out_as_an_update_writes_it_and_a_one_word_change_is_its_line(tmp_path: Path) -> None:
    """The host writes each step as both replayers' --update writes it (protocol/conformance/README.md,
    "Layout"): a long one a member or element per line (a product per line). So an update of a
    fresh recording with nothing changed leaves it byte for byte, with either replayer, and a
    one-word change is the line of that value, removed and added. The file replays online and with
    no backend (the host reads laid-out steps too)."""
    path = tmp_path / "list.jsonl"
    with vmhost.Host.spawn("--clock", "manual", "--test-controls", "--record", str(path),
                           stderr=subprocess.DEVNULL) as host:
        products = host.create("ProductList", {"pageSize": 20})
        products.subscribe(diff=True)
        products.send("refresh")
        products.send("loadMore")
    secrets = Secrets({}, environ={})
    recorded = path.read_text(encoding="utf-8")
    assert recorded == "".join(step_text(step) + "\n" for step in read_steps(path))
    long_step = next(step_text(step) for step in read_steps(path) if "expect" in step and "稳健增利7号" in dumps(step))
    assert len(long_step) > 2000 and long_step.count("\n") > 20  # the splice of the first page, a product a line

    def updated_after(edit: str = "", into: str = "") -> str:
        if edit:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            at = [number for number, line in enumerate(lines) if edit in line and not line.startswith('{"backend"')]
            assert len(at) == 1, edit  # an expectation's, not the backend's answer
            lines[at[0]] = lines[at[0]].replace(edit, into)
            path.write_text("".join(lines), encoding="utf-8")
        node_copy = tmp_path / "node.jsonl"
        node_copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        result = update(path, secrets=secrets)
        assert result.failure is None, result.failure.report()
        path.write_text(result.new, encoding="utf-8")
        done = subprocess.run(["node", str(CLIENT.parent / "js" / "replay.js"), "--update", str(node_copy)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert node_copy.read_text(encoding="utf-8") == result.new  # one format, both replayers
        return result.diff()

    # Nothing changed: the recording as the host wrote it is what both replayers write.
    assert updated_after() == ""
    assert path.read_text(encoding="utf-8") == recorded
    # An intended change to pick up, standing for a host that now names a product otherwise: one
    # word of the recording edited, which the update writes back from what the host says: the
    # line of that product, removed and added.
    for edit, into in [("稳健增利7号", "稳健增利七号"), ('"name":"安心盈8号"', '"name":"安心盈八号"')]:
        diff = updated_after(edit, into)
        assert [line[0] for line in changed_lines(diff)] == ["-", "+"], diff
        assert into in changed_lines(diff)[0] and edit in changed_lines(diff)[1], diff
        assert sum(map(len, changed_lines(diff))) < 400, diff
        assert path.read_text(encoding="utf-8") == recorded
    # Recorded and updated alike: the file replays with both replayers, online and offline.
    for offline in (False, True):
        assert replay(path, offline=offline, secrets=secrets) is None
        done = subprocess.run(["node", str(CLIENT.parent / "js" / "replay.js"), *(["--offline"] if offline else []),
                               str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and f"PASS {path}" in done.stdout, done.stdout + done.stderr
