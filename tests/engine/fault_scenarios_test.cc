// Copyright 2026 The redlock Authors.
//
// Failure scenarios on real redis-server masters: processes killed, stopped
// and restarted (with and without persistence), a fault proxy that delays,
// blackholes, resets or cuts connections, masters that answer with errors,
// holders that stall past their TTL, and contention. Each test is named for
// the behaviour it pins and looks at the masters directly afterwards (keys,
// tokens, PTTLs), not only at what the client says. docs/failure-behaviour.md
// lists them.
//
// With REDLOCK_TEST_MASTERS set, only the scenarios that need no control over
// the servers run (against those masters); the others skip.

#include <event2/event.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
#include "redlock/async_redlock.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "tests/support/await_call.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

// A master restarted less than about 2s after the deployment was first marked
// cannot be told from one that was only marked late (uptime comes in whole
// seconds); scenarios that restart masters let the deployment age past it.
constexpr absl::Duration kPastUptimeResolution = absl::Milliseconds(2200);

using ::redlock::testing::FaultProxy;
using ::redlock::testing::LoopRunner;
using ::redlock::testing::MarkerState;
using ::redlock::testing::RedisClient;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::Reply;

constexpr char kNeedsOwnServers[] =
    "needs redis-server processes it starts, kills, stops and restarts "
    "itself; skipped because REDLOCK_TEST_MASTERS points at external masters";

// Starts the test's own masters, or skips the test (returning from it) when
// the suite runs against external masters.
#define START_OWN_MASTERS(...)                                     \
  do {                                                             \
    StartOwnMasters(__VA_ARGS__);                                  \
    if (IsSkipped() || ::testing::Test::HasFatalFailure()) return; \
  } while (0)

// Own masters, or the external ones when REDLOCK_TEST_MASTERS is set.
#define USE_ANY_MASTERS(n)                                         \
  do {                                                             \
    UseAnyMasters(n);                                              \
    if (IsSkipped() || ::testing::Test::HasFatalFailure()) return; \
  } while (0)

bool ContainsAll(absl::string_view text,
                 const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    if (!absl::StrContains(text, part)) return false;
  }
  return true;
}

// One contender's hold of the lock, [start, end).
struct HeldInterval {
  MonotonicTime start;
  MonotonicTime end;
  int contender;
};

// Every pair of intervals that overlap, each pair once, as "contenders a
// and b held it together (...)" with both holds' times from the first start.
// Sorts `intervals` by start.
std::vector<std::string> Overlaps(std::vector<HeldInterval>& intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const HeldInterval& a, const HeldInterval& b) {
              return a.start < b.start;
            });
  std::vector<std::string> overlaps;
  if (intervals.empty()) return overlaps;
  const MonotonicTime base = intervals[0].start;
  auto describe = [&](const HeldInterval& h) {
    return absl::StrCat(
        "+", absl::FormatDuration(absl::FromChrono(h.start - base)), "..+",
        absl::FormatDuration(absl::FromChrono(h.end - base)));
  };
  // All pairs, not only neighbours: one long hold can overlap several later
  // ones that do not overlap each other, and each such pair is named.
  for (size_t i = 1; i < intervals.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (intervals[i].start < intervals[j].end) {
        overlaps.push_back(absl::StrCat(
            "contenders ", intervals[j].contender, " and ",
            intervals[i].contender, " held it together (",
            describe(intervals[j]), ", ", describe(intervals[i]), ")"));
      }
    }
  }
  return overlaps;
}

TEST(OverlapsTest, FindsEveryOverlappingPairNotOnlyNeighbours) {
  const MonotonicTime t0{std::chrono::seconds(100)};
  auto at = [&](int ms) { return t0 + std::chrono::milliseconds(ms); };
  // 0 holds [0, 100); 1 and 2 hold inside it, one after the other; 3 comes
  // after everyone. Sorted by start, 2's only neighbour before it is 1.
  std::vector<HeldInterval> intervals = {{at(30), at(40), 2},
                                         {at(100), at(110), 3},
                                         {at(0), at(100), 0},
                                         {at(10), at(20), 1}};
  EXPECT_EQ(
      Overlaps(intervals),
      (std::vector<std::string>{
          "contenders 0 and 1 held it together (+0..+100ms, +10ms..+20ms)",
          "contenders 0 and 2 held it together (+0..+100ms, "
          "+30ms..+40ms)"}));
}

TEST(OverlapsTest, HoldsThatOnlyTouchDoNotOverlap) {
  const MonotonicTime t0{std::chrono::seconds(100)};
  auto at = [&](int ms) { return t0 + std::chrono::milliseconds(ms); };
  std::vector<HeldInterval> intervals = {
      {at(10), at(20), 1}, {at(0), at(10), 0}, {at(20), at(20), 2}};
  EXPECT_TRUE(Overlaps(intervals).empty());
}

// TestOptions, with a 200ms request timeout (what the timing scenarios below
// assume), a longer stall timeout and the library's own retry delays.
Options ScenarioOptions(std::vector<std::string> masters) {
  Options options = testing::TestOptions(std::move(masters));
  options.request_timeout = absl::Milliseconds(200);
  options.stalled_connection_timeout = absl::Seconds(5);
  options.retry = Options().retry;
  return options;
}

class FaultScenariosTest : public ::testing::Test {
 protected:
  ~FaultScenariosTest() override {
    // Engines go first (they use the loop and the proxies), then proxies,
    // then servers.
    engines_.clear();
    proxies_.clear();
  }

  void StartOwnMasters(int n, RedisServer::Config config = {}) {
    if (RedisServer::UsingExternalMasters()) GTEST_SKIP() << kNeedsOwnServers;
    auto cluster = RedisCluster::Start(n, std::move(config));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    uris_ = cluster_->Uris();
    proxies_.resize(n);
  }

  void UseAnyMasters(int n) {
    if (!RedisServer::UsingExternalMasters()) {
      StartOwnMasters(n);
      return;
    }
    uris_ = RedisServer::ExternalMasters();
    proxies_.resize(uris_.size());
  }

  int masters() const { return static_cast<int>(uris_.size()); }

  // A resource name no other run shares (external masters may be shared).
  std::string Resource(absl::string_view name) const {
    return absl::StrCat("fault-scenarios-", name, "-", getpid());
  }
  static std::string KeyOf(const std::string& resource) {
    return absl::StrCat("redlock:", resource);
  }

  // Puts a fault proxy between the client and master i; the engines made
  // afterwards go through it.
  FaultProxy& Proxy(int i) {
    if (proxies_[i] == nullptr) {
      auto proxy =
          FaultProxy::Start({.upstream_port = cluster_->server(i).port()});
      EXPECT_TRUE(proxy.ok()) << proxy.status();
      proxies_[i] = *std::move(proxy);
      uris_[i] = proxies_[i]->Uri();
    }
    return *proxies_[i];
  }

  // "127.0.0.1:PORT" as the engine names master i (the proxy if there is
  // one).
  std::string Name(int i) const {
    return uris_[i].substr(std::string("redis://").size());
  }

  Options BaseOptions() const { return ScenarioOptions(uris_); }

