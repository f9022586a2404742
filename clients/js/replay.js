#!/usr/bin/env node
// The rules of a transcript replay (protocol/conformance/README.md, "Matching" and "Secrets"),
// shared by the Node client's conformance suite and its command line: `match` a pattern against a
// message, `substitute` what a `send` holds, read a transcript, check the options it starts a host
// with, resolve a pattern for a report, diff two values, and replay a file (`replayFile`). The
// Python client's `vmhost.replay` implements the same rules; both are checked against
// protocol/conformance/matching.json. Standard library only.
//
//   node replay.js [--bin PATH] [--offline] [--backend-url URL] [--secrets FILE] [--trust-args] [--update]
//                  [--full] FILE...
//   (also `vmhost-replay` once the package is installed)
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A difference between a pattern and a message, or a malformed transcript; names the JSON path. */
export class Mismatch extends Error {}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
export const show = (v) => JSON.stringify(v);
const SECRET = "$secret:";
const PLACEHOLDER = /^\$secret:([A-Za-z0-9_]+)(?::([0-9]+))?$/;

/** `{"$literal": v}`: a value matched (or sent) as it is, nothing inside it read as a pattern. */
export const isLiteral = (v) => isObject(v) && Object.keys(v).length === 1 && has(v, "$literal");

/** JSON equality: same type and value; 1 equals 1.0, true is not 1. */
export function equal(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => equal(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => has(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

/** The code points of a text (a placeholder's N counts them, not UTF-16 units). */
const codePoints = (text) => Array.from(text);

/**
 * The secrets a transcript names: `values` (a secrets file, `{NAME: text}`) first, then
 * `VMHOST_SECRET_<NAME>` in `env`.
 */
export class Secrets {
  constructor(values = {}, env = process.env) {
    this.values = { ...values };
    this.env = env;
  }

  static fromFile(path, env = process.env) {
    const data = JSON.parse(readFileSync(path, "utf8"));
    if (!isObject(data) || !Object.values(data).every((v) => typeof v === "string")) {
      throw new Error(`${path}: expected a JSON object of strings {"NAME": "value"}`);
    }
    return new Secrets(data, env);
  }

  get(name) {
    if (has(this.values, name)) return this.values[name];
    const value = this.env[`VMHOST_SECRET_${name.toUpperCase()}`];
    return value === undefined ? undefined : value;
  }

  /** `["password", 6]` for `"$secret:password:6"`, `["password", undefined]` without N; null else. */
  static parse(text) {
    const found = PLACEHOLDER.exec(text);
    return found ? [found[1], found[2] === undefined ? undefined : Number(found[2])] : null;
  }

  /** The text a placeholder stands for; undefined when not given and not `required`. */
  valueOf(placeholder, required) {
    const parsed = Secrets.parse(placeholder);
    if (!parsed) throw new Mismatch(`malformed secret placeholder ${show(placeholder)} (expected $secret:NAME or $secret:NAME:N)`);
    const [name, length] = parsed;
    const value = this.get(name);
    if (value === undefined) {
      if (required) {
        throw new Mismatch(`the transcript needs the secret ${show(name)}: set VMHOST_SECRET_${name.toUpperCase()} or give it in a secrets file`);
      }
      return undefined;
    }
    if (length === undefined) return value;
    const points = codePoints(value);
    if (points.length < length) {
      throw new Mismatch(`the secret ${show(name)} has ${points.length} characters; the transcript uses its first ${length}`);
    }
    return points.slice(0, length).join("");
  }
}

const NO_SECRETS = new Secrets({}, {});

/** A pattern string that is no pattern: matched as text (an error's message is then not matched). */
export function isPlainText(pattern) {
  return typeof pattern === "string" && pattern !== "$any" &&
    !pattern.startsWith("$capture:") && !pattern.startsWith("$ref:") && !pattern.startsWith(SECRET);
}

/** Throws Mismatch naming the first difference; fills `captures` (a Map). */
export function match(expected, actual, captures, path = "$", secrets = NO_SECRETS) {
  if (typeof expected === "string") {
    if (expected === "$any") return;
    if (expected.startsWith("$capture:")) {
      const name = expected.slice("$capture:".length);
      if (captures.has(name) && !equal(captures.get(name), actual)) {
        throw new Mismatch(`${path}: $${name} was captured as ${show(captures.get(name))}, got ${show(actual)}`);
      }
      captures.set(name, actual);
      return;
    }
    if (expected.startsWith("$ref:")) {
      const name = expected.slice("$ref:".length);
      if (!captures.has(name)) throw new Mismatch(`${path}: $${name} was never captured (malformed transcript)`);
      if (!equal(captures.get(name), actual)) {
        throw new Mismatch(`${path}: expected $${name} = ${show(captures.get(name))}, got ${show(actual)}`);
      }
      return;
    }
    if (expected.startsWith(SECRET)) {
      let value;
      try {
        value = secrets.valueOf(expected, false);
      } catch (error) {
        throw new Mismatch(`${path}: ${error.message}`);
      }
      const length = Secrets.parse(expected)?.[1];
      if (typeof actual !== "string") throw new Mismatch(`${path}: expected the secret ${expected}, got ${show(actual)}`);
      if (value === undefined) {
        const got = codePoints(actual).length;
        if (length !== undefined && got !== length) {
          throw new Mismatch(`${path}: expected the secret ${expected} (${length} characters), got a text of ${got}`);
        }
        return;
      }
      if (actual !== value) throw new Mismatch(`${path}: expected the secret ${expected}, got another text`);
      return;
    }
  }
  if (isLiteral(expected)) {
    // Plain JSON equality, no pattern inside: a literal "$any", a member named "...".
    if (!equal(expected.$literal, actual)) throw new Mismatch(`${path}: expected ${show(expected.$literal)}, got ${show(actual)}`);
    return;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) throw new Mismatch(`${path}: expected an object, got ${show(actual)}`);
    const openEnded = expected["..."] === true;
    for (const [key, value] of Object.entries(expected)) {
      if (key === "..." && openEnded) continue;
      if (!has(actual, key)) throw new Mismatch(`${path}: missing member ${show(key)}`);
      if (key === "message" && path.endsWith(".error") && isPlainText(value)) {
        // An error's text is for people: SPEC gives it as an example; code and data decide.
        if (typeof actual[key] !== "string" || actual[key] === "") {
          throw new Mismatch(`${path}.message: expected a text, got ${show(actual[key])}`);
        }
        continue;
      }
      match(value, actual[key], captures, `${path}.${key}`, secrets);
    }
    if (!openEnded) {
      const extra = Object.keys(actual).filter((k) => !has(expected, k)).sort();
      if (extra.length) throw new Mismatch(`${path}: unexpected member(s) ${show(extra)}`);
    }
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) throw new Mismatch(`${path}: expected an array, got ${show(actual)}`);
    if (expected.length !== actual.length) {
      throw new Mismatch(`${path}: expected ${expected.length} elements, got ${actual.length}`);
    }
    expected.forEach((e, i) => match(e, actual[i], captures, `${path}[${i}]`, secrets));
    return;
  }
  if (!equal(expected, actual)) throw new Mismatch(`${path}: expected ${show(expected)}, got ${show(actual)}`);
}

/**
 * A message to send: "$ref:NAME" replaced by the captured value, "$secret:…" by the secret's
 * text, {"$literal": v} by v as it is.
 */
export function substitute(value, captures, secrets = NO_SECRETS) {
  if (typeof value === "string") {
    if (value.startsWith("$ref:")) {
      const name = value.slice("$ref:".length);
      if (!captures.has(name)) throw new Mismatch(`send uses $${name}, which was never captured`);
      return captures.get(name);
    }
    if (value.startsWith(SECRET)) return secrets.valueOf(value, true);
    return value;
  }
  if (isLiteral(value)) return value.$literal;
  if (Array.isArray(value)) return value.map((v) => substitute(v, captures, secrets));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, captures, secrets)]));
  }
  return value;
}

