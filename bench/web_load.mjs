// Load benchmark of vmhost-web: opens many concurrent WebSocket sessions on loopback, each with a
// Login and a ProductList created and subscribed, then measures
//   - the server's memory per idle session: (RSS with every session open − RSS with one session on
//     each worker) / (N − workers), RSS summed over the supervisor and its workers;
//   - the round trip of a vm.send (Login.username, a value input) on one session at a time, with
//     every session connected: p50, p99, p99.9;
//   - the same round trip while every session sends at once (a burst of N requests), --bursts
//     times: the messages per second of each burst (N / the time until its last reply);
//   - sustained: every session keeps one vm.send in flight for --seconds: the messages per second
//     answered, and their round trips; with --rate R, the same for R messages per second sent at an
//     even pace, spread over the sessions (the round trip at a given load, whatever the server's size);
//     with --batch K, each frame of these phases is a batch of K vm.sends (a load whose host-thread
//     work outweighs the bytes carried);
//   - with --attack, the same round trip again while one more session, in a process of its own,
//     keeps sending the worst batch the limits allow (protocol/SPEC.md §10: 1,000 host.describe,
//     whose replies reach the 4 MiB bound), four in flight, a new one as each array is read.
// Uses the browser client (clients/web/vmhost.js) on Node's WebSocket.
//
//   node --experimental-websocket bench/web_load.mjs [--sessions 1000] [--samples 5000] [--bin PATH] [--attack]
//        [--workers N] [--bursts 10] [--seconds 10] [--rate R] [--batch K]
// PATH defaults to .build-release-web/release/vmhost-web (build it with `scripts/build-release.sh vmhost-web`,
// the tuned release build of bench/README.md). --workers is passed to the server (its default with the
// embedded backend is 1). Memory and CPU are those of the whole server: the supervisor and its workers.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "../clients/web/vmhost.js";
import { family, rssOf } from "./proc.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1] === undefined || all[i + 1].startsWith("--") ? true : all[i + 1]]] : pairs, []));
// The attacker of --attack, in its own process: the worst batch the limits allow, 4 in flight.
if (args.attacker) {
  const worst = JSON.stringify(Array.from({ length: 1000 }, (_, id) => ({ jsonrpc: "2.0", id, method: "host.describe" })));
  const socket = new WebSocket(args.attacker);
  let batches = 0, bytes = 0;
  socket.onmessage = (event) => {
    bytes = event.data.length;
    if (++batches === 1) process.stdout.write("under way\n");
    socket.send(worst);
  };
  process.on("SIGTERM", () => { process.stdout.write(`batches ${batches} bytes ${bytes}\n`); process.exit(0); });
  await new Promise((resolveOpen) => { socket.onopen = resolveOpen; });
  for (let i = 0; i < 4; i++) socket.send(worst);
  await new Promise(() => {});
}
const sessions = Number(args.sessions ?? 1000);
const samples = Number(args.samples ?? 5000);
const workers = args.workers === undefined ? null : Number(args.workers);
const burstCount = Number(args.bursts ?? 10);
const sustainSeconds = Number(args.seconds ?? 10);
const rate = args.rate === undefined ? null : Number(args.rate);
const binary = args.bin ?? resolve(root, ".build-release-web/release/vmhost-web");
const loadAtStart = loadavg()[0];

// The server's processes: the supervisor and its workers (its children).
const rssKiB = (pid) => family(pid).reduce((sum, one) => sum + rssOf(one), 0);
// utime + stime of every thread of every process of the server, in ms (clock ticks of 10 ms).
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const cpuMs = (pid) => family(pid).reduce((sum, one) => sum + cpuOf(one), 0);
// The machine's busy CPU time (every process, the kernel's included), in ms: /proc/stat.
const machineBusyMs = () => {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  return (fields.reduce((sum, value) => sum + value, 0) - idle) * 10;
};
// This process's own CPU, in ms.
const driverCpuMs = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1000; };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

const server = spawn(binary, ["--listen", "127.0.0.1:0", "--log-level", "error", ...(workers ? ["--workers", String(workers)] : [])],
  { stdio: ["ignore", "ignore", "pipe"] });
