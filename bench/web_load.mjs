// Load benchmark of vmhost-web: opens many concurrent WebSocket sessions on loopback, each with a
// Login and a ProductList created and subscribed, then measures
//   - the server's memory per idle session: (RSS with every session open − RSS with one) / (N − 1);
//   - the round trip of a vm.send (Login.username, a value input) on one session at a time, with
//     every session connected: p50, p99, p99.9;
//   - the same round trip while every session sends at once (a burst of N requests);
//   - with --attack, the same round trip again while one more session, in a process of its own,
//     keeps sending the worst batch the limits allow (protocol/SPEC.md §10: 1,000 host.describe,
//     whose replies reach the 4 MiB bound), four in flight, a new one as each array is read.
// Uses the browser client (clients/web/vmhost.js) on Node's WebSocket.
//
//   node --experimental-websocket bench/web_load.mjs [--sessions 1000] [--samples 5000] [--bin PATH] [--attack]
// PATH defaults to .build-release-web/release/vmhost-web (build it with `scripts/build-release.sh vmhost-web`,
// the tuned release build of bench/README.md).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "../clients/web/vmhost.js";

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
const binary = args.bin ?? resolve(root, ".build-release-web/release/vmhost-web");
const loadAtStart = loadavg()[0];

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
// utime + stime of every thread of the server, in ms (clock ticks of 10 ms).
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

const server = spawn(binary, ["--listen", "127.0.0.1:0", "--log-level", "error"], { stdio: ["ignore", "ignore", "pipe"] });
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

const open = [await openSession()];
await new Promise((r) => setTimeout(r, 200));
const rssOne = rssKiB(server.pid);
const started = performance.now();
for (let i = 1; i < sessions; i += 50) {
  const batch = [];
  for (let j = i; j < Math.min(i + 50, sessions); j++) batch.push(openSession());
  open.push(...(await Promise.all(batch)));
}
const openSeconds = (performance.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 500));
const rssAll = rssKiB(server.pid);
const perSession = (rssAll - rssOne) / (sessions - 1);

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

// A burst: every session sends at once; the time until the last reply, and each one's round trip.
const burst = [];
const burstStart = performance.now();
await Promise.all(open.map(async ({ login }, i) => {
  const t0 = performance.now();
  await login.send("username", i % 2 ? "13900139000" : "1390013900");
  burst.push(performance.now() - t0);
}));
const burstTotal = performance.now() - burstStart;
burst.sort((a, b) => a - b);

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

const report = {
  binary, cpus: cpus().length, loadAverage: { start: loadAtStart, end: loadavg()[0] },
  sessions, samples, openSeconds: Number(openSeconds.toFixed(2)),
  rssOneSessionKiB: rssOne, rssAllSessionsKiB: rssAll, rssAfterRoundTripsKiB: rssEnd,
  memoryPerIdleSessionKiB: Number(perSession.toFixed(1)),
  serverCpuPerSendMicroseconds: Number((serverCpuPerSend * 1000).toFixed(1)),
  roundTrip: { p50: fmt(percentile(times, 50)), p99: fmt(percentile(times, 99)), p999: fmt(percentile(times, 99.9)) },
  burst: { total: fmt(burstTotal), p50: fmt(percentile(burst, 50)), p99: fmt(percentile(burst, 99)) },
  ...(attack && { duringWorstBatches: {
    batches: attack.batches, arrayBytes: attack.arrayBytes, seconds: Number(attack.seconds.toFixed(2)),
    serverCpuCores: Number(attack.serverBusy.toFixed(2)), p50: fmt(attack.p50), p99: fmt(attack.p99), p999: fmt(attack.p999) } }),
};
console.log(JSON.stringify(report, null, 2));
console.log(`
| figure | value | target |
|---|---|---|
| sessions open at once (Login + ProductList subscribed each) | ${sessions} (opened in ${openSeconds.toFixed(1)} s) | ≥ 1,000 |
| server RSS with 1 session / with all | ${rssOne} KiB / ${rssAll} KiB | |
| memory per idle session | ${perSession.toFixed(1)} KiB | ≤ 64 KiB |
| vm.send round trip, one at a time, all connected: p50 / p99 / p99.9 | ${fmt(percentile(times, 50))} / ${fmt(percentile(times, 99))} / ${fmt(percentile(times, 99.9))} | p99 ≤ 5 ms |
| server CPU per vm.send (all threads, one at a time) | ${(serverCpuPerSend * 1000).toFixed(1)} µs | |
| burst: every session sends at once: last reply after / p50 / p99 | ${fmt(burstTotal)} / ${fmt(percentile(burst, 50))} / ${fmt(percentile(burst, 99))} | |${attack ? `
| vm.send round trip while one more session sends the worst batch (${attack.batches} batches of 1,000 host.describe in ${attack.seconds.toFixed(1)} s, arrays of ${attack.arrayBytes} bytes, server busy ${attack.serverBusy.toFixed(2)} cores): p50 / p99 / p99.9 | ${fmt(attack.p50)} / ${fmt(attack.p99)} / ${fmt(attack.p999)} | p99 < 50 ms |` : ""}`);
process.exit(0);
