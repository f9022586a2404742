import { test } from "node:test";
import assert from "node:assert/strict";
import { Host, HostExited, RPCError, UnknownMember, ErrorCode, buildIn, findBinary } from "../index.js";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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

test("ping answers {} and close exits 0", async () => {
  const host = await Host.spawn(OPTIONS);
  assert.deepEqual(await host.ping(), {});
  assert.deepEqual(await host.request("ping"), {});
  assert.equal(await host.close(), 0);
});

test("the binary option wins over the lookup", () => {
  assert.equal(findBinary("/some/vmhost"), "/some/vmhost");
  assert.match(findBinary(), /vmhost$/);
});

test("a checkout's newer build wins, release or debug", () => {
  const root = mkdtempSync(join(tmpdir(), "vmhost-build-"));
  try {
    assert.equal(buildIn(root), undefined);
    const paths = {};
    for (const config of ["release", "debug"]) {
      mkdirSync(join(root, ".build", config), { recursive: true });
      paths[config] = join(root, ".build", config, "vmhost");
      writeFileSync(paths[config], "#!/bin/sh\n", { mode: 0o755 });
    }
    utimesSync(paths.release, 1_000_000, 1_000_000);
    utimesSync(paths.debug, 2_000_000, 2_000_000);
    assert.equal(buildIn(root), paths.debug); // a stale release build does not win
    utimesSync(paths.release, 3_000_000, 3_000_000);
    assert.equal(buildIn(root), paths.release);
    rmSync(paths.release);
    assert.equal(buildIn(root), paths.debug);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("errors reject with RPCError carrying code, message and data", (t) => withHost(t, async (host) => {
  await assert.rejects(host.request("no.such.method"), (error) => {
    assert.ok(error instanceof RPCError);
    assert.equal(error.code, ErrorCode.MethodNotFound);
    return true;
  });
  await assert.rejects(host.request("vm.create", { kind: 3 }), (error) => {
    assert.equal(error.code, -32602);
    assert.match(error.rpcMessage, /params\.kind/);
    return true;
  });
  await assert.rejects(host.request("vm.get", { vm: "nope" }), (error) => {
    assert.equal(error.code, -32001);
    assert.deepEqual(error.data, { vm: "nope" });
    return true;
  });
  await assert.rejects(host.request("vm.create", { kind: "ProductList", args: { pageSize: 0 } }),
    { code: -32602 });
}));

test("control methods need --test-controls", async () => {
  const host = await Host.spawn([]);
  try {
    await assert.rejects(host.request("control.backend.reset", {}), { code: -32601 });
  } finally {
    await host.close();
  }
});

test("typos fail at once, listing the valid names", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList");
  await vm.subscribe();
  assert.throws(() => vm.get("itmes"), (error) => {
    assert.ok(error instanceof UnknownMember);
    assert.equal(error.code, -32002);
    assert.match(error.message, /itmes/);
    assert.match(error.message, /items, page, hasMore, isRefreshing, isLoadingMore, isEmpty/);
    return true;
  });
  await assert.rejects(vm.send("refrsh"), (error) => {
    assert.ok(error instanceof UnknownMember);
    assert.match(error.message, /refresh, loadMore, cancel/);
    return true;
  });
  assert.throws(() => vm.on("eror", () => {}), /changed, event, error/);
  await assert.rejects(vm.subscribe({ outputs: ["pgae"] }), UnknownMember);
  await assert.rejects(vm.fetch("pgae"), UnknownMember);
  // the host says the same when asked directly
  await assert.rejects(host.request("vm.get", { vm: vm.id, outputs: ["itmes"] }),
    (error) => error.code === -32002 && /items/.test(error.rpcMessage));
}));

test("create with a chosen id, list and dispose", (t) => withHost(t, async (host) => {
  const vm = await host.create("ProductList", { pageSize: 5 }, "products");
  assert.equal(vm.id, "products");
  assert.deepEqual(await host.list(), [{ vm: "products", kind: "ProductList" }]);
  await vm.dispose();
  assert.deepEqual(await host.list(), []);
  await assert.rejects(vm.send("refresh"), { code: -32001 });
}));

test("requests after shutdown answer -32005", async () => {
  const host = await Host.spawn(OPTIONS);
  assert.equal(await host.request("shutdown"), null);
  await assert.rejects(host.ping(), { code: -32005 });
  host.notify("exit");
  assert.equal(await host.exited, 0);
});

test("HostExited carries the host's own reason and status", async () => {
  const host = await Host.spawn(["--backend", "localhost:8080"]);
  await assert.rejects(host.ping(), (error) => {
    assert.ok(error instanceof HostExited);
    assert.match(error.message, /status 64/);
    assert.match(error.message, /--backend/);
    assert.match(error.message, /localhost:8080/);
    return true;
  });
  assert.match(host.stderr, /--backend/);
  assert.equal(await host.exited, 64);
});
