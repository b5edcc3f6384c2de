// Copyright 2026 The redlock Authors.
//
// The clock shim inside a real redis-server: a fast or jumped wall clock
// makes the server expire keys early, and nothing else changes.

#include "tests/support/skewed_clock.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

namespace redlock::testing {
namespace {

class SkewedClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") +
                      "/redlock-clock-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { rmdir(dir_.c_str()); }

  // A server whose wall clock `clock` steers, and a client to it.
  void StartServer(const SkewedClock& clock) {
    RedisServer::Config config;
    config.env = clock.ServerEnv();
    auto server = RedisServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    Connect();
  }
  void Connect() {
    auto client = server_->Client();
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  // The server's TIME, as an absl::Time.
  absl::Time ServerTime() {
    auto reply = client_->Command({"TIME"});
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok() || reply->elements.size() != 2) return absl::InfinitePast();
    int64_t sec = 0, usec = 0;
    EXPECT_TRUE(absl::SimpleAtoi(reply->elements[0].str, &sec));
    EXPECT_TRUE(absl::SimpleAtoi(reply->elements[1].str, &usec));
    return absl::FromUnixSeconds(sec) + absl::Microseconds(usec);
  }

  // How long (true time) until `key` is gone, polling every 10ms; gives up
  // after `limit` and returns it.
  absl::Duration TimeUntilGone(const std::string& key, absl::Duration limit) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < limit) {
      auto v = client_->Get(key);
      EXPECT_TRUE(v.ok()) << v.status();
      if (v.ok() && !v->has_value()) return absl::Now() - start;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return limit;
  }

  std::string dir_;
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<RedisClient> client_;
};

TEST_F(SkewedClockTest, FastClockMakesKeysExpireSooner) {
  auto clock = SkewedClock::Create(dir_ + "/clock");
  ASSERT_TRUE(clock.ok()) << clock.status();
  StartServer(**clock);

  // At the true rate a 1.2s key outlives 0.7s of true time.
  ASSERT_TRUE(client_->Set("slow", "v", absl::Milliseconds(1200)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto v = client_->Get("slow");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->has_value()) << "a key expired early at the true rate";

  // At 4x a 2s key lives about 0.5s of true time.
  ASSERT_TRUE((*clock)->SetRate(4.0).ok());
  ASSERT_TRUE(client_->Set("fast", "v", absl::Seconds(2)).ok());
  const absl::Duration life = TimeUntilGone("fast", absl::Seconds(3));
  EXPECT_LT(life, absl::Milliseconds(1500))
      << "a 2s key on a 4x clock lived " << life;
  EXPECT_GT(life, absl::Milliseconds(300)) << life;
  EXPECT_NEAR((*clock)->rate(), 4.0, 1e-9);
}

TEST_F(SkewedClockTest, JumpMovesServerTimeAndExpiresKeysAlsoAfterRestart) {
  auto clock = SkewedClock::Create(dir_ + "/clock");
  ASSERT_TRUE(clock.ok()) << clock.status();
  StartServer(**clock);
  EXPECT_LT(absl::AbsDuration(ServerTime() - absl::Now()), absl::Seconds(1));

  ASSERT_TRUE(client_->Set("k", "v", absl::Seconds(60)).ok());
  (*clock)->Jump(absl::Seconds(30));
  const absl::Duration ahead = ServerTime() - absl::Now();
  EXPECT_GT(ahead, absl::Seconds(29)) << ahead;
  EXPECT_LT(ahead, absl::Seconds(31)) << ahead;
  EXPECT_NEAR(absl::ToDoubleSeconds((*clock)->Offset()), 30.0, 0.5);
  auto pttl = client_->Pttl("k");
  ASSERT_TRUE(pttl.ok()) << pttl.status();
  EXPECT_LE(*pttl, 30500) << "the key's expiry did not move with the clock";
  EXPECT_GT(*pttl, 25000);

  (*clock)->Jump(absl::Seconds(40));
  auto v = client_->Get("k");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->has_value()) << "a 60s key survived a 70s jump";

  // A restarted server maps the same page: still 70s ahead.
  ASSERT_TRUE(server_->Restart().ok());
  Connect();
  const absl::Duration after = ServerTime() - absl::Now();
  EXPECT_GT(after, absl::Seconds(69)) << after;
  EXPECT_LT(after, absl::Seconds(71)) << after;
}

TEST_F(SkewedClockTest, ShimWithoutControlPageKeepsTheTrueTime) {
  RedisServer::Config config;
  config.env = {"LD_PRELOAD=" + SkewedClock::ShimPath()};
  auto server = RedisServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = std::move(*server);
  Connect();
  EXPECT_LT(absl::AbsDuration(ServerTime() - absl::Now()), absl::Seconds(1));
  ASSERT_TRUE(client_->Set("k", "v", absl::Seconds(1)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto v = client_->Get("k");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->has_value());
}

TEST_F(SkewedClockTest, BadControlPageStopsTheServerFromStarting) {
  const std::string bogus = dir_ + "/not-a-page";
  FILE* f = fopen(bogus.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("this is not a clock control page, but it is long enough to map?", f);
  fclose(f);
  RedisServer::Config config;
  config.env = {"LD_PRELOAD=" + SkewedClock::ShimPath(),
                "REDLOCK_CLOCK_CONTROL=" + bogus};
  config.start_timeout = absl::Seconds(3);
  auto server = RedisServer::Start(config);
  unlink(bogus.c_str());
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("clock control page"),
            std::string::npos)
      << server.status();
}

TEST_F(SkewedClockTest, SetRateRejectsRatesOutsideTheRange) {
  auto clock = SkewedClock::Create(dir_ + "/clock");
  ASSERT_TRUE(clock.ok()) << clock.status();
  EXPECT_EQ((*clock)->SetRate(0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*clock)->SetRate(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*clock)->SetRate(std::nan("")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*clock)->SetRate(1e6).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NEAR((*clock)->rate(), 1.0, 1e-9);
  EXPECT_TRUE((*clock)->SetRate(0.5).ok());
}

}  // namespace
}  // namespace redlock::testing
