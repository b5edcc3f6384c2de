// Copyright 2026 The redlock Authors.
//
// Tests of the test fixture itself: that the faults it claims to inject are
// the faults a client sees, and that it leaves no process or directory behind.

#include "tests/support/redis_server.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/redis_client.h"

namespace redlock::testing {
namespace {

absl::Status ToStatus(const absl::Status& status) { return status; }
template <typename T>
absl::Status ToStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

#define ASSERT_OK(expr)                                                      \
  do {                                                                       \
    const absl::Status assert_ok_status = ToStatus(expr);                    \
    ASSERT_TRUE(assert_ok_status.ok()) << #expr << ": " << assert_ok_status; \
  } while (0)

std::unique_ptr<RedisServer> MustStart(RedisServer::Config config = {}) {
  absl::StatusOr<std::unique_ptr<RedisServer>> server =
      RedisServer::Start(std::move(config));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

std::unique_ptr<RedisClient> MustConnect(
    const RedisServer& server, absl::Duration timeout = absl::Seconds(2)) {
  absl::StatusOr<std::unique_ptr<RedisClient>> client = server.Client(timeout);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

// True once `pid` no longer names a live process. A zombie counts as gone:
// after its parent dies it waits for whoever adopts it to reap it.
bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() &&
         line[paren + 2] == 'Z';
}

bool WaitUntilGone(pid_t pid, absl::Duration timeout) {
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (!ProcessGone(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST(RedisServerTest, StartedServerAnswersPing) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->running());
  EXPECT_GT(server->pid(), 0);
  EXPECT_GT(server->port(), 0);
  EXPECT_EQ(server->Address(), absl::StrCat("127.0.0.1:", server->port()));
  EXPECT_EQ(server->Uri(), absl::StrCat("redis://127.0.0.1:", server->port()));
  EXPECT_TRUE(std::filesystem::is_directory(server->dir()));

  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->Ping());
  absl::StatusOr<int64_t> keys = client->Dbsize();
  ASSERT_OK(keys);
  EXPECT_EQ(*keys, 0);
}

TEST(RedisServerTest, ClientReadsWhatItWrites) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);

  ASSERT_OK(client->Set("plain", "value"));
  ASSERT_OK(client->Set("expiring", "value", absl::Seconds(30)));

  absl::StatusOr<std::optional<std::string>> value = client->Get("plain");
  ASSERT_OK(value);
  EXPECT_EQ(*value, std::optional<std::string>("value"));
  value = client->Get("missing");
  ASSERT_OK(value);
  EXPECT_EQ(*value, std::nullopt);

  absl::StatusOr<int64_t> pttl = client->Pttl("plain");
  ASSERT_OK(pttl);
  EXPECT_EQ(*pttl, -1);
  pttl = client->Pttl("expiring");
  ASSERT_OK(pttl);
  EXPECT_GT(*pttl, 0);
  EXPECT_LE(*pttl, 30000);
  pttl = client->Pttl("missing");
  ASSERT_OK(pttl);
  EXPECT_EQ(*pttl, -2);

  absl::StatusOr<Reply> reply = client->Command({"NOSUCHCOMMAND"});
  ASSERT_OK(reply);
  EXPECT_EQ(reply->type, Reply::Type::kError) << reply->DebugString();

  reply = client->Command({"MGET", "plain", "missing"});
  ASSERT_OK(reply);
  ASSERT_EQ(reply->type, Reply::Type::kArray);
  ASSERT_EQ(reply->elements.size(), 2u);
  EXPECT_EQ(reply->elements[0].str, "value");
  EXPECT_EQ(reply->elements[1].type, Reply::Type::kNil);
}

TEST(RedisServerTest, SecondServerGetsAnotherPort) {
  std::unique_ptr<RedisServer> first = MustStart();
  std::unique_ptr<RedisServer> second = MustStart();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first->port(), second->port());
  EXPECT_NE(first->dir(), second->dir());
  EXPECT_NE(first->pid(), second->pid());
}

TEST(RedisServerTest, FixedPortTakenByAnotherServerFails) {
  std::unique_ptr<RedisServer> first = MustStart();
  ASSERT_NE(first, nullptr);
  RedisServer::Config config;
  config.port = first->port();
  absl::StatusOr<std::unique_ptr<RedisServer>> second =
      RedisServer::Start(config);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  // The first one is untouched.
  std::unique_ptr<RedisClient> client = MustConnect(*first);
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Ping().ok());
}

