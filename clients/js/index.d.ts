// Types of the vmhost Node client (index.js). See protocol/SPEC.md.
import type { ChildProcess } from "node:child_process";

/** The JSON-RPC error codes of vmhost (SPEC §2). */
export declare const ErrorCode: Readonly<{
  ParseError: -32700;
  InvalidRequest: -32600;
  MethodNotFound: -32601;
  InvalidParams: -32602;
  InternalError: -32603;
  RequestCancelled: -32800;
  UnknownViewModel: -32001;
  UnknownMember: -32002;
  InputDisabled: -32003;
  CommandFailed: -32004;
  HostShuttingDown: -32005;
}>;

/** The domain error of a failed command (SPEC §5): `data` of -32004 and the `error` event's value. */
export interface DomainError {
  kind: "network" | "timeout" | "server" | "business" | "decode";
  code: number | string | null;
  /** For the user, in the locale of `initialize {locale}`: ready to show. */
  message: string;
  /** For developers, English; never quotes a response body. */
  detail: string;
  input: string | null;
}

/** An error answered by the host. `message` is `"<host message> (<code>)"`; `rpcMessage` the host's text. */
export declare class RPCError extends Error {
  constructor(code: number, message: string, data?: unknown);
  readonly code: number;
  readonly rpcMessage: string;
  /** -32004: a {@link DomainError}; -32003: `{input, reason}`; -32001: `{vm}`; -32002: `{vm, input}` or `{vm, output}`. */
  readonly data: unknown;
  /** -32004: the {@link DomainError}; otherwise undefined. */
  readonly domainError: DomainError | undefined;
  /** -32004: the domain error's `detail` (for developers); otherwise `rpcMessage`. */
  readonly detail: string;
  /** -32004: the domain error's `message` (for the user); otherwise `rpcMessage`. */
  readonly userMessage: string;
}

/** A misspelt input, output or event name (-32002), thrown locally; `valid` lists the names. */
export declare class UnknownMember extends RPCError {
  constructor(vm: string, what: "input" | "output" | "event", name: string, valid: string[]);
  readonly valid: string[];
}

/** The host process ended before answering. */
export declare class HostExited extends Error {
  constructor(message: string);
}

export interface InputInfo {
  name: string;
  kind: "value" | "trigger" | "command";
  value?: unknown;
  policy?: "latest" | "ignore" | "ignorePerKey" | "concurrent";
}

export interface OutputInfo {
  name: string;
  kind: "property" | "event";
  schema?: unknown;
}

export interface CreateResult {
  vm: string;
  kind: string;
  inputs: InputInfo[];
  outputs: OutputInfo[];
}

export interface Splice {
  index: number;
  remove: number;
  insert: unknown[];
}

/** What `on("changed")` receives, after the mirror was updated. */
export interface Change {
  vm: string;
  values: Record<string, unknown>;
  splices?: Record<string, Splice[]>;
}

/** What `on("event")` receives. */
export interface VMEvent {
  vm: string;
  name: string;
  value: unknown;
}

export interface RequestOptions {
  /** Aborting sends `$/cancelRequest`; the request then rejects with -32800. */
  signal?: AbortSignal;
}

export interface SpawnConfig {
  /**
   * Path of the binary; otherwise `$VMHOST_BIN` (always first), the checkout's build (the newer of
   * `.build/release/vmhost` and `.build/debug/vmhost`), then `PATH`. `NODE_DEBUG=vmhost` prints the choice.
   */
  binary?: string;
  /**
   * The host's stderr: `"keep"` (default) keeps its last lines for `HostExited` and `Host.stderr`
   * without showing them; `"inherit"` shows them; `"pipe"` keeps them and leaves `child.stderr`
   * readable; `"ignore"` drops them.
   */
  stderr?: "keep" | "inherit" | "ignore" | "pipe";
}

/** Finds the vmhost binary (see {@link SpawnConfig.binary}); throws when none is found. */
export declare function findBinary(binary?: string): string;

/** The newer (by modification time) of `root/.build/release/vmhost` and `root/.build/debug/vmhost`, if any. */
export declare function buildIn(root: string): string | undefined;

