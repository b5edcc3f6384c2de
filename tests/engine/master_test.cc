// Copyright 2026 The redlock Authors.
//
// One master's connection on a real redis-server: replies, its own timeouts,
// reconnection, the handshake (AUTH, SELECT, SCRIPT LOAD) and the EVAL
// fallback after SCRIPT FLUSH.

#include "src/engine/master.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "src/algorithm/scripts.h"
#include "src/transport/libevent_runtime.h"
#include "tests/support/hostile_peer.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"

namespace redlock::internal {
namespace {

using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisServer;

class MasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop and kill";
    }
    StartServer({});
  }

  void StartServer(RedisServer::Config config) {
    auto server = RedisServer::Start(std::move(config));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  MasterConfig Config(const std::string& uri) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    EXPECT_TRUE(address.ok()) << address.status();
    MasterConfig config;
    config.address = *address;
    config.request_timeout = absl::Milliseconds(200);
    config.connect_timeout = absl::Milliseconds(500);
    config.stalled_timeout = absl::Seconds(5);
    config.backoff.initial = absl::Milliseconds(10);
    config.backoff.max = absl::Milliseconds(50);
    return config;
  }

  void MakeMaster(MasterConfig config) {
    if (runtime_ == nullptr) {
      runtime_ = std::make_unique<LibeventRuntime>(loop_.base());
    }
    master_ = std::make_unique<Master>(runtime_.get(), std::move(config));
  }

  // Sends and waits for the answer.
  absl::StatusOr<RedisReply> Call(const Command& command,
                                  absl::Duration timeout = absl::Seconds(5)) {
    std::optional<absl::StatusOr<RedisReply>> result;
    master_->Send(command, [&](absl::StatusOr<RedisReply> r) {
      result.emplace(std::move(r));
    });
    EXPECT_TRUE(loop_.RunUntil([&] { return result.has_value(); }, timeout));
    if (!result.has_value()) return absl::InternalError("no answer");
    return *std::move(result);
  }

  std::optional<std::string> Get(const std::string& key, int db = 0) {
    auto client = server_->Client();
    EXPECT_TRUE(client.ok()) << client.status();
    if (db != 0)
      (*client)->Command({"SELECT", std::to_string(db)}).IgnoreError();
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }

  LoopRunner loop_;
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<LibeventRuntime> runtime_;
  std::unique_ptr<Master> master_;
};

TEST_F(MasterTest, SetsTheKeyAndReturnsTheReply) {
  MakeMaster(Config(server_->Uri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "tok1", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->type, RedisReply::Type::kStatus);
  EXPECT_EQ(reply->str, "OK");
  EXPECT_EQ(Get("k"), "tok1");
  EXPECT_TRUE(master_->ready());
}

TEST_F(MasterTest, CallbackNeverRunsBeforeSendReturns) {
  ASSERT_TRUE(server_->Kill().ok());
  MakeMaster(Config(server_->Uri()));
  loop_.RunFor(absl::Milliseconds(50));  // Let the connect fail.
  bool called = false;
  absl::Status status;
  master_->Send(AcquireCommand("k", "t", absl::Seconds(1)),
                [&](absl::StatusOr<RedisReply> r) {
                  called = true;
                  status = r.status();
                });
  EXPECT_FALSE(called);
  ASSERT_TRUE(loop_.RunUntil([&] { return called; }));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("refused"), std::string::npos) << status;
}

TEST_F(MasterTest, ScriptFallsBackToEvalAfterScriptFlush) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("k", "tok", absl::Seconds(10))).ok());
  auto client = server_->Client();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Command({"SCRIPT", "FLUSH"}).ok());
  absl::StatusOr<RedisReply> reply = Call(ReleaseCommand("k", "tok"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->type, RedisReply::Type::kInteger);
  EXPECT_EQ(reply->integer, 1);
  EXPECT_EQ(master_->counters().noscript_fallbacks, 1);
  EXPECT_EQ(Get("k"), std::nullopt);
  // EVAL cached the script again: the next call needs no fallback.
  ASSERT_TRUE(Call(ReleaseCommand("k", "tok")).ok());
  EXPECT_EQ(master_->counters().noscript_fallbacks, 1);
}

TEST_F(MasterTest, StoppedServerIsATimeoutAndTheQueuedReleaseStillLands) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  absl::StatusOr<RedisReply> set =
      Call(AcquireCommand("k", "late", absl::Seconds(30)));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kDeadlineExceeded)
      << set.status();
  // The release queues behind the SET the server has not run yet.
  std::optional<absl::StatusOr<RedisReply>> release;
  master_->Send(ReleaseCommand("k", "late"),
                [&](absl::StatusOr<RedisReply> r) { release.emplace(r); });
  loop_.RunFor(absl::Milliseconds(20));
  ASSERT_TRUE(server_->Continue().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return release.has_value(); }));
  // Either it answered in time or it timed out; on the server the SET ran
  // first and the release after it, so no key is left.
  EXPECT_EQ(Get("k"), std::nullopt);
}

TEST_F(MasterTest, ServerStoppedBeforeConnectingTimesOutAtTheRequestTimeout) {
  // The kernel completes the TCP handshake, so the connection "succeeds";
  // only the handshake steps and our request hang. The request must fail at
  // request_timeout (200ms), not at stalled_timeout (5s).
  ASSERT_TRUE(server_->Stop().ok());
  MakeMaster(Config(server_->Uri()));
  // Connected, with only the handshake pending when the request comes.
  loop_.RunFor(absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded)
      << reply.status();
  EXPECT_LT(took, absl::Seconds(2));  // Generous: not the 5s stall.
  ASSERT_TRUE(server_->Continue().ok());
}