/**
 * The pattern as the value it stands for next to `actual`: "$any", "$capture:" and "$secret:"
 * become the actual value, "$ref:" the captured one, "...": true the actual extra members, and
 * members follow the order of `actual`; so a diff shows only real differences.
 */
export function resolvePattern(pattern, actual, captures) {
  if (isLiteral(pattern)) return pattern.$literal;
  if (typeof pattern === "string") {
    if (pattern === "$any" || pattern.startsWith("$capture:") || pattern.startsWith(SECRET)) return actual;
    if (pattern.startsWith("$ref:") && captures.has(pattern.slice(5))) return captures.get(pattern.slice(5));
    return pattern;
  }
  if (Array.isArray(pattern)) {
    return pattern.map((p, i) => resolvePattern(p, Array.isArray(actual) ? actual[i] : undefined, captures));
  }
  if (isObject(pattern)) {
    const openEnded = pattern["..."] === true;
    const keys = Object.keys(pattern).filter((k) => !(k === "..." && openEnded));
    const other = isObject(actual) ? actual : {};
    const order = [...Object.keys(other).filter((k) => keys.includes(k) || openEnded),
      ...keys.filter((k) => !has(other, k))];
    return Object.fromEntries(order.map((k) =>
      [k, keys.includes(k) ? resolvePattern(pattern[k], other[k], captures) : other[k]]));
  }
  return pattern;
}

/** A line diff (LCS) of the two values pretty-printed, with two lines of context. */
export function diff(expected, actual) {
  const a = JSON.stringify(expected, null, 1).split("\n");
  const b = JSON.stringify(actual, null, 1).split("\n");
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const ops = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { ops.push(["  ", a[i]]); i++; j++; }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { ops.push(["+ ", b[j]]); j++; }
    else { ops.push(["- ", a[i]]); i++; }
  }
  const keep = ops.map((op, k) => ops.slice(Math.max(0, k - 2), k + 3).some(([t]) => t !== "  "));
  const out = ["--- expected", "+++ actual"];
  ops.forEach(([t, line], k) => {
    if (keep[k]) out.push(t + line);
    else if (keep[k - 1]) out.push("  …");
  });
  return out.join("\n");
}

/** Levels of nesting in one line of a transcript (a step's object counting as one). */
export const MAX_DEPTH = 256;

/** How deeply `value` nests (a scalar: 0), without recursion; stops past MAX_DEPTH. */
function depth(value) {
  let deepest = 0;
  const stack = [[value, 1]];
  while (stack.length) {
    const [item, level] = stack.pop();
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, level);
    if (level > MAX_DEPTH) return level;
    for (const child of Object.values(item)) stack.push([child, level + 1]);
  }
  return deepest;
}

/** A nesting depth measured on the text, before parsing (JSON.parse recurses). */
function textDepth(text) {
  let level = 0, deepest = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) { level++; if (level > deepest) deepest = level; }
    else if (c === 93 || c === 125) level--;
  }
  return deepest;
}

/** Throws naming `where` unless `step` is a step a replayer can run. */
function checkStep(step, where) {
  if (!isObject(step)) throw new Error(`${where}: a step is a JSON object, got ${String(show(step)).slice(0, 200)}`);
  if (depth(step) > MAX_DEPTH) throw new Error(`${where}: nested deeper than ${MAX_DEPTH} levels`);
  if (has(step, "sendRaw") && typeof step.sendRaw !== "string") throw new Error(`${where}: sendRaw: expected a string`);
  if (has(step, "exit") && !Number.isInteger(step.exit)) throw new Error(`${where}: exit: expected an integer status`);
  if (has(step, "comment") && typeof step.comment !== "string") throw new Error(`${where}: comment: expected a string`);
  if (has(step, "user") && (typeof step.user !== "string" || !has(step, "send"))) {
    throw new Error(`${where}: user: the marker of a user's send, expected a string beside a send`);
  }
}

/** A step longer than this many characters (code points) is laid out over several lines. */
export const WIDTH = 160;
const INDENT = "  ";

/**
 * The text of `step` as a recording writes it (protocol/conformance/README.md, "Layout"): one line
 * when it fits in WIDTH characters; else, for a `send` or an `expect` of an object or array, its
 * first line `{"expect":{` (the members before the last one written there too), then one member or
 * element per line, indented, each on one line when it fits in WIDTH (its indentation not counted)
 * and laid out the same way when not,
 * the closing brackets on lines of their own. The host (`--record`) and the Python replayer write the
 * same text (protocol/conformance/layout.json), so an update of an unchanged recording changes nothing.
 */
export function stepText(step) {
  const text = JSON.stringify(step);
  if (codePoints(text).length <= WIDTH) return text;
  const entries = Object.entries(step);
  if (!entries.length) return text;
  const [key, value] = entries[entries.length - 1];
  if ((key !== "send" && key !== "expect") || value === null || typeof value !== "object" || !Object.keys(value).length) return text;
  const head = entries.slice(0, -1).map(([name, item]) => `${JSON.stringify(name)}:${JSON.stringify(item)},`).join("");
  return `{${head}${JSON.stringify(key)}:${block(value, 0)}}`;
}

/** A non-empty object or array that does not fit on its line: its bracket where it stands, one member or element per line. */
function block(value, depth) {
  const pad = INDENT.repeat(depth + 1);
  const rows = [];
  const entries = Array.isArray(value) ? value.map((item) => [null, item]) : Object.entries(value);
  for (const [name, item] of entries) {
    const lead = name === null ? "" : JSON.stringify(name) + ":";
    const compact = JSON.stringify(item);
    const nested = item !== null && typeof item === "object" && Object.keys(item).length > 0;
    rows.push(pad + lead + (!nested || codePoints(lead).length + codePoints(compact).length <= WIDTH ? compact : block(item, depth + 1)));
  }
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return `${open}\n${rows.join(",\n")}\n${INDENT.repeat(depth)}${close}`;
}

