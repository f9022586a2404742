// The web demo: the three screens of the reference app, drawn from view-models that live in
// vmhost-web. The page holds no logic of its own: it forwards input with `send` and draws the
// mirror that `subscribe` keeps current. One resumable session per page (a dropped connection
// comes back on the same screen); switching the locale sends `initialize {locale}` again and opens
// the screen again in it (a view-model speaks the locale it was made in).
import { ErrorCode, Host, defaultURL } from "../vmhost.js";

/** The page's own words; everything else (titles, countdown, cells) comes from the view-models. */
const STRINGS = {
  "zh-Hans": {
    brand: "vmhost", products: "理财产品", groups: "菜单分组", loginTitle: "登录",
    passwordTab: "密码登录", codeTab: "验证码登录", username: "账号", password: "密码",
    phone: "手机号", code: "验证码", usernameHint: "11 位手机号", passwordHint: "至少 6 位",
    codeHint: "6 位数字", login: "登录", loggingIn: "登录中…",
    demoAccount: "演示账号 13800138000 / 123456，验证码 123456",
    refresh: "刷新", cancel: "取消", retry: "重试", refreshing: "正在刷新…", loadMore: "加载更多",
    loadingMore: "正在加载…", noMore: "没有更多了", noProducts: "暂无产品",
    loadFailed: "加载失败", deleteFailed: "删除失败", loading: "加载中…", newGroup: "新建分组",
    noGroups: "还没有分组", rename: "重命名", delete: "删除", dishes: (n) => `${n} 道菜`,
    groupName: "分组名称", save: "保存", saving: "保存中…", saveFailed: "保存失败",
    connecting: "连接中…", reconnecting: "重新连接中…", offline: "连接已断开", minimum: (amount) => `${amount} 起购`,
    logout: "退出登录", codeSent: "验证码已发送，请查收短信",
    testControls: "测试", tcEndpoint: "接口", tcOutcome: "结果", tcTimeout: "超时", tcNetwork: "网络故障",
    tcHTTP: "HTTP 状态码", tcBusiness: "业务错误", tcMalformed: "响应格式错误", tcDelay: "延迟（毫秒）",
    tcDetail: "参数", tcFail: "让下次调用失败", tcClock: "时钟", scriptedMessage: "测试设定的失败",
    tcQueued: (endpoint, outcome) => `下次 ${endpoint} 调用：${outcome}`,
    tcNow: (step, now) => `时钟 +${step} 秒，现在 ${now} 秒`,
  },
  en: {
    brand: "vmhost", products: "Products", groups: "Menu groups", loginTitle: "Log in",
    passwordTab: "Password", codeTab: "SMS code", username: "Account", password: "Password",
    phone: "Phone", code: "Code", usernameHint: "11-digit mobile number", passwordHint: "At least 6 characters",
    codeHint: "6 digits", login: "Log in", loggingIn: "Logging in…",
    demoAccount: "Demo account 13800138000 / 123456, code 123456",
    refresh: "Refresh", cancel: "Cancel", retry: "Retry", refreshing: "Refreshing…", loadMore: "Load more",
    loadingMore: "Loading…", noMore: "No more products", noProducts: "No products",
    loadFailed: "Loading failed", deleteFailed: "Delete failed", loading: "Loading…", newGroup: "New group",
    noGroups: "No groups yet", rename: "Rename", delete: "Delete", dishes: (n) => (n === 1 ? "1 dish" : `${n} dishes`),
    groupName: "Group name", save: "Save", saving: "Saving…", saveFailed: "Saving failed",
    connecting: "Connecting…", reconnecting: "Reconnecting…", offline: "Disconnected", minimum: (amount) => `from ${amount}`,
    logout: "Log out", codeSent: "Code sent: check your messages",
    testControls: "Test", tcEndpoint: "Endpoint", tcOutcome: "Outcome", tcTimeout: "Timeout", tcNetwork: "Network failure",
    tcHTTP: "HTTP status", tcBusiness: "Business error", tcMalformed: "Malformed answer", tcDelay: "Delay (ms)",
    tcDetail: "Parameter", tcFail: "Fail the next call", tcClock: "Clock", scriptedMessage: "scripted failure",
    tcQueued: (endpoint, outcome) => `next ${endpoint} call: ${outcome}`,
    tcNow: (step, now) => `clock +${step} s, now ${now} s`,
  },
};

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const page = {
  locale: localStorage.getItem("vmhost.locale") === "en" ? "en" : "zh-Hans",
  /** @type {Host | null} */ host: null,
  /** Undoes the current screen (disposes its view-models, removes its handlers). */
  unmount: () => {},
  screen: "",
  /** Counts the times the screens were opened afresh (a new session, a locale switched); the
   * tests read it in `data-ready`. A resumed session keeps its screen and this count. */
  mounts: 0,
  /** The test controls the server serves, found by the first session (see probeControls):
   * `undefined` before, `null` when it has none. @type {{clock: boolean} | null | undefined} */
  controls: undefined,
};
const t = () => STRINGS[page.locale];

