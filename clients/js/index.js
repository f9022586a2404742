// @ts-check
/**
 * Node client of vmhost: drives a `vmhost` process over JSON-RPC 2.0 (ndjson) on stdio.
 * See protocol/SPEC.md. Standard library only, Node >= 18, ESM.
 * @module vmhost
 */

import { spawn as spawnProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** An error answered by the host: `code`, `message` and `data` as in JSON-RPC 2.0. */
export class RPCError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(code, message, data) {
    super(`${message} (${code})`);
    this.name = "RPCError";
    /** @type {number} */
    this.code = code;
    /** @type {string} */
    this.rpcMessage = message;
    /** @type {unknown} */
    this.data = data;
  }

  /** The message as the host sent it (without the code). */
  get detail() {
    return this.rpcMessage;
  }
}

/** The JSON-RPC error codes of vmhost (protocol/SPEC.md §2). */
export const ErrorCode = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  UnknownViewModel: -32001,
  UnknownMember: -32002,
  InputDisabled: -32003,
  CommandFailed: -32004,
  HostShuttingDown: -32005,
});

/** A misspelt input, output or event name, caught locally before anything is sent. */
export class UnknownMember extends RPCError {
  /**
   * @param {string} vm
   * @param {string} what  "input", "output" or "event"
   * @param {string} name
   * @param {string[]} valid
   */
  constructor(vm, what, name, valid) {
    super(ErrorCode.UnknownMember,
      `Unknown ${what} "${name}" of ${vm} (valid: ${valid.join(", ")})`,
      { vm, [what === "input" ? "input" : "output"]: name });
    this.name = "UnknownMember";
    /** @type {string[]} */
    this.valid = valid;
  }
}

/** The host process ended (or could not start) before answering. */
export class HostExited extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "HostExited";
  }
}

/**
 * Finds the vmhost binary: `binary`, `$VMHOST_BIN`, `<repo>/.build/release/vmhost`,
 * `<repo>/.build/debug/vmhost`, then `vmhost` on `PATH`.
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
    for (const config of ["release", "debug"]) {
      const candidate = join(root, ".build", config, "vmhost");
      tried.push(candidate);
      if (isExecutable(candidate)) return candidate;
    }
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, "vmhost"))) return join(dir, "vmhost");
  }
  throw new Error(`vmhost binary not found: set VMHOST_BIN, build it (swift build -c release) ` +
    `or put it on PATH (tried: ${tried.join(", ")})`);
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

/**
 * @typedef {{name: string, kind: "value" | "trigger" | "command", value?: unknown, policy?: string}} InputInfo
 * @typedef {{name: string, kind: "property" | "event", schema?: unknown}} OutputInfo
 * @typedef {{vm: string, kind: string, inputs: InputInfo[], outputs: OutputInfo[]}} CreateResult
 * @typedef {{index: number, remove: number, insert: unknown[]}} Splice
 * @typedef {{vm: string, values: Record<string, unknown>, splices?: Record<string, Splice[]>}} Change
 * @typedef {{vm: string, name: string, value: unknown}} VMEvent
 */

