// Copyright 2026 The redlock Authors.
//
// Options::observer on real masters: every event the engine reports comes
// once, with the values of what happened (observer.h).

#include "redlock/observer.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/redlock.h"
#include "tests/support/await_call.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

// Keeps every event as a line, from the loop thread; read from the test's.
class Recorder : public Observer {
 public:
  void OnAttempt(const AttemptEvent& e) override {
    int granted = 0;
    for (const MasterVote& v : *e.votes) {
      granted += v.kind == MasterVote::Kind::kGranted;
    }
    Add(absl::StrCat("attempt ", e.resource, " #", e.attempt, " ",
                     absl::StatusCodeToString(e.outcome.code()),
                     " granted=", granted, "/", e.votes->size()));
  }
  void OnAcquired(const AcquiredEvent& e) override {
    Add(absl::StrCat("acquired ", e.resource, " attempts=", e.attempts,
                     e.fence > 0 ? " fenced" : ""));
  }
  void OnAcquireFailed(const AcquireFailedEvent& e) override {
    Add(absl::StrCat("failed ", e.resource, " ",
                     absl::StatusCodeToString(e.status.code()),
                     " attempts=", e.attempts));
  }
  void OnExtended(const ExtendedEvent& e) override {
    Add(absl::StrCat("extended ", e.resource, " ",
                     absl::StatusCodeToString(e.status.code()),
                     e.keep_alive ? " keep-alive" : ""));
  }
  void OnLost(const LostEvent& e) override {
    Add(absl::StrCat("lost ", e.resource, " ",
                     absl::StatusCodeToString(e.reason.code())));
  }
  void OnReleased(const ReleasedEvent& e) override {
    Add(absl::StrCat("released ", e.resource,
                     " freed=", e.report->freed ? 1 : 0,
                     " whole=", e.report->pending == 0 ? 1 : 0));
  }
  void OnMaster(const MasterEvent& e) override {
    const char* kind = e.kind == MasterEvent::Kind::kConnected ? "connected"
                       : e.kind == MasterEvent::Kind::kDisconnected
                           ? "disconnected"
                           : (e.status.ok() ? "counts" : "held-back");
    Add(absl::StrCat("master ", e.index, " ", kind));
  }

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  int Count(const std::string& line) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& l : lines_) n += l == line;
    return n;
  }
  // Waits (bounded) until `line` was recorded `n` times.
  bool WaitFor(const std::string& line, int n = 1) const {
    for (int i = 0; i < 500; ++i) {
      if (Count(line) >= n) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

 private:
  void Add(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
  }
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

std::string Dump(const Recorder& r) {
  std::string out;
  for (const std::string& l : r.lines()) absl::StrAppend(&out, l, "\n");
  return out;
}

class ObserverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "kills its own masters";
    }
    auto cluster = RedisCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  std::unique_ptr<Redlock> MakeClient(std::shared_ptr<Observer> observer) {
    Options options = testing::TestOptions(cluster_->Uris());
    options.observer = std::move(observer);
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(ObserverTest, ReportsEachAttemptGrantFailureExtensionAndRelease) {
  auto recorder = std::make_shared<Recorder>();
  auto client = MakeClient(recorder);
  absl::StatusOr<Lock> lock = client->TryAcquire("job", absl::Seconds(10));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_FALSE(client->TryAcquire("job", absl::Seconds(10)).ok());
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(10)).ok());
  ASSERT_TRUE(client->Release(*lock, testing::WholeReport()).ok());

  const std::string dump = Dump(*recorder);
  EXPECT_EQ(recorder->Count("attempt job #1 OK granted=3/3") +
                recorder->Count("attempt job #1 OK granted=2/3"),
            1)
      << dump;
  EXPECT_EQ(recorder->Count("acquired job attempts=1"), 1) << dump;
  EXPECT_EQ(recorder->Count("attempt job #1 ABORTED granted=0/3"), 1) << dump;
  EXPECT_EQ(recorder->Count("failed job ABORTED attempts=1"), 1) << dump;
  EXPECT_EQ(recorder->Count("extended job OK"), 1) << dump;
  EXPECT_EQ(recorder->Count("released job freed=1 whole=1"), 1) << dump;
  for (int i = 0; i < 3; ++i) {
    // Connected once, and judged trustworthy once (a brand-new deployment
    // is marked trusted once every master answered).
    EXPECT_EQ(recorder->Count(absl::StrCat("master ", i, " connected")), 1)
        << dump;
    EXPECT_EQ(recorder->Count(absl::StrCat("master ", i, " counts")), 1)
        << dump;
  }
}

TEST_F(ObserverTest, ReportsAKeptAliveLockLostAndTheMastersThatWent) {
  auto recorder = std::make_shared<Recorder>();
  auto client = MakeClient(recorder);
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(2);
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(100);
  const absl::Status result = client->WithLock(
      "kept", acquire,
      [&](const Lock& lock) {
        EXPECT_TRUE(recorder->WaitFor("extended kept OK keep-alive"));
        for (int i : {1, 2}) EXPECT_TRUE(cluster_->server(i).Kill().ok());
        for (int i = 0; i < 500 && !lock.lost(); ++i) {
          absl::SleepFor(absl::Milliseconds(10));
        }
        return absl::OkStatus();
      },
      std::move(hold));
  EXPECT_FALSE(result.ok());
  const std::string dump = Dump(*recorder);
  EXPECT_EQ(recorder->Count("lost kept UNAVAILABLE"), 1) << dump;
  EXPECT_TRUE(recorder->WaitFor("master 1 disconnected")) << dump;
  EXPECT_TRUE(recorder->WaitFor("master 2 disconnected")) << dump;
  EXPECT_EQ(recorder->Count("master 0 disconnected"), 0) << dump;
  EXPECT_TRUE(recorder->WaitFor("master 1 held-back")) << dump;
}

TEST_F(ObserverTest, ReportsACancelledAcquisitionAsFailedCancelled) {
  auto recorder = std::make_shared<Recorder>();
  auto client = MakeClient(recorder);
  absl::StatusOr<Lock> held = client->TryAcquire("busy", absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(10);
  acquire.wait = absl::Seconds(30);
  acquire.cancel.Cancel();
  EXPECT_EQ(client->Acquire("busy", acquire).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(recorder->Count("failed busy CANCELLED attempts=0"), 1)
      << Dump(*recorder);
}

}  // namespace
}  // namespace redlock
