// Copyright 2026 The redlock Authors.
//
// The clock validity is measured on (MonotonicClock = BootClock, over
// CLOCK_BOOTTIME) and a suspension of the client's machine: the time the
// machine sleeps counts against a lock, as it does on the masters, whose
// clocks run on. A suspension is simulated through the clock seam
// (SimulateSuspensionForTesting: CLOCK_BOOTTIME readings jump ahead, the
// steady clock and libevent's CLOCK_MONOTONIC timers do not) together with a
// jump of the masters' wall clocks (SkewedClock), which is what expires their
// keys. Code that measured on std::chrono::steady_clock would not see it.
//
// Each test runs in a process of its own under ctest; run by hand, the
// simulated suspensions add up, which none of the tests minds.

#include "src/algorithm/clock.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "redlock/redlock.h"
#include "src/transport/libevent_runtime.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/skewed_clock.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::internal::SimulateSuspensionForTesting;
using ::redlock::internal::ToDuration;
using ::redlock::testing::FaultProxy;
using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::SkewedClock;
using ::redlock::testing::TestOptions;

constexpr char kJob[] = "recalc-ratings";
constexpr char kKey[] = "redlock:recalc-ratings";

static_assert(std::is_same_v<MonotonicClock::duration,
                             std::chrono::steady_clock::duration>,
              "durations on MonotonicClock mix with steady_clock's");
static_assert(MonotonicClock::is_steady);

// What this process has simulated so far (tests run in any order by hand).
absl::Duration simulated = absl::ZeroDuration();

void SimulateSuspension(absl::Duration d) {
  SimulateSuspensionForTesting(d);
  simulated += d;
}

MonotonicTime RawBoottime() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return MonotonicTime(std::chrono::seconds(ts.tv_sec) +
                       std::chrono::nanoseconds(ts.tv_nsec));
}

// On a machine never suspended since boot CLOCK_BOOTTIME and CLOCK_MONOTONIC
// read alike, so this cannot tell them apart there; the suspension tests
// below can.
TEST(BootClockTest, ReadsClockBoottime) {
  const MonotonicTime before = RawBoottime();
  const MonotonicTime reading = MonotonicClock::now();
  const MonotonicTime after = RawBoottime();
  EXPECT_GE(reading, before + internal::ToChrono(simulated));
  EXPECT_LE(reading, after + internal::ToChrono(simulated));
}

TEST(BootClockTest, NeverGoesBackAndAdvancesWithTheSteadyClock) {
  MonotonicTime last = MonotonicClock::now();
  for (int i = 0; i < 100000; ++i) {
    const MonotonicTime now = MonotonicClock::now();
    ASSERT_GE(now, last) << "reading " << i << " went back";
    last = now;
  }
  // Boot time brackets steady time: it gains at least as much (it is
  // CLOCK_MONOTONIC plus the time suspended), and, on a machine that is not
  // suspended meanwhile, not much more.
  const MonotonicTime boot_before = MonotonicClock::now();
  const auto steady_before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto steady_after = std::chrono::steady_clock::now();
  const MonotonicTime boot_after = MonotonicClock::now();
  const absl::Duration boot = ToDuration(boot_after - boot_before);
  const absl::Duration steady = absl::FromChrono(steady_after - steady_before);
  EXPECT_GE(steady, absl::Milliseconds(50));
  EXPECT_GE(boot, steady);
  EXPECT_LT(boot, steady + absl::Seconds(5));
}

TEST(BootClockTest, SimulatedSuspensionMovesItButNotTheSteadyClock) {
  const MonotonicTime boot_before = MonotonicClock::now();
  const auto steady_before = std::chrono::steady_clock::now();
  SimulateSuspension(absl::Seconds(30));
  const absl::Duration boot = ToDuration(MonotonicClock::now() - boot_before);
  const absl::Duration steady =
      absl::FromChrono(std::chrono::steady_clock::now() - steady_before);
  EXPECT_GE(boot, absl::Seconds(30));
  EXPECT_LT(steady, absl::Seconds(5));
  // The runtime and the locks' clock read the same clock.
  EXPECT_GE(internal::Clock::Real()->Now(),
            boot_before + std::chrono::seconds(30));
  // The hook never moves the clock back.
  const MonotonicTime now = MonotonicClock::now();
  SimulateSuspensionForTesting(absl::Seconds(-10));
  EXPECT_GE(MonotonicClock::now(), now);
}

