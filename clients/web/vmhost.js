// @ts-check
/**
 * Browser client of vmhost: a session over WebSocket with `vmhost-web` (protocol/SPEC.md,
 * "WebSocket transport"). An ES module with no build step: `import { Host } from "./vmhost.js"`.
 * The protocol itself (requests, cancellation, subscriptions, the diff-applying mirror) is the
 * Node client's, imported from clients/js/protocol.js.
 * @module vmhost/web
 */

import { ErrorCode, HostExited, RPCError, Session, UnknownMember, ViewModel } from "../js/protocol.js";

export { ErrorCode, HostExited, RPCError, Session, UnknownMember, ViewModel };

/**
 * The WebSocket URL of the server that served this page: `ws://host/rpc` (`wss:` under https).
 * @param {string} [token] sent as `?token=` (a browser cannot set the Authorization header)
 * @returns {string}
 */
export function defaultURL(token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = token ? `?token=${encodeURIComponent(token)}` : "";
  return `${scheme}//${location.host}/rpc${query}`;
}

/**
 * What a resumable session is doing: `"open"` (connected), `"reconnecting"` (its connection
 * dropped; the page tries to resume it), `"lost"` (it could not be resumed: a fresh session is
 * needed), `"closed"` (closed by {@link Host#close} or the server).
 * @typedef {"open" | "reconnecting" | "lost" | "closed"} ConnectionState
 */

/** A reply the page will never get: the connection dropped after the host answered, and the answer could not be sent again. */
export class ReplyLost extends HostExited {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ReplyLost";
  }
}

/**
 * Close codes after which a resumable session is not tried again: the server ended it (4404: not
 * resumable; 1002, 1003, 1007, 1008, 1009: the page sent what the protocol refuses). After any
 * other (a network that dropped, a server restarting, a socket closed under the page), the page
 * tries to resume.
 */
const FINAL_CLOSE_CODES = new Set([1002, 1003, 1007, 1008, 1009, 4404]);

/** The `$/` control frames of a resumable session (protocol/SPEC.md §12, "Resume"); null for any other. */
function controlFrame(/** @type {string} */ text) {
  if (!text.startsWith('{"jsonrpc":"2.0","method":"$/')) return null;
  try {
    const message = JSON.parse(text);
    return message.method === "$/ack" || message.method === "$/session" ? message : null;
  } catch {
    return null;
  }
}

/** A session with a vmhost-web server: its own view-models, subscriptions and locale. */
export class Host extends Session {
  /**
   * Opens a session. Resolves once the connection is open; rejects with {@link HostExited} when it
   * cannot be opened (a refused handshake, no server).
   *
   * With `resumable`, the session survives its connection (protocol/SPEC.md §12, "Resume"): when
   * the connection drops, the page reconnects by itself (retrying with backoff for the server's
   * grace period) and gets the same session back, its view-models, subscriptions and every
   * notification it missed; `onStateChange` is told `"reconnecting"`, then `"open"` or `"lost"`.
   * @param {string} [url] default: {@link defaultURL}
   * @param {{resumable?: boolean, onStateChange?: (state: ConnectionState) => void}} [options]
   * @returns {Promise<Host>}
   */
  static connect(url = defaultURL(), options = {}) {
    return new Promise((resolveOpen, rejectOpen) => {
      const socket = new WebSocket(options.resumable ? withQuery(url, "resume=new") : url);
      socket.onopen = () => {
        socket.onerror = null;
        resolveOpen(new Host(socket, { ...options, url }));
      };
      socket.onerror = () => rejectOpen(new HostExited(`cannot open a session at ${url}`));
    });
  }

  /**
   * @param {WebSocket} socket an open WebSocket
   * @param {{resumable?: boolean, url?: string, onStateChange?: (state: ConnectionState) => void}} [options]
   */
  constructor(socket, options = {}) {
    super({ send: (text) => this.sendFrame(text) });
    /** @private */ this.socket = socket;
    /** @private */ this.url = options.url ?? socket.url;
    /** @private */ this.resumable = Boolean(options.resumable);
    /** Told each change of {@link Host#state}. @type {((state: ConnectionState) => void) | undefined} */
    this.onStateChange = options.onStateChange;
    /** @type {ConnectionState} */
    this.state = "open";
    /** The token that resumes the session, once the server gave it. @private @type {string | null} */
    this.token = null;
    /** @private */ this.graceMs = 0;
    /** When the connection dropped, while reconnecting. @private */ this.droppedAt = 0;
    /** Frames received from the host, counted as the server numbers them. @private */
    this.received = 0;
    /** @private */ this.acknowledged = 0;
    /** @private @type {ReturnType<typeof setTimeout> | null} */ this.ackTimer = null;
    /** Frames sent, counted; those the host has not said it received, to send again. @private */
    this.sent = 0;
    /** @private @type {{seq: number, text: string, id?: number}[]} */
    this.unacknowledged = [];
    /** The close code and reason, once closed. @type {{code: number, reason: string} | null} */
    this.closedWith = null;
    /** @private @type {(value: {code: number, reason: string}) => void} */
    this.resolveClosed = () => {};
    /** Resolves with `{code, reason}` when the session closes. @type {Promise<{code: number, reason: string}>} */
    this.closed = new Promise((resolveClosed) => { this.resolveClosed = resolveClosed; });
    this.listen(socket);
  }

