// Replays every conformance transcript (protocol/conformance/*.jsonl) against the real binary,
// one test per file, and a second time with no backend for those that recorded theirs
// (`offlineArgs`). Format and matching rules: protocol/conformance/README.md, implemented in
// ../replay.js; the reference replayer is the Python client's vmhost.replay. The binary is
// $VMHOST_BIN, else <repo>/.build/debug/vmhost. Standard library only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnChild, readFrames } from "../index.js";
import {
  Mismatch, Secrets, diff, isInert, loadTranscript, match, resolvePattern, show, substitute, transcriptArguments,
} from "../replay.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const TRANSCRIPTS = join(ROOT, "protocol", "conformance");
const READ_LIMIT = 5000; // ms: only turns a missing message into a failure; nothing waits on time
const EXIT_LIMIT = 5000;
const BINARY = process.env.VMHOST_BIN || join(ROOT, ".build", "debug", "vmhost");
/** The secrets a transcript names, from `<name>.secrets.json` beside it (demo values). */
const secretsOf = (file) => {
  const beside = join(TRANSCRIPTS, file.replace(/\.jsonl$/, ".secrets.json"));
  return existsSync(beside) ? Secrets.fromFile(beside, {}) : new Secrets({}, {});
};
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

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

async function replay(file, offline = false) {
  const path = join(TRANSCRIPTS, file);
  const steps = loadTranscript(path);
  const host = await Process.start(transcriptArguments(path, steps, offline));
  const SECRETS = secretsOf(file);
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
      if (isInert(step)) continue;
      if (has(step, "send")) {
        let message;
        try {
          message = substitute(step.send, captures, SECRETS);
        } catch (error) {
          fail(line, error.message);
        }
        host.write(JSON.stringify(message) + "\n");
      } else if (has(step, "sendRaw")) {
        host.write(step.sendRaw);
      } else if (has(step, "expect")) {
        const actual = await read(line, step.expect);
        try {
          match(step.expect, actual, captures, "$", SECRETS);
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
  if (has(loadTranscript(join(TRANSCRIPTS, file))[0][1], "offlineArgs")) {
    test(`conformance ${file.replace(/\.jsonl$/, "")} with no backend`, () => replay(file, true));
  }
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

// The cases every replayer checks its rules against (protocol/conformance/matching.json).
const CASES = JSON.parse(readFileSync(join(TRANSCRIPTS, "matching.json"), "utf8"));

for (const [index, c] of CASES.match.entries()) {
  test(`matching.json match ${index + 1}: ${c.why}`, () => {
    const captures = new Map(Object.entries(c.captures ?? {}));
    const secrets = new Secrets(c.secrets ?? {}, {});
    if (c.matches) {
      match(c.pattern, c.actual, captures, "$", secrets);
      for (const [name, value] of Object.entries(c.capturesAfter ?? {})) assert.deepEqual(captures.get(name), value);
    } else {
      assert.throws(() => match(c.pattern, c.actual, captures, "$", secrets), Mismatch);
    }
  });
}

for (const [index, c] of CASES.send.entries()) {
  test(`matching.json send ${index + 1}: ${c.why}`, () => {
    const captures = new Map(Object.entries(c.captures ?? {}));
    const secrets = new Secrets(c.secrets ?? {}, {});
    if (has(c, "sent")) assert.deepEqual(substitute(c.send, captures, secrets), c.sent);
    else assert.throws(() => substitute(c.send, captures, secrets), Mismatch);
  });
}
