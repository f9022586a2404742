"""Switching the locale keeps the session and opens the screen again in that locale: the host's
strings and the page's follow."""
from selenium.webdriver.common.by import By

from page import DemoPage


def test_switching_to_english_and_back(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    first = browser.find_element(By.CSS_SELECTOR, "#product-list li .terms").text
    assert "天" in first
    browser.shots("zh")
    browser.execute_script("window.firstSession = window.vmhost")

    page.click("locale-en")
    page.ready("products", session=2)
    page.count_is("product-list", 20)
    page.text_is("refresh", "Refresh")
    terms = browser.find_element(By.CSS_SELECTOR, "#product-list li .terms").text
    assert "days" in terms
    statuses = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#product-list .status-tag")}
    assert statuses <= {"On sale", "Sold out", "Upcoming"}
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    browser.shots("en")

    page.click("nav-groups")
    page.ready("groups", session=2)
    page.click("group-new")
    page.text_is("editor-title", "New group")
    browser.shots("en-editor")
    page.click("editor-cancel")
    page.hidden("editor")

    page.click("locale-zh")
    page.ready("groups", session=3)
    page.text_is("group-new", "新建分组")
    # One session all along: no new connection, no new login.
    assert browser.execute_script("return window.vmhost === window.firstSession")
