// Copyright 2026 The redlock Authors.
//
// Read-write locks (AcquireOptions::shared) on real masters: readers share,
// a writer — today's exclusive lock — excludes them and is excluded by them,
// a waiting writer is not starved by a stream of readers, a reader's release
// shrinks or deletes the shared key, and a vanished reader stops blocking
// after its TTL.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "src/algorithm/scripts.h"
#include "tests/support/own_masters_test.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

class RwLockTest : public testing::OwnMastersTest {
 protected:
  static AcquireOptions Reader(absl::Duration ttl,
                               absl::Duration wait = absl::ZeroDuration()) {
    AcquireOptions options;
    options.ttl = ttl;
    options.wait = wait;
    options.shared = true;
    return options;
  }
  static AcquireOptions Writer(absl::Duration ttl,
                               absl::Duration wait = absl::ZeroDuration()) {
    AcquireOptions options;
    options.ttl = ttl;
    options.wait = wait;
    return options;
  }

  static std::string Key() { return LockKey(Options(), "R"); }

  // Below, before its tests.
  void ExpectAWaitingWriterIsNotStarvedByAStreamOfReaders(
      AcquireOptions writer_options, const std::vector<std::string>& resources);
};

TEST_F(RwLockTest, TheScriptsShareTheLibrarysSharedMarker) {
  // The Lua spells the marker; the constant documents it. Tokens are 32 hex
  // digits, so the marker can never be one.
  const std::string quoted = absl::StrCat("'", kSharedLockValue, "'");
  EXPECT_TRUE(
      absl::StrContains(internal::ReaderAcquireScript().source, quoted));
  EXPECT_TRUE(absl::StrContains(internal::ReaderExtendScript().source, quoted));
  EXPECT_TRUE(
      absl::StrContains(internal::ReaderReleaseScript().source, quoted));
  EXPECT_NE(kSharedLockValue.size(), 32u);
}