/**
 * Where the steps of a transcript's `lines` stand: `[first, last]` line numbers (from 1). A step
 * starts at a line whose first character is `{`; the lines after it up to the next such line are
 * its own (a step laid out by `stepText`), blank lines at its end left out. A non-blank line before
 * the first step is a step of its own.
 */
export function stepSpans(lines) {
  const spans = [];
  let first = 0, last = 0;
  lines.forEach((line, index) => {
    const number = index + 1;
    if (line.startsWith("{") || (!spans.length && !first && line.trim())) {
      if (first) spans.push([first, last]);
      first = last = number;
    } else if (first && line.trim()) {
      last = number;
    }
  });
  if (first) spans.push([first, last]);
  return spans;
}

/** The lines of a transcript's text (a last line feed ends the last line; CR LF read as LF). */
const linesOf = (text) => {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
};

/** A transcript's steps, `[lineNumber, step]` (a step's first line), blank lines skipped; throws naming a bad line. */
export function loadTranscript(path) {
  if (!statSync(path).isFile()) throw new Error(`${path}: not a regular file`);
  const steps = [];
  const lines = linesOf(readFileSync(path, "utf8"));
  for (const [first, last] of stepSpans(lines)) {
    const text = lines.slice(first - 1, last).join("\n");
    if (textDepth(text) > MAX_DEPTH) throw new Error(`${path}:${first}: nested deeper than ${MAX_DEPTH} levels`);
    let step;
    try {
      step = JSON.parse(text);
    } catch (error) {
      // The line where parsing stopped, when the engine says at which position (V8 does).
      const at = /at position (\d+)/.exec(error.message);
      const line = first + (at ? text.slice(0, Number(at[1])).split("\n").length - 1 : 0);
      throw new Error(`${path}:${line}: not JSON: ${error.message}`);
    }
    checkStep(step, `${path}:${first}`);
    steps.push([first, step]);
  }
  if (!steps.length || !Array.isArray(steps[0][1].args)) throw new Error(`${path}:1: the first line must be {"args": [...]}`);
  return steps;
}

// -- the options a transcript may start a host with --------------------------------------------

/** Flags a replayer passes by default (protocol/conformance/README.md): none writes, opens or reaches anything. */
export const ALLOWED_FLAGS = new Set(["test-controls"]);
/** Options with a value a replayer passes by default; `--backend` only `embedded` or `recorded:` a file beside the transcript. */
export const ALLOWED_OPTIONS = new Set(["clock", "framing", "log-level", "max-message-bytes", "backend", "demo-products",
  "timeout-ms", "max-response-bytes", "http-replay", "http-replay-ignore"]);
const TRUST = "replay with --trust-args if you trust this transcript";

/** A transcript asks for options a replayer does not pass by default; `--trust-args` passes them. */
export class Refused extends Error {}

/**
 * `args` (a transcript's `args` or `offlineArgs`, `$transcript` substituted) if a replayer may
 * start a host with them, a recorded backend's file given by its real path; else throws Refused.
 * The options are read as the host reads them (`--name value`, `--name=value`; a value is the next
 * argument unless that starts with `--`), so what is checked is what the host sees. `backendUrl`:
 * the address the caller gave (`--backend-url`), allowed as `--backend`.
 */
export function checkedArguments(args, transcript, backendUrl) {
  const folder = realpathSync(dirname(resolve(transcript)));
  const checked = [];
  let index = 0;
  while (index < args.length) {
    const argument = args[index++];
    if (typeof argument !== "string") throw new Refused(`the option ${show(argument)} is not a string`);
    if (!argument.startsWith("--") || argument.length <= 2) {
      throw new Refused(`${show(argument)} is no option a replay passes (expected --NAME)`);
    }
    const equals = argument.indexOf("=");
    const name = equals < 0 ? argument.slice(2) : argument.slice(2, equals);
    if (ALLOWED_FLAGS.has(name)) {
      if (equals >= 0) throw new Refused(`--${name} takes no value`);
      checked.push(`--${name}`);
      continue;
    }
    if (!ALLOWED_OPTIONS.has(name)) {
      const all = [...ALLOWED_FLAGS, ...ALLOWED_OPTIONS].sort().map((o) => `--${o}`).join(", ");
      throw new Refused(`--${name} is not among the options a replay passes by default (${all}); ${TRUST}`);
    }
    let value;
    if (equals >= 0) value = argument.slice(equals + 1);
    else if (index < args.length && typeof args[index] === "string" && !(args[index].startsWith("--") && args[index].length > 2)) {
      value = args[index++];
    } else throw new Refused(`--${name} has no value`);
    if (name === "backend" && !(backendUrl !== undefined && value === backendUrl)) value = allowedBackend(value, folder);
    if (name === "http-replay") value = beside(`--http-replay ${show(value)}`, value, folder);
    checked.push(`--${name}`, value);
  }
  return checked;
}

/** `args` without `--backend VALUE` / `--backend=VALUE`. */
function withoutBackend(args) {
  const kept = [];
  for (let index = 0; index < args.length; index++) {
    const argument = args[index];
    if (argument === "--backend") {
      if (index + 1 < args.length && !(typeof args[index + 1] === "string" && args[index + 1].startsWith("--"))) index++;
    } else if (!(typeof argument === "string" && argument.startsWith("--backend="))) kept.push(argument);
  }
  return kept;
}

function allowedBackend(value, folder) {
  if (value === "embedded") return value;
  if (!value.startsWith("recorded:")) {
    throw new Refused(`--backend ${show(value)}: a replay uses only the embedded backend or recorded:FILE beside the ` +
      `transcript (an address would receive what the replay sends, secrets included); ${TRUST}`);
  }
  return `recorded:${beside(`--backend ${show(value)}`, value.slice("recorded:".length), folder)}`;
}

/** The real path of `given`, a recording (a recorded backend, `--http-replay`'s file) that must be a regular file in the transcript's `folder`; else Refused naming `option`. */
function beside(option, given, folder) {
  if (!given || given.split(/[\\/]/).includes("..")) {
    throw new Refused(`${option}: the recording must be a file beside the transcript`);
  }
  let real;
  try {
    real = realpathSync(isAbsolute(given) ? given : join(folder, given));
  } catch (error) {
    throw new Refused(`${option}: ${error.code ?? error.message}`);
  }
  if (dirname(real) !== folder) {
    throw new Refused(`${option}: the recording must be a file beside the transcript (this one is ${real}, outside ${folder})`);
  }
  if (!statSync(real).isFile()) throw new Refused(`${option}: not a regular file`);
  return real;
}

