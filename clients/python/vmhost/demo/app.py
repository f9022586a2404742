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
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import (KEEP_STDERR, CommandFailed, Host, HostExited, InputDisabled, RequestCancelled,
               RPCError, ViewModel)
from ..host import PendingCommand

SPINNER = "|/-\\"
GONE = object()  # the origin of what a closed screen's view-model says
ACCENT = "#1E88E5"
USAGE = """usage: python3 -m vmhost.demo [--locale zh-Hans|en] [--binary PATH] [host options…]

Host options pass through to vmhost (default: --clock system, the embedded backend),
e.g. --backend http://127.0.0.1:8080 or --timeout-ms 5000. With --record FILE the host writes
the session to FILE as a transcript: replay it with python3 -m vmhost.replay FILE.
"""


def recording_of(options: List[str]) -> Optional[str]:
    """The file of ``--record FILE`` among the host options, if any."""
    found: Optional[str] = None
    for index, option in enumerate(options):
        if option == "--record" and index + 1 < len(options):
            found = options[index + 1]
        elif option.startswith("--record="):
            found = option.split("=", 1)[1]
    return found


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


class Screen:
    title = ""
    help = ""

    def __init__(self, app: "App") -> None:
        self.app = app

    def draw(self, y: int) -> None:
        raise NotImplementedError

    def key(self, key: Any) -> None:
        pass

    def close(self) -> None:
        pass


class App:
    def __init__(self, host: Host, stdscr: Any) -> None:
        self.host = host
        self.stdscr = stdscr
        self.screens: List[Screen] = []
        self.events: "queue.Queue[Tuple[ViewModel, Callable[[Any], None], Any]]" = queue.Queue()
        self.pending: List[Tuple[PendingCommand, ViewModel, str,
                                 Optional[Callable[[Any], None]]]] = []
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

    def draw(self) -> None:
        self.stdscr.erase()
        height, width = self.stdscr.getmaxyx()
        screen = self.screens[-1]
        self.put(0, 0, pad(f" vmhost demo — {screen.title}", width - 1), curses.A_REVERSE)
        screen.draw(2)
        if self.status_screen is screen:
            self.put(height - 2, 0, self.status,
                     self.attr("error") if self.status_error else self.attr("ok"))
        self.put(height - 1, 0, screen.help, curses.A_DIM)
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

    def run_command(self, vm: ViewModel, input: str, value: Any = None,
                    done: Optional[Callable[[Any], None]] = None) -> PendingCommand:
        self.clear_status()
        pending = vm.send_async(input) if value is None else vm.send_async(input, value)
        self.pending.append((pending, vm, input, done))
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
        if isinstance(error, CommandFailed):
            self.say(f"{input} failed: {error.user_message}", True)
        elif isinstance(error, InputDisabled):
            self.say(f"{input} is disabled: {error.reason}", True)
        elif isinstance(error, RequestCancelled):
            self.say(f"{input} cancelled")
        else:
            self.say(f"{input}: {error}", True)

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
        for pending, vm, input, done in self.pending:
            if not pending.done():
                still.append((pending, vm, input, done))
                continue
            self.origin = self.screen_of(vm)
            try:
                result = pending.result(0)
                if done is not None:
                    done(result)
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
            self.screens[-1].key(key)


def is_enter(key: Any) -> bool:
    return key in ("\n", "\r", curses.KEY_ENTER)


def is_backspace(key: Any) -> bool:
    return key in ("\x7f", "\b", curses.KEY_BACKSPACE)


def printable(key: Any) -> bool:
    return isinstance(key, str) and len(key) == 1 and key.isprintable()