  AsyncRedlock& MakeEngine(Options options) {
    auto engine = AsyncRedlock::Create(loop_.base(), std::move(options));
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) std::abort();
    engines_.push_back(*std::move(engine));
    return *engines_.back();
  }

  // An engine whose requests wait 2s before timing out (so a stopped
  // master's vote stays pending for the whole scene), with one acquisition
  // done: the deployment is marked and every connection is up.
  AsyncRedlock& PatientEngine() {
    Options options = BaseOptions();
    options.request_timeout = absl::Seconds(2);
    AsyncRedlock& engine = MakeEngine(options);
    EXPECT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
    return engine;
  }

  // One attempt at `resource` (TTL 30 s, no wait) on `engine`; its result
  // lands in `*result`.
  void StartOneAttempt(AsyncRedlock& engine, const std::string& resource,
                       std::optional<absl::StatusOr<Lock>>* result) {
    ASSERT_TRUE(engine
                    .AcquireAsync(resource, absl::Seconds(30),
                                  absl::ZeroDuration(),
                                  [result](absl::StatusOr<Lock> lock) {
                                    *result = std::move(lock);
                                  })
                    .ok());
  }
  // Whether master i holds `key` now (read directly).
  bool HasKey(int i, const std::string& key) {
    absl::StatusOr<std::optional<std::string>> value = Direct(i)->Get(key);
    return value.ok() && value->has_value();
  }

  absl::StatusOr<Lock> Acquire(AsyncRedlock& engine,
                               const std::string& resource, absl::Duration ttl,
                               absl::Duration wait = absl::ZeroDuration()) {
    return testing::AwaitAcquire(loop_, engine, resource, ttl, wait);
  }

  absl::Status Extend(AsyncRedlock& engine, const Lock& lock,
                      absl::Duration ttl) {
    return testing::AwaitExtend(loop_, engine, lock, ttl);
  }

  absl::StatusOr<ReleaseReport> Release(AsyncRedlock& engine,
                                        const Lock& lock) {
    // Waits for every master: these tests assert what each one did.
    return testing::AwaitRelease(loop_, engine, lock, testing::WholeReport());
  }

  // A blocking client to master i itself, around any proxy.
  std::unique_ptr<RedisClient> Direct(int i) {
    absl::StatusOr<std::unique_ptr<RedisClient>> client;
    if (cluster_ != nullptr) {
      client = cluster_->Client(i);
    } else {
      absl::StatusOr<MasterAddress> address = ParseMasterUri(uris_[i]);
      EXPECT_TRUE(address.ok()) << address.status();
      if (!address.ok()) return nullptr;
      client = RedisClient::Connect(address->host, address->port,
                                    absl::Seconds(2), address->password);
      if (client.ok() && address->db != 0) {
        (*client)->Command({"SELECT", absl::StrCat(address->db)}).IgnoreError();
      }
    }
    EXPECT_TRUE(client.ok()) << "master " << i << ": " << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // What master i holds under `key`; "<unreachable>" if it cannot be asked.
  std::optional<std::string> Value(int i, const std::string& key) {
    auto client = Direct(i);
    if (client == nullptr) return "<unreachable>";
    auto value = client->Get(key);
    EXPECT_TRUE(value.ok()) << "master " << i << ": " << value.status();
    return value.ok() ? *value : "<error>";
  }

  int64_t Pttl(int i, const std::string& key) {
    auto client = Direct(i);
    if (client == nullptr) return -3;
    auto pttl = client->Pttl(key);
    EXPECT_TRUE(pttl.ok()) << pttl.status();
    return pttl.value_or(-3);
  }

  void SetForeign(int i, const std::string& key,
                  absl::Duration ttl = absl::Seconds(30)) {
    auto client = Direct(i);
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Set(key, "someone-else", ttl).ok());
  }

  Reply Command(int i, std::vector<std::string> argv) {
    auto client = Direct(i);
    if (client == nullptr) return Reply{Reply::Type::kError, "unreachable"};
    absl::StatusOr<Reply> reply = client->Command(argv);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : Reply{Reply::Type::kError, "no reply"};
  }

  // How many times master i has run `command` (INFO commandstats), to prove
  // that a late command really ran rather than never arrived.
  int64_t Calls(int i, absl::string_view command) {
    Reply info = Command(i, {"INFO", "commandstats"});
    const std::string prefix = absl::StrCat("cmdstat_", command, ":calls=");
    for (absl::string_view line : absl::StrSplit(info.str, "\r\n")) {
      if (!absl::ConsumePrefix(&line, prefix)) continue;
      int64_t calls = 0;
      if (absl::SimpleAtoi(line.substr(0, line.find(',')), &calls)) {
        return calls;
      }
    }
    return 0;
  }

  // How many masters hold `token` under `key`.
  int Holding(const std::string& key, const std::string& token) {
    int n = 0;
    for (int i = 0; i < masters(); ++i) n += Value(i, key) == token;
    return n;
  }

  // Acquires and releases `resource` until one acquisition lands on every
  // master (the faulty ones have reconnected), for at most `timeout`.
  bool AcquireLandsOnAllMasters(AsyncRedlock& engine,
                                const std::string& resource,
                                absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
      if (lock.ok()) {
        // Quorum may be decided before the last masters answer.
        loop_.RunFor(absl::Milliseconds(50));
        const int holding = Holding(lock->key(), lock->token());
        EXPECT_TRUE(Release(engine, *lock).ok());
        if (holding == masters()) return true;
      }
      loop_.RunFor(absl::Milliseconds(50));
    }
    return false;
  }

  LoopRunner loop_;
  std::unique_ptr<RedisCluster> cluster_;
  std::vector<std::string> uris_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
  std::vector<std::unique_ptr<AsyncRedlock>> engines_;
};

// Records the longest time the loop went without turning: a loop that blocks
// (a synchronous connect or read) shows up as a long gap.
class LoopHeartbeat {
 public:
  explicit LoopHeartbeat(event_base* base)
      : event_(event_new(base, -1, EV_PERSIST, &LoopHeartbeat::Beat, this)),
        last_(absl::Now()) {
    timeval tv = {0, 5000};
    event_add(event_, &tv);
  }
  ~LoopHeartbeat() { event_free(event_); }
  absl::Duration longest_gap() const { return longest_; }

 private:
  static void Beat(evutil_socket_t, short, void* arg) {
    auto* self = static_cast<LoopHeartbeat*>(arg);
    const absl::Time now = absl::Now();
    self->longest_ = std::max(self->longest_, now - self->last_);
    self->last_ = now;
  }

  event* event_;
  absl::Time last_;
  absl::Duration longest_;
};

// ---- Masters killed and stopped ----

TEST_F(FaultScenariosTest, TwoKilledMastersStillAcquireAndReleaseOnTheOther3) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  ASSERT_TRUE(cluster_->server(3).Kill().ok());

  const std::string resource = Resource("two-killed");
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(lock->remaining(), absl::Seconds(5));
  EXPECT_GT(lock->remaining(), absl::Seconds(2));
  for (int i : {1, 2, 4}) {
    EXPECT_EQ(Value(i, lock->key()), lock->token()) << "master " << i;
    const int64_t pttl = Pttl(i, lock->key());
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 5000);
  }
  absl::StatusOr<ReleaseReport> report = Release(engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 3);
  EXPECT_EQ(report->failed, 2);
  for (int i : {1, 2, 4}) EXPECT_EQ(Value(i, lock->key()), std::nullopt) << i;
}