/**
 * The options to start the host with: `args`, or with `offline` the `offlineArgs` ($transcript:
 * its path). Unless `trust`, only options a replayer passes by default (checkedArguments; else
 * Refused, naming the file).
 */
export function transcriptArguments(path, steps, offline = false, { trust = false, backendUrl } = {}) {
  const first = steps[0][1];
  let given;
  if (!offline) {
    given = first.args;
    if (backendUrl !== undefined) given = [...withoutBackend(given), "--backend", backendUrl];
  }
  else if (!Array.isArray(first.offlineArgs)) throw new Error(`${path}:1: no offlineArgs: the transcript has no recorded backend exchanges`);
  else {
    const here = resolve(path);
    given = first.offlineArgs.map((a) => (typeof a === "string" ? a.split("$transcript").join(here) : a));
  }
  if (trust) return given.map(String);
  try {
    return checkedArguments(given, path, offline ? undefined : backendUrl);
  } catch (error) {
    if (error instanceof Refused) throw new Refused(`${path}:${steps[0][0]}: not replayed: ${error.message}`);
    throw error;
  }
}

/** Steps that are no step for a replayer: documentation and recorded backend exchanges. */
/** Whether `step` is an exchange the app made with its server (`backend`, the reference app's; `http`, any app's HTTP client). */
export const isExchange = (step) => has(step, "backend") || has(step, "http");
export const isInert = (step) => has(step, "comment") || isExchange(step);

// -- replaying a file -------------------------------------------------------------------------

/** Milliseconds a missing message is waited for: only turns a hang into a failure. */
export const READ_LIMIT = 10000;
const EXIT_LIMIT = 5000;
const SYSTEM_CLOCK_COMMENT = "Recorded on the system clock";
const MAX_FOLDED = 64;

/** The binary on a pipe, read as fast as it writes (no pacing) into a queue of raw frames. */
export class HostProcess {
  static async start(args, { binary } = {}) {
    const { spawnChild } = await import("./index.js");
    return new HostProcess(await spawnChild(args, { binary, stderr: "pipe" }));
  }

  constructor(child) {
    this.child = child;
    this.frames = [];
    this.ended = false;
    this.wake = null;
    this.stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => { this.stderr = (this.stderr + chunk).slice(-4000); });
    child.stdin.on("error", () => {}); // EPIPE once the host is gone: the next step reports it
    this.status = new Promise((done) => child.once("exit", (code, signal) => done(code ?? signal)));
    let buffer = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line) { this.frames.push(line); this.notify(); }
      }
    });
    child.stdout.on("end", () => { this.ended = true; this.notify(); });
  }

  notify() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  write(text) { this.child.stdin.write(text, "utf8"); }

  close() { this.child.stdin.end(); }

  /** The next raw frame, or {eof} at the end of stdout, or {timeout}. */
  async next(limit = READ_LIMIT) {
    const deadline = Date.now() + limit;
    for (;;) {
      if (this.frames.length) return { line: this.frames.shift() };
      if (this.ended) return { eof: true };
      const left = deadline - Date.now();
      if (left <= 0) return { timeout: true };
      await new Promise((done) => {
        const timer = setTimeout(done, left);
        this.wake = () => { clearTimeout(timer); done(); };
      });
    }
  }

  async waitExit(limit = EXIT_LIMIT) {
    let timer;
    const late = new Promise((done) => { timer = setTimeout(() => done(undefined), limit); });
    try {
      return await Promise.race([this.status, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.status;
  }
}

/** Characters of a message a failure shows (`--full`: all). */
export const SHOWN = 300;

/**
 * The first thing that went wrong in a replay; `report()` is what the command line prints. `step`:
 * the last line that sent something before it (`line N: {"send": …}`); `hint`: a suggestion.
 */
export class Failure {
  constructor(path, line, why, expected, actual, stderr = "", step = "", hint = "") {
    Object.assign(this, { path, line, why, expected, actual, stderr, step, hint });
  }

  report(full = false) {
    const shown = (value) => {
      const text = show(value);
      return full || text.length <= SHOWN ? text : `${text.slice(0, SHOWN)}… (${text.length} characters; --full shows them all)`;
    };
    let text = `FAIL ${this.path}:${this.line}: ${this.why}`;
    if (this.step) text += `\n  after:    ${this.step}`;
    if (this.expected !== undefined) text += `\n  expected: ${shown(this.expected)}`;
    if (this.actual !== undefined) text += `\n  got:      ${shown(this.actual)}`;
    if (this.expected !== undefined && this.actual !== undefined) {
      text += "\n  diff:\n    " + diff(this.resolved ?? this.expected, this.actual).split("\n").join("\n    ");
    }
    if (this.stderr.trim()) text += "\n  host stderr:\n    " + this.stderr.trim().split("\n").slice(-20).join("\n    ");
    if (this.hint) text += `\n  hint: ${this.hint}`;
    return text;
  }
}

class Stop extends Error {
  constructor(failure) { super(failure.why); this.failure = failure; }
}

/** Whether `message` (or a pattern of one) is a `vm.changed` notification. */
const isChanged = (m) => isObject(m) && m.method === "vm.changed" && !has(m, "id") && isObject(m.params);

/**
 * The system-clock allowance (protocol/conformance/README.md, Recordings): throws Mismatch unless
 * the `vm.changed` patterns `expected` and the notifications `actual`, of one subscription, merged
 * in order (list edits one after the other, a member back at its value `before` left out), match.
 */
export function foldChanges(expected, actual, before, captures, secrets = NO_SECRETS) {
  const merged = (messages) => {
    const values = {}, splices = {};
    for (const message of messages) {
      for (const [name, value] of Object.entries(message.params.values ?? {})) { values[name] = value; delete splices[name]; }
      for (const [name, edits] of Object.entries(message.params.splices ?? {})) (splices[name] ??= []).push(...edits);
    }
    for (const name of Object.keys(values)) {
      if (has(before, name) && !has(splices, name) && equal(before[name], values[name])) delete values[name];
    }
    return Object.keys(splices).length ? { values, splices } : { values };
  };
  match(merged(expected), merged(actual), captures, "$.params (merged)", secrets);
}

/** `value` with the given secrets' texts shown as `$secret:NAME`, for a report. */
function masked(value, texts) {
  if (typeof value === "string") {
    for (const [name, text] of texts) if (text && value.includes(text)) value = value.split(text).join(`$secret:${name}`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => masked(v, texts));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, texts)]));
  return value;
}

/** `line N: {"send": …}`: the last line at or before `line` that sent something, shortened. */
function stepBefore(steps, line) {
  const sent = steps.filter(([n, s]) => n <= line && (has(s, "send") || has(s, "sendRaw") || has(s, "close")));
  if (!sent.length) return "";
  const [number, step] = sent[sent.length - 1];
  const text = show(step);
  return `line ${number}: ${text.length <= 200 ? text : text.slice(0, 200) + "…"}`;
}

