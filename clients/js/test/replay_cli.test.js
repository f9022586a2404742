// `node replay.js FILE…` as a CI runs it (protocol/conformance/README.md, "Replaying"): a
// recording replays green with its secrets from the environment and with no backend, a transcript
// asking for options that write a file, open a directory or reach an address is refused with status
// 2 and starts nothing, an invocation that replays nothing fails, hostile lines end it with status
// 2, a system-clock recording replays with its allowance, `--update` keeps the session and leaves
// a recording the host wrote as it was (both lay a long step out alike), so its diff is the lines
// of the values that changed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Refused, WIDTH, checkedArguments, foldChanges, loadTranscript, Mismatch, stepText } from "../replay.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPLAY = resolve(HERE, "..", "replay.js");
const ROOT = resolve(HERE, "..", "..", "..");
const BINARY = process.env.VMHOST_BIN || join(ROOT, ".build", "debug", "vmhost");
const RECORDED = join(ROOT, "protocol", "conformance", "39-recorded-session.jsonl");
const DEMO_SECRETS = JSON.parse(readFileSync(RECORDED.replace(/\.jsonl$/, ".secrets.json"), "utf8"));
const DEMO_PASSWORD = "123456"; // the demo account's (protocol/backend.md)

/** The steps of the transcript or recording at `path`, in order (a step on one line or laid out over several). */
const stepsOf = (path) => loadTranscript(path).map(([, step]) => step);

/** Runs the command line, secrets only from `env`. */
function cli(args, env = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VMHOST_SECRET_")));
  return spawnSync(process.execPath, [REPLAY, "--bin", BINARY, ...args],
    { encoding: "utf8", env: { ...base, ...env }, timeout: 60000 });
}

/** The same, without blocking this process (a server of the test's keeps accepting meanwhile). */
function cliAsync(args, env = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VMHOST_SECRET_")));
  return new Promise((done) => {
    const child = execFile(process.execPath, [REPLAY, "--bin", BINARY, ...args], { env: { ...base, ...env }, timeout: 60000 },
      (error, stdout, stderr) => done({ status: child.exitCode, stdout, stderr }));
  });
}

const folder = () => mkdtempSync(join(tmpdir(), "vmhost-replay-"));

function transcript(dir, args, { secret = false, name = "t.jsonl" } = {}) {
  const steps = [{ args }];
  if (secret) {
    steps.push({ send: { jsonrpc: "2.0", id: 1, method: "vm.create", params: { kind: "Login", id: "l" } } });
    steps.push({ send: { jsonrpc: "2.0", id: 2, method: "vm.send", params: { vm: "l", input: "password", value: "$secret:password" } } });
  }
  steps.push({ send: { jsonrpc: "2.0", id: 3, method: "ping" } });
  const path = join(dir, name);
  writeFileSync(path, steps.map((s) => JSON.stringify(s) + "\n").join(""));
  return path;
}

test("a recording replays from the command line with its secrets from the environment, online and offline", () => {
  const env = Object.fromEntries(Object.entries(DEMO_SECRETS).map(([k, v]) => [`VMHOST_SECRET_${k.toUpperCase()}`, v]));
  for (const extra of [[], ["--offline"]]) {
    const done = cli([...extra, RECORDED], env);
    assert.equal(done.status, 0, done.stdout + done.stderr);
    assert.match(done.stdout, /PASS .*39-recorded-session\.jsonl/);
    assert.match(done.stdout, /1 of 1 passed/);
  }
  // Without them: a failure naming the secret, status 1.
  const done = cli([RECORDED]);
  assert.equal(done.status, 1, done.stdout);
  assert.match(done.stdout, /the transcript needs the secret/);
});

test("an invocation that replays nothing fails", () => {
  for (const args of [[], ["--offline"], ["--update"]]) {
    const done = cli(args);
    assert.equal(done.status, 2, done.stdout);
    assert.match(done.stdout, /nothing replayed/);
  }
  assert.equal(cli(["--no-such-option", RECORDED]).status, 2);
});

