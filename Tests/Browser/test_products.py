"""The product list in Chromium: paging to the end, a scripted failure and its retry, cancel."""
from page import DemoPage


def test_pages_to_the_end(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    browser.shots("first-page")
    for count in (40, 57):
        page.click("load-more")
        page.count_is("product-list", count)
    page.visible("products-end")
    page.hidden("load-more")
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    browser.shots("end")
    names = [e.text for e in browser.find_elements("css selector", "#product-list .name")]
    assert len(names) == len(set(names)) == 57


def test_a_scripted_backend_failure_is_shown_and_retried(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    assert page.control("control.backend.script", {"endpoint": "products", "outcomes": ["http:500"]}) == {}
    page.click("refresh")
    page.visible("products-error")
    assert "加载失败" in page.element("products-error-text").text
    page.count_is("product-list", 20)  # the last good page stays
    browser.shots("error")

    page.click("retry")
    page.hidden("products-error")
    page.count_is("product-list", 20)
    browser.shots("retried")


def test_cancel_stops_a_slow_refresh(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    page.control("control.backend.script", {"endpoint": "products", "outcomes": ["delay:5000"]})
    page.click("refresh")
    page.visible("products-refreshing")
    browser.shots("refreshing")
    page.click("cancel")
    page.hidden("products-refreshing")
    page.enabled("refresh")
    assert not page.element("products-error").is_displayed()  # a cancel is no failure
    page.count_is("product-list", 20)


UNCOVERED = """
const element = document.getElementById(arguments[0]);
const box = element.getBoundingClientRect();
const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
return {scrollY: window.scrollY, uncovered: element.contains(hit),
        routeNamesAnElement: document.getElementById(location.hash.slice(1)) !== null};
"""


def test_each_screen_opens_at_its_top_clear_of_the_bar(browser, server):
    """A route (#products) names no element, so following one never scrolls the page to the
    screen's element, where the sticky bar would cover its buttons (clicks on #refresh landed on
    the bar when the scroll won the race with the screen's first draw)."""
    page = DemoPage(browser, server)
    page.log_in()
    assert browser.execute_script(UNCOVERED, "refresh") == {
        "scrollY": 0, "uncovered": True, "routeNamesAnElement": False}
    page.click("nav-groups")
    page.ready("groups")
    page.count_is("group-list", 4)
    assert browser.execute_script(UNCOVERED, "group-new") == {
        "scrollY": 0, "uncovered": True, "routeNamesAnElement": False}
    page.click("nav-products")
    page.ready("products")
    page.count_is("product-list", 20)
    assert browser.execute_script(UNCOVERED, "refresh") == {
        "scrollY": 0, "uncovered": True, "routeNamesAnElement": False}
