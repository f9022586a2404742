"""The curses demo app. Screens draw the mirror of their view-model; keys send inputs.

Commands run with ``send_async`` and are polled from the main loop, so the screen keeps
drawing (spinners, countdowns) while they run. Events arrive on the reader thread and are
queued for the main loop, which is the only place that sends requests.
"""

from __future__ import annotations

import curses
import locale
import os
import queue
import sys
import unicodedata
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .. import (KEEP_STDERR, CommandFailed, Host, HostExited, InputDisabled, RequestCancelled,
               RPCError, ViewModel)
from ..host import PendingCommand
from ..replay import Transcript

SPINNER = "|/-\\"
GONE = object()  # the origin of what a closed screen's view-model says
ACCENT = "#1E88E5"
USAGE = """usage: python3 -m vmhost.demo [--locale zh-Hans|en] [--binary PATH] [host options…]

The terminal demo of the reference app: log in, the product list, the menu groups.

  --locale zh-Hans|en  the language of the screens and of the host's strings (default: the host's,
                       zh-Hans); F2 switches it while the demo runs
  --binary PATH        the vmhost to run (default: $VMHOST_BIN, else this checkout's build)
  -h, --help           this text

Host options pass through to vmhost (default: --clock system, the embedded backend),
e.g. --backend http://127.0.0.1:8080, --timeout-ms 5000 or --state-dir DIR; `vmhost --help`
lists them all. With --record FILE the host writes the session to FILE as a transcript: replay it
with python3 -m vmhost.replay FILE.

Keys: Tab switches the login mode; o logs out (back to the login screen); F2 switches the language;
q quits (Ctrl-C on the login screen). On the menu groups, d asks before it deletes a group (y
deletes, any other key keeps it). The screens fit an 80×24 terminal: the keys wrap to two lines.

A tester's keys, with --test-controls (shown in the help line only then): F5 makes the next call
of a backend endpoint fail with an outcome chosen by the next key (1 timeout, 2 network, 3 http:500,
4 business, 5 malformed, 6 delay:2000; Tab picks another endpoint, Esc cancels). With --clock manual
too, F6 advances the clock by 1 s and F7 by 60 s (an SMS countdown, a timeout). With --record, the
failure or the countdown is in the recording, and its replay repeats it.
"""