function secretNames(steps) {
  const names = new Set();
  const walk = (item) => {
    if (typeof item === "string") { const parsed = Secrets.parse(item); if (parsed) names.add(parsed[0]); }
    else if (item !== null && typeof item === "object") Object.values(item).forEach(walk);
  };
  for (const [, step] of steps) { walk(step.send); walk(step.expect); }
  return [...names];
}

/**
 * Replays the transcript at `path` against the binary; resolves with its first Failure, or null
 * when it passed. Its options are checked first (checkedArguments): one a replayer does not pass by
 * default throws Refused and starts nothing, unless `trust`. A recording made on the system clock
 * is replayed with its allowance (foldChanges).
 * @param {string} path
 * @param {{binary?: string, offline?: boolean, secrets?: Secrets, readLimit?: number, trust?: boolean,
 *   name?: string, backendUrl?: string}} [options] `name`: what a failure reports instead of `path`;
 *   `backendUrl`: replayed online against this backend in place of the transcript's `--backend`.
 */
export async function replayFile(path, { binary, offline = false, secrets = new Secrets(), readLimit = READ_LIMIT,
  trust = false, name = path, backendUrl } = {}) {
  const steps = loadTranscript(path);
  const args = transcriptArguments(path, steps, offline, { trust, backendUrl });
  const folding = steps.some(([, s]) => typeof s.comment === "string" && s.comment.startsWith(SYSTEM_CLOCK_COMMENT));
  const texts = secretNames(steps).map((n) => [n, secrets.get(n)]).filter(([, t]) => t);
  const host = await HostProcess.start(args, { binary });
  const captures = new Map();
  const shown = new Map(); // what each subscription shows: its values with every vm.changed applied
  let closed = false, exited = false;

  const fail = (line, why, expected, actual) => {
    const failure = new Failure(name, line, masked(why, texts), expected === undefined ? undefined : masked(expected, texts),
      actual === undefined ? undefined : masked(actual, texts), masked(host.stderr, texts), stepBefore(steps, line));
    if (expected !== undefined && actual !== undefined) failure.resolved = masked(resolvePattern(expected, actual, captures), texts);
    throw new Stop(failure);
  };
  const read = async (line, expected) => {
    const next = await host.next(readLimit);
    if (next.timeout) fail(line, `no message within ${readLimit / 1000}s`, expected);
    if (next.eof) fail(line, "the host closed its output", expected);
    try {
      return JSON.parse(next.line);
    } catch {
      return fail(line, `the host wrote a frame that is not JSON: ${next.line}`, expected);
    }
  };
  const track = (message) => {
    if (!isObject(message)) return;
    const result = message.result;
    if (isObject(result) && typeof result.subscription === "string" && isObject(result.values)) {
      shown.set(result.subscription, { ...result.values });
    } else if (isChanged(message) && typeof message.params.subscription === "string") {
      shown.set(message.params.subscription, { ...(shown.get(message.params.subscription) ?? {}), ...(message.params.values ?? {}) });
    }
  };
  const tryMatch = (pattern, actual, into) => {
    try { match(pattern, actual, into, "$", secrets); return null; } catch (error) {
      if (!(error instanceof Mismatch)) throw error;
      return error.message;
    }
  };
  const expect = async (line, pattern) => {
    const actual = await read(line, pattern);
    const problem = tryMatch(pattern, actual, captures);
    if (problem !== null) fail(line, problem, pattern, actual);
    track(actual);
  };
  /** An expected vm.changed on a system-clock recording: matched, else folded with what follows. */
  const expectChanges = async (index) => {
    const [line, step] = steps[index];
    const pattern = step.expect;
    const actual = await read(line, pattern);
    const problem = tryMatch(pattern, actual, new Map(captures));
    if (problem === null) { tryMatch(pattern, actual, captures); track(actual); return index; }
    const subscription = isChanged(actual) ? actual.params.subscription : undefined;
    const at = (p) => resolvePattern(p, undefined, captures)?.params?.subscription;
    if (subscription === undefined || at(pattern) !== subscription) fail(line, problem, pattern, actual);
    const before = shown.get(subscription) ?? {};
    const patterns = [pattern], messages = [actual];
    let last = index;
    while (patterns.length + messages.length <= 2 * MAX_FOLDED) {
      const trial = new Map(captures);
      try {
        foldChanges(patterns, messages, before, trial, secrets);
        for (const [k, v] of trial) captures.set(k, v);
        messages.forEach(track);
        return last;
      } catch (error) {
        if (!(error instanceof Mismatch)) throw error;
      }
      let following = last + 1;
      while (following < steps.length && isInert(steps[following][1])) following++;
      if (following < steps.length && isChanged(steps[following][1].expect) && at(steps[following][1].expect) === subscription) {
        patterns.push(steps[following][1].expect);
        last = following;
        continue;
      }
      const more = await read(line, pattern);
      if (!(isChanged(more) && more.params.subscription === subscription)) break;
      messages.push(more);
    }
    return fail(line, `${problem} (recorded on the system clock: nor do the changes of this subscription that follow, merged, end in the same state)`, pattern, actual);
  };

  try {
    for (let index = 1; index < steps.length; index++) {
      const [line, step] = steps[index];
      if (isInert(step)) continue;
      if (has(step, "send")) {
        let message;
        try {
          message = substitute(step.send, captures, secrets);
        } catch (error) {
          fail(line, error.message);
        }
        host.write(JSON.stringify(message) + "\n");
      } else if (has(step, "sendRaw")) {
        host.write(step.sendRaw);
      } else if (has(step, "expect") && folding && isChanged(step.expect)) {
        index = await expectChanges(index);
      } else if (has(step, "expect")) {
        await expect(line, step.expect);
      } else if (has(step, "close")) {
        host.close();
        closed = true;
      } else if (has(step, "exit")) {
        const next = await host.next(readLimit);
        if (next.timeout) fail(line, "stdout did not end");
        if (!next.eof) fail(line, "a message came instead of the end of output", undefined, next.line);
        const status = await host.waitExit();
        if (status === undefined) fail(line, `the host did not exit within ${EXIT_LIMIT / 1000}s`);
        if (status !== step.exit) fail(line, `exit status ${status}, expected ${step.exit}`);
        exited = true;
      } else {
        fail(line, `unknown step ${show(step)}`);
      }
    }
    if (!closed) host.close();
    if (!exited) {
      // End of transcript: no message may be left unexpected; then the host exits 0 (SPEC §7).
      const last = steps[steps.length - 1][0];
      const next = await host.next(readLimit);
      if (next.timeout) fail(last, `the host's output did not end within ${readLimit / 1000}s`);
      if (next.line !== undefined) {
        let extra = next.line;
        try { extra = JSON.parse(next.line); } catch { /* shown raw */ }
        fail(last, "an unexpected message after the last line", undefined, extra);
      }
      const status = await host.waitExit();
      if (status === undefined) fail(last, `the host did not exit within ${EXIT_LIMIT / 1000}s after the end of input`);
      if (status !== 0) fail(last, `exit status ${status} after the end of input (SPEC §7 expects 0)`);
    }
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    if (!offline && has(steps[0][1], "offlineArgs")) {
      error.failure.hint = "this recording holds its backend's answers: if its backend is not there (or not as it was), " +
        `replay it with --offline${backendUrl ? "" : ", or point it at another with --backend-url URL"}`;
    }
    return error.failure;
  } finally {
    await host.kill();
  }
}

