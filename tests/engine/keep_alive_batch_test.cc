// Copyright 2026 The redlock Authors.
//
// Keep-alive batches on real masters: one engine keeping many locks alive
// extends them with a few BatchExtendScript calls per master, and still
// judges each lock alone — its own token on each master, its own quorum, its
// own validity from its batch's send time, its own lost-lock signal.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/keys.h"
#include "redlock/observer.h"
#include "src/algorithm/validity.h"
#include "src/engine/block_pool.h"
#include "src/engine/engine.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

constexpr absl::Duration kTtl = absl::Milliseconds(1500);

// Each keep-alive extension's decision time, by resource (the observer is
// called on the loop thread, the test's, just before the lock's state takes
// the round's result).
class ExtensionClock : public Observer {
 public:
  void OnExtended(const ExtendedEvent& event) override {
    if (!event.keep_alive) return;
    Seen& seen = seen_[std::string(event.resource)];
    seen.last_decided = MonotonicClock::now();
    if (event.status.ok()) ++seen.extended;
  }
  struct Seen {
    MonotonicTime last_decided;
    int extended = 0;
  };
  std::map<std::string, Seen> seen_;
};

class KeepAliveBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "reads and kills its own masters";
    }
    auto cluster = RedisCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    Options options = testing::TestOptions(cluster_->Uris());
    options.observer = clock_;
    auto engine = internal::Engine::Create(loop_.base(), std::move(options));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }

  void TearDown() override {
    for (auto& op : keep_alive_) {
      if (op) internal::StopKeepAlive(*op, /*release=*/false);
    }
    keep_alive_.clear();
    engine_.reset();
  }

  // Acquires `resources` (one lock) with kTtl; fails the test if it cannot.
  Lock Take(std::vector<std::string> resources) {
    std::optional<absl::StatusOr<Lock>> got;
    AcquireOptions options;
    options.ttl = kTtl;
    options.wait = absl::Seconds(2);
    absl::Status sent = engine_->Acquire(
        resources, options,
        [&got](absl::StatusOr<Lock> lock) { got = std::move(lock); });
    EXPECT_TRUE(sent.ok()) << sent;
    EXPECT_TRUE(loop_.RunUntil([&] { return got.has_value(); }));
    if (!got.has_value() || !got->ok()) {
      ADD_FAILURE() << (got.has_value() ? got->status().ToString() : "none");
      return Lock();
    }
    return **got;
  }

  // Takes `n` locks "<prefix>0".."<prefix>n-1", all in flight at once; lock
  // i with `ttl(i)` if given, else kTtl.
  std::vector<Lock> TakeMany(
      const std::string& prefix, int n,
      const std::function<absl::Duration(int)>& ttl = nullptr) {
    std::vector<std::optional<absl::StatusOr<Lock>>> got(n);
    AcquireOptions options;
    options.ttl = kTtl;
    options.wait = absl::Seconds(3);
    for (int i = 0; i < n; ++i) {
      if (ttl) options.ttl = ttl(i);
      absl::Status sent = engine_->Acquire(
          absl::StrCat(prefix, i), options,
          [&got, i](absl::StatusOr<Lock> lock) { got[i] = std::move(lock); });
      EXPECT_TRUE(sent.ok()) << sent;
    }
    EXPECT_TRUE(loop_.RunUntil(
        [&] {
          for (const auto& g : got) {
            if (!g.has_value()) return false;
          }
          return true;
        },
        absl::Seconds(20)));
    std::vector<Lock> locks;
    for (auto& g : got) {
      if (!g.has_value() || !g->ok()) {
        ADD_FAILURE() << (g.has_value() ? g->status().ToString() : "none");
        continue;
      }
      locks.push_back(**g);
    }
    return locks;
  }

  // Keeps `lock` alive with `ttl`; on_lost counts into lost_[resource].
  void Keep(const Lock& lock, absl::Duration every = absl::ZeroDuration(),
            absl::Duration ttl = kTtl) {
    HoldOptions hold;
    hold.extend_every = every;
    const std::string resource = lock.resource();
    hold.on_lost = [this, resource](const absl::Status& status) {
      ++lost_[resource];
      lost_reason_[resource] = status;
    };
    auto op = engine_->KeepAlive(lock, ttl, std::move(hold));
    ASSERT_TRUE(op.ok()) << op.status();
    keep_alive_.push_back(*op);
  }

  std::optional<std::string> Value(int master, const std::string& resource) {
    auto client = cluster_->Client(master);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return std::nullopt;
    auto value = (*client)->Get(LockKey(Options(), resource));
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }
  int64_t Pttl(int master, const std::string& resource) {
    auto client = cluster_->Client(master);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return -3;
    auto reply = (*client)->Command({"PTTL", LockKey(Options(), resource)});
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->integer : -3;
  }
  void Overwrite(int master, const std::string& resource,
                 std::vector<std::string> extra = {}) {
    auto client = cluster_->Client(master);
    ASSERT_TRUE(client.ok()) << client.status();
    std::vector<std::string> argv = {"SET", LockKey(Options(), resource),
                                     "intruder"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ASSERT_TRUE((*client)->Command(argv).ok());
  }

  int LostCount() const {
    int n = 0;
    for (const auto& [resource, count] : lost_) n += count;
    return n;
  }

  LoopRunner loop_;
  std::unique_ptr<RedisCluster> cluster_;
  std::shared_ptr<ExtensionClock> clock_ = std::make_shared<ExtensionClock>();
  std::unique_ptr<internal::Engine> engine_;
  std::vector<std::shared_ptr<internal::KeepAliveOp>> keep_alive_;
  std::map<std::string, int> lost_;
  std::map<std::string, absl::Status> lost_reason_;
};

