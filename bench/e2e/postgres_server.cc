// Copyright 2026 The redlock Authors.

#include "bench/e2e/postgres_server.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/e2e/common.h"
#include "tests/support/text_files.h"

namespace redlock::bench {
namespace {

// The value after `label` on the first line of `text` that starts with
// it (after leading spaces), up to the next space.
bool FieldAfter(absl::string_view text, absl::string_view label,
                double* value) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, label)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    return absl::SimpleAtod(line.substr(0, line.find(' ')), value);
  }
  return false;
}

}  // namespace

absl::StatusOr<PostgresBinaries> FindPostgresBinaries() {
  absl::StatusOr<PostgresBinaries> b = testing::FindPostgresBinaries();
  if (b.ok() && b->pgbench.empty()) {
    return absl::NotFoundError(
        "no pgbench in /usr/lib/postgresql/*/bin or on PATH (Debian: "
        "postgresql-15)");
  }
  return b;
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    const PostgresBinaries& bin, const std::string& dir) {
  testing::PostgresServer::Config config;
  config.superuser = "bench";
  config.dir = dir;
  absl::StatusOr<std::unique_ptr<testing::PostgresServer>> server =
      testing::PostgresServer::Start(bin, std::move(config));
  if (!server.ok()) return server.status();
  return std::unique_ptr<PostgresServer>(
      new PostgresServer(*std::move(server), bin.pgbench));
}

absl::StatusOr<PgbenchResult> PostgresServer::RunPgbench(
    int clients, absl::Duration block, absl::Duration hold) const {
  const std::string& dir = server_->dir();
  const std::string script = absl::StrCat(
      dir, "/advisory-", clients, "-", absl::ToInt64Microseconds(hold), ".sql");
  {
    std::ofstream out(script);
    out << "SELECT pg_advisory_lock(1);\n";
    if (hold > absl::ZeroDuration()) {
      out << "\\sleep " << absl::ToInt64Microseconds(hold) << " us\n";
    }
    out << "SELECT pg_advisory_unlock(1);\n";
    if (!out)
      return absl::UnavailableError(absl::StrCat("cannot write ", script));
  }
  const int64_t seconds = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(block))));
  const std::string log = absl::StrCat(
      dir, "/pgbench-", clients, "-", Now().time_since_epoch().count(), ".log");
  const testing::ClientRun run = server_->RunClient(
      {pgbench_, "-h", "127.0.0.1", "-p", absl::StrCat(port()), "-U",
       server_->superuser(), "-n", "-c", absl::StrCat(clients), "-j",
       absl::StrCat(clients), "-T", absl::StrCat(seconds), "-f", script,
       "postgres"},
      log, absl::Seconds(seconds + 60));
  const std::string text = testing::ReadFile(log);
  PgbenchResult r;
  double transactions = 0;
  if (run.status != 0 ||
      !FieldAfter(
          text, "number of transactions actually processed:", &transactions) ||
      !FieldAfter(text, "tps =", &r.tps)) {
    std::string tail =
        text.size() > 400 ? text.substr(text.size() - 400) : text;
    return absl::UnavailableError(
        absl::StrCat("pgbench exited with ", run.status, ": ", tail));
  }
  r.transactions = static_cast<int64_t>(transactions);
  FieldAfter(text, "latency average =", &r.latency_ms);
  r.cpu_s = run.cpu_s;
  return r;
}

}  // namespace redlock::bench
