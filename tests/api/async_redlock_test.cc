// Copyright 2026 The redlock Authors.
//
// The async engine on five real redis-server masters. Every test checks the
// masters directly afterwards, not only what the engine says.

#include "redlock/async_redlock.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/await_call.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

constexpr char kKey[] = "redlock:res";

class AsyncRedlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop and kill";
    }
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  Options BaseOptions() const {
    Options options;
    options.masters = cluster_->Uris();
    // Generous: these tests are about decisions, not speed, and CI is slow.
    options.request_timeout = absl::Milliseconds(500);
    options.connect_timeout = absl::Milliseconds(500);
    options.stalled_connection_timeout = absl::Seconds(5);
    options.reconnect.initial = absl::Milliseconds(10);
    options.reconnect.max = absl::Milliseconds(100);
    return options;
  }

  std::unique_ptr<AsyncRedlock> MakeEngine(Options options) {
    auto engine = AsyncRedlock::Create(loop_.base(), std::move(options));
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  absl::StatusOr<Lock> Acquire(AsyncRedlock& engine, absl::Duration ttl,
                               absl::Duration wait = absl::ZeroDuration(),
                               const std::string& resource = "res") {
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

  // What master i holds under kKey.
  std::optional<std::string> Value(int i) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return "<unreachable>";
    auto value = (*client)->Get(kKey);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : "<error>";
  }

  int64_t Pttl(int i) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    auto pttl = (*client)->Pttl(kKey);
    EXPECT_TRUE(pttl.ok()) << pttl.status();
    return pttl.value_or(-3);
  }

  void SetForeign(int i, absl::Duration ttl = absl::Seconds(30)) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)->Set(kKey, "someone-else", ttl).ok());
  }

  LoopRunner loop_;
  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(AsyncRedlockTest, AcquireSetsOurTokenOnEveryMasterWithTtl) {
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(lock->resource(), "res");
  EXPECT_EQ(lock->key(), kKey);
  EXPECT_EQ(lock->token().size(), 32u);
  EXPECT_TRUE(lock->valid());
  EXPECT_LE(lock->remaining(), absl::Seconds(10) - absl::Milliseconds(102));
  EXPECT_GT(lock->remaining(), absl::Seconds(5));
  // Quorum is 3: the decision may come before the last two answer, but all
  // five get the SET.
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Value(i), lock->token()) << "master " << i;
    int64_t pttl = Pttl(i);
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 10000);
  }
  int granted = 0;
  for (const MasterVote& vote : lock->votes()) {
    granted += vote.kind == MasterVote::Kind::kGranted;
  }
  EXPECT_GE(granted, 3);
}

TEST_F(AsyncRedlockTest, SecondOwnerIsRefusedWhileTheFirstHolds) {
  auto first = MakeEngine(BaseOptions());
  auto second = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> held = Acquire(*first, absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  loop_.RunFor(absl::Milliseconds(20));
  absl::StatusOr<Lock> refused = Acquire(*second, absl::Seconds(10));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAborted)
      << refused.status();
  EXPECT_NE(refused.status().message().find("held by another owner"),
            std::string::npos)
      << refused.status();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Value(i), held->token());
}

TEST_F(AsyncRedlockTest, ReleaseDeletesOnlyOurToken) {
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  loop_.RunFor(absl::Milliseconds(20));
  SetForeign(0);  // Overwritten by another owner on master 0.
  absl::StatusOr<ReleaseReport> report = Release(*engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 4);
  EXPECT_EQ(report->not_held, 1);
  EXPECT_EQ(report->failed, 0);
  EXPECT_EQ(Value(0), "someone-else");
  for (int i = 1; i < 5; ++i) EXPECT_EQ(Value(i), std::nullopt);
  EXPECT_TRUE(lock->released());
  EXPECT_FALSE(lock->valid());
}