TEST_F(RwLockTest, BadReaderOptionsAreRefused) {
  auto client = MakeClient();
  AcquireOptions fenced = Reader(absl::Seconds(5));
  fenced.fencing = true;
  EXPECT_EQ(client->Acquire("r", fenced).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> two = {"r", "s"};
  EXPECT_EQ(client->Acquire(two, Reader(absl::Seconds(5))).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A semaphore's permits are not shared: asked for, it is refused, naming
  // the field, and nothing is taken.
  SemaphoreOptions sem;
  sem.limit = 2;
  absl::StatusOr<Lock> permit =
      client->AcquirePermits("pool", sem, Reader(absl::Seconds(5)));
  EXPECT_EQ(permit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(permit.status().message(), "AcquireOptions.shared"))
      << permit.status();
  EXPECT_EQ(On(0, {"EXISTS", SemaphoreSlotKey(Options(), "pool", 0)}).integer,
            0);
  // The marker as a token would release or shorten the readers' key.
  EXPECT_EQ(client->Adopt("r", std::string(kSharedLockValue)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RwLockTest, TwoReadersShareAndAWriterIsRefusedUntilBothRelease) {
  auto a = MakeClient();
  auto b = MakeClient();
  auto w = MakeClient();
  absl::StatusOr<Lock> ra = a->Acquire("R", Reader(absl::Seconds(10)));
  ASSERT_TRUE(ra.ok()) << ra.status();
  absl::StatusOr<Lock> rb = b->Acquire("R", Reader(absl::Seconds(10)));
  ASSERT_TRUE(rb.ok()) << rb.status();
  EXPECT_TRUE(ra->valid());
  EXPECT_TRUE(rb->valid());
  EXPECT_TRUE(ra->shared());
  EXPECT_EQ(ra->resource(), "R");
  EXPECT_EQ(ra->key(), LockKey(Options(), "R"));
  EXPECT_NE(ra->token(), rb->token());
  absl::SleepFor(absl::Milliseconds(50));  // Every master applied both.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"GET", Key()}).str, kSharedLockValue) << i;
    EXPECT_EQ(On(i, {"GET", SharedHolderKey(Options(), "R", ra->token())}).str,
              ra->token())
        << i;
  }
  // The exclusive lock is the write side, whichever way it is asked for.
  absl::StatusOr<Lock> writer = w->TryAcquire("R", absl::Seconds(5));
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kAborted)
      << writer.status();
  const std::vector<std::string> several = {"R", "S"};
  absl::StatusOr<Lock> multi = w->Acquire(several, Writer(absl::Seconds(5)));
  EXPECT_EQ(multi.status().code(), absl::StatusCode::kAborted)
      << multi.status();
  AcquireOptions fenced = Writer(absl::Seconds(5));
  fenced.fencing = true;
  absl::StatusOr<Lock> fenced_writer = w->Acquire("R", fenced);
  EXPECT_EQ(fenced_writer.status().code(), absl::StatusCode::kAborted)
      << fenced_writer.status();

  ASSERT_TRUE(a->Release(*ra).ok());
  writer = w->TryAcquire("R", absl::Seconds(5));
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kAborted)
      << "one reader is still inside: " << writer.status();
  ASSERT_TRUE(b->Release(*rb).ok());
  writer = w->TryAcquire("R", absl::Seconds(5));
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_FALSE(writer->shared());
}

TEST_F(RwLockTest, AWriterRefusesAReaderUntilItReleases) {
  auto w = MakeClient();
  auto r = MakeClient();
  absl::StatusOr<Lock> writer = w->TryAcquire("R", absl::Seconds(10));
  ASSERT_TRUE(writer.ok()) << writer.status();
  absl::StatusOr<Lock> reader = r->Acquire("R", Reader(absl::Seconds(10)));
  ASSERT_EQ(reader.status().code(), absl::StatusCode::kAborted)
      << reader.status();
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "writer"))
      << reader.status();
  // The writer's key is untouched by the refusal: a quorum holds its token.
  // The acquisition returned at a quorum, so the third master may have let
  // the reader in first (its clean-up, on its way, empties it again); no
  // master holds any other value.
  int holding = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string value = On(i, {"GET", Key()}).str;
    if (value == writer->token()) {
      ++holding;
    } else {
      EXPECT_TRUE(value.empty() || value == kSharedLockValue)
          << "master " << i << ": " << value;
    }
  }
  EXPECT_GE(holding, 2);
  ASSERT_TRUE(w->Release(*writer).ok());
  reader = r->Acquire("R", Reader(absl::Seconds(10)));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE(reader->shared());
}