TEST_F(FaultScenariosTest, ThreeKilledMastersFailAtOnceAndLeaveNoKeyBehind) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Kill().ok());

  const std::string resource = Resource("three-killed");
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock =
      Acquire(engine, resource, absl::Seconds(5), /*wait=*/absl::Seconds(20));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
      << lock.status();
  // Generous: proves only that the 20s wait budget was not spent.
  EXPECT_LT(took, absl::Seconds(5));
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(absl::StrContains(lock.status().message(),
                                  absl::StrCat(Name(i), " failed")))
        << lock.status();
  }
  // The survivors may have granted; the cleanup release removed it.
  loop_.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(Value(3, KeyOf(resource)), std::nullopt);
  EXPECT_EQ(Value(4, KeyOf(resource)), std::nullopt);
}

TEST_F(FaultScenariosTest,
       OneStoppedMasterDoesNotDelayTheAcquireAndItsLateSetIsReleased) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = PatientEngine();
  loop_.RunFor(absl::Milliseconds(50));
  const int64_t sets_before = Calls(2, "set");
  ASSERT_TRUE(cluster_->server(2).Stop().ok());

  const std::string resource = Resource("one-stopped");
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Generous, and well under the 2s request timeout: the four healthy
  // masters decided it, the stopped one was not waited for.
  EXPECT_LT(took, absl::Seconds(1));
  for (const MasterVote& vote : lock->votes()) {
    if (vote.master == Name(2)) {
      EXPECT_EQ(vote.kind, MasterVote::Kind::kPending);
    }
  }

  // The release is decided by the four healthy masters, without waiting for
  // the stopped one; it still reaches it, queued behind the SET it has not
  // run yet.
  const absl::Time release_start = absl::Now();
  absl::StatusOr<ReleaseReport> report =
      testing::AwaitRelease(loop_, engine, *lock);
  EXPECT_LT(absl::Now() - release_start, absl::Seconds(1));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->freed);
  EXPECT_GE(report->released, 3);
  EXPECT_GE(report->pending, 1);  // The stopped one, maybe a healthy one.
  EXPECT_EQ(report->released + report->pending, 5);
  EXPECT_EQ(report->votes[2].kind, MasterVote::Kind::kPending);
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  // The late SET ran, then the release behind it: no orphan key.
  ASSERT_TRUE(loop_.RunUntil([&] {
    return Calls(2, "set") == sets_before + 1 &&
           !Value(2, lock->key()).has_value();
  }));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, lock->key()), std::nullopt) << "master " << i;
  }
}

TEST_F(FaultScenariosTest,
       AReleaseAskedToWaitForEveryMasterWaitsForTheStopped) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = PatientEngine();
  absl::StatusOr<Lock> lock =
      Acquire(engine, Resource("whole"), absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  std::optional<absl::StatusOr<ReleaseReport>> report;
  ASSERT_TRUE(engine
                  .ReleaseAsync(*lock, testing::WholeReport(),
                                [&](absl::StatusOr<ReleaseReport> r) {
                                  report.emplace(std::move(r));
                                })
                  .ok());
  loop_.RunFor(absl::Milliseconds(200));
  EXPECT_FALSE(report.has_value()) << "delivered before the stopped master";
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return report.has_value(); }));
  ASSERT_TRUE(report->ok()) << report->status();
  EXPECT_EQ((*report)->released, 5);
  EXPECT_EQ((*report)->pending, 0);
  EXPECT_TRUE((*report)->freed);
}

TEST_F(FaultScenariosTest,
       AFreshClientsFirstAcquireDoesNotWaitForAStoppedMaster) {
  START_OWN_MASTERS(5);
  Options options = BaseOptions();
  options.connect_timeout = absl::Seconds(3);
  options.request_timeout = absl::Seconds(1);
  // An earlier client marked the deployment, as every run but the first
  // finds it.
  {
    AsyncRedlock& first = MakeEngine(options);
    ASSERT_TRUE(Acquire(first, Resource("mark"), absl::Seconds(5)).ok());
  }
  // Accepts TCP, never answers the handshake: the new client cannot tell it
  // from a slow master until connect_timeout + 2 * request_timeout (5s).
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  AsyncRedlock& fresh = MakeEngine(options);
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock =
      Acquire(fresh, Resource("fresh"), absl::Seconds(5));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Generous, and well under the request timeout: a quorum of judged
  // masters started it.
  EXPECT_LT(took, absl::Milliseconds(900));
  EXPECT_EQ(lock->votes()[2].kind, MasterVote::Kind::kPending);
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  ASSERT_TRUE(testing::AwaitRelease(loop_, fresh, *lock).ok());
}

TEST_F(FaultScenariosTest,
       ExtendKeepAliveAndFencedAcquireDoNotWaitForAStoppedMaster) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = PatientEngine();
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  // Each step is bounded well under the 2s request timeout: a quorum of the
  // four healthy masters decided it.
  AcquireOptions fenced;
  fenced.ttl = absl::Seconds(10);
  fenced.fencing = true;
  absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock =
      testing::AwaitCall<absl::StatusOr<Lock>>(loop_, [&](auto done) {
        return engine.AcquireAsync(Resource("quorum-speed"), fenced,
                                   std::move(done));
      });
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_GT(lock->fence(), 0u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << "fenced acquire";

  start = absl::Now();
  ASSERT_TRUE(Extend(engine, *lock, absl::Seconds(10)).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << "extend";

  // A keep-alive extending every 100ms: six extensions within 1s, each
  // decided without the stopped master, and the lock never reads lost.
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(100);
  absl::StatusOr<KeepAliveHandle> keeper =
      engine.KeepAlive(*lock, absl::Seconds(10), std::move(hold));
  ASSERT_TRUE(keeper.ok()) << keeper.status();
  const MonotonicTime before = lock->valid_until();
  loop_.RunFor(absl::Milliseconds(700));
  EXPECT_FALSE(lock->lost()) << lock->lost_reason();
  EXPECT_GT(lock->valid_until(), before + std::chrono::milliseconds(500));
  keeper->Stop(/*release=*/false);

  start = absl::Now();
  absl::StatusOr<ReleaseReport> report =
      testing::AwaitRelease(loop_, engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->freed);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << "release";
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
}

TEST_F(FaultScenariosTest, CancellingAnAttemptInFlightReleasesWhatItWon) {
  START_OWN_MASTERS(5);
  Options options = BaseOptions();
  options.request_timeout = absl::Seconds(3);
  AsyncRedlock& engine = MakeEngine(options);
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(5)).ok());
  const std::string resource = Resource("cancel-in-flight");
  loop_.RunFor(absl::Milliseconds(50));
  int64_t sets_before[5] = {};
  for (int i : {2, 3, 4}) sets_before[i] = Calls(i, "set");
  for (int i : {2, 3, 4}) ASSERT_TRUE(cluster_->server(i).Stop().ok());
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(30);
  acquire.wait = absl::Seconds(30);
  std::optional<absl::StatusOr<Lock>> result;
  ASSERT_TRUE(engine
                  .AcquireAsync(resource, acquire,
                                [&](absl::StatusOr<Lock> lock) {
                                  result.emplace(std::move(lock));
                                })
                  .ok());
  // Masters 0 and 1 grant; the round waits for a third.
  ASSERT_TRUE(loop_.RunUntil(
      [&] { return Value(0, KeyOf(resource)) && Value(1, KeyOf(resource)); }));
  EXPECT_FALSE(result.has_value());
  const absl::Time start = absl::Now();
  acquire.cancel.Cancel();
  ASSERT_TRUE(loop_.RunUntil([&] { return result.has_value(); }));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << "waited for a timeout";
  EXPECT_EQ(result->status().code(), absl::StatusCode::kCancelled)
      << result->status();
  EXPECT_NE(result->status().message().find("attempt in flight was released"),
            std::string::npos)
      << result->status();
  // What it won is deleted now; the stopped masters run the SET late, then
  // the release queued behind it.
  ASSERT_TRUE(loop_.RunUntil([&] {
    return !Value(0, KeyOf(resource)) && !Value(1, KeyOf(resource));
  }));
  for (int i : {2, 3, 4}) ASSERT_TRUE(cluster_->server(i).Continue().ok());
  ASSERT_TRUE(loop_.RunUntil([&] {
    for (int i : {2, 3, 4}) {
      if (Calls(i, "set") == sets_before[i]) return false;
    }
    return true;
  }));
  loop_.RunFor(absl::Milliseconds(100));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, KeyOf(resource)), std::nullopt) << "master " << i;
  }
}