TEST_F(KeepAliveBatchTest,
       ManyLocksKeptAliveInBatchesStayValidPastSeveralTtls) {
  constexpr int kLocks = 300;
  std::vector<Lock> locks = TakeMany("many:", kLocks);
  ASSERT_EQ(locks.size(), static_cast<size_t>(kLocks));
  for (const Lock& lock : locks) Keep(lock);
  loop_.RunFor(4 * kTtl);
  EXPECT_EQ(LostCount(), 0);
  for (const Lock& lock : locks) {
    EXPECT_FALSE(lock.lost()) << lock.resource();
    EXPECT_GT(lock.remaining(), absl::ZeroDuration()) << lock.resource();
    // Extended several times each (every ttl/3 over 4 TTLs: about 12).
    EXPECT_GE(clock_->seen_[lock.resource()].extended, 6) << lock.resource();
  }
  // Every master holds every token: the batches extended the keys.
  for (int m = 0; m < 3; ++m) {
    for (int i = 0; i < kLocks; i += 37) {
      EXPECT_EQ(Value(m, locks[i].resource()), locks[i].token()) << m;
      EXPECT_GT(Pttl(m, locks[i].resource()), 0) << m;
    }
  }
  // One extension per lock per master would be kLocks * 3 * 6 or more.
  const int64_t requests = engine_->keep_alive_batch_requests_for_testing();
  EXPECT_GT(requests, 0);
  EXPECT_LT(requests, kLocks * 3 * 6 / 10) << requests;
}

// A held lock's state and its keep-alive come from the block pools, not from
// malloc (src/engine/block_pool.h), and their slabs go back once the locks
// are dropped.
TEST_F(KeepAliveBatchTest, HeldLocksAndTheirKeepAlivesLiveInTheBlockPools) {
  const size_t before = internal::BlockPool::MappedBytes();
  constexpr int kLocks = 1200;
  std::vector<Lock> locks = TakeMany("pooled:", kLocks);
  ASSERT_EQ(locks.size(), static_cast<size_t>(kLocks));
  for (const Lock& lock : locks) Keep(lock);
  // 1,200 blocks of each kind: the states' pool (327 blocks of 200 B a
  // slab) maps at least 3 new slabs, even if a slab with room was there
  // before, and the keep-alives' (511 of 128 B) at least 2; either pool
  // alone maps at most 4.
  const size_t held = internal::BlockPool::MappedBytes();
  EXPECT_GE(held, before + 5 * internal::BlockPool::kSlabBytes)
      << held << " vs " << before;
  for (auto& op : keep_alive_) internal::StopKeepAlive(*op, /*release=*/false);
  keep_alive_.clear();
  locks.clear();
  loop_.RunFor(absl::Milliseconds(50));
  // Back: at most the one slab with room each pool keeps.
  EXPECT_LE(internal::BlockPool::MappedBytes(),
            before + 2 * internal::BlockPool::kSlabBytes);
}

// A client maps the first slabs of those pools when it is made, so that its
// first grant and keep-alive (a `redlock run` handed the lock, say) make no
// mmap() or munmap() at that moment. ctest runs each test in a process of
// its own: the pools start empty.
TEST_F(KeepAliveBatchTest, AClientsFirstGrantAndKeepAliveMapNoSlab) {
  const size_t before = internal::BlockPool::MappedBytes();
  EXPECT_GT(before, 0u);
  Lock lock = Take({"first"});
  Keep(lock);
  EXPECT_FALSE(lock.lost());
  EXPECT_EQ(internal::BlockPool::MappedBytes(), before);
}

