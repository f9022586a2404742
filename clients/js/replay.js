// The rules of a transcript replay (protocol/conformance/README.md, "Matching" and "Secrets"),
// shared by the Node client's conformance suite: `match` a pattern against a message, `substitute`
// what a `send` holds, read a transcript, resolve a pattern for a report, diff two values. The
// Python client's `vmhost.replay` implements the same rules; both are checked against
// protocol/conformance/matching.json. Standard library only.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

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

/** A transcript's steps, `[lineNumber, step]`, blank lines skipped; throws naming a bad line. */
export function loadTranscript(path) {
  const steps = [];
  readFileSync(path, "utf8").split("\n").forEach((text, index) => {
    if (!text.trim()) return;
    let step;
    try {
      step = JSON.parse(text);
    } catch (error) {
      throw new Error(`${path}:${index + 1}: not JSON: ${error.message}`);
    }
    if (!isObject(step)) throw new Error(`${path}:${index + 1}: a step is a JSON object, got ${show(step)}`);
    steps.push([index + 1, step]);
  });
  if (!steps.length || !Array.isArray(steps[0][1].args)) throw new Error(`${path}:1: the first line must be {"args": [...]}`);
  return steps;
}

/** The options to start the host with: `args`, or with `offline` the `offlineArgs` ($transcript: its path). */
export function transcriptArguments(path, steps, offline = false) {
  const first = steps[0][1];
  if (!offline) return first.args.map(String);
  if (!Array.isArray(first.offlineArgs)) throw new Error(`${path}:1: no offlineArgs: the transcript has no recorded backend exchanges`);
  const here = resolve(path);
  return first.offlineArgs.map((a) => String(a).split("$transcript").join(here));
}

/** Steps that are no step for a replayer: documentation and recorded backend exchanges. */
export const isInert = (step) => has(step, "comment") || has(step, "backend");
