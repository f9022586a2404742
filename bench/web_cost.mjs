// What a message costs vmhost-web against its floor, a bare hummingbird-websocket echo built on the
// same hummingbird, hummingbird-websocket and SwiftNIO versions with the same release flags
// (web/Sources/web-echo-floor; both built by `scripts/build-release.sh vmhost-web web-echo-floor`).
//
// The message, for both: the text frame {"jsonrpc":"2.0","id":1,"method":"ping"} (40 bytes; the same
// bytes every time). vmhost-web answers it ({"jsonrpc":"2.0","id":1,"result":{}}); the echo writes the
// frame back. Sessions are bare: a WebSocket handshake at plain /rpc (not resumable), no initialize,
// no view-model. Each round starts each server afresh, in turn (the first alternates round by round),
// and measures on it:
//   - one socket: one session sends K messages one at a time (the next once the answer is read),
//     after a warm-up; the CPU of the whole server per message, utime + stime of every process of
//     the server (/proc/PID/stat, threads that ended included), and its context switches;
//   - one socket pipelined: the same session keeps W messages in flight (--window, 32), K in all;
//   - memory per idle session: (RSS with N sessions open − RSS with 1) / (N − 1), each session
//     having been answered one message (RSS summed over the server's processes);
//   - N sessions: each of the N sessions keeps one message in flight (the next sent once its answer
//     is read), M messages in all after a warm-up of as many; the same CPU per message.
// Then prints the medians of each and the ratio vmhost-web / echo, round by round and of the medians.
// With --before PATH, a third server, vmhost-web built from another commit, is measured in the same
// rounds (alternated with the others), and its ratios to the echo printed too.
// The driver is pinned to core 0 and each server to core 1 (taskset) unless --no-pin: the driver's
// own work then does not run on the server's core, and a server's threads (event loop, host
// thread, pool) share its core. Each is told --workers 1 (vmhost-web: a supervisor and one worker;
// the figures are of both processes).
//
//   node bench/web_cost.mjs [--rounds 5] [--sessions 1000] [--one 20000] [--many 100000]
//        [--window 32] [--vmhost PATH] [--echo PATH] [--before PATH] [--no-pin] [--only vmhost|echo]
// The driver speaks WebSocket itself over node:net (no dependency; frames masked with a zero key, so
// a message's bytes are written as they are), to keep its own cost low.
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { family, rssOf } from "./proc.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1] === undefined || all[i + 1].startsWith("--") ? true : all[i + 1]]] : pairs, []));
const rounds = Number(args.rounds ?? 5);
const sessionCount = Number(args.sessions ?? 1000);
const oneCount = Number(args.one ?? 20000);
const manyCount = Number(args.many ?? 100000);
const window = Number(args.window ?? 32);
const pin = !args["no-pin"];
const servers = {
  vmhost: args.vmhost ?? resolve(root, ".build-release-web/release/vmhost-web"),
  echo: args.echo ?? resolve(root, ".build-release-web/release/web-echo-floor"),
};
if (args.before) servers.before = args.before;
const names = args.only ? [args.only] : ["vmhost", "echo", ...(args.before ? ["before"] : [])];
const isVmhost = (name) => name !== "echo";
const message = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}');
const expectedAnswer = (name) => (isVmhost(name) ? '{"jsonrpc":"2.0","id":1,"result":{}}' : message.toString());

// A masked client text frame (RFC 6455 §5.2) with a zero key: the payload is unchanged.
function clientFrame(opcode, payload) {
  if (payload.length > 125) throw new Error("only short frames");
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}
const pingFrame = clientFrame(1, message);

