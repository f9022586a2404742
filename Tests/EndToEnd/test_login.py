"""The Login view-model through the real binary (BRIEF §5, issue 6).

Every flow asserts the whole sequence of messages a request caused: mode switching, the validation
rules, the SMS countdown from 60 to 0 (time moves only with `control.clock.advance`), login success and
failure in both modes against the embedded backend (account 13800138000 / 123456, SMS code 123456),
English strings, and a search of stdout, stderr and the `--trace` file for the password and the code.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from harness import HostProcess

ACCOUNT, PASSWORD, PHONE, CODE = "13800138000", "123456", "13912345678", "123456"
SECRET_PASSWORD = "Zebra-Quartz-4417"
SECRET_CODE = "918273"
NAVIGATE = {"route": "ProductList"}

INITIAL = {
    "mode": "password", "codeTabColor": "#212121", "passwordTabColor": "#1E88E5",
    "hideCodeLine": True, "hideCodeContainer": True, "hidePasswordLine": False, "hidePasswordContainer": False,
    "usernameValid": False, "passwordValid": False, "phoneValid": False, "codeValid": False,
    "canSubmit": False, "canSendCode": False, "countdown": 0, "sendCodeTitle": "获取验证码",
    "isSubmitting": False, "failureMessage": None,
}
TO_CODE = {
    "mode": "code", "codeTabColor": "#1E88E5", "passwordTabColor": "#212121",
    "hideCodeLine": False, "hideCodeContainer": False, "hidePasswordLine": True, "hidePasswordContainer": True,
}
TO_PASSWORD = {
    "mode": "password", "codeTabColor": "#212121", "passwordTabColor": "#1E88E5",
    "hideCodeLine": True, "hideCodeContainer": True, "hidePasswordLine": False, "hidePasswordContainer": False,
}


def changed(values: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "vm.changed", "params": {"subscription": "s1", "vm": "l", "values": values}}


def event(name: str, value) -> dict:
    return {"jsonrpc": "2.0", "method": "vm.event", "params": {"subscription": "s1", "vm": "l", "name": name, "value": value}}


def result(id, value) -> dict:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def send(host: HostProcess, input: str, value=None):
    params = {"vm": "l", "input": input}
    if value is not None:
        params["value"] = value
    return host.request("vm.send", params)


def open_login(host: HostProcess, args: dict | None = None) -> dict:
    """Creates Login `l`, subscribes (s1) and returns the first values."""
    params = {"kind": "Login", "id": "l"}
    if args is not None:
        params["args"] = args
    created = host.request("vm.create", params)
    assert created.error is None, created.error
    subscribed = host.request("vm.subscribe", {"vm": "l"})
    assert subscribed.result["subscription"] == "s1"
    return subscribed.result["values"]


@pytest.fixture
def host():
    with HostProcess("--clock", "manual", "--test-controls") as process:
        yield process


# -- modes ---------------------------------------------------------------------------------------

def test_password_mode_is_the_default(host):
    assert open_login(host) == INITIAL


def test_code_mode_from_args(host):
    assert open_login(host, {"mode": "code"}) == {**INITIAL, **TO_CODE}


def test_switching_modes_is_one_input_and_one_notification(host):
    open_login(host)
    to_code = send(host, "mode", "code")
    assert to_code.messages == [changed(TO_CODE), result(to_code.id, {})]
    again = send(host, "mode", "code")
    assert again.messages == [result(again.id, {})]
    back = send(host, "mode", "password")
    assert back.messages == [changed(TO_PASSWORD), result(back.id, {})]


@pytest.mark.parametrize("args, path", [
    ({"mode": "sms"}, "params.args.mode"),
    ({"mode": 1}, "params.args.mode"),
    ({"mod": "code"}, "params.args.mod"),
])
def test_bad_args_are_invalid_params_naming_the_arg(host, args, path):
    reply = host.request("vm.create", {"kind": "Login", "args": args})
    assert reply.code == -32602
    assert path in reply.error["message"]


@pytest.mark.parametrize("value", ["sms", "Password", 0, None, ["code"]])
def test_the_mode_input_accepts_only_password_or_code(host, value):
    open_login(host)
    reply = host.request("vm.send", {"vm": "l", "input": "mode", "value": value})
    assert reply.code == -32602
    assert "params.value" in reply.error["message"]
    assert reply.notifications == []


# -- validation ----------------------------------------------------------------------------------

VALIDATION = [
    ("username", "13800138000", True),
    ("username", "19912345678", True),
    ("username", "12800138000", False),
    ("username", "23800138000", False),
    ("username", "1380013800", False),
    ("username", "138001380001", False),
    ("username", "1380013800a", False),
    ("username", "１３８００１３８０００", True),  # full-width digits, normalized
    ("username", "+86 138-0013-8000", True),
    ("username", "0086 13800138000", False),
    ("password", "12345", False),
    ("password", "123456", True),
    ("password", "密码密码密码", True),
    ("phone", "13912345678", True),
    ("phone", "11012345678", False),
    ("phone", "+8613912345678", True),
    ("phone", "139 1234 5678", True),
    ("phone", "139.1234.5678", False),
    ("code", "123456", True),
    ("code", "12345", False),
    ("code", "1234567", False),
    ("code", "12345a", False),
    ("code", "１２３４５６", False),
]


@pytest.mark.parametrize("input, text, valid", VALIDATION)
def test_validation_table(host, input, text, valid):
    open_login(host)
    reply = send(host, input, text)
    expected = {f"{input}Valid": True}
    if input == "phone":
        expected["canSendCode"] = True
    assert reply.messages == ([changed(expected)] if valid else []) + [result(reply.id, {})]


def test_can_submit_is_sent_only_when_it_changes(host):
    open_login(host)
    steps = [
        ("username", ACCOUNT, {"usernameValid": True}),
        ("password", "123", None),
        ("password", PASSWORD, {"passwordValid": True, "canSubmit": True}),
        ("password", "1234567", None),
        ("username", "13900139000", None),
        ("password", "12", {"passwordValid": False, "canSubmit": False}),
        ("password", PASSWORD, {"passwordValid": True, "canSubmit": True}),
    ]
    for input, text, values in steps:
        reply = send(host, input, text)
        assert reply.messages == ([changed(values)] if values else []) + [result(reply.id, {})], (input, text)


# -- send code and countdown ---------------------------------------------------------------------

def test_the_countdown_runs_from_60_to_0(host):
    open_login(host, {"mode": "code"})
    send(host, "phone", PHONE)
    sent = send(host, "sendCode")
    assert sent.messages == [
        changed({"canSendCode": False}),
        changed({"countdown": 60, "sendCodeTitle": "重新发送(60s)"}),
        result(sent.id, {}),
    ]
    refused = send(host, "sendCode")
    assert refused.code == -32003
    assert refused.error["data"] == {"input": "sendCode", "reason": "a code was just sent; wait 60s before sending another"}
    early = host.request("control.clock.advance", {"ms": 999})
    assert early.notifications == []
    for seconds in range(59, 0, -1):
        tick = host.request("control.clock.advance", {"ms": 1000 if seconds < 59 else 1})
        assert tick.notifications == [changed({"countdown": seconds, "sendCodeTitle": f"重新发送({seconds}s)"})]
    last = host.request("control.clock.advance", {"ms": 1000})
    assert last.notifications == [changed({"countdown": 0, "sendCodeTitle": "获取验证码", "canSendCode": True})]
    assert host.request("control.clock.advance", {"ms": 60_000}).notifications == []


def test_a_failed_send_emits_error_and_starts_no_countdown(host):
    open_login(host, {"mode": "code"})
    send(host, "phone", PHONE)
    host.request("control.backend.script", {"endpoint": "auth.smsCode", "outcomes": ["network"]})
    failed = send(host, "sendCode")
    error = {"kind": "network", "code": None, "message": "网络连接失败，请检查网络后重试",
             "detail": "could not connect to the server", "input": "sendCode"}
    assert failed.code == -32004
    assert failed.error["data"] == error
    assert failed.notifications == [changed({"canSendCode": False}), changed({"canSendCode": True}), event("error", error)]
    assert host.request("control.clock.advance", {"ms": 5000}).notifications == []
    assert host.request("vm.get", {"vm": "l", "outputs": ["countdown"]}).result == {"values": {"countdown": 0}}


def test_send_code_is_disabled_without_a_valid_phone(host):
    open_login(host, {"mode": "code"})
    refused = send(host, "sendCode")
    assert refused.code == -32003
    assert refused.error["data"] == {"input": "sendCode", "reason": "the phone number is not a valid mainland mobile number"}
    assert refused.notifications == []


def test_disposing_stops_the_countdown(host):
    open_login(host, {"mode": "code"})
    send(host, "phone", PHONE)
    send(host, "sendCode")
    host.request("control.clock.advance", {"ms": 3000})
    assert host.request("vm.dispose", {"vm": "l"}).result == {}
    assert host.request("control.clock.advance", {"ms": 60_000}).notifications == []


# -- submit --------------------------------------------------------------------------------------

def test_password_login_succeeds_and_navigates(host):
    open_login(host)
    send(host, "username", ACCOUNT)
    send(host, "password", PASSWORD)
    submit = send(host, "submit")
    assert submit.messages == [
        changed({"isSubmitting": True, "canSubmit": False}),
        event("navigate", NAVIGATE),
        changed({"isSubmitting": False}),
        result(submit.id, {}),
    ]


def test_code_login_succeeds_and_navigates(host):
    open_login(host, {"mode": "code"})
    send(host, "phone", PHONE)
    send(host, "sendCode")
    send(host, "code", CODE)
    submit = send(host, "submit")
    assert submit.messages == [
        changed({"isSubmitting": True, "canSubmit": False}),
        event("navigate", NAVIGATE),
        changed({"isSubmitting": False}),
        result(submit.id, {}),
    ]


@pytest.mark.parametrize("mode, fields, code, message", [
    ("password", {"username": ACCOUNT, "password": "654321"}, "1001", "用户名或密码错误"),
    ("code", {"phone": PHONE, "code": "654321"}, "1003", "验证码错误"),
])
def test_a_failed_login_shows_its_message_until_a_field_changes(host, mode, fields, code, message):
    open_login(host, {"mode": mode})
    for input, text in fields.items():
        send(host, input, text)
    submit = send(host, "submit")
    error = {"kind": "business", "code": code, "message": message,
             "detail": 'the server reported failure code "%s"' % code, "input": "submit"}
    assert submit.code == -32004
    assert submit.error["data"] == error
    assert submit.notifications == [
        changed({"isSubmitting": True, "canSubmit": False}),
        changed({"failureMessage": message, "isSubmitting": False, "canSubmit": True}),
        event("error", error),
    ]
    last_input = list(fields)[-1]
    edit = send(host, last_input, "123456")
    assert edit.messages == [changed({"failureMessage": None}), result(edit.id, {})]
    retry = send(host, "submit")
    assert event("navigate", NAVIGATE) in retry.notifications
    assert retry.error is None


def test_a_disabled_submit_is_refused_for_the_caller_only(host):
    open_login(host)
    send(host, "username", ACCOUNT)
    refused = send(host, "submit")
    assert refused.code == -32003
    assert refused.error["data"] == {"input": "submit", "reason": "the password is shorter than 6 characters"}
    assert refused.notifications == []


def test_a_second_submit_while_one_runs_is_refused(host):
    open_login(host)
    send(host, "username", ACCOUNT)
    send(host, "password", PASSWORD)
    host.request("control.backend.latency", {"ms": 500})
    host.send({"jsonrpc": "2.0", "id": "first", "method": "vm.send", "params": {"vm": "l", "input": "submit"}})
    second = send(host, "submit")
    assert second.code == -32003
    assert second.error["data"] == {"input": "submit", "reason": "already running"}
    assert second.notifications == [changed({"isSubmitting": True, "canSubmit": False})]
    advanced = host.request("control.clock.advance", {"ms": 500})
    assert advanced.messages[:3] == [
        event("navigate", NAVIGATE),
        changed({"isSubmitting": False}),
        result("first", {}),
    ]


# -- English -------------------------------------------------------------------------------------

def test_english_strings(host):
    assert host.request("initialize", {"locale": "en"}).result["locale"] == "en"
    values = open_login(host, {"mode": "code"})
    assert values["sendCodeTitle"] == "Get code"
    send(host, "phone", PHONE)
    sent = send(host, "sendCode")
    assert sent.notifications[-1] == changed({"countdown": 60, "sendCodeTitle": "Resend (60s)"})
    tick = host.request("control.clock.advance", {"ms": 1000})
    assert tick.notifications == [changed({"countdown": 59, "sendCodeTitle": "Resend (59s)"})]
    rest = host.request("control.clock.advance", {"ms": 59_000})
    assert rest.notifications == [changed({"countdown": 0, "sendCodeTitle": "Get code", "canSendCode": True})]


def test_describe_lists_the_contract(host):
    kind = host.request("host.describe", {"kind": "Login"}).result["kinds"][0]
    assert kind["args"]["properties"]["mode"]["enum"] == ["password", "code"]
    assert [(i["name"], i["kind"]) for i in kind["inputs"]] == [
        ("mode", "value"), ("username", "value"), ("password", "value"), ("phone", "value"), ("code", "value"),
        ("sendCode", "command"), ("submit", "command")]
    assert [i.get("policy") for i in kind["inputs"][5:]] == ["ignore", "ignore"]
    assert [o["name"] for o in kind["outputs"]] == list(INITIAL) + ["error", "navigate"]


# -- secrets -------------------------------------------------------------------------------------

def test_neither_the_password_nor_the_code_appears_in_anything_the_host_wrote(tmp_path):
    trace = tmp_path / "trace.ndjson"
    stderr = tmp_path / "stderr.log"
    with open(stderr, "wb") as log:
        host = HostProcess("--clock", "manual", "--test-controls", "--trace", str(trace), "--log-level", "trace", stderr=log)
        stdout = []
        with host:
            def record(exchange):
                stdout.extend(exchange.messages)
                return exchange

            record(host.request("vm.create", {"kind": "Login", "id": "l"}))
            record(host.request("vm.subscribe", {"vm": "l"}))
            record(send(host, "username", ACCOUNT))
            record(send(host, "password", SECRET_PASSWORD))
            assert record(send(host, "submit")).code == -32004
            host.notify("vm.send", {"vm": "l", "input": "password", "value": SECRET_PASSWORD})
            assert record(host.request("vm.send", {"vm": "nope", "input": "password", "value": SECRET_PASSWORD})).code == -32001
            assert record(host.request("vm.send", {"vm": "l", "input": "code", "value": [SECRET_CODE]})).code == -32602
            record(send(host, "password", PASSWORD))
            assert event("navigate", NAVIGATE) in record(send(host, "submit")).notifications
            # The session is open: a new Login starts the code login.
            record(host.request("vm.dispose", {"vm": "l"}))
            record(host.request("vm.create", {"kind": "Login", "id": "l"}))
            record(host.request("vm.subscribe", {"vm": "l"}))
            record(send(host, "mode", "code"))
            record(send(host, "phone", PHONE))
            record(send(host, "sendCode"))
            record(host.request("control.clock.advance", {"ms": 60_000}))
            record(send(host, "code", SECRET_CODE))
            assert record(send(host, "submit")).code == -32004
            record(send(host, "code", CODE))
            assert [e["value"] for e in record(send(host, "submit")).events if e["name"] == "navigate"] == [NAVIGATE]
            host.process.stdin.close()
            stdout.extend(host.read_all())
    assert host.process.returncode == 0

    written = {
        "stdout": "\n".join(json.dumps(m, ensure_ascii=False) for m in stdout),
        "stderr": stderr.read_text(),
        "trace": trace.read_text(),
    }
    assert "vmhost" in written["stderr"]  # the log was on
    assert '"navigate"' in written["trace"]
    for name, text in written.items():
        assert SECRET_PASSWORD not in text, f"the password leaked into {name}"
        assert SECRET_CODE not in text, f"the code leaked into {name}"
        assert '"123456"' not in text, f"the demo password or code leaked into {name}"
    sends = [json.loads(line)["msg"] for line in written["trace"].splitlines()]
    secret_sends = [m["params"] for m in sends
                    if m.get("method") == "vm.send" and m["params"].get("input") in ("password", "code")]
    assert len(secret_sends) == 7
    assert all(p["value"] == "***" for p in secret_sends)


# -- what a server's message may put on the screen (issue 25, item 16) ----------------------------

@pytest.mark.parametrize("sent, shown", [
    ("错" * (1024 * 1024), "错" * 199 + "…"),
    ("密码\x1b[2J\x1b[H错误\r\n伪造的第二行\u202e", "密码[2J[H错误 伪造的第二行"),
])
def test_a_servers_message_reaches_the_screen_bounded_and_clean_and_the_detail_keeps_it(host, sent, shown):
    host.request("control.backend.script", {"endpoint": "auth.login", "outcomes": ["business:1001:" + sent]})
    open_login(host)
    send(host, "username", ACCOUNT)
    send(host, "password", PASSWORD)
    submit = send(host, "submit")
    error = submit.error["data"]
    assert (error["kind"], error["code"], error["message"]) == ("business", "1001", shown)
    assert host.request("vm.get", {"vm": "l", "outputs": ["failureMessage"]}).result["values"] == {"failureMessage": shown}
    # The detail quotes what was sent, escaped and bounded: no control character, no megabyte.
    assert error["detail"].startswith('the server reported failure code "1001"; its message, shown cleaned and bounded, was sent as "')
    assert len(error["detail"]) < 1200
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in error["detail"])
    if sent.startswith("密码"):
        assert error["detail"].endswith(r'"密码\u{1B}[2J\u{1B}[H错误\u{D}\u{A}伪造的第二行\u{202E}"')
    else:
        assert error["detail"].endswith('… (%d bytes in all)' % len(sent.encode()))