TEST_F(KeepAliveBatchTest, AnOverwrittenLockInABatchIsReportedLostAlone) {
  std::vector<Lock> locks = TakeMany("ow:", 40);
  ASSERT_EQ(locks.size(), 40u);
  // A multi-resource lock in the same batches: all or none over its keys.
  Lock set = Take({"set:a", "set:b"});
  ASSERT_TRUE(set.valid());
  for (const Lock& lock : locks) Keep(lock);
  Keep(set);
  loop_.RunFor(kTtl / 2);
  // Another owner's SET on two of three masters: lock 7 has lost quorum.
  Overwrite(0, "ow:7");
  Overwrite(1, "ow:7");
  // And one key of the set, everywhere: the set cannot be extended.
  for (int m = 0; m < 3; ++m) Overwrite(m, "set:b");
  EXPECT_TRUE(loop_.RunUntil(
      [&] { return lost_.count("ow:7") && lost_.count("set:a"); }, 3 * kTtl));
  loop_.RunFor(2 * kTtl);
  EXPECT_EQ(lost_["ow:7"], 1);
  EXPECT_EQ(lost_["set:a"], 1);
  EXPECT_EQ(LostCount(), 2);
  EXPECT_EQ(lost_reason_["ow:7"].code(), absl::StatusCode::kAborted)
      << lost_reason_["ow:7"];
  EXPECT_TRUE(locks[7].lost());
  EXPECT_TRUE(set.lost());
  for (int i = 0; i < 40; ++i) {
    if (i == 7) continue;
    EXPECT_FALSE(locks[i].lost()) << i;
    EXPECT_GT(locks[i].remaining(), absl::ZeroDuration()) << i;
  }
  // The other owner's keys were left as they were; the set's key that was
  // still ours was not extended once the set was refused (it expired).
  EXPECT_EQ(Value(0, "ow:7"), "intruder");
  EXPECT_EQ(Pttl(0, "set:b"), -1);  // The intruder's, no TTL: untouched.
}

// A batch's call is made as its RESP text alone; a master that has lost the
// script (SCRIPT FLUSH) answers NOSCRIPT, and the call is sent again as EVAL,
// made from that text: every lock is still extended on every master.
TEST_F(KeepAliveBatchTest, ABatchAnsweredNoscriptIsResentAsEvalAndExtends) {
  std::vector<Lock> locks = TakeMany("noscript:", 30);
  ASSERT_EQ(locks.size(), 30u);
  for (const Lock& lock : locks) Keep(lock);
  // The first batches went out (and loaded the script on each connection).
  EXPECT_TRUE(loop_.RunUntil(
      [&] { return clock_->seen_["noscript:0"].extended >= 1; }, kTtl));
  for (int m = 0; m < 3; ++m) {
    auto client = cluster_->Client(m);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)->Command({"SCRIPT", "FLUSH"}).ok());
  }
  std::map<std::string, int> before;
  for (const Lock& lock : locks) {
    before[lock.resource()] = clock_->seen_[lock.resource()].extended;
  }
  loop_.RunFor(2 * kTtl);
  EXPECT_EQ(LostCount(), 0);
  int64_t fallbacks = 0;
  for (const MasterHealth& h : engine_->Health()) {
    EXPECT_GE(h.noscript_fallbacks, 1) << h.master;
    fallbacks += h.noscript_fallbacks;
  }
  EXPECT_GE(fallbacks, 3);
  for (const Lock& lock : locks) {
    EXPECT_FALSE(lock.lost()) << lock.resource();
    EXPECT_GE(clock_->seen_[lock.resource()].extended,
              before[lock.resource()] + 2)
        << lock.resource();
    for (int m = 0; m < 3; ++m) {
      EXPECT_EQ(Value(m, lock.resource()), lock.token()) << m;
    }
  }
}

TEST_F(KeepAliveBatchTest, AMasterThatDiesMidBatchLeavesTheRestAtQuorum) {
  std::vector<Lock> locks = TakeMany("die:", 60);
  ASSERT_EQ(locks.size(), 60u);
  for (const Lock& lock : locks) Keep(lock);
  loop_.RunFor(kTtl / 3 + absl::Milliseconds(30));  // A batch just went out.
  ASSERT_TRUE(cluster_->server(2).Kill().ok());
  loop_.RunFor(4 * kTtl);
  EXPECT_EQ(LostCount(), 0);
  for (const Lock& lock : locks) {
    EXPECT_FALSE(lock.lost()) << lock.resource();
    EXPECT_GT(lock.remaining(), absl::ZeroDuration()) << lock.resource();
  }
  for (int m = 0; m < 2; ++m) {
    for (int i = 0; i < 60; i += 7) {
      EXPECT_EQ(Value(m, locks[i].resource()), locks[i].token()) << m;
    }
  }
}

