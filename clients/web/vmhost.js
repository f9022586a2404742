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

/** A session with a vmhost-web server: its own view-models, subscriptions and locale. */
export class Host extends Session {
  /**
   * Opens a session. Resolves once the connection is open; rejects with {@link HostExited} when it
   * cannot be opened (a refused handshake, no server).
   * @param {string} [url] default: {@link defaultURL}
   * @returns {Promise<Host>}
   */
  static connect(url = defaultURL()) {
    return new Promise((resolveOpen, rejectOpen) => {
      const socket = new WebSocket(url);
      socket.onopen = () => {
        socket.onerror = null;
        resolveOpen(new Host(socket));
      };
      socket.onerror = () => rejectOpen(new HostExited(`cannot open a session at ${url}`));
    });
  }

  /** @param {WebSocket} socket an open WebSocket */
  constructor(socket) {
    super({ send: (text) => socket.send(text) });
    /** @private */ this.socket = socket;
    /** The close code and reason, once closed. @type {{code: number, reason: string} | null} */
    this.closedWith = null;
    /** Resolves with `{code, reason}` when the connection closes. @type {Promise<{code: number, reason: string}>} */
    this.closed = new Promise((resolveClosed) => {
      socket.onclose = (event) => {
        this.closedWith = { code: event.code, reason: event.reason };
        this.fail(new HostExited(`the session closed (${event.code}${event.reason ? `: ${event.reason}` : ""})`));
        resolveClosed(this.closedWith);
      };
    });
    socket.onmessage = (event) => {
      if (typeof event.data === "string") this.dispatch(event.data);
    };
  }

  /**
   * Ends the session; the server disposes its view-models (their commands are cancelled).
   * @returns {Promise<{code: number, reason: string}>}
   */
  close() {
    if (this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
    return this.closed;
  }
}
