// Copyright 2026 The redlock Authors.
//
// Lock lifetime on five real masters: the seed's homework (TTL shorter than
// the work) with and without automatic extension, the lost-lock signal, the
// hold-time cap, and extension under a slow master.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kJob[] = "recalc-ratings";
constexpr char kKey[] = "redlock:recalc-ratings";

class LifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop and kill";
    }
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  std::unique_ptr<Redlock> MakeClient(
      std::vector<std::string> masters = {},
      absl::Duration request_timeout = absl::Milliseconds(100)) {
    Options options =
        TestOptions(masters.empty() ? cluster_->Uris() : std::move(masters));
    options.request_timeout = request_timeout;
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // How many masters hold kKey.
  int Holders() {
    int n = 0;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (!cluster_->server(i).running() || cluster_->server(i).stopped()) {
        continue;
      }
      auto client = cluster_->Client(i);
      if (!client.ok()) continue;
      auto value = (*client)->Get(kKey);
      n += value.ok() && value->has_value();
    }
    return n;
  }

  // An AsyncRedlock on `loop` (request_timeout 100ms) holding kJob for
  // `ttl`, acquired in one attempt.
  struct AsyncHolder {
    std::unique_ptr<AsyncRedlock> engine;
    Lock lock;
  };
  absl::StatusOr<AsyncHolder> HoldAsync(LoopRunner& loop, absl::Duration ttl) {
    Options options = TestOptions(cluster_->Uris());
    options.request_timeout = absl::Milliseconds(100);
    absl::StatusOr<std::unique_ptr<AsyncRedlock>> engine =
        AsyncRedlock::Create(loop.base(), options);
    if (!engine.ok()) return engine.status();
    std::optional<absl::StatusOr<Lock>> lock;
    absl::Status sent = (*engine)->AcquireAsync(
        kJob, ttl, absl::ZeroDuration(),
        [&](absl::StatusOr<Lock> l) { lock = std::move(l); });
    if (!sent.ok()) return sent;
    if (!loop.RunUntil([&] { return lock.has_value(); })) {
      return absl::DeadlineExceededError("the acquisition never completed");
    }
    if (!lock->ok()) return lock->status();
    return AsyncHolder{*std::move(engine), **std::move(lock)};
  }

  std::unique_ptr<RedisCluster> cluster_;
};

// One worker of the seed's homework: runs the 2s job if it gets the lock.
struct Worker {
  absl::Time started;
  absl::Time finished;
  bool ran = false;
};

TEST_F(LifetimeTest, TtlShorterThanTheWorkLetsASecondWorkerInWithoutExtension) {
  auto a = MakeClient();
  auto b = MakeClient();
  Worker first, second;
  // A: TTL 1s, work 2s, no extension.
  absl::StatusOr<Lock> lock = a->TryAcquire(kJob, absl::Seconds(1));
  ASSERT_TRUE(lock.ok()) << lock.status();
  first.ran = true;
  first.started = absl::Now();
  std::thread other([&] {
    // B keeps trying for 3s; it gets in once A's TTL runs out.
    absl::StatusOr<Lock> its =
        b->Acquire(kJob, absl::Seconds(1), absl::Seconds(3));
    if (its.ok()) {
      second.ran = true;
      second.started = absl::Now();
      absl::SleepFor(absl::Milliseconds(200));
      second.finished = absl::Now();
      b->Release(*its).IgnoreError();
    }
  });
  absl::SleepFor(absl::Seconds(2));
  first.finished = absl::Now();
  other.join();
  a->Release(*lock).IgnoreError();
  // Both ran the job, and their runs overlapped: the lock did not protect.
  ASSERT_TRUE(second.ran);
  EXPECT_LT(second.started, first.finished);
}

