// Copyright 2026 The redlock Authors.
//
// `redlock reconfigure`, run as a real process against real masters started
// by the fixture: replacing one master of three (old list A,B,C, new list
// A,B,D) through the joint phase, the wait before finishing, the fencing
// counters carried across, abort, dry runs, re-runs, and refusals. Clients
// are `redlock acquire` / `release` processes on the old or the new list.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
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
#include "gtest/gtest.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"
#include "tests/support/text_files.h"

extern char** environ;

namespace redlock {
namespace {

using ::redlock::testing::KeyValues;
using ::redlock::testing::ReadFile;

using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

constexpr char kCli[] = REDLOCK_CLI_PATH;
constexpr int kRefused = 65;
constexpr int kUnavailable = 69;
constexpr int kNotYet = 75;  // Also: held elsewhere, for acquire.

// No run of the tool may take longer; the longest (finish --wait with a 2s
// max_ttl) needs about 5s.
constexpr absl::Duration kBound = absl::Seconds(30);
constexpr char kMarkerKey[] = "redlock:__deployment__";

struct Finished {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const Finished& f) {
  return os << "exit " << f.exit_code << "\n--- stdout:\n"
            << f.out << "--- stderr:\n"
            << f.err;
}

class ReconfigureCliTest : public ::testing::Test {
 public:  // For the scenes shared by tests of two fixtures.
  void SetUp() override {
    RedisServer::Config config;
    config.persistence = persistence_;
    auto cluster = RedisCluster::Start(4, config);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    char dir[] = "/tmp/redlock_reconfigure_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }

  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string List(std::vector<int> servers) const {
    std::vector<std::string> uris;
    for (int i : servers) uris.push_back(cluster_->server(i).Uri());
    return absl::StrJoin(uris, ",");
  }
  std::string Old() const { return List({0, 1, 2}); }  // A, B, C.
  std::string New() const { return List({0, 1, 3}); }  // A, B, D.
  std::string Name(int i) const { return cluster_->server(i).Address(); }

  // The list of A (server 0, reached through a fault proxy that refuses
  // every connection: cut off from this client) and `others`. The proxy
  // lives as long as the test. Empty if it could not start (a failure is
  // added).
  std::string ListWithoutA(std::vector<int> others) {
    auto proxy =
        FaultProxy::Start({.upstream_port = cluster_->server(0).port()});
    if (!proxy.ok()) {
      ADD_FAILURE() << proxy.status();
      return "";
    }
    (*proxy)->SetMode(FaultProxy::Mode::kRefuse);
    const std::string list = absl::StrCat((*proxy)->Uri(), "?member=",
                                          Name(0), ",", List(others));
    proxies_.push_back(*std::move(proxy));
    return list;
  }

  // Runs the tool with `args` (after the options every run gets), killed
  // if it takes longer than kBound.
  Finished Run(std::vector<std::string> args) {
    const int n = ++runs_;
    const std::string out_path = absl::StrCat(dir_, "/out.", n);
    const std::string err_path = absl::StrCat(dir_, "/err.", n);
    std::vector<std::string> argv_strings = {kCli, "--request-timeout=500ms",
                                             "--max-ttl=2s"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!absl::StartsWith(*e, "REDLOCK_")) env_strings.emplace_back(*e);
    }
    std::vector<char*> argv, envp;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int err =
        posix_spawn(&pid, kCli, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    Finished f;
    if (err != 0) {
      ADD_FAILURE() << "posix_spawn " << kCli << ": " << err;
      return f;
    }
    const absl::Time deadline = absl::Now() + kBound;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) != pid) {
      if (absl::Now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "redlock " << absl::StrJoin(args, " ")
                      << " took longer than " << kBound;
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    f.exit_code =
        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    f.out = ReadFile(out_path);
    f.err = ReadFile(err_path);
    return f;
  }

  Finished Reconfigure(const std::string& masters, const std::string& to,
                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"reconfigure",
                                     absl::StrCat("--masters=", masters),
                                     absl::StrCat("--to=", to)};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args);
  }

  Finished Acquire(const std::string& masters, const std::string& resource,
                   std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "acquire", absl::StrCat("--masters=", masters), "--ttl=1500ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(resource);
    return Run(args);
  }

  // B and C (servers 1 and 2) crash and restart, one after the other; after
  // each, clients of both lists run until the joint record (epoch 2, A,B,C
  // -> A,B,D) is written back onto it with a marker in `state`.
  void RestartBAndCUntilRestamped(absl::string_view state) {
    const std::string all = List({0, 1, 2, 3});
    for (int i : {1, 2}) {
      ASSERT_TRUE(cluster_->server(i).Restart().ok());
      bool restamped = false;
      for (int attempt = 0; attempt < 20 && !restamped; ++attempt) {
        Acquire(all, "other");
        const std::optional<std::string> m = Marker(i);
        restamped = m.has_value() && testing::MarkerState(m) == state &&
                    absl::StrContains(*m, Record(2, {0, 1, 2}, {0, 1, 3}));
        if (!restamped) absl::SleepFor(absl::Milliseconds(100));
      }
      ASSERT_TRUE(restamped)
          << "server " << i << ": " << Marker(i).value_or("");
    }
  }