# The demo's own words, in the host's locale (`initialize` answers it); everything else on screen
# (titles of the edit screen, cells, countdowns, failure messages) comes from the view-models.
STRINGS: Dict[str, Dict[str, str]] = {
    "zh-Hans": {
        "app": "vmhost 演示", "other": "English",
        "login": "登录", "products": "理财产品", "groups": "菜单分组",
        "passwordTab": "账号密码登录", "codeTab": "短信验证码登录",
        "username": "手机号", "password": "密码", "phone": "手机号", "code": "验证码",
        "mobileHint": "11 位手机号", "valid": "✓", "invalid": "格式不正确",
        "logIn": "登录", "loggingIn": "登录中…", "ready": "可以登录", "fillIn": "请填写各项",
        "loginHelp": "Tab 切换登录方式 · ↑/↓ 移动 · Enter 下一项 / 按下 · F2 English · Ctrl-C 退出",
        "loggedIn": "已登录", "loggedInAs": "已登录：{name}", "loggedOut": "已退出登录",
        "sessionEnded": "登录已失效，请重新登录", "codeSent": "验证码已发送，请查收短信",
        "languageSet": "已切换为中文",
        "productHeader": "第 {page} 页 · 共 {count} 条 · 还有更多：{more}",
        "yes": "是", "no": "否", "refreshing": "刷新中…", "loadingMore": "加载中…",
        "noProducts": "（暂无产品）", "refreshed": "已刷新", "loadedMore": "已加载更多",
        "productsHelp": "r 刷新 · m 加载更多 · c 取消 · ↑/↓ 移动 · g 菜单分组 · o 退出登录 · F2 English · q 退出",
        "Name": "名称", "Bank": "银行", "Profit": "年化收益", "Status": "状态", "Term": "期限",
        "Amount": "起购金额",
        "savedList": "（已保存的列表）", "savedListLoading": "（已保存的列表，刷新中…）",
        "retry": "按 {letter} 重试",
        "groupHeader": "{count} 个分组", "loading": "加载中…", "noGroups": "（还没有分组）",
        "dishes": "{count} 道菜", "deleted": "已删除 {name}", "saved": "已保存 {name}",
        "confirmDelete": "删除「{name}」（{count} 道菜）？y 删除 · 其他键取消",
        "confirmDeleteEmpty": "删除「{name}」？y 删除 · 其他键取消", "kept": "未删除 {name}",
        "groupsHelp": "n 新建 · e 重命名 · d 删除 · ↑/↓ 移动 · r 重新加载 · b 返回 · o 退出登录 · F2 English · q 退出",
        "name": "名称：", "canSave": "可以保存", "cannotSave": "不能保存", "saving": "保存中…",
        "editHelp": "输入名称 · Enter 保存 · Esc 取消",
        "failed": "{input}失败：{message}", "disabled": "{input}暂不可用：{reason}",
        "cancelled": "{input}已取消", "problem": "{input}：{message}",
        "in.refresh": "刷新", "in.loadMore": "加载更多", "in.cancel": "取消", "in.load": "加载",
        "in.create": "新建", "in.rename": "重命名", "in.delete": "删除", "in.save": "保存",
        "in.submit": "登录", "in.sendCode": "获取验证码", "in.logout": "退出登录",
        "in.name": "名称", "in.mode": "登录方式", "in.username": "手机号", "in.password": "密码",
        "in.phone": "手机号", "in.code": "验证码",
        "failKey": "F5 让下次调用失败", "clockKeys": "F6 时钟 +1 秒 · F7 +60 秒",
        "scriptQuestion": "让下次 {endpoint} 调用：",
        "scriptHelp": "1 超时 · 2 网络故障 · 3 http:500 · 4 业务错误 · 5 响应格式错误 · 6 延迟 2 秒"
                      " · Tab 换接口 · Esc 取消",
        "scripted": "下次 {endpoint} 调用：{outcome}", "scriptedMessage": "测试设定的失败",
        "advanced": "时钟 +{step} 秒，现在 {now} 秒",
    },
    "en": {
        "app": "vmhost demo", "other": "中文",
        "login": "Login", "products": "Products", "groups": "Menu groups",
        "passwordTab": "Account + password", "codeTab": "Phone + SMS code",
        "username": "Mobile", "password": "Password", "phone": "Mobile", "code": "SMS code",
        "mobileHint": "11-digit mobile number", "valid": "valid", "invalid": "invalid",
        "logIn": "Log in", "loggingIn": "logging in…", "ready": "ready", "fillIn": "fill in the fields",
        "loginHelp": "Tab switch mode · ↑/↓ move · Enter next / press · F2 中文 · Ctrl-C quit",
        "loggedIn": "logged in", "loggedInAs": "logged in as {name}", "loggedOut": "logged out",
        "sessionEnded": "the session has ended: log in again",
        "codeSent": "code sent: check your messages", "languageSet": "switched to English",
        "productHeader": "page {page} · {count} items · more: {more}",
        "yes": "yes", "no": "no", "refreshing": "refreshing…", "loadingMore": "loading more…",
        "noProducts": "(no products)", "refreshed": "refreshed", "loadedMore": "loaded more",
        "productsHelp": "r refresh · m load more · c cancel · ↑/↓ move · g menu groups · o log out · F2 中文 · q quit",
        "Name": "Name", "Bank": "Bank", "Profit": "Profit", "Status": "Status", "Term": "Term",
        "Amount": "Amount",
        "savedList": "(saved list)", "savedListLoading": "(saved list, refreshing…)",
        "retry": "press {letter} to retry",
        "groupHeader": "{count} groups", "loading": "loading…", "noGroups": "(no groups)",
        "dishes": "{count} dishes", "deleted": "deleted {name}", "saved": "saved {name}",
        "confirmDelete": "Delete {name} ({count} dishes)? y deletes · other keys keep it",
        "confirmDeleteEmpty": "Delete {name}? y deletes · other keys keep it", "kept": "kept {name}",
        "groupsHelp": "n new · e rename · d delete · ↑/↓ move · r reload · b back · o log out · F2 中文 · q quit",
        "name": "Name: ", "canSave": "can save", "cannotSave": "cannot save", "saving": "saving…",
        "editHelp": "type a name · Enter save · Esc cancel",
        "failed": "{input} failed: {message}", "disabled": "{input} is not available: {reason}",
        "cancelled": "{input} cancelled", "problem": "{input}: {message}",
        "in.refresh": "Refresh", "in.loadMore": "Load more", "in.cancel": "Cancel", "in.load": "Load",
        "in.create": "New group", "in.rename": "Rename", "in.delete": "Delete", "in.save": "Save",
        "in.submit": "Log in", "in.sendCode": "Get code", "in.logout": "Log out",
        "in.name": "Name", "in.mode": "Mode", "in.username": "Mobile", "in.password": "Password",
        "in.phone": "Mobile", "in.code": "SMS code",
        "failKey": "F5 fail a call", "clockKeys": "F6 clock +1 s · F7 +60 s",
        "scriptQuestion": "the next {endpoint} call:",
        "scriptHelp": "1 timeout · 2 network · 3 http:500 · 4 business · 5 malformed · 6 delay 2 s"
                      " · Tab other endpoint · Esc cancel",
        "scripted": "next {endpoint} call: {outcome}", "scriptedMessage": "scripted failure",
        "advanced": "clock +{step} s, now {now} s",
    },
}


# The tester's keys (--test-controls, protocol/SPEC.md §9): the endpoints `control.backend.script`
# takes (protocol/backend.md), and the outcomes F5 offers, by the key that picks each. A business
# failure's code and message are the demo's (the message in the screen's language).
ENDPOINTS = ["products", "auth.login", "auth.smsCode", "auth.loginCode", "groups.list",
             "groups.create", "groups.rename", "groups.delete"]
OUTCOMES = {"1": "timeout", "2": "network", "3": "http:500", "4": "business", "5": "malformed",
            "6": "delay:2000"}
BUSINESS_CODE = "E900"
# The steps of the manual clock, by key.
CLOCK_KEYS = {curses.KEY_F6: 1000, curses.KEY_F7: 60000}


class Controls:
    """Which test controls the host serves, read from the options the demo starts it with:
    `--test-controls` for the backend's script, and a manual clock besides for the clock."""

    def __init__(self, options: List[str]) -> None:
        self.script = "--test-controls" in options
        clock = "system"
        for index, option in enumerate(options):
            if option == "--clock" and index + 1 < len(options):
                clock = options[index + 1]
            elif option.startswith("--clock="):
                clock = option.split("=", 1)[1]
        self.clock = self.script and clock == "manual"