TEST(RedisServerTest, KillMakesConnectsFail) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  const pid_t pid = server->pid();
  ASSERT_OK(server->Kill());
  EXPECT_FALSE(server->running());
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);

  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect("127.0.0.1", server->port(), absl::Seconds(1));
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable)
      << client.status();
  EXPECT_EQ(server->Kill().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RedisServerTest, KillBreaksAnOpenConnection) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->Ping());
  ASSERT_OK(server->Kill());
  // The first write after the reset may succeed or raise SIGPIPE; neither
  // kills the test binary, and no command succeeds.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Reply> reply = client->Command({"PING"});
    EXPECT_FALSE(reply.ok());
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable)
        << reply.status();
  }
}

TEST(RedisServerTest, StopMakesCommandsTimeOutAndContinueAnswersAgain) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<RedisClient> client =
      MustConnect(*server, absl::Milliseconds(200));
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->Ping());

  ASSERT_OK(server->Stop());
  EXPECT_TRUE(server->stopped());
  EXPECT_TRUE(server->running());
  const auto before = std::chrono::steady_clock::now();
  absl::StatusOr<Reply> reply = client->Command({"PING"});
  const absl::Duration took =
      absl::FromChrono(std::chrono::steady_clock::now() - before);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded)
      << reply.status();
  EXPECT_GE(took, absl::Milliseconds(150));
  EXPECT_LT(took, absl::Seconds(5));

  // A new connection is accepted by the kernel but not answered either.
  absl::StatusOr<std::unique_ptr<RedisClient>> fresh =
      server->Client(absl::Milliseconds(200));
  ASSERT_OK(fresh);
  EXPECT_EQ((*fresh)->Ping().code(), absl::StatusCode::kDeadlineExceeded);

  ASSERT_OK(server->Continue());
  EXPECT_FALSE(server->stopped());
  std::unique_ptr<RedisClient> again = MustConnect(*server);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->Ping().ok());
  EXPECT_EQ(server->Continue().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RedisServerTest, RestartWithoutPersistenceLosesKeys) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  const pid_t old_pid = server->pid();
  {
    std::unique_ptr<RedisClient> client = MustConnect(*server);
    ASSERT_NE(client, nullptr);
    ASSERT_OK(client->Set("key", "value"));
  }
  ASSERT_OK(server->Restart());
  EXPECT_EQ(server->port(), port);
  EXPECT_NE(server->pid(), old_pid);
  EXPECT_TRUE(WaitUntilGone(old_pid, absl::Seconds(1)));

  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<std::optional<std::string>> value = client->Get("key");
  ASSERT_OK(value);
  EXPECT_EQ(*value, std::nullopt);
}

TEST(RedisServerTest, RestartWithAofAlwaysKeepsKeys) {
  RedisServer::Config config;
  config.persistence = RedisServer::Persistence::kAofAlways;
  std::unique_ptr<RedisServer> server = MustStart(std::move(config));
  ASSERT_NE(server, nullptr);
  {
    std::unique_ptr<RedisClient> client = MustConnect(*server);
    ASSERT_NE(client, nullptr);
    ASSERT_OK(client->Set("key", "value"));
    ASSERT_OK(client->Set("lock", "token", absl::Seconds(60)));
  }
  ASSERT_OK(server->Restart());  // SIGKILL: no chance to flush at exit.

  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<std::optional<std::string>> value = client->Get("key");
  ASSERT_OK(value);
  EXPECT_EQ(*value, std::optional<std::string>("value"));
  absl::StatusOr<int64_t> pttl = client->Pttl("lock");
  ASSERT_OK(pttl);
  EXPECT_GT(*pttl, 0);
  EXPECT_LE(*pttl, 60000);
}

TEST(RedisServerTest, RestartAfterKillAndWhileStoppedWorks) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  ASSERT_OK(server->Kill());
  ASSERT_OK(server->Restart());
  EXPECT_TRUE(server->running());
  ASSERT_OK(server->Stop());
  ASSERT_OK(server->Restart());
  EXPECT_FALSE(server->stopped());
  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Ping().ok());
}

TEST(RedisServerTest, ShutdownExitsGracefully) {
  RedisServer::Config config;
  config.persistence = RedisServer::Persistence::kAofAlways;
  std::unique_ptr<RedisServer> server = MustStart(std::move(config));
  ASSERT_NE(server, nullptr);
  const pid_t pid = server->pid();
  ASSERT_OK(server->Stop());  // Shutdown must wake it first.
  ASSERT_OK(server->Shutdown());
  EXPECT_FALSE(server->running());
  EXPECT_TRUE(ProcessGone(pid));
  EXPECT_TRUE(absl::StrContains(server->LogTail(50), "ready to exit"))
      << server->LogTail(50);
}

