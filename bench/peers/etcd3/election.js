// Copyright 2026 The redlock Authors.
//
// One candidate (or observer) of etcd's leader election with a lease TTL of
// our choosing, for redlock-e2e-bench's election phase
// (bench/e2e/phases/election.cc). etcdctl 3.4's `elect` has no TTL flag (its
// session lease is always 60 s); the etcd3 package's Election is the same
// recipe as the Go client's concurrency.Election (a key per candidate under
// the election's prefix, on a lease kept alive every TTL/3; the oldest key
// leads; the others watch the deletion of the key created just before
// theirs).
//
//   node election.js --endpoints=http://127.0.0.1:P,... --name=NAME \
//       --value=V --ttl=2
//     campaigns; prints "campaigning" once its key is in and it waits,
//     "elected V" once elected; on SIGTERM or SIGINT
//     resigns (revokes its lease) and exits 0.
//   node election.js --endpoints=... --name=NAME --listen
//     prints "leader V" for the leader and for every new one.
//
// Every line is written as soon as the event is seen: the phase timestamps
// it when it reads it. Errors go to stderr, with exit status 1.
"use strict";

const { Etcd3 } = require("etcd3");

function flag(name, fallback) {
  const prefix = `--${name}=`;
  const arg = process.argv.find((a) => a.startsWith(prefix));
  return arg === undefined ? fallback : arg.slice(prefix.length);
}

function fail(what) {
  process.stderr.write(`[etcd3 election] ${what}\n`);
  process.exit(1);
}

const hosts = flag("endpoints", "").split(",").filter((h) => h.length > 0);
const name = flag("name", "");
if (hosts.length === 0 || name === "") fail("needs --endpoints and --name");
const client = new Etcd3({ hosts });
const election = client.election(name, Number(flag("ttl", "60")));

async function listen() {
  const observer = await election.observe();
  let last;
  const show = (value) => {
    if (value === undefined || value === last) return;
    last = value;
    process.stdout.write(`leader ${value}\n`);
  };
  show(observer.leader());
  observer.on("change", show);
  observer.on("error", (e) => fail(`observe: ${e && e.message}`));
  const stop = () => {
    observer.cancel().finally(() => {
      client.close();
      process.exit(0);
    });
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

function campaign() {
  const value = flag("value", "");
  const c = election.campaign(value);
  let resigning = false;
  // "_isWaiting": the package's own event once the key is in and the
  // candidate waits for the keys before it to go.
  c.on("_isWaiting", () => process.stdout.write("campaigning\n"));
  c.on("elected", () => process.stdout.write(`elected ${value}\n`));
  c.on("error", (e) => {
    if (!resigning) fail(`campaign: ${e && e.message}`);
  });
  const stop = () => {
    if (resigning) return;
    resigning = true;
    c.resign()
      .then(() => {
        client.close();
        process.exit(0);
      })
      .catch((e) => fail(`resign: ${e && e.message}`));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (process.argv.includes("--listen")) {
  listen().catch((e) => fail(`observe: ${e && e.message}`));
} else {
  campaign();
}
