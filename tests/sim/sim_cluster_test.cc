// Copyright 2026 The redlock Authors.
//
// SimLoop, SimRuntime and SimCluster on their own: event order, timers and
// client clocks, and the network and fault semantics the simulation relies
// on to be honest (see sim_cluster.h), observed through a recording
// ConnectionObserver.

#include "tests/sim/sim_cluster.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/engine/wakeups.h"
#include "src/transport/runtime.h"
#include "tests/sim/sim_loop.h"
#include "tests/sim/sim_redis.h"

namespace redlock::sim {
namespace {

using internal::Connection;
using internal::ConnectionMode;
using internal::RedisReply;
using internal::Timer;
using Argv = std::vector<std::string>;

std::string Describe(const RedisReply& reply);

std::string Describe(const RedisReply& reply) {
  switch (reply.type) {
    case RedisReply::Type::kStatus:
      return absl::StrCat("+", reply.str);
    case RedisReply::Type::kError:
      return absl::StrCat("-", reply.str);
    case RedisReply::Type::kInteger:
      return absl::StrCat(":", reply.integer);
    case RedisReply::Type::kString:
      return absl::StrCat("$", reply.str);
    case RedisReply::Type::kNil:
      return "nil";
    case RedisReply::Type::kArray:
      return absl::StrCat(
          "*", reply.elements.size(), "[",
          absl::StrJoin(reply.elements, " ",
                        [](std::string* out, const RedisReply& element) {
                          out->append(Describe(element));
                        }),
          "]");
  }
  return "?";
}

// Records every observer call with its simulated time. Optional hooks run
// after the call is recorded.
class Recorder : public internal::ConnectionObserver {
 public:
  struct Event {
    absl::Time at;
    std::string what;
  };

  Recorder(SimLoop* loop, std::string name = "",
           std::vector<std::string>* trace = nullptr)
      : loop_(loop), name_(std::move(name)), trace_(trace) {}

  void OnConnect(absl::Status status) override {
    Record(status.ok() ? "connect OK"
                       : absl::StrCat("connect ", status.ToString()));
    if (on_connect) on_connect(status);
  }
  void OnReply(RedisReply reply) override {
    Record(absl::StrCat("reply ", Describe(reply)));
    if (on_reply) on_reply(reply);
  }
  // A push-mode connection's messages, recorded as replies are.
  void OnPush(RedisReply reply) override { OnReply(std::move(reply)); }
  void OnLost(absl::Status status) override {
    Record(absl::StrCat("lost ", status.ToString()));
    if (on_lost) on_lost(status);
  }

  std::vector<std::string> what() const {
    std::vector<std::string> out;
    for (const Event& e : events) out.push_back(e.what);
    return out;
  }

  std::vector<Event> events;
  std::function<void(const absl::Status&)> on_connect;
  std::function<void(const RedisReply&)> on_reply;
  std::function<void(const absl::Status&)> on_lost;

 private:
  void Record(std::string what) {
    if (trace_ != nullptr) {
      trace_->push_back(
          absl::StrCat(absl::ToInt64Nanoseconds(loop_->now() - loop_->epoch()),
                       " ", name_, " ", what));
    }
    events.push_back({loop_->now(), std::move(what)});
  }

  SimLoop* const loop_;
  const std::string name_;
  std::vector<std::string>* const trace_;
};

const char kRefused[] =
    "connect UNAVAILABLE: connect failed: Connection refused";
const char kReset[] =
    "lost UNAVAILABLE: connection lost: Connection reset by peer";

// ---------------------------------------------------------------------------
// SimLoop

TEST(SimLoopTest, EventsRunInTimeOrderThenInSchedulingOrder) {
  SimLoop loop;
  const absl::Time t0 = loop.now();
  std::vector<std::string> order;
  loop.At(t0 + absl::Milliseconds(2), [&] { order.push_back("c"); });
  loop.At(t0 + absl::Milliseconds(1), [&] { order.push_back("a"); });
  loop.At(t0 + absl::Milliseconds(1), [&] { order.push_back("b"); });
  loop.At(t0 + absl::Milliseconds(2), [&] { order.push_back("d"); });
  EXPECT_TRUE(loop.RunUntilIdle());
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(loop.now(), t0 + absl::Milliseconds(2));
  EXPECT_EQ(loop.events_run(), 4);
}

TEST(SimLoopTest, EventScheduledForNowOrThePastRunsAfterWhatIsAlreadyDue) {
  SimLoop loop;
  std::vector<std::string> order;
  loop.After(absl::Milliseconds(1), [&] {
    order.push_back("first");
    loop.At(loop.now() - absl::Seconds(5), [&] { order.push_back("past"); });
    loop.After(absl::ZeroDuration(), [&] { order.push_back("now"); });
  });
  loop.After(absl::Milliseconds(1), [&] { order.push_back("second"); });
  loop.RunUntilIdle();
  EXPECT_EQ(order,
            (std::vector<std::string>{"first", "second", "past", "now"}));
  EXPECT_EQ(loop.now(), loop.epoch() + absl::Milliseconds(1));
}

TEST(SimLoopTest, AtNeverRunsTheCallbackItself) {
  SimLoop loop;
  bool ran = false;
  loop.At(loop.now(), [&] { ran = true; });
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.pending(), 1);
  EXPECT_TRUE(loop.RunNext());
  EXPECT_TRUE(ran);
  EXPECT_FALSE(loop.RunNext());
}

TEST(SimLoopTest, SubNanosecondTimesRoundUpNeverEarly) {
  SimLoop loop;
  absl::Time ran_at;
  const absl::Time when = loop.now() + absl::Nanoseconds(10) / 3;
  loop.At(when, [&] { ran_at = loop.now(); });
  loop.RunUntilIdle();
  EXPECT_GE(ran_at, when);
  EXPECT_EQ(ran_at, loop.epoch() + absl::Nanoseconds(4));
}

TEST(SimLoopTest, CancelledEventNeverRunsAndReleasesItsCallback) {
  SimLoop loop;
  auto captured = std::make_shared<int>(0);
  bool ran = false;
  SimEventId id =
      loop.After(absl::Seconds(1), [&ran, captured] { ran = true; });
  EXPECT_EQ(captured.use_count(), 2);
  EXPECT_TRUE(loop.Cancel(id));
  EXPECT_EQ(captured.use_count(), 1);
  EXPECT_FALSE(loop.Cancel(id));
  EXPECT_EQ(loop.pending(), 0);
  EXPECT_TRUE(loop.RunUntilIdle());
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.events_run(), 0);
}

TEST(SimLoopTest, CancelOfAnEventThatRanDoesNotCancelItsSlotsNextUser) {
  SimLoop loop;
  SimEventId first = loop.After(absl::Milliseconds(1), [] {});
  loop.RunUntilIdle();
  bool ran = false;
  loop.After(absl::Milliseconds(1), [&] { ran = true; });  // Reuses the slot.
  EXPECT_FALSE(loop.Cancel(first));
  EXPECT_FALSE(loop.Cancel(SimEventId{}));
  loop.RunUntilIdle();
  EXPECT_TRUE(ran);
}

