// Copyright 2026 The redlock Authors.
//
// PostgresServer: a throw-away PostgreSQL server on 127.0.0.1 for the
// contended_handover phase's advisory-lock floor, and pgbench run against
// it. Debian's postgresql-15 ships initdb, pg_ctl, postgres and pgbench in
// /usr/lib/postgresql/15/bin (not on PATH); they are looked up there first
// (newest version first), then on PATH.
//
//   absl::StatusOr<PostgresBinaries> bin = FindPostgresBinaries();
//   auto server = PostgresServer::Start(*bin, "/tmp/some-dir-of-ours");
//   absl::StatusOr<PgbenchResult> r = (*server)->RunPgbench(8, 3s, 1ms);
//
// initdb refuses to run as root: as root, initdb, pg_ctl and the server run
// as the user "postgres" (the Debian package creates it) or, without one,
// "nobody", through runuser(1), and the directory is handed to that user.
// The server runs with fsync=off (the floor is the lock manager, not the
// disk), listens on 127.0.0.1 and a socket in the directory only, and is
// stopped with `pg_ctl stop -m fast` by the destructor; if that does not
// stop it, the postmaster named by the data directory's postmaster.pid is
// SIGKILLed (only if that PID is a "postgres" process). pg_ctl detaches
// the postmaster, so a harness that is SIGKILLed leaves it running: one
// server in a temporary directory, on a free port.
//
// Every command runs with a deadline and is SIGKILLed past it. Not
// thread-safe.

#ifndef REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_
#define REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace redlock::bench {

struct PostgresBinaries {
  std::string initdb;
  std::string pg_ctl;
  std::string postgres;
  std::string pgbench;
};

// kNotFound, naming what is missing, unless all four are found (in one
// /usr/lib/postgresql/VERSION/bin, or else each on PATH).
absl::StatusOr<PostgresBinaries> FindPostgresBinaries();

// What one pgbench run reported.
struct PgbenchResult {
  int64_t transactions = 0;  // "number of transactions actually processed".
  double tps = 0;            // "tps = ... (without initial connection time)".
  double latency_ms = 0;     // "latency average"; 0 if not printed.
  double cpu_s = 0;          // pgbench's own, user + system (wait4).
};

class PostgresServer {
 public:
  // initdb into `dir`/data (superuser "bench", trust authentication), then
  // `pg_ctl start` on a free loopback port, waiting (pg_ctl -w, at most
  // 60 s) until it accepts connections. `dir` must exist, be ours and be
  // empty; as root it is chown'ed to the user the server runs as.
  // kUnavailable with the reason (and the log's path) if a step failed; a
  // server that did start is stopped again.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      const PostgresBinaries& bin, const std::string& dir);

  // Stops the server (see the file comment); a no-op if it never started.
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }

  // `pgbench -n -c clients -j clients -T seconds` (the block rounded up to
  // whole seconds, at least 1) with a script of pg_advisory_lock(1), a
  // `\sleep` of `hold` unless zero, and pg_advisory_unlock(1), against
  // 127.0.0.1. Killed after the block plus 60 s. kUnavailable if it failed
  // or printed no result.
  absl::StatusOr<PgbenchResult> RunPgbench(int clients, absl::Duration block,
                                           absl::Duration hold) const;

 private:
  PostgresServer(PostgresBinaries bin, std::string dir)
      : bin_(std::move(bin)), dir_(std::move(dir)) {}

  void Stop();

  // `argv` as the server's user (through runuser as root), with cwd `dir_`
  // and output appended to `log`; its exit status, or -1 if it could not be
  // started, was killed or ran past `timeout`.
  int RunAsServerUser(std::vector<std::string> argv, const std::string& log,
                      absl::Duration timeout) const;

  const PostgresBinaries bin_;
  const std::string dir_;
  std::string run_as_;  // The user through runuser; "" when not root.
  int port_ = 0;
  bool started_ = false;  // pg_ctl start was run: Stop() has work to do.
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_
