// Copyright 2026 The redlock Authors.
//
// A candidate in an election that, once leader, writes an account's balance
// to PostgreSQL with its epoch as the fencing token: the process the
// election test (postgres_fencing_test.cc) starts twice, stops and resumes.
//
//   postgres_leader --masters=redis://127.0.0.1:7001,... --election=ledger \
//       --conninfo="host=127.0.0.1 port=5432 user=postgres dbname=postgres" \
//       --account=alice --balance=150 --go=/tmp/dir/go-b
//
// Prints "leader EPOCH" once elected, then waits until the file --go exists
// and writes once (kFencedUpdate with the epoch, whether or not it still
// leads: a leader that checked valid() just before a pause writes exactly
// so), prints "write: applied" or "write: fenced" and exits 0. Exits 1 on an
// error (on stderr), 2 if --go did not appear within --wait.

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "examples/postgres/fenced_accounts.h"
#include "redlock/redlock.h"

ABSL_FLAG(std::string, masters, "", "comma-separated redis:// URIs");
ABSL_FLAG(std::string, election, "ledger", "the election's name");
ABSL_FLAG(std::string, conninfo, "", "libpq connection string");
ABSL_FLAG(std::string, account, "alice", "the row to write");
ABSL_FLAG(int64_t, balance, 0, "the balance to write");
ABSL_FLAG(std::string, go, "", "write once this file exists");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(1), "the leadership's lease");
ABSL_FLAG(absl::Duration, wait, absl::Seconds(60),
          "how long to campaign, and then to wait for --go");

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  redlock::Options options;
  options.masters =
      absl::StrSplit(absl::GetFlag(FLAGS_masters), ',', absl::SkipEmpty());
  options.request_timeout = absl::Milliseconds(300);
  options.retry.min_delay = absl::Milliseconds(5);
  options.retry.max_delay = absl::Milliseconds(20);
  auto client = redlock::Redlock::Create(options);
  if (!client.ok()) return Fail(client.status().ToString());

  std::unique_ptr<PGconn, decltype(&PQfinish)> db(
      PQconnectdb(absl::GetFlag(FLAGS_conninfo).c_str()), &PQfinish);
  if (PQstatus(db.get()) != CONNECTION_OK) {
    return Fail(PQerrorMessage(db.get()));
  }

  redlock::CampaignOptions campaign;
  campaign.ttl = absl::GetFlag(FLAGS_ttl);
  campaign.wait = absl::GetFlag(FLAGS_wait);
  absl::StatusOr<redlock::Leadership> lead =
      (*client)->Campaign(absl::GetFlag(FLAGS_election),
                          std::to_string(getpid()), std::move(campaign));
  if (!lead.ok()) return Fail(lead.status().ToString());
  std::printf("leader %llu\n", static_cast<unsigned long long>(lead->epoch()));
  std::fflush(stdout);

  const std::string go = absl::GetFlag(FLAGS_go);
  const absl::Time deadline = absl::Now() + absl::GetFlag(FLAGS_wait);
  while (access(go.c_str(), F_OK) != 0) {
    if (absl::Now() > deadline) return 2;
    absl::SleepFor(absl::Milliseconds(10));
  }
  absl::StatusOr<bool> written = redlock::example::FencedUpdate(
      db.get(), absl::GetFlag(FLAGS_account), absl::GetFlag(FLAGS_balance),
      lead->epoch());
  if (!written.ok()) return Fail(written.status().ToString());
  std::printf("write: %s\n", *written ? "applied" : "fenced");
  std::fflush(stdout);
  if (lead->valid()) (*client)->Resign(*lead).IgnoreError();
  return 0;
}
