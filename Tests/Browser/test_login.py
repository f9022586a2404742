"""Login in both modes, in Chromium: validation, a failed login, the SMS countdown, navigation."""
from page import DemoPage


def test_password_login_shows_the_failure_then_opens_the_products(browser, server):
    page = DemoPage(browser, server)
    page.open()
    assert not page.element("submit").is_enabled()
    page.type("username", "13800138000")
    page.type("password", "654321")
    page.click("submit")
    page.visible("login-failure")
    page.text_is("login-failure", "用户名或密码错误")
    browser.shots("login-failed")

    page.type("password", "123456")
    page.hidden("login-failure")
    page.click("submit")
    page.ready("products")
    page.count_is("product-list", 20)
    assert browser.current_url.endswith("#products")
    browser.shots("products")


def test_code_login_counts_down_on_the_host_clock(browser, server):
    page = DemoPage(browser, server)
    page.open()
    page.click("tab-code")
    page.visible("code-container")
    page.hidden("password-container")
    page.type("phone", "13912345678")
    page.text_is("send-code", "获取验证码")
    assert not page.element("code-sent").is_displayed()
    page.click("send-code")
    page.text_is("send-code", "重新发送(60s)")
    page.visible("code-sent")
    page.text_is("code-sent", "验证码已发送，请查收短信")
    assert not page.element("send-code").is_enabled()
    browser.shots("countdown-60")

    page.control("control.clock.advance", {"ms": 1000})
    page.text_is("send-code", "重新发送(59s)")
    page.control("control.clock.advance", {"ms": 59000})
    page.text_is("send-code", "获取验证码")
    page.enabled("send-code")

    page.type("code", "123456")
    page.click("submit")
    page.ready("products")
    browser.shots("products")


def test_log_out_returns_to_the_login_screen(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    page.visible("logout")
    page.click("logout")
    page.ready("login")
    page.hidden("logout")
    page.hidden("nav")
    assert page.element("password").get_attribute("value") == ""  # the secret typed is gone
    assert page.element("username").get_attribute("value") == "13800138000"
    browser.shots("logged-out")

    # Logged out, the products' route opens the login screen (a new page load, its own session).
    browser.get(server.url + "#products")
    page.ready("login")
    page.hidden("logout")