TEST_F(KeepAliveBatchTest, AStoppedMasterMidBatchLeavesTheRestAtQuorum) {
  // A master that stops answering (SIGSTOP) holds calls until they time out;
  // while it has 8 unanswered, the batches wait for it (back-pressure), at
  // worst 8 calls per request timeout. 2,000 locks need 8 calls a second
  // per master, well within that: every lock stays held on the others.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // A sanitizer's loop is several times slower (TSan lost 1,987 of 2,000
  // here): still two calls per master, each held by the stopped one.
  constexpr int kLocks = 600;
#else
  constexpr int kLocks = 2000;
#endif
  std::vector<Lock> locks = TakeMany("stop:", kLocks);
  ASSERT_EQ(locks.size(), static_cast<size_t>(kLocks));
  for (const Lock& lock : locks) Keep(lock);
  loop_.RunFor(kTtl / 3);
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  loop_.RunFor(4 * kTtl);
  EXPECT_EQ(LostCount(), 0)
      << (lost_reason_.empty() ? "" : lost_reason_.begin()->second.ToString());
  for (int i = 0; i < kLocks; i += 97) {
    EXPECT_FALSE(locks[i].lost()) << i;
    EXPECT_EQ(Value(0, locks[i].resource()), locks[i].token()) << i;
  }
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
}

TEST_F(KeepAliveBatchTest, ABatchNeverExtendsAKeyWhoseTokenDiffers) {
  std::vector<Lock> locks = TakeMany("tok:", 20);
  ASSERT_EQ(locks.size(), 20u);
  // Master 0 holds another owner's value for lock 3, with a long TTL; the
  // lock stays held on the other two.
  Overwrite(0, "tok:3", {"PX", "600000"});
  for (const Lock& lock : locks) Keep(lock);
  loop_.RunFor(3 * kTtl);
  EXPECT_FALSE(locks[3].lost()) << lost_reason_["tok:3"];
  EXPECT_GE(clock_->seen_["tok:3"].extended, 4);
  EXPECT_EQ(Value(0, "tok:3"), "intruder");
  // A batch that extended it would have cut its TTL to kTtl.
  EXPECT_GT(Pttl(0, "tok:3"), 500'000);
  EXPECT_EQ(LostCount(), 0);
}

TEST_F(KeepAliveBatchTest, AnEarlyExtensionCountsValidityFromItsBatchSendTime) {
  // Two locks 100ms apart, extended every 2s: the second goes along with
  // the first, early (the window is extend_every/10 = 200ms). Its validity
  // must be counted from when the batch was sent, not from when it was due.
  const absl::Duration every = absl::Seconds(2);
  const absl::Duration ttl = absl::Seconds(6);
  auto take = [&](const std::string& resource) {
    std::optional<absl::StatusOr<Lock>> got;
    AcquireOptions options;
    options.ttl = ttl;
    EXPECT_TRUE(engine_
                    ->Acquire(resource, options,
                              [&got](absl::StatusOr<Lock> lock) {
                                got = std::move(lock);
                              })
                    .ok());
    EXPECT_TRUE(loop_.RunUntil([&] { return got.has_value(); }));
    return got.has_value() && got->ok() ? **got : Lock();
  };
  auto keep = [&](const Lock& lock) {
    HoldOptions hold;
    hold.extend_every = every;
    auto op = engine_->KeepAlive(lock, ttl, std::move(hold));
    ASSERT_TRUE(op.ok()) << op.status();
    keep_alive_.push_back(*op);
  };
  Lock first = take("early:1");
  ASSERT_TRUE(first.valid());
  keep(first);
  loop_.RunFor(absl::Milliseconds(100));
  Lock second = take("early:2");
  ASSERT_TRUE(second.valid());
  keep(second);
  const MonotonicTime kept_at = MonotonicClock::now();
  ASSERT_TRUE(
      loop_.RunUntil([&] { return clock_->seen_["early:2"].extended >= 1; },
                     absl::Seconds(4)));
  loop_.RunFor(absl::Milliseconds(20));  // Let the state take the result.
  const ExtensionClock::Seen seen = clock_->seen_["early:2"];
  // It went out with the first, before it was due.
  EXPECT_LT(seen.last_decided - kept_at,
            internal::ToChrono(every - absl::Milliseconds(40)));
  const absl::Duration drift = internal::Drift(ttl, 0.01);
  // Sent no later than decided: valid until at most decided + ttl - drift.
  EXPECT_LE(second.valid_until(),
            seen.last_decided +
                internal::ToChrono(ttl - drift + absl::Milliseconds(1)));
  EXPECT_FALSE(second.lost());
}

TEST_F(KeepAliveBatchTest, SemaphorePermitSetsAreKeptAliveInBatches) {
  SemaphoreOptions sem;
  sem.limit = 3;
  sem.permits = 2;
  std::optional<absl::StatusOr<Lock>> got;
  AcquireOptions options;
  options.ttl = kTtl;
  ASSERT_TRUE(engine_
                  ->AcquirePermits("pool", sem, options,
                                   [&got](absl::StatusOr<Lock> lock) {
                                     got = std::move(lock);
                                   })
                  .ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return got.has_value(); }));
  ASSERT_TRUE(got->ok()) << got->status();
  Lock permits = **got;
  std::vector<Lock> locks = TakeMany("sem-neighbour:", 10);
  Keep(permits);
  for (const Lock& lock : locks) Keep(lock);
  loop_.RunFor(3 * kTtl);
  EXPECT_EQ(LostCount(), 0) << lost_reason_[permits.resource()];
  EXPECT_FALSE(permits.lost());
  EXPECT_GE(clock_->seen_[permits.resource()].extended, 4);
  EXPECT_GT(engine_->keep_alive_batch_requests_for_testing(), 0);
  // Another limit written on every master: the permit set fails (the
  // semaphore extension's -1), its neighbours do not.
  for (int m = 0; m < 3; ++m) {
    auto client = cluster_->Client(m);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(
        (*client)
            ->Command({"SET", SemaphoreLimitKey(Options(), "pool"), "7"})
            .ok());
  }
  EXPECT_TRUE(loop_.RunUntil([&] { return permits.lost(); }, 3 * kTtl));
  loop_.RunFor(kTtl);
  EXPECT_EQ(LostCount(), 1);
  for (const Lock& lock : locks) EXPECT_FALSE(lock.lost()) << lock.resource();
}