TEST(RedisServerTest, RequirepassRejectsUnauthenticatedCommands) {
  RedisServer::Config config;
  config.requirepass = "s3cret/p@ss";
  std::unique_ptr<RedisServer> server = MustStart(std::move(config));
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->Uri(), absl::StrCat("redis://:s3cret%2Fp%40ss@127.0.0.1:",
                                        server->port()));

  absl::StatusOr<std::unique_ptr<RedisClient>> anonymous =
      RedisClient::Connect("127.0.0.1", server->port());
  ASSERT_OK(anonymous);
  absl::StatusOr<Reply> reply = (*anonymous)->Command({"GET", "key"});
  ASSERT_OK(reply);
  EXPECT_EQ(reply->type, Reply::Type::kError);
  EXPECT_TRUE(absl::StartsWith(reply->str, "NOAUTH")) << reply->str;

  absl::StatusOr<std::unique_ptr<RedisClient>> wrong = RedisClient::Connect(
      "127.0.0.1", server->port(), absl::Seconds(2), "wrong");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kUnauthenticated)
      << wrong.status();

  std::unique_ptr<RedisClient> client = MustConnect(*server);
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->Ping().ok());
}

TEST(RedisServerTest, DestructorRemovesDirectoryAndProcess) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  const pid_t pid = server->pid();
  const std::string dir = server->dir();
  ASSERT_TRUE(std::filesystem::exists(dir));
  server.reset();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(RedisServerTest, DestroyingAStoppedServerLeavesNothing) {
  std::unique_ptr<RedisServer> server = MustStart();
  ASSERT_NE(server, nullptr);
  const pid_t pid = server->pid();
  const std::string dir = server->dir();
  ASSERT_OK(server->Stop());
  server.reset();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

// The death-test child starts a server, records its PID and directory in a
// file named for the parent test process, and aborts: the SIGABRT handler (or,
// failing that, PR_SET_PDEATHSIG) must take the server down with it.
TEST(RedisServerDeathTest, AbortingTestBinaryKillsItsServers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string base =
      tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  const std::string record =
      absl::StrCat(base, "/redlock-death-test-", getpid(), ".txt");
  std::remove(record.c_str());
  EXPECT_DEATH(
      {
        absl::StatusOr<std::unique_ptr<RedisServer>> server =
            RedisServer::Start({});
        if (!server.ok()) std::_Exit(3);
        std::ofstream(
            absl::StrCat(base, "/redlock-death-test-", getppid(), ".txt"))
            << (*server)->pid() << "\n"
            << (*server)->dir() << "\n";
        std::abort();
      },
      "");
  std::ifstream in(record);
  pid_t pid = 0;
  std::string dir;
  in >> pid >> dir;
  std::remove(record.c_str());
  ASSERT_GT(pid, 0) << "the death-test child did not start its server";
  EXPECT_TRUE(WaitUntilGone(pid, absl::Seconds(5)))
      << "redis-server " << pid << " outlived the test process that started it";
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(RedisClusterTest, FiveServersHaveDistinctPorts) {
  absl::StatusOr<std::unique_ptr<RedisCluster>> cluster =
      RedisCluster::Start(5, {});
  ASSERT_OK(cluster);
  RedisCluster& masters = **cluster;
  ASSERT_EQ(masters.size(), 5);
  std::set<int> ports;
  std::set<std::string> uris;
  for (int i = 0; i < masters.size(); ++i) {
    ports.insert(masters.server(i).port());
    absl::StatusOr<std::unique_ptr<RedisClient>> client = masters.Client(i);
    ASSERT_OK(client);
    EXPECT_TRUE((*client)->Ping().ok());
  }
  for (const std::string& uri : masters.Uris()) uris.insert(uri);
  EXPECT_EQ(ports.size(), 5u);
  EXPECT_EQ(uris.size(), 5u);
}

TEST(RedisClusterTest, RejectsEmptyCluster) {
  EXPECT_EQ(RedisCluster::Start(0, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RedisServerTest, ExternalMastersComeFromTheEnvironment) {
  const char* saved = std::getenv("REDLOCK_TEST_MASTERS");
  const std::optional<std::string> previous =
      saved != nullptr ? std::optional<std::string>(saved) : std::nullopt;

  unsetenv("REDLOCK_TEST_MASTERS");
  EXPECT_FALSE(RedisServer::UsingExternalMasters());
  EXPECT_TRUE(RedisServer::ExternalMasters().empty());

  setenv("REDLOCK_TEST_MASTERS",
         " redis://10.0.0.1:6379, redis://10.0.0.2:6379,,", 1);
  EXPECT_TRUE(RedisServer::UsingExternalMasters());
  EXPECT_EQ(RedisServer::ExternalMasters(),
            (std::vector<std::string>{"redis://10.0.0.1:6379",
                                      "redis://10.0.0.2:6379"}));

  if (previous.has_value()) {
    setenv("REDLOCK_TEST_MASTERS", previous->c_str(), 1);
  } else {
    unsetenv("REDLOCK_TEST_MASTERS");
  }
}

}  // namespace
}  // namespace redlock::testing
