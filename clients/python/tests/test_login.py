"""Login through the real binary: validity, failures, navigation, the countdown."""

from __future__ import annotations

import subprocess
from typing import Any, List

import pytest

import vmhost
from conftest import OPTIONS, advance


def test_login_flow_navigates(host: vmhost.Host) -> None:
    login = host.create("Login", id="login")
    assert login.subscribe()["canSubmit"] is False
    routes: List[Any] = []
    errors: List[Any] = []
    login.on("navigate", routes.append)
    login.on("error", errors.append)

    login.username("13800138000")
    login.send("password", "654321")
    assert login["usernameValid"] and login["passwordValid"] and login["canSubmit"]
    with pytest.raises(vmhost.CommandFailed) as failed:
        login.submit()
    assert failed.value.error == {"kind": "business", "code": "1001", "message": "用户名或密码错误",
                                  "detail": 'the server reported failure code "1001"', "input": "submit"}
    assert login["failureMessage"] == "用户名或密码错误"
    assert errors == [failed.value.error] and routes == []

    login.password("123456")
    assert login["failureMessage"] is None
    assert login.submit() is None
    assert routes == [{"route": "ProductList"}]
    assert login["isSubmitting"] is False


def test_refused_submit_names_the_field(host: vmhost.Host) -> None:
    login = host.create("Login")
    login.subscribe()
    errors: List[Any] = []
    login.on("error", errors.append)
    login.username("12800138000")
    with pytest.raises(vmhost.InputDisabled) as refused:
        login.submit()
    assert refused.value.reason == "the username is not a valid mainland mobile number"
    assert errors == [], "a refused send goes to the caller only"
    with pytest.raises(vmhost.InvalidParams, match="params.value"):
        login.username(42)


def test_sms_countdown_on_the_manual_clock() -> None:
    with vmhost.Host.spawn(*OPTIONS, stderr=subprocess.DEVNULL) as host:
        host.initialize(locale="en")
        login = host.create("Login", {"mode": "code"})
        login.subscribe()
        login.phone("13912345678")
        assert login["canSendCode"] is True and login["sendCodeTitle"] == "Get code"
        login.sendCode()
        assert (login["countdown"], login["sendCodeTitle"]) == (60, "Resend (60s)")
        assert advance(host, 1000) == 1000
        assert login["countdown"] == 59
        with pytest.raises(vmhost.InputDisabled, match="wait 59s"):
            login.sendCode()
        advance(host, 59000)
        assert (login["countdown"], login["canSendCode"]) == (0, True)
        login.code("123456")
        login.submit()
        assert login["isSubmitting"] is False and login["failureMessage"] is None
