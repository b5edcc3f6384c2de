// Copyright 2026 The redlock Authors.
//
// Fencing where the data lives: the lease sequence of examples/lease, with
// the data in a real PostgreSQL (tests/support/postgres_server.h) and the
// locks on real masters.
//
//   t=0  A acquires the lock on alice's account (TTL 1s), reads the balance
//        (100) to withdraw 10, and stalls: a GC pause, swap, SIGSTOP.
//   t=1  The TTL expires. B acquires, reads 100, deposits 50: writes 150.
//   t=2  A wakes up, still believing it holds the lock, and writes 90.
//
// Without the token check A's write lands and B's deposit is lost. With the
// check (fenced_accounts.h) A's write carries an older token than the
// row's and updates no row; B's 150 stays. The same for an elected leader
// paused past its lease (the epoch is the token), and for the shell recipe
// of docs/lifetime-and-fencing.md run through the `redlock` tool.

#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "examples/lease/lease_sequence.h"
#include "examples/postgres/fenced_accounts.h"
#include "gtest/gtest.h"
#include "redlock/redlock.h"
#include "tests/support/after_fork.h"
#include "tests/support/postgres_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"
#include "tests/support/text_files.h"

namespace redlock {
namespace {

using ::redlock::example::FencedUpdate;
using ::redlock::example::FencedUpsert;
using ::redlock::example::UncheckedUpdate;
using ::redlock::testing::PostgresServer;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kResource[] = "account:alice";
// No wait in this file comes close to it; it only keeps a hang finite.
constexpr absl::Duration kBound = absl::Seconds(20);

// A row as the database holds it.
struct Account {
  int64_t balance = -1;
  int64_t fence = -1;
};

class PostgresFencingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) GTEST_SKIP();
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto bin = testing::FindPostgresBinaries();
    ASSERT_TRUE(bin.ok()) << bin.status();
    auto pg = PostgresServer::Start(*bin);
    ASSERT_TRUE(pg.ok()) << pg.status();
    pg_ = *std::move(pg);
    db_.reset(PQconnectdb(pg_->ConnInfo().c_str()));
    ASSERT_EQ(PQstatus(db_.get()), CONNECTION_OK) << PQerrorMessage(db_.get());
    Exec(example::kCreateAccounts);
    Exec("INSERT INTO accounts (id, balance) VALUES ('alice', 100)");
    a_ = MakeClient();
    b_ = MakeClient();
  }

  std::unique_ptr<Redlock> MakeClient() {
    return examples::SequenceClient(cluster_->Uris());
  }

  void Exec(const char* sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(db_.get(), sql),
                                                    &PQclear);
    ASSERT_EQ(PQresultStatus(r.get()), PGRES_COMMAND_OK)
        << sql << ": " << PQerrorMessage(db_.get());
  }

  // The row `id`; balance and fence -1 if there is none.
  Account Read(const char* id) {
    const char* params[] = {id};
    std::unique_ptr<PGresult, decltype(&PQclear)> r(
        PQexecParams(db_.get(),
                     "SELECT balance, fence FROM accounts WHERE id = $1", 1,
                     nullptr, params, nullptr, nullptr, 0),
        &PQclear);
    Account account;
    EXPECT_EQ(PQresultStatus(r.get()), PGRES_TUPLES_OK)
        << PQerrorMessage(db_.get());
    if (PQntuples(r.get()) == 1) {
      EXPECT_TRUE(
          absl::SimpleAtoi(PQgetvalue(r.get(), 0, 0), &account.balance));
      EXPECT_TRUE(absl::SimpleAtoi(PQgetvalue(r.get(), 0, 1), &account.fence));
    }
    return account;
  }

  // Runs the sequence; `write(lock, balance)` is how a holder writes
  // alice's balance, true if the database took it.
  template <typename Write>
  void RunSequence(Write write) {
    seq_ = examples::RunLeaseSequence(
        *a_, *b_, kResource,
        int64_t{100 - 10} /* what A read, minus its withdrawal */,
        int64_t{100 + 50}, write);
  }

  std::unique_ptr<RedisCluster> cluster_;
  // Declared after the cluster, so that it stops first; the connection
  // after the server, so that it closes before the server stops.
  std::unique_ptr<PostgresServer> pg_;
  std::unique_ptr<PGconn, decltype(&PQfinish)> db_{nullptr, &PQfinish};
  std::unique_ptr<Redlock> a_;
  std::unique_ptr<Redlock> b_;
  examples::LeaseSequenceResult seq_;
};