/** A command's failure is drawn from the view-model's state and events; a cancel is no failure. */
const quietly = (promise) => promise.catch((error) => {
  if (error?.code !== ErrorCode.CommandFailed && error?.code !== ErrorCode.RequestCancelled) console.debug(error);
});

function applyStrings() {
  document.documentElement.lang = page.locale;
  for (const element of document.querySelectorAll("[data-text]")) {
    element.textContent = t()[element.getAttribute("data-text")];
  }
  for (const element of document.querySelectorAll("[data-placeholder]")) {
    element.setAttribute("placeholder", t()[element.getAttribute("data-placeholder")]);
  }
  for (const element of document.querySelectorAll("[data-label]")) {
    element.setAttribute("aria-label", t()[element.getAttribute("data-label")]);
  }
  for (const button of document.querySelectorAll(".locale button")) {
    button.classList.toggle("active", button.getAttribute("data-locale") === page.locale);
  }
}

function setStatus(text, offline = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("offline", offline);
}

/** Opens a session in the page's locale and shows the screen of the URL. */
async function connect() {
  setStatus(t().connecting);
  const token = new URLSearchParams(location.search).get("token") ?? undefined;
  // A resumable session: a dropped connection comes back on the same screen (SPEC §12, "Resume").
  const host = await Host.connect(defaultURL(token), {
    resumable: true,
    onStateChange: (state) => {
      if (page.host !== host) return;
      document.body.classList.toggle("reconnecting", state === "reconnecting");
      if (state === "reconnecting") setStatus(t().reconnecting, true);
      else if (state === "open") setStatus("");
      else if (state === "lost") {
        // The session is gone (the server restarted, or the page was away too long): a new one.
        page.host = null;
        page.unmount = () => {};
        document.body.removeAttribute("data-ready");
        connect().catch((error) => setStatus(`${t().offline}: ${error.message}`, true));
      }
    },
  });
  await host.initialize({ locale: page.locale, clientInfo: { name: "vmhost web demo" } });
  // The session's login, held for the session's life: a server that keeps its sessions over a
  // restart (`--session-dir`) brings it back logged in through this view-model.
  await host.create("Session");
  page.host = host;
  page.mounts += 1;
  window.vmhost = host; // for the browser's console and the browser tests
  if (page.controls === undefined) page.controls = await probeControls(host);
  showControls();
  host.closed.then(() => {
    if (page.host === host) setStatus(t().offline, true);
  });
  setStatus("");
  await route(true);
}

async function switchLocale(locale) {
  if (locale === page.locale) return;
  page.locale = locale;
  localStorage.setItem("vmhost.locale", locale);
  applyStrings();
  showDetail();
  controlResult("");
  const host = page.host;
  if (!host) return;
  // The same session in the new locale: view-models made from now on speak it, so the screen is
  // opened again (what was typed is taken over); the login and the session stay.
  await host.initialize({ locale, clientInfo: { name: "vmhost web demo" } });
  page.mounts += 1;
  await route(true);
}