// Several clients take R as readers (one attempt) or writers (a short wait)
// at random, holding for a moment. At every grant, no lock of the other kind
// may be valid at the same time.
TEST_F(RwLockTest, AReaderAndAWriterAreNeverValidAtOnce) {
  constexpr int kClients = 4;
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(MakeClient());
  std::mutex mu;
  std::vector<Lock> held;  // Guarded by mu.
  std::atomic<int> violations{0};
  std::atomic<int> reads{0};
  std::atomic<int> writes{0};
  std::atomic<int> concurrent_reads{0};
  // Writers wait a little (and so mark themselves waiting, the writer
  // acquire script); readers try once.
  const absl::Duration kWriterWait = absl::Milliseconds(300);
  const absl::Time end = absl::Now() + absl::Seconds(3);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      absl::BitGen gen;
      while (absl::Now() < end) {
        const bool shared = absl::Bernoulli(gen, 0.8);
        const absl::Duration ttl = absl::Milliseconds(500);
        absl::StatusOr<Lock> lock = clients[c]->Acquire(
            "R", shared ? Reader(ttl) : Writer(ttl, kWriterWait));
        if (!lock.ok()) {
          absl::SleepFor(absl::Milliseconds(absl::Uniform(gen, 0, 5)));
          continue;
        }
        {
          std::lock_guard<std::mutex> guard(mu);
          int readers_now = 0;
          for (const Lock& other : held) {
            if (!other.valid() || !lock->valid()) continue;
            if (other.shared() != lock->shared() || !lock->shared()) {
              ++violations;
            } else {
              ++readers_now;
            }
          }
          if (readers_now > 0) ++concurrent_reads;
          held.push_back(*lock);
        }
        ++(shared ? reads : writes);
        absl::SleepFor(absl::Milliseconds(absl::Uniform(gen, 0, 15)));
        {
          std::lock_guard<std::mutex> guard(mu);
          for (size_t i = 0; i < held.size(); ++i) {
            if (held[i].token() == lock->token()) {
              held.erase(held.begin() + i);
              break;
            }
          }
        }
        EXPECT_TRUE(clients[c]->Release(*lock).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  // Not vacuous: both kinds were granted, and readers did overlap.
  EXPECT_GT(reads.load(), 5);
  EXPECT_GT(writes.load(), 3);
  EXPECT_GT(concurrent_reads.load(), 0);
}

// A new reader every 50ms, each holding 250ms, so that R is never free of
// readers; a writer (`writer`, on `resources`, R among them) waits with
// wait=5s. It gets in, readers arriving while it waits are refused naming
// it, readers come back after it, and its marks are gone.
void RwLockTest::ExpectAWaitingWriterIsNotStarvedByAStreamOfReaders(
    AcquireOptions writer_options, const std::vector<std::string>& resources) {
  struct Arrival {
    absl::Time at;
    absl::Time answered;
    absl::Status status;
  };
  std::mutex mu;
  std::vector<Arrival> arrivals;  // Guarded by mu.
  std::atomic<bool> stop{false};
  constexpr int kReaderClients = 8;
  std::vector<std::unique_ptr<Redlock>> readers;
  for (int c = 0; c < kReaderClients; ++c) {
    readers.push_back(MakeClient());
  }
  std::vector<std::thread> threads;
  std::thread stream([&] {
    for (int n = 0; !stop.load(); ++n) {
      const absl::Time next = absl::Now() + absl::Milliseconds(50);
      threads.emplace_back([&, n] {
        Redlock* client = readers[n % kReaderClients].get();
        Arrival arrival;
        arrival.at = absl::Now();
        absl::StatusOr<Lock> lock =
            client->Acquire("R", Reader(absl::Seconds(3)));
        arrival.answered = absl::Now();
        arrival.status = lock.status();
        {
          std::lock_guard<std::mutex> guard(mu);
          arrivals.push_back(arrival);
        }
        if (!lock.ok()) return;
        absl::SleepFor(absl::Milliseconds(250));
        EXPECT_TRUE(client->Release(*lock).ok());
      });
      absl::SleepFor(next - absl::Now());
    }
  });
  absl::SleepFor(absl::Milliseconds(600));  // The stream is flowing.
  auto w = MakeClient();
  const absl::Time waiting_from = absl::Now();
  absl::StatusOr<Lock> writer = w->Acquire(resources, writer_options);
  const absl::Time got = absl::Now();
  absl::SleepFor(absl::Milliseconds(100));
  if (writer.ok()) EXPECT_TRUE(w->Release(*writer).ok());
  const absl::Time released = absl::Now();
  absl::SleepFor(absl::Milliseconds(500));  // Readers come back.
  stop = true;
  stream.join();
  for (std::thread& t : threads) t.join();

  ASSERT_TRUE(writer.ok()) << writer.status();
  // Readers inside drain in about 250ms; the bound is generous.
  EXPECT_LT(got - waiting_from, absl::Seconds(3));
  int before = 0;
  int queued = 0;
  int after = 0;
  for (const Arrival& a : arrivals) {
    if (a.answered < waiting_from && a.status.ok()) ++before;
    // The writer's second attempt (within the 60ms retry delay) marks it
    // waiting; readers arriving after that and answered before its grant
    // are refused, naming the waiting writer.
    if (a.at > waiting_from + absl::Milliseconds(150) && a.answered < got) {
      ++queued;
      EXPECT_EQ(a.status.code(), absl::StatusCode::kAborted) << a.status;
      EXPECT_TRUE(absl::StrContains(a.status.message(), "writer waiting"))
          << a.status;
    }
    if (a.at > released + absl::Milliseconds(50) && a.status.ok()) ++after;
  }
  EXPECT_GT(before, 3) << "the stream did not flow before the writer";
  EXPECT_GT(queued, 0) << "no reader arrived while the writer waited";
  EXPECT_GT(after, 0) << "readers were not admitted after the writer's turn";
  // The writer's mark is gone once it is done.
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    for (const std::string& resource : resources) {
      EXPECT_EQ(
          On(i, {"EXISTS", WriterWaitingKey(Options(), resource)}).integer, 0)
          << i << " " << resource;
    }
  }
}

TEST_F(RwLockTest, AWaitingWriterIsNotStarvedByAStreamOfReaders) {
  ExpectAWaitingWriterIsNotStarvedByAStreamOfReaders(
      Writer(absl::Seconds(3), /*wait=*/absl::Seconds(5)), {"R"});
}

// The same for a fenced writer and a writer of several resources, which
// mark themselves waiting with a script of their own (WriterMarkScript).
TEST_F(RwLockTest, AWaitingFencedWriterIsNotStarvedByAStreamOfReaders) {
  AcquireOptions fenced = Writer(absl::Seconds(3), /*wait=*/absl::Seconds(5));
  fenced.fencing = true;
  ExpectAWaitingWriterIsNotStarvedByAStreamOfReaders(fenced, {"R"});
}

TEST_F(RwLockTest,
       AWaitingWriterOfSeveralResourcesIsNotStarvedByAStreamOfReaders) {
  ExpectAWaitingWriterIsNotStarvedByAStreamOfReaders(
      Writer(absl::Seconds(3), /*wait=*/absl::Seconds(5)), {"S", "R", "T"});
}

TEST_F(RwLockTest, AReaderReleaseShrinksTheSharedKeyAndTheLastDeletesIt) {
  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Lock> ra = a->Acquire("R", Reader(absl::Seconds(20)));
  ASSERT_TRUE(ra.ok()) << ra.status();
  absl::StatusOr<Lock> rb = b->Acquire("R", Reader(absl::Seconds(4)));
  ASSERT_TRUE(rb.ok()) << rb.status();
  // Nor does a short extension.
  ASSERT_TRUE(b->Extend(*rb, absl::Seconds(4)).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    // A shorter reader never shortens the shared key.
    EXPECT_GT(Pttl(i, Key()), 19'000) << i;
    EXPECT_EQ(On(i, {"SCARD", SharedHoldersKey(Options(), "R")}).integer, 2)
        << i;
  }
  ASSERT_TRUE(a->Release(*ra).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    const int64_t left = Pttl(i, Key());
    EXPECT_LE(left, 4'000) << i;
    EXPECT_GT(left, 3'000) << i;
    EXPECT_EQ(On(i, {"GET", Key()}).str, kSharedLockValue) << i;
  }
  ASSERT_TRUE(b->Release(*rb).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"EXISTS", Key()}).integer, 0) << i;
    EXPECT_EQ(On(i, {"EXISTS", SharedHoldersKey(Options(), "R"),
                     SharedHolderKey(Options(), "R", ra->token()),
                     SharedHolderKey(Options(), "R", rb->token())})
                  .integer,
              0)
        << i;
  }
}

TEST_F(RwLockTest, ExtendingAReaderRaisesTheSharedKeyButNeverAWritersKey) {
  auto client = MakeClient();
  absl::StatusOr<Lock> reader = client->Acquire("R", Reader(absl::Seconds(3)));
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE(client->Extend(*reader, absl::Seconds(30)).ok());
  absl::SleepFor(absl::Milliseconds(50));
  const std::string own = SharedHolderKey(Options(), "R", reader->token());
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(Pttl(i, Key()), 29'000) << i;
    EXPECT_GT(Pttl(i, own), 29'000) << i;
  }
  // On every master R now holds a writer's token (put there by hand: the
  // library never lets it happen while a reader's key lives). The reader's
  // extension must fail and leave the writer's TTL alone.
  const std::string writer_token(32, 'a');
  for (int i = 0; i < 3; ++i) {
    On(i, {"SET", Key(), writer_token, "PX", "5000"});
  }
  EXPECT_EQ(client->Extend(*reader, absl::Seconds(30)).code(),
            absl::StatusCode::kAborted);
  for (int i = 0; i < 3; ++i) {
    EXPECT_LE(Pttl(i, Key()), 5'000) << i;
    EXPECT_EQ(On(i, {"GET", Key()}).str, writer_token) << i;
  }
  // Nor does its release touch the writer's key.
  EXPECT_TRUE(client->Release(*reader).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"GET", Key()}).str, writer_token) << i;
  }
}