  // After a finish that should not have happened: a client of A,B,D without
  // B counts A and D, and must not be given token 1 (issued before) again.
  void ExpectTokenOneNotIssuedAgain() {
    ASSERT_TRUE(cluster_->server(1).Stop().ok());
    const Finished after = Acquire(New(), "res", {"--fencing"});
    ASSERT_TRUE(cluster_->server(1).Continue().ok());
    EXPECT_NE(KeyValues(after.out)["fence"], "1")
        << "token 1 issued twice\n" << after;
  }

  // A client on a list the record does not admit is refused once it has
  // heard from every master; a fresh process may take its first attempt
  // before the extra master's handshake is in, and then acts under the
  // record (safely): its lock is then held on A and B, the members it
  // shares with the record. Either way no quorum of the record is missed.
  void ExpectRefusedOrUnderTheRecord(const Finished& f,
                                     const std::string& masters,
                                     const std::string& resource) {
    if (f.exit_code != 0) {
      EXPECT_TRUE(absl::StrContains(f.err, "membership")) << f;
      return;
    }
    const std::string token = KeyValues(f.out)["token"];
    for (int i : {0, 1}) {
      auto c = cluster_->Client(i);
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_EQ(*(*c)->Get(absl::StrCat("redlock:", resource)),
                std::optional<std::string>(token))
          << "master " << i << ": " << f;
    }
    Release(masters, resource, token);
  }

  Finished Release(const std::string& masters, const std::string& resource,
                   const std::string& token) {
    return Run(
        {"release", absl::StrCat("--masters=", masters), resource, token});
  }

  // A client on the old list records the deployment's members (A,B,C).
  void Bootstrap() {
    const Finished boot = Acquire(Old(), "bootstrap");
    ASSERT_EQ(boot.exit_code, 0) << boot;
  }

  std::optional<std::string> Marker(int i) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return std::nullopt;
    auto value = (*client)->Get(kMarkerKey);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }

  std::vector<std::optional<std::string>> Markers() {
    std::vector<std::optional<std::string>> out;
    for (int i = 0; i < cluster_->size(); ++i) out.push_back(Marker(i));
    return out;
  }

  // The record text a server's marker must contain for `epoch` with
  // `members` and `next` (server indexes).
  std::string Record(int epoch, std::vector<int> members,
                     std::vector<int> next = {}) const {
    auto names = [this](std::vector<int> servers) {
      std::vector<std::string> out;
      for (int i : servers) out.push_back(Name(i));
      std::sort(out.begin(), out.end());
      return absl::StrJoin(out, ",");
    };
    return absl::StrCat(";epoch=", epoch, ";members=", names(members),
                        ";next=", names(next), ";quorum=majority");
  }

  RedisServer::Persistence persistence_ = RedisServer::Persistence::kNone;
  std::unique_ptr<RedisCluster> cluster_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;  // ListWithoutA()'s.
  std::string dir_;
  int runs_ = 0;
};

// The masters keep RDB snapshots, taken when a test says SAVE: a crash and
// restart brings back the last one.
class ReconfigureCliSnapshotTest : public ReconfigureCliTest {
 protected:
  ReconfigureCliSnapshotTest() {
    persistence_ = RedisServer::Persistence::kRdbSnapshots;
  }
};

TEST_F(ReconfigureCliTest, DryRunWritesNothingAndNamesEveryStep) {
  Bootstrap();
  const auto before = Markers();
  ASSERT_FALSE(before[3].has_value());

  const Finished begin = Reconfigure(Old(), New(), {"--dry-run"});
  EXPECT_EQ(begin.exit_code, 0) << begin;
  EXPECT_TRUE(absl::StrContains(begin.out, "step: begin: epoch 2 joint"))
      << begin;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(absl::StrContains(begin.out, absl::StrCat(Name(i), ": ")))
        << Name(i) << "\n"
        << begin;
  }
  int would = 0;
  for (absl::string_view line : absl::StrSplit(begin.out, '\n')) {
    if (absl::StrContains(line, "would write")) ++would;
  }
  EXPECT_EQ(would, 4) << begin;
  EXPECT_TRUE(absl::StrContains(begin.out, "new trusted marker")) << begin;
  EXPECT_TRUE(absl::StrContains(begin.out, "then: wait 5.02s")) << begin;
  EXPECT_EQ(Markers(), before);

  // After a real begin, a dry run of the finish shows the wait left on
  // every old member and writes nothing either.
  const Finished real = Reconfigure(Old(), New());
  ASSERT_EQ(real.exit_code, 0) << real;
  const auto joint = Markers();
  const Finished finish = Reconfigure(Old(), New(), {"--dry-run"});
  EXPECT_EQ(finish.exit_code, kNotYet) << finish;
  EXPECT_TRUE(absl::StrContains(finish.out, "step: finish: epoch 3 steady"))
      << finish;
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(
        absl::StrContains(finish.out, absl::StrCat("wait on ", Name(i), ": ")))
        << finish;
  }
  EXPECT_TRUE(absl::StrContains(finish.out, "left")) << finish;
  EXPECT_EQ(Markers(), joint);

  const Finished abort = Reconfigure(New(), Old(), {"--dry-run"});
  EXPECT_EQ(abort.exit_code, 0) << abort;
  EXPECT_TRUE(absl::StrContains(abort.out, "step: abort: epoch 3 steady"))
      << abort;
  would = 0;
  for (absl::string_view line : absl::StrSplit(abort.out, '\n')) {
    if (absl::StrContains(line, "would write")) ++would;
  }
  EXPECT_EQ(would, 4) << abort;
  EXPECT_EQ(Markers(), joint);
}