TEST(SimLoopTest, RunUntilRunsWhatIsDueAndAdvancesTime) {
  SimLoop loop;
  int ran = 0;
  loop.After(absl::Milliseconds(1), [&] { ++ran; });
  loop.After(absl::Milliseconds(5), [&] { ++ran; });
  const SimEventId late = loop.After(absl::Milliseconds(3), [&] { ++ran; });
  loop.Cancel(late);
  loop.RunUntil(loop.epoch() + absl::Milliseconds(4));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(loop.now(), loop.epoch() + absl::Milliseconds(4));
  EXPECT_EQ(loop.next_event_time(), loop.epoch() + absl::Milliseconds(5));
  loop.RunUntil(loop.epoch() + absl::Milliseconds(5));
  EXPECT_EQ(ran, 2);
}

TEST(SimLoopTest, RunUntilIdleStopsAfterMaxEvents) {
  SimLoop loop;
  std::function<void()> tick = [&] { loop.After(absl::Seconds(1), tick); };
  loop.After(absl::Seconds(1), tick);
  EXPECT_FALSE(loop.RunUntilIdle(100));
  EXPECT_EQ(loop.events_run(), 100);
  EXPECT_EQ(loop.now(), loop.epoch() + absl::Seconds(100));
}

// Many events at random times, some cancelled: the ones that run do so in
// (time, scheduling) order. Also reports the rate (see the property).
TEST(SimLoopTest, ManyEventsRunInOrderAndFast) {
  SimLoop loop;
  std::mt19937_64 rng(3);
  constexpr int kEvents = 1'000'000;
  int64_t last_ns = -1;
  uint64_t last_seq = 0;
  bool in_order = true;
  int64_t ran = 0;
  std::vector<SimEventId> ids;
  ids.reserve(kEvents);
  for (uint64_t seq = 0; seq < kEvents; ++seq) {
    const int64_t ns = static_cast<int64_t>(rng() % 1'000'000);
    ids.push_back(loop.At(loop.epoch() + absl::Nanoseconds(ns), [&, ns, seq] {
      if (ns < last_ns || (ns == last_ns && seq < last_seq)) in_order = false;
      last_ns = ns;
      last_seq = seq;
      ++ran;
    }));
  }
  int cancelled = 0;
  for (int i = 0; i < kEvents; i += 10) cancelled += loop.Cancel(ids[i]);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(loop.RunUntilIdle());
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(in_order);
  EXPECT_EQ(cancelled, kEvents / 10);
  EXPECT_EQ(ran, kEvents - cancelled);
  EXPECT_EQ(loop.events_run(), ran);
  const double rate = static_cast<double>(ran) / absl::ToDoubleSeconds(took);
  ::testing::Test::RecordProperty("events_per_second",
                                  static_cast<int64_t>(rate));
  std::printf("SimLoop: %lld events in %s (%.2fM/s, heap of %d)\n",
              static_cast<long long>(ran), absl::FormatDuration(took).c_str(),
              rate / 1e6, kEvents);
}

// The steady state of a simulation: a small heap (a thousand pending
// events), each event scheduling the next. Reports the rate.
TEST(SimLoopTest, HoldModelKeepsTheHeapSizeAndTime) {
  SimLoop loop;
  std::mt19937_64 rng(4);
  constexpr int kPending = 1000;
  constexpr int64_t kEvents = 2'000'000;
  int64_t ran = 0;
  std::function<void()> hold = [&] {
    if (++ran + loop.pending() < kEvents) {
      loop.After(absl::Nanoseconds(1 + rng() % 1'000'000), hold);
    }
  };
  for (int i = 0; i < kPending; ++i) loop.After(absl::Nanoseconds(i), hold);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(loop.RunUntilIdle());
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(ran, kEvents);
  // Mean delay 0.5ms, a thousand in parallel: ~1s of simulated time.
  EXPECT_GT(loop.now() - loop.epoch(), absl::Milliseconds(900));
  EXPECT_LT(loop.now() - loop.epoch(), absl::Milliseconds(1100));
  const double rate = static_cast<double>(ran) / absl::ToDoubleSeconds(took);
  ::testing::Test::RecordProperty("events_per_second",
                                  static_cast<int64_t>(rate));
  std::printf("SimLoop hold model: %lld events in %s (%.2fM/s, heap of %d)\n",
              static_cast<long long>(ran), absl::FormatDuration(took).c_str(),
              rate / 1e6, kPending);
}

// ---------------------------------------------------------------------------
// SimRuntime

class SimRuntimeTest : public ::testing::Test {
 protected:
  SimLoop loop_;
  SimCluster cluster_{&loop_, SimCluster::Config{}, 1};
  SimRuntime client_{&loop_, &cluster_, 1};
};

TEST_F(SimRuntimeTest, NowIsNeverTheZeroTimeAndFollowsTrueTime) {
  const MonotonicTime start = client_.Now();
  EXPECT_NE(start, MonotonicTime());
  EXPECT_GT(start.time_since_epoch(), std::chrono::hours(24));
  loop_.RunUntil(loop_.now() + absl::Milliseconds(250));
  EXPECT_EQ(client_.Now() - start, std::chrono::milliseconds(250));
}

TEST_F(SimRuntimeTest, TimerRunsOnTheLoopNeverInsideArm) {
  absl::Time fired_at = absl::InfinitePast();
  std::unique_ptr<Timer> timer =
      client_.NewTimer([&] { fired_at = loop_.now(); });
  EXPECT_FALSE(timer->armed());
  timer->Arm(absl::Milliseconds(10));
  timer->Arm(absl::ZeroDuration());
  EXPECT_EQ(fired_at, absl::InfinitePast());
  EXPECT_TRUE(timer->armed());
  loop_.RunUntilIdle();
  EXPECT_EQ(fired_at, loop_.epoch());  // Re-armed for 0: not at 10ms.
  EXPECT_FALSE(timer->armed());
}

TEST_F(SimRuntimeTest, ArmZeroRunsAfterEventsAlreadyDueNow) {
  std::vector<std::string> order;
  loop_.At(loop_.now(), [&] { order.push_back("due"); });
  std::unique_ptr<Timer> timer =
      client_.NewTimer([&] { order.push_back("timer"); });
  timer->Arm(absl::Milliseconds(-3));
  loop_.At(loop_.now(), [&] { order.push_back("later"); });
  loop_.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"due", "timer", "later"}));
  EXPECT_EQ(loop_.now(), loop_.epoch());
}

TEST_F(SimRuntimeTest, RearmMovesTheTimerAndItRunsOnce) {
  std::vector<absl::Time> fired;
  std::unique_ptr<Timer> timer =
      client_.NewTimer([&] { fired.push_back(loop_.now()); });
  timer->Arm(absl::Milliseconds(10));
  loop_.RunUntil(loop_.epoch() + absl::Milliseconds(5));
  timer->Arm(absl::Milliseconds(10));
  loop_.RunUntilIdle();
  EXPECT_EQ(fired,
            std::vector<absl::Time>{loop_.epoch() + absl::Milliseconds(15)});
}

TEST_F(SimRuntimeTest, CancelledOrDestroyedTimerNeverRuns) {
  int fired = 0;
  std::unique_ptr<Timer> cancelled = client_.NewTimer([&] { ++fired; });
  std::unique_ptr<Timer> destroyed = client_.NewTimer([&] { ++fired; });
  cancelled->Arm(absl::Milliseconds(1));
  destroyed->Arm(absl::Milliseconds(1));
  cancelled->Cancel();
  EXPECT_FALSE(cancelled->armed());
  destroyed.reset();
  loop_.RunUntilIdle();
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(loop_.events_run(), 0);
}