TEST_F(FaultScenariosTest,
       ThreeStoppedMastersFailAtTheRequestTimeoutAndKeepNoKeyAfterResuming) {
  START_OWN_MASTERS(5);
  Options options = BaseOptions();
  options.request_timeout = absl::Milliseconds(300);
  AsyncRedlock& engine = MakeEngine(options);
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  loop_.RunFor(absl::Milliseconds(50));
  int64_t sets_before[3];
  for (int i : {0, 1, 2}) {
    sets_before[i] = Calls(i, "set");
    ASSERT_TRUE(cluster_->server(i).Stop().ok());
  }

  const std::string resource = Resource("three-stopped");
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
      << lock.status();
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(absl::StrContains(
        lock.status().message(),
        absl::StrCat(Name(i),
                     " failed (DEADLINE_EXCEEDED: no reply within 300ms)")))
        << lock.status();
  }
  // Generous: the request timeout decided it, not the 5s stall timeout.
  EXPECT_LT(took, absl::Seconds(3));

  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Continue().ok());
  // The late SETs run now, each followed by the release queued behind it.
  const std::string key = KeyOf(resource);
  ASSERT_TRUE(loop_.RunUntil(
      [&] {
        for (int i : {0, 1, 2}) {
          if (Calls(i, "set") != sets_before[i] + 1) return false;
        }
        return true;
      },
      absl::Seconds(5)));
  loop_.RunFor(absl::Milliseconds(100));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, key), std::nullopt) << "master " << i;
  }
}

// ---- Network faults through the proxy ----

TEST_F(FaultScenariosTest,
       LatencyAboveTheRequestTimeoutOnOneMasterIsNotWaitedFor) {
  START_OWN_MASTERS(5);
  FaultProxy& slow = Proxy(4);
  AsyncRedlock& engine = MakeEngine(BaseOptions());  // 200ms request timeout.
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  loop_.RunFor(absl::Milliseconds(50));
  const int64_t sets_before = Calls(4, "set");
  slow.SetLatency(absl::Seconds(1), absl::ZeroDuration());

  const std::string resource = Resource("slow-master");
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Generous, and well under the 1s latency.
  EXPECT_LT(took, absl::Milliseconds(500));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Value(i, lock->key()), lock->token()) << "master " << i;
  }
  EXPECT_EQ(Value(4, lock->key()), std::nullopt);  // Still in the proxy.

  // The release reaches the slow master after the SET, in order.
  absl::StatusOr<ReleaseReport> report = Release(engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 4);
  EXPECT_EQ(report->failed, 1);  // Timed out at 200ms.
  ASSERT_TRUE(loop_.RunUntil([&] { return Calls(4, "set") == sets_before + 1; },
                             absl::Seconds(5)));
  ASSERT_TRUE(loop_.RunUntil([&] { return Calls(4, "evalsha") > 0; },
                             absl::Seconds(5)));
  loop_.RunFor(absl::Milliseconds(50));
  EXPECT_EQ(Value(4, lock->key()), std::nullopt);
}

TEST_F(FaultScenariosTest,
       BlackholedMastersAreFailedVotesWithinTheTimeoutsAndReconnectAfterwards) {
  START_OWN_MASTERS(5);
  // The deployment existed before the fault (a brand-new one is trusted
  // only once every master answered).
  ASSERT_TRUE(testing::MarkDeploymentTrusted(*cluster_).ok());
  FaultProxy& at_connect = Proxy(3);
  FaultProxy& mid_request = Proxy(4);
  at_connect.SetMode(FaultProxy::Mode::kBlackhole);
  Options options = BaseOptions();
  options.stalled_connection_timeout = absl::Milliseconds(600);
  LoopHeartbeat heartbeat(loop_.base());
  AsyncRedlock& engine = MakeEngine(options);
  // Master 3's handshake is swallowed; the other four grant.
  absl::StatusOr<Lock> warmup = Acquire(engine, "warmup", absl::Seconds(10));
  ASSERT_TRUE(warmup.ok()) << warmup.status();
  mid_request.SetMode(FaultProxy::Mode::kBlackhole);

  // Another owner holds master 0, so the two blackholed votes decide it.
  const std::string resource = Resource("blackholed");
  const std::string key = KeyOf(resource);
  SetForeign(0, key);
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(lock.ok());
  EXPECT_TRUE(ContainsAll(
      lock.status().message(),
      {absl::StrCat(Name(0), " denied"), absl::StrCat(Name(1), " granted"),
       absl::StrCat(Name(2), " granted"), absl::StrCat(Name(3), " failed"),
       absl::StrCat(Name(4), " failed")}))
      << lock.status();
  EXPECT_LT(took, absl::Seconds(2));  // Generous: request timeout is 200ms.
  EXPECT_LT(heartbeat.longest_gap(), absl::Seconds(1)) << "the loop blocked";
  loop_.RunFor(absl::Milliseconds(50));
  EXPECT_EQ(Value(0, key), "someone-else");
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(Value(i, key), std::nullopt) << "master " << i;
  }

  const int64_t accepted_before[2] = {at_connect.counters().accepted,
                                      mid_request.counters().accepted};
  at_connect.SetMode(FaultProxy::Mode::kPass);
  mid_request.SetMode(FaultProxy::Mode::kPass);
  EXPECT_TRUE(AcquireLandsOnAllMasters(engine, Resource("after-blackhole"),
                                       absl::Seconds(10)));
  // The swallowed connections were given up and new ones made.
  EXPECT_GT(at_connect.counters().accepted, accepted_before[0]);
  EXPECT_GT(mid_request.counters().accepted, accepted_before[1]);
  EXPECT_LT(heartbeat.longest_gap(), absl::Seconds(1)) << "the loop blocked";
}