TEST_F(ReconfigureCliTest, ReplacesOneMasterOfThreeEndToEnd) {
  Bootstrap();
  const Finished begin = Reconfigure(Old(), New());
  ASSERT_EQ(begin.exit_code, 0) << begin;
  for (int i = 0; i < 4; ++i) {
    const std::optional<std::string> marker = Marker(i);
    ASSERT_TRUE(marker.has_value()) << i;
    EXPECT_TRUE(absl::StrContains(*marker, Record(2, {0, 1, 2}, {0, 1, 3})))
        << *marker;
    EXPECT_TRUE(absl::StrContains(*marker, absl::StrCat(";member=", Name(i))))
        << *marker;
  }

  // Joint: a client of either list locks, never both at once.
  Finished old_lock = Acquire(Old(), "job", {"--ttl=2s"});
  ASSERT_EQ(old_lock.exit_code, 0) << old_lock;
  Finished new_try = Acquire(New(), "job");
  EXPECT_EQ(new_try.exit_code, kNotYet) << new_try;
  ASSERT_EQ(Release(Old(), "job", KeyValues(old_lock.out)["token"]).exit_code,
            0);
  Finished new_lock = Acquire(New(), "job", {"--ttl=2s"});
  ASSERT_EQ(new_lock.exit_code, 0) << new_lock;
  Finished old_try = Acquire(Old(), "job");
  EXPECT_EQ(old_try.exit_code, kNotYet) << old_try;
  ASSERT_EQ(Release(New(), "job", KeyValues(new_lock.out)["token"]).exit_code,
            0);

  // Finishing before the wait is refused; --wait sleeps through it.
  const Finished early = Reconfigure(Old(), New());
  EXPECT_EQ(early.exit_code, kNotYet) << early;
  EXPECT_TRUE(absl::StrContains(early.err, "the wait is not over")) << early;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), ";epoch=2;")) << *Marker(i);
  }
  const Finished finish = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;
  EXPECT_TRUE(absl::StrContains(finish.out, "finished: epoch 3 steady"))
      << finish;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), Record(3, {0, 1, 3})))
        << *Marker(i);
  }

  // The old list is refused, the new one locks.
  const Finished old_after = Acquire(Old(), "job2");
  ExpectRefusedOrUnderTheRecord(old_after, Old(), "job2");
  const Finished new_after = Acquire(New(), "job2");
  EXPECT_EQ(new_after.exit_code, 0) << new_after;

  // And running it once more has nothing to do.
  const Finished again = Reconfigure(Old(), New());
  EXPECT_EQ(again.exit_code, 0) << again;
  EXPECT_TRUE(absl::StrContains(again.out, "nothing to do")) << again;

  // status shows each master's member name and record.
  const Finished status =
      Run({"status", absl::StrCat("--masters=", New()), "--json", "job2"});
  EXPECT_EQ(status.exit_code, 0) << status;
  EXPECT_TRUE(absl::StrContains(status.out,
                                absl::StrCat("\"member\":\"", Name(3), "\"")))
      << status;
  EXPECT_TRUE(absl::StrContains(status.out, "\"membership\":{")) << status;
  EXPECT_TRUE(absl::StrContains(status.out, "\"epoch\":3")) << status;
  const Finished table =
      Run({"status", absl::StrCat("--masters=", New()), "job2"});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(absl::StrContains(table.out, "MEMBERSHIP")) << table;
  EXPECT_TRUE(absl::StrContains(table.out, "epoch 3 steady")) << table;
}

// The wait protects a lock granted under the old members by a quorum (B, C)
// that shares no server with a quorum of the new ones (A, D): finishing at
// once would let a client of the new list take it while it is still valid.
TEST_F(ReconfigureCliTest, FinishWaitsOutGrantsMadeUnderTheOldMembers) {
  Bootstrap();
  const std::string old_without_a = ListWithoutA({1, 2});
  ASSERT_FALSE(old_without_a.empty());
  const absl::Time start = absl::Now();
  const Finished old_lock = Acquire(old_without_a, "job", {"--ttl=2s"});
  ASSERT_EQ(old_lock.exit_code, 0) << old_lock;
  int64_t valid_ms = 0;
  ASSERT_TRUE(absl::SimpleAtoi(KeyValues(old_lock.out)["valid_ms"], &valid_ms));
  const absl::Time valid_until = start + absl::Milliseconds(valid_ms);

  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  const Finished finish = Reconfigure(Old(), New());
  EXPECT_EQ(finish.exit_code, kNotYet) << finish;
  const Finished new_lock = Acquire(New(), "job");
  const absl::Time now = absl::Now();
  EXPECT_FALSE(new_lock.exit_code == 0 && now < valid_until)
      << "two holders: the old list's lock is valid for " << (valid_until - now)
      << " more\n"
      << new_lock;
}