// The server's processes: the one started and its children.
const ticksMs = 10; // USER_HZ 100
const statOf = (pid) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
// utime + stime of every thread of the process, ended ones included, in ms.
const cpuMs = (pids) => pids.reduce((sum, pid) => { const f = statOf(pid); return sum + (Number(f[11]) + Number(f[12])) * ticksMs; }, 0);
// Context switches of the live threads, voluntary and not.
const switches = (pids) => pids.reduce((sum, pid) => {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, "utf8");
      total += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]);
    } catch { /* ended meanwhile */ }
  }
  return sum + total;
}, 0);
const rssKiB = (pids) => pids.reduce((sum, pid) => sum + rssOf(pid), 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (values) => { const s = [...values].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

async function start(name) {
  const command = pin ? "taskset" : servers[name];
  const base = isVmhost(name) ? ["--listen", "127.0.0.1:0", "--log-level", "error", "--workers", "1"] : ["0"];
  const child = spawn(command, pin ? ["-c", "1", servers[name], ...base] : base, { stdio: ["ignore", "pipe", "pipe"] });
  const port = await new Promise((resolvePort, reject) => {
    let text = "";
    const look = (chunk) => {
      text += chunk;
      const found = isVmhost(name) ? /serving http:\/\/[^:]+:(\d+)\//.exec(text) : /^(\d+)$/m.exec(text);
      if (found) resolvePort(Number(found[1]));
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${text}`)));
  });
  // vmhost-web's worker is a child of the process started (found once it serves).
  return { child, port };
}

// One WebSocket session: counts the text frames it reads; answers pings.
function open(port, onText) {
  return new Promise((resolveOpen, reject) => {
    const socket = connect({ host: "127.0.0.1", port, noDelay: true });
    let handshake = true, pending = Buffer.alloc(0);
    const session = { socket, onText, last: null };
    socket.on("error", reject);
    socket.on("connect", () => {
      socket.write(`GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    });
    socket.on("data", (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      if (handshake) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = pending.subarray(0, end).toString();
        if (!head.startsWith("HTTP/1.1 101")) { reject(new Error(`handshake refused: ${head}`)); return; }
        handshake = false;
        pending = pending.subarray(end + 4);
        resolveOpen(session);
      }
      while (pending.length >= 2) {
        let length = pending[1] & 0x7f, at = 2;
        if (length === 126) { if (pending.length < 4) return; length = pending.readUInt16BE(2); at = 4; }
        else if (length === 127) { if (pending.length < 10) return; length = Number(pending.readBigUInt64BE(2)); at = 10; }
        if (pending.length < at + length) return;
        const opcode = pending[0] & 0x0f, payload = pending.subarray(at, at + length);
        pending = pending.subarray(at + length);
        if (opcode === 1) { session.last = payload; session.onText(session); }
        else if (opcode === 9) socket.write(clientFrame(10, Buffer.from(payload)));
        else if (opcode === 8) socket.destroy();
      }
    });
  });
}

// Every session keeps `inFlight` messages in flight (sending one as each answer is read) until
// `count` messages were sent in all; resolves once every one is answered.
function run(sessions, count, inFlight = 1) {
  return new Promise((done, fail) => {
    let sent = 0, answered = 0;
    const deadline = setTimeout(() => fail(new Error(`${answered} of ${count} messages answered after 300 s`)), 300_000);
    done = ((resolveRun) => () => { clearTimeout(deadline); resolveRun(); })(done);
    const next = (session) => {
      if (sent < count) { sent++; session.socket.write(pingFrame); }
    };
    for (const session of sessions) {
      session.onText = (s) => { if (++answered === count) done(); else next(s); };
    }
    for (let i = 0; i < inFlight; i++) for (const session of sessions) next(session);
  });
}