test("a transcript asking for a trace, a recording or a state dir is refused and writes nothing", () => {
  const dir = folder();
  const outside = join(dir, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "build.sh"), "echo build\n");
  const received = join(dir, "received");
  mkdirSync(received);
  for (const [args, named] of [
    [["--trace", join(outside, "trace.ndjson")], "--trace"],
    [["--clock", "manual", "--record", join(outside, "build.sh")], "--record"],
    [[`--record=${join(outside, "build.sh")}`], "--record"],
    [["--state-dir", join(outside, "state")], "--state-dir"],
    [["--clock", "--trace", join(outside, "t")], "--clock has no value"],
    [["--backend", "recorded:../outside/build.sh"], "beside the transcript"],
  ]) {
    const path = transcript(received, args);
    const done = cli([path]);
    assert.equal(done.status, 2, done.stdout + done.stderr);
    assert.ok(done.stdout.includes(`REFUSED ${path}:1: not replayed:`) && done.stdout.includes(named), done.stdout);
  }
  assert.deepEqual(readdirSync(outside), ["build.sh"]);
  assert.equal(readFileSync(join(outside, "build.sh"), "utf8"), "echo build\n");
  // With --trust-args the caller vouches for them: the trace is written.
  const trusted = transcript(received, ["--trace", join(outside, "trace.ndjson")]);
  writeFileSync(trusted, readFileSync(trusted, "utf8") + JSON.stringify({ expect: { jsonrpc: "2.0", id: 3, result: {} } }) + "\n");
  const done = cli(["--trust-args", trusted]);
  assert.equal(done.status, 0, done.stdout);
  assert.ok(existsSync(join(outside, "trace.ndjson")));
});

test("a backend address is refused and the secret never sent", async () => {
  let connections = 0;
  const server = createServer((socket) => { connections++; socket.destroy(); });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address();
  try {
    const dir = folder();
    for (const args of [["--backend", `http://127.0.0.1:${port}`], [`--backend=http://127.0.0.1:${port}`]]) {
      const path = transcript(dir, args, { secret: true });
      const done = await cliAsync([path], { VMHOST_SECRET_PASSWORD: "s3cret-pw" });
      assert.equal(done.status, 2, done.stdout);
      assert.match(done.stdout, /REFUSED .*--backend/);
      assert.ok(!done.stdout.includes("s3cret-pw"));
    }
  } finally {
    await new Promise((done) => server.close(done));
  }
  assert.equal(connections, 0);
});

test("checkedArguments: the allow-list, read as the host reads options", () => {
  const dir = folder();
  const path = transcript(dir, []);
  writeFileSync(join(dir, "answers.jsonl"), "{\"args\":[]}\n");
  symlinkSync(RECORDED, join(dir, "link.jsonl"));
  assert.deepEqual(checkedArguments(["--clock=manual", "--test-controls", "--backend", "embedded"], path),
    ["--clock", "manual", "--test-controls", "--backend", "embedded"]);
  assert.deepEqual(checkedArguments(["--backend", "recorded:answers.jsonl"], path),
    ["--backend", `recorded:${join(dir, "answers.jsonl")}`].map((a) => a.replace(dir, resolve(dir))));
  assert.deepEqual(checkedArguments(["--http-replay", "answers.jsonl", "--http-replay-ignore", "query:ts"], path),
    ["--http-replay", join(resolve(dir), "answers.jsonl"), "--http-replay-ignore", "query:ts"]);
  for (const args of [["--trace", "x"], ["--backend", "recorded:link.jsonl"], ["--backend", `recorded:${RECORDED}`],
    ["--http-replay", "link.jsonl"], ["--http-replay", RECORDED], ["--http-replay", "../answers.jsonl"],
    ["--backend", "https://example.org"], ["--test-controls=1"], ["-h"], ["manual"], [1], ["--clock"]]) {
    assert.throws(() => checkedArguments(args, path), Refused, JSON.stringify(args));
  }
});

test("deep nesting and hostile lines end the replay with status 2", () => {
  const dir = folder();
  const cases = {
    "deep.jsonl": `{"args":[]}\n{"send":${"[".repeat(100000)}${"]".repeat(100000)}}\n`,
    "deepish.jsonl": `{"args":[]}\n{"send":${"[".repeat(300)}${"]".repeat(300)}}\n`,
    "raw.jsonl": "{\"args\":[]}\n{\"sendRaw\":5}\n",
    "exit.jsonl": "{\"args\":[]}\n{\"exit\":\"zero\"}\n",
    "args.jsonl": "{\"args\":[1,{\"a\":2}]}\n",
  };
  for (const [name, text] of Object.entries(cases)) {
    writeFileSync(join(dir, name), text);
    const done = cli([join(dir, name)]);
    assert.equal(done.status, 2, `${name}: ${done.stdout}${done.stderr}`);
    assert.match(done.stdout, /^(ERROR|REFUSED) /m);
    assert.ok(!done.stderr.includes("    at "), done.stderr); // no stack trace
  }
});