// A joining master that restarts empty during the joint phase may have
// granted under the joint record: the finish must not mark it trusted again.
// X, a client of A,B,C,D that cannot reach A, takes the lock late in the
// joint phase on B,C (old quorum) and B,D (new quorum); D restarts empty;
// the finish runs. Had it re-marked D, a client of A,B,D would win on A,D
// while X's lock is valid. The finish leaves D to the clients' restart guard.
TEST_F(ReconfigureCliTest, FinishLeavesAJoiningMasterThatRestartedEmptyUnmarked) {
  Bootstrap();
  const std::string all_without_a = ListWithoutA({1, 2, 3});
  ASSERT_FALSE(all_without_a.empty());

  const absl::Time begun = absl::Now();
  const Finished begin = Reconfigure(Old(), New());
  ASSERT_EQ(begin.exit_code, 0) << begin;
  // The finish's wait is max_ttl*1.01 + 3s (5.02s) from the begin: X locks
  // shortly before it ends, so that its lock is still valid after it.
  absl::SleepFor(begun + absl::Milliseconds(4700) - absl::Now());
  const absl::Time start = absl::Now();
  const Finished x = Acquire(all_without_a, "job", {"--ttl=2s"});
  ASSERT_EQ(x.exit_code, 0) << x;
  int64_t valid_ms = 0;
  ASSERT_TRUE(absl::SimpleAtoi(KeyValues(x.out)["valid_ms"], &valid_ms)) << x;
  const absl::Time valid_until = start + absl::Milliseconds(valid_ms);
  {
    auto d = cluster_->Client(3);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_EQ(*(*d)->Get("redlock:job"),
              std::optional<std::string>(KeyValues(x.out)["token"]))
        << "X's lock must be held on D for the scene";
  }

  ASSERT_TRUE(cluster_->server(3).Restart().ok());  // Empty: no persistence.
  const Finished finish = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;
  EXPECT_TRUE(absl::StrContains(finish.out, "no marker: left to the clients"))
      << finish;
  EXPECT_FALSE(Marker(3).has_value() &&
               absl::StartsWith(*Marker(3), "trusted"))
      << "the tool marked the restarted D trusted: " << *Marker(3);

  const Finished y = Acquire(New(), "job");
  const absl::Time now = absl::Now();
  EXPECT_FALSE(y.exit_code == 0 && now < valid_until)
      << "two holders: X's lock is valid for " << (valid_until - now)
      << " more\n"
      << y;
  // On a machine too slow for the scene X's lock has expired by now, and
  // only the marker check above can fail.
}