// libevent's timers run on CLOCK_MONOTONIC, which a suspension stops: a timer
// that fell due during one must still run soon after the resume, not after
// the rest of its delay.
TEST(LibeventTimerTest, ATimerThatFellDueDuringASuspensionRunsSoonAfterIt) {
  LoopRunner loop;
  internal::LibeventRuntime runtime(loop.base());
  bool fired = false;
  std::unique_ptr<internal::Timer> timer =
      runtime.NewTimer([&] { fired = true; });
  timer->Arm(absl::Seconds(60));
  loop.RunFor(absl::Milliseconds(50));
  ASSERT_FALSE(fired);
  SimulateSuspension(absl::Seconds(61));
  // Due on the boot clock now; the sleep in progress ends within a second.
  EXPECT_TRUE(loop.RunUntil([&] { return fired; }, absl::Seconds(10)));
}

TEST(LibeventTimerTest, ATimerNeverRunsBeforeItsDelayOnTheBootClock) {
  LoopRunner loop;
  internal::LibeventRuntime runtime(loop.base());
  std::optional<MonotonicTime> fired_at;
  std::unique_ptr<internal::Timer> timer =
      runtime.NewTimer([&] { fired_at = runtime.Now(); });
  // Longer than one slice, so it is re-armed at least once on the way.
  const MonotonicTime armed_at = runtime.Now();
  timer->Arm(absl::Milliseconds(1300));
  ASSERT_TRUE(loop.RunUntil([&] { return fired_at.has_value(); }));
  EXPECT_GE(ToDuration(*fired_at - armed_at), absl::Milliseconds(1300));
}