TEST_F(RwLockTest, AKeptAliveReaderOutlivesItsTtlAndKeepsWritersOut) {
  auto client = MakeClient();
  auto w = MakeClient();
  const absl::Duration ttl = absl::Seconds(1);
  absl::Status refused_late;
  absl::Status result =
      client->WithLock("R", Reader(ttl), [&](const Lock& lock) {
        EXPECT_TRUE(lock.shared());
        absl::SleepFor(3 * ttl);
        EXPECT_TRUE(lock.valid());
        EXPECT_FALSE(lock.lost()) << lock.lost_reason();
        refused_late = w->TryAcquire("R", ttl).status();
        return absl::OkStatus();
      });
  EXPECT_TRUE(result.ok()) << result;
  // Three TTLs in, the reader's extensions still kept the writer out.
  EXPECT_EQ(refused_late.code(), absl::StatusCode::kAborted) << refused_late;
  // Released on the way out: the writer gets in at once.
  absl::StatusOr<Lock> writer = w->TryAcquire("R", ttl);
  EXPECT_TRUE(writer.ok()) << writer.status();
}

// A writer that vanished while waiting (its process gone: no clean-up) is
// played by sending its writer acquire script by hand, as the engine does on
// a retry, with a waiting TTL of 1s, while a reader holds R.
TEST_F(RwLockTest, AVanishedWaitingWriterHoldsReadersOffForItsBoundOnly) {
  auto r = MakeClient();
  absl::StatusOr<Lock> inside = r->Acquire("R", Reader(absl::Seconds(20)));
  ASSERT_TRUE(inside.ok()) << inside.status();
  const absl::Duration bound = absl::Seconds(1);
  const internal::Command retry = internal::WriterAcquireCommand(
      Key(), WriterWaitingKey(Options(), "R"), std::string(32, 'b'),
      absl::Seconds(5), std::string(32, 'b'), bound, /*announce=*/false);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, internal::CommandArgv(retry, /*eval=*/true)).integer, 0)
        << i;
  }
  const absl::Time marked = absl::Now();
  auto late = MakeClient();
  absl::StatusOr<Lock> queued = late->Acquire("R", Reader(absl::Seconds(5)));
  EXPECT_EQ(queued.status().code(), absl::StatusCode::kAborted)
      << queued.status();
  EXPECT_TRUE(absl::StrContains(queued.status().message(), "writer waiting"))
      << queued.status();
  // The reader inside keeps its extensions meanwhile.
  EXPECT_TRUE(r->Extend(*inside, absl::Seconds(20)).ok());
  absl::SleepFor(marked + bound + absl::Milliseconds(300) - absl::Now());
  absl::StatusOr<Lock> admitted = late->Acquire("R", Reader(absl::Seconds(5)));
  EXPECT_TRUE(admitted.ok()) << admitted.status();
}