// "Replace a dead master" with the dead master coming back, and then A
// restarting with its data lost (`lose_a`: SIGKILL and restart, empty or
// from a snapshot taken before the change). C kept epoch 1 through the
// change. A client X still on the old list that cannot reach B hears only A
// and C. Had it taken C's epoch-1 record for the deployment's (and written
// it onto an empty A, or believed A's snapshot), it would count {A, C} under
// epoch 1 while a client of A,B,D counts {B, D} under epoch 3.
void ReplaceDeadMasterThenLoseAOnTheOldList(ReconfigureCliTest* t,
                                            RedisCluster& cluster,
                                            const std::function<void()>& lose_a,
                                            bool a_keeps_epoch_one) {
  ASSERT_TRUE(cluster.server(2).Stop().ok());  // C is down through it all.
  const Finished begin = t->Reconfigure(t->Old(), t->New());
  ASSERT_EQ(begin.exit_code, 0) << begin;
  const Finished finish = t->Reconfigure(t->Old(), t->New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;
  ASSERT_TRUE(cluster.server(2).Continue().ok());
  lose_a();

  auto b_proxy = FaultProxy::Start({.upstream_port = cluster.server(1).port()});
  ASSERT_TRUE(b_proxy.ok()) << b_proxy.status();
  (*b_proxy)->SetMode(FaultProxy::Mode::kRefuse);
  const std::string old_without_b =
      absl::StrCat(t->List({0}), ",", (*b_proxy)->Uri(), "?member=", t->Name(1),
                   ",", t->List({2}));
  // X's first try: A is unmarked (or restarted), so nothing counts yet; it
  // must not write epoch 1 onto A.
  const Finished x_first = t->Acquire(old_without_b, "job");
  EXPECT_NE(x_first.exit_code, 0) << x_first;
  const std::optional<std::string> a_marker = t->Marker(0);
  if (!a_keeps_epoch_one) {
    EXPECT_FALSE(a_marker.has_value() &&
                 absl::StrContains(*a_marker, ";epoch=1;"))
        << "X wrote the old record onto A: " << *a_marker;
  }
  // Past max_ttl (2s): a restarted master's grants count again. Y, on the
  // new list, cannot reach A: it wins on B and D.
  absl::SleepFor(absl::Milliseconds(2300));
  auto a_proxy = FaultProxy::Start({.upstream_port = cluster.server(0).port()});
  ASSERT_TRUE(a_proxy.ok()) << a_proxy.status();
  (*a_proxy)->SetMode(FaultProxy::Mode::kRefuse);
  const std::string new_without_a =
      absl::StrCat((*a_proxy)->Uri(), "?member=", t->Name(0), ",",
                   t->List({1, 3}));
  const Finished y = t->Acquire(new_without_a, "job", {"--ttl=2s"});
  ASSERT_EQ(y.exit_code, 0) << y;
  const absl::Time y_valid_until =
      absl::Now() + absl::Milliseconds(1500);  // Under its ttl, less drift.
  const Finished x = t->Acquire(old_without_b, "job");
  const absl::Time now = absl::Now();
  EXPECT_FALSE(x.exit_code == 0 && now < y_valid_until)
      << "two holders: Y holds the lock on B and D under epoch 3, and X won "
         "on the old list\n"
      << x << "\nY: " << y;
  if (x.exit_code != 0) {
    EXPECT_TRUE(absl::StrContains(x.err, "membership")) << x;
  }
}

TEST_F(ReconfigureCliTest,
       AnOldListClientThatHearsOnlyALeftBehindMasterWritesNoOldRecord) {
  Bootstrap();
  ReplaceDeadMasterThenLoseAOnTheOldList(
      this, *cluster_,
      [&] { ASSERT_TRUE(cluster_->server(0).Restart().ok()); },
      /*a_keeps_epoch_one=*/false);
}

TEST_F(ReconfigureCliSnapshotTest,
       AMasterBackFromASnapshotOfTheOldRecordIsNoEvidenceOfIt) {
  Bootstrap();
  {
    auto a = cluster_->Client(0);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE((*a)->Command({"SAVE"}).ok());  // Epoch 1, before the change.
  }
  ReplaceDeadMasterThenLoseAOnTheOldList(
      this, *cluster_,
      [&] {
        ASSERT_TRUE(cluster_->server(0).Restart().ok());
        const std::optional<std::string> marker = Marker(0);
        ASSERT_TRUE(marker.has_value() &&
                    absl::StrContains(*marker, ";epoch=1;"))
            << "the scene needs A back at epoch 1: "
            << marker.value_or("(none)");
      },
      /*a_keeps_epoch_one=*/true);
}

// Two of three masters restart empty: C's record could be one a change left
// behind, so no client writes it back and the empty masters cast no grant.
// The operator, who knows no change happened, restores it; every server must
// answer first.
TEST_F(ReconfigureCliTest, AMajorityThatLostItsRecordsIsRestoredByTheOperator) {
  Bootstrap();
  ASSERT_TRUE(cluster_->server(0).Restart().ok());
  ASSERT_TRUE(cluster_->server(1).Restart().ok());
  const Finished refused = Acquire(Old(), "job");
  EXPECT_NE(refused.exit_code, 0) << refused;
  EXPECT_TRUE(absl::StrContains(refused.err, "not known to be current"))
      << refused;
  EXPECT_FALSE(Marker(0).has_value()) << *Marker(0);
  EXPECT_FALSE(Marker(1).has_value()) << *Marker(1);

  // Not while a server of the list is silent.
  ASSERT_TRUE(cluster_->server(1).Stop().ok());
  const Finished early = Reconfigure(Old(), Old());
  ASSERT_TRUE(cluster_->server(1).Continue().ok());
  EXPECT_EQ(early.exit_code, kUnavailable) << early;
  EXPECT_FALSE(Marker(0).has_value()) << *Marker(0);
  // A change is not made on its word either.
  const Finished change = Reconfigure(Old(), New());
  EXPECT_EQ(change.exit_code, kRefused) << change;

  const Finished restore = Reconfigure(Old(), Old());
  ASSERT_EQ(restore.exit_code, 0) << restore;
  EXPECT_TRUE(absl::StrContains(restore.out, "step: restore")) << restore;
  for (int i : {0, 1}) {
    const std::optional<std::string> marker = Marker(i);
    ASSERT_TRUE(marker.has_value()) << i;
    EXPECT_TRUE(absl::StartsWith(*marker, "reborn:")) << *marker;
    EXPECT_TRUE(absl::StrContains(*marker, Record(1, {0, 1, 2}))) << *marker;
  }
  // Reborn: held back for max_ttl (2s), then they count.
  absl::SleepFor(absl::Milliseconds(2300));
  const Finished after = Acquire(Old(), "job");
  EXPECT_EQ(after.exit_code, 0) << after;
}

// The abort runbook after a member restarted empty during the change: the
// abort leaves it to the clients' restart guard, lands on a quorum of the
// old members, and clients of the old list lock again.
TEST_F(ReconfigureCliTest, AnAbortAfterAMemberRestartedEmptyLeavesItUnmarked) {
  Bootstrap();
  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  ASSERT_TRUE(cluster_->server(0).Restart().ok());  // A, in both lists.
  const Finished abort = Reconfigure(New(), Old());
  ASSERT_EQ(abort.exit_code, 0) << abort;
  EXPECT_TRUE(absl::StrContains(abort.out, "aborted: epoch 3 steady")) << abort;
  EXPECT_TRUE(absl::StrContains(abort.out, "no marker: left to the clients"))
      << abort;
  EXPECT_FALSE(Marker(0).has_value()) << *Marker(0);
  for (int i : {1, 2}) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), Record(3, {0, 1, 2})))
        << *Marker(i);
  }
  // B and C carry it kept: a client of A,B,C locks on them (and marks A
  // reborn if it hears A before it is done).
  const Finished lock = Acquire(Old(), "job");
  EXPECT_EQ(lock.exit_code, 0) << lock;
  EXPECT_FALSE(absl::StartsWith(Marker(0).value_or(""), "trusted:"))
      << Marker(0).value_or("(none)");
  // The joining server keeps the joint record, which names it no member.
  const Finished new_list = Acquire(New(), "job2");
  ExpectRefusedOrUnderTheRecord(new_list, New(), "job2");
}

