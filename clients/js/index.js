// @ts-check
/**
 * Node client of vmhost: drives a `vmhost` process over JSON-RPC 2.0 (ndjson) on stdio.
 * See protocol/SPEC.md. Standard library only, Node >= 18, ESM.
 * @module vmhost
 */

import { spawn as spawnProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { debuglog } from "node:util";
import { ErrorCode, HostExited, RPCError, Session, UnknownMember, ViewModel } from "./protocol.js";

export { ErrorCode, HostExited, RPCError, Session, UnknownMember, ViewModel };

const debug = debuglog("vmhost");

/**
 * Finds the vmhost binary: `binary`, `$VMHOST_BIN` (which always wins over a build), the build of
 * this package's checkout, then of the checkouts around the working directory (the newer of
 * `.build/release/vmhost` and `.build/debug/vmhost`: {@link buildIn}), then `vmhost` on `PATH`.
 * `NODE_DEBUG=vmhost` prints the choice on stderr.
 * @param {string} [binary]
 * @returns {string}
 */
export function findBinary(binary) {
  if (binary) return binary;
  if (process.env.VMHOST_BIN) return process.env.VMHOST_BIN;
  const here = dirname(fileURLToPath(import.meta.url)); // <repo>/clients/js
  const roots = [resolve(here, "..", "..")];
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    if (!roots.includes(dir)) roots.push(dir);
    if (dirname(dir) === dir) break;
  }
  const tried = [];
  for (const root of roots) {
    const built = buildIn(root);
    if (built) {
      debug("vmhost binary: %s (the newer of %s/.build/release and debug)", built, root);
      return built;
    }
    tried.push(join(root, ".build", "release", "vmhost"), join(root, ".build", "debug", "vmhost"));
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, "vmhost"))) {
      debug("vmhost binary: %s (on PATH)", join(dir, "vmhost"));
      return join(dir, "vmhost");
    }
  }
  throw new Error(`vmhost binary not found: set VMHOST_BIN, build it (swift build) ` +
    `or put it on PATH (tried: ${tried.join(", ")})`);
}

/**
 * The vmhost built in the checkout `root`: the newer (by modification time) of
 * `.build/release/vmhost` and `.build/debug/vmhost`, so that an old build of the one never hides a
 * fresh build of the other (release on equal times); `undefined` when neither is there.
 * @param {string} root
 * @returns {string | undefined}
 */
export function buildIn(root) {
  /** @type {{path: string, time: number} | undefined} */
  let newest;
  for (const config of ["release", "debug"]) {
    const path = join(root, ".build", config, "vmhost");
    if (!isExecutable(path)) continue;
    let time;
    try {
      time = statSync(path).mtimeMs;
    } catch {
      continue;
    }
    if (!newest || time > newest.time) newest = { path, time };
  }
  return newest?.path;
}

/** @param {string} path */
function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Internal (used by the client and its conformance test; not part of the API): starts the binary
 * with `options`, stdin and stdout piped, and resolves with the child once it runs.
 * `stderr: "keep"` pipes the host's stderr so that {@link keepStderr} can keep its last lines.
 * @param {string[]} [options]
 * @param {{binary?: string, stderr?: "keep" | "inherit" | "ignore" | "pipe"}} [config]
 * @returns {Promise<import("node:child_process").ChildProcess>}
 */
export async function spawnChild(options = [], { binary, stderr = "keep" } = {}) {
  const path = findBinary(binary);
  const child = spawnProcess(path, [...options], { stdio: ["pipe", "pipe", stderr === "keep" ? "pipe" : stderr] });
  await new Promise((resolveSpawn, rejectSpawn) => {
    child.once("spawn", resolveSpawn);
    child.once("error", rejectSpawn);
  });
  return child;
}

const STDERR_LIMIT = 4096;

/**
 * Internal: keeps the last bytes `child` writes to stderr (when piped); `text()` returns them.
 * @param {import("node:child_process").ChildProcess} child
 * @returns {{text: () => string, ended: Promise<void>}}
 */
