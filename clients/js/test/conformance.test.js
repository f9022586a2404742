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
import { Mismatch, Secrets, loadTranscript, match, replayFile, stepSpans, stepText, substitute } from "../replay.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const TRANSCRIPTS = join(ROOT, "protocol", "conformance");
const READ_LIMIT = 5000; // ms: only turns a missing message into a failure; nothing waits on time
const BINARY = process.env.VMHOST_BIN || join(ROOT, ".build", "debug", "vmhost");
/** The secrets a transcript names, from `<name>.secrets.json` beside it (demo values). */
const secretsOf = (file) => {
  const beside = join(TRANSCRIPTS, file.replace(/\.jsonl$/, ".secrets.json"));
  return existsSync(beside) ? Secrets.fromFile(beside, {}) : new Secrets({}, {});
};
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

async function replay(file, offline = false) {
  const failure = await replayFile(join(TRANSCRIPTS, file), {
    binary: BINARY, offline, secrets: secretsOf(file), readLimit: READ_LIMIT, name: file,
  });
  if (failure) assert.fail(failure.report());
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

// The layout every writer of a recording writes a step in (protocol/conformance/layout.json: the
// host's --record and the Python replayer are checked against the same cases).
const LAYOUT = JSON.parse(readFileSync(join(TRANSCRIPTS, "layout.json"), "utf8")).cases;

for (const [index, c] of LAYOUT.entries()) {
  test(`layout.json ${index + 1}: ${c.why}`, () => {
    const text = stepText(c.step);
    assert.equal(text, c.text);
    const lines = text.split("\n");
    assert.deepEqual(stepSpans(lines), [[1, lines.length]]);
    assert.deepEqual(JSON.parse(text), c.step);
  });
}