// The finish runbook interrupted: the tool is killed while it waits out the
// joint phase, and run again; and a finish that reached only some servers
// (D down) is completed by running it again once D is back.
TEST_F(ReconfigureCliTest, AFinishKilledOrCutShortCompletesWhenRunAgain) {
  Bootstrap();
  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  {
    std::vector<std::string> argv_strings = {
        kCli,          "--request-timeout=500ms",
        "--max-ttl=2s", "reconfigure",
        absl::StrCat("--masters=", Old()), absl::StrCat("--to=", New()),
        "--wait"};
    std::vector<char*> argv;
    for (std::string& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                     O_WRONLY, 0);
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, kCli, &actions, nullptr, argv.data(), environ),
              0);
    posix_spawn_file_actions_destroy(&actions);
    absl::SleepFor(absl::Milliseconds(1000));  // In its wait (5.02s).
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "it ended before it was killed";
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), ";epoch=2;")) << *Marker(i);
  }
  ASSERT_TRUE(cluster_->server(3).Stop().ok());
  const Finished partial = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_TRUE(cluster_->server(3).Continue().ok());
  ASSERT_EQ(partial.exit_code, 0) << partial;
  EXPECT_TRUE(absl::StrContains(partial.out, "finished: epoch 3 steady"))
      << partial;
  EXPECT_TRUE(absl::StrContains(*Marker(3), ";epoch=2;")) << *Marker(3);
  const Finished again = Reconfigure(New(), New());
  ASSERT_EQ(again.exit_code, 0) << again;
  for (int i : {0, 1, 3}) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), Record(3, {0, 1, 3})))
        << *Marker(i);
  }
  const Finished lock = Acquire(New(), "job");
  EXPECT_EQ(lock.exit_code, 0) << lock;
}

TEST_F(ReconfigureCliTest, FencedTokenAfterTheChangeExceedsEveryTokenBefore) {
  // Counter 1 on A, B, C; then, with A cut off (clients reach it through a
  // proxy that refuses connections), tokens 2..4 on B and C only.
  Finished first = Acquire(Old(), "res", {"--fencing"});
  ASSERT_EQ(first.exit_code, 0) << first;
  ASSERT_EQ(Release(Old(), "res", KeyValues(first.out)["token"]).exit_code, 0);
  const std::string old_without_a = ListWithoutA({1, 2});
  ASSERT_FALSE(old_without_a.empty());
  uint64_t before = 0;
  for (int i = 0; i < 3; ++i) {
    Finished f = Acquire(old_without_a, "res", {"--fencing"});
    ASSERT_EQ(f.exit_code, 0) << f;
    ASSERT_TRUE(absl::SimpleAtoi(KeyValues(f.out)["fence"], &before)) << f;
    ASSERT_EQ(
        Release(old_without_a, "res", KeyValues(f.out)["token"]).exit_code, 0);
  }
  ASSERT_EQ(before, 4u);
  const std::string counter_key = "redlock:__fence__:res";
  auto a = cluster_->Client(0);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(*(*a)->Get(counter_key), std::optional<std::string>("1"));

  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  const Finished finish = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;

  // A quorum of the new list without B: A and D, whose counters were 1 and
  // none before the change.
  ASSERT_TRUE(cluster_->server(1).Stop().ok());
  Finished after = Acquire(New(), "res", {"--fencing"});
  ASSERT_TRUE(cluster_->server(1).Continue().ok());
  ASSERT_EQ(after.exit_code, 0) << after;
  uint64_t token = 0;
  ASSERT_TRUE(absl::SimpleAtoi(KeyValues(after.out)["fence"], &token)) << after;
  EXPECT_GT(token, before) << after;
}

