"""Menu groups in Chromium: create and rename through the edit screen, then delete."""
from selenium.webdriver.common.by import By

from page import DemoPage


def group_names(browser):
    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#group-list .name")]


def test_create_rename_and_delete_a_group(browser, server):
    page = DemoPage(browser, server)
    page.log_in()
    page.click("nav-groups")
    page.ready("groups")
    page.count_is("group-list", 4)
    browser.shots("groups")

    page.click("group-new")
    page.visible("editor")
    page.text_is("editor-title", "新建分组")
    assert not page.element("editor-save").is_enabled()
    page.type("editor-name", "夜宵")
    browser.shots("editor-new")
    page.click("editor-save")
    page.hidden("editor")
    page.count_is("group-list", 5)
    assert "夜宵" in group_names(browser)

    row = browser.find_element(By.XPATH, "//ul[@id='group-list']/li[span[@class='name' and text()='夜宵']]")
    group_id = row.get_attribute("data-id")
    row.find_element(By.CSS_SELECTOR, ".rename").click()
    page.visible("editor")
    page.text_is("editor-title", "重命名分组")
    assert page.element("editor-name").get_attribute("value") == "夜宵"
    page.type("editor-name", "夜宵小吃")
    browser.shots("editor-rename")
    page.click("editor-save")
    page.hidden("editor")
    page.until(lambda d: "夜宵小吃" in group_names(d), "the renamed group never showed")
    browser.shots("renamed")

    browser.find_element(By.CSS_SELECTOR, f"#group-list li[data-id='{group_id}'] .delete").click()
    page.count_is("group-list", 4)
    assert "夜宵小吃" not in group_names(browser)
    browser.shots("deleted")