TEST_F(FaultScenariosTest, ResetConnectionIsAFailedVoteThenReconnects) {
  START_OWN_MASTERS(5);
  FaultProxy& proxy = Proxy(3);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  loop_.RunFor(absl::Milliseconds(50));
  proxy.SetMode(FaultProxy::Mode::kReset);

  const std::string resource = Resource("reset");
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (const MasterVote& vote : lock->votes()) {
    if (vote.master == Name(3)) {
      EXPECT_NE(vote.kind, MasterVote::Kind::kGranted);
    }
  }
  absl::StatusOr<ReleaseReport> report = Release(engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 4);
  EXPECT_EQ(report->failed, 1);
  for (const MasterVote& vote : report->votes) {
    if (vote.master == Name(3)) {
      EXPECT_EQ(vote.kind, MasterVote::Kind::kFailed);
      EXPECT_EQ(vote.error.code(), absl::StatusCode::kUnavailable)
          << vote.error;
    }
  }
  EXPECT_EQ(Value(3, lock->key()), std::nullopt);
  EXPECT_GE(proxy.counters().resets, 1);

  proxy.SetMode(FaultProxy::Mode::kPass);
  EXPECT_TRUE(AcquireLandsOnAllMasters(engine, Resource("after-reset"),
                                       absl::Seconds(10)));
}

TEST_F(FaultScenariosTest, ConnectionCutMidCommandIsAFailedVoteThenReconnects) {
  START_OWN_MASTERS(5);
  FaultProxy& proxy = Proxy(3);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  loop_.RunFor(absl::Milliseconds(100));
  const FaultProxy::Counters before = proxy.counters();
  ASSERT_EQ(before.accepted, 1);
  // The next command gets 10 bytes through, then the connection is reset.
  proxy.CutAfterBytes(before.bytes_to_server + before.bytes_to_client + 10);

  const std::string resource = Resource("cut");
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(loop_.RunUntil([&] { return proxy.counters().cuts == 1; }));
  for (const MasterVote& vote : lock->votes()) {
    if (vote.master == Name(3)) {
      EXPECT_NE(vote.kind, MasterVote::Kind::kGranted);
    }
  }
  // Half a command never runs.
  EXPECT_EQ(Value(3, lock->key()), std::nullopt);
  for (int i : {0, 1, 2, 4}) {
    EXPECT_EQ(Value(i, lock->key()), lock->token()) << "master " << i;
  }
  ASSERT_TRUE(Release(engine, *lock).ok());

  proxy.CutAfterBytes(0);
  EXPECT_TRUE(AcquireLandsOnAllMasters(engine, Resource("after-cut"),
                                       absl::Seconds(10)));
  EXPECT_GE(proxy.counters().accepted, 2);
}

// ---- Masters answering with errors ----

// Three masters answer every write with an error: the acquisition fails with
// each master's reason in the message (as DescribeVotes prints the vote's
// error), and the two healthy masters are cleaned up.
class ErrorReplyScenario : public FaultScenariosTest {
 protected:
  void ExpectFailedVotes(AsyncRedlock& engine, absl::string_view error_prefix) {
    const std::string resource = Resource("error-replies");
    absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
    ASSERT_FALSE(lock.ok());
    EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
        << lock.status();
    for (int i : {0, 1, 2}) {
      EXPECT_TRUE(
          absl::StrContains(lock.status().message(),
                            absl::StrCat(Name(i), " failed (", error_prefix)))
          << "master " << i << ": " << lock.status();
    }
    loop_.RunFor(absl::Milliseconds(50));
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(Value(i, KeyOf(resource)), std::nullopt) << "master " << i;
    }
  }
};

TEST_F(ErrorReplyScenario, OutOfMemoryMastersAreFailedVotesWithTheReason) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  for (int i : {0, 1, 2}) {
    ASSERT_EQ(Command(i, {"CONFIG", "SET", "maxmemory-policy", "noeviction"})
                  .DebugString(),
              "+OK");
    ASSERT_EQ(Command(i, {"CONFIG", "SET", "maxmemory", "1"}).DebugString(),
              "+OK");
  }
  ExpectFailedVotes(engine, "RESOURCE_EXHAUSTED: OOM");
}

TEST_F(ErrorReplyScenario, ReadOnlyReplicasAreFailedVotesWithTheReason) {
  START_OWN_MASTERS(5);
  // An empty server of the test's own for them to follow; nothing is
  // written there.
  auto primary = RedisServer::Start({});
  ASSERT_TRUE(primary.ok()) << primary.status();
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  for (int i : {0, 1, 2}) {
    ASSERT_EQ(
        Command(i, {"REPLICAOF", "127.0.0.1", absl::StrCat((*primary)->port())})
            .DebugString(),
        "+OK");
  }
  ExpectFailedVotes(engine, "FAILED_PRECONDITION: READONLY");
  for (int i : {0, 1, 2}) {
    EXPECT_EQ(Command(i, {"REPLICAOF", "NO", "ONE"}).DebugString(), "+OK");
  }
}

TEST_F(ErrorReplyScenario, MastersRequiringAPasswordAreFailedVotesWithNoauth) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(Acquire(engine, "warmup", absl::Seconds(10)).ok());
  // The password is set while we are connected (a rotation); connections
  // already authenticated keep working, so drop them: the engine reconnects
  // without a password.
  for (int i : {0, 1, 2}) {
    auto client = Direct(i);
    ASSERT_NE(client, nullptr);
    ASSERT_EQ(client->Command({"CONFIG", "SET", "requirepass", "rotated"})
                  ->DebugString(),
              "+OK");
    ASSERT_EQ(client->Command({"CLIENT", "KILL", "TYPE", "normal"})->type,
              Reply::Type::kInteger);
  }
  loop_.RunFor(absl::Milliseconds(200));  // Reconnects; the handshake fails.
  const std::string resource = Resource("noauth");
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(10));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
      << lock.status();
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(absl::StrContains(lock.status().message(),
                                  absl::StrCat(Name(i), " failed (")))
        << lock.status();
  }
  EXPECT_TRUE(absl::StrContains(lock.status().message(), "NOAUTH"))
      << lock.status();
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 3; i < 5; ++i) {
    EXPECT_EQ(Value(i, KeyOf(resource)), std::nullopt) << "master " << i;
  }
  for (int i : {0, 1, 2}) {
    auto client = RedisClient::Connect("127.0.0.1", cluster_->server(i).port(),
                                       absl::Seconds(2), "rotated");
    ASSERT_TRUE(client.ok()) << client.status();
    EXPECT_EQ(*(*client)->Get(KeyOf(resource)), std::nullopt);
  }
}

TEST_F(FaultScenariosTest, FlushedScriptsFallBackToEvalForExtendAndRelease) {
  START_OWN_MASTERS(5);
  AsyncRedlock& engine = MakeEngine(BaseOptions());
  const std::string resource = Resource("noscript");
  absl::StatusOr<Lock> lock = Acquire(engine, resource, absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Command(i, {"SCRIPT", "FLUSH"}).DebugString(), "+OK");
  }
  ASSERT_TRUE(Extend(engine, *lock, absl::Seconds(30)).ok());
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, lock->key()), lock->token()) << "master " << i;
    EXPECT_GT(Pttl(i, lock->key()), 20000) << "master " << i;
    EXPECT_GE(Calls(i, "eval"), 1) << "master " << i;
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Command(i, {"SCRIPT", "FLUSH"}).DebugString(), "+OK");
  }
  absl::StatusOr<ReleaseReport> report = Release(engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, lock->key()), std::nullopt) << "master " << i;
    EXPECT_GE(Calls(i, "eval"), 2) << "master " << i;
  }
}

