// Copyright 2026 The redlock Authors.
//
// PostgresServer: the contended_handover phase's advisory-lock floor: the
// tests' throw-away PostgreSQL server (tests/support/postgres_server.h, which
// says where it runs, as whom and how it is stopped) and pgbench run
// against it.
//
//   absl::StatusOr<PostgresBinaries> bin = FindPostgresBinaries();
//   auto server = PostgresServer::Start(*bin, "/tmp/some-dir-of-ours");
//   absl::StatusOr<PgbenchResult> r = (*server)->RunPgbench(8, 3s, 1ms);
//
// Not thread-safe.

#ifndef REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_
#define REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/support/postgres_server.h"

namespace redlock::bench {

using ::redlock::testing::PostgresBinaries;

// testing::FindPostgresBinaries(), and kNotFound without pgbench too.
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
  // testing::PostgresServer::Start() in `dir` (which must exist, be ours
  // and be empty, and is left in place), superuser "bench".
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      const PostgresBinaries& bin, const std::string& dir);

  int port() const { return server_->port(); }

  // `pgbench -n -c clients -j clients -T seconds` (the block rounded up to
  // whole seconds, at least 1) with a script of pg_advisory_lock(1), a
  // `\sleep` of `hold` unless zero, and pg_advisory_unlock(1), against
  // 127.0.0.1. Killed after the block plus 60 s. kUnavailable if it failed
  // or printed no result.
  absl::StatusOr<PgbenchResult> RunPgbench(int clients, absl::Duration block,
                                           absl::Duration hold) const;

 private:
  PostgresServer(std::unique_ptr<testing::PostgresServer> server,
                 std::string pgbench)
      : server_(std::move(server)), pgbench_(std::move(pgbench)) {}

  const std::unique_ptr<testing::PostgresServer> server_;
  const std::string pgbench_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_POSTGRES_SERVER_H_
