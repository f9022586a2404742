"""The tester's panel of the web demo (`vmhost-web --test-controls`, SPEC §9): it makes the next call
of an endpoint fail as chosen and moves the manual clock, with clicks only, so that a failure or a
countdown is recorded (`--record`) without devtools; a server without test controls shows no panel."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import WebServer
from page import DemoPage
from test_record import PASSWORD, replay, steps_of


def open_panel(page: DemoPage):
    """Opens the tester's strip with the bar's button (unless open)."""
    if page.element("tc-toggle").get_attribute("aria-expanded") != "true":
        page.click("tc-toggle")
    page.visible("tc-fail")


def fail_next(page: DemoPage, endpoint: str, outcome: str, detail: str | None = None):
    open_panel(page)
    Select(page.element("tc-endpoint")).select_by_value(endpoint)
    Select(page.element("tc-outcome")).select_by_value(outcome)
    if detail is not None:
        page.type("tc-detail", detail)
    page.click("tc-fail")


def test_the_panel_fails_a_refresh_and_moves_the_sms_countdown_into_a_recording(browser, tmp_path):
    folder = tmp_path / "recordings"
    web = WebServer("--clock", "manual", "--test-controls", "--record", str(folder))
    try:
        page = DemoPage(browser, web)
        page.open()
        page.visible("tc-toggle")
        assert not page.element("test-controls").is_displayed()  # closed until asked for
        assert page.element("tc-endpoint").get_attribute("value") == "auth.login"  # the screen's own
        page.click("tab-code")
        page.type("phone", "13912345678")
        page.click("send-code")
        page.text_is("send-code", "重新发送(60s)")
        open_panel(page)
        browser.shots("panel-zh")
        page.click("tc-advance-1s")
        page.text_is("send-code", "重新发送(59s)")
        page.text_is("tc-result", "时钟 +1 秒，现在 1 秒")
        page.click("tc-advance-60s")
        page.text_is("send-code", "获取验证码")
        page.text_is("tc-result", "时钟 +60 秒，现在 61 秒")

        page.click("tab-password")
        page.type("username", "13800138000")
        page.type("password", PASSWORD)
        page.click("submit")
        page.ready("products")
        page.count_is("product-list", 20)
        # The default endpoint follows the screen; an HTTP status is the detail of its outcome.
        assert page.element("tc-endpoint").get_attribute("value") == "products"
        fail_next(page, "products", "http")
        page.text_is("tc-result", "下次 products 调用：http:500")
        page.click("refresh")
        page.visible("products-error")
        page.text_is("products-error-text", "加载失败: 服务器错误（500），请稍后重试")
        browser.shots("refresh-failed")
        page.click("retry")  # one call failed: the next one loads
        page.hidden("products-error")
        page.count_is("product-list", 20)

        # A business failure's code and message are typed in the detail field.
        fail_next(page, "products", "business", "E42:库存不足")
        page.text_is("tc-result", "下次 products 调用：business:E42:库存不足")
        page.click("refresh")
        page.text_is("products-error-text", "加载失败: 库存不足")
        # A refused control says why in the panel, and queues nothing.
        fail_next(page, "products", "http", "99")
        page.until(lambda d: "http:99" in d.find_element(By.ID, "tc-result").text
                   and "failure" in d.find_element(By.ID, "tc-result").get_attribute("class"),
                   "the refusal was not shown in the panel")
        browser.execute_script("window.vmhost.close()")
        written = web.wait_for_log(r"recorded a session to (\S+)").group(1)
    finally:
        web.stop()

    steps = steps_of(written)
    sent = [step["send"] for step in steps if "send" in step]
    controls = [(message["method"], message.get("params")) for message in sent
                if message.get("method", "").startswith("control.")]
    assert controls[:4] == [
        ("control.clock.advance", {"ms": 0}),  # the page asking whether the server has test controls
        ("control.clock.advance", {"ms": 1000}),
        ("control.clock.advance", {"ms": 60000}),
        ("control.backend.script", {"endpoint": "products", "outcomes": ["http:500"]}),
    ]
    done = replay(written)
    assert done.returncode == 0 and f"PASS {written}" in done.stdout, done.stdout + done.stderr


def test_the_panel_speaks_english_and_hides_the_clock_on_the_system_clock(browser):
    web = WebServer("--test-controls")
    try:
        page = DemoPage(browser, web)
        page.open()
        page.click("locale-en")
        page.ready("login", session=2)
        open_panel(page)
        assert page.element("tc-toggle").text == "Test"
        assert not page.element("tc-clock").is_displayed()  # control.clock.advance needs a manual clock
        Select(page.element("tc-outcome")).select_by_value("business")
        assert page.element("tc-detail").get_attribute("value") == "E900:scripted failure"
        Select(page.element("tc-outcome")).select_by_value("timeout")
        assert not page.element("tc-detail").is_displayed()
        browser.shots("panel-en")
        fail_next(page, "auth.login", "network")
        page.text_is("tc-result", "next auth.login call: network")
        page.type("username", "13800138000")
        page.type("password", PASSWORD)
        page.click("submit")
        page.visible("login-failure")
        assert page.element("login-failure").text != ""
        browser.shots("login-network-failure")
    finally:
        web.stop()


def test_a_server_without_test_controls_shows_no_panel(browser):
    web = WebServer()
    try:
        page = DemoPage(browser, web)
        page.open()
        assert not page.element("tc-toggle").is_displayed() and not page.element("test-controls").is_displayed()
        browser.shots("no-panel")
    finally:
        web.stop()