// -- updating -----------------------------------------------------------------------------------

const SYNC = "vmhost-replay-sync-";

/**
 * An expectation written from `actual` by the rules of a recording: subscription handles as
 * captures and references, `serverInfo.version` and a `vm.create` result's lists as "$any", known
 * secrets as placeholders, pattern-like texts as literals (as Python's `_generalized`).
 */
function generalized(actual, captures, secretTexts) {
  const handles = new Map();
  for (const [name, value] of captures) if (typeof value === "string") handles.set(value, name);
  const text = (value) => {
    for (const [placeholder, secret] of secretTexts) if (value === secret) return placeholder;
    if (value === "$any" || value.startsWith("$capture:") || value.startsWith("$ref:") || value.startsWith(SECRET)) {
      return { $literal: value };
    }
    return value;
  };
  const plain = (value) => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(plain);
    if (isObject(value)) {
      if (value["..."] === true || isLiteral(value)) return { $literal: value };
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
    }
    return value;
  };
  const result = (value) => {
    if (!isObject(value)) return plain(value);
    const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
    const keys = Object.keys(value);
    if (keys.length === 2 && has(value, "subscription") && has(value, "values") && typeof value.subscription === "string") {
      const handle = value.subscription;
      let name = handles.get(handle);
      if (name === undefined) {
        const ok = /^[A-Za-z0-9_.-]{1,64}$/.test(handle) && !captures.has(handle);
        name = ok ? handle : `subscription${captures.size + 1}`;
        handles.set(handle, name);
      }
      out.subscription = `$capture:${name}`;
    }
    if (isObject(value.serverInfo) && has(value.serverInfo, "version")) out.serverInfo = { ...plain(value.serverInfo), version: "$any" };
    if (["vm", "kind", "inputs", "outputs"].every((k) => has(value, k))) out.inputs = out.outputs = "$any";
    return out;
  };
  const message = (value) => {
    if (Array.isArray(value)) return value.map(message);
    if (!isObject(value)) return plain(value);
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === "result" && has(value, "id")) out[key] = result(item);
      else if (key === "params" && (value.method === "vm.changed" || value.method === "vm.event") && isObject(item)) {
        const params = Object.fromEntries(Object.entries(item).map(([k, v]) => [k, plain(v)]));
        if (typeof item.subscription === "string" && handles.has(item.subscription)) params.subscription = `$ref:${handles.get(item.subscription)}`;
        out[key] = params;
      } else out[key] = plain(item);
    }
    return out;
  };
  return message(actual);
}

/** The ids a response (or a batch's array of them, or a pattern of either) answers, as JSON text. */
function replyIds(message) {
  const found = [];
  for (const item of Array.isArray(message) ? message : [message]) {
    if (isObject(item) && has(item, "id") && !has(item, "method") && (has(item, "result") || has(item, "error"))
      && !String(item.id).startsWith(SYNC)) found.push(JSON.stringify(item.id));
  }
  return found;
}

/** A unified diff of two texts by lines (two lines of context), as Python's difflib shows it. */
function unifiedDiff(before, after, from, to) {
  const a = before.split("\n"), b = after.split("\n");
  if (a[a.length - 1] === "") a.pop();
  if (b[b.length - 1] === "") b.pop();
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  const ops = [];
  for (let i = 0; i < start; i++) ops.push([" ", a[i]]);
  const n = endA - start, m = endB - start;
  if (n * m <= 16_000_000) {
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i][j] = a[start + i] === b[start + j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) { ops.push([" ", a[start + i]]); i++; j++; }
      else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { ops.push(["-", a[start + i]]); i++; }
      else { ops.push(["+", b[start + j]]); j++; }
    }
  } else {
    for (let i = start; i < endA; i++) ops.push(["-", a[i]]);
    for (let j = start; j < endB; j++) ops.push(["+", b[j]]);
  }
  for (let i = endA; i < a.length; i++) ops.push([" ", a[i]]);
  if (!ops.some(([t]) => t !== " ")) return "";
  const out = [`--- ${from}`, `+++ ${to}`];
  const keep = ops.map((_, k) => ops.slice(Math.max(0, k - 2), k + 3).some(([t]) => t !== " "));
  let lineA = 1, lineB = 1, k = 0;
  while (k < ops.length) {
    if (!keep[k]) { if (ops[k][0] !== "+") lineA++; if (ops[k][0] !== "-") lineB++; k++; continue; }
    const hunk = [];
    const fromA = lineA, fromB = lineB;
    while (k < ops.length && keep[k]) {
      const [t, line] = ops[k++];
      hunk.push(t + line);
      if (t !== "+") lineA++;
      if (t !== "-") lineB++;
    }
    out.push(`@@ -${fromA},${lineA - fromA} +${fromB},${lineB - fromB} @@`, ...hunk);
  }
  return out.join("\n") + "\n";
}

/**
 * Replays `path` and resolves with its text rewritten to the expectations the host meets now
 * (protocol/conformance/README.md, "Updating"), as Python's `vmhost.replay.update`: every line
 * that still matches is kept, every other expectation is written from the message in its place.
 * A send is written once the replies the recorded client had before it came (one that never comes
 * fails the update: the session cannot be kept), then a `ping` tells what the earlier sends caused;
 * on the system clock a send also waits for as many messages as the file had before it. Replayed
 * with a backend, a recording's backend lines are recorded anew.
 * @returns {Promise<{path: string, old: string, text: string, changed: boolean, diff: string, failure: Failure | null}>}
 */
