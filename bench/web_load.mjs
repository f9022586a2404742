// Load benchmark of vmhost-web: opens many concurrent WebSocket sessions on loopback, each with a
// Login and a ProductList created and subscribed, then measures
//   - the server's memory per idle session: (RSS with every session open − RSS with one) / (N − 1);
//   - the round trip of a vm.send (Login.username, a value input) on one session at a time, with
//     every session connected: p50, p99, p99.9;
//   - the same round trip while every session sends at once (a burst of N requests).
// Uses the browser client (clients/web/vmhost.js) on Node's WebSocket.
//
//   node --experimental-websocket bench/web_load.mjs [--sessions 1000] [--samples 5000] [--bin PATH]
// PATH defaults to .build-release/release/vmhost-web (build it with `scripts/build-release.sh vmhost-web`,
// the tuned release build of bench/README.md).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "../clients/web/vmhost.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs, []));
const sessions = Number(args.sessions ?? 1000);
const samples = Number(args.samples ?? 5000);
const binary = args.bin ?? resolve(root, ".build-release/release/vmhost-web");
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
| burst: every session sends at once: last reply after / p50 / p99 | ${fmt(burstTotal)} / ${fmt(percentile(burst, 50))} / ${fmt(percentile(burst, 99))} | |`);
process.exit(0);