TEST_F(SimRuntimeTest, TimerMayDestroyOrRearmItselfInItsCallback) {
  std::unique_ptr<Timer> self_destroying;
  self_destroying = client_.NewTimer([&] { self_destroying.reset(); });
  self_destroying->Arm(absl::Milliseconds(1));
  int ticks = 0;
  std::unique_ptr<Timer> ticker;
  ticker = client_.NewTimer([&] {
    if (++ticks < 3) ticker->Arm(absl::Milliseconds(1));
  });
  ticker->Arm(absl::Milliseconds(1));
  loop_.RunUntilIdle();
  EXPECT_EQ(self_destroying, nullptr);
  EXPECT_EQ(ticks, 3);
  EXPECT_EQ(loop_.now(), loop_.epoch() + absl::Milliseconds(3));
}

TEST_F(SimRuntimeTest, FastClientClockFiresTimersSoonerInTrueTime) {
  client_.SetClockRate(2.0);
  const MonotonicTime start = client_.Now();
  absl::Time fired_at;
  MonotonicTime client_fired_at;
  std::unique_ptr<Timer> timer = client_.NewTimer([&] {
    fired_at = loop_.now();
    client_fired_at = client_.Now();
  });
  timer->Arm(absl::Milliseconds(10));
  loop_.RunUntilIdle();
  EXPECT_EQ(fired_at, loop_.epoch() + absl::Milliseconds(5));
  EXPECT_EQ(client_fired_at - start, std::chrono::milliseconds(10));
}

TEST_F(SimRuntimeTest, ClockRateChangeIsContinuousAndMovesArmedTimers) {
  const MonotonicTime armed_at = client_.Now();
  absl::Time fired_at;
  MonotonicTime client_fired_at;
  std::unique_ptr<Timer> timer = client_.NewTimer([&] {
    fired_at = loop_.now();
    client_fired_at = client_.Now();
  });
  timer->Arm(absl::Milliseconds(100));
  loop_.RunUntil(loop_.epoch() + absl::Milliseconds(40));
  const MonotonicTime before = client_.Now();
  client_.SetClockRate(0.5);
  EXPECT_EQ(client_.Now(), before);  // No jump.
  // 60ms left on the client's clock at half speed: due at 160ms true time.
  loop_.RunUntil(loop_.epoch() + absl::Milliseconds(60));  // Client: +10ms.
  EXPECT_EQ(client_.Now() - before, std::chrono::milliseconds(10));
  EXPECT_TRUE(timer->armed());
  client_.SetClockRate(1.0);  // 50ms left: 50ms of true time.
  loop_.RunUntilIdle();
  EXPECT_EQ(fired_at, loop_.epoch() + absl::Milliseconds(110));
  EXPECT_EQ(client_fired_at - armed_at, std::chrono::milliseconds(100));
}

TEST_F(SimRuntimeTest, TimerNeverFiresBeforeItsDeadlineOnTheClientClock) {
  for (double rate : {0.3, 1.0 / 3, 0.999, 1.0, 1.01, 1.7, 3.0}) {
    SCOPED_TRACE(rate);
    client_.SetClockRate(rate);
    for (int64_t ns : {1, 2, 3, 7, 999, 1'000'001, 33'333'333}) {
      const MonotonicTime armed_at = client_.Now();
      MonotonicTime fired_at;
      std::unique_ptr<Timer> timer =
          client_.NewTimer([&] { fired_at = client_.Now(); });
      timer->Arm(absl::Nanoseconds(ns));
      loop_.RunUntilIdle();
      EXPECT_GE(fired_at - armed_at, std::chrono::nanoseconds(ns)) << ns;
      // And not much later: within one true nanosecond's worth.
      EXPECT_LE(fired_at - armed_at,
                std::chrono::nanoseconds(ns + static_cast<int64_t>(rate) + 1))
          << ns;
    }
  }
}

TEST_F(SimRuntimeTest, TokensAre32HexDigitsUniqueAndOwned) {
  SimRuntime other(&loop_, &cluster_, 1);  // Same seed, another client.
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    for (SimRuntime* runtime : {&client_, &other}) {
      absl::StatusOr<std::string> token = runtime->NewToken();
      ASSERT_TRUE(token.ok());
      ASSERT_EQ(token->size(), 32u);
      EXPECT_EQ(token->find_first_not_of("0123456789abcdef"),
                std::string::npos);
      EXPECT_TRUE(seen.insert(*token).second) << *token;
      EXPECT_EQ(cluster_.TokenOwner(*token), runtime->client_id());
    }
  }
  EXPECT_NE(client_.client_id(), other.client_id());
  EXPECT_NE(client_.RandomBits(), other.RandomBits());
  EXPECT_EQ(cluster_.TokenOwner("nope"), std::nullopt);
}

TEST(SimRuntimeSeedTest, SameSeedSameDrawsOtherSeedOtherDraws) {
  auto draws = [](uint64_t seed) {
    SimLoop loop;
    SimCluster cluster(&loop, SimCluster::Config{}, seed);
    SimRuntime runtime(&loop, &cluster, seed);
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) {
      out.push_back(absl::StrCat(runtime.RandomBits()));
      out.push_back(*runtime.NewToken());
    }
    return out;
  };
  EXPECT_EQ(draws(5), draws(5));
  EXPECT_NE(draws(5), draws(6));
}

TEST_F(SimRuntimeTest, LockClockIsTheClientClock) {
  client_.SetClockRate(1.5);
  loop_.RunUntil(loop_.now() + absl::Seconds(2));
  EXPECT_EQ(client_.LockClock()->Now(), client_.Now());
}

// ---------------------------------------------------------------------------
// SimCluster

class SimClusterTest : public ::testing::Test {
 protected:
  explicit SimClusterTest(SimCluster::Config config = SimCluster::Config{},
                          uint64_t seed = 1)
      : cluster_(&loop_, std::move(config), seed),
        client_(&loop_, &cluster_, seed) {}

  std::unique_ptr<Connection> Connect(
      int master, Recorder* recorder,
      ConnectionMode mode = ConnectionMode::kReplies) {
    absl::StatusOr<std::unique_ptr<Connection>> conn =
        client_.Connect(cluster_.address(master), recorder, mode);
    EXPECT_TRUE(conn.ok());
    return conn.ok() ? *std::move(conn) : nullptr;
  }

  // Connected, all events so far run.
  std::unique_ptr<Connection> Connected(
      int master, Recorder* recorder,
      ConnectionMode mode = ConnectionMode::kReplies) {
    std::unique_ptr<Connection> conn = Connect(master, recorder, mode);
    loop_.RunUntilIdle();
    EXPECT_EQ(recorder->what(), std::vector<std::string>{"connect OK"});
    return conn;
  }

  std::optional<std::string> Value(int master, const std::string& key) {
    return cluster_.redis(master).Value(loop_.now(), 0, key);
  }

  SimLoop loop_;
  SimCluster cluster_;
  SimRuntime client_;
};

TEST_F(SimClusterTest, MastersListenOnConsecutivePorts) {
  ASSERT_EQ(cluster_.size(), 5);
  EXPECT_EQ(cluster_.master_uris().front(), "redis://127.0.0.1:7001");
  EXPECT_EQ(cluster_.master_uris().back(), "redis://127.0.0.1:7005");
  EXPECT_EQ(cluster_.MasterIndex(cluster_.address(3)), 3);
  MasterAddress elsewhere = cluster_.address(0);
  elsewhere.host = "127.0.0.2";
  EXPECT_EQ(cluster_.MasterIndex(elsewhere), -1);
}