export async function update(path, { binary, offline = false, secrets = new Secrets(), readLimit = READ_LIMIT, trust = false,
  backendUrl } = {}) {
  const steps = loadTranscript(path);
  const args = transcriptArguments(path, steps, offline, { trust, backendUrl });
  const old = readFileSync(path, "utf8");
  const lines = linesOf(old);
  const byLine = new Map(steps);
  const ends = new Map(stepSpans(lines));
  const hasBackend = has(steps[0][1], "offlineArgs") || steps.some(([, s]) => isExchange(s));
  let recordDir = null;
  const extra = [];
  if (hasBackend && !offline) {
    recordDir = mkdtempSync(join(tmpdir(), "vmhost-update-"));
    extra.push("--record", join(recordDir, "session.jsonl"));
  }
  const timed = steps.some(([, s]) => typeof s.comment === "string" && s.comment.startsWith(SYSTEM_CLOCK_COMMENT));
  const names = secretNames(steps);
  const shownTexts = names.map((n) => [n, secrets.get(n)]).filter(([, t]) => t);
  const secretTexts = [];
  {
    const found = new Map();
    for (const line of lines) {
      for (const placeholder of line.match(/\$secret:[A-Za-z0-9_]+(?::[0-9]+)?/g) ?? []) {
        let value;
        try { value = secrets.valueOf(placeholder, false); } catch { continue; }
        if (value !== undefined && codePoints(value).length >= 3) found.set(placeholder, value);
      }
    }
    secretTexts.push(...[...found].sort((x, y) => y[1].length - x[1].length));
  }
  // One item per line: a step's first line holds the step (all its lines), its other lines are "part".
  let inside = 0;
  const items = lines.map((text, index) => {
    if (index + 1 <= inside) return { text: "", step: undefined, kind: "part" };
    const step = byLine.get(index + 1);
    let kind = "other";
    if (step !== undefined) {
      kind = has(step, "expect") ? "expect" : isExchange(step) ? "backend"
        : has(step, "send") || has(step, "sendRaw") ? "send" : "other";
      inside = ends.get(index + 1) ?? index + 1;
      text = lines.slice(index, inside).join("\n");
    }
    return { text, step, kind };
  });
  // What the recorded client had seen before each line: the replies (by id, counted) and how many messages.
  const repliedBefore = [], expectedBefore = [];
  {
    const replied = new Map();
    let expected = 0;
    items.forEach((item, index) => {
      repliedBefore[index + 1] = new Map(replied);
      expectedBefore[index + 1] = expected;
      if (item.kind === "expect") {
        expected++;
        for (const key of replyIds(item.step.expect)) replied.set(key, (replied.get(key) ?? 0) + 1);
      }
    });
    repliedBefore[items.length + 1] = new Map(replied);
    expectedBefore[items.length + 1] = expected;
  }

  const host = await HostProcess.start([...args, ...extra], { binary });
  let captures = new Map();
  const seenReplies = new Map();
  let seenCount = 0, syncCount = 0, closed = false, exited = false, paused = false, rawOpen = false;
  let out = [], pending = [];
  const fail = (line, why, expected, actual) => {
    throw new Stop(new Failure(path, line, masked(why, shownTexts), expected === undefined ? undefined : masked(expected, shownTexts),
      actual === undefined ? undefined : masked(actual, shownTexts), masked(host.stderr, shownTexts), stepBefore(steps, line)));
  };
  const nextMessage = async (line, { quiet = false } = {}) => {
    const next = await host.next(readLimit);
    if (next.timeout || next.eof) {
      if (quiet) return next;
      fail(line, next.eof ? "the host closed its output" : `no message within ${readLimit / 1000}s`);
    }
    let message;
    try { message = JSON.parse(next.line); } catch { fail(line, `the host wrote a frame that is not JSON: ${next.line}`); }
    return { message };
  };
  const note = (message) => {
    seenCount++;
    for (const key of replyIds(message)) seenReplies.set(key, (seenReplies.get(key) ?? 0) + 1);
    return message;
  };
  const fresh = (actual) => {
    const pattern = generalized(actual, captures, secretTexts);
    match(pattern, actual, captures, "$", secrets);
    return { text: stepText({ expect: pattern }), step: { expect: pattern }, kind: "expect" };
  };
  const settle = (messages) => {
    const rebuilt = [];
    const queue = [...messages];
    let afterLast = 0;
    for (const item of pending) {
      if (item.kind !== "expect") { rebuilt.push(item); continue; }
      if (!queue.length) continue; // expected no more: dropped
      const actual = queue.shift();
      const kept = new Map(captures);
      try {
        match(item.step.expect, actual, kept, "$", secrets);
        captures = kept;
        rebuilt.push(item);
      } catch (error) {
        if (!(error instanceof Mismatch)) throw error;
        rebuilt.push(fresh(actual));
      }
      afterLast = rebuilt.length;
    }
    if (queue.length) rebuilt.splice(afterLast || rebuilt.length, 0, ...queue.map(fresh));
    out.push(...rebuilt);
    pending = [];
  };
  const collect = async (line, untilEnd, before = line) => {
    const messages = [];
    if (untilEnd) {
      for (;;) {
        const next = await host.next(readLimit);
        if (next.eof) return messages;
        if (next.timeout) fail(line, `the host's output did not end within ${readLimit / 1000}s`);
        let message;
        try { message = JSON.parse(next.line); } catch { fail(line, `the host wrote a frame that is not JSON: ${next.line}`); }
        messages.push(note(message));
      }
    }
    for (const [key, count] of repliedBefore[before] ?? new Map()) {
      while ((seenReplies.get(key) ?? 0) < count) {
        const next = await nextMessage(before, { quiet: true });
        if (next.message === undefined) {
          const ended = next.eof ? "the host closed its output" : `none came within ${readLimit / 1000}s`;
          fail(before, `cannot keep the session: the recording had the reply to the request with id ${key} before this line, ` +
            `and ${ended}; not updated (a request the host no longer answers there needs the transcript edited by hand)`);
        }
        messages.push(note(next.message));
      }
    }
    const marker = `${SYNC}${++syncCount}`;
    host.write(JSON.stringify({ jsonrpc: "2.0", id: marker, method: "ping" }) + "\n");
    for (;;) {
      const { message } = await nextMessage(line);
      if (isObject(message) && message.id === marker && !has(message, "method")) break;
      messages.push(note(message));
    }
    if (timed) {
      while (seenCount < (expectedBefore[before] ?? 0)) {
        const next = await nextMessage(line, { quiet: true });
        if (next.message === undefined) break; // fewer now than then: what came is what the host writes
        messages.push(note(next.message));
      }
    }
    return messages;
  };
  const sync = async (line) => {
    if (exited) return;
    if (closed) settle(await collect(line, true));
    else if (!paused && !rawOpen && pending.some((item) => item.kind === "expect")) settle(await collect(line, false, line));
  };

  let failure = null;
  try {
    for (const [index, item] of items.entries()) {
      const number = index + 1;
      const step = item.step;
      if (item.kind === "part") continue;
      if (step === undefined || (has(step, "args") && number === steps[0][0]) || item.kind === "backend" || has(step, "comment")
        || has(step, "expect")) {
        pending.push(item);
        continue;
      }
      await sync(number);
      pending.push(item);
      if (has(step, "send")) {
        let message;
        try { message = substitute(step.send, captures, secrets); } catch (error) { fail(number, error.message); }
        host.write(JSON.stringify(message) + "\n");
        const methods = (Array.isArray(step.send) ? step.send : [step.send]).filter(isObject).map((m) => m.method);
        if (methods.includes("control.output.pause")) paused = true;
        if (methods.includes("control.output.resume")) paused = false;
        if (methods.includes("exit")) {
          settle(await collect(number, true));
          exited = true;
        }
      } else if (has(step, "sendRaw")) {
        host.write(step.sendRaw);
        rawOpen = !step.sendRaw.endsWith("\n");
      } else if (has(step, "close")) {
        host.close();
        closed = true;
      } else if (has(step, "exit")) {
        const status = await host.waitExit();
        if (status !== step.exit) fail(number, `exit status ${status}, expected ${step.exit}`);
        exited = true;
      } else {
        fail(number, `unknown step ${show(step)}`);
      }
    }
    const last = items.length;
    if (!exited) {
      if (!closed) {
        if (!paused && !rawOpen && pending.some((item) => item.kind === "expect")) settle(await collect(last, false, last + 1));
        host.close();
        closed = true;
        const after = await collect(last, true);
        if (after.length) {
          pending.push({ text: JSON.stringify({ close: true }), step: { close: true }, kind: "other" });
          settle(after);
        }
      } else {
        settle(await collect(last, true));
      }
      const status = await host.waitExit();
      if (status !== 0) fail(last, `exit status ${status} after the end of input (SPEC §7 expects 0)`);
    }
    out.push(...pending);
    pending = [];
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    failure = error.failure;
    out.push(...pending);
  } finally {
    await host.kill();
  }
  if (recordDir !== null) {
    try {
      if (failure === null) out = withBackendLines(out, readFileSync(join(recordDir, "session.jsonl"), "utf8"));
    } finally {
      rmSync(recordDir, { recursive: true, force: true });
    }
  }
  const text = out.map((item) => item.text + "\n").join("");
  return { path, old, text, changed: text !== old, failure,
    diff: unifiedDiff(old, text, `${path} (before)`, `${path} (updated)`) };
}