async function route(force = false) {
  const loggedIn = sessionStorage.getItem("vmhost.loggedIn") === "1";
  let screen = location.hash.slice(1) || "login";
  if (!["login", "products", "groups"].includes(screen)) screen = "login";
  if (!loggedIn) screen = "login";
  if (screen === page.screen && !force) return;
  document.body.removeAttribute("data-ready");
  page.unmount();
  page.screen = screen;
  for (const section of document.querySelectorAll(".screen")) {
    section.hidden = /** @type {HTMLElement} */ (section).dataset.screen !== screen;
  }
  window.scrollTo(0, 0); // a screen opens at its top
  $("nav").hidden = !loggedIn;
  $("logout").hidden = !loggedIn;
  $("nav-products").classList.toggle("active", screen === "products");
  $("nav-groups").classList.toggle("active", screen === "groups");
  /** @type {HTMLSelectElement} */ ($("tc-endpoint")).value = SCREEN_ENDPOINT[screen];
  const mount = { login: mountLogin, products: mountProducts, groups: mountGroups }[screen];
  page.unmount = await mount(/** @type {Host} */ (page.host));
  document.body.setAttribute("data-ready", `${screen}:${page.mounts}`);
}

/** Ends the session (the app's `Session` kind) and goes back to the login screen, with the
 * secrets typed there cleared. */
async function logOut() {
  sessionStorage.removeItem("vmhost.loggedIn");
  for (const field of ["password", "code"]) /** @type {HTMLInputElement} */ ($(field)).value = "";
  const host = page.host;
  if (host) {
    const session = await host.create("Session");
    await quietly(session.send("logout"));
    await quietly(session.dispose());
  }
  if (location.hash === "#login") await route(true);
  else location.hash = "#login";
}

/** Adds a listener for the life of a screen; returns its removal. */
function listen(element, type, handler) {
  element.addEventListener(type, handler);
  return () => element.removeEventListener(type, handler);
}

// MARK: Login

async function mountLogin(host) {
  const vm = await host.create("Login");
  await vm.subscribe();
  const fields = ["username", "password", "phone", "code"];
  // A screen opened again (another locale, a new session) takes over what was typed.
  for (const field of fields) {
    const value = /** @type {HTMLInputElement} */ ($(field)).value;
    if (value) await quietly(vm.send(field, value));
  }
  $("code-sent").hidden = true;
  const mode = sessionStorage.getItem("vmhost.loginMode");
  if (mode === "code") await quietly(vm.send("mode", "code"));

  const render = () => {
    const v = vm.values;
    for (const [tab, mode, color] of [["tab-password", "password", v.passwordTabColor], ["tab-code", "code", v.codeTabColor]]) {
      $(tab).style.color = color;
      $(tab).classList.toggle("active", v.mode === mode);
    }
    $("password-container").hidden = v.hidePasswordContainer;
    $("code-container").hidden = v.hideCodeContainer;
    for (const [field, valid] of [["username", v.usernameValid], ["password", v.passwordValid], ["phone", v.phoneValid], ["code", v.codeValid]]) {
      $(field).classList.toggle("valid", valid);
    }
    const sendCode = /** @type {HTMLButtonElement} */ ($("send-code"));
    sendCode.textContent = v.sendCodeTitle;
    sendCode.disabled = !v.canSendCode;
    sendCode.dataset.countdown = String(v.countdown);
    const submit = /** @type {HTMLButtonElement} */ ($("submit"));
    submit.disabled = !v.canSubmit;
    submit.textContent = v.isSubmitting ? t().loggingIn : t().login;
    const failure = $("login-failure");
    failure.hidden = !v.failureMessage;
    failure.textContent = v.failureMessage ?? "";
  };
  render();
  const removers = [
    vm.on("changed", render),
    vm.on("navigate", () => {
      sessionStorage.setItem("vmhost.loggedIn", "1");
      location.hash = "#products";
    }),
    vm.on("error", (error) => {
      if (error.input !== "sendCode") return; // a failed login shows as failureMessage
      const failure = $("login-failure");
      failure.hidden = false;
      failure.textContent = error.message;
    }),
    ...fields.map((field) => listen($(field), "input", (event) => quietly(vm.send(field, event.target.value)))),
    listen($("tab-password"), "click", () => {
      sessionStorage.setItem("vmhost.loginMode", "password");
      quietly(vm.send("mode", "password"));
    }),
    listen($("tab-code"), "click", () => {
      sessionStorage.setItem("vmhost.loginMode", "code");
      quietly(vm.send("mode", "code"));
    }),
    listen($("send-code"), "click", () => {
      $("code-sent").hidden = true;
      quietly(vm.send("sendCode").then(() => { $("code-sent").hidden = false; }));
    }),
    listen($("phone"), "input", () => { $("code-sent").hidden = true; }),
    listen($("login-form"), "submit", (event) => {
      event.preventDefault();
      quietly(vm.send("submit"));
    }),
  ];
  return () => {
    for (const remove of removers) remove();
    quietly(vm.dispose());
  };
}