// Two thousand fencing counters are carried over in one finish. The scan
// for them asked for 1000 keys a reply, and a reply of 1000 counter keys is
// longer than the client's 64 KiB reply bound (each element is charged its
// bytes and 72 more): the finish failed on every old member.
TEST_F(ReconfigureCliTest, ThousandsOfFencingCountersAreCarriedOver) {
  Bootstrap();
  constexpr int kCounters = 2000;
  auto counter = [](int r) {
    return absl::StrCat("redlock:__fence__:a-resource-of-the-nightly-job-", r);
  };
  for (int i = 0; i < 3; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    for (int r = 0; r < kCounters; ++r) {
      // Server i holds r + i: the highest of each is on server 2.
      ASSERT_TRUE((*client)->Set(counter(r), absl::StrCat(r + i)).ok());
    }
  }
  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  const Finished finish = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;
  auto d = cluster_->Client(3);
  ASSERT_TRUE(d.ok()) << d.status();
  for (int r : {0, 999, kCounters - 1}) {
    EXPECT_EQ(*(*d)->Get(counter(r)),
              std::optional<std::string>(absl::StrCat(r + 2)))
        << counter(r);
  }
}

// Issue 45, found by the simulation (seed 415 of reconfigure-lossy at
// --ttl_ms=1500): the finish carried the fencing counters over from old
// members that had lost them. Token 1 goes to B and C only (A cut off);
// both then restart empty during the joint phase, and clients write the
// joint record back onto them (reborn). Reading every server's counters
// then finds nothing, and a finish that trusted that read would leave D
// without the counter: a client of A,B,D reads A and D (both `trusted`, so
// a missing counter reads 0) and issues token 1 again. The finish must stop
// until an operator restores fencing (raise every counter, re-mark B and C),
// and then carry the raised counters over.
TEST_F(ReconfigureCliTest, AFinishWaitsWhileTheOldMembersThatHeldATokenLostIt) {
  Bootstrap();
  const std::string old_without_a = ListWithoutA({1, 2});
  ASSERT_FALSE(old_without_a.empty());
  Finished first = Acquire(old_without_a, "res", {"--fencing"});
  ASSERT_EQ(first.exit_code, 0) << first;
  ASSERT_EQ(KeyValues(first.out)["fence"], "1") << first;
  ASSERT_EQ(
      Release(old_without_a, "res", KeyValues(first.out)["token"]).exit_code,
      0);

  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  // B, then C, restart empty; a client of both lists writes the joint record
  // back onto each (the other old members still carry it kept). A client
  // judges an unmarked master reborn at once only when the deployment is
  // older than the judgement horizon (3s).
  absl::SleepFor(absl::Milliseconds(3200));
  RestartBAndCUntilRestamped("reborn");

  const Finished stopped = Reconfigure(Old(), New(), {"--wait"});
  EXPECT_NE(stopped.exit_code, 0) << stopped;
  EXPECT_TRUE(absl::StrContains(stopped.err,
                                "the fencing counters of only 1 of the 3 old "
                                "members"))
      << stopped;
  if (stopped.exit_code == 0) {
    ExpectTokenOneNotIssuedAgain();
    return;
  }
  // The operator's restore (docs/lifetime-and-fencing.md): every counter
  // raised by hand to 1000, B and C re-marked with their records kept.
  for (int i = 0; i < 4; ++i) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Set("redlock:__fence__:res", "1000").ok());
    if (i == 1 || i == 2) ASSERT_TRUE(testing::OperatorRemarkTrusted(**c).ok());
  }
  const Finished finish = Reconfigure(Old(), New(), {"--wait"});
  ASSERT_EQ(finish.exit_code, 0) << finish;
  ASSERT_TRUE(cluster_->server(1).Stop().ok());
  const Finished after = Acquire(New(), "res", {"--fencing"});
  ASSERT_TRUE(cluster_->server(1).Continue().ok());
  ASSERT_EQ(after.exit_code, 0) << after;
  uint64_t token = 0;
  ASSERT_TRUE(absl::SimpleAtoi(KeyValues(after.out)["fence"], &token)) << after;
  EXPECT_GT(token, 1000u) << after;
}

// The same with B and C back from snapshots taken before token 1 (their
// markers `trusted`, naming the processes before the restart): they kept a
// marker but not the counter. Clients write the joint record back over
// their older one; the finish must still count neither as holding every
// token (`restarted since it was marked, with persistence no aof, rdb ...`).
TEST_F(ReconfigureCliSnapshotTest,
       AFinishWaitsWhileOldMembersBackFromSnapshotsLackAToken) {
  Bootstrap();
  for (int i : {1, 2}) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Command({"SAVE"}).ok());  // Epoch 1, no counter.
  }
  const std::string old_without_a = ListWithoutA({1, 2});
  ASSERT_FALSE(old_without_a.empty());
  Finished first = Acquire(old_without_a, "res", {"--fencing"});
  ASSERT_EQ(first.exit_code, 0) << first;
  ASSERT_EQ(KeyValues(first.out)["fence"], "1") << first;
  ASSERT_EQ(
      Release(old_without_a, "res", KeyValues(first.out)["token"]).exit_code,
      0);
  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  RestartBAndCUntilRestamped("trusted");  // From the snapshots.
  const Finished stopped = Reconfigure(Old(), New(), {"--wait"});
  EXPECT_NE(stopped.exit_code, 0) << stopped;
  EXPECT_TRUE(absl::StrContains(stopped.out, "restarted since it was marked"))
      << stopped;
  if (stopped.exit_code == 0) ExpectTokenOneNotIssuedAgain();
}