TEST_F(SimClusterTest, ConnectSucceedsAfterARoundTripNeverInsideConnect) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(0, &recorder);
  EXPECT_TRUE(recorder.events.empty());
  loop_.RunUntilIdle();
  ASSERT_EQ(recorder.what(), std::vector<std::string>{"connect OK"});
  const absl::Duration rtt = recorder.events[0].at - loop_.epoch();
  EXPECT_GE(rtt, absl::Microseconds(100));
  EXPECT_LE(rtt, absl::Microseconds(1000));
  EXPECT_EQ(cluster_.connections(0), 1);
}

TEST_F(SimClusterTest, ConnectToACrashedMasterIsRefused) {
  cluster_.Crash(1);
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(1, &recorder);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), std::vector<std::string>{kRefused});
  EXPECT_FALSE(conn->Send({"PING"}));
  EXPECT_EQ(cluster_.faults().connects_refused, 1);
}

TEST_F(SimClusterTest, ConnectToAnUnknownAddressIsRefused) {
  Recorder recorder(&loop_);
  MasterAddress nowhere = cluster_.address(0);
  nowhere.port = 6999;
  absl::StatusOr<std::unique_ptr<Connection>> conn =
      client_.Connect(nowhere, &recorder, ConnectionMode::kReplies);
  ASSERT_TRUE(conn.ok());
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), std::vector<std::string>{kRefused});
}

TEST_F(SimClusterTest, ConnectToAPausedMasterSucceedsAndCommandsWait) {
  cluster_.Pause(0);
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(0, &recorder);
  EXPECT_TRUE(conn->Send({"PING"}));
  loop_.RunUntil(loop_.now() + absl::Seconds(10));
  EXPECT_EQ(recorder.what(), std::vector<std::string>{"connect OK"});
  EXPECT_EQ(cluster_.commands_executed(0), 0);
  cluster_.Resume(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(),
            (std::vector<std::string>{"connect OK", "reply +PONG"}));
  EXPECT_GE(recorder.events[1].at, loop_.epoch() + absl::Seconds(10));
}

TEST_F(SimClusterTest, RefuseFaultFailsNewConnectsButNotExistingOnes) {
  Recorder existing(&loop_);
  std::unique_ptr<Connection> old_conn = Connected(2, &existing);
  cluster_.SetRefuseConnects(2, true);
  Recorder refused(&loop_);
  std::unique_ptr<Connection> new_conn = Connect(2, &refused);
  EXPECT_TRUE(old_conn->Send({"PING", "still"}));
  loop_.RunUntilIdle();
  EXPECT_EQ(refused.what(), std::vector<std::string>{kRefused});
  EXPECT_EQ(existing.what(),
            (std::vector<std::string>{"connect OK", "reply $still"}));
  cluster_.SetRefuseConnects(2, false);
  Recorder later(&loop_);
  std::unique_ptr<Connection> later_conn = Connected(2, &later);
  EXPECT_EQ(cluster_.faults().refuse_periods, 1);
}

TEST_F(SimClusterTest, CommandsSentWhileConnectingRunAfterTheConnect) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(0, &recorder);
  EXPECT_TRUE(conn->Send({"SET", "k", "v"}));
  EXPECT_TRUE(conn->Send({"GET", "k"}));
  EXPECT_TRUE(recorder.events.empty());
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(),
            (std::vector<std::string>{"connect OK", "reply +OK", "reply $v"}));
  // Written only once the client knew it was connected: one more delay.
  EXPECT_GE(recorder.events[1].at - recorder.events[0].at,
            absl::Microseconds(100));
}

TEST_F(SimClusterTest, ClosedWhileConnectingNeverSendsWhatWasBuffered) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(0, &recorder);
  conn->Send({"SET", "k", "v"});
  conn.reset();
  loop_.RunUntilIdle();
  EXPECT_TRUE(recorder.events.empty());
  EXPECT_EQ(cluster_.commands_executed(0), 0);
  EXPECT_EQ(Value(0, "k"), std::nullopt);
}

TEST_F(SimClusterTest, EachConnectionKeepsItsOwnDatabase) {
  Recorder a(&loop_), b(&loop_);
  std::unique_ptr<Connection> conn_a = Connected(0, &a);
  std::unique_ptr<Connection> conn_b = Connected(0, &b);
  conn_a->Send({"SELECT", "3"});
  conn_a->Send({"SET", "k", "in3"});
  loop_.RunUntilIdle();
  conn_b->Send({"GET", "k"});
  conn_a->Send({"GET", "k"});
  loop_.RunUntilIdle();
  EXPECT_EQ(b.what().back(), "reply nil");
  EXPECT_EQ(a.what().back(), "reply $in3");
}

class WideLatencyClusterTest : public SimClusterTest {
 protected:
  static SimCluster::Config Wide() {
    SimCluster::Config config;
    config.min_latency = absl::Microseconds(1);
    config.max_latency = absl::Milliseconds(20);
    return config;
  }
  WideLatencyClusterTest() : SimClusterTest(Wide()) {}
};

// Latency varies per message from 1us to 20ms and a slow link comes and
// goes mid-stream: without the FIFO rule replies would overtake each other.
TEST_F(WideLatencyClusterTest,
       CommandsAndRepliesStayInOrderUnderVariableDelay) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  std::vector<std::string> expected = {"connect OK"};
  for (int i = 0; i < 200; ++i) {
    if (i == 50) cluster_.SetExtraDelay(0, absl::Milliseconds(30));
    if (i == 120) cluster_.SetExtraDelay(0, absl::ZeroDuration());
    // Each SET depends on the previous one having run: NX fails if an
    // earlier DEL has not.
    conn->Send({"SET", "k", absl::StrCat(i), "NX"});
    conn->Send({"DEL", "k"});
    expected.push_back("reply +OK");
    expected.push_back("reply :1");
    loop_.RunUntil(loop_.now() + absl::Microseconds(100));
  }
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), expected);
  for (size_t i = 2; i < recorder.events.size(); ++i) {
    EXPECT_GE(recorder.events[i].at, recorder.events[i - 1].at);
  }
  EXPECT_EQ(cluster_.faults().slow_links, 1);
}

TEST_F(SimClusterTest, SlowLinkDelaysBothDirections) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  cluster_.SetExtraDelay(0, absl::Milliseconds(100));
  const absl::Time sent = loop_.now();
  conn->Send({"PING"});
  loop_.RunUntilIdle();
  ASSERT_EQ(recorder.what().back(), "reply +PONG");
  EXPECT_GE(recorder.events.back().at - sent, absl::Milliseconds(200));
  EXPECT_LE(recorder.events.back().at - sent, absl::Milliseconds(201));
}