TEST_F(MasterTest, StalledConnectionIsClosedFlushedAndReconnected) {
  MasterConfig config = Config(server_->Uri());
  config.stalled_timeout = absl::Milliseconds(400);
  MakeMaster(config);
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_EQ(
      Call(AcquireCommand("k", "late", absl::Seconds(30))).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  std::optional<absl::Status> release;
  master_->Send(ReleaseCommand("k", "late"),
                [&](absl::StatusOr<RedisReply> r) { release = r.status(); });
  // The stalled connection is closed after 400ms...
  ASSERT_TRUE(loop_.RunUntil([&] { return !master_->ready(); }));
  ASSERT_TRUE(server_->Continue().ok());
  // ...and a new one is made once the server answers again.
  ASSERT_TRUE(loop_.RunUntil([&] { return master_->ready(); }));
  EXPECT_GE(master_->counters().connects, 2);
  ASSERT_TRUE(release.has_value());
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k2", "fresh", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  // The release was written before closing: the late SET left no key.
  EXPECT_EQ(Get("k"), std::nullopt);
}

TEST_F(MasterTest, KilledServerFailsRequestsThenReconnectsAfterRestart) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Kill().ok());
  loop_.RunFor(absl::Milliseconds(30));
  absl::StatusOr<RedisReply> down =
      Call(AcquireCommand("k", "t", absl::Seconds(1)));
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(server_->Restart().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return master_->ready(); }));
  absl::StatusOr<RedisReply> up =
      Call(AcquireCommand("k", "t", absl::Seconds(1)));
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->str, "OK");
}

TEST_F(MasterTest, DestroyingTheMasterAnswersPendingRequestsCancelled) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  int calls = 0;
  absl::Status status;
  master_->Send(AcquireCommand("k", "t", absl::Seconds(1)),
                [&](absl::StatusOr<RedisReply> r) {
                  ++calls;
                  status = r.status();
                });
  master_.reset();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(server_->Continue().ok());
}

TEST_F(MasterTest, SelectsTheDatabaseFromTheUri) {
  MakeMaster(Config(server_->Uri() + "/3"));
  ASSERT_TRUE(Call(AcquireCommand("k", "in-db-3", absl::Seconds(10))).ok());
  EXPECT_EQ(Get("k", 0), std::nullopt);
  EXPECT_EQ(Get("k", 3), "in-db-3");
}

class MasterAuthTest : public MasterTest {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can configure";
    }
    RedisServer::Config config;
    config.requirepass = "s3cret";
    StartServer(config);
  }
  std::string PlainUri() const {
    return "redis://127.0.0.1:" + std::to_string(server_->port());
  }
};

TEST_F(MasterAuthTest, RightPasswordWorks) {
  MakeMaster(Config(server_->Uri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->str, "OK");
}

TEST_F(MasterAuthTest, WrongPasswordIsAClearError) {
  MakeMaster(
      Config("redis://:wrong@127.0.0.1:" + std::to_string(server_->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnauthenticated)
      << reply.status();
  EXPECT_NE(reply.status().message().find("AUTH failed"), std::string::npos)
      << reply.status();
  EXPECT_NE(reply.status().message().find("WRONGPASS"), std::string::npos)
      << reply.status();
  EXPECT_FALSE(master_->ready());
}

TEST_F(MasterAuthTest, MissingPasswordIsANoauthError) {
  MakeMaster(Config(PlainUri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("NOAUTH"), std::string::npos)
      << reply.status();
}

TEST_F(MasterAuthTest, AclUserAndPasswordWork) {
  auto admin = server_->Client();
  ASSERT_TRUE(admin.ok()) << admin.status();
  auto acl = (*admin)->Command(
      {"ACL", "SETUSER", "locker", "on", ">pw", "~*", "+@all"});
  ASSERT_TRUE(acl.ok() && !acl->is_error()) << acl->DebugString();
  MakeMaster(
      Config("redis://locker:pw@127.0.0.1:" + std::to_string(server_->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->str, "OK");
}

TEST_F(MasterTest, ConnectionsAreNotInheritedByChildProcesses) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("k", "t", absl::Seconds(10))).ok());
  // Every socket of this process connected to the server's port must be
  // close-on-exec.
  int checked = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
        peer.sin_family != AF_INET || ntohs(peer.sin_port) != server_->port()) {
      continue;
    }
    // The test's own blocking clients are closed by now; only the master's
    // connection remains.
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC) << "fd " << fd;
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

TEST_F(MasterTest, HugeArrayHeaderClosesTheConnectionInsteadOfAllocating) {
  auto peer = std::make_unique<testing::HugeHeaderPeer>();
  ASSERT_NE(peer->port(), 0);
  MakeMaster(Config("redis://127.0.0.1:" + std::to_string(peer->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(master_->last_error().message().find("reply refused"),
            std::string::npos)
      << "reply: " << reply.status()
      << "; last error: " << master_->last_error();
  EXPECT_FALSE(master_->ready());
  master_.reset();  // Closes the connection, so the peer's thread ends.
}

}  // namespace
}  // namespace redlock::internal
