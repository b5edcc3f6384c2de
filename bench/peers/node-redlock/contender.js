// Copyright 2026 The redlock Authors.
//
// One node-redlock contender of redlock-e2e-bench's contention_peer phase
// (bench/e2e/phases/contention_peer.cc), speaking the line protocol of
// bench/e2e/handoff_protocol.h over stdin/stdout exactly as
// redlock-e2e-handoff-contender does:
//
//   in  "masters redis://H:P,..."  connect one ioredis client per master
//   out "ready"                    connected, one lock taken and released
//   in  "go START_NS END_NS"       loop acquire -> release from START
//                                  (CLOCK_MONOTONIC ns; Node's
//                                  process.hrtime is the same clock on
//                                  Linux) and start nothing after END
//   out "section ..." lines, "failed_wait ..." lines, counters, "done"
//   in  end of file                exit
//
// Usage: node contender.js --id=N --key=KEY --ttl_ms=1000 --retry_count=50
//        --retry_delay_ms=40 --retry_jitter_ms=20 --drift_factor=0.01
// Not meant to be run by hand; scripts/bench.sh installs its dependencies
// and copies common.js next to it.
"use strict";

const {
  flag, redlockSettings, failWith, errorText, lineReader, readMasters,
  newClient, newRedlock, untilEof, run,
} = require("./common.js");

const id = Number(flag("id", "0"));
const key = flag("key", "contention-peer");
const ttlMs = Number(flag("ttl_ms", "1000"));
const settings = redlockSettings(
    { retryCount: "50", retryDelay: "40", retryJitter: "20" });
const fail = failWith(`node-redlock contender ${id}`);

const nowNs = () => process.hrtime.bigint();

const nextLine = lineReader();

async function main() {
  const { uris, code } = await readMasters(nextLine, fail);
  if (uris === undefined) return code;
  let requests = 0;
  const clients = uris.map((uri) => {
    const c = newClient(uri);
    // Every command this client sends, counted as our clients count theirs.
    const send = c.sendCommand.bind(c);
    c.sendCommand = (command, stream) => {
      ++requests;
      return send(command, stream);
    };
    return c;
  });
  const redlock = newRedlock(clients, settings);

  // Warm-up: every client connected and the scripts loaded on every master.
  for (const c of clients) await c.ping();
  {
    const lock = await redlock.acquire([`${key}-warmup-${id}`], ttlMs);
    await lock.release();
  }
  process.stdout.write("ready\n");

  const go = await nextLine();
  if (go === null) return 0;
  const f = go.split(" ");
  if (f.length !== 3 || f[0] !== "go") {
    fail(`expected "go START_NS END_NS", got "${go}"`);
    return 2;
  }
  const start = BigInt(f[1]);
  const end = BigInt(f[2]);
  while (nowNs() < start) await new Promise((r) => setTimeout(r, 0));

  const out = [];
  const failedWaits = [];
  let failedAcquisitions = 0;
  let failedReleases = 0;
  let lastError = "";
  let waitingNs = 0n;
  const requestsBefore = requests;
  const cpuBefore = process.cpuUsage();
  while (nowNs() < end) {
    const called = nowNs();
    let lock;
    try {
      lock = await redlock.acquire([key], ttlMs);
    } catch (e) {
      const returned = nowNs();
      waitingNs += returned - called;
      ++failedAcquisitions;
      lastError = errorText(e);
      failedWaits.push(`failed_wait ${called} ${returned}`);
      continue;
    }
    const acquired = nowNs();
    waitingNs += acquired - called;
    const releaseStart = nowNs();
    try {
      await lock.release();
    } catch (e) {
      ++failedReleases;
      lastError = errorText(e);
    }
    const releaseEnd = nowNs();
    out.push(
        `section ${called} ${acquired} ${releaseStart} ${releaseEnd} ` +
        `${lock.attempts.length} -1 0 0 0`);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const sent = requests - requestsBefore;
  out.push(...failedWaits);
  out.push(`failed_acquisitions ${failedAcquisitions}`);
  out.push(`failed_releases ${failedReleases}`);
  out.push(`cpu ${(cpu.user / 1e6).toFixed(6)} ${(cpu.system / 1e6).toFixed(6)}`);
  out.push(`requests ${sent}`);
  out.push("subscriber_requests 0");
  out.push("subscriber_messages 0");
  out.push(`waiting_ns ${waitingNs}`);
  if (lastError) out.push(`error ${lastError.replace(/[\r\n]/g, " ")}`);
  out.push("done");
  process.stdout.write(out.join("\n") + "\n");

  // Stay connected until the phase has read the masters' counters.
  await untilEof(nextLine);
  for (const c of clients) c.disconnect();
  return 0;
}

run(main, fail);