// Locks of two TTLs extended on one cadence go out in the same chunks: each
// is given, and counts validity from, its own TTL, never its chunk's first
// lock's (mutant batch-round-ttl-of-first-lock).
TEST_F(KeepAliveBatchTest, LocksOfTwoTtlsInOneBatchEachGetTheirOwnValidity) {
  const absl::Duration long_ttl = absl::Seconds(15);
  const absl::Duration short_ttl = kTtl;
  auto ttl_of = [&](int i) { return i % 2 == 0 ? long_ttl : short_ttl; };
  constexpr int kLocks = 20;
  std::vector<Lock> locks = TakeMany("two-ttls-", kLocks, ttl_of);
  ASSERT_EQ(locks.size(), static_cast<size_t>(kLocks));
  const int64_t requests_before =
      engine_->keep_alive_batch_requests_for_testing();
  for (int i = 0; i < kLocks; ++i) {
    Keep(locks[i], absl::Milliseconds(300), ttl_of(i));
  }
  // Three extensions or so of every lock; a short lock is only ever
  // extended to its own 1.5s, and keeps it.
  loop_.RunFor(absl::Milliseconds(1000));
  const int64_t requests =
      engine_->keep_alive_batch_requests_for_testing() - requests_before;
  EXPECT_GT(requests, 0) << "never extended";
  EXPECT_LT(requests, kLocks * cluster_->size())
      << "not batched: one request per lock and master";
  EXPECT_EQ(LostCount(), 0);
  for (int i = 0; i < kLocks; ++i) {
    const std::string& resource = locks[i].resource();
    EXPECT_GT(clock_->seen_[resource].extended, 0) << resource;
    const absl::Duration remaining = locks[i].remaining();
    if (ttl_of(i) == long_ttl) {
      EXPECT_GT(remaining, absl::Seconds(10)) << resource;
      EXPECT_GT(Pttl(0, resource), 10000) << resource;
    } else {
      EXPECT_LE(remaining, short_ttl) << resource;
      EXPECT_GT(remaining, absl::ZeroDuration()) << resource;
      EXPECT_LE(Pttl(0, resource), 1500) << resource;
    }
  }
}

}  // namespace
}  // namespace redlock