class LoginScreen(Screen):
    title = "Login"
    help = "Tab switch mode · ↑/↓ move · Enter next / press · Ctrl-C quit"

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("Login")
        self.vm.subscribe()
        self.text: Dict[str, str] = {"username": "", "password": "", "phone": "", "code": ""}
        self.focus = 0
        app.listen(self.vm, "navigate", self.on_navigate)
        app.listen(self.vm, "error", lambda e: app.say(f"{e.get('input')}: {e.get('message')}",
                                                        True))

    def rows(self) -> List[str]:
        rows: List[str] = []
        if not self.vm["hidePasswordContainer"]:
            rows += ["username", "password"]
        if not self.vm["hideCodeContainer"]:
            rows += ["phone", "code", "sendCode"]
        return rows + ["submit"]

    def on_navigate(self, value: Any) -> None:
        if isinstance(value, dict) and value.get("route") == "ProductList":
            self.app.replace(ProductListScreen(self.app), status="logged in")

    def close(self) -> None:
        try:
            self.vm.dispose()
        except RPCError:
            pass

    def draw(self, y: int) -> None:
        app, vm = self.app, self.vm
        tabs = [("password", "Account + password", vm["passwordTabColor"]),
                ("code", "Phone + SMS code", vm["codeTabColor"])]
        x = 2
        for _, label, colour in tabs:
            active = colour == ACCENT
            text = f"[ {label} ]" if active else f"  {label}  "
            app.put(y, x, text, (app.attr("accent") | curses.A_BOLD) if active else curses.A_DIM)
            x += text_width(text) + 2
        app.put(y + 1, 2, f"mode: {vm['mode']}", curses.A_DIM)
        rows = self.rows()
        self.focus = min(self.focus, len(rows) - 1)
        labels = {"username": "Mobile", "password": "Password", "phone": "Mobile",
                  "code": "SMS code"}
        line = y + 3
        for index, row in enumerate(rows):
            mark = "> " if index == self.focus else "  "
            focused = curses.A_BOLD if index == self.focus else 0
            if row in labels:
                shown = self.text[row]
                if row in ("password", "code"):
                    shown = "*" * len(shown)
                valid = vm[f"{row}Valid"]
                hint = "" if shown else ("11-digit mobile number" if row in ("username", "phone")
                                         else "")
                app.put(line, 2, f"{mark}{labels[row]:<9} {pad(shown or hint, 24)}",
                        focused | (curses.A_DIM if hint else 0))
                app.put(line, 40, "valid" if valid else "invalid",
                        app.attr("ok") if valid else app.attr("error"))
            elif row == "sendCode":
                enabled = vm["canSendCode"]
                app.put(line, 2, f"{mark}[ {vm['sendCodeTitle']} ]",
                        focused | (0 if enabled else curses.A_DIM))
                app.put(line, 40, f"countdown: {vm['countdown']}", curses.A_DIM)
            else:
                enabled = vm["canSubmit"]
                busy = f" {app.spinner()} logging in…" if vm["isSubmitting"] else ""
                app.put(line, 2, f"{mark}[ Log in ]{busy}", focused | (0 if enabled else curses.A_DIM))
                app.put(line, 40, "ready" if enabled else "fill in the fields", curses.A_DIM)
            line += 2
        failure = vm["failureMessage"]
        if failure:
            app.put(line + 1, 2, f"Login failed: {failure}", app.attr("error") | curses.A_BOLD)

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
            if row == "sendCode" or row == "submit":
                self.app.run_command(self.vm, row)
            elif row in ("password", "code"):
                self.app.run_command(self.vm, "submit")
            else:
                self.focus += 1
        elif row in self.text and (is_backspace(key) or printable(key)):
            self.text[row] = self.text[row][:-1] if is_backspace(key) else self.text[row] + key
            self.app.send_value(self.vm, row, self.text[row])


class ProductListScreen(Screen):
    title = "Products"
    help = "r refresh · m load more · c cancel · ↑/↓ move · g menu groups · q quit"

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("ProductList")
        self.vm.subscribe()
        self.selected = 0
        app.listen(self.vm, "error",
                   lambda e: app.say(f"{e.get('input')} failed ({e.get('kind')}): "
                                     f"{e.get('message')}", True))
        app.run_command(self.vm, "refresh", done=lambda _: app.say("refreshed"))

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
            busy = f"{app.spinner()} refreshing…"
        elif vm["isLoadingMore"]:
            busy = f"{app.spinner()} loading more…"
        more = "yes" if vm["hasMore"] else "no"
        app.put(y, 2, f"page {vm['page']} · {len(items)} items · more: {more}  {busy}"
                      f"{stale_mark(vm, vm['isRefreshing'])}", curses.A_BOLD)
        if retry_row(app, y, vm, "r"):
            y += 1
        if vm["loadState"] == "empty":
            app.put(y + 2, 4, "(no products)", curses.A_DIM)
            return
        height, _ = app.stdscr.getmaxyx()
        app.put(y + 1, 2, "  " + "  ".join(pad(h, w) for h, w in COLUMNS), curses.A_UNDERLINE)
        room = max(1, height - y - 5)
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
            app.run_command(self.vm, "refresh", done=lambda _: app.say("refreshed"))
        elif key == "m":
            app.run_command(self.vm, "loadMore", done=lambda _: app.say("loaded more"))
        elif key == "c":
            app.send_value(self.vm, "cancel")
        elif key == "g":
            app.push(MenuGroupsScreen(app))
        elif key == "q":
            app.running = False
        elif key == curses.KEY_UP:
            self.selected -= 1
        elif key == curses.KEY_DOWN:
            self.selected += 1


def stale_mark(vm: Any, loading: bool) -> str:
    """After a list's header: whether the rows are the ones saved by an earlier run (``isStale``,
    with ``--state-dir``), shown at once while the first load of this run is under way."""
    if not vm["isStale"]:
        return ""
    return "  (saved list, refreshing…)" if loading else "  (saved list)"