/**
 * A connection to a host over any transport that carries one JSON text per message (protocol.js):
 * the Node client's {@link Host} (stdio) and the browser client's (WebSocket) extend it.
 */
export declare class Session {
  constructor(transport: { send(text: string): void });
  /** Set once the connection ended; later requests reject with it. */
  exitError: Error | null;
  /** Handles one message or batch from the host. */
  dispatch(text: string): void;
  /** Ends the session: pending and later requests reject with `error`. */
  fail(error: Error): void;
  /** Sends a request; rejects with {@link RPCError} (or {@link HostExited}). */
  request<T = any>(method: string, params?: object | unknown[], options?: RequestOptions): Promise<T>;
  /** Sends a notification (never answered). */
  notify(method: string, params?: object | unknown[]): void;
  ping(): Promise<{}>;
  initialize(params?: { locale?: string; clientInfo?: object }): Promise<{
    protocolVersion: "1";
    serverInfo: { name: string; version: string };
    kinds: string[];
    locale: string;
  }>;
  describe(kind?: string): Promise<{ protocolVersion: string; kinds: Array<{ kind: string; args: unknown; inputs: InputInfo[]; outputs: OutputInfo[] }> }>;
  list(): Promise<Array<{ vm: string; kind: string }>>;
  /** Creates a view-model (`vm.create`) and returns its proxy. */
  create(kind: string, args?: object, id?: string): Promise<ViewModel>;
}

/** A running vmhost process: a {@link Session} over its stdin and stdout. */
export declare class Host extends Session {
  /** Starts a host; options pass through, e.g. `["--clock", "manual", "--test-controls"]`. */
  static spawn(options?: string[], config?: SpawnConfig): Promise<Host>;
  constructor(child: ChildProcess);
  /** The exit status once the process ended, else null. */
  exitCode: number | null;
  /** The last lines the host wrote to stderr, when kept (see `SpawnConfig.stderr`). */
  readonly stderr: string;
  /** Resolves with the exit status when the process ends. */
  readonly exited: Promise<number | null>;
  /** `shutdown`, then `exit`; resolves with the exit status once the process ended. */
  close(): Promise<number | null>;
}

/** A view-model in the host. Each input is also a method: `vm.refresh()` is `vm.send("refresh")`. */
export declare class ViewModel {
  constructor(host: Session, info: CreateResult);
  readonly host: Session;
  /** The handle (`vm1`, or the id given to `create`). */
  readonly id: string;
  readonly kind: string;
  readonly inputs: InputInfo[];
  readonly outputs: OutputInfo[];
  /** The mirror of subscribed properties, current once any request's promise has settled. */
  values: Record<string, any>;
  subscription: string | null;
  readonly propertyNames: string[];
  readonly eventNames: string[];
  /** Commands resolve with their `value` when they end; value and trigger inputs once applied. */
  send<T = any>(input: string, value?: unknown, options?: RequestOptions): Promise<T>;
  /** Subscribes (default: every output) and fills the mirror; resolves with the initial values. */
  subscribe(options?: { outputs?: string[]; diff?: boolean }): Promise<Record<string, any>>;
  unsubscribe(): Promise<void>;
  /** Reads a subscribed property from the mirror; a misspelt name throws {@link UnknownMember}. */
  get<T = any>(name: string): T;
  /** Asks the host for current values (`vm.get`). */
  fetch(...names: string[]): Promise<Record<string, any>>;
  on(name: "changed", callback: (change: Change) => void): () => void;
  on(name: "event", callback: (event: VMEvent) => void): () => void;
  on(name: "error", callback: (error: DomainError) => void): () => void;
  /** Any event output's name: the callback gets the event's value. Other names throw {@link UnknownMember}. */
  on(name: string, callback: (value: any) => void): () => void;
  off(name: string, callback: (value: any) => void): void;
  /** Disposes the view-model; its commands in flight reject with -32800. */
  dispose(): Promise<void>;
  /** Input methods built from `vm.create`'s reply. */
  [input: string]: unknown;
}
