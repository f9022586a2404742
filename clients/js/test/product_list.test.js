import { test } from "node:test";
import assert from "node:assert/strict";
import { Host, RPCError } from "../index.js";

const OPTIONS = ["--clock", "manual", "--test-controls"];

/** Starts a host on a manual clock with test controls; closes it after the body. */
async function withHost(t, body) {
  const host = await Host.spawn(OPTIONS);
  try {
    return await body(host);
  } finally {
    await host.close();
  }
}

async function session(diff) {
  const host = await Host.spawn(OPTIONS);
  try {
    const vm = await host.create("ProductList", { pageSize: 20 });
    const initial = await vm.subscribe({ diff });
    assert.deepEqual(initial, { items: [], page: 0, hasMore: true, isRefreshing: false,
      isLoadingMore: false, isEmpty: false, isStale: false, loadState: "idle", lastError: null });
    const changes = [];
    vm.on("changed", (change) => changes.push(change));
    assert.equal(await vm.send("refresh"), undefined);
    assert.deepEqual(vm.get("items").slice(0, 2).map((cell) => cell.id), ["p001", "p002"]);
    await vm.loadMore();
    await vm.send("loadMore");
    assert.equal(vm.get("items").length, 57);
    assert.equal(vm.get("page"), 3);
    assert.equal(vm.get("hasMore"), false);
    assert.equal(vm.get("loadState"), "loaded");
    await assert.rejects(vm.send("loadMore"), (error) => {
      assert.equal(error.code, -32003);
      assert.deepEqual(error.data, { input: "loadMore", reason: "no more pages" });
      return true;
    });
    await vm.send("refresh");
    assert.equal(vm.get("items").length, 20);
    assert.equal(vm.get("page"), 1);
    assert.ok(changes.length > 0);
    if (diff) assert.ok(changes.some((change) => change.splices?.items), "splices were used");
    assert.deepEqual(vm.values, await vm.fetch(), "the mirror equals the host's state");
    return structuredClone(vm.values);
  } finally {
    await host.close();
  }
}

test("refresh + loadMore: the diff mirror equals the full mirror", async () => {
  const full = await session(false);
  const diffed = await session(true);
  assert.deepEqual(diffed, full);
  assert.deepEqual(full.items[0], { id: "p001", name: "稳健增利1号", bank: "招商银行",
    profit: "4.35%", saleStatus: "在售", saleStatusCode: "onSale", term: "90天", amount: "¥50,000" });
});

test("a failed command rejects with -32004 and emits one error event first", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList");
  await vm.subscribe();
  await vm.refresh();
  const errors = [];
  const events = [];
  vm.on("error", (value) => errors.push(value));
  vm.on("event", (event) => events.push(event));
  await host.request("control.backend.script", { endpoint: "products", outcomes: ["http:500"] });
  const expected = {
    kind: "server", code: 500, message: "服务器错误（500），请稍后重试", detail: "the server answered HTTP 500", input: "loadMore",
  };
  await assert.rejects(vm.send("loadMore"), (error) => {
    assert.ok(error instanceof RPCError);
    assert.equal(error.code, -32004);
    assert.deepEqual(error.data, expected);
    assert.deepEqual(error.domainError, expected);
    assert.equal(error.detail, "the server answered HTTP 500", "the developer's text");
    assert.equal(error.userMessage, "服务器错误（500），请稍后重试", "the user's text");
    assert.deepEqual(errors, [expected], "the error event arrives before the reply");
    return true;
  });
  assert.deepEqual(events, [{ vm: vm.id, name: "error", value: expected }]);
  assert.equal(vm.get("page"), 1);
  assert.equal(vm.get("items").length, 20);
  assert.equal(vm.get("isLoadingMore"), false);
  assert.equal(vm.get("loadState"), "failed");
  assert.deepEqual(vm.get("lastError"), expected);
}));

test("aborting a command waiting on latency answers -32800 and applies nothing", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList");
  await vm.subscribe();
  const errors = [];
  vm.on("error", (value) => errors.push(value));
  await host.request("control.backend.latency", { ms: 1000 });
  const controller = new AbortController();
  const pending = vm.send("refresh", undefined, { signal: controller.signal });
  controller.abort();
  await assert.rejects(pending, (error) => error instanceof RPCError && error.code === -32800);
  assert.equal(vm.get("isRefreshing"), false);
  // the cancelled fetch's reply would be due now: nothing is applied
  assert.deepEqual(await host.request("control.clock.advance", { ms: 1000 }), { now: 1000 });
  assert.deepEqual(vm.get("items"), []);
  assert.equal(vm.get("page"), 0);
  assert.deepEqual(errors, []);
  controller.abort(); // aborting again does nothing
  await assert.rejects(vm.send("refresh", undefined, { signal: controller.signal }), { code: -32800 });
}));

test("a command waiting on the clock ends before the clock's reply", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList");
  await vm.subscribe({ outputs: ["items", "isRefreshing"], diff: true });
  await host.request("control.backend.latency", { ms: 100 });
  let done = false;
  const pending = vm.send("refresh").then(() => { done = true; });
  assert.deepEqual(await host.request("control.clock.advance", { ms: 100 }), { now: 100 });
  await pending;
  assert.ok(done);
  assert.equal(vm.get("items").length, 20);
  assert.deepEqual(Object.keys(vm.values).sort(), ["isRefreshing", "items"]);
}));

test("dispose cancels the commands in flight", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList");
  await host.request("control.backend.latency", { ms: 1000 });
  const pending = vm.send("refresh");
  await vm.dispose();
  await assert.rejects(pending, { code: -32800 });
  await assert.rejects(vm.send("refresh"), { code: -32001 });
}));