export function keepStderr(child) {
  /** @type {Buffer} */
  let kept = Buffer.alloc(0);
  const stream = child.stderr;
  const ended = new Promise((resolveEnded) => {
    if (!stream) return resolveEnded();
    stream.on("data", (chunk) => {
      kept = Buffer.concat([kept, chunk]);
      if (kept.length > STDERR_LIMIT) kept = kept.subarray(kept.length - STDERR_LIMIT);
    });
    stream.once("end", () => resolveEnded());
    stream.once("error", () => resolveEnded());
    stream.once("close", () => resolveEnded());
  });
  return { text: () => kept.toString("utf8").trim(), ended };
}

/**
 * Internal: `vmhost exited (status 64): Error: --backend: …`, the status and what the host said.
 * @param {number | null} code @param {string | null} signal @param {string} said
 */
export function exitMessage(code, signal, said) {
  const text = `vmhost exited (${signal ?? `status ${code}`})`;
  return said ? `${text}: ${said}` : text;
}

/**
 * Internal (used by the client and its conformance test; not part of the API): reads ndjson frames
 * from `stream` as they come, calling `onFrame` with every non-blank line (trimmed, unparsed) and
 * `onEnd` when the stream ends.
 * @param {NodeJS.ReadableStream} stream
 * @param {(line: string) => void} onFrame
 * @param {() => void} [onEnd]
 */
export function readFrames(stream, onFrame, onEnd) {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += String(chunk);
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onFrame(line);
    }
  });
  if (onEnd) stream.on("end", onEnd);
}

/** A running vmhost process: a {@link Session} over its stdin and stdout. */
export class Host extends Session {
  /**
   * Starts a host. Options pass through: `Host.spawn(["--clock", "manual", "--test-controls"])`.
   * `stderr` (the host's logs): `"keep"` (the default) keeps their last lines for
   * {@link HostExited} and {@link Host#stderr} without showing them; `"inherit"` shows them and
   * does not keep them; `"pipe"` keeps them and leaves `child.stderr` readable; `"ignore"` drops them.
   * @param {string[]} [options]
   * @param {{binary?: string, stderr?: "keep" | "inherit" | "ignore" | "pipe"}} [config]
   * @returns {Promise<Host>}
   */
  static async spawn(options = [], { binary, stderr = "keep" } = {}) {
    return new Host(await spawnChild(options, { binary, stderr }));
  }

  /** @param {import("node:child_process").ChildProcessWithoutNullStreams | import("node:child_process").ChildProcess} child */
  constructor(child) {
    super({ send: (text) => child.stdin?.write(text + "\n") });
    /** @private */ this.child = child;
    /** @type {number | null} */
    this.exitCode = null;
    /** @private */ this.stderrTail = keepStderr(child);
    /** Resolves with the exit status when the process ends. @type {Promise<number | null>} */
    this.exited = new Promise((resolveExit) => {
      child.once("exit", async (code, signal) => {
        // What the host wrote last on stderr explains the exit: wait for its end (bounded).
        let timer;
        await Promise.race([this.stderrTail.ended, new Promise((r) => { timer = setTimeout(r, 2000); })]);
        clearTimeout(timer);
        this.exitCode = code;
        this.fail(new HostExited(exitMessage(code, signal, this.stderrTail.text())));
        resolveExit(code);
      });
    });
    child.on("error", () => {}); // surfaced through `exited` / HostExited
    child.stdin?.on("error", () => {}); // EPIPE after exit: requests reject with HostExited
    if (child.stdout) readFrames(child.stdout, (line) => this.dispatch(line));
  }

  /** The last lines the host wrote to stderr (kept unless spawned with `stderr: "inherit"` or `"ignore"`). */
  get stderr() {
    return this.stderrTail.text();
  }

  /**
   * Shuts the host down cleanly (`shutdown`, then `exit`) and waits for the process to end.
   * @returns {Promise<number | null>} the exit status
   */
  async close() {
    if (!this.exitError) {
      try {
        await this.request("shutdown");
        this.notify("exit");
      } catch {
        this.child.stdin?.end();
      }
      this.child.stdin?.end();
    }
    return this.exited;
  }
}