// One round on `name`: one socket, memory, N sessions.
async function round(name) {
  const result = {};
  let { child, port } = await start(name);
  await sleep(300);
  let pids = family(child.pid);
  const first = await open(port, () => {});
  await run([first], 2000); // warm-up
  const answer = first.last.toString();
  if (answer !== expectedAnswer(name)) throw new Error(`${name} answered ${answer}`);
  let cpu0 = cpuMs(pids), sw0 = switches(pids);
  await run([first], oneCount);
  result.oneUs = ((cpuMs(pids) - cpu0) * 1000) / oneCount;
  result.oneSwitches = (switches(pids) - sw0) / oneCount;
  cpu0 = cpuMs(pids);
  await run([first], oneCount, window);
  result.pipelinedUs = ((cpuMs(pids) - cpu0) * 1000) / oneCount;
  await sleep(300);
  const rssOne = rssKiB(pids);
  const sessions = [first];
  for (let i = 1; i < sessionCount; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(i + 100, sessionCount); j++) batch.push(open(port, () => {}));
    const opened = await Promise.all(batch);
    await run(opened, opened.length);
    sessions.push(...opened);
  }
  await sleep(1000);
  result.sessionKiB = (rssKiB(pids) - rssOne) / (sessionCount - 1);
  await run(sessions, manyCount); // warm-up
  cpu0 = cpuMs(pids); sw0 = switches(pids);
  await run(sessions, manyCount);
  result.manyUs = ((cpuMs(pids) - cpu0) * 1000) / manyCount;
  result.manySwitches = (switches(pids) - sw0) / manyCount;
  for (const session of sessions) session.socket.destroy();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return result;
}

if (pin) {
  // The driver on core 0.
  spawn("taskset", ["-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
  await sleep(100);
}
console.log(`# ${new Date().toISOString()} ${cpus().length} cores (${cpus()[0].model}), load ${loadavg().map((l) => l.toFixed(2)).join(" ")}; `
  + `${rounds} rounds, one socket ${oneCount} messages (one at a time, then ${window} in flight), ${sessionCount} sessions ${manyCount} messages; pinned: ${pin}`);
const results = Object.fromEntries(names.map((name) => [name, []]));
const line = (m) => `one socket ${m.oneUs.toFixed(2)} µs/msg (${m.oneSwitches.toFixed(2)} switches), pipelined ${m.pipelinedUs.toFixed(2)}  `
  + `${sessionCount} sessions ${m.manyUs.toFixed(2)} µs/msg (${m.manySwitches.toFixed(2)} switches)  idle session ${m.sessionKiB.toFixed(1)} KiB`;
const ratioLine = (v, e) => `one socket ${(v.oneUs / e.oneUs).toFixed(3)}x, pipelined ${(v.pipelinedUs / e.pipelinedUs).toFixed(3)}x  `
  + `${sessionCount} sessions ${(v.manyUs / e.manyUs).toFixed(3)}x  idle session ${(v.sessionKiB / e.sessionKiB).toFixed(3)}x`;
const vmhostNames = names.filter(isVmhost);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...names].reverse() : names;
  for (const name of order) {
    const one = await round(name);
    results[name].push(one);
    console.log(`round ${r + 1} ${name.padEnd(6)} ${line(one)}`);
  }
  if (names.includes("echo")) {
    for (const name of vmhostNames) console.log(`round ${r + 1} ${name.padEnd(6)}/echo ${ratioLine(results[name][r], results.echo[r])}`);
  }
}
console.log(`# load at the end ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const keys = ["oneUs", "oneSwitches", "pipelinedUs", "manyUs", "manySwitches", "sessionKiB"];
const medians = Object.fromEntries(names.map((name) => [name, Object.fromEntries(keys.map((k) => [k, median(results[name].map((one) => one[k]))]))]));
for (const name of names) console.log(`median ${name.padEnd(6)} ${line(medians[name])}`);
if (names.includes("echo")) {
  for (const name of vmhostNames) {
    const ratio = (k) => median(results[name].map((v, i) => v[k] / results.echo[i][k])).toFixed(3);
    console.log(`median of the round ratios ${name}/echo  one socket ${ratio("oneUs")}x, pipelined ${ratio("pipelinedUs")}x  `
      + `${sessionCount} sessions ${ratio("manyUs")}x  idle session ${ratio("sessionKiB")}x`);
  }
}