// Two writers wait behind a reader: "b" (played by hand, as a writer's
// retry would mark it, with a waiting bound of 20s) marks first, then a real
// writer. The real one gets in when the reader leaves, and then releases.
// New readers must still queue: "b" is still waiting. (With one writer id in
// the mark, the second writer's id replaced the first's, and its clean-up
// unmarked both.)
TEST_F(RwLockTest, OneOfTwoWaitingWritersWinningKeepsReadersQueuedForTheOther) {
  auto r = MakeClient();
  absl::StatusOr<Lock> inside = r->Acquire("R", Reader(absl::Seconds(20)));
  ASSERT_TRUE(inside.ok()) << inside.status();
  const std::string waiting = WriterWaitingKey(Options(), "R");
  const internal::Command b_retry = internal::WriterAcquireCommand(
      Key(), waiting, std::string(32, 'b'), absl::Seconds(20),
      std::string(32, 'b'), absl::Seconds(20), /*announce=*/false);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(On(i, internal::CommandArgv(b_retry, /*eval=*/true)).integer, 0)
        << i;
  }
  Options options = testing::TestOptions(cluster_->Uris());
  options.retry.min_delay = absl::Milliseconds(20);
  options.retry.max_delay = absl::Milliseconds(20);
  auto w = Redlock::Create(std::move(options));
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<Lock> written;
  std::thread writer([&] {
    written = (*w)->Acquire("R", Writer(absl::Seconds(20), absl::Seconds(10)));
  });
  // Its retries mark it too: two ids wait on every master.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  bool both = false;
  while (!both && absl::Now() < deadline) {
    both = true;
    for (int i = 0; i < 3; ++i)
      both = both && On(i, {"SCARD", waiting}).integer == 2;
    if (!both) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(both) << "the real writer never marked itself waiting";
  ReleaseOptions everywhere;
  everywhere.wait_for_all_masters = true;
  ASSERT_TRUE(r->Release(*inside, everywhere).ok());
  writer.join();
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_TRUE((*w)->Release(*written, everywhere).ok());
  // Its own id went; b's stays, and new readers queue behind b.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"SISMEMBER", waiting, written->token()}).integer, 0) << i;
    EXPECT_EQ(On(i, {"SISMEMBER", waiting, std::string(32, 'b')}).integer, 1)
        << i;
  }
  auto late = MakeClient();
  absl::StatusOr<Lock> queued = late->Acquire("R", Reader(absl::Seconds(5)));
  EXPECT_EQ(queued.status().code(), absl::StatusCode::kAborted)
      << queued.status();
  EXPECT_TRUE(absl::StrContains(queued.status().message(), "writer waiting"))
      << queued.status();
}