def language(locale_tag: Optional[str]) -> str:
    """The demo's strings for a locale tag the host accepted: English for `en…`, else Chinese."""
    return "en" if (locale_tag or "").lower().split("-")[0] == "en" else "zh-Hans"


def recording_of(options: List[str]) -> Optional[str]:
    """The file of ``--record FILE`` among the host options, if any."""
    found: Optional[str] = None
    for index, option in enumerate(options):
        if option == "--record" and index + 1 < len(options):
            found = options[index + 1]
        elif option.startswith("--record="):
            found = option.split("=", 1)[1]
    return found


def replay_hint(recorded: str) -> str:
    """How to replay the recording at *recorded*, naming the secrets it needs (never their values)."""
    try:
        names = Transcript.load(recorded).secret_names()
    except (OSError, ValueError):
        names = []
    given = " ".join(f"VMHOST_SECRET_{name.upper()}=…" for name in names)
    return (f"vmhost.demo: the session is recorded in {recorded}; replay it with\n"
            f"  {given + ' ' if given else ''}python3 -m vmhost.replay {recorded}\n"
            f"(add --offline to replay it with no backend, from the answers it recorded)\n")


def text_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def clip(text: str, width: int) -> str:
    out, used = [], 0
    for c in text:
        w = 2 if unicodedata.east_asian_width(c) in "WF" else 1
        if used + w > width:
            break
        out.append(c)
        used += w
    return "".join(out)


def pad(text: str, width: int) -> str:
    text = clip(text, width)
    return text + " " * (width - text_width(text))


KEY_SEPARATOR = " · "


def wrap_keys(help: str, width: int) -> List[str]:
    """A help line (keys separated by " · ") as lines of at most *width* columns, broken between
    keys; a key wider than the line is clipped on a line of its own."""
    lines: List[str] = []
    line = ""
    for key in help.split(KEY_SEPARATOR):
        candidate = f"{line}{KEY_SEPARATOR}{key}" if line else key
        if line and text_width(candidate) > width:
            lines.append(line)
            line = key
        else:
            line = candidate
    lines.append(line)
    return [clip(line, width) for line in lines]