  /** @private @param {WebSocket} socket */
  listen(socket) {
    socket.onmessage = (event) => {
      if (typeof event.data === "string") this.receiveFrame(event.data);
    };
    socket.onclose = (event) => {
      if (socket !== this.socket) return;
      if (this.resumable && this.token && this.state !== "closed" && !FINAL_CLOSE_CODES.has(event.code)) {
        this.reconnect(this.state === "reconnecting" ? this.droppedAt : Date.now());
        return;
      }
      this.finish(event.code, event.reason, event.code === 4404 ? "lost" : "closed");
    };
  }

  /** @private @param {number} code @param {string} reason @param {ConnectionState} state */
  finish(code, reason, state) {
    this.closedWith = { code, reason };
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.setState(state);
    this.fail(new HostExited(state === "lost"
      ? "the session was lost: its connection dropped and it could not be resumed"
      : `the session closed (${code}${reason ? `: ${reason}` : ""})`));
    this.resolveClosed(this.closedWith);
  }

  /** @private @param {ConnectionState} state */
  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.onStateChange?.(state);
  }

  /** @private @param {string} text */
  sendFrame(text) {
    if (!this.resumable) {
      this.socket.send(text);
      return;
    }
    this.sent += 1;
    const entry = { seq: this.sent, text, id: undefined };
    const id = /^\{"jsonrpc":"2\.0","id":(\d+),/.exec(text);
    if (id) entry.id = Number(id[1]);
    this.unacknowledged.push(entry);
    if (this.state === "open" && this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
  }

  /** @private @param {string} text */
  receiveFrame(text) {
    if (this.resumable) {
      const control = controlFrame(text);
      if (control) {
        this.control(control);
        return;
      }
      this.received += 1;
      if (this.received - this.acknowledged >= 16) this.acknowledge();
      else if (!this.ackTimer) this.ackTimer = setTimeout(() => this.acknowledge(), 200);
    }
    this.dispatch(text);
  }

  /** Tells the host how many of its frames arrived, so that it forgets them. @private */
  acknowledge() {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    if (this.received === this.acknowledged || this.socket.readyState !== WebSocket.OPEN) return;
    this.acknowledged = this.received;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", method: "$/ack", params: { received: this.received } }));
  }

  /** @private @param {{method: string, params: any}} message */
  control(message) {
    const params = message.params ?? {};
    if (message.method === "$/ack") {
      this.forgetSent(params.received);
      return;
    }
    this.token = params.token;
    this.graceMs = params.graceMs;
    const resumed = params.resumed;
    if (!resumed) return;
    this.forgetSent(resumed.received);
    if (resumed.resync) {
      // What the host answered while the page was away could not be kept: a request it received
      // that is neither answered nor running will never be answered.
      const running = new Set(resumed.pending);
      const sentAgain = new Set(this.unacknowledged.map((entry) => entry.id));
      for (const [id, waiter] of [...this.pending]) {
        if (running.has(id) || sentAgain.has(id)) continue;
        this.pending.delete(id);
        waiter.reject(new ReplyLost(`request ${id}: answered while the connection was down; the answer could not be sent again`));
      }
      this.received = resumed.next - 1;
    }
    this.acknowledged = this.received;
    for (const entry of this.unacknowledged) this.socket.send(entry.text);
    this.setState("open");
  }

  /** @private @param {number} count */
  forgetSent(count) {
    while (this.unacknowledged.length > 0 && this.unacknowledged[0].seq <= count) this.unacknowledged.shift();
  }

  /** Tries to resume the session until the grace period ends. @private @param {number} since */
  reconnect(since) {
    this.droppedAt = since;
    this.setState("reconnecting");
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    let delay = 100;
    const attempt = () => {
      if (this.state !== "reconnecting") return;
      if (Date.now() - since > this.graceMs) {
        this.finish(1006, "not resumed within the grace period", "lost");
        return;
      }
      const socket = new WebSocket(withQuery(this.url, `resume=${encodeURIComponent(this.token ?? "")}&received=${this.received}`));
      this.socket = socket;
      socket.onmessage = (event) => {
        if (typeof event.data === "string") this.receiveFrame(event.data);
      };
      socket.onclose = (event) => {
        if (socket !== this.socket) return;
        if (FINAL_CLOSE_CODES.has(event.code) || this.state === "closed") {
          this.finish(event.code, event.reason, event.code === 4404 ? "lost" : "closed");
          return;
        }
        if (this.state === "open") {
          // Resumed, then dropped again.
          this.reconnect(Date.now());
          return;
        }
        delay = Math.min(delay * 2, 5000);
        setTimeout(attempt, delay);
      };
      socket.onopen = () => this.listen(socket);
    };
    setTimeout(attempt, 0);
  }

  /**
   * Ends the session; the server disposes its view-models (their commands are cancelled). A
   * resumable session is ended with `exit` (what was sent before is answered first).
   * @returns {Promise<{code: number, reason: string}>}
   */
  close() {
    const state = this.state;
    this.setState("closed");
    if (this.resumable && this.socket.readyState === WebSocket.OPEN) {
      // A resumable session outlives its socket: `exit` ends it; the server then closes (1000).
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", method: "exit" }));
    } else if (this.socket.readyState <= WebSocket.OPEN) {
      this.socket.close(1000);
    } else if (state !== "open") {
      this.finish(1000, "", "closed");
    }
    return this.closed;
  }
}

/** `url` with `query` added. @param {string} url @param {string} query */
function withQuery(url, query) {
  return `${url}${url.includes("?") ? "&" : "?"}${query}`;
}