TEST_F(RwLockTest, AVanishedReaderBlocksTheWriterForItsTtlNotLonger) {
  const absl::Duration ttl = absl::Seconds(2);
  {
    auto gone = MakeClient();
    absl::StatusOr<Lock> reader = gone->Acquire("R", Reader(ttl));
    ASSERT_TRUE(reader.ok()) << reader.status();
    // Destroying the client releases nothing.
  }
  const absl::Time taken = absl::Now();
  auto w = MakeClient();
  absl::SleepFor(taken + ttl / 2 - absl::Now());
  absl::StatusOr<Lock> early = w->TryAcquire("R", ttl);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kAborted)
      << early.status();
  absl::SleepFor(taken + ttl + absl::Milliseconds(500) - absl::Now());
  absl::StatusOr<Lock> late = w->TryAcquire("R", ttl);
  EXPECT_TRUE(late.ok()) << late.status();
}

// --- Adopt() of a reader (AdoptOptions::shared) ------------------------------

AdoptOptions AReader() {
  AdoptOptions adopt;
  adopt.shared = true;
  return adopt;
}

// Readers handed over by token: the heir extends each (its own key and the
// shared key), releases them, and the last release deletes the shared key,
// after which a writer gets in.
TEST_F(RwLockTest,
       AnAdoptedReaderIsExtendedAndReleasedAndTheLastDeletesTheSharedKey) {
  auto a = MakeClient();
  auto b = MakeClient();
  auto heir = MakeClient();
  absl::StatusOr<Lock> ra = a->Acquire("R", Reader(absl::Seconds(5)));
  ASSERT_TRUE(ra.ok()) << ra.status();
  absl::StatusOr<Lock> rb = b->Acquire("R", Reader(absl::Seconds(5)));
  ASSERT_TRUE(rb.ok()) << rb.status();

  absl::StatusOr<Lock> adopted_a = heir->Adopt("R", ra->token(), AReader());
  ASSERT_TRUE(adopted_a.ok()) << adopted_a.status();
  EXPECT_TRUE(adopted_a->shared());
  EXPECT_TRUE(adopted_a->adopted());
  EXPECT_EQ(adopted_a->key(), Key());
  ASSERT_TRUE(heir->Extend(*adopted_a, absl::Seconds(30)).ok());
  EXPECT_TRUE(adopted_a->valid());
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  const std::string a_key = SharedHolderKey(Options(), "R", ra->token());
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(Pttl(i, a_key), 25'000) << i;
    EXPECT_GT(Pttl(i, Key()), 25'000) << i;
    EXPECT_EQ(On(i, {"GET", Key()}).str, kSharedLockValue) << i;
  }

  // The first release leaves the other reader's shared key (shrunk to it).
  ASSERT_TRUE(heir->Release(*adopted_a).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"EXISTS", a_key}).integer, 0) << i;
    EXPECT_EQ(On(i, {"GET", Key()}).str, kSharedLockValue) << i;
    EXPECT_LE(Pttl(i, Key()), 5'000) << i;
  }
  EXPECT_EQ(heir->Acquire("R", Writer(absl::Seconds(5))).status().code(),
            absl::StatusCode::kAborted);

  // The last reader's release deletes the shared key and the index.
  absl::StatusOr<Lock> adopted_b = heir->Adopt("R", rb->token(), AReader());
  ASSERT_TRUE(adopted_b.ok()) << adopted_b.status();
  ASSERT_TRUE(heir->Release(*adopted_b).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"EXISTS", Key(), SharedHoldersKey(Options(), "R"),
                     SharedHolderKey(Options(), "R", rb->token())})
                  .integer,
              0)
        << i;
  }
  absl::StatusOr<Lock> writer = heir->Acquire("R", Writer(absl::Seconds(5)));
  EXPECT_TRUE(writer.ok()) << writer.status();
}