TEST_F(LifetimeTest, WithExtensionExactlyOneWorkerRunsTheJob) {
  auto a = MakeClient();
  auto b = MakeClient();
  std::atomic<bool> a_working{false};
  std::atomic<int> b_got_in_while_a_worked{0};
  std::atomic<int> b_attempts{0};
  std::thread other([&] {
    // While A works, B tries every 100ms without waiting.
    while (!a_working.load()) absl::SleepFor(absl::Milliseconds(5));
    while (a_working.load()) {
      ++b_attempts;
      absl::StatusOr<Lock> its = b->TryAcquire(kJob, absl::Seconds(1));
      if (its.ok()) {
        if (a_working.load()) ++b_got_in_while_a_worked;
        b->Release(*its).IgnoreError();
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(1);
  absl::Status done = a->WithLock(kJob, acquire, [&](const Lock& lock) {
    a_working = true;
    absl::SleepFor(absl::Seconds(2));  // Twice the TTL.
    a_working = false;
    return lock.lost() ? lock.lost_reason() : absl::OkStatus();
  });
  other.join();
  EXPECT_TRUE(done.ok()) << done;
  EXPECT_GE(b_attempts.load(), 10);
  EXPECT_EQ(b_got_in_while_a_worked.load(), 0);
  EXPECT_EQ(Holders(), 0) << "WithLock must release when the work returns";
}

// Runs work under WithLock that polls for loss while `fault` is applied to
// the masters, and checks the loss was signalled before validity ran out.
void ExpectLossSignalledInTime(Redlock& client,
                               const std::function<void()>& fault) {
  std::mutex mu;
  MonotonicTime last_valid_until;
  MonotonicTime noticed_at;
  bool noticed = false;
  std::atomic<int> on_lost_calls{0};
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(2);
  HoldOptions hold;
  hold.on_lost = [&](const absl::Status&) { ++on_lost_calls; };
  absl::Status result = client.WithLock(
      kJob, acquire,
      [&](const Lock& lock) {
        fault();
        const absl::Time give_up = absl::Now() + absl::Seconds(6);
        while (absl::Now() < give_up) {
          const MonotonicTime until = lock.valid_until();
          if (lock.lost()) {
            std::lock_guard<std::mutex> l(mu);
            noticed_at = MonotonicClock::now();
            noticed = true;
            break;
          }
          {
            std::lock_guard<std::mutex> l(mu);
            last_valid_until = until;
          }
          absl::SleepFor(absl::Milliseconds(5));
        }
        return absl::OkStatus();
      },
      std::move(hold));
  ASSERT_TRUE(noticed) << "the loss was never signalled";
  EXPECT_EQ(on_lost_calls.load(), 1);
  EXPECT_LT(noticed_at, last_valid_until)
      << "signalled after the old validity had ended";
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.message().find("lost while the work ran"), std::string::npos)
      << result;
}

TEST_F(LifetimeTest, LostSignalFiresBeforeValidityEndsWhenAMajorityIsKilled) {
  auto client = MakeClient();
  ExpectLossSignalledInTime(*client, [&] {
    for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  });
}

TEST_F(LifetimeTest, LostSignalFiresBeforeValidityEndsWhenAMajorityIsPaused) {
  auto client = MakeClient();
  ExpectLossSignalledInTime(*client, [&] {
    for (int i : {2, 3, 4}) ASSERT_TRUE(cluster_->server(i).Stop().ok());
  });
  for (int i : {2, 3, 4}) ASSERT_TRUE(cluster_->server(i).Continue().ok());
}

TEST_F(LifetimeTest, ExtensionKeepsTheLockForTenTtlsUnderASlowMaster) {
  auto proxy = FaultProxy::Start({.upstream_port = cluster_->server(0).port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetLatency(absl::Milliseconds(30), absl::Milliseconds(30));
  std::vector<std::string> masters = cluster_->Uris();
  masters[0] = (*proxy)->Uri();
  auto client = MakeClient(masters);
  auto rival = MakeClient();
  const absl::Duration ttl = absl::Milliseconds(500);
  int samples = 0;
  int gaps = 0;
  int rival_wins = 0;
  AcquireOptions acquire;
  acquire.ttl = ttl;
  absl::Status result = client->WithLock(kJob, acquire, [&](const Lock& lock) {
    const absl::Time end = absl::Now() + 10 * ttl;
    absl::Time next_rival = absl::Now();
    while (absl::Now() < end) {
      ++samples;
      if (lock.lost() || lock.remaining() <= absl::ZeroDuration()) ++gaps;
      if (absl::Now() >= next_rival) {
        absl::StatusOr<Lock> its = rival->TryAcquire(kJob, ttl);
        if (its.ok()) {
          ++rival_wins;
          rival->Release(*its).IgnoreError();
        }
        next_rival = absl::Now() + absl::Milliseconds(200);
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_GT(samples, 100);
  EXPECT_EQ(gaps, 0);
  EXPECT_EQ(rival_wins, 0);
}

TEST_F(LifetimeTest, MaxHoldStopsExtendingAndDeclaresTheLockLost) {
  auto client = MakeClient();
  AcquireOptions acquire;
  acquire.ttl = absl::Milliseconds(900);
  HoldOptions hold;
  hold.max_hold = absl::Milliseconds(1200);
  absl::Status result = client->WithLock(
      kJob, acquire,
      [&](const Lock& lock) {
        const absl::Time give_up = absl::Now() + absl::Seconds(5);
        while (!lock.lost() && absl::Now() < give_up) {
          absl::SleepFor(absl::Milliseconds(5));
        }
        return absl::OkStatus();
      },
      std::move(hold));
  EXPECT_EQ(result.code(), absl::StatusCode::kDeadlineExceeded) << result;
  EXPECT_NE(result.message().find("max_hold"), std::string::npos) << result;
}

TEST_F(LifetimeTest, WithLockReleasesWhenTheWorkThrows) {
  auto client = MakeClient();
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(5);
  EXPECT_THROW(client
                   ->WithLock(kJob, acquire,
                              [&](const Lock&) -> absl::Status {
                                EXPECT_EQ(Holders(), 5);
                                throw std::runtime_error("work failed");
                              })
                   .IgnoreError(),
               std::runtime_error);
  EXPECT_EQ(Holders(), 0);
  EXPECT_TRUE(client->TryAcquire(kJob, absl::Seconds(1)).ok());
}

TEST_F(LifetimeTest, WithLockReturnsTheWorksStatusAndDoesNotRunWhenHeld) {
  auto client = MakeClient();
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(5);
  EXPECT_EQ(client
                ->WithLock(kJob, acquire,
                           [](const Lock&) {
                             return absl::DataLossError("the job's own error");
                           })
                .code(),
            absl::StatusCode::kDataLoss);
  absl::StatusOr<Lock> held = client->TryAcquire(kJob, absl::Seconds(5));
  ASSERT_TRUE(held.ok());
  bool ran = false;
  absl::Status refused = client->WithLock(kJob, acquire, [&](const Lock&) {
    ran = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(refused.code(), absl::StatusCode::kAborted) << refused;
  EXPECT_FALSE(ran);
}

// WithLock waits for the release: when it returns, a quorum of masters has
// answered it (ReleaseAsync's own rule), even when that quorum needs masters
// that answer slowly. A release sent and not awaited would leave the key on
// the three slow masters here for the proxies' latency.
TEST_F(LifetimeTest, WithLockReturnsOnlyOnceAQuorumAnsweredTheRelease) {
  std::vector<std::unique_ptr<FaultProxy>> proxies;
  std::vector<std::string> masters = cluster_->Uris();
  for (int i = 0; i < 3; ++i) {
    auto proxy =
        FaultProxy::Start({.upstream_port = cluster_->server(i).port()});
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    (*proxy)->SetLatency(absl::Milliseconds(150), absl::Milliseconds(150));
    masters[i] = (*proxy)->Uri();
    proxies.push_back(*std::move(proxy));
  }
  auto client = MakeClient(masters, absl::Seconds(3));
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(10);
  int holders_during_work = -1;
  absl::Status status = client->WithLock(kJob, acquire, [&](const Lock&) {
    holders_during_work = Holders();
    return absl::OkStatus();
  });
  const int holders_after = Holders();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_GE(holders_during_work, 3);
  EXPECT_LE(holders_after, 2) << "WithLock returned before a quorum of "
                                 "masters had answered its release";
}

// The keep-alive starts on the loop in the turn that delivers the lock; when
// it cannot start, the lock won is released and the work never runs.
TEST_F(LifetimeTest, WithLockWhoseKeepAliveCannotStartReleasesAndSkipsTheWork) {
  auto client = MakeClient();
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(1);
  HoldOptions slow;
  slow.extend_every = absl::Seconds(1);  // Not shorter than ttl - margin.
  bool ran = false;
  absl::Status status = client->WithLock(
      kJob, acquire,
      [&](const Lock&) {
        ran = true;
        return absl::OkStatus();
      },
      std::move(slow));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_FALSE(ran);
  EXPECT_EQ(Holders(), 0) << "the lock won must be released";
  // The client still works: the loop is not left pinned or taken.
  absl::StatusOr<Lock> again = client->TryAcquire(kJob, absl::Seconds(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(client->Release(*again).ok());
}

// The extend script must check the token: a bare PEXPIRE would succeed here
// and cut the other owner's lease to our TTL.
TEST_F(LifetimeTest,
       ExtendAfterAnotherOwnerTookTheKeyIsAbortedAndLeavesItsTtl) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock = client->TryAcquire(kJob, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  const MonotonicTime valid_until_before = lock->valid_until();
  // Another owner now holds the key on every master, with its own token.
  for (int i = 0; i < cluster_->size(); ++i) {
    auto direct = cluster_->Client(i);
    ASSERT_TRUE(direct.ok()) << direct.status();
    ASSERT_TRUE(
        (*direct)->Set(kKey, "other-owner", absl::Milliseconds(30000)).ok());
  }

  absl::Status extended = client->Extend(*lock, absl::Seconds(5));
  EXPECT_EQ(extended.code(), absl::StatusCode::kAborted) << extended;
  EXPECT_LE(lock->valid_until(), valid_until_before);

  for (int i = 0; i < cluster_->size(); ++i) {
    auto direct = cluster_->Client(i);
    ASSERT_TRUE(direct.ok()) << direct.status();
    auto value = (*direct)->Get(kKey);
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(*value, "other-owner") << "master " << i;
    auto pttl = (*direct)->Pttl(kKey);
    ASSERT_TRUE(pttl.ok()) << pttl.status();
    // Still the other owner's 30s (less the test's own time), not our 5s.
    EXPECT_GT(*pttl, 25000) << "master " << i;
    EXPECT_LE(*pttl, 30000) << "master " << i;
  }
}

TEST_F(LifetimeTest, KeepAliveHandleReleasesWhenDestroyed) {
  LoopRunner loop;
  absl::StatusOr<AsyncHolder> holder = HoldAsync(loop, absl::Milliseconds(600));
  ASSERT_TRUE(holder.ok()) << holder.status();
  AsyncRedlock* engine = holder->engine.get();
  const Lock* lock = &holder->lock;
  {
    absl::StatusOr<KeepAliveHandle> keeper =
        engine->KeepAlive(*lock, absl::Milliseconds(600), {});
    ASSERT_TRUE(keeper.ok()) << keeper.status();
    loop.RunFor(absl::Milliseconds(1500));  // 2.5 TTLs.
    EXPECT_FALSE(lock->lost());
    EXPECT_GT(lock->remaining(), absl::ZeroDuration());
    EXPECT_EQ(Holders(), 5);
  }
  loop.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(Holders(), 0);
  EXPECT_TRUE(lock->released());
}

// Releasing a lock that is being kept alive is not a loss: the keep-alive
// stops without on_lost, and the lock reads released, not lost.
TEST_F(LifetimeTest, ReleasingAKeptAliveLockIsNotALoss) {
  LoopRunner loop;
  absl::StatusOr<AsyncHolder> holder = HoldAsync(loop, absl::Milliseconds(600));
  ASSERT_TRUE(holder.ok()) << holder.status();
  AsyncRedlock* engine = holder->engine.get();
  const Lock* lock = &holder->lock;
  int on_lost_calls = 0;
  HoldOptions hold;
  hold.on_lost = [&](const absl::Status&) { ++on_lost_calls; };
  absl::StatusOr<KeepAliveHandle> keeper =
      engine->KeepAlive(*lock, absl::Milliseconds(600), std::move(hold));
  ASSERT_TRUE(keeper.ok()) << keeper.status();
  loop.RunFor(absl::Milliseconds(300));
  std::optional<absl::StatusOr<ReleaseReport>> released;
  ASSERT_TRUE(engine
                  ->ReleaseAsync(*lock,
                                 [&](absl::StatusOr<ReleaseReport> r) {
                                   released = std::move(r);
                                 })
                  .ok());
  ASSERT_TRUE(loop.RunUntil([&] { return released.has_value(); }));
  ASSERT_TRUE(released->ok()) << released->status();
  loop.RunFor(absl::Milliseconds(1200));  // Past every extension and margin.
  EXPECT_EQ(on_lost_calls, 0);
  EXPECT_FALSE(lock->lost()) << lock->lost_reason();
  EXPECT_TRUE(lock->released());
  EXPECT_EQ(Holders(), 0);
}

// Two extensions of one lock in flight at once, 30 s then 2 s: every master
// applies them in that order, so a quorum keeps the keys 2 s. The 30 s round
// is decided last: A and B deny it (another token stands there while it
// runs), so it needs E, 150 ms away behind a proxy, while the 2 s round
// wins on A, B, C, D at once. The lock must not report 30 s.
TEST_F(LifetimeTest, OverlappingExtensionsReportNoMoreThanTheLastAppliedTtl) {
  auto proxy = FaultProxy::Start({.upstream_port = cluster_->server(4).port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  std::vector<std::string> masters;
  for (int i = 0; i < 4; ++i) masters.push_back(cluster_->server(i).Uri());
  masters.push_back((*proxy)->Uri());
  LoopRunner loop;
  Options options = TestOptions(masters);
  options.request_timeout = absl::Milliseconds(600);  // E answers in 300ms.
  auto engine = AsyncRedlock::Create(loop.base(), options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::optional<absl::StatusOr<Lock>> acquired;
  ASSERT_TRUE((*engine)
                  ->AcquireAsync(kJob, absl::Seconds(5), absl::Seconds(5),
                                 [&](absl::StatusOr<Lock> l) {
                                   acquired = std::move(l);
                                 })
                  .ok());
  ASSERT_TRUE(loop.RunUntil([&] { return acquired.has_value(); }));
  ASSERT_TRUE(acquired->ok()) << acquired->status();
  const Lock lock = **acquired;
  ASSERT_TRUE(loop.RunUntil([&] { return Holders() == 5; }));
  (*proxy)->SetLatency(absl::Milliseconds(150), absl::Milliseconds(150));

  auto set_key = [&](int i, const std::string& value) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Command({"SET", kKey, value, "PX", "5000"}).ok());
  };
  set_key(0, "someone-else");
  set_key(1, "someone-else");
  std::vector<int> decided;  // Seconds of each extension, as decided.
  absl::Status long_status, short_status;
  ASSERT_TRUE((*engine)
                  ->ExtendAsync(lock, absl::Seconds(30),
                                [&](absl::Status s) {
                                  long_status = s;
                                  decided.push_back(30);
                                })
                  .ok());
  // The 30 s extension has run on the fast masters once C keeps the key
  // that long (A and B got it in the same loop turn).
  auto c = cluster_->Client(2);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(loop.RunUntil([&] {
    absl::StatusOr<int64_t> pttl = (*c)->Pttl(kKey);
    return pttl.ok() && *pttl > 20000;
  }));
  loop.RunFor(absl::Milliseconds(20));
  set_key(0, std::string(lock.token()));
  set_key(1, std::string(lock.token()));
  const absl::Status sent = (*engine)->ExtendAsync(
      lock, absl::Seconds(2), [&](absl::Status s) {
        short_status = s;
        decided.push_back(2);
      });
  ASSERT_TRUE(sent.ok()) << sent;
  ASSERT_TRUE(loop.RunUntil([&] { return decided.size() == 2; }));
  ASSERT_TRUE(long_status.ok()) << long_status;
  ASSERT_TRUE(short_status.ok()) << short_status;
  ASSERT_EQ(decided, (std::vector<int>{2, 30})) << "the scene needs the 30 s "
                                                   "extension decided last";
  // Every master applied 2 s last.
  int short_ttl = 0;
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    absl::StatusOr<int64_t> pttl = (*client)->Pttl(kKey);
    ASSERT_TRUE(pttl.ok()) << pttl.status();
    short_ttl += *pttl <= 2000 ? 1 : 0;
  }
  ASSERT_GE(short_ttl, 3);
  EXPECT_LE(lock.remaining(), absl::Seconds(2))
      << "the lock reports validity a quorum of keys does not have";
}

TEST_F(LifetimeTest, KeepAliveRejectsInconsistentOptions) {
  LoopRunner loop;
  absl::StatusOr<AsyncHolder> holder = HoldAsync(loop, absl::Seconds(1));
  ASSERT_TRUE(holder.ok()) << holder.status();
  HoldOptions slow;
  slow.extend_every = absl::Seconds(1);  // Not shorter than ttl - margin.
  EXPECT_EQ(
      holder->engine->KeepAlive(holder->lock, absl::Seconds(1), std::move(slow))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      holder->engine->KeepAlive(Lock(), absl::Seconds(1), {}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace redlock
