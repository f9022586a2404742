// A healthy session's ping while another session of the same worker floods it (bench/RESULTS.md,
// "Fair turns"): vmhost-web on one worker; the ping round trips of one session, one at a time,
// first alone, then while a second session, in a process of its own, pipelines the largest message
// the limits allow (SPEC §10: 4,194,304 bytes, a JSON array of 2,097,152 numbers: a batch with too
// many members, refused -32600 once parsed) as fast as TCP takes them, and never reads a reply.
// Reports p50 / p99 / p99.9 of both phases, the flood's frames written, the server's CPU and its
// peak RSS during the flood (what waits for the worker is bounded: SPEC §10, "messages waiting").
//
//   node --experimental-websocket bench/web_fairness.mjs [--samples 2000] [--bin PATH] [--workers 1]
//        [--bytes 4194304] [--message batch|params] [--flood-seconds 60] [--json-out FILE]
// The flooded phase takes --samples pings, or stops after --flood-seconds (then fewer are reported).
// PATH defaults to .build-release-web/release/vmhost-web (scripts/build-release.sh vmhost-web).
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "../clients/web/vmhost.js";
import { family, rssOf } from "./proc.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) =>
  arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1] === undefined || all[i + 1].startsWith("--") ? true : all[i + 1]]] : pairs, []));
const bytes = Number(args.bytes ?? 4 * 1024 * 1024);

const message = args.message ?? "batch";
if (!["batch", "params"].includes(message)) throw new Error(`--message: batch or params, not ${message}`);

// The largest message: "[1,1,...,1]" of exactly `bytes` bytes (--message batch: a batch of too
// many members, refused) or `{"jsonrpc":"2.0","method":"flood","params":[1,1,...,1]}` (--message
// params: a notification of a method the host does not have, read whole and ignored), in one
// masked text frame (a zero mask: the payload is sent as it is).
function floodFrame() {
  const [head, tail] = message === "batch" ? ["[", "]"] : ['{"jsonrpc":"2.0","method":"flood","params":[', "]}"];
  const count = Math.floor((bytes - head.length - tail.length + 1) / 2); // numbers: 2 * count - 1 bytes
  let text = head + "1,".repeat(count - 1) + "1" + tail;
  if (text.length < bytes) text = head + "1,".repeat(count - 1) + "1 " + tail; // one byte short: one space more
  const payload = Buffer.from(text);
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(payload.length), 2);
  // Bytes 10-13: the mask, zero.
  return Buffer.concat([header, payload]);
}