def retry_row(app: "App", y: int, vm: Any, key: str) -> bool:
    """Under a list's header: the last load's failure, as the user reads it, and how to retry.

    Drawn from the ``loadState`` and ``lastError`` properties, so it is right however late the
    screen subscribed and whatever the status line says now."""
    if vm["loadState"] != "failed":
        return False
    error = vm["lastError"] or {}
    app.put(y + 1, 2, f"⚠ {error.get('message', '')}  · press {key} to retry", app.attr("error") | curses.A_BOLD)
    return True


COLUMNS = [("Name", 22), ("Bank", 14), ("Profit", 8), ("Status", 10), ("Term", 10),
           ("Amount", 12)]
KEYS = ["name", "bank", "profit", "saleStatus", "term", "amount"]


class MenuGroupsScreen(Screen):
    title = "Menu groups (m1)"
    help = "n new · e rename · d delete · ↑/↓ move · r reload · b back · q quit"

    def __init__(self, app: App) -> None:
        super().__init__(app)
        self.vm = app.host.create("MenuSubGroup", {"menuUid": "m1"})
        self.vm.subscribe()
        self.selected = 0
        app.listen(self.vm, "navigate", self.on_navigate)
        app.listen(self.vm, "error",
                   lambda e: app.say(f"{e.get('input')} failed ({e.get('kind')}): "
                                     f"{e.get('message')}", True))
        app.run_command(self.vm, "load")

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
        loading = f"{app.spinner()} loading…" if vm["loading"] else ""
        app.put(y, 2, f"{len(groups)} groups  {loading}{stale_mark(vm, vm['loading'])}", curses.A_BOLD)
        if retry_row(app, y, vm, "r"):
            y += 1
        if vm["loadState"] == "empty":
            app.put(y + 2, 4, "(no groups)", curses.A_DIM)
        self.current()
        for index, group in enumerate(groups):
            mark = "> " if index == self.selected else "  "
            app.put(y + 2 + index, 2,
                    f"{mark}{pad(str(group.get('name')), 24)} {group.get('dishCount')} dishes"
                    f"  ({group.get('id')})",
                    curses.A_BOLD if index == self.selected else 0)

    def key(self, key: Any) -> None:
        app = self.app
        group = self.current()
        if key == "n":
            app.send_value(self.vm, "create")
        elif key == "e" and group:
            app.send_value(self.vm, "rename", {"groupId": group["id"]})
        elif key == "d" and group:
            name = group.get("name")
            app.run_command(self.vm, "delete", {"groupId": group["id"]},
                            done=lambda _: app.say(f"deleted {name}"))
        elif key == "r":
            app.run_command(self.vm, "load")
        elif key == "b":
            app.pop()
        elif key == "q":
            app.running = False
        elif key == curses.KEY_UP:
            self.selected -= 1
        elif key == curses.KEY_DOWN:
            self.selected += 1


class EditGroupScreen(Screen):
    help = "type a name · Enter save · Esc cancel"

    def __init__(self, app: App, args: Dict[str, Any]) -> None:
        super().__init__(app)
        self.vm = app.host.create("MenuEditGroup", args)
        self.vm.subscribe()
        self.text = str(args.get("name") or "")
        self.closed = False
        app.listen(self.vm, "saved", lambda v: app.say(f"saved {v['group']['name']}"))
        app.listen(self.vm, "dismiss", self.on_dismiss)
        app.listen(self.vm, "error",
                   lambda e: app.say(f"save failed ({e.get('kind')}): {e.get('message')}", True))

    @property
    def title(self) -> str:  # type: ignore[override]
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
        app.put(y + 2, 2, f"Name: [{pad(str(vm['name']), 24)}]")
        ok = vm["canSave"]
        app.put(y + 2, 36, "can save" if ok else "cannot save",
                app.attr("ok") if ok else app.attr("error"))
        if vm["isSaving"]:
            app.put(y + 4, 2, f"{app.spinner()} saving…")

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
        host.initialize(**({"locale": locale_name} if locale_name else {}))
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            sys.stderr.write(NO_TERMINAL)
            return 2

        def run(stdscr: Any) -> None:
            try:
                curses.curs_set(0)
            except curses.error:
                pass
            app = App(host, stdscr)
            # The app's one session: with --state-dir it survives a restart, so the demo opens
            # on the products when it is logged in, and goes back to the login when it ends.
            session = host.create("Session")
            session.subscribe()
            if session["isLoggedIn"]:
                app.push(ProductListScreen(app))
                app.say(f"logged in as {session['username']}")
            else:
                app.push(LoginScreen(app))
            app.listen(session, "navigate", lambda _: app.replace(
                LoginScreen(app), status="the session has ended: log in again"))
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
            sys.stderr.write(f"vmhost.demo: the session is recorded in {recorded}; replay it with\n"
                             f"  VMHOST_SECRET_PASSWORD=… python3 -m vmhost.replay {recorded}\n"
                             f"(the secrets it needs are named in its last lines)\n")
    return 0