// ---- Restarts ----

TEST_F(FaultScenariosTest,
       RestartWithAofAlwaysKeepsTheLockAndRefusesASecondOwner) {
  RedisServer::Config config;
  config.persistence = RedisServer::Persistence::kAofAlways;
  START_OWN_MASTERS(5, config);
  AsyncRedlock& holder = MakeEngine(BaseOptions());
  const std::string resource = Resource("aof-restart");
  absl::StatusOr<Lock> lock = Acquire(holder, resource, absl::Seconds(20));
  ASSERT_TRUE(lock.ok()) << lock.status();
  loop_.RunFor(absl::Milliseconds(50));
  ASSERT_EQ(Holding(lock->key(), lock->token()), 5);

  // A majority crashes and comes back: without persistence they would be
  // empty and a second owner would get them.
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Restart().ok());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i, lock->key()), lock->token()) << "master " << i;
    const int64_t pttl = Pttl(i, lock->key());
    EXPECT_GT(pttl, 0) << "master " << i;
    EXPECT_LE(pttl, 20000) << "master " << i;
  }

  AsyncRedlock& second = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> refused = Acquire(second, resource, absl::Seconds(20));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAborted)
      << refused.status();
  loop_.RunFor(absl::Milliseconds(50));
  EXPECT_EQ(Holding(lock->key(), lock->token()), 5);
  EXPECT_TRUE(lock->valid());

  // The holder reconnects to the restarted masters and releases everywhere.
  loop_.RunFor(absl::Milliseconds(300));
  absl::StatusOr<ReleaseReport> report = Release(holder, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 5) << DescribeVotes(report->votes);
  EXPECT_EQ(Holding(lock->key(), lock->token()), 0);
}

// Kleppmann's case on three masters without persistence: the holder got
// masters 0 and 1 while 2 was out of its reach; master 1 crashes and comes
// back empty, master 2 is reachable again; a second owner now gets 1 and 2,
// a majority, while the holder's lock is still valid. Returns the second
// owner's result. (Master 2 is cut off rather than restarted: with two of
// three masters empty, no client could know the membership record is
// current, and none would count either.)
struct RestartOutcome {
  std::optional<Lock> holder;
  absl::StatusOr<Lock> second = absl::UnknownError("not run");
};

class RestartWithoutPersistence : public FaultScenariosTest {
 protected:
  // `survivor_delay`: the second owner's connection to master 0 (the one
  // that kept its data) is that much slower, so the reborn masters finish
  // their handshakes first.
  RestartOutcome Run(bool restart_guard,
                     absl::Duration survivor_delay = absl::ZeroDuration()) {
    RestartOutcome outcome;
    StartOwnMasters(3);
    if (IsSkipped() || HasFatalFailure()) return outcome;
    Proxy(2);  // Every client reaches master 2 through it.
    Options options = BaseOptions();
    options.restart_guard = restart_guard;
    AsyncRedlock& holder = MakeEngine(options);
    // Every master seen once (with the guard: the deployment marked).
    EXPECT_TRUE(Acquire(holder, "warmup", absl::Seconds(10)).ok());
    // A restart is told from a late first marking by the master's uptime,
    // which Redis reports to the second: let the deployment age past that.
    loop_.RunFor(kPastUptimeResolution);

    Proxy(2).SetMode(FaultProxy::Mode::kReset);
    const std::string resource = Resource("restart-without-persistence");
    absl::StatusOr<Lock> held = Acquire(holder, resource, absl::Seconds(30));
    EXPECT_TRUE(held.ok()) << held.status();
    if (!held.ok()) return outcome;
    outcome.holder = *held;
    EXPECT_EQ(Value(0, held->key()), held->token());
    EXPECT_EQ(Value(1, held->key()), held->token());

    EXPECT_TRUE(cluster_->server(1).Restart().ok());  // Crash: back empty.
    Proxy(2).SetMode(FaultProxy::Mode::kPass);
    EXPECT_EQ(Value(1, held->key()), std::nullopt);
    EXPECT_EQ(Value(2, held->key()), std::nullopt);

    if (survivor_delay > absl::ZeroDuration()) {
      Proxy(0).SetLatency(absl::ZeroDuration(), survivor_delay);
    }
    Options second_options = BaseOptions();  // Through the proxy, if any.
    second_options.restart_guard = restart_guard;
    AsyncRedlock& second = MakeEngine(second_options);
    // Once it has marked the empty master (with the guard, reborn).
    EXPECT_TRUE(loop_.RunUntil(
        [&] {
          const std::vector<MasterHealth> health = second.Health();
          return health.size() == 3 && !health[1].marker.empty();
        },
        absl::Seconds(5)));
    outcome.second = Acquire(second, resource, absl::Seconds(30));
    loop_.RunFor(absl::Milliseconds(50));
    return outcome;
  }

  void ExpectRefusedByTheGuard(const RestartOutcome& outcome) {
    ASSERT_TRUE(outcome.holder.has_value());
    const Lock& holder = *outcome.holder;
    ASSERT_FALSE(outcome.second.ok())
        << "granted twice: holder " << holder.token() << " still valid for "
        << holder.remaining() << "; second owner's votes "
        << DescribeVotes(outcome.second->votes());
    EXPECT_TRUE(
        absl::StrContains(outcome.second.status().message(), "restart guard"))
        << outcome.second.status();
    EXPECT_TRUE(holder.valid());
    EXPECT_EQ(Value(0, holder.key()), holder.token());
    // The reborn masters' grants were not counted, and the failed attempt
    // cleaned them up.
    EXPECT_EQ(Value(1, holder.key()), std::nullopt);
    EXPECT_EQ(Value(2, holder.key()), std::nullopt);
  }
};

TEST_F(RestartWithoutPersistence, AllowsADoubleGrantWithoutTheGuard) {
  RestartOutcome outcome = Run(/*restart_guard=*/false);
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(outcome.holder.has_value());
  const Lock& holder = *outcome.holder;
  // The known unsafe case, reproduced: two owners, both within validity.
  ASSERT_TRUE(outcome.second.ok()) << outcome.second.status();
  EXPECT_TRUE(holder.valid());
  EXPECT_TRUE(outcome.second->valid());
  EXPECT_NE(holder.token(), outcome.second->token());
  EXPECT_EQ(Value(0, holder.key()), holder.token());
  EXPECT_EQ(Value(1, holder.key()), outcome.second->token());
  EXPECT_EQ(Value(2, holder.key()), outcome.second->token());
}

// The guarded twin: the same sequence with Options::restart_guard (the
// default) must not grant the lock twice.
TEST_F(RestartWithoutPersistence, RefusesTheSecondOwnerWithTheGuard) {
  RestartOutcome outcome = Run(/*restart_guard=*/true);
  if (IsSkipped() || HasFatalFailure()) return;
  ExpectRefusedByTheGuard(outcome);
}

// Handshakes complete in any order: the guard must also hold when the
// reborn masters are seen before the one that carries the marker.
TEST_F(RestartWithoutPersistence,
       RefusesTheSecondOwnerWithTheGuardWhenTheSurvivorAnswersLast) {
  RestartOutcome outcome =
      Run(/*restart_guard=*/true, /*survivor_delay=*/absl::Milliseconds(100));
  if (IsSkipped() || HasFatalFailure()) return;
  ExpectRefusedByTheGuard(outcome);
}