// The flooder, in its own process: a raw socket that writes the handshake, reads the 101, then
// stops reading and writes the frame again and again as TCP takes it.
if (args.flooder) {
  const port = Number(args.flooder);
  const frame = floodFrame();
  const socket = connect(port, "127.0.0.1");
  let head = "", written = 0;
  socket.on("error", (error) => { process.stdout.write(`error ${error.message}\n`); process.exit(1); });
  socket.on("connect", () => socket.write(
    `GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
  const onData = (chunk) => {
    head += chunk.toString("latin1");
    if (!head.includes("\r\n\r\n")) return;
    if (!head.startsWith("HTTP/1.1 101")) { process.stdout.write(`refused ${head.split("\r\n")[0]}\n`); process.exit(1); }
    socket.off("data", onData);
    socket.pause(); // never reads a reply again
    process.stdout.write("under way\n");
    const more = () => {
      while (socket.write(frame)) written++;
      written++;
      socket.once("drain", more);
    };
    more();
  };
  socket.on("data", onData);
  process.on("SIGTERM", () => { process.stdout.write(`frames ${written}\n`); process.exit(0); });
  await new Promise(() => {});
}

const samples = Number(args.samples ?? 2000);
const floodSeconds = Number(args["flood-seconds"] ?? 60);
const workers = Number(args.workers ?? 1);
const binary = args.bin ?? resolve(root, ".build-release-web/release/vmhost-web");

const rssKiB = (pid) => family(pid).reduce((sum, one) => sum + rssOf(one), 0);
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const cpuMs = (pid) => family(pid).reduce((sum, one) => sum + cpuOf(one), 0);
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

const server = spawn(binary, ["--listen", "127.0.0.1:0", "--log-level", "error", "--workers", String(workers)],
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

const healthy = await Host.connect(`ws://127.0.0.1:${port}/rpc`);
await healthy.initialize({ locale: "en" });

// `count` pings one at a time, or as many as `seconds` allow (a ping that takes seconds: the flood
// holds the session up).
async function pings(count, seconds = Infinity) {
  const times = [];
  const until = performance.now() + seconds * 1000;
  for (let i = 0; i < count && performance.now() < until; i++) {
    const t0 = performance.now();
    await healthy.ping();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

await pings(200); // warm-up
const rssIdle = rssKiB(server.pid);
const alone = await pings(samples);

const flooder = spawn(process.execPath, ["--experimental-websocket", fileURLToPath(import.meta.url), "--flooder", String(port), "--bytes", String(bytes), "--message", message],
  { stdio: ["ignore", "pipe", "inherit"] });
let said = "";
flooder.stdout.on("data", (chunk) => { said += chunk; });
while (!said.includes("under way")) {
  if (said.includes("refused") || said.includes("error")) throw new Error(`flooder: ${said}`);
  await new Promise((r) => setTimeout(r, 10));
}
// Let the flood fill what it may (the worker's room, TCP's buffers) before measuring.
await new Promise((r) => setTimeout(r, 1000));
let rssPeak = rssKiB(server.pid);
const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, rssKiB(server.pid)); }, 50);
const cpuStart = cpuMs(server.pid), start = performance.now();
const during = await pings(samples, floodSeconds);
const seconds = (performance.now() - start) / 1000;
const serverCores = (cpuMs(server.pid) - cpuStart) / 1000 / seconds;
clearInterval(sampler);
flooder.kill("SIGTERM");
await new Promise((r) => flooder.once("exit", r));
const frames = Number(/frames (\d+)/.exec(said)?.[1] ?? 0);

await healthy.close();
server.kill("SIGTERM");

const report = {
  binary, workers, bytes, message, samples, cpus: cpus().length, loadAverage: loadavg()[0],
  alone: { p50: fmt(percentile(alone, 50)), p99: fmt(percentile(alone, 99)), p999: fmt(percentile(alone, 99.9)) },
  flooded: {
    seconds: Number(seconds.toFixed(2)), pings: during.length, framesWritten: frames, serverCores: Number(serverCores.toFixed(2)),
    p50: fmt(percentile(during, 50)), p99: fmt(percentile(during, 99)), p999: fmt(percentile(during, 99.9)),
    max: fmt(during[during.length - 1]), p99Ms: Number(percentile(during, 99).toFixed(3)),
  },
  rssIdleKiB: rssIdle, rssPeakDuringFloodKiB: rssPeak,
};
console.log(JSON.stringify(report, null, 2));
if (args["json-out"]) appendFileSync(args["json-out"], JSON.stringify(report) + "\n");
console.log(`
| figure | value | target |
|---|---|---|
| healthy ping alone: p50 / p99 / p99.9 | ${report.alone.p50} / ${report.alone.p99} / ${report.alone.p999} | |
| healthy ping while another session pipelines ${bytes}-byte messages (${message}) unread (${during.length} pings; ${frames} frames written in ${seconds.toFixed(1)} s, server ${serverCores.toFixed(2)} cores): p50 / p99 / p99.9 / max | ${report.flooded.p50} / ${report.flooded.p99} / ${report.flooded.p999} / ${report.flooded.max} | p99 < 50 ms |
| server RSS idle / peak during the flood | ${rssIdle} KiB / ${rssPeak} KiB | |`);
process.exit(0);