const port = await new Promise((resolvePort, reject) => {
  let text = "";
  server.stderr.on("data", (chunk) => {
    text += chunk;
    const found = /serving http:\/\/[^:]+:(\d+)\//.exec(text);
    if (found) resolvePort(Number(found[1]));
  });
  server.once("exit", (code) => reject(new Error(`vmhost-web exited (${code}): ${text}`)));
});
const url = `ws://127.0.0.1:${port}/rpc`;

async function openSession() {
  const host = await Host.connect(url);
  await host.initialize({ locale: "en" });
  const login = await host.create("Login");
  await login.subscribe();
  const products = await host.create("ProductList", { pageSize: 20 });
  await products.subscribe({ diff: true });
  return { host, login };
}

// One session on each worker first (the supervisor hands each new one to the least busy worker):
// what a worker holds once it serves its first session is the worker's, not a session's.
const first = workers ?? 1;
const open = [];
for (let i = 0; i < first; i++) open.push(await openSession());
await new Promise((r) => setTimeout(r, 200));
const rssOne = rssKiB(server.pid);
const started = performance.now();
for (let i = first; i < sessions; i += 50) {
  const batch = [];
  for (let j = i; j < Math.min(i + 50, sessions); j++) batch.push(openSession());
  open.push(...(await Promise.all(batch)));
}
const openSeconds = (performance.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 500));
const rssAll = rssKiB(server.pid);
const perSession = (rssAll - rssOne) / (sessions - first);
const processesRss = family(server.pid).map((pid) => ({ pid, rssKiB: rssOf(pid) }));

// Sequential round trips, spread over every session.
const times = [];
const cpuBefore = cpuMs(server.pid);
for (let i = 0; i < samples + 200; i++) {
  const { login } = open[i % open.length];
  const t0 = performance.now();
  await login.send("username", i % 2 ? "13800138000" : "1380013800");
  if (i >= 200) times.push(performance.now() - t0); // the first 200 warm up
}
const serverCpuPerSend = (cpuMs(server.pid) - cpuBefore) / (samples + 200);
times.sort((a, b) => a - b);

// The throughput phases write their frames themselves on each session's socket (the client's own
// handler set aside meanwhile), and read only what they need of the answers: the driver shares
// the machine with the server, so the less it takes, the more is left to measure. A frame is one
// vm.send (Login.username), or with --batch K a batch of K; each send changes the value's
// validity (one vm.changed, merged within a batch, and the reply). "Messages" are vm.sends.
const batch = Number(args.batch ?? 1);
const valid = ["13900139000", "13800138000"], invalid = ["1390013900", "1380013800"];
let nextId = 1_000_000_000; // ids the client never uses
function frameFor(vm, count) {
  const members = [];
  for (let j = 0; j < batch; j++) {
    const k = count * batch + j;
    members.push(`{"jsonrpc":"2.0","id":${nextId++},"method":"vm.send","params":{"vm":${JSON.stringify(vm)},"input":"username","value":"${k % 2 ? valid[(k >> 1) % 2] : invalid[(k >> 1) % 2]}"}}`);
  }
  return batch === 1 ? members[0] : `[${members.join(",")}]`;
}
// Each session's frames in flight (their send times, in order: a session answers in order), and
// what to do with each answer.
function raw(onAnswer) {
  const states = open.map(({ host, login }) => ({ socket: host.socket, vm: login.id, sent: [], count: 0 }));
  for (const state of states) {
    state.saved = state.socket.onmessage;
    state.socket.onmessage = (event) => {
      const text = event.data;
      // An answer: a batch's array, or a response (which has an id; a notification has none).
      if (text[0] !== "[" && !text.includes('"id":')) return;
      if (text[0] !== "[" && JSON.parse(text).id === undefined) return;
      onAnswer(state, performance.now() - state.sent.shift());
    };
  }
  const send = (state) => {
    state.sent.push(performance.now());
    state.socket.send(frameFor(state.vm, state.count++));
  };
  const restore = () => { for (const state of states) state.socket.onmessage = state.saved; };
  return { states, send, restore };
}