// Two clients of a brand-new deployment start at about the same time. The
// first has seen every master unmarked and is writing "trusted" to each; its
// write to master 1 is still on the way (a slow link) when the second client
// connects and sees masters 0 and 2 marked, master 1 not. No master has lost
// any data, so none may be held back.
TEST_F(FaultScenariosTest,
       AFreshDeploymentStartedByTwoClientsAtOnceIsNotHeldBack) {
  START_OWN_MASTERS(3);
  const std::vector<std::string> direct = uris_;
  Proxy(1).SetLatency(absl::Milliseconds(800), absl::ZeroDuration());
  Options first_options = BaseOptions();
  first_options.request_timeout = absl::Seconds(2);
  AsyncRedlock& first = MakeEngine(first_options);
  const std::string marker = DeploymentMarkerKey(first_options);
  ASSERT_TRUE(loop_.RunUntil(
      [&] {
        return MarkerState(Value(0, marker)) == "trusted" &&
               MarkerState(Value(2, marker)) == "trusted";
      },
      absl::Seconds(10)));
  ASSERT_EQ(Value(1, marker), std::nullopt) << "the first client's marker "
                                               "reached master 1 too early";

  Options second_options = BaseOptions();
  second_options.masters = direct;
  AsyncRedlock& second = MakeEngine(second_options);
  loop_.RunFor(absl::Milliseconds(1500));  // Every marker write has landed.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(MarkerState(Value(i, marker)), "trusted") << "master " << i;
  }

  // Master 1's grants must count: with master 0 down, 1 and 2 are a quorum.
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  for (AsyncRedlock* engine : {&second, &first}) {
    absl::StatusOr<Lock> lock =
        Acquire(*engine, Resource("fresh-deployment"), absl::Seconds(10));
    // The second client read master 1 before the first's record reached
    // it: the attempt that reads it again may still judge the lists by the
    // old view (fail closed); the next one counts it.
    for (int retry = 0;
         retry < 3 && !lock.ok() &&
         absl::StrContains(lock.status().message(), "membership");
         ++retry) {
      loop_.RunFor(absl::Milliseconds(100));
      lock = Acquire(*engine, Resource("fresh-deployment"), absl::Seconds(10));
    }
    ASSERT_TRUE(lock.ok()) << lock.status();
    ASSERT_TRUE(Release(*engine, *lock).ok());
  }
}

// ---- Holders and time ----

TEST_F(FaultScenariosTest,
       HolderStalledPastItsTtlCannotExtendNorReleaseTheNewOwnersLock) {
  USE_ANY_MASTERS(5);
  AsyncRedlock& stale = MakeEngine(BaseOptions());
  AsyncRedlock& next = MakeEngine(BaseOptions());
  const std::string resource = Resource("stalled-holder");
  absl::StatusOr<Lock> lock = Acquire(stale, resource, absl::Seconds(1));
  ASSERT_TRUE(lock.ok()) << lock.status();

  absl::SleepFor(absl::Milliseconds(1300));  // The holder stalls (GC, swap).
  EXPECT_FALSE(lock->valid());
  EXPECT_LT(lock->valid_until(), MonotonicClock::now());
  for (int i = 0; i < masters(); ++i) {
    EXPECT_EQ(Value(i, lock->key()), std::nullopt) << "master " << i;
  }

  absl::Status extended = Extend(stale, *lock, absl::Seconds(10));
  EXPECT_EQ(extended.code(), absl::StatusCode::kAborted) << extended;
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 0; i < masters(); ++i) {
    EXPECT_EQ(Value(i, lock->key()), std::nullopt)
        << "extend recreated the key on master " << i;
  }

  absl::StatusOr<Lock> taken = Acquire(next, resource, absl::Seconds(10));
  ASSERT_TRUE(taken.ok()) << taken.status();
  loop_.RunFor(absl::Milliseconds(50));

  absl::StatusOr<ReleaseReport> report = Release(stale, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 0);
  EXPECT_EQ(report->not_held, masters());
  EXPECT_EQ(Holding(taken->key(), taken->token()), masters());
  for (int i = 0; i < masters(); ++i) {
    EXPECT_GT(Pttl(i, taken->key()), 5000) << "master " << i;
  }
  ASSERT_TRUE(Release(next, *taken).ok());
}

TEST_F(FaultScenariosTest, TtlShorterThanTheWorkLetsASecondWorkerIn) {
  USE_ANY_MASTERS(5);
  auto first = Redlock::Create(ScenarioOptions(uris_));
  auto second = Redlock::Create(ScenarioOptions(uris_));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  const std::string resource = Resource("short-ttl");

  // Worker 1: a 1s lock for 2s of work, never extended.
  absl::StatusOr<Lock> one =
      (*first)->Acquire(resource, absl::Seconds(1), absl::ZeroDuration());
  ASSERT_TRUE(one.ok()) << one.status();
  const auto work_ends = MonotonicClock::now() + std::chrono::seconds(2);

  // Worker 2 waits for the lock meanwhile.
  absl::StatusOr<Lock> two = absl::UnknownError("not run");
  MonotonicTime two_got_it;
  std::thread worker2([&] {
    two = (*second)->Acquire(resource, absl::Seconds(10), absl::Seconds(5));
    two_got_it = MonotonicClock::now();
  });
  std::this_thread::sleep_until(work_ends);  // Worker 1 "works".
  worker2.join();

  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_LT(two_got_it, work_ends) << "worker 2 got in only after the work";
  EXPECT_GE(two_got_it, one->valid_until());
  // A quorum, not necessarily every master: worker 1's key may not have
  // expired yet on one master when worker 2's winning attempt reached it
  // (the keys were set a little apart), and that master refused.
  const int holding = Holding(two->key(), two->token());
  EXPECT_GE(holding, masters() / 2 + 1);
  // Worker 1's late release does not touch worker 2's lock.
  absl::StatusOr<ReleaseReport> late = (*first)->Release(*one);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->released, 0);
  EXPECT_EQ(Holding(two->key(), two->token()), holding)
      << "worker 1's late release removed worker 2's key";
  ASSERT_TRUE((*second)->Release(*two).ok());
  EXPECT_EQ(Holding(two->key(), two->token()), 0);
}