// Asserts the write went through or was refused, and says which.
bool Took(const absl::StatusOr<bool>& written) {
  EXPECT_TRUE(written.ok()) << written.status();
  return written.ok() && *written;
}

TEST_F(PostgresFencingTest, WithoutTheTokenCheckTheStaleHolderOverwritesB) {
  RunSequence([&](const Lock&, int64_t balance) {
    return Took(UncheckedUpdate(db_.get(), "alice", balance));
  });
  EXPECT_GT(seq_.b_token, seq_.a_token);
  EXPECT_TRUE(seq_.b_accepted);
  EXPECT_TRUE(seq_.a_accepted);
  EXPECT_EQ(Read("alice").balance, 90) << "B's deposit is lost";
}

TEST_F(PostgresFencingTest, TheCheckedUpdateRejectsTheStaleWriteAndKeepsB) {
  RunSequence([&](const Lock& lock, int64_t balance) {
    return Took(FencedUpdate(db_.get(), "alice", balance, lock.fence()));
  });
  EXPECT_GT(seq_.b_token, seq_.a_token);
  EXPECT_TRUE(seq_.b_accepted);
  EXPECT_FALSE(seq_.a_accepted)
      << seq_.a_token << " < " << seq_.b_token << " must update no row";
  const Account alice = Read("alice");
  EXPECT_EQ(alice.balance, 150) << "B's work must be kept";
  EXPECT_EQ(alice.fence, static_cast<int64_t>(seq_.b_token));
}

TEST_F(PostgresFencingTest, TheCheckedUpsertInsertsThenRejectsTheStaleWrite) {
  // Bob's row does not exist until B's write inserts it.
  RunSequence([&](const Lock& lock, int64_t balance) {
    return Took(FencedUpsert(db_.get(), "bob", balance, lock.fence()));
  });
  EXPECT_TRUE(seq_.b_accepted);
  EXPECT_FALSE(seq_.a_accepted);
  const Account bob = Read("bob");
  EXPECT_EQ(bob.balance, 150);
  EXPECT_EQ(bob.fence, static_cast<int64_t>(seq_.b_token));
}

// Why `fence <= $1` and not `<`: one holder writes several times under its
// one token.
TEST_F(PostgresFencingTest, AHolderWritesAgainUnderItsOwnToken) {
  absl::StatusOr<Lock> lock = a_->Acquire(kResource, examples::SequenceLease());
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_TRUE(Took(FencedUpdate(db_.get(), "alice", 95, lock->fence())));
  EXPECT_TRUE(Took(FencedUpdate(db_.get(), "alice", 90, lock->fence())));
  EXPECT_TRUE(Took(FencedUpsert(db_.get(), "alice", 85, lock->fence())));
  EXPECT_EQ(Read("alice").balance, 85);
  EXPECT_TRUE(a_->Release(*lock).ok());
}

// --- The shell form ----------------------------------------------------------

#ifdef REDLOCK_CLI_PATH
// docs/lifetime-and-fencing.md's shell recipe as written there: `redlock run
// --fencing` and psql with write_balance.sql.
TEST_F(PostgresFencingTest,
       TheShellRecipeWritesWithItsTokenAndFailsWhenFenced) {
  auto bin = testing::FindPostgresBinaries();
  ASSERT_TRUE(bin.ok() && !bin->psql.empty()) << "no psql (postgresql-client)";
  const std::string psql_dir = bin->psql.substr(0, bin->psql.rfind('/'));
  const char* path = std::getenv("PATH");
  auto recipe = [&](int64_t balance) {
    const std::string log = absl::StrCat(pg_->dir(), "/recipe.log");
    const testing::ClientRun run = pg_->RunClient(
        {"/usr/bin/env", absl::StrCat("PATH=", psql_dir, ":", path ? path : ""),
         "PGHOST=127.0.0.1", absl::StrCat("PGPORT=", pg_->port()),
         absl::StrCat("PGUSER=", pg_->superuser()), "PGDATABASE=postgres",
         "REDLOCK_ACCEPT_NON_DURABLE=1",  // The masters are the tests'.
         REDLOCK_CLI_PATH, "run",
         absl::StrCat("--masters=", absl::StrJoin(cluster_->Uris(), ",")),
         "--fencing", kResource, "--", "sh", "-c",
         absl::StrCat("psql -X -v ON_ERROR_STOP=1 -v fence=\"$REDLOCK_FENCE\""
                      " -v account=alice -v balance=",
                      balance, " -f " REDLOCK_WRITE_BALANCE_SQL)},
        log, kBound);
    return std::make_pair(run.status, testing::ReadFile(log));
  };
  const auto [written, written_log] = recipe(150);
  EXPECT_EQ(written, 0) << written_log;
  const Account alice = Read("alice");
  EXPECT_EQ(alice.balance, 150);
  EXPECT_GT(alice.fence, 0);
  // Newer holders wrote meanwhile.
  Exec("UPDATE accounts SET balance = 7, fence = fence + 1000");
  const auto [fenced, fenced_log] = recipe(90);
  EXPECT_EQ(fenced, 3) << "psql's exit code through redlock\n" << fenced_log;
  EXPECT_TRUE(absl::StrContains(fenced_log, "no rows returned")) << fenced_log;
  EXPECT_EQ(Read("alice").balance, 7);
}
#endif  // REDLOCK_CLI_PATH

