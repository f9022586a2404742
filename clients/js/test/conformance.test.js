// Replays every conformance transcript (protocol/conformance/*.jsonl) against the real binary,
// one test per file. Format and matching rules: protocol/conformance/README.md; the reference
// replayer is clients/python/tests/test_conformance.py. The binary is $VMHOST_BIN, else
// <repo>/.build/debug/vmhost. Standard library only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnChild, readFrames } from "../index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const TRANSCRIPTS = join(ROOT, "protocol", "conformance");
const READ_LIMIT = 5000; // ms: only turns a missing message into a failure; nothing waits on time
const EXIT_LIMIT = 5000;
const BINARY = process.env.VMHOST_BIN || join(ROOT, ".build", "debug", "vmhost");

class Mismatch extends Error {}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const show = (v) => JSON.stringify(v);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

/** JSON equality: same type and value; 1 equals 1.0, true is not 1. */
function equal(a, b) {
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

/** A pattern string that is no pattern: matched as text. */
function isPlainText(pattern) {
  return typeof pattern === "string" && pattern !== "$any" &&
    !pattern.startsWith("$capture:") && !pattern.startsWith("$ref:");
}

/** Throws Mismatch naming the first difference; fills `captures`. */
function match(expected, actual, captures, path = "$") {
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
      if (!captures.has(name)) throw new Mismatch(`${path}: $${name} was never captured`);
      if (!equal(captures.get(name), actual)) {
        throw new Mismatch(`${path}: expected $${name} = ${show(captures.get(name))}, got ${show(actual)}`);
      }
      return;
    }
  }
  if (isObject(expected) && Object.keys(expected).length === 1 && has(expected, "$literal")) {
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
      match(value, actual[key], captures, `${path}.${key}`);
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
    expected.forEach((e, i) => match(e, actual[i], captures, `${path}[${i}]`));
    return;
  }
  if (!equal(expected, actual)) throw new Mismatch(`${path}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Replaces "$ref:NAME" strings in a message to send by the captured values. */
function substitute(value, captures) {
  if (typeof value === "string" && value.startsWith("$ref:")) {
    const name = value.slice("$ref:".length);
    if (!captures.has(name)) throw new Mismatch(`send uses $${name}, which was never captured`);
    return captures.get(name);
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, captures));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, captures)]));
  }
  return value;
}

/**
 * The pattern as the value it stands for next to `actual`: "$any" and "$capture:" become the actual
 * value, "$ref:" the captured one, "...": true the actual extra members, and members follow the
 * order of `actual`; so a diff shows only real differences.
 */
function resolvePattern(pattern, actual, captures) {
  if (isObject(pattern) && Object.keys(pattern).length === 1 && has(pattern, "$literal")) return pattern.$literal;
  if (typeof pattern === "string") {
    if (pattern === "$any" || pattern.startsWith("$capture:")) return actual;
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
function diff(expected, actual) {
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

/** The binary on a pipe, read as fast as it writes (no pacing) into a queue of raw frames. */
class Process {
  static async start(args) {
    const child = await spawnChild(args, { binary: BINARY, stderr: "pipe" });
    return new Process(child);
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
    readFrames(child.stdout, (line) => { this.frames.push(line); this.notify(); },
      () => { this.ended = true; this.notify(); });
  }

  notify() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  write(text) {
    this.child.stdin.write(text, "utf8");
  }

  close() {
    this.child.stdin.end();
  }

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

function load(path) {
  const steps = [];
  readFileSync(path, "utf8").split("\n").forEach((text, index) => {
    if (!text.trim()) return;
    try {
      steps.push([index + 1, JSON.parse(text)]);
    } catch (error) {
      throw new Error(`${path}:${index + 1}: not JSON: ${error.message}`);
    }
  });
  return steps;
}

async function replay(file) {
  const steps = load(join(TRANSCRIPTS, file));
  const [firstLine, first] = steps[0];
  assert.ok(first && Array.isArray(first.args), `${file}:${firstLine}: the first line must be {"args": [...]}`);
  const host = await Process.start(first.args);
  const captures = new Map();
  let closed = false;
  let exited = false;

  const fail = (line, why, expected, actual) => {
    const resolved = expected !== undefined && actual !== undefined
      ? resolvePattern(expected, actual, captures) : undefined;
    let text = `${file}:${line}: ${why}`;
    if (expected !== undefined) text += `\n  expected: ${show(expected)}`;
    if (actual !== undefined) text += `\n  actual:   ${show(actual)}`;
    if (expected !== undefined && actual !== undefined) {
      text += "\n  diff:\n    " + diff(resolved, actual).split("\n").join("\n    ");
    }
    text += `\n  stderr: ${host.stderr.trim() || "(empty)"}`;
    assert.fail(text);
  };

  /** The next message, parsed; fails on a hang, the end of stdout or a frame that is not JSON. */
  const read = async (line, expected) => {
    const next = await host.next();
    if (next.timeout) fail(line, `no message within ${READ_LIMIT / 1000}s`, expected);
    if (next.eof) fail(line, "the host closed stdout", expected);
    try {
      return JSON.parse(next.line);
    } catch {
      return fail(line, `the host wrote a frame that is not JSON: ${next.line}`, expected);
    }
  };

  try {
    for (const [line, step] of steps.slice(1)) {
      if (has(step, "comment")) continue;
      if (has(step, "send")) {
        let message;
        try {
          message = substitute(step.send, captures);
        } catch (error) {
          fail(line, error.message);
        }
        host.write(JSON.stringify(message) + "\n");
      } else if (has(step, "sendRaw")) {
        host.write(step.sendRaw);
      } else if (has(step, "expect")) {
        const actual = await read(line, step.expect);
        try {
          match(step.expect, actual, captures);
        } catch (error) {
          if (!(error instanceof Mismatch)) throw error;
          fail(line, error.message, step.expect, actual);
        }
      } else if (has(step, "close")) {
        host.close();
        closed = true;
      } else if (has(step, "exit")) {
        const next = await host.next();
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
      const next = await host.next();
      if (next.timeout) fail(last, `stdout did not end within ${READ_LIMIT / 1000}s after EOF`);
      if (next.line !== undefined) {
        let extra = next.line;
        try { extra = JSON.parse(next.line); } catch { /* shown raw */ }
        fail(last, "an unexpected message after the last line", undefined, extra);
      }
      const status = await host.waitExit();
      if (status === undefined) fail(last, `the host did not exit within ${EXIT_LIMIT / 1000}s after EOF`);
      if (status !== 0) fail(last, `exit status ${status} after EOF, expected 0 (SPEC §7)`);
    }
  } finally {
    await host.kill();
  }
}

const files = readdirSync(TRANSCRIPTS).filter((name) => name.endsWith(".jsonl")).sort();

test("there are conformance transcripts", () => {
  assert.ok(files.length >= 20, `only ${files.length} transcripts in ${TRANSCRIPTS}`);
});

for (const file of files) {
  test(`conformance ${file.replace(/\.jsonl$/, "")}`, () => replay(file));
}

test("match: $literal compares plainly, patterns inside it included", () => {
  const captures = new Map();
  match({ $literal: { "...": true, a: "$any" } }, { "...": true, a: "$any" }, captures);
  assert.throws(() => match({ $literal: "$any" }, 1, captures), Mismatch);
  assert.throws(() => match({ $literal: { "...": true } }, { a: 1 }, captures), Mismatch);
  match({ a: 1, "...": true }, { a: 1, b: 2 }, captures);
  match({ error: { code: 1, message: "Unknown view-model \"a\"" } }, { error: { code: 1, message: "no view-model a" } }, captures);
  assert.throws(() => match({ error: { code: 1, message: "x" } }, { error: { code: 1, message: 2 } }, captures), Mismatch);
  assert.throws(() => match({ error: { code: 1, message: "x" } }, { error: { code: 2, message: "x" } }, captures), Mismatch);
});