// MARK: Products

async function mountProducts(host) {
  const vm = await host.create("ProductList", { pageSize: 20 });
  await vm.subscribe({ diff: true });
  const list = $("product-list");
  /** @type {(() => void) | null} */
  let retry = null;

  const showError = (error, again) => {
    retry = again;
    $("products-error-text").textContent = `${t().loadFailed}: ${error.message || error.kind}`;
    $("products-error").hidden = false;
  };
  const run = (input) => {
    $("products-error").hidden = true;
    return vm.send(input).catch((error) => {
      if (error?.code === ErrorCode.CommandFailed) showError(error.data ?? {}, () => run(input));
      else if (error?.code !== ErrorCode.RequestCancelled && error?.code !== ErrorCode.InputDisabled) console.debug(error);
    });
  };

  const render = () => {
    const v = vm.values;
    list.replaceChildren(...v.items.map(productCard));
    list.dataset.count = String(v.items.length);
    $("products-refreshing").hidden = !v.isRefreshing;
    $("products-loading-more").hidden = !v.isLoadingMore;
    $("products-empty").hidden = !v.isEmpty;
    $("products-end").hidden = v.hasMore || v.page === 0 || v.isEmpty;
    const loadMore = /** @type {HTMLButtonElement} */ ($("load-more"));
    loadMore.hidden = !v.hasMore || v.isLoadingMore;
    loadMore.disabled = v.isRefreshing;
    /** @type {HTMLButtonElement} */ ($("refresh")).disabled = v.isRefreshing;
    /** @type {HTMLButtonElement} */ ($("cancel")).disabled = !v.isRefreshing && !v.isLoadingMore;
  };
  render();
  const removers = [
    vm.on("changed", render),
    listen($("refresh"), "click", () => run("refresh")),
    listen($("load-more"), "click", () => run("loadMore")),
    listen($("cancel"), "click", () => quietly(vm.send("cancel"))),
    listen($("retry"), "click", () => retry?.()),
  ];
  run("refresh");
  return () => {
    for (const remove of removers) remove();
    $("products-error").hidden = true;
    quietly(vm.dispose());
  };
}

function productCard(cell) {
  const item = document.createElement("li");
  item.dataset.id = cell.id;
  const status = { 在售: "", "On sale": "", 已售罄: "off", "Sold out": "off" }[cell.saleStatus] ?? "soon";
  item.innerHTML = `<span class="name"></span><span class="status-tag ${status}"></span>
    <span class="bank"></span><span class="profit"></span><span class="terms"></span>`;
  item.querySelector(".name").textContent = cell.name;
  item.querySelector(".status-tag").textContent = cell.saleStatus;
  item.querySelector(".bank").textContent = cell.bank;
  item.querySelector(".profit").textContent = cell.profit;
  item.querySelector(".terms").textContent = `${cell.term} · ${t().minimum(cell.amount)}`;
  return item;
}