TEST_F(ReconfigureCliTest, AbortReturnsToTheOldMembers) {
  Bootstrap();
  ASSERT_EQ(Reconfigure(Old(), New()).exit_code, 0);
  // At once: no wait.
  const Finished abort = Reconfigure(New(), Old());
  ASSERT_EQ(abort.exit_code, 0) << abort;
  EXPECT_TRUE(absl::StrContains(abort.out, "aborted: epoch 3 steady")) << abort;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(absl::StrContains(*Marker(i), Record(3, {0, 1, 2})))
        << *Marker(i);
  }
  const Finished old_lock = Acquire(Old(), "job");
  EXPECT_EQ(old_lock.exit_code, 0) << old_lock;
  const Finished new_lock = Acquire(New(), "job2");
  ExpectRefusedOrUnderTheRecord(new_lock, New(), "job2");
}

TEST_F(ReconfigureCliTest, RefusesAServerOfAnotherDeployment) {
  Bootstrap();
  // D bootstrapped on its own: a deployment of one.
  const Finished alone = Acquire(List({3}), "other");
  ASSERT_EQ(alone.exit_code, 0) << alone;
  const auto before = Markers();
  const Finished r = Reconfigure(Old(), New());
  EXPECT_EQ(r.exit_code, kRefused) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "two deployments")) << r;
  EXPECT_TRUE(absl::StrContains(r.err, Name(3))) << r;
  EXPECT_EQ(Markers(), before);
}

TEST_F(ReconfigureCliTest, RefusesWithoutARecord) {
  const Finished r = Reconfigure(Old(), New());
  EXPECT_EQ(r.exit_code, kRefused) << r;
  EXPECT_TRUE(absl::StrContains(r.err, "run any client once first")) << r;
  EXPECT_EQ(Markers(), std::vector<std::optional<std::string>>(4));
}

TEST_F(ReconfigureCliTest, RefusesAChangeFromOtherMembersThanTheServersHave) {
  Bootstrap();
  const auto before = Markers();
  // --masters names A,B,D, but the members are A,B,C.
  const Finished r = Reconfigure(New(), List({0, 1, 2, 3}));
  EXPECT_EQ(r.exit_code, kRefused) << r;
  EXPECT_TRUE(absl::StrContains(r.err,
                                "--masters must name the current "
                                "members"))
      << r;
  EXPECT_EQ(Markers(), before);
}

TEST_F(ReconfigureCliTest,
       RerunningBeginIsIdempotentAndCatchesUpAMissedServer) {
  Bootstrap();
  // C frozen: begin lands on A, B (enough of the old members) and D.
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  const Finished begin = Reconfigure(Old(), New());
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  ASSERT_EQ(begin.exit_code, 0) << begin;
  EXPECT_TRUE(
      absl::StrContains(begin.out, absl::StrCat(Name(2), ": unreachable")))
      << begin;
  const auto after_begin = Markers();
  EXPECT_FALSE(absl::StrContains(*after_begin[2], ";epoch=2;"))
      << *after_begin[2];

  // Again: C is caught up; A, B and D keep their record and its `since`.
  const Finished again = Reconfigure(Old(), New());
  EXPECT_EQ(again.exit_code, kNotYet) << again;
  const auto caught_up = Markers();
  for (int i : {0, 1, 3}) EXPECT_EQ(caught_up[i], after_begin[i]) << i;
  EXPECT_TRUE(absl::StrContains(*caught_up[2], Record(2, {0, 1, 2}, {0, 1, 3})))
      << *caught_up[2];

  // And again: nothing written at all.
  const Finished third = Reconfigure(Old(), New());
  EXPECT_EQ(third.exit_code, kNotYet) << third;
  EXPECT_EQ(Markers(), caught_up);
}

TEST_F(ReconfigureCliTest, BeginFailsWhenTooFewOldMembersAnswer) {
  Bootstrap();
  ASSERT_TRUE(cluster_->server(1).Stop().ok());
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  const std::optional<std::string> a_before = Marker(0);
  const Finished begin = Reconfigure(Old(), New());
  EXPECT_EQ(begin.exit_code, kUnavailable) << begin;
  // One old member cannot say which record is current, let alone take the
  // joint one for the others.
  EXPECT_TRUE(absl::StrContains(begin.err,
                                "is carried by 1 of 3 of its members"))
      << begin;
  EXPECT_TRUE(absl::StrContains(begin.err, "run it again when the servers "
                                           "answer"))
      << begin;
  // Nothing written where it could have been.
  EXPECT_EQ(Marker(0), a_before);
  EXPECT_FALSE(Marker(3).has_value());
  ASSERT_TRUE(cluster_->server(1).Continue().ok());
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
}

}  // namespace
}  // namespace redlock