TEST_F(SimClusterTest, PausedMasterRunsWaitingCommandsInArrivalOrderOnResume) {
  Recorder a(&loop_), b(&loop_);
  std::unique_ptr<Connection> conn_a = Connected(0, &a);
  std::unique_ptr<Connection> conn_b = Connected(0, &b);
  cluster_.Pause(0);
  // Arrival order: A's SET, B's SET, A's GET (sends 1ms apart; one-way
  // delays are at most 0.5ms).
  conn_a->Send({"SET", "k", "from-a"});
  loop_.RunUntil(loop_.now() + absl::Milliseconds(1));
  conn_b->Send({"SET", "k", "from-b"});
  loop_.RunUntil(loop_.now() + absl::Milliseconds(1));
  conn_a->Send({"GET", "k"});
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  EXPECT_EQ(a.what().size(), 1u);
  EXPECT_EQ(Value(0, "k"), std::nullopt);
  cluster_.Resume(0);
  EXPECT_EQ(Value(0, "k"), "from-b");  // Ran at the moment of SIGCONT.
  loop_.RunUntilIdle();
  EXPECT_EQ(a.what(), (std::vector<std::string>{"connect OK", "reply +OK",
                                                "reply $from-b"}));
  EXPECT_EQ(b.what(), (std::vector<std::string>{"connect OK", "reply +OK"}));
  EXPECT_EQ(cluster_.faults().pauses, 1);
  EXPECT_EQ(cluster_.faults().resumes, 1);
}

TEST_F(SimClusterTest, PausedMasterExpiresKeysByItsClockMeanwhile) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "k", "v", "PX", "100"});
  loop_.RunUntilIdle();
  cluster_.Pause(0);
  conn->Send({"GET", "k"});
  loop_.RunUntil(loop_.now() + absl::Milliseconds(200));
  cluster_.Resume(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what().back(), "reply nil");
}

TEST_F(SimClusterTest, CrashDropsCommandsInFlightAndLosesConnections) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "k", "v"});
  cluster_.Crash(0);  // Before the SET arrives.
  EXPECT_EQ(recorder.what().size(), 1u);
  EXPECT_TRUE(conn->Send({"PING"}));  // The client does not know yet.
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), (std::vector<std::string>{"connect OK", kReset}));
  EXPECT_FALSE(conn->Send({"PING"}));
  EXPECT_EQ(cluster_.commands_executed(0), 0);
  EXPECT_EQ(cluster_.state(0), SimCluster::MasterState::kCrashed);
  EXPECT_EQ(cluster_.faults().crashes, 1);
  EXPECT_EQ(cluster_.faults().connections_lost, 1);
  EXPECT_EQ(cluster_.connections(0), 0);
}

TEST_F(SimClusterTest, CrashOfAPausedMasterDropsWhatWaited) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  cluster_.Pause(0);
  conn->Send({"SET", "k", "v"});
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  cluster_.Crash(0);
  cluster_.Restart(0, /*keep_data=*/true);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), (std::vector<std::string>{"connect OK", kReset}));
  EXPECT_EQ(Value(0, "k"), std::nullopt);
  EXPECT_EQ(cluster_.commands_executed(0), 0);
}

TEST_F(SimClusterTest, RepliesAlreadySentArriveBeforeTheLoss) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "k", "v"});
  // Run until the SET has run on the master, not until its reply arrived.
  while (cluster_.commands_executed(0) == 0) loop_.RunNext();
  cluster_.Crash(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(),
            (std::vector<std::string>{"connect OK", "reply +OK", kReset}));
}

// A cluster whose resets also drop what is in flight to the client.
SimCluster::Config Lossy() {
  SimCluster::Config config;
  config.lose_replies_in_flight = true;
  return config;
}

class LoseRepliesClusterTest : public SimClusterTest {
 protected:
  LoseRepliesClusterTest() : SimClusterTest(Lossy()) {}
};

TEST_F(LoseRepliesClusterTest, RepliesInFlightAreDroppedWithTheConnection) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "k", "v"});
  while (cluster_.commands_executed(0) == 0) loop_.RunNext();
  cluster_.ResetConnections(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), (std::vector<std::string>{"connect OK", kReset}));
  EXPECT_EQ(Value(0, "k"), "v");  // It ran; the client never heard.
}

TEST_F(SimClusterTest, CrashedMasterRefusesUntilRestart) {
  cluster_.Crash(3);
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  Recorder refused(&loop_);
  std::unique_ptr<Connection> conn = Connect(3, &refused);
  loop_.RunUntilIdle();
  EXPECT_EQ(refused.what(), std::vector<std::string>{kRefused});
  cluster_.Restart(3, /*keep_data=*/false);
  Recorder accepted(&loop_);
  conn = Connected(3, &accepted);
  EXPECT_EQ(cluster_.state(3), SimCluster::MasterState::kRunning);
  EXPECT_EQ(cluster_.faults().restarts, 1);
}

TEST_F(SimClusterTest, ConnectionAcceptedJustBeforeACrashConnectsThenIsLost) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connect(0, &recorder);
  // The SYN has arrived (the master has a connection), OnConnect is on its
  // way back.
  while (cluster_.connections(0) == 0) loop_.RunNext();
  cluster_.Crash(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), (std::vector<std::string>{"connect OK", kReset}));
}

TEST_F(SimClusterTest, RestartWithDataKeepsKeysWithoutDataEmptiesThem) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "lock:a", "t1"});
  loop_.RunUntilIdle();
  const std::string run_id = cluster_.redis(0).run_id();
  cluster_.Restart(0, /*keep_data=*/true);  // Crashes it first.
  EXPECT_EQ(Value(0, "lock:a"), "t1");
  EXPECT_NE(cluster_.redis(0).run_id(), run_id);
  EXPECT_EQ(cluster_.faults().crashes, 1);
  cluster_.Restart(0, /*keep_data=*/false);
  EXPECT_EQ(Value(0, "lock:a"), std::nullopt);
  EXPECT_EQ(cluster_.KeyCount(0), 0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(),
            (std::vector<std::string>{"connect OK", "reply +OK", kReset}));
}

TEST_F(SimClusterTest, ResetConnectionsLosesThemButTheMasterKeepsRunning) {
  Recorder a(&loop_), b(&loop_);
  std::unique_ptr<Connection> conn_a = Connected(1, &a);
  std::unique_ptr<Connection> conn_b = Connected(1, &b);
  conn_a->Send({"SET", "k", "v"});
  loop_.RunUntilIdle();
  const std::string run_id = cluster_.redis(1).run_id();
  cluster_.ResetConnections(1);
  loop_.RunUntilIdle();
  EXPECT_EQ(a.what().back(), kReset);
  EXPECT_EQ(b.what().back(), kReset);
  EXPECT_EQ(cluster_.faults().connections_lost, 2);
  Recorder c(&loop_);
  std::unique_ptr<Connection> conn_c = Connected(1, &c);
  conn_c->Send({"GET", "k"});
  loop_.RunUntilIdle();
  EXPECT_EQ(c.what().back(), "reply $v");
  EXPECT_EQ(cluster_.redis(1).run_id(), run_id);
}

TEST_F(SimClusterTest, DestroyedConnectionsSentCommandsStillRunSilently) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SET", "lock:r", "tok"});
  conn->FlushBeforeClose();
  conn.reset();
  loop_.RunUntilIdle();
  EXPECT_EQ(Value(0, "lock:r"), "tok");
  EXPECT_EQ(recorder.what(), std::vector<std::string>{"connect OK"});
  EXPECT_EQ(cluster_.connections(0), 0);
}

TEST_F(SimClusterTest, DestroyedConnectionGetsNoLossEither) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  cluster_.Crash(0);
  conn.reset();  // Before the loss arrives.
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), std::vector<std::string>{"connect OK"});
}