// MARK: Menu groups

async function mountGroups(host) {
  const vm = await host.create("MenuSubGroup", { menuUid: "m1" });
  await vm.subscribe({ diff: true });
  const list = $("group-list");
  /** @type {(() => void) | null} */
  let retry = null;
  /** @type {(() => Promise<void>) | null} */
  let closeEditor = null;

  const showError = (message, error, again) => {
    retry = again;
    $("groups-error-text").textContent = `${message}: ${error.message || error.kind}`;
    $("groups-error").hidden = false;
  };
  const run = (input, value, failed) => {
    $("groups-error").hidden = true;
    return vm.send(input, value).catch((error) => {
      if (error?.code === ErrorCode.CommandFailed) showError(failed, error.data ?? {}, () => run(input, value, failed));
      else if (error?.code !== ErrorCode.RequestCancelled && error?.code !== ErrorCode.InputDisabled) console.debug(error);
    });
  };

  const render = () => {
    const v = vm.values;
    list.replaceChildren(...v.groups.map((group) => {
      const row = document.createElement("li");
      row.dataset.id = group.id;
      row.innerHTML = `<span class="name"></span><span class="count"></span>
        <button type="button" class="secondary rename"></button><button type="button" class="secondary danger delete"></button>`;
      row.querySelector(".name").textContent = group.name;
      row.querySelector(".count").textContent = t().dishes(group.dishCount);
      row.querySelector(".rename").textContent = t().rename;
      row.querySelector(".delete").textContent = t().delete;
      return row;
    }));
    list.dataset.count = String(v.groups.length);
    $("groups-loading").hidden = !v.loading;
    $("groups-empty").hidden = !v.isEmpty;
  };
  render();

  const openEditor = async (args) => {
    const editor = await host.create("MenuEditGroup", args);
    await editor.subscribe();
    const name = /** @type {HTMLInputElement} */ ($("editor-name"));
    name.value = editor.values.name;
    const draw = () => {
      const v = editor.values;
      $("editor-title").textContent = v.title;
      const save = /** @type {HTMLButtonElement} */ ($("editor-save"));
      save.disabled = !v.canSave || v.isSaving;
      save.textContent = v.isSaving ? t().saving : t().save;
    };
    draw();
    $("editor-error").hidden = true;
    $("editor").hidden = false;
    name.focus();
    const removers = [
      editor.on("changed", draw),
      editor.on("error", (error) => {
        $("editor-error").textContent = `${t().saveFailed}: ${error.message || error.kind}`;
        $("editor-error").hidden = false;
      }),
      editor.on("dismiss", () => closeEditor?.()),
      listen(name, "input", () => quietly(editor.send("name", name.value))),
      listen($("editor-cancel"), "click", () => quietly(editor.send("cancel"))),
      listen($("editor-form"), "submit", (event) => {
        event.preventDefault();
        $("editor-error").hidden = true;
        quietly(editor.send("save"));
      }),
    ];
    closeEditor = async () => {
      closeEditor = null;
      for (const remove of removers) remove();
      $("editor").hidden = true;
      await quietly(editor.dispose());
    };
  };

  const removers = [
    vm.on("changed", render),
    vm.on("navigate", (target) => openEditor(target.args)),
    listen($("group-new"), "click", () => quietly(vm.send("create"))),
    listen($("groups-retry"), "click", () => retry?.()),
    listen(list, "click", (event) => {
      const button = event.target.closest("button");
      const groupId = button?.closest("li")?.dataset.id;
      if (!groupId) return;
      if (button.classList.contains("rename")) quietly(vm.send("rename", { groupId }));
      if (button.classList.contains("delete")) run("delete", { groupId }, t().deleteFailed);
    }),
  ];
  run("load", undefined, t().loadFailed);
  return () => {
    for (const remove of removers) remove();
    closeEditor?.();
    $("groups-error").hidden = true;
    quietly(vm.dispose());
  };
}