// A token that is no reader of R: extension is refused and release deletes
// nothing; a writer's token adopted as a reader touches nothing either.
TEST_F(RwLockTest, AnAdoptedReaderWithAWrongTokenIsRefused) {
  auto a = MakeClient();
  auto heir = MakeClient();
  absl::StatusOr<Lock> ra = a->Acquire("R", Reader(absl::Seconds(20)));
  ASSERT_TRUE(ra.ok()) << ra.status();
  absl::StatusOr<Lock> wrong =
      heir->Adopt("R", "0123456789abcdef0123456789abcdef", AReader());
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(heir->Extend(*wrong, absl::Seconds(60)).code(),
            absl::StatusCode::kAborted);
  EXPECT_FALSE(wrong->valid());
  absl::StatusOr<ReleaseReport> report = heir->Release(*wrong);
  EXPECT_TRUE(report.ok() ? report->released == 0 : true);
  absl::SleepFor(absl::Milliseconds(50));
  const std::string a_key = SharedHolderKey(Options(), "R", ra->token());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"GET", Key()}).str, kSharedLockValue) << i;
    EXPECT_LE(Pttl(i, Key()), 20'000) << i;
    EXPECT_EQ(On(i, {"GET", a_key}).str, ra->token()) << i;
  }
  ASSERT_TRUE(a->Release(*ra).ok());

  // A writer's token adopted as a reader.
  absl::StatusOr<Lock> w = a->Acquire("R", Writer(absl::Seconds(20)));
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<Lock> as_reader = heir->Adopt("R", w->token(), AReader());
  ASSERT_TRUE(as_reader.ok()) << as_reader.status();
  EXPECT_EQ(heir->Extend(*as_reader, absl::Seconds(60)).code(),
            absl::StatusCode::kAborted);
  (void)heir->Release(*as_reader);
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(On(i, {"GET", Key()}).str, w->token()) << i;
    EXPECT_LE(Pttl(i, Key()), 20'000) << i;
  }
}

}  // namespace
}  // namespace redlock