/** `items` with the backend lines of `recording` in place of the old ones, each after the send it followed there. */
function withBackendLines(items, recording) {
  const afterSend = new Map();
  let sends = 0;
  const lines = linesOf(recording);
  for (const [first, last] of stepSpans(lines)) {
    const line = lines.slice(first - 1, last).join("\n");
    let step;
    try { step = JSON.parse(line); } catch { continue; }
    if (!isObject(step)) continue;
    if (has(step, "send") || has(step, "sendRaw")) {
      if (isObject(step.send) && String(step.send.id ?? "").startsWith(SYNC)) continue;
      sends++;
    } else if (isExchange(step)) {
      if (!afterSend.has(sends)) afterSend.set(sends, []);
      afterSend.get(sends).push(line);
    }
  }
  const result = [];
  sends = 0;
  const take = (key) => {
    for (const line of afterSend.get(key) ?? []) result.push({ text: line, step: undefined, kind: "backend" });
    afterSend.delete(key);
  };
  for (const item of items) {
    if (item.kind === "backend") continue;
    if (sends === 0 && item.kind === "send") take(0);
    result.push(item);
    if (item.kind === "send") take(++sends);
  }
  for (const key of [...afterSend.keys()].sort((x, y) => x - y)) take(key);
  return result;
}

// -- the command line ---------------------------------------------------------------------------

const USAGE = "usage: node replay.js [--bin PATH] [--offline] [--backend-url URL] [--secrets FILE] [--trust-args] " +
  "[--update] [--full] [--read-limit SECONDS] FILE...";

/**
 * `node replay.js FILE…`: replays each file, prints PASS or FAIL with the first mismatch, and
 * resolves with the exit status: 0 when every file passed, 1 when one failed, 2 when one cannot be
 * read or is refused, or for a wrong command line (no file included).
 * @param {string[]} argv @param {{out?: (text: string) => void, env?: object}} [io]
 */
export async function main(argv, { out = (t) => process.stdout.write(t + "\n"), env = process.env } = {}) {
  const files = [];
  const options = { offline: false, trust: false, update: false, readLimit: READ_LIMIT };
  let secretsFile;
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Refused(`${argument} needs a value`);
      return argv[++i];
    };
    try {
      if (argument === "--offline") options.offline = true;
      else if (argument === "--trust-args") options.trust = true;
      else if (argument === "--update") options.update = true;
      else if (argument === "--full") options.full = true;
      else if (argument === "--backend-url") {
        options.backendUrl = value();
        if (!/^https?:\/\//.test(options.backendUrl)) throw new Refused(`--backend-url: expected an http:// or https:// URL, got ${show(options.backendUrl)}`);
      }
      else if (argument === "--bin") options.binary = value();
      else if (argument === "--secrets") secretsFile = value();
      else if (argument === "--read-limit") {
        const seconds = Number(value());
        if (!(seconds > 0)) throw new Refused("--read-limit: expected a positive number of seconds");
        options.readLimit = seconds * 1000;
      } else if (argument === "-h" || argument === "--help") { out(USAGE); return 0; }
      else if (argument === "--") files.push(...argv.slice(i + 1)), i = argv.length;
      else if (argument.startsWith("-")) throw new Refused(`unknown option ${argument}`);
      else files.push(argument);
    } catch (error) {
      out(`vmhost-replay: ${error.message}\n${USAGE}`);
      return 2;
    }
  }
  if (!files.length) {
    out(`vmhost-replay: no FILE given: nothing replayed\n${USAGE}`);
    return 2;
  }
  let secrets;
  try {
    secrets = secretsFile === undefined ? new Secrets({}, env) : Secrets.fromFile(secretsFile, env);
  } catch (error) {
    out(`vmhost-replay: ${error.message}`);
    return 2;
  }
  let failed = 0, unusable = 0;
  for (const file of files) {
    try {
      if (options.update) {
        const updated = await update(file, { ...options, secrets });
        if (updated.failure) { out(updated.failure.report(options.full)); out(`NOT UPDATED ${file}`); failed++; }
        else if (updated.changed) { writeFileSync(file, updated.text, "utf8"); out(updated.diff.trimEnd()); out(`UPDATED ${file}`); }
        else out(`UNCHANGED ${file}`);
        continue;
      }
      const failure = await replayFile(file, { ...options, secrets });
      if (failure === null) out(`PASS ${file}`);
      else { out(failure.report(options.full)); failed++; }
    } catch (error) {
      out(error instanceof Refused ? `REFUSED ${error.message}` : `ERROR ${file}: ${error.message}`);
      unusable++;
    }
  }
  out(`${files.length - failed - unusable} of ${files.length} passed${options.update ? " (updated)" : ""}`);
  return unusable ? 2 : failed ? 1 : 0;
}

const invoked = process.argv[1] && (() => {
  try { return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url)); } catch { return false; }
})();
if (invoked) process.exitCode = await main(process.argv.slice(2));
