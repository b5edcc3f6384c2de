// Copyright 2026 The redlock Authors.
//
// node-redlock's kind of redlock-e2e-bench's contended_handover phase
// (bench/e2e/phases/contended_handover.cc): --contenders concurrent async
// workers in ONE node process, each with a Redlock instance and ioredis
// clients (one per master) of its own, each looping
// acquire([key], ttl) -> hold (--hold_us; none at 0) -> release with no
// pause, as redlock-e2e-thread-contenders does with threads:
//
//   in  "masters redis://H:P,..."  connect every worker's clients
//   out one JSON line, then "done" (below)
//   in  end of file                exit
//
// Every worker is connected and has taken and released a lock on a key of
// its own before the clock starts; then every worker starts acquisitions
// until --block_ms has passed and finishes the one it is in. The JSON line
// has the fields redlock-e2e-thread-contenders writes (see
// bench/e2e/thread_contenders_main.cc), with "handed_over": null (node-redlock
// has no hand-over) and "attempts" from each lock's own attempts list; CPU
// is process.cpuUsage() over the loop (the whole process).
//
// Usage: node threads.js --contenders=8 --key=KEY --ttl_ms=10000
//        --hold_us=0 --block_ms=3000 --retry_count=6000 --retry_delay_ms=10
//        --retry_jitter_ms=5 --drift_factor=0.01
// Not meant to be run by hand; scripts/bench.sh installs its dependencies
// and copies common.js next to it.
"use strict";

const {
  flag, redlockSettings, failWith, errorText, lineReader, readMasters,
  newClient, newRedlock, untilEof, run,
} = require("./common.js");

const contenders = Number(flag("contenders", "8"));
const key = flag("key", "contended-handover-node");
const ttlMs = Number(flag("ttl_ms", "10000"));
const holdMs = Number(flag("hold_us", "0")) / 1000;
const blockNs = BigInt(Math.round(Number(flag("block_ms", "3000")) * 1e6));
const settings = redlockSettings(
    { retryCount: "6000", retryDelay: "10", retryJitter: "5" });
const fail = failWith("node-redlock threads");

const nowNs = () => process.hrtime.bigint();
const us = (ns) => Math.round(Number(ns) / 100) / 10;  // 0.1 µs.

const nextLine = lineReader();

async function worker(redlock, end, holders, report) {
  while (nowNs() < end) {
    const called = nowNs();
    let lock;
    try {
      lock = await redlock.acquire([key], ttlMs);
    } catch (e) {
      ++report.failedAcquisitions;
      report.lastError = errorText(e);
      report.lastReturn = nowNs();
      continue;
    }
    const acquired = nowNs();
    report.lastReturn = acquired;
    if (holders.now++ !== 0) ++holders.overlaps;
    if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
    --holders.now;
    try {
      await lock.release();
    } catch (e) {
      ++report.failedReleases;
      report.lastError = errorText(e);
    }
    const releaseEnd = nowNs();
    report.lastReturn = releaseEnd;
    report.sections.push({ called, acquired, releaseEnd });
    report.attempts += lock.attempts.length;
  }
}

async function main() {
  const { uris, code } = await readMasters(nextLine, fail);
  if (uris === undefined) return code;
  const allClients = [];
  const redlocks = [];
  for (let i = 0; i < contenders; ++i) {
    const clients = uris.map(newClient);
    allClients.push(...clients);
    redlocks.push(newRedlock(clients, settings));
  }
  // Warm-up: every client connected, the scripts loaded on every master.
  for (const c of allClients) await c.ping();
  for (let i = 0; i < contenders; ++i) {
    const lock = await redlocks[i].acquire([`${key}-warmup-${i}`], ttlMs);
    await lock.release();
  }

  const holders = { now: 0, overlaps: 0 };
  const reports = redlocks.map(() => ({
    sections: [], failedAcquisitions: 0, failedReleases: 0, lastError: "",
    attempts: 0, lastReturn: 0n,
  }));
  const start = nowNs();
  const end = start + blockNs;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
      redlocks.map((r, i) => worker(r, end, holders, reports[i])));
  const cpu = process.cpuUsage(cpuBefore);

  let all = [];
  let last = start;
  const summary = {
    grants: 0, failed_acquisitions: 0, failed_releases: 0, last_error: "",
    duration_s: 0, cpu_s: (cpu.user + cpu.system) / 1e6, per_contender: [],
    overlaps: holders.overlaps, attempts: 0, handed_over: null,
    waits_us: [], gaps_us: [],
  };
  for (const r of reports) {
    summary.per_contender.push(r.sections.length);
    all = all.concat(r.sections);
    summary.failed_acquisitions += r.failedAcquisitions;
    summary.failed_releases += r.failedReleases;
    summary.attempts += r.attempts;
    if (r.lastError) summary.last_error = r.lastError;
    if (r.lastReturn > last) last = r.lastReturn;
  }
  all.sort((a, b) => (a.acquired < b.acquired ? -1 : a.acquired > b.acquired ? 1 : 0));
  summary.grants = all.length;
  summary.duration_s = Number(last - start) / 1e9;
  for (let i = 0; i < all.length; ++i) {
    summary.waits_us.push(us(all[i].acquired - all[i].called));
    if (i > 0) summary.gaps_us.push(us(all[i].acquired - all[i - 1].releaseEnd));
  }
  process.stdout.write(JSON.stringify(summary) + "\ndone\n");

  // Stay connected until the phase closes our stdin.
  await untilEof(nextLine);
  for (const c of allClients) c.disconnect();
  return 0;
}

run(main, fail);