TEST_F(AsyncRedlockTest, AFailedAttemptLeavesNoKeyBehind) {
  // Another owner holds 3 of 5: we are granted 2, lose, and must clean up.
  SetForeign(0);
  SetForeign(1);
  SetForeign(2);
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  ASSERT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  loop_.RunFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Value(i), "someone-else");
  EXPECT_EQ(Value(3), std::nullopt);
  EXPECT_EQ(Value(4), std::nullopt);
}

TEST_F(AsyncRedlockTest, TwoMastersKilledStillAcquiresWithValidityBelowTtl) {
  // A deployment that existed before the masters died (a brand-new one is
  // trusted only once every master answered).
  ASSERT_TRUE(testing::MarkDeploymentTrusted(*cluster_).ok());
  auto engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  ASSERT_TRUE(cluster_->server(3).Kill().ok());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(lock->remaining(), absl::Seconds(5));
  EXPECT_GT(lock->remaining(), absl::Seconds(2));
  for (int i : {1, 2, 4}) EXPECT_EQ(Value(i), lock->token());
  absl::StatusOr<ReleaseReport> report = Release(*engine, *lock);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->released, 3);
  EXPECT_EQ(report->failed, 2);
  for (int i : {1, 2, 4}) EXPECT_EQ(Value(i), std::nullopt);
}

TEST_F(AsyncRedlockTest, ThreeMastersKilledFailsFastAndLeavesNoKey) {
  auto engine = MakeEngine(BaseOptions());
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock =
      Acquire(*engine, absl::Seconds(5), /*wait=*/absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
      << lock.status();
  // Not the 10s wait budget: an outage is reported at once.
  EXPECT_LT(took, absl::Seconds(3));
  loop_.RunFor(absl::Milliseconds(50));
  EXPECT_EQ(Value(3), std::nullopt);
  EXPECT_EQ(Value(4), std::nullopt);
}

TEST_F(AsyncRedlockTest, AStoppedMasterDoesNotDelayTheDecision) {
  Options options = BaseOptions();
  options.request_timeout = absl::Seconds(3);
  auto engine = MakeEngine(options);
  // Connect everything first.
  ASSERT_TRUE(
      Acquire(*engine, absl::Seconds(10), absl::ZeroDuration(), "warmup").ok());
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Generous bound: only proves we did not wait the 3s for the straggler.
  EXPECT_LT(took, absl::Seconds(2));
  absl::StatusOr<ReleaseReport> report;
  bool released = false;
  ASSERT_TRUE(engine
                  ->ReleaseAsync(*lock,
                                 [&](absl::StatusOr<ReleaseReport> r) {
                                   report = std::move(r);
                                   released = true;
                                 })
                  .ok());
  loop_.RunFor(absl::Milliseconds(50));
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return released; }));
  // The late SET ran on master 2, and the release queued behind it after it.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Value(i), std::nullopt) << i;
}

TEST_F(AsyncRedlockTest, ExtendMovesValidityForwardAndRefreshesTtl) {
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(2));
  ASSERT_TRUE(lock.ok()) << lock.status();
  const MonotonicTime before = lock->valid_until();
  loop_.RunFor(absl::Milliseconds(100));
  ASSERT_TRUE(Extend(*engine, *lock, absl::Seconds(20)).ok());
  EXPECT_GT(lock->valid_until(), before + std::chrono::seconds(15));
  loop_.RunFor(absl::Milliseconds(30));
  for (int i = 0; i < 5; ++i) EXPECT_GT(Pttl(i), 15000) << i;
}

TEST_F(AsyncRedlockTest, ExtendAfterExpiryFailsAndDoesNotRecreateTheKey) {
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Milliseconds(600));
  ASSERT_TRUE(lock.ok()) << lock.status();
  loop_.RunFor(absl::Milliseconds(800));
  EXPECT_FALSE(lock->valid());
  absl::Status extended = Extend(*engine, *lock, absl::Seconds(10));
  EXPECT_EQ(extended.code(), absl::StatusCode::kAborted) << extended;
  EXPECT_NE(extended.message().find("lock lost"), std::string::npos);
  loop_.RunFor(absl::Milliseconds(30));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Value(i), std::nullopt) << i;
}

