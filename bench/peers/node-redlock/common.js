// Copyright 2026 The redlock Authors.
//
// What node-redlock's two peer scripts share (contender.js for the
// contention_peer phase, threads.js for contended_handover): their flags,
// node-redlock's settings from them, the stdin line reader, the "masters"
// line, the clients, and the way out. scripts/bench.sh copies it next to
// them.
"use strict";

const readline = require("readline");
const Redis = require("ioredis");
const { default: Redlock } = require("redlock");

// The value of --NAME=VALUE on the command line, or `fallback`.
function flag(name, fallback) {
  const prefix = `--${name}=`;
  const arg = process.argv.find((a) => a.startsWith(prefix));
  return arg === undefined ? fallback : arg.slice(prefix.length);
}

// node-redlock's settings from --drift_factor, --retry_count,
// --retry_delay_ms and --retry_jitter_ms; `defaults` holds the fallbacks of
// the last three (retryCount, retryDelay, retryJitter, as strings).
function redlockSettings(defaults) {
  return {
    driftFactor: Number(flag("drift_factor", "0.01")),
    retryCount: Number(flag("retry_count", defaults.retryCount)),
    retryDelay: Number(flag("retry_delay_ms", defaults.retryDelay)),
    retryJitter: Number(flag("retry_jitter_ms", defaults.retryJitter)),
    automaticExtensionThreshold: 500,
  };
}

// A function that writes "[TAG] what" on stderr.
function failWith(tag) {
  return (what) => process.stderr.write(`[${tag}] ${what}\n`);
}

// What a thrown error says: its message, or the thing itself.
function errorText(e) {
  return String(e && e.message ? e.message : e);
}

// Lines from stdin, one promise at a time; null at end of file. Call once.
function lineReader() {
  const input = readline.createInterface({ input: process.stdin });
  const pending = [];
  const waiting = [];
  let closed = false;
  input.on("line", (line) => {
    if (waiting.length > 0) waiting.shift()(line);
    else pending.push(line);
  });
  input.on("close", () => {
    closed = true;
    while (waiting.length > 0) waiting.shift()(null);
  });
  return function nextLine() {
    if (pending.length > 0) return Promise.resolve(pending.shift());
    if (closed) return Promise.resolve(null);
    return new Promise((resolve) => waiting.push(resolve));
  };
}

// The first line, "masters URI,URI,...": { uris } ; at end of file
// { code: 0 }; anything else, said through `fail`, { code: 2 }.
async function readMasters(nextLine, fail) {
  const first = await nextLine();
  if (first === null) return { code: 0 };
  if (!first.startsWith("masters ")) {
    fail(`expected "masters ...", got "${first}"`);
    return { code: 2 };
  }
  return { uris: first.slice("masters ".length).split(",").filter((u) => u) };
}

// An ioredis client of `uri` that starts connecting at once and whose errors
// are left to the commands that meet them.
function newClient(uri) {
  const c = new Redis(uri, { enableOfflineQueue: true, lazyConnect: false });
  c.on("error", () => {});
  return c;
}

// A Redlock over `clients` whose refused attempts raise no "error" event.
function newRedlock(clients, settings) {
  const redlock = new Redlock(clients, settings);
  redlock.on("error", () => {});  // A refused attempt is not an error here.
  return redlock;
}

// Resolves at end of stdin: the phase closing it.
async function untilEof(nextLine) {
  while ((await nextLine()) !== null) {
  }
}

// Runs `main` (an async function returning the exit code) and exits with
// its code; a throw is said through `fail` and exits 1.
function run(main, fail) {
  main().then((code) => process.exit(code), (e) => {
    fail(String(e && e.stack ? e.stack : e));
    process.exit(1);
  });
}

module.exports = {
  flag, redlockSettings, failWith, errorText, lineReader, readMasters,
  newClient, newRedlock, untilEof, run,
};