TEST_F(FaultScenariosTest,
       EightContendersWithTheirOwnClientsNeverOverlapAndNeverStall) {
  USE_ANY_MASTERS(5);
  constexpr int kContenders = 8;
  constexpr int kRoundsEach = 4;
  constexpr absl::Duration kTtl = absl::Seconds(2);
  const std::string resource = Resource("contended");

  std::mutex mu;
  std::vector<HeldInterval> intervals;
  std::vector<std::string> errors;
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int c = 0; c < kContenders; ++c) {
    auto client = Redlock::Create(ScenarioOptions(uris_));
    ASSERT_TRUE(client.ok()) << client.status();
    clients.push_back(*std::move(client));
  }

  const MonotonicTime begin = MonotonicClock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < kContenders; ++c) {
    threads.emplace_back([&, c] {
      for (int round = 0; round < kRoundsEach; ++round) {
        absl::StatusOr<Lock> lock =
            clients[c]->Acquire(resource, kTtl, absl::Seconds(15));
        if (!lock.ok()) {
          std::lock_guard<std::mutex> guard(mu);
          errors.push_back(lock.status().ToString());
          continue;
        }
        const MonotonicTime start = MonotonicClock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // Work.
        const MonotonicTime end = MonotonicClock::now();
        const bool still_valid = end < lock->valid_until();
        absl::StatusOr<ReleaseReport> report = clients[c]->Release(*lock);
        std::lock_guard<std::mutex> guard(mu);
        intervals.push_back({start, end, c});
        if (!still_valid) errors.push_back("work outlived the validity");
        if (!report.ok()) errors.push_back(report.status().ToString());
      }
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_TRUE(errors.empty())
      << errors.size()
      << " errors, first: " << (errors.empty() ? "" : errors[0]);
  ASSERT_EQ(intervals.size(), size_t{kContenders * kRoundsEach});
  // Never two holders at once (Overlaps() also sorts by start).
  const std::vector<std::string> overlaps = Overlaps(intervals);
  EXPECT_TRUE(overlaps.empty())
      << overlaps.size()
      << " overlapping pairs: " << absl::StrJoin(overlaps, "; ");
  // No stall: while everyone waits, the lock is never free for long (a key
  // left behind by a lost attempt would keep it for a whole TTL). Generous.
  const auto bound = absl::ToChronoNanoseconds(kTtl / 2);
  EXPECT_LT(intervals[0].start - begin, bound);
  for (size_t i = 1; i < intervals.size(); ++i) {
    EXPECT_LT(intervals[i].start - intervals[i - 1].end, bound)
        << "the lock stayed free before acquisition " << i;
  }
  for (int i = 0; i < masters(); ++i) {
    EXPECT_EQ(Value(i, KeyOf(resource)), std::nullopt) << "master " << i;
  }
}

// A failed attempt leaves nothing behind on a master whose connection died
// after the SET ran there: its clean-up is sent again on the next
// connection. Master 0 (behind a proxy) runs the SET, its reply waits in the
// proxy, and the proxy resets the connection; master 1 is held by another
// owner and denies, master 2 grants: the round is lost with master 0 not
// connected, and before its clean-up was kept, the attempt's key stayed on
// master 0 for its whole 30s TTL.
TEST_F(FaultScenariosTest, AKeyLeftWhereTheConnectionDiedIsCleanedOnReconnect) {
  START_OWN_MASTERS(3);
  FaultProxy& proxy = Proxy(0);
  AsyncRedlock& engine = PatientEngine();
  const std::string resource = Resource("cut-after-set");
  const std::string key = KeyOf(resource);
  ASSERT_TRUE(Direct(1)->Command({"SET", key, "other", "PX", "60000"}).ok());
  proxy.SetLatency(absl::ZeroDuration(), absl::Seconds(3));

  std::optional<absl::StatusOr<Lock>> result;
  ASSERT_NO_FATAL_FAILURE(StartOneAttempt(engine, resource, &result));
  auto on_master_0 = [&] { return HasKey(0, key); };
  // The SET ran on master 0; its reply is held in the proxy.
  ASSERT_TRUE(loop_.RunUntil(on_master_0, absl::Seconds(5)));
  proxy.ResetAllConnections();
  ASSERT_TRUE(
      loop_.RunUntil([&] { return result.has_value(); }, absl::Seconds(5)));
  ASSERT_FALSE(result->ok());
  EXPECT_TRUE(absl::StrContains(result->status().message(), Name(0)))
      << result->status();
  proxy.SetLatency(absl::ZeroDuration(), absl::ZeroDuration());

  // Gone once the client is connected again: seconds, not the 30s TTL.
  EXPECT_TRUE(loop_.RunUntil([&] { return !on_master_0(); }, absl::Seconds(8)))
      << "PTTL " << Direct(0)->Pttl(key).value_or(-3);
  EXPECT_EQ(Value(1, key), std::optional<std::string>("other"));
  EXPECT_EQ(Value(2, key), std::nullopt);
}

// The same with a refused reply (issue 46's case: the client refuses what
// comes back from a master that ran the command), with the clean-up itself
// in flight when the connection is closed for it. Master 0 runs the SET,
// whose reply waits in the proxy; master 0 then pauses writes (CLIENT PAUSE
// WRITE), so the clean-up sent once masters 1 and 2 deny waits there unrun.
// Ahead of the held replies the network delivers the header of an array of
// 10^8 elements, which the client refuses at once (over its bound on
// elements) and closes the connection for: the SET's and the clean-up's
// callbacks get kDataLoss, and the server drops the paused clean-up with the
// connection. The clean-up is kept and sent on the next connection.
TEST_F(FaultScenariosTest, ACleanUpWhoseReplyWasRefusedIsSentAgainOnReconnect) {
  START_OWN_MASTERS(3);
  FaultProxy& proxy = Proxy(0);
  for (int i : {1, 2}) Proxy(i);
  AsyncRedlock& engine = PatientEngine();
  const std::string resource = Resource("refused-cleanup");
  const std::string key = KeyOf(resource);
  for (int i : {1, 2}) {
    ASSERT_TRUE(Direct(i)->Command({"SET", key, "other", "PX", "60000"}).ok());
    Proxy(i).SetLatency(absl::ZeroDuration(), absl::Milliseconds(700));
  }
  proxy.SetLatency(absl::ZeroDuration(), absl::Seconds(5));

  std::optional<absl::StatusOr<Lock>> result;
  ASSERT_NO_FATAL_FAILURE(StartOneAttempt(engine, resource, &result));
  auto on_master_0 = [&] { return HasKey(0, key); };
  ASSERT_TRUE(loop_.RunUntil(on_master_0, absl::Seconds(5)));
  ASSERT_TRUE(Direct(0)->Command({"CLIENT", "PAUSE", "8000", "WRITE"}).ok());
  // Masters 1 and 2 deny: lost, and the clean-up goes to master 0.
  ASSERT_TRUE(
      loop_.RunUntil([&] { return result.has_value(); }, absl::Seconds(5)));
  ASSERT_FALSE(result->ok());
  loop_.RunFor(absl::Milliseconds(200));  // The clean-up reaches master 0.
  proxy.InjectToClient("*100000000\r\n");
  loop_.RunFor(absl::Milliseconds(200));  // Refused, and closed.
  ASSERT_TRUE(absl::StrContains(engine.Health()[0].last_error.message(),
                                "reply refused"))
      << "the scene needs the refusal, not a timeout: "
      << engine.Health()[0].last_error;
  proxy.SetLatency(absl::ZeroDuration(), absl::ZeroDuration());
  ASSERT_TRUE(on_master_0()) << "the scene needs the clean-up unrun";
  ASSERT_TRUE(Direct(0)->Command({"CLIENT", "UNPAUSE"}).ok());

  // Gone once the client is connected again: seconds, not the 30s TTL.
  EXPECT_TRUE(loop_.RunUntil([&] { return !on_master_0(); }, absl::Seconds(8)))
      << "PTTL " << Direct(0)->Pttl(key).value_or(-3);
  EXPECT_EQ(Value(1, key), std::optional<std::string>("other"));
  EXPECT_EQ(Value(2, key), std::optional<std::string>("other"));
}

}  // namespace
}  // namespace redlock