TEST_F(SimClusterTest, ObserverMayDestroyItsConnectionInsideACallback) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  recorder.on_reply = [&](const RedisReply&) { conn.reset(); };
  conn->Send({"PING", "1"});
  conn->Send({"PING", "2"});
  cluster_.Crash(0);
  cluster_.Restart(0, true);
  Recorder second(&loop_);
  std::unique_ptr<Connection> conn2 = Connected(0, &second);
  second.on_lost = [&](const absl::Status&) { conn2.reset(); };
  cluster_.ResetConnections(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder.what(), (std::vector<std::string>{"connect OK", kReset}));
  EXPECT_EQ(second.what(), (std::vector<std::string>{"connect OK", kReset}));
  EXPECT_EQ(conn2, nullptr);

  Recorder third(&loop_);
  std::unique_ptr<Connection> conn3 = Connected(0, &third);
  third.on_reply = [&](const RedisReply&) { conn3.reset(); };
  conn3->Send({"PING", "1"});
  conn3->Send({"PING", "2"});
  loop_.RunUntilIdle();
  EXPECT_EQ(third.what(), (std::vector<std::string>{"connect OK", "reply $1"}));
  EXPECT_EQ(cluster_.commands_executed(0), 2);  // Both still ran.
}

TEST_F(SimClusterTest, KeysByPrefixShowWhatIsLeftAnywhere) {
  Recorder r0(&loop_), r2(&loop_);
  std::unique_ptr<Connection> c0 = Connected(0, &r0);
  std::unique_ptr<Connection> c2 = Connected(2, &r2);
  c0->Send({"SET", "redlock:x", "t", "PX", "1000"});
  c0->Send({"SET", "other", "t"});
  c2->Send({"SET", "redlock:y", "t"});
  loop_.RunUntilIdle();
  EXPECT_EQ(cluster_.Keys(0, "redlock:"),
            std::vector<std::string>{"redlock:x"});
  EXPECT_EQ(cluster_.MastersWithKeys("redlock:"), (std::vector<int>{0, 2}));
  cluster_.Crash(2);  // A crashed master still holds what it had.
  EXPECT_EQ(cluster_.MastersWithKeys("redlock:"), (std::vector<int>{0, 2}));
  cluster_.Restart(2, /*keep_data=*/false);
  loop_.RunUntil(loop_.now() + absl::Seconds(2));  // redlock:x expires.
  EXPECT_TRUE(cluster_.MastersWithKeys("redlock:").empty());
  EXPECT_EQ(cluster_.KeyCount(0), 1);
}

TEST_F(SimClusterTest, MasterFaultsPassThroughToSimRedis) {
  Recorder recorder(&loop_);
  std::unique_ptr<Connection> conn = Connected(0, &recorder);
  conn->Send({"SCRIPT", "LOAD", "return 1"});
  conn->Send({"SET", "v", "1", "PX", "10000"});
  conn->Send({"SET", "p", "1"});
  loop_.RunUntilIdle();
  ASSERT_EQ(recorder.what()[1].substr(0, 7), "reply $");
  const std::string sha = recorder.what()[1].substr(7);
  EXPECT_TRUE(cluster_.redis(0).ScriptCached(sha));
  cluster_.FlushScripts(0);
  EXPECT_FALSE(cluster_.redis(0).ScriptCached(sha));
  cluster_.JumpClock(0, absl::Seconds(5));
  cluster_.SetClockRate(0, 2.0);
  loop_.RunUntil(loop_.now() + absl::Milliseconds(2600));  // Master +5.2s.
  EXPECT_EQ(Value(0, "v"), std::nullopt);
  conn->Send({"SET", "v2", "1", "PX", "10000"});
  loop_.RunUntilIdle();
  cluster_.EvictVolatileKeys(0);
  EXPECT_EQ(cluster_.Keys(0, ""), std::vector<std::string>{"p"});
  const SimCluster::FaultCounts& f = cluster_.faults();
  EXPECT_EQ(f.script_flushes, 1);
  EXPECT_EQ(f.clock_jumps, 1);
  EXPECT_EQ(f.clock_rate_changes, 1);
  EXPECT_EQ(f.evictions, 1);
}

// Commands and replies through the simulated network as fast as the
// masters answer: ten connections, each sending the next command when a
// reply comes. Reports the loop's rate on this traffic.
TEST_F(SimClusterTest, TrafficThroughTheNetworkIsFast) {
  constexpr int kConnections = 10;
  constexpr int kRoundTrips = 30'000;  // Per connection.
  std::vector<std::unique_ptr<Recorder>> recorders;
  std::vector<std::unique_ptr<Connection>> conns;
  std::vector<int> answered(kConnections, 0);
  for (int i = 0; i < kConnections; ++i) {
    recorders.push_back(std::make_unique<Recorder>(&loop_));
    conns.push_back(Connect(i % cluster_.size(), recorders[i].get()));
  }
  for (int i = 0; i < kConnections; ++i) {
    recorders[i]->on_reply = [&, i](const RedisReply& reply) {
      if (++answered[i] < kRoundTrips) {
        conns[i]->Send({"SET", absl::StrCat("k", i), "v", "PX", "1000"});
      }
    };
    conns[i]->Send({"SET", absl::StrCat("k", i), "v", "PX", "1000"});
  }
  const absl::Time start = absl::Now();
  EXPECT_TRUE(loop_.RunUntilIdle());
  const absl::Duration took = absl::Now() - start;
  for (int i = 0; i < kConnections; ++i) EXPECT_EQ(answered[i], kRoundTrips);
  int64_t executed = 0;
  for (int i = 0; i < cluster_.size(); ++i) {
    executed += cluster_.commands_executed(i);
  }
  EXPECT_EQ(executed, int64_t{kConnections} * kRoundTrips);
  const double rate =
      static_cast<double>(loop_.events_run()) / absl::ToDoubleSeconds(took);
  std::printf("SimCluster traffic: %lld events in %s (%.2fM/s)\n",
              static_cast<long long>(loop_.events_run()),
              absl::FormatDuration(took).c_str(), rate / 1e6);
}

// ---------------------------------------------------------------------------
// Pub/sub

class SimPubSubTest : public SimClusterTest {
 protected:
  explicit SimPubSubTest(SimCluster::Config config = SimCluster::Config{})
      : SimClusterTest(std::move(config)) {}

  // A connection to `master` subscribed to `channel`, its reply received.
  std::unique_ptr<Connection> Subscriber(int master, Recorder* recorder,
                                         const std::string& channel) {
    std::unique_ptr<Connection> conn =
        Connected(master, recorder, ConnectionMode::kPushes);
    conn->Send({"SUBSCRIBE", channel});
    loop_.RunUntilIdle();
    EXPECT_EQ(recorder->what().back(),
              absl::StrCat("reply *3[$subscribe $", channel, " :1]"));
    return conn;
  }

  // Sends the engine's release of `key` by `token` (EVAL: no script is
  // loaded) on `conn`.
  static void SendRelease(Connection& conn, const std::string& key,
                          const std::string& token) {
    conn.Send(internal::CommandArgv(internal::ReleaseCommand(key, token),
                                    /*eval=*/true));
  }

  // Runs events until master `master` has run `count` commands; returns
  // when the last one ran.
  absl::Time RunUntilExecuted(int master, int64_t count) {
    while (cluster_.commands_executed(master) < count && loop_.RunNext()) {
    }
    EXPECT_EQ(cluster_.commands_executed(master), count);
    return loop_.now();
  }