class Screen:
    title_key = ""
    help_key = ""
    # A question the screen waits to have answered (the next key), shown on the status line.
    question = ""
    # The backend endpoint F5 offers first on this screen (the one its main command calls).
    endpoint = "products"

    def __init__(self, app: "App") -> None:
        self.app = app

    @property
    def title(self) -> str:
        return self.app.t(self.title_key)

    @property
    def help(self) -> str:
        return self.app.t(self.help_key)

    def draw(self, y: int) -> None:
        raise NotImplementedError

    def key(self, key: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def again(self) -> "Screen":
        """The same screen on new view-models (after a switch of language), what was typed kept."""
        return self


class App:
    def __init__(self, host: Host, stdscr: Any, locale_tag: Optional[str] = None,
                 controls: Optional[Controls] = None) -> None:
        self.host = host
        self.controls = controls or Controls([])
        # While F5 asks for an outcome: the index in ENDPOINTS of the endpoint it will fail.
        self.scripting: Optional[int] = None
        self.stdscr = stdscr
        self.locale = language(locale_tag)
        self.session: Optional[ViewModel] = None
        # Set while a logout the user asked for runs: the session's end is then no surprise.
        self.logging_out = False
        self.screens: List[Screen] = []
        self.events: "queue.Queue[Tuple[ViewModel, Callable[[Any], None], Any]]" = queue.Queue()
        self.pending: List[Tuple[PendingCommand, ViewModel, str,
                                 Optional[Callable[[Any], None]], bool]] = []
        # While an event or a command's end is handled: the screen of its view-model.
        self.origin: Optional[object] = None
        self.status = ""
        self.status_error = False
        # The screen the status line speaks of: it is shown only while that screen is on top.
        self.status_screen: Optional[object] = None
        self.running = True
        self.tick = 0
        self.colors: Dict[str, int] = {}
        if curses.has_colors():
            try:
                curses.start_color()
                curses.use_default_colors()
                for number, (name, colour) in enumerate(
                        [("error", curses.COLOR_RED), ("ok", curses.COLOR_GREEN),
                         ("accent", curses.COLOR_BLUE)], start=1):
                    curses.init_pair(number, colour, -1)
                    self.colors[name] = curses.color_pair(number)
            except curses.error:
                pass

    # words -----------------------------------------------------------------------------------
    def t(self, key: str, **values: Any) -> str:
        """The demo's text *key* in the current language, with *values* put in."""
        text = STRINGS[self.locale].get(key, key)
        return text.format(**values) if values else text

    def input_label(self, input: str) -> str:
        return STRINGS[self.locale].get(f"in.{input}", input)

    def failed(self, input: str, message: Any) -> str:
        return self.t("failed", input=self.input_label(input), message=message)

    # drawing ---------------------------------------------------------------------------------
    def attr(self, name: str) -> int:
        return self.colors.get(name, 0)

    def put(self, y: int, x: int, text: str, attr: int = 0) -> None:
        height, width = self.stdscr.getmaxyx()
        if y < 0 or y >= height or x >= width - 1:
            return
        try:
            self.stdscr.addstr(y, x, clip(text, width - 1 - x), attr)
        except curses.error:
            pass

    def spinner(self) -> str:
        return SPINNER[(self.tick // 2) % len(SPINNER)]

    def help_lines(self) -> List[str]:
        """The top screen's keys, wrapped to the terminal's width between keys (never inside
        one), so that every key, `q quit` included, shows on an 80-column terminal."""
        _, width = self.stdscr.getmaxyx()
        if self.scripting is not None:
            return wrap_keys(self.t("scriptHelp"), width - 1)
        help = self.screens[-1].help
        if self.controls.script:
            help += KEY_SEPARATOR + self.t("failKey")
        if self.controls.clock:
            help += KEY_SEPARATOR + self.t("clockKeys")
        return wrap_keys(help, width - 1)

    def status_row(self) -> int:
        """The row of the status line: above the help lines. A screen draws above it."""
        height, _ = self.stdscr.getmaxyx()
        return int(height) - len(self.help_lines()) - 1

    def draw(self) -> None:
        self.stdscr.erase()
        height, width = self.stdscr.getmaxyx()
        screen = self.screens[-1]
        self.put(0, 0, pad(f" {self.t('app')} — {screen.title}", width - 1), curses.A_REVERSE)
        screen.draw(2)
        if self.scripting is not None:
            self.put(self.status_row(), 0, self.t("scriptQuestion", endpoint=ENDPOINTS[self.scripting]),
                     self.attr("accent") | curses.A_BOLD)
        elif screen.question:
            self.put(self.status_row(), 0, screen.question, self.attr("error") | curses.A_BOLD)
        elif self.status_screen is screen:
            self.put(self.status_row(), 0, self.status,
                     self.attr("error") if self.status_error else self.attr("ok"))
        help_lines = self.help_lines()
        for index, line in enumerate(help_lines):
            self.put(height - len(help_lines) + index, 0, line, curses.A_DIM)
        self.stdscr.refresh()

    # plumbing --------------------------------------------------------------------------------
    def say(self, text: str, error: bool = False, screen: Optional[object] = None) -> None:
        """Shows *text* on the status line of the screen it is about (the one whose view-model
        spoke, else the top one) until the next input or a change of screen."""
        self.status, self.status_error = text, error
        self.status_screen = screen or self.origin or (self.screens[-1] if self.screens else None)

    def screen_of(self, vm: ViewModel) -> object:
        """The screen showing *vm*; a closed one's view-model speaks of no screen on view."""
        return next((screen for screen in self.screens if getattr(screen, "vm", None) is vm), GONE)

    def clear_status(self) -> None:
        self.status, self.status_error, self.status_screen = "", False, None

    def listen(self, vm: ViewModel, event: str, handler: Callable[[Any], None]) -> None:
        vm.on(event, lambda value: self.events.put((vm, handler, value)))

    def listen_errors(self, vm: ViewModel) -> None:
        """A failure of *vm*'s work, also one the host started by itself (a reload after a
        save), on the status line as the user reads it."""
        self.listen(vm, "error", lambda e: self.say(
            self.failed(str(e.get("input")), e.get("message")), True))

    def run_command(self, vm: ViewModel, input: str, value: Any = None,
                    done: Optional[Callable[[Any], None]] = None,
                    report_failure: bool = True) -> PendingCommand:
        self.clear_status()
        pending = vm.send_async(input) if value is None else vm.send_async(input, value)
        self.pending.append((pending, vm, input, done, report_failure))
        return pending

    def send_value(self, vm: ViewModel, input: str, value: Any = None) -> None:
        self.clear_status()
        try:
            if value is None:
                vm.send(input, timeout=10)
            else:
                vm.send(input, value, timeout=10)
        except (RPCError, TimeoutError) as error:
            self.report(input, error)

    def report(self, input: str, error: BaseException) -> None:
        label = self.input_label(input)
        if isinstance(error, CommandFailed):
            self.say(self.failed(input, error.user_message), True)
        elif isinstance(error, InputDisabled):
            # The host's reason, in the words it sends it (the reference app's are English,
            # for developers), after the demo's own words: in both languages, never dropped.
            self.say(self.t("disabled", input=label, reason=error.reason), True)
        elif isinstance(error, RequestCancelled):
            self.say(self.t("cancelled", input=label))
        else:
            self.say(self.t("problem", input=label, message=error), True)

    def poll(self) -> None:
        while True:
            try:
                vm, handler, value = self.events.get_nowait()
            except queue.Empty:
                break
            self.origin = self.screen_of(vm)
            try:
                handler(value)
            finally:
                self.origin = None
        still = []
        for pending, vm, input, done, report_failure in self.pending:
            if not pending.done():
                still.append((pending, vm, input, done, report_failure))
                continue
            self.origin = self.screen_of(vm)
            try:
                result = pending.result(0)
                if done is not None:
                    done(result)
            except CommandFailed as error:
                if report_failure:
                    self.report(input, error)
            except (RPCError, TimeoutError) as error:
                self.report(input, error)
            finally:
                self.origin = None
        self.pending = still

    def push(self, screen: Screen) -> None:
        self.screens.append(screen)
        self.clear_status()

    def pop(self) -> None:
        """Closes the top screen; what it said last (e.g. "saved …") stays, on the one below."""
        screen = self.screens.pop()
        if self.status_screen is screen and self.screens:
            self.status_screen = self.screens[-1]
        else:
            self.clear_status()
        screen.close()
        if not self.screens:
            self.running = False

    def replace(self, screen: Screen, status: str = "") -> None:
        old = self.screens.pop()
        old.close()
        self.screens.append(screen)
        self.clear_status()
        if status:
            self.say(status, screen=screen)

    def to_login(self, status: str) -> None:
        """Closes every screen and opens the login: the session has ended."""
        while self.screens:
            self.screens.pop().close()
        self.push(LoginScreen(self))
        self.say(status, screen=self.screens[-1])

    def log_out(self) -> None:
        """Ends the session; the session's `navigate {route: "Login"}` then opens the login."""
        if self.session is None:
            return
        self.logging_out = True
        self.run_command(self.session, "logout")

    def on_session_end(self, _: Any) -> None:
        status = self.t("loggedOut") if self.logging_out else self.t("sessionEnded")
        self.logging_out = False
        self.to_login(status)

    def switch_language(self) -> None:
        """Switches between Chinese and English: `initialize {locale}` applies to view-models
        created afterwards, so every screen on the stack is made again on new ones."""
        other = "en" if self.locale == "zh-Hans" else "zh-Hans"
        try:
            self.host.initialize(locale=other)
        except RPCError as error:
            self.say(str(error), True)
            return
        self.locale = other
        old, self.screens = self.screens, []
        for screen in old:
            screen.close()
        for screen in old:
            self.screens.append(screen.again())
        self.clear_status()
        self.say(self.t("languageSet"))

    # test controls -----------------------------------------------------------------------------
    def control(self, method: str, params: Dict[str, Any]) -> Any:
        """Calls a test control; a refusal shows on the status line (and answers None)."""
        try:
            return self.host.request(method, params, timeout=10)
        except (RPCError, TimeoutError) as error:
            self.say(str(error), True)
            return None

    def tester_key(self, key: Any) -> bool:
        """Handles a tester's key (F5, F6, F7, and the answer to F5's question); False when *key*
        is none of them, or the host serves no test controls."""
        if self.scripting is not None:
            self.answer_script(key)
            return True
        if key == curses.KEY_F5 and self.controls.script:
            endpoint = self.screens[-1].endpoint
            self.scripting = ENDPOINTS.index(endpoint) if endpoint in ENDPOINTS else 0
            return True
        if key in CLOCK_KEYS and self.controls.clock:
            step = CLOCK_KEYS[key]
            answer = self.control("control.clock.advance", {"ms": step})
            if isinstance(answer, dict):
                self.say(self.t("advanced", step=step // 1000, now=int(answer.get("now", 0)) // 1000))
            return True
        return False

    def answer_script(self, key: Any) -> None:
        """The key after F5: an outcome queued for the next call of the endpoint asked about,
        Tab the next endpoint, anything else cancels."""
        assert self.scripting is not None
        endpoint = ENDPOINTS[self.scripting]
        if key == "\t":
            self.scripting = (self.scripting + 1) % len(ENDPOINTS)
            return
        self.scripting = None
        outcome = OUTCOMES.get(key) if isinstance(key, str) else None
        if outcome is None:
            return
        if outcome == "business":
            outcome = f"business:{BUSINESS_CODE}:{self.t('scriptedMessage')}"
        if self.control("control.backend.script", {"endpoint": endpoint, "outcomes": [outcome]}) is not None:
            self.say(self.t("scripted", endpoint=endpoint, outcome=outcome))

    def loop(self) -> None:
        self.stdscr.timeout(50)
        while self.running:
            self.poll()
            if not self.running:
                break
            self.draw()
            self.tick += 1
            try:
                key = self.stdscr.get_wch()
            except curses.error:
                continue
            if key == curses.KEY_RESIZE:
                continue
            screen = self.screens[-1]
            if not screen.question and self.tester_key(key):
                continue
            if key == curses.KEY_F2 and getattr(screen, "switches_language", False):
                self.switch_language()
                continue
            screen.key(key)


def is_enter(key: Any) -> bool:
    return key in ("\n", "\r", curses.KEY_ENTER)


def is_backspace(key: Any) -> bool:
    return key in ("\x7f", "\b", curses.KEY_BACKSPACE)


def printable(key: Any) -> bool:
    return isinstance(key, str) and len(key) == 1 and key.isprintable()


class LoginScreen(Screen):
    title_key = "login"
    help_key = "loginHelp"
    switches_language = True
    FIELDS = ("username", "password", "phone", "code")

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("Login")
        self.vm.subscribe()
        self.text: Dict[str, str] = {field: "" for field in self.FIELDS}
        # The fields typed in: only those say whether they are valid.
        self.touched: Set[str] = set()
        self.focus = 0
        app.listen(self.vm, "navigate", self.on_navigate)
        app.listen(self.vm, "error", self.on_error)

    @property
    def endpoint(self) -> str:  # type: ignore[override]
        return "auth.login" if self.vm["mode"] == "password" else "auth.smsCode"

    def on_error(self, error: Any) -> None:
        """A failed login shows as failureMessage, under the button; a failed sendCode here."""
        if isinstance(error, dict) and error.get("input") == "sendCode":
            self.app.say(self.app.failed("sendCode", error.get("message")), True)

    def again(self) -> "Screen":
        screen = LoginScreen(self.app)
        if self.vm["mode"] == "code":
            self.app.send_value(screen.vm, "mode", "code")
        for field, text in self.text.items():
            if text:
                self.app.send_value(screen.vm, field, text)
        screen.text, screen.touched, screen.focus = dict(self.text), set(self.touched), self.focus
        return screen

    def rows(self) -> List[str]:
        rows: List[str] = []
        if not self.vm["hidePasswordContainer"]:
            rows += ["username", "password"]
        if not self.vm["hideCodeContainer"]:
            rows += ["phone", "code", "sendCode"]
        return rows + ["submit"]

    def on_navigate(self, value: Any) -> None:
        if isinstance(value, dict) and value.get("route") == "ProductList":
            self.app.replace(ProductListScreen(self.app), status=self.app.t("loggedIn"))

    def close(self) -> None:
        try:
            self.vm.dispose()
        except RPCError:
            pass

    def draw(self, y: int) -> None:
        app, vm = self.app, self.vm
        tabs = [("password", app.t("passwordTab"), vm["passwordTabColor"]),
                ("code", app.t("codeTab"), vm["codeTabColor"])]
        x = 2
        for _, label, colour in tabs:
            active = colour == ACCENT
            text = f"[ {label} ]" if active else f"  {label}  "
            app.put(y, x, text, (app.attr("accent") | curses.A_BOLD) if active else curses.A_DIM)
            x += text_width(text) + 2
        rows = self.rows()
        self.focus = min(self.focus, len(rows) - 1)
        line = y + 2
        for index, row in enumerate(rows):
            mark = "> " if index == self.focus else "  "
            focused = curses.A_BOLD if index == self.focus else 0
            if row in self.text:
                shown = self.text[row]
                if row in ("password", "code"):
                    shown = "*" * len(shown)
                hint = "" if shown else (app.t("mobileHint") if row in ("username", "phone") else "")
                app.put(line, 2, f"{mark}{pad(app.t(row), 10)} {pad(shown or hint, 24)}",
                        focused | (curses.A_DIM if hint else 0))
                if row in self.touched:
                    valid = vm[f"{row}Valid"]
                    app.put(line, 40, app.t("valid") if valid else app.t("invalid"),
                            app.attr("ok") if valid else app.attr("error"))
            elif row == "sendCode":
                enabled = vm["canSendCode"]
                app.put(line, 2, f"{mark}[ {vm['sendCodeTitle']} ]",
                        focused | (0 if enabled else curses.A_DIM))
            else:
                enabled = vm["canSubmit"]
                busy = f" {app.spinner()} {app.t('loggingIn')}" if vm["isSubmitting"] else ""
                app.put(line, 2, f"{mark}[ {app.t('logIn')} ]{busy}",
                        focused | (0 if enabled else curses.A_DIM))
                app.put(line, 40, app.t("ready") if enabled else app.t("fillIn"), curses.A_DIM)
            line += 2
        failure = vm["failureMessage"]
        if failure:
            app.put(line + 1, 2, app.failed("submit", failure), app.attr("error") | curses.A_BOLD)

    def key(self, key: Any) -> None:
        rows = self.rows()
        row = rows[min(self.focus, len(rows) - 1)]
        if key == "\t":
            self.focus = 0
            self.app.send_value(self.vm, "mode",
                                "code" if self.vm["mode"] == "password" else "password")
        elif key == curses.KEY_UP:
            self.focus = max(0, self.focus - 1)
        elif key == curses.KEY_DOWN:
            self.focus = min(len(rows) - 1, self.focus + 1)
        elif is_enter(key):
            if row == "sendCode":
                self.app.run_command(self.vm, "sendCode",
                                     done=lambda _: self.app.say(self.app.t("codeSent")))
            elif row == "submit" or row in ("password", "code"):
                self.app.run_command(self.vm, "submit", report_failure=False)
            else:
                self.focus += 1
        elif row in self.text and (is_backspace(key) or printable(key)):
            self.text[row] = self.text[row][:-1] if is_backspace(key) else self.text[row] + key
            self.touched.add(row)
            self.app.send_value(self.vm, row, self.text[row])


class ProductListScreen(Screen):
    title_key = "products"
    help_key = "productsHelp"
    switches_language = True

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("ProductList")
        # List changes as splices (SPEC "List diffs"): a load more sends the page it added, not
        # the whole list again, and a recording of the session reads the same way.
        self.vm.subscribe(diff=True)
        self.selected = 0
        app.listen_errors(self.vm)
        # The first load says nothing when it ends: the screen shows the list.
        app.run_command(self.vm, "refresh")

    def again(self) -> "Screen":
        screen = ProductListScreen(self.app)
        screen.selected = self.selected
        return screen

    def close(self) -> None:
        try:
            self.vm.dispose()
        except RPCError:
            pass

    def draw(self, y: int) -> None:
        app, vm = self.app, self.vm
        items = vm["items"] or []
        busy = ""
        if vm["isRefreshing"]:
            busy = f"{app.spinner()} {app.t('refreshing')}"
        elif vm["isLoadingMore"]:
            busy = f"{app.spinner()} {app.t('loadingMore')}"
        more = app.t("yes") if vm["hasMore"] else app.t("no")
        header = app.t("productHeader", page=vm["page"], count=len(items), more=more)
        app.put(y, 2, f"{header}  {busy}{stale_mark(app, vm, vm['isRefreshing'])}", curses.A_BOLD)
        if retry_row(app, y, vm, "r"):
            y += 1
        if vm["loadState"] == "empty":
            app.put(y + 2, 4, app.t("noProducts"), curses.A_DIM)
            return
        app.put(y + 1, 2, "  " + "  ".join(pad(app.t(h), w) for h, w in COLUMNS), curses.A_UNDERLINE)
        # The rows between the column titles and the status line.
        room = max(1, app.status_row() - (y + 2))
        self.selected = max(0, min(self.selected, len(items) - 1))
        top = max(0, self.selected - room + 1)
        for row, cell in enumerate(items[top:top + room]):
            index = top + row
            mark = "> " if index == self.selected else "  "
            text = "  ".join(pad(str(cell.get(key, "")), w) for key, (_, w) in zip(KEYS, COLUMNS))
            # Styled by the status code, never by the display text (which follows the locale).
            style = curses.A_DIM if cell.get("saleStatusCode") == "soldOut" else 0
            app.put(y + 2 + row, 2, mark + text, (curses.A_BOLD if index == self.selected else 0) | style)

    def key(self, key: Any) -> None:
        app = self.app
        if key == "r":
            app.run_command(self.vm, "refresh", done=lambda _: app.say(app.t("refreshed")))
        elif key == "m":
            app.run_command(self.vm, "loadMore", done=lambda _: app.say(app.t("loadedMore")))
        elif key == "c":
            app.send_value(self.vm, "cancel")
        elif key == "g":
            app.push(MenuGroupsScreen(app))
        elif key == "o":
            app.log_out()
        elif key == "q":
            app.running = False
        elif key == curses.KEY_UP:
            self.selected -= 1
        elif key == curses.KEY_DOWN:
            self.selected += 1


def stale_mark(app: "App", vm: Any, loading: bool) -> str:
    """After a list's header: whether the rows are the ones saved by an earlier run (``isStale``,
    with ``--state-dir``), shown at once while the first load of this run is under way."""
    if not vm["isStale"]:
        return ""
    return "  " + (app.t("savedListLoading") if loading else app.t("savedList"))


def retry_row(app: "App", y: int, vm: Any, key: str) -> bool:
    """Under a list's header: the last load's failure, as the user reads it, and how to retry.

    Drawn from the ``loadState`` and ``lastError`` properties, so it is right however late the
    screen subscribed and whatever the status line says now."""
    if vm["loadState"] != "failed":
        return False
    error = vm["lastError"] or {}
    app.put(y + 1, 2, f"⚠ {error.get('message', '')}  · {app.t('retry', letter=key)}",
            app.attr("error") | curses.A_BOLD)
    return True


# Widths in terminal columns (a Chinese character takes two), chosen so that a row, its mark and
# margin fit an 80-column terminal (74 columns) in both languages: "年化收益" and "起购金额" are 8.
COLUMNS = [("Name", 18), ("Bank", 9), ("Profit", 8), ("Status", 9), ("Term", 8), ("Amount", 8)]
KEYS = ["name", "bank", "profit", "saleStatus", "term", "amount"]
# The menu whose groups the demo shows (the embedded backend's, protocol/backend.md).
MENU = "m1"


class MenuGroupsScreen(Screen):
    title_key = "groups"
    help_key = "groupsHelp"
    endpoint = "groups.list"
    switches_language = True

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("MenuSubGroup", {"menuUid": MENU})
        self.vm.subscribe(diff=True)  # the groups as splices, as the products
        self.selected = 0
        # The group `d` asked about, until the next key answers.
        self.deleting: Optional[Dict[str, Any]] = None
        app.listen(self.vm, "navigate", self.on_navigate)
        app.listen_errors(self.vm)
        app.run_command(self.vm, "load")

    def again(self) -> "Screen":
        screen = MenuGroupsScreen(self.app)
        screen.selected = self.selected
        return screen

    def on_navigate(self, value: Any) -> None:
        if isinstance(value, dict) and value.get("route") == "MenuEditGroup":
            self.app.push(EditGroupScreen(self.app, value.get("args") or {}))

    def close(self) -> None:
        try:
            self.vm.dispose()
        except RPCError:
            pass

    def current(self) -> Optional[Dict[str, Any]]:
        groups = self.vm["groups"] or []
        if not groups:
            return None
        self.selected = max(0, min(self.selected, len(groups) - 1))
        return groups[self.selected]  # type: ignore[no-any-return]

    def draw(self, y: int) -> None:
        app, vm = self.app, self.vm
        groups = vm["groups"] or []
        loading = f"{app.spinner()} {app.t('loading')}" if vm["loading"] else ""
        app.put(y, 2, f"{app.t('groupHeader', count=len(groups))}  {loading}"
                      f"{stale_mark(app, vm, vm['loading'])}", curses.A_BOLD)
        if retry_row(app, y, vm, "r"):
            y += 1
        if vm["loadState"] == "empty":
            app.put(y + 2, 4, app.t("noGroups"), curses.A_DIM)
        self.current()
        for index, group in enumerate(groups):
            mark = "> " if index == self.selected else "  "
            app.put(y + 2 + index, 2,
                    f"{mark}{pad(str(group.get('name')), 24)} "
                    f"{app.t('dishes', count=group.get('dishCount'))}",
                    curses.A_BOLD if index == self.selected else 0)

    def answer(self, key: Any) -> None:
        """The key after `d`: `y` deletes the group asked about, any other key keeps it."""
        app, group = self.app, self.deleting
        self.deleting, self.question = None, ""
        if group is None:
            return
        name = group.get("name")
        if key in ("y", "Y"):
            app.run_command(self.vm, "delete", {"groupId": group["id"]},
                            done=lambda _: app.say(app.t("deleted", name=name)))
        else:
            app.say(app.t("kept", name=name))

    def key(self, key: Any) -> None:
        app = self.app
        if self.deleting is not None:
            self.answer(key)
            return
        group = self.current()
        if key == "n":
            app.send_value(self.vm, "create")
        elif key == "e" and group:
            app.send_value(self.vm, "rename", {"groupId": group["id"]})
        elif key == "d" and group:
            # Deleting a group deletes its dishes: asked first, answered by the next key.
            self.deleting = group
            count = group.get("dishCount") or 0
            self.question = (app.t("confirmDelete", name=group.get("name"), count=count) if count
                             else app.t("confirmDeleteEmpty", name=group.get("name")))
        elif key == "r":
            app.run_command(self.vm, "load")
        elif key == "b":
            app.pop()
        elif key == "o":
            app.log_out()
        elif key == "q":
            app.running = False
        elif key == curses.KEY_UP:
            self.selected -= 1
        elif key == curses.KEY_DOWN:
            self.selected += 1


class EditGroupScreen(Screen):
    help_key = "editHelp"

    def __init__(self, app: App, args: Dict[str, Any]) -> None:
        super().__init__(app)
        self.vm = app.host.create("MenuEditGroup", args)
        self.vm.subscribe()
        self.text = str(args.get("name") or "")
        self.closed = False
        self.endpoint = "groups.rename" if args.get("groupId") else "groups.create"
        app.listen(self.vm, "saved", lambda v: app.say(app.t("saved", name=v["group"]["name"])))
        app.listen(self.vm, "dismiss", self.on_dismiss)
        app.listen_errors(self.vm)

    @property
    def title(self) -> str:
        return str(self.vm["title"])

    def on_dismiss(self, _: Any) -> None:
        if not self.closed and self.app.screens and self.app.screens[-1] is self:
            self.app.pop()

    def close(self) -> None:
        self.closed = True
        try:
            self.vm.dispose()
        except RPCError:
            pass

    def draw(self, y: int) -> None:
        app, vm = self.app, self.vm
        app.put(y, 2, str(vm["title"]), curses.A_BOLD)
        app.put(y + 2, 2, f"{app.t('name')}[{pad(str(vm['name']), 24)}]")
        ok = vm["canSave"]
        app.put(y + 2, 36, app.t("canSave") if ok else app.t("cannotSave"),
                app.attr("ok") if ok else app.attr("error"))
        if vm["isSaving"]:
            app.put(y + 4, 2, f"{app.spinner()} {app.t('saving')}")

    def key(self, key: Any) -> None:
        if is_enter(key):
            self.app.run_command(self.vm, "save")
        elif key == "\x1b":
            self.app.send_value(self.vm, "cancel")
        elif is_backspace(key) or printable(key):
            self.text = self.text[:-1] if is_backspace(key) else self.text + key
            self.app.send_value(self.vm, "name", self.text)


def parse(argv: List[str]) -> Tuple[Optional[str], Optional[str], List[str]]:
    locale_name: Optional[str] = None
    binary: Optional[str] = None
    rest: List[str] = []
    args = iter(argv)
    for arg in args:
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        if arg == "--locale":
            locale_name = next(args, None)
        elif arg.startswith("--locale="):
            locale_name = arg.split("=", 1)[1]
        elif arg == "--binary":
            binary = next(args, None)
        else:
            rest.append(arg)
    if "--clock" not in rest and not any(a.startswith("--clock=") for a in rest):
        rest = ["--clock", "system"] + rest
    return locale_name, binary, rest


NO_TERMINAL = """vmhost.demo: needs a terminal (stdin and stdout are not one).
Through a pipe, clients/shell/tour.sh shows the same screens (scripts/demo.sh runs it there).
"""


def main(argv: Optional[List[str]] = None) -> int:
    locale_name, binary, options = parse(list(sys.argv[1:] if argv is None else argv))
    locale.setlocale(locale.LC_ALL, "")
    os.environ.setdefault("ESCDELAY", "25")
    # The host's stderr is kept, not shown (it would draw over the screen); when the host ends
    # early, e.g. on a bad option, HostExited carries its message and status.
    try:
        host = Host.spawn(*options, binary=binary, stderr=KEEP_STDERR)
    except OSError as error:  # no binary, or one that cannot run
        sys.stderr.write(f"vmhost.demo: {error}\n")
        return 1
    try:
        answer = host.initialize(**({"locale": locale_name} if locale_name else {}))
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            sys.stderr.write(NO_TERMINAL)
            return 2

        def run(stdscr: Any) -> None:
            try:
                curses.curs_set(0)
            except curses.error:
                pass
            app = App(host, stdscr, (answer or {}).get("locale") or locale_name, Controls(options))
            # The app's one session: with --state-dir it survives a restart, so the demo opens
            # on the products when it is logged in, and goes back to the login when it ends
            # (a logout, or the server refusing the token).
            session = host.create("Session")
            session.subscribe()
            app.session = session
            if session["isLoggedIn"]:
                app.push(ProductListScreen(app))
                app.say(app.t("loggedInAs", name=session["username"]))
            else:
                app.push(LoginScreen(app))
            app.listen(session, "navigate", app.on_session_end)
            app.loop()

        try:
            curses.wrapper(run)
        except KeyboardInterrupt:
            pass
        except curses.error as error:
            sys.stderr.write(f"vmhost.demo: the terminal cannot be used: {error}\n")
            return 2
    except HostExited as error:
        sys.stderr.write(f"vmhost.demo: {error}\n")
        status = host.close()
        return status if status else 1
    except RPCError as error:
        sys.stderr.write(f"vmhost.demo: {error}\n")
        host.close()
        return 1
    finally:
        host.close()
        recorded = recording_of(options)
        if recorded and os.path.exists(recorded):
            sys.stderr.write(replay_hint(recorded))
    return 0