TEST_F(AsyncRedlockTest, ReleaseFallsBackToEvalAfterScriptFlush) {
  auto engine = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  loop_.RunFor(absl::Milliseconds(20));
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SCRIPT", "FLUSH"}).ok());
  }
  absl::StatusOr<ReleaseReport> report = Release(*engine, *lock);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Value(i), std::nullopt);
}

TEST_F(AsyncRedlockTest, DestroyingTheEngineCancelsPendingCallsOnce) {
  auto engine = MakeEngine(BaseOptions());
  ASSERT_TRUE(
      Acquire(*engine, absl::Seconds(10), absl::ZeroDuration(), "warmup").ok());
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Stop().ok());
  int calls = 0;
  absl::Status status;
  ASSERT_TRUE(engine
                  ->AcquireAsync("res", absl::Seconds(10), absl::ZeroDuration(),
                                 [&](absl::StatusOr<Lock> r) {
                                   ++calls;
                                   status = r.status();
                                 })
                  .ok());
  loop_.RunFor(absl::Milliseconds(20));
  engine.reset();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  loop_.RunFor(absl::Milliseconds(20));
  EXPECT_EQ(calls, 1);
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Continue().ok());
}

TEST_F(AsyncRedlockTest, WrongPasswordIsReportedPerMaster) {
  Options options = BaseOptions();
  for (std::string& uri : options.masters) {
    uri.insert(std::string("redis://").size(), ":wrong@");
  }
  // The servers have no password: AUTH fails with a clear error.
  auto engine = MakeEngine(options);
  absl::StatusOr<Lock> lock = Acquire(*engine, absl::Seconds(10));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(lock.status().message().find("AUTH failed"), std::string::npos)
      << lock.status();
}

TEST_F(AsyncRedlockTest, BadInputIsInvalidArgumentWithoutACallback) {
  auto engine = MakeEngine(BaseOptions());
  bool called = false;
  auto cb = [&](absl::StatusOr<Lock>) { called = true; };
  EXPECT_EQ(engine->AcquireAsync("", absl::Seconds(1), absl::ZeroDuration(), cb)
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      engine->AcquireAsync("r", absl::ZeroDuration(), absl::ZeroDuration(), cb)
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      engine
          ->AcquireAsync("r", absl::Milliseconds(400), absl::ZeroDuration(), cb)
          .code(),
      absl::StatusCode::kInvalidArgument);  // <= request_timeout.
  EXPECT_EQ(engine->AcquireAsync("r", absl::Hours(2), absl::ZeroDuration(), cb)
                .code(),
            absl::StatusCode::kInvalidArgument);  // > max_ttl.
  EXPECT_EQ(
      engine->AcquireAsync("r", absl::Seconds(1), absl::Seconds(-1), cb).code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine->ReleaseAsync(Lock(), nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  loop_.RunFor(absl::Milliseconds(20));
  EXPECT_FALSE(called);
}

TEST_F(AsyncRedlockTest, ALockFromAnotherEngineOrReleasedIsRejected) {
  auto first = MakeEngine(BaseOptions());
  auto second = MakeEngine(BaseOptions());
  absl::StatusOr<Lock> lock = Acquire(*first, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(second->ReleaseAsync(*lock, [](auto) {}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(Release(*first, *lock).ok());
  EXPECT_EQ(first->ReleaseAsync(*lock, [](auto) {}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(first->ExtendAsync(*lock, absl::Seconds(5), [](auto) {}).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(AsyncRedlockCreateTest, RejectsHostNamesAndBadOptions) {
  LoopRunner loop;
  Options options;
  options.masters = {"redis://db.invalid:6379"};
  auto engine = AsyncRedlock::Create(loop.base(), options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(engine.status().message().find("numeric"), std::string::npos);
  options.masters = {};
  EXPECT_EQ(AsyncRedlock::Create(loop.base(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.masters = {"redis://127.0.0.1:1"};
  EXPECT_EQ(AsyncRedlock::Create(nullptr, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace redlock
