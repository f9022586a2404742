// @ts-check
/**
 * The transport-independent part of the vmhost clients: JSON-RPC requests and their replies,
 * cancellation through an AbortSignal, subscriptions and the diff-applying mirror of view-models.
 * Imported by the Node client (clients/js/index.js, stdio) and the browser client
 * (clients/web/vmhost.js, WebSocket). Standard ECMAScript only: no Node or DOM API.
 * See protocol/SPEC.md.
 * @module vmhost/protocol
 */

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

  /**
   * The failed command's domain error (SPEC §5: `{kind, code, message, detail, input}`) for -32004,
   * else undefined.
   * @returns {{kind: string, code: number | string | null, message: string, detail: string, input: string | null} | undefined}
   */
  get domainError() {
    if (this.code !== ErrorCode.CommandFailed || this.data === null || typeof this.data !== "object") return undefined;
    return /** @type {any} */ (this.data);
  }

  /** For developers: a failed command's `detail` (never body text); otherwise the host's message. */
  get detail() {
    const domain = this.domainError;
    return domain && typeof domain.detail === "string" ? domain.detail : this.rpcMessage;
  }

  /** For the user: a failed command's `message`, in the host's locale; otherwise the host's message. */
  get userMessage() {
    const domain = this.domainError;
    return domain && typeof domain.message === "string" ? domain.message : this.rpcMessage;
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
  LimitReached: -32006,
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

/** The host ended (its process exited, its connection closed) before answering. */
export class HostExited extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "HostExited";
  }
}

/**
 * @typedef {{name: string, kind: "value" | "trigger" | "command", value?: unknown, policy?: string}} InputInfo
 * @typedef {{name: string, kind: "property" | "event", schema?: unknown}} OutputInfo
 * @typedef {{vm: string, kind: string, inputs: InputInfo[], outputs: OutputInfo[]}} CreateResult
 * @typedef {{index: number, remove: number, insert: unknown[]}} Splice
 * @typedef {{vm: string, values: Record<string, unknown>, splices?: Record<string, Splice[]>}} Change
 * @typedef {{vm: string, name: string, value: unknown}} VMEvent
 */

/**
 * A connection to a host, over any transport that carries one JSON text per message:
 * `transport.send(text)` writes one; the transport calls {@link Session#dispatch} with each one
 * received and {@link Session#fail} once when the connection ends.
 */
export class Session {
  /** @param {{send: (text: string) => void}} transport */
  constructor(transport) {
    /** @private */ this.transport = transport;
    /** @private */ this.nextId = 1;
    /** @private @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
    this.pending = new Map();
    /** @private @type {Map<string, ViewModel>} subscription → view-model */
    this.subscriptions = new Map();
    /** Set once the connection ended; later requests reject with it. @type {Error | null} */
    this.exitError = null;
  }

  /**
   * Ends the session: every pending request and later ones reject with `error`.
   * @param {Error} error
   */
  fail(error) {
    if (this.exitError) return;
    this.exitError = error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  /**
   * Handles one message or batch from the host (a line on stdio, a text frame on WebSocket).
   * @param {string} line
   */
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
    this.transport.send(JSON.stringify(message));
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

}

/** A view-model living in the host, built from the `vm.create` reply. */
export class ViewModel {
  /**
   * @param {Session} host
   * @param {CreateResult} info
   */
  constructor(host, info) {
    /** @type {Session} */
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