  // A lock on master 0 is set and released (its message sent) and right
  // then master 0 resets every connection. What the subscriber saw.
  std::vector<std::string> ReleaseThenReset() {
    Recorder sub(&loop_), holder(&loop_);
    std::unique_ptr<Connection> sub_conn = Subscriber(0, &sub, "lock:r");
    std::unique_ptr<Connection> conn = Connected(0, &holder);
    conn->Send({"SET", "lock:r", "tok", "PX", "10000"});
    SendRelease(*conn, "lock:r", "tok");
    RunUntilExecuted(0, cluster_.commands_executed(0) + 2);
    cluster_.ResetConnections(0);
    loop_.RunUntilIdle();
    return sub.what();
  }

  static std::string Released(const std::string& channel) {
    return absl::StrCat("reply *3[$message $", channel, " $released]");
  }
};

TEST_F(SimPubSubTest,
       ReleaseByAnotherConnectionReachesTheSubscriberOneDelayLater) {
  Recorder sub(&loop_), holder(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(0, &sub, "lock:r");
  std::unique_ptr<Connection> conn = Connected(0, &holder);
  conn->Send({"SELECT", "3"});  // Channels are server-wide.
  conn->Send({"SET", "lock:r", "tok", "PX", "10000"});
  SendRelease(*conn, "lock:r", "wrong");
  SendRelease(*conn, "lock:r", "tok");
  const int64_t before = cluster_.commands_executed(0);
  const absl::Time released = RunUntilExecuted(0, before + 4);
  EXPECT_EQ(sub.what().size(), 2u);  // Not inside the command.
  loop_.RunUntilIdle();
  EXPECT_EQ(sub.what(), (std::vector<std::string>{
                            "connect OK", "reply *3[$subscribe $lock:r :1]",
                            Released("lock:r")}));
  const absl::Duration delay = sub.events.back().at - released;
  EXPECT_GE(delay, absl::Microseconds(50));
  EXPECT_LE(delay, absl::Microseconds(500));
  EXPECT_EQ(holder.what().back(), "reply :1");
}

TEST_F(SimPubSubTest, SlowLinkDelaysMessagesLikeReplies) {
  Recorder sub(&loop_), holder(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(0, &sub, "lock:r");
  std::unique_ptr<Connection> conn = Connected(0, &holder);
  conn->Send({"SET", "lock:r", "tok", "PX", "10000"});
  SendRelease(*conn, "lock:r", "tok");
  const int64_t before = cluster_.commands_executed(0);
  RunUntilExecuted(0, before + 1);
  cluster_.SetExtraDelay(0, absl::Milliseconds(100));  // The release is sent.
  const absl::Time released = RunUntilExecuted(0, before + 2);
  loop_.RunUntilIdle();
  ASSERT_EQ(sub.what().back(), Released("lock:r"));
  EXPECT_GE(sub.events.back().at - released, absl::Milliseconds(100));
  EXPECT_LE(sub.events.back().at - released, absl::Microseconds(100500));
}

TEST_F(SimPubSubTest, PausedMasterPublishesNothingUntilResumed) {
  Recorder sub(&loop_), holder(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(2, &sub, "lock:r");
  std::unique_ptr<Connection> conn = Connected(2, &holder);
  conn->Send({"SET", "lock:r", "tok", "PX", "10000"});
  loop_.RunUntilIdle();
  cluster_.Pause(2);
  SendRelease(*conn, "lock:r", "tok");
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  EXPECT_EQ(sub.what().size(), 2u);
  EXPECT_EQ(Value(2, "lock:r"), "tok");
  const absl::Time resumed = loop_.now();
  cluster_.Resume(2);
  loop_.RunUntilIdle();
  ASSERT_EQ(sub.what().size(), 3u);
  EXPECT_EQ(sub.what().back(), Released("lock:r"));
  EXPECT_GT(sub.events.back().at, resumed);
  EXPECT_LE(sub.events.back().at, resumed + absl::Microseconds(500));
}

TEST_F(SimPubSubTest, MessageAlreadySentArrivesBeforeTheLoss) {
  EXPECT_EQ(
      ReleaseThenReset(),
      (std::vector<std::string>{"connect OK", "reply *3[$subscribe $lock:r :1]",
                                Released("lock:r"), kReset}));
}

class LosePushesPubSubTest : public SimPubSubTest {
 protected:
  LosePushesPubSubTest() : SimPubSubTest(Lossy()) {}
};

TEST_F(LosePushesPubSubTest, MessageInFlightIsDroppedWithTheConnection) {
  EXPECT_EQ(ReleaseThenReset(),
            (std::vector<std::string>{
                "connect OK", "reply *3[$subscribe $lock:r :1]", kReset}));
}

TEST_F(SimPubSubTest, ResetEndsTheSubscription) {
  Recorder sub(&loop_), holder(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(1, &sub, "lock:r");
  cluster_.ResetConnections(1);
  loop_.RunUntilIdle();
  EXPECT_EQ(sub.what().back(), kReset);
  std::unique_ptr<Connection> conn = Connected(1, &holder);
  conn->Send({"SET", "lock:r", "tok", "PX", "10000"});
  SendRelease(*conn, "lock:r", "tok");
  conn->Send({"PUBLISH", "lock:r", "anyone?"});
  loop_.RunUntilIdle();
  EXPECT_EQ(holder.what().back(), "reply :0");
  EXPECT_EQ(sub.what().size(), 3u);
  EXPECT_EQ(cluster_.redis(1).Subscribers("lock:r"), 0);
}

TEST_F(SimPubSubTest, CrashEndsTheSubscriptionAndRestartKeepsNone) {
  Recorder sub(&loop_), holder(&loop_), again(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(1, &sub, "lock:r");
  cluster_.Crash(1);
  cluster_.Restart(1, /*keep_data=*/true);
  loop_.RunUntilIdle();
  EXPECT_EQ(sub.what().back(), kReset);
  std::unique_ptr<Connection> conn = Connected(1, &holder);
  conn->Send({"PUBLISH", "lock:r", "anyone?"});
  loop_.RunUntilIdle();
  EXPECT_EQ(holder.what().back(), "reply :0");
  EXPECT_EQ(sub.what().size(), 3u);
  // Subscribing again on a new connection works as before.
  std::unique_ptr<Connection> resubscribed = Subscriber(1, &again, "lock:r");
  conn->Send({"PUBLISH", "lock:r", "hello"});
  loop_.RunUntilIdle();
  EXPECT_EQ(holder.what().back(), "reply :1");
  EXPECT_EQ(again.what().back(), "reply *3[$message $lock:r $hello]");
}

TEST_F(SimPubSubTest, ClosedSubscriberCountsUntilItsCloseArrives) {
  Recorder sub(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(0, &sub, "lock:r");
  sub_conn->Send({"SUBSCRIBE", "lock:s"});
  sub_conn.reset();  // The SUBSCRIBE is on its way; the close follows it.
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:r"), 1);
  loop_.RunUntilIdle();
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:r"), 0);
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:s"), 0);
  EXPECT_EQ(sub.what().size(), 2u);
}

TEST_F(SimPubSubTest, ClosedWhileSubscribeIsOnItsWayLeavesNoSubscription) {
  Recorder sub(&loop_);
  std::unique_ptr<Connection> sub_conn =
      Connected(0, &sub, ConnectionMode::kPushes);
  sub_conn->Send({"SUBSCRIBE", "lock:r"});
  sub_conn.reset();
  loop_.RunUntilIdle();
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:r"), 0);
  EXPECT_EQ(sub.what(), std::vector<std::string>{"connect OK"});
}

TEST_F(SimPubSubTest, CloseReachingAPausedMasterTakesEffectOnResume) {
  Recorder sub(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(0, &sub, "lock:r");
  cluster_.Pause(0);
  sub_conn.reset();
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:r"), 1);
  cluster_.Resume(0);
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:r"), 0);
}

TEST_F(SimPubSubTest, DirectCommandsPushesLeaveWithSendPushes) {
  Recorder sub(&loop_);
  std::unique_ptr<Connection> sub_conn = Subscriber(4, &sub, "lock:r");
  SimRedis::Connection console;
  EXPECT_EQ(cluster_.redis(4)
                .Execute(loop_.now(), console, {"PUBLISH", "lock:r", "hi"})
                .integer,
            1);
  cluster_.SendPushes(4);
  const absl::Time sent = loop_.now();
  loop_.RunUntilIdle();
  EXPECT_EQ(sub.what().back(), "reply *3[$message $lock:r $hi]");
  EXPECT_LE(sub.events.back().at - sent, absl::Microseconds(500));
}

TEST_F(SimPubSubTest, SubscribersOfOtherMastersHearNothing) {
  Recorder sub0(&loop_), sub1(&loop_), holder(&loop_);
  std::unique_ptr<Connection> conn0 = Subscriber(0, &sub0, "lock:r");
  std::unique_ptr<Connection> conn1 = Subscriber(1, &sub1, "lock:r");
  std::unique_ptr<Connection> conn = Connected(1, &holder);
  conn->Send({"PUBLISH", "lock:r", "on-1"});
  loop_.RunUntilIdle();
  EXPECT_EQ(sub0.what().size(), 2u);
  EXPECT_EQ(sub1.what().back(), "reply *3[$message $lock:r $on-1]");
}

// A small scenario touching every fault, recorded as a trace of observer
// calls with their times.
std::vector<std::string> Scenario(uint64_t seed) {
  SimLoop loop;
  SimCluster cluster(&loop, SimCluster::Config{}, seed);
  SimRuntime client(&loop, &cluster, seed);
  std::vector<std::string> trace;
  std::vector<std::unique_ptr<Recorder>> recorders;
  std::vector<std::unique_ptr<Connection>> conns;
  for (int i = 0; i < cluster.size(); ++i) {
    recorders.push_back(
        std::make_unique<Recorder>(&loop, absl::StrCat("m", i), &trace));
    conns.push_back(*client.Connect(cluster.address(i), recorders[i].get(),
                                    ConnectionMode::kReplies));
  }
  // A subscriber on every master; the clients publish each round.
  std::vector<std::unique_ptr<Recorder>> sub_recorders;
  std::vector<std::unique_ptr<Connection>> subs;
  for (int i = 0; i < cluster.size(); ++i) {
    sub_recorders.push_back(
        std::make_unique<Recorder>(&loop, absl::StrCat("s", i), &trace));
    subs.push_back(*client.Connect(cluster.address(i), sub_recorders[i].get(),
                                   ConnectionMode::kPushes));
    subs.back()->Send({"SUBSCRIBE", "lock"});
  }
  std::unique_ptr<Timer> timer;
  int round = 0;
  timer = client.NewTimer([&] {
    const std::string token = *client.NewToken();
    for (auto& conn : conns) {
      conn->Send({"SET", "lock", token, "NX", "PX", "5"});
      conn->Send({"INFO", "server"});
      conn->Send({"PUBLISH", "lock", token});
    }
    trace.push_back(
        absl::StrCat(absl::ToInt64Nanoseconds(loop.now() - loop.epoch()),
                     " token ", token, " bits ", client.RandomBits()));
    if (++round < 20) {
      timer->Arm(absl::Microseconds(client.RandomBits() % 3000));
    }
  });
  timer->Arm(absl::Milliseconds(1));
  loop.After(absl::Milliseconds(3), [&] { cluster.Pause(1); });
  loop.After(absl::Milliseconds(8), [&] { cluster.Resume(1); });
  loop.After(absl::Milliseconds(5), [&] { cluster.Crash(2); });
  loop.After(absl::Milliseconds(9), [&] { cluster.ResetConnections(3); });
  loop.After(absl::Milliseconds(4),
             [&] { cluster.SetExtraDelay(4, absl::Milliseconds(2)); });
  loop.RunUntilIdle();
  for (int i = 0; i < cluster.size(); ++i) {
    trace.push_back(absl::StrCat("m", i, " run_id ", cluster.redis(i).run_id(),
                                 " keys ", cluster.KeyCount(i)));
  }
  return trace;
}

TEST(SimDeterminismTest, SameSeedGivesTheSameTraceOtherSeedsDiffer) {
  const std::vector<std::string> first = Scenario(42);
  ASSERT_GT(first.size(), 100u);
  EXPECT_EQ(first, Scenario(42));
  EXPECT_NE(first, Scenario(43));
  // The faults show in the trace: resets and replies after the pause.
  const std::string all = absl::StrJoin(first, "\n");
  EXPECT_NE(all.find("m2 lost"), std::string::npos);
  EXPECT_NE(all.find("m3 lost"), std::string::npos);
  EXPECT_EQ(all.find("m1 lost"), std::string::npos);
  EXPECT_NE(all.find("s0 reply *3[$message $lock $"), std::string::npos);
  EXPECT_NE(all.find("s3 lost"), std::string::npos);
}

// The wake-up subscriber (src/engine/wakeups.h) on the simulated network.
class SubscriberSettleTest : public SimPubSubTest {
 protected:
  struct Listener final : internal::Subscriber::Listener {
    void OnMessage(int, absl::string_view, absl::string_view) override {}
    void OnSettled(bool) override {}
  };

  internal::MasterConfig Config() {
    internal::MasterConfig config;
    config.address = cluster_.address(0);
    config.connect_timeout = absl::Seconds(30);
    config.request_timeout = absl::Seconds(30);
    return config;
  }
};

TEST_F(SubscriberSettleTest,
       AChannelRemovedAndAddedAgainIsSettledOnlyByItsLastSubscribe) {
  Listener listener;
  internal::Subscriber sub(&client_, Config(), /*master=*/0, &listener);
  sub.Add("lock:a");
  loop_.RunUntilIdle();
  ASSERT_TRUE(sub.Settled("lock:a"));
  const int64_t before = cluster_.commands_executed(0);

  // SUBSCRIBE, UNSUBSCRIBE, SUBSCRIBE, before any is confirmed; the server
  // stops after running the first.
  sub.Add("lock:b");
  sub.Remove("lock:b");
  sub.Add("lock:b");
  RunUntilExecuted(0, before + 1);
  cluster_.Pause(0);
  // Long enough for every reply on its way to arrive, well short of the
  // request timeout.
  loop_.RunUntil(loop_.now() + absl::Seconds(1));
  // The first SUBSCRIBE's confirmation has arrived, but the server has yet
  // to run the UNSUBSCRIBE (it will be unsubscribed until the second
  // SUBSCRIBE runs): a release then would be missed.
  EXPECT_FALSE(sub.Settled("lock:b"));

  cluster_.Resume(0);
  loop_.RunUntilIdle();
  EXPECT_EQ(cluster_.commands_executed(0), before + 3);
  EXPECT_TRUE(sub.Settled("lock:b"));
  EXPECT_EQ(cluster_.redis(0).Subscribers("lock:b"), 1);
}

}  // namespace
}  // namespace redlock::sim