// MARK: Test controls

/** The default endpoint of the tester's panel on each screen: the one its main command calls. */
const SCREEN_ENDPOINT = { login: "auth.login", products: "products", groups: "groups.list" };

/**
 * Whether the server has test controls (`--test-controls`, SPEC §9), asked once per page with a
 * control that changes nothing: `control.clock.advance {ms: 0}`. -32601: none (the panel stays
 * hidden); -32602: test controls on the system clock (no clock buttons); an answer: a manual clock.
 * @param {Host} host
 * @returns {Promise<{clock: boolean} | null>}
 */
async function probeControls(host) {
  try {
    await host.request("control.clock.advance", { ms: 0 });
    return { clock: true };
  } catch (error) {
    return error?.code === ErrorCode.InvalidParams ? { clock: false } : null;
  }
}

function showControls() {
  $("tc-toggle").hidden = !page.controls;
  $("test-controls").hidden = !page.controls || $("tc-toggle").getAttribute("aria-expanded") !== "true";
  $("tc-clock").hidden = !page.controls?.clock;
}

/** The parameter an outcome takes, shown in the detail field with its default. */
function outcomeDetail(kind) {
  return { http: "500", business: `E900:${t().scriptedMessage}`, delay: "2000" }[kind];
}

function controlResult(text, failed = false) {
  const result = $("tc-result");
  result.textContent = text;
  result.classList.toggle("failure", failed);
}

/** Calls a test control through the page's session; its refusal is shown in the panel. */
async function control(method, params) {
  try {
    return await /** @type {Host} */ (page.host).request(method, params);
  } catch (error) {
    controlResult(error?.message ?? String(error), true);
    return null;
  }
}

/** Shows the detail field of the chosen outcome, with its default in the page's language. */
function showDetail() {
  const detail = /** @type {HTMLInputElement} */ ($("tc-detail"));
  const value = outcomeDetail(/** @type {HTMLSelectElement} */ ($("tc-outcome")).value);
  detail.hidden = value === undefined;
  detail.value = value ?? "";
}

function setUpControls() {
  const outcome = /** @type {HTMLSelectElement} */ ($("tc-outcome"));
  const detail = /** @type {HTMLInputElement} */ ($("tc-detail"));
  outcome.addEventListener("change", showDetail);
  showDetail();
  $("tc-toggle").addEventListener("click", () => {
    const toggle = $("tc-toggle");
    toggle.setAttribute("aria-expanded", String(toggle.getAttribute("aria-expanded") !== "true"));
    showControls();
  });
  $("tc-script").addEventListener("submit", async (event) => {
    event.preventDefault();
    const endpoint = /** @type {HTMLSelectElement} */ ($("tc-endpoint")).value;
    const chosen = detail.hidden ? outcome.value : `${outcome.value}:${detail.value}`;
    if (await control("control.backend.script", { endpoint, outcomes: [chosen] })) {
      controlResult(t().tcQueued(endpoint, chosen));
    }
  });
  for (const button of document.querySelectorAll("#tc-clock button")) {
    button.addEventListener("click", async () => {
      const ms = Number(/** @type {HTMLElement} */ (button).dataset.ms);
      const answer = await control("control.clock.advance", { ms });
      if (answer) controlResult(t().tcNow(ms / 1000, Math.floor(answer.now / 1000)));
    });
  }
}

// MARK: Start

for (const button of document.querySelectorAll(".locale button")) {
  button.addEventListener("click", () => switchLocale(button.getAttribute("data-locale")));
}
$("logout").addEventListener("click", () => logOut());
setUpControls();
window.addEventListener("hashchange", () => route());
applyStrings();
connect().catch((error) => setStatus(`${t().offline}: ${error.message}`, true));
