"""The web demo as the tests see it: waits on DOM conditions only (WebDriverWait), never on time."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

TIMEOUT = 20


class DemoPage:
    def __init__(self, driver, server):
        self.driver = driver
        self.server = server

    # MARK: Waiting

    def until(self, condition, message=""):
        return WebDriverWait(self.driver, TIMEOUT).until(condition, message)

    def ready(self, screen: str, session: int = 1):
        """Waits until `screen` is mounted in the page's `session`-th session."""
        expected = f"{screen}:{session}"
        self.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == expected,
                   f"screen {expected} never became ready")

    def element(self, element_id: str):
        return self.driver.find_element(By.ID, element_id)

    def visible(self, element_id: str):
        return self.until(EC.visibility_of_element_located((By.ID, element_id)), f"#{element_id} never shown")

    def hidden(self, element_id: str):
        return self.until(EC.invisibility_of_element_located((By.ID, element_id)), f"#{element_id} never hidden")

    def text_is(self, element_id: str, text: str):
        self.until(lambda d: d.find_element(By.ID, element_id).text == text,
                   f"#{element_id} never read {text!r}")

    def enabled(self, element_id: str):
        return self.until(EC.element_to_be_clickable((By.ID, element_id)), f"#{element_id} never enabled")

    def count_is(self, list_id: str, count: int):
        self.until(lambda d: d.find_element(By.ID, list_id).get_attribute("data-count") == str(count),
                   f"#{list_id} never held {count} rows")

    # MARK: Acting

    def open(self):
        self.driver.get(self.server.url)
        self.ready("login")

    def type(self, element_id: str, text: str):
        field = self.element(element_id)
        field.clear()
        field.send_keys(text)

    def click(self, element_id: str):
        self.enabled(element_id).click()

    def control(self, method: str, params: dict):
        """Calls a test control through the page's own session (`window.vmhost`)."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.vmhost.request(arguments[0], arguments[1]).then(done, (e) => done({error: String(e)}));",
            method, params)

    def log_in(self):
        """Logs in with the demo account (password mode) and waits for the product list."""
        self.open()
        self.type("username", "13800138000")
        self.type("password", "123456")
        self.click("submit")
        self.ready("products")
        self.count_is("product-list", 20)

    def open_and_type_username(self, typed: int = 3):
        """Opens the page, types the demo account's username and waits until the server answered it
        (the page has received `typed` frames): where a session is cut or restarted mid-form."""
        self.open()
        self.type("username", "13800138000")
        self.until(lambda d: d.execute_script("return window.vmhost.received") >= typed,
                   "the username was never answered")

    def finish_login_with_kept_username(self):
        """Back on the same session (its login screen never mounted again) with the username the
        server kept: the password alone makes the form valid, and the products come."""
        self.ready("login", 1)
        self.element("password").send_keys("123456")
        self.click("submit")
        self.ready("products", 1)
        self.count_is("product-list", 20)