test("a user's sends are marked; recordings with or without markers replay; a bad marker is status 2", () => {
  const dir = folder();
  const path = join(dir, "marked.jsonl");
  const messages = [
    { jsonrpc: "2.0", id: 1, method: "vm.create", params: { kind: "Login", id: "l" } },
    { jsonrpc: "2.0", id: 2, method: "vm.send", params: { vm: "l", input: "username", value: "138" } },
    { jsonrpc: "2.0", id: 3, method: "vm.send", params: { vm: "l", input: "password", value: "secret-pw" } },
  ];
  const made = spawnSync(BINARY, ["--clock", "manual", "--test-controls", "--record", path],
    { input: messages.map((m) => JSON.stringify(m) + "\n").join(""), encoding: "utf8", timeout: 30000 });
  assert.equal(made.status, 0, made.stderr);
  const steps = stepsOf(path);
  assert.deepEqual(steps.filter((s) => "user" in s).map((s) => s.user), ["username", "password"]);
  const old = join(dir, "old.jsonl");
  writeFileSync(old, steps.map(({ user, ...rest }) => JSON.stringify(rest) + "\n").join(""));
  for (const file of [path, old]) {
    const done = cli([file], { VMHOST_SECRET_PASSWORD: "secret-pw" });
    assert.equal(done.status, 0, done.stdout + done.stderr);
  }
  for (const [name, step] of [["number.jsonl", { user: 1, send: { jsonrpc: "2.0", id: 1, method: "ping" } }],
    ["alone.jsonl", { user: "password" }]]) {
    writeFileSync(join(dir, name), `{"args":[]}\n${JSON.stringify(step)}\n`);
    const done = cli([join(dir, name)]);
    assert.equal(done.status, 2, done.stdout);
    assert.match(done.stdout, /user: the marker of a user's send/);
  }
});

test("a system-clock recording is replayed with its allowance; a manual-clock one exactly", () => {
  const dir = folder();
  const steps = stepsOf(RECORDED);
  const index = steps.findIndex((s) => s.expect?.method === "vm.changed" && !s.expect.params.splices
    && Object.keys(s.expect.params.values ?? {}).length >= 2);
  assert.ok(index > 0);
  const values = steps[index].expect.params.values;
  const [first, ...rest] = Object.keys(values);
  const one = structuredClone(steps[index]), two = structuredClone(steps[index]);
  one.expect.params.values = { [first]: values[first] };
  two.expect.params.values = Object.fromEntries(rest.map((k) => [k, values[k]]));
  const split = [...steps.slice(0, index), one, two, ...steps.slice(index + 1)];
  const env = Object.fromEntries(Object.entries(DEMO_SECRETS).map(([k, v]) => [`VMHOST_SECRET_${k.toUpperCase()}`, v]));
  const exact = join(dir, "exact.jsonl");
  writeFileSync(exact, split.map((s) => JSON.stringify(s) + "\n").join(""));
  const failed = cli([exact], env);
  assert.equal(failed.status, 1, failed.stdout);
  assert.match(failed.stdout, new RegExp(`FAIL ${exact}:${index + 1}:`));
  const clock = join(dir, "clock.jsonl");
  writeFileSync(clock, [split[0], { comment: "Recorded on the system clock: timers ran in real time." }, ...split.slice(1)]
    .map((s) => JSON.stringify(s) + "\n").join(""));
  const passed = cli([clock], env);
  assert.equal(passed.status, 0, passed.stdout);
});

test("foldChanges compares where the notifications end", () => {
  const changed = (values, splices) => ({ jsonrpc: "2.0", method: "vm.changed", params: { subscription: "s", vm: "v", values, ...(splices ? { splices } : {}) } });
  const before = { loading: false, loadState: "idle" };
  foldChanges([changed({ loadState: "loaded" })], [changed({ loading: true }), changed({ loading: false, loadState: "loaded" })], before, new Map());
  assert.throws(() => foldChanges([changed({ loadState: "loaded" })], [changed({ loadState: "failed" })], before, new Map()), Mismatch);
});

test("--update keeps a session with backend latency: the updated file replays green every time", async () => {
  const { Host } = await import("../index.js");
  const dir = folder();
  const path = join(dir, "latency.jsonl");
  const host = await Host.spawn(["--test-controls", "--record", path], { binary: BINARY });
  await host.request("control.backend.latency", { ms: 150 });
  const login = await host.create("Login");
  await login.send("username", "13800138000");
  await login.send("password", DEMO_PASSWORD);
  await login.send("submit");
  const products = await host.create("ProductList", { pageSize: 20 });
  await products.subscribe({ outputs: ["page", "hasMore", "isRefreshing", "isLoadingMore"] });
  await products.send("refresh");
  await products.send("loadMore");
  await host.close();
  const recorded = readFileSync(path, "utf8");
  const recordedSteps = stepsOf(path);
  assert.ok(recorded.includes('"page":2') && !recorded.includes(DEMO_PASSWORD));
  writeFileSync(path, recorded.replace('"page":2', '"page":7'));
  const env = { VMHOST_SECRET_PASSWORD: DEMO_PASSWORD };
  const done = cli(["--update", path], env);
  assert.equal(done.status, 0, done.stdout);
  assert.match(done.stdout, /UPDATED .*latency\.jsonl/);
  assert.match(done.stdout, /^-.*"page":7/m);
  assert.match(done.stdout, /^\+.*"page":2/m);
  const updated = readFileSync(path, "utf8");
  assert.ok(!updated.includes("-32800") && !updated.includes("-32003") && !updated.includes(DEMO_PASSWORD));
  const sends = (steps) => steps.filter((step) => "send" in step);
  assert.deepEqual(sends(stepsOf(path)), sends(recordedSteps));
  for (let run = 0; run < 10; run++) {
    const again = cli([path], env);
    assert.equal(again.status, 0, `run ${run + 1}: ${again.stdout}`);
  }
});

test("--update refuses when a reply the session had never comes", () => {
  const dir = folder();
  const path = join(dir, "stuck.jsonl");
  const steps = [{ args: ["--clock", "manual", "--test-controls"] },
    { send: { jsonrpc: "2.0", id: 1, method: "vm.create", params: { kind: "ProductList", id: "p" } } },
    { expect: { jsonrpc: "2.0", id: 1, result: "$any" } },
    { send: { jsonrpc: "2.0", id: 2, method: "control.backend.latency", params: { ms: 1000 } } },
    { expect: { jsonrpc: "2.0", id: 2, result: {} } },
    { send: { jsonrpc: "2.0", id: 3, method: "vm.send", params: { vm: "p", input: "refresh" } } },
    { expect: { jsonrpc: "2.0", id: 3, result: null } },
    { send: { jsonrpc: "2.0", id: 4, method: "ping" } },
    { expect: { jsonrpc: "2.0", id: 4, result: {} } }];
  const text = steps.map((s) => JSON.stringify(s) + "\n").join("");
  writeFileSync(path, text);
  const done = cli(["--update", "--read-limit", "1", path]);
  assert.equal(done.status, 1, done.stdout);
  assert.ok(done.stdout.includes(`FAIL ${path}:8: cannot keep the session`), done.stdout);
  assert.match(done.stdout, /NOT UPDATED/);
  assert.equal(readFileSync(path, "utf8"), text);
});

test("--backend-url points a recording at another backend; a failure names its step and suggests --offline", async () => {
  const { createServer: createHTTPServer } = await import("node:http");
  const { Host } = await import("../index.js");
  const serve = async () => {
    const calls = [];
    const server = createHTTPServer((request, response) => {
      calls.push(request.url);
      const body = JSON.stringify({ success: true, code: "0", message: "ok", data: [], page: { index: 1, size: 20, total: 0 } });
      response.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
      response.end(body);
    });
    await new Promise((done) => server.listen(0, "127.0.0.1", done));
    return { calls, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) };
  };
  const dir = folder();
  const path = join(dir, "http.jsonl");
  const first = await serve();
  const host = await Host.spawn(["--clock", "manual", "--test-controls", "--backend", first.url, "--record", path], { binary: BINARY });
  const products = await host.create("ProductList", { pageSize: 20 });
  await products.subscribe({ outputs: ["isEmpty", "loadState"] });
  await products.send("refresh");
  await host.close();
  await first.close();
  assert.equal((await cliAsync([path])).status, 2); // an address: refused
  const failed = await cliAsync(["--trust-args", path]);
  assert.equal(failed.status, 1, failed.stdout);
  assert.match(failed.stdout, /\n {2}after: {4}line \d+: \{("user":"refresh",)?"send":.*"input":"refresh"/);
  assert.match(failed.stdout, /hint: this recording holds its backend's answers.*--offline/);
  const second = await serve();
  try {
    const done = await cliAsync(["--backend-url", second.url, path]);
    assert.equal(done.status, 0, done.stdout);
    assert.deepEqual(second.calls, ["/products?page=1&pageSize=20"]);
  } finally {
    await second.close();
  }
  assert.equal((await cliAsync(["--backend-url", "ftp://x", path])).status, 2);
});

test("a long step is laid out one member or element per line, read back as the same step", () => {
  const short = { expect: { jsonrpc: "2.0", id: 1, result: {} } };
  assert.equal(stepText(short), JSON.stringify(short));
  const product = (n) => ({ id: `p${n}`, name: `Steady Growth ${n}`, bank: "CMB", profit: "4.35%", term: "90 days" });
  const long = { user: "loadMore", send: { jsonrpc: "2.0", id: 9, method: "x", params: { list: [1, 2, 3].map(product), empty: [] } } };
  const text = stepText(long);
  const lines = text.split("\n");
  assert.equal(lines[0], '{"user":"loadMore","send":{');
  assert.equal(lines[lines.length - 1], "}}");
  assert.ok(lines.slice(1).every((line) => !line.startsWith("{")), text);
  assert.ok(lines.every((line) => line.trimStart().length <= WIDTH), text);
  assert.ok(lines.includes(`      ${JSON.stringify(product(2))},`), text); // an element a line
  assert.deepEqual(JSON.parse(text), long);
  // A file of laid-out and one-line steps reads as its steps, each numbered by its first line.
  const dir = folder();
  const path = join(dir, "mixed.jsonl");
  writeFileSync(path, [JSON.stringify({ args: [] }), text, "", JSON.stringify(short)].join("\n") + "\n");
  assert.deepEqual(loadTranscript(path), [[1, { args: [] }], [2, long], [3 + lines.length, short]]);
  writeFileSync(path, [JSON.stringify({ args: [] }), text, "not json"].join("\n") + "\n");
  assert.throws(() => loadTranscript(path), new RegExp(`mixed\\.jsonl:(2|${2 + lines.length}): not JSON`));
});

test("a recording is laid out as --update writes it: an update of it is a no-op, a one-word change the line of that value", async () => {
  const { Host } = await import("../index.js");
  const dir = folder();
  const path = join(dir, "list.jsonl");
  const host = await Host.spawn(["--clock", "manual", "--test-controls", "--record", path], { binary: BINARY });
  const products = await host.create("ProductList", { pageSize: 20 });
  await products.subscribe({ diff: true });
  await products.send("refresh");
  await products.send("loadMore");
  await host.close();
  // The host writes each step as stepText does: the page's splice a product a line.
  const recorded = readFileSync(path, "utf8");
  assert.equal(recorded, stepsOf(path).map((step) => stepText(step) + "\n").join(""));
  const splice = stepsOf(path).map(stepText).find((text) => text.startsWith('{"expect"') && text.includes("稳健增利7号"));
  assert.ok(splice.split("\n").length > 20, splice);
  const update = () => {
    const done = cli(["--update", path]);
    assert.equal(done.status, 0, done.stdout);
    return done.stdout.split("\n").filter((line) => /^[-+]/.test(line) && !/^(---|\+\+\+) /.test(line));
  };
  const edit = (from, to) => {
    const lines = readFileSync(path, "utf8").split("\n");
    const at = lines.flatMap((line, index) => (line.includes(from) && !line.startsWith('{"backend"') ? [index] : []));
    assert.equal(at.length, 1, from);
    lines[at[0]] = lines[at[0]].replace(from, to);
    writeFileSync(path, lines.join("\n"));
    return update();
  };
  // Nothing changed: the update leaves the recording byte for byte.
  assert.deepEqual(update(), []);
  assert.equal(readFileSync(path, "utf8"), recorded);
  // A one-word change is the line of that product, removed and added.
  for (const [from, to] of [["稳健增利7号", "稳健增利七号"], ['"name":"安心盈8号"', '"name":"安心盈八号"']]) {
    const changed = edit(from, to);
    assert.equal(changed.length, 2, changed.join("\n"));
    assert.ok(changed[0].startsWith("-") && changed[0].includes(to) && changed[1].includes(from), changed.join("\n"));
    assert.equal(readFileSync(path, "utf8"), recorded);
  }
  for (const extra of [[], ["--offline"]]) {
    const done = cli([...extra, path]);
    assert.equal(done.status, 0, done.stdout);
  }
});