// Bursts: every session sends at once; the time until the last answer, and each one's round trip.
const bursts = [];
const burstTimes = [];
for (let b = 0; b < burstCount; b++) {
  let left = open.length;
  let done;
  const finished = new Promise((resolveDone) => { done = resolveDone; });
  const { states, send, restore } = raw((_, time) => {
    burstTimes.push(time);
    if (--left === 0) done();
  });
  const burstStart = performance.now();
  for (const state of states) send(state);
  await finished;
  const total = performance.now() - burstStart;
  restore();
  bursts.push({ total, perSecond: (open.length * batch) / (total / 1000) });
}
burstTimes.sort((a, b) => a - b);
const burstTotal = median(bursts.map((one) => one.total));
const burstRate = median(bursts.map((one) => one.perSecond));

// Sustained, for `seconds`: each session keeps one frame in flight (closed loop, pace null), or
// `pace` vm.sends per second are sent at an even pace, round robin over the sessions.
async function sustained(seconds, pace) {
  const times = [];
  let stop = false, answered = 0, inFlight = 0;
  let drained;
  const allAnswered = new Promise((resolveDrained) => { drained = resolveDrained; });
  const { states, send, restore } = raw((state, time) => {
    times.push(time);
    answered += batch;
    inFlight--;
    if (pace === null && !stop) {
      inFlight++;
      send(state);
    } else if (stop && inFlight === 0) drained();
  });
  const cpuStart = cpuMs(server.pid), driverStart = driverCpuMs(), machineStart = machineBusyMs(), start = performance.now();
  let tick = null;
  if (pace === null) {
    for (const state of states) { inFlight++; send(state); }
  } else {
    // Every millisecond, the frames due by then.
    let sent = 0;
    tick = setInterval(() => {
      const due = Math.floor(((performance.now() - start) / 1000) * pace / batch);
      for (; sent < due && !stop; sent++) { inFlight++; send(states[sent % states.length]); }
    }, 1);
  }
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - start) / 1000;
  const answeredInTime = answered;
  const serverCores = (cpuMs(server.pid) - cpuStart) / 1000 / elapsed;
  const driverCores = (driverCpuMs() - driverStart) / 1000 / elapsed;
  const machineCores = (machineBusyMs() - machineStart) / 1000 / elapsed;
  stop = true;
  if (tick) clearInterval(tick);
  if (inFlight > 0) await allAnswered;
  restore();
  times.sort((a, b) => a - b);
  return {
    perSecond: answeredInTime / elapsed, answered: answeredInTime, seconds: elapsed, serverCores, driverCores, machineCores,
    p50: percentile(times, 50), p99: percentile(times, 99), p999: percentile(times, 99.9),
  };
}
const closedLoop = await sustained(sustainSeconds, null);
const paced = rate === null ? null : await sustained(sustainSeconds, rate);

// The round trips again, while one more session, in a process of its own (so that reading its
// arrays costs this one nothing), sends the worst batch the limits allow, keeping 4 in flight (a
// new one as each array is read) until the samples are taken.
let attack = null;
if (args.attack) {
  const attacker = spawn(process.execPath, ["--experimental-websocket", fileURLToPath(import.meta.url), "--attacker", url],
    { stdio: ["ignore", "pipe", "inherit"] });
  let said = "";
  attacker.stdout.on("data", (chunk) => { said += chunk; });
  while (!said.includes("under way")) await new Promise((r) => setTimeout(r, 10));
  const during = [];
  const cpuAttackStart = cpuMs(server.pid);
  const attackStart = performance.now();
  for (let i = 0; i < samples; i++) {
    const { login } = open[i % open.length];
    const t0 = performance.now();
    await login.send("username", i % 2 ? "13800138000" : "1380013800");
    during.push(performance.now() - t0);
  }
  const seconds = (performance.now() - attackStart) / 1000;
  const serverBusy = (cpuMs(server.pid) - cpuAttackStart) / 1000 / seconds;
  attacker.kill("SIGTERM");
  await new Promise((r) => attacker.once("exit", r));
  const [batches, arrayBytes] = /batches (\d+) bytes (\d+)/.exec(said)?.slice(1).map(Number) ?? [0, 0];
  during.sort((a, b) => a - b);
  attack = { batches, arrayBytes, seconds, serverBusy, p50: percentile(during, 50), p99: percentile(during, 99), p999: percentile(during, 99.9) };
}
const rssEnd = rssKiB(server.pid);

await Promise.all(open.map(({ host }) => host.close()));
server.kill("SIGTERM");