// --- An elected leader -------------------------------------------------------

// A helper process (examples/postgres/leader.cc) with its output in a file.
// Destroying it SIGCONTs and SIGKILLs it, by PID, unless it was reaped.
class Candidate {
 public:
  Candidate(std::vector<std::string> argv, std::string out)
      : out_(std::move(out)) {
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const int fd =
        open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0) << out_;
    if (fd < 0) return;
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      testing::BelongToParentAfterFork(parent);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    close(fd);
    EXPECT_GT(pid_, 0) << "fork";
  }

  ~Candidate() {
    if (pid_ <= 0) return;
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  // The rest of the first output line that starts with `prefix`, waiting up
  // to kBound for it; nullopt if none came.
  std::optional<std::string> AwaitLine(absl::string_view prefix) const {
    const absl::Time deadline = absl::Now() + kBound;
    do {
      for (absl::string_view line :
           absl::StrSplit(testing::ReadFile(out_), '\n')) {
        if (absl::ConsumePrefix(&line, prefix)) return std::string(line);
      }
      absl::SleepFor(absl::Milliseconds(10));
    } while (absl::Now() < deadline);
    return std::nullopt;
  }

  // SIGSTOP, and waits until it is stopped.
  void Pause() {
    ASSERT_EQ(kill(pid_, SIGSTOP), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid_, &status, WUNTRACED), pid_);
    ASSERT_TRUE(WIFSTOPPED(status));
  }
  void Resume() { ASSERT_EQ(kill(pid_, SIGCONT), 0); }

  std::string Output() const { return testing::ReadFile(out_); }

 private:
  const std::string out_;
  pid_t pid_ = -1;
};

uint64_t Epoch(const std::optional<std::string>& line) {
  uint64_t epoch = 0;
  EXPECT_TRUE(line.has_value() && absl::SimpleAtoi(*line, &epoch));
  return epoch;
}

void Touch(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  close(fd);
}

TEST_F(PostgresFencingTest, ALeaderPausedPastItsLeaseIsFencedOutByItsEpoch) {
  // The helpers' files live in the server's directory, which goes with it.
  const std::string dir = pg_->dir();
  auto candidate = [&](const std::string& name, int64_t balance) {
    return std::make_unique<Candidate>(
        std::vector<std::string>{
            REDLOCK_POSTGRES_LEADER_PATH,
            absl::StrCat("--masters=", absl::StrJoin(cluster_->Uris(), ",")),
            "--election=ledger", absl::StrCat("--conninfo=", pg_->ConnInfo()),
            "--account=alice", absl::StrCat("--balance=", balance),
            absl::StrCat("--go=", dir, "/go-", name), "--ttl=1s", "--wait=20s"},
        absl::StrCat(dir, "/", name, ".out"));
  };
  std::unique_ptr<Candidate> a = candidate("a", 90);
  const uint64_t a_epoch = Epoch(a->AwaitLine("leader "));
  ASSERT_GT(a_epoch, 0u) << a->Output();
  // B campaigns while A leads, and wins once A's lease has run out.
  std::unique_ptr<Candidate> b = candidate("b", 150);
  a->Pause();
  const uint64_t b_epoch = Epoch(b->AwaitLine("leader "));
  ASSERT_GT(b_epoch, a_epoch) << b->Output();
  Touch(dir + "/go-b");
  EXPECT_EQ(b->AwaitLine("write: "), "applied") << b->Output();
  // A wakes up and writes with its old epoch.
  a->Resume();
  Touch(dir + "/go-a");
  EXPECT_EQ(a->AwaitLine("write: "), "fenced") << a->Output();
  const Account alice = Read("alice");
  EXPECT_EQ(alice.balance, 150) << "the new leader's write must be kept";
  EXPECT_EQ(alice.fence, static_cast<int64_t>(b_epoch));
}

}  // namespace
}  // namespace redlock