// Five masters whose wall clocks a SkewedClock steers, so a simulated
// suspension of this process can let the masters' time run on as well.
class SuspensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs masters whose clocks it can move";
    }
    const char* tmp = getenv("TMPDIR");
    dir_ = std::string(tmp != nullptr ? tmp : "/tmp") +
           "/redlock-suspension-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    auto clock = SkewedClock::Create(dir_ + "/clock");
    ASSERT_TRUE(clock.ok()) << clock.status();
    masters_clock_ = *std::move(clock);
    RedisServer::Config config;
    config.env = masters_clock_->ServerEnv();
    auto cluster = RedisCluster::Start(5, config);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  void TearDown() override {
    cluster_.reset();
    masters_clock_.reset();
    if (!dir_.empty()) rmdir(dir_.c_str());
  }

  // This machine sleeps for `d`: its boot clock jumps, its steady clock does
  // not, and the masters' clocks run on by `d`.
  void Suspend(absl::Duration d) {
    SimulateSuspension(d);
    masters_clock_->Jump(d);
  }

  // How many masters hold kKey (Redis expires a key when it is read).
  int Holders() {
    int n = 0;
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      if (!client.ok()) continue;
      auto value = (*client)->Get(kKey);
      n += value.ok() && value->has_value();
    }
    return n;
  }

  std::string dir_;
  std::unique_ptr<SkewedClock> masters_clock_;
  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(SuspensionTest, RemainingAfterAResumeCountsTheSuspension) {
  auto client = Redlock::Create(TestOptions(cluster_->Uris()));
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Lock> lock = (*client)->TryAcquire(kJob, absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  const absl::Duration before = lock->remaining();
  ASSERT_GT(before, absl::Seconds(5));

  Suspend(absl::Seconds(4));
  const absl::Duration after = lock->remaining();
  EXPECT_LE(after, before - absl::Seconds(4));
  EXPECT_TRUE(lock->valid());
  EXPECT_EQ(Holders(), 5);

  // Asleep past the TTL: the masters have let the key go, and the lock says
  // so.
  Suspend(absl::Seconds(10));
  EXPECT_EQ(lock->remaining(), absl::ZeroDuration());
  EXPECT_FALSE(lock->valid());
  // A server may judge expiry by a time it read up to one event-loop turn
  // earlier (Redis caches it): ask again for a moment.
  int holders = Holders();
  for (int i = 0; i < 40 && holders != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    holders = Holders();
  }
  EXPECT_EQ(holders, 0);
}

// The keep-alive's timers were set before the suspension on libevent's
// CLOCK_MONOTONIC; its next decision comes soon after the resume, not after
// the rest of the 10s extension interval.
TEST_F(SuspensionTest, KeepAliveDeclaresTheLockLostSoonAfterALongSuspension) {
  LoopRunner loop;
  Options options = TestOptions(cluster_->Uris());
  auto engine = AsyncRedlock::Create(loop.base(), options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::optional<absl::StatusOr<Lock>> acquired;
  ASSERT_TRUE((*engine)
                  ->AcquireAsync(
                      kJob, absl::Seconds(30), absl::ZeroDuration(),
                      [&](absl::StatusOr<Lock> l) { acquired = std::move(l); })
                  .ok());
  ASSERT_TRUE(loop.RunUntil([&] { return acquired.has_value(); }));
  ASSERT_TRUE(acquired->ok()) << acquired->status();
  const Lock lock = **acquired;
  std::optional<absl::Status> lost;
  HoldOptions hold;  // Extend every 10s, safety margin 3s.
  hold.on_lost = [&](const absl::Status& why) { lost = why; };
  auto keep_alive =
      (*engine)->KeepAlive(lock, absl::Seconds(30), std::move(hold));
  ASSERT_TRUE(keep_alive.ok()) << keep_alive.status();
  loop.RunFor(absl::Milliseconds(100));
  ASSERT_FALSE(lost.has_value());

  Suspend(absl::Seconds(60));
  // At once, before any timer ran: nothing is left.
  EXPECT_EQ(lock.remaining(), absl::ZeroDuration());
  EXPECT_FALSE(lock.valid());
  // And the keep-alive says so within a few seconds of the resume.
  ASSERT_TRUE(loop.RunUntil([&] { return lost.has_value(); }, absl::Seconds(6)))
      << "the keep-alive slept on through the rest of its interval";
  EXPECT_FALSE(lost->ok());
  EXPECT_TRUE(lock.lost());
  EXPECT_EQ(Holders(), 0);
}

// An extension whose answers come back after the client slept through the
// TTL: the masters applied it before, but validity is measured from the
// extension's start on the boot clock, so there is none left.
TEST_F(SuspensionTest, ExtensionAnsweredAfterASuspensionLongerThanTheTtlFails) {
  std::vector<std::unique_ptr<FaultProxy>> proxies;
  std::vector<std::string> uris;
  for (int i = 0; i < cluster_->size(); ++i) {
    FaultProxy::Config config;
    config.upstream_port = cluster_->server(i).port();
    auto proxy = FaultProxy::Start(config);
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    uris.push_back((*proxy)->Uri());
    proxies.push_back(*std::move(proxy));
  }
  LoopRunner loop;
  Options options = TestOptions(uris);
  options.request_timeout = absl::Seconds(3);
  auto engine = AsyncRedlock::Create(loop.base(), options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::optional<absl::StatusOr<Lock>> acquired;
  ASSERT_TRUE((*engine)
                  ->AcquireAsync(
                      kJob, absl::Seconds(5), absl::ZeroDuration(),
                      [&](absl::StatusOr<Lock> l) { acquired = std::move(l); })
                  .ok());
  ASSERT_TRUE(loop.RunUntil([&] { return acquired.has_value(); }));
  ASSERT_TRUE(acquired->ok()) << acquired->status();
  const Lock lock = **acquired;

  for (auto& proxy : proxies) {
    proxy->SetLatency(absl::ZeroDuration(), absl::Milliseconds(400));
  }
  std::optional<absl::Status> extended;
  ASSERT_TRUE((*engine)
                  ->ExtendAsync(lock, absl::Seconds(5),
                                [&](absl::Status s) { extended = s; })
                  .ok());
  // The extension is sent and its answers are held in the proxies.
  loop.RunFor(absl::Milliseconds(150));
  ASSERT_FALSE(extended.has_value());
  Suspend(absl::Seconds(6));
  ASSERT_TRUE(loop.RunUntil([&] { return extended.has_value(); }));
  // No validity left — or, as often, the grants were refused first: each
  // master's membership record was read more than 2s before its answer
  // came (the boot clock counts the suspension).
  EXPECT_TRUE(extended->code() == absl::StatusCode::kDeadlineExceeded ||
              absl::StrContains(extended->message(),
                                "membership: its record was last read"))
      << *extended;
  EXPECT_EQ(lock.remaining(), absl::ZeroDuration());
  EXPECT_FALSE(lock.valid());
}

}  // namespace
}  // namespace redlock