const sustainedReport = (one) => one && {
  perSecond: Math.round(one.perSecond), answered: one.answered, seconds: Number(one.seconds.toFixed(2)),
  serverCores: Number(one.serverCores.toFixed(2)), driverCores: Number(one.driverCores.toFixed(2)),
  machineCores: Number(one.machineCores.toFixed(2)),
  p50: fmt(one.p50), p99: fmt(one.p99), p999: fmt(one.p999) };
const report = {
  binary, workers: workers ?? "default", batch, cpus: cpus().length, loadAverage: { start: loadAtStart, end: loadavg()[0] },
  sessions, samples, openSeconds: Number(openSeconds.toFixed(2)),
  rssOneSessionKiB: rssOne, rssAllSessionsKiB: rssAll, rssAfterRoundTripsKiB: rssEnd, processesRss,
  memoryPerIdleSessionKiB: Number(perSession.toFixed(1)),
  serverCpuPerSendMicroseconds: Number((serverCpuPerSend * 1000).toFixed(1)),
  roundTrip: { p50: fmt(percentile(times, 50)), p99: fmt(percentile(times, 99)), p999: fmt(percentile(times, 99.9)) },
  burst: { bursts: burstCount, total: fmt(burstTotal), perSecond: Math.round(burstRate),
    eachPerSecond: bursts.map((one) => Math.round(one.perSecond)),
    p50: fmt(percentile(burstTimes, 50)), p99: fmt(percentile(burstTimes, 99)) },
  sustained: sustainedReport(closedLoop),
  ...(paced && { paced: { rate, ...sustainedReport(paced) } }),
  ...(attack && { duringWorstBatches: {
    batches: attack.batches, arrayBytes: attack.arrayBytes, seconds: Number(attack.seconds.toFixed(2)),
    serverCpuCores: Number(attack.serverBusy.toFixed(2)), p50: fmt(attack.p50), p99: fmt(attack.p99), p999: fmt(attack.p999) } }),
};
console.log(JSON.stringify(report, null, 2));
console.log(`
| figure | value | target |
|---|---|---|
| sessions open at once (Login + ProductList subscribed each) | ${sessions} (opened in ${openSeconds.toFixed(1)} s) | ≥ 1,000 |
| server RSS with 1 session per worker / with all | ${rssOne} KiB / ${rssAll} KiB | |
| memory per idle session | ${perSession.toFixed(1)} KiB | ≤ 64 KiB |
| vm.send round trip, one at a time, all connected: p50 / p99 / p99.9 | ${fmt(percentile(times, 50))} / ${fmt(percentile(times, 99))} / ${fmt(percentile(times, 99.9))} | p99 ≤ 5 ms |
| server CPU per vm.send (all threads, one at a time) | ${(serverCpuPerSend * 1000).toFixed(1)} µs | |
| burst: every session sends at once (median of ${burstCount}): last reply after / messages per second | ${fmt(burstTotal)} / ${Math.round(burstRate)} | |
| burst round trips, all bursts: p50 / p99 | ${fmt(percentile(burstTimes, 50))} / ${fmt(percentile(burstTimes, 99))} | |
| sustained, each session one send in flight for ${sustainSeconds} s: messages per second / p50 / p99 / p99.9 | ${Math.round(closedLoop.perSecond)} / ${fmt(closedLoop.p50)} / ${fmt(closedLoop.p99)} / ${fmt(closedLoop.p999)} | |
| sustained: server CPU / driver CPU / the whole machine busy | ${closedLoop.serverCores.toFixed(2)} / ${closedLoop.driverCores.toFixed(2)} / ${closedLoop.machineCores.toFixed(2)} cores | |${paced ? `
| paced, ${rate} sends per second for ${sustainSeconds} s: answered per second / p50 / p99 / p99.9 | ${Math.round(paced.perSecond)} / ${fmt(paced.p50)} / ${fmt(paced.p99)} / ${fmt(paced.p999)} | |` : ""}${attack ? `
| vm.send round trip while one more session sends the worst batch (${attack.batches} batches of 1,000 host.describe in ${attack.seconds.toFixed(1)} s, arrays of ${attack.arrayBytes} bytes, server busy ${attack.serverBusy.toFixed(2)} cores): p50 / p99 / p99.9 | ${fmt(attack.p50)} / ${fmt(attack.p99)} / ${fmt(attack.p999)} | p99 < 50 ms |` : ""}`);
process.exit(0);