/** A running vmhost process. */
export class Host {
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
    /** @private */ this.child = child;
    /** @private */ this.nextId = 1;
    /** @private @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
    this.pending = new Map();
    /** @private @type {Map<string, ViewModel>} subscription → view-model */
    this.subscriptions = new Map();
    /** @type {number | null} */
    this.exitCode = null;
    /** @private @type {Error | null} */
    this.exitError = null;
    /** @private */ this.stderrTail = keepStderr(child);
    /** Resolves with the exit status when the process ends. @type {Promise<number | null>} */
    this.exited = new Promise((resolveExit) => {
      child.once("exit", async (code, signal) => {
        // What the host wrote last on stderr explains the exit: wait for its end (bounded).
        let timer;
        await Promise.race([this.stderrTail.ended, new Promise((r) => { timer = setTimeout(r, 2000); })]);
        clearTimeout(timer);
        this.exitCode = code;
        this.exitError = new HostExited(exitMessage(code, signal, this.stderrTail.text()));
        for (const { reject } of this.pending.values()) reject(this.exitError);
        this.pending.clear();
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

  /** @private @param {string} line */
  dispatch(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    for (const item of Array.isArray(message) ? message : [message]) {
      if (item && typeof item === "object" && "method" in item && !("id" in item)) {
        this.notification(item.method, item.params ?? {});
      } else if (item && typeof item === "object" && typeof item.id === "number") {
        const waiter = this.pending.get(item.id);
        if (!waiter) continue;
        this.pending.delete(item.id);
        if (item.error) {
          const { code, message: text, data } = item.error;
          waiter.reject(new RPCError(code, text, data));
        } else {
          waiter.resolve(item.result);
        }
      }
    }
  }

  /** @private @param {string} method @param {any} params */
  notification(method, params) {
    const vm = this.subscriptions.get(params.subscription);
    if (!vm) return;
    if (method === "vm.changed") vm._changed(params);
    else if (method === "vm.event") vm._event(params);
  }

  /** @private @param {object} message */
  write(message) {
    if (this.exitError) throw this.exitError;
    this.child.stdin?.write(JSON.stringify(message) + "\n");
  }

  /**
   * Sends a request; resolves with its result or rejects with {@link RPCError}.
   * Aborting `signal` sends `$/cancelRequest` (the host answers -32800).
   * @param {string} method
   * @param {object | unknown[]} [params]
   * @param {{signal?: AbortSignal}} [options]
   * @returns {Promise<any>}
   */
  request(method, params, { signal } = {}) {
    if (signal?.aborted) {
      return Promise.reject(new RPCError(ErrorCode.RequestCancelled, "request cancelled"));
    }
    const id = this.nextId++;
    return new Promise((resolveRequest, rejectRequest) => {
      const onAbort = () => {
        if (this.pending.has(id) && !this.exitError) {
          this.write({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } });
        }
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.pending.set(id, {
        resolve: (value) => { done(); resolveRequest(value); },
        reject: (error) => { done(); rejectRequest(error); },
      });
      try {
        this.write({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
      } catch (error) {
        this.pending.delete(id);
        rejectRequest(error);
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Sends a notification (no reply).
   * @param {string} method
   * @param {object | unknown[]} [params]
   */
  notify(method, params) {
    this.write({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** @returns {Promise<{}>} */
  ping() {
    return this.request("ping");
  }

  /** @param {{locale?: string, clientInfo?: object}} [params] */
  initialize(params = {}) {
    return this.request("initialize", { protocolVersion: "1", ...params });
  }

  /** @param {string} [kind] */
  describe(kind) {
    return this.request("host.describe", kind === undefined ? {} : { kind });
  }

  /** @returns {Promise<{vm: string, kind: string}[]>} */
  list() {
    return this.request("vm.list");
  }

  /**
   * Creates a view-model and returns its proxy.
   * @param {string} kind
   * @param {object} [args]
   * @param {string} [id]
   * @returns {Promise<ViewModel>}
   */
  async create(kind, args, id) {
    /** @type {Record<string, unknown>} */
    const params = { kind };
    if (args !== undefined) params.args = args;
    if (id !== undefined) params.id = id;
    const result = await this.request("vm.create", params);
    return new ViewModel(this, result);
  }

  /** @internal @param {string} subscription @param {ViewModel | null} vm */
  _track(subscription, vm) {
    if (vm) this.subscriptions.set(subscription, vm);
    else this.subscriptions.delete(subscription);
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

/** A view-model living in the host, built from the `vm.create` reply. */
export class ViewModel {
  /**
   * @param {Host} host
   * @param {CreateResult} info
   */
  constructor(host, info) {
    /** @type {Host} */
    this.host = host;
    /** The handle. @type {string} */
    this.id = info.vm;
    /** @type {string} */
    this.kind = info.kind;
    /** @type {InputInfo[]} */
    this.inputs = info.inputs;
    /** @type {OutputInfo[]} */
    this.outputs = info.outputs;
    /** The mirror of subscribed properties, kept current from `vm.changed`. @type {Record<string, any>} */
    this.values = {};
    /** @type {string | null} */
    this.subscription = null;
    /** @private @type {Map<string, Set<(value: any) => void>>} */
    this.listeners = new Map();
    for (const input of info.inputs) {
      if (!(input.name in this)) {
        Object.defineProperty(this, input.name, {
          value: (/** @type {unknown} */ value, /** @type {{signal?: AbortSignal}} */ options) =>
            this.send(input.name, value, options),
          enumerable: false,
        });
      }
    }
  }

  /** Names of properties. @returns {string[]} */
  get propertyNames() {
    return this.outputs.filter((o) => o.kind === "property").map((o) => o.name);
  }

  /** Names of events. @returns {string[]} */
  get eventNames() {
    return this.outputs.filter((o) => o.kind === "event").map((o) => o.name);
  }

  /**
   * Sends an input. Commands resolve with their `value` when they end; value and trigger inputs
   * once applied. Rejects with RPCError (-32004 with the domain error in `data`, -32003, -32800…).
   * @param {string} input
   * @param {unknown} [value]
   * @param {{signal?: AbortSignal}} [options]
   * @returns {Promise<any>}
   */
  async send(input, value, { signal } = {}) {
    const names = this.inputs.map((i) => i.name);
    if (!names.includes(input)) throw new UnknownMember(this.id, "input", input, names);
    /** @type {Record<string, unknown>} */
    const params = { vm: this.id, input };
    if (value !== undefined) params.value = value;
    const result = await this.host.request("vm.send", params, { signal });
    return result?.value;
  }

  /**
   * Subscribes (default: every output) and fills the mirror; resolves with the initial values.
   * @param {{outputs?: string[], diff?: boolean}} [options]
   * @returns {Promise<Record<string, any>>}
   */
  async subscribe({ outputs, diff = false } = {}) {
    const valid = this.outputs.map((o) => o.name);
    for (const name of outputs ?? []) {
      if (!valid.includes(name)) throw new UnknownMember(this.id, "output", name, valid);
    }
    if (this.subscription) await this.unsubscribe();
    /** @type {Record<string, unknown>} */
    const params = { vm: this.id, diff };
    if (outputs) params.outputs = outputs;
    const result = await this.host.request("vm.subscribe", params);
    this.subscription = result.subscription;
    this.host._track(result.subscription, this);
    this.values = structuredClone(result.values);
    return structuredClone(result.values);
  }

  /** Ends the subscription; the mirror keeps its last values. */
  async unsubscribe() {
    const subscription = this.subscription;
    if (!subscription) return;
    this.subscription = null;
    this.host._track(subscription, null);
    await this.host.request("vm.unsubscribe", { subscription });
  }

  /**
   * Reads a property from the mirror (subscribe first). A misspelt name throws, listing the valid ones.
   * @param {string} name
   * @returns {any}
   */
  get(name) {
    const names = this.propertyNames;
    if (!names.includes(name)) throw new UnknownMember(this.id, "output", name, names);
    if (!(name in this.values)) {
      throw new Error(`"${name}" of ${this.id} is not subscribed (call subscribe() first, or fetch())`);
    }
    return this.values[name];
  }

  /**
   * Asks the host for current values (`vm.get`).
   * @param {...string} names
   * @returns {Promise<Record<string, any>>}
   */
  async fetch(...names) {
    const valid = this.propertyNames;
    for (const name of names) {
      if (!valid.includes(name)) throw new UnknownMember(this.id, "output", name, valid);
    }
    const result = await this.host.request("vm.get",
      names.length ? { vm: this.id, outputs: names } : { vm: this.id });
    return result.values;
  }

  /**
   * Listens: `"changed"` gets each change `{vm, values, splices?}` (after the mirror is updated),
   * `"event"` every event `{vm, name, value}`, and an event's own name (`"error"`) its value.
   * @param {string} name
   * @param {(value: any) => void} callback
   * @returns {() => void} removes the listener
   */
  on(name, callback) {
    const valid = ["changed", "event", ...this.eventNames];
    if (!valid.includes(name)) throw new UnknownMember(this.id, "event", name, valid);
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(callback);
    return () => set?.delete(callback);
  }

  /**
   * Removes a listener added with {@link on}.
   * @param {string} name
   * @param {(value: any) => void} callback
   */
  off(name, callback) {
    this.listeners.get(name)?.delete(callback);
  }

  /** Disposes the view-model in the host; its commands in flight answer -32800. */
  async dispose() {
    if (this.subscription) this.host._track(this.subscription, null);
    this.subscription = null;
    await this.host.request("vm.dispose", { vm: this.id });
  }

  /** @private @param {string} name @param {unknown} value */
  emit(name, value) {
    for (const callback of [...(this.listeners.get(name) ?? [])]) callback(value);
  }

  /** @internal @param {{vm: string, values?: Record<string, unknown>, splices?: Record<string, Splice[]>}} params */
  _changed(params) {
    for (const [name, value] of Object.entries(params.values ?? {})) this.values[name] = value;
    for (const [name, splices] of Object.entries(params.splices ?? {})) {
      const list = Array.isArray(this.values[name]) ? this.values[name] : (this.values[name] = []);
      for (const { index, remove, insert } of splices) list.splice(index, remove ?? 0, ...(insert ?? []));
    }
    this.emit("changed", { vm: params.vm, values: params.values ?? {}, ...(params.splices ? { splices: params.splices } : {}) });
  }

  /** @internal @param {{vm: string, name: string, value: unknown}} params */
  _event(params) {
    this.emit("event", { vm: params.vm, name: params.name, value: params.value });
    this.emit(params.name, params.value);
  }
}
