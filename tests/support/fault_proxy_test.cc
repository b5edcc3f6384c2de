// Copyright 2026 The redlock Authors.
//
// Tests of the fault proxy itself, on a real redis-server: that each fault it
// claims to inject is the fault a client sees, and that the server behind it
// stays healthy.

#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

namespace redlock::testing {
namespace {

// A raw TCP connection to 127.0.0.1, to see exactly what the proxy does to
// the socket (RST, FIN, refusal) without a Redis client in between.
class RawSocket {
 public:
  // Connected socket, or the errno of connect().
  static absl::StatusOr<RawSocket> Connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      const int err = errno;
      close(fd);
      return absl::ErrnoToStatus(err, "connect");
    }
    return RawSocket(fd);
  }

  RawSocket(RawSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  RawSocket& operator=(RawSocket&&) = delete;
  ~RawSocket() {
    if (fd_ >= 0) close(fd_);
  }

  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Reads until `want` bytes arrived, EOF, an error or `timeout`. Sets
  // `*error` to the errno of a failed read (0 for EOF or timeout) and `*eof`.
  std::string Read(size_t want, absl::Duration timeout, int* error, bool* eof) {
    std::string out;
    *error = 0;
    *eof = false;
    const absl::Time deadline = absl::Now() + timeout;
    while (out.size() < want) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) break;
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1,
               static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <= 0) {
        continue;
      }
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n < 0) {
        *error = errno;
        break;
      }
      if (n == 0) {
        *eof = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  explicit RawSocket(int fd) : fd_(fd) {}
  int fd_;
};

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs a server it starts and kills itself";
    }
    auto server = RedisServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto proxy = FaultProxy::Start({.upstream_port = server_->port()});
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
  }

  absl::StatusOr<std::unique_ptr<RedisClient>> ThroughProxy(
      absl::Duration timeout = absl::Seconds(2)) {
    return RedisClient::Connect("127.0.0.1", proxy_->port(), timeout);
  }

  // The server seen directly, around the proxy.
  std::unique_ptr<RedisClient> Direct() {
    auto client = server_->Client();
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<FaultProxy> proxy_;
};

TEST_F(FaultProxyTest, PassModeRelaysCommandsToTheServer) {
  auto client = ThroughProxy();
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Ping().ok());
  ASSERT_TRUE((*client)->Set("k", "through-the-proxy").ok());
  auto value = (*client)->Get("k");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "through-the-proxy");
  // It really reached the server.
  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(*direct->Get("k"), "through-the-proxy");

  const FaultProxy::Counters counters = proxy_->counters();
  EXPECT_EQ(counters.accepted, 1);
  EXPECT_EQ(counters.open_connections, 1);
  EXPECT_GT(counters.bytes_to_server, 0);
  EXPECT_GT(counters.bytes_to_client, 0);
  EXPECT_EQ(counters.resets, 0);
  EXPECT_EQ(counters.cuts, 0);
  EXPECT_EQ(proxy_->Uri(), absl::StrCat("redis://127.0.0.1:", proxy_->port()));
}

TEST_F(FaultProxyTest, ClosedClientConnectionIsClosedAndCounted) {
  {
    auto client = ThroughProxy();
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)->Ping().ok());
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (proxy_->counters().open_connections != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(proxy_->counters().open_connections, 0);
}

TEST_F(FaultProxyTest, LatencyDelaysARoundTripByAboutTheConfiguredAmount) {
  auto client = ThroughProxy();
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Ping().ok());  // Connected upstream already.
  proxy_->SetLatency(absl::Milliseconds(120), absl::Milliseconds(80));
  const absl::Time start = absl::Now();
  ASSERT_TRUE((*client)->Ping().ok());
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(160));  // 80% of 200ms.
  EXPECT_LT(took, absl::Seconds(1));         // Generous.

  proxy_->SetLatency(absl::ZeroDuration(), absl::ZeroDuration());
  ASSERT_TRUE((*client)->Ping().ok());
}

TEST_F(FaultProxyTest, LoweringTheLatencyKeepsTheOrderOfBytes) {
  auto raw = RawSocket::Connect(proxy_->port());
  ASSERT_TRUE(raw.ok()) << raw.status();
  proxy_->SetLatency(absl::Milliseconds(300), absl::ZeroDuration());
  ASSERT_TRUE(raw->Send("SET order first\r\n"));
  proxy_->SetLatency(absl::ZeroDuration(), absl::ZeroDuration());
  // Read after the latency change, but must not overtake the first SET.
  ASSERT_TRUE(raw->Send("SET order second\r\n"));
  int error = 0;
  bool eof = false;
  std::string replies = raw->Read(10, absl::Seconds(3), &error, &eof);
  EXPECT_EQ(replies, "+OK\r\n+OK\r\n");
  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(*direct->Get("order"), "second");
}

TEST_F(FaultProxyTest, BlackholeMakesAClientTimeOutWhileTheServerStaysHealthy) {
  auto client = ThroughProxy(absl::Milliseconds(300));
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Ping().ok());
  const int64_t to_server_before = proxy_->counters().bytes_to_server;

  proxy_->SetMode(FaultProxy::Mode::kBlackhole);
  absl::Status ping = (*client)->Ping();
  EXPECT_EQ(ping.code(), absl::StatusCode::kDeadlineExceeded) << ping;
  // A new connection is accepted (TCP looks fine) but never answered.
  auto fresh = ThroughProxy(absl::Milliseconds(300));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ping = (*fresh)->Ping();
  EXPECT_EQ(ping.code(), absl::StatusCode::kDeadlineExceeded) << ping;
  EXPECT_EQ(proxy_->counters().bytes_to_server, to_server_before);

  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_TRUE(direct->Ping().ok());

  proxy_->SetMode(FaultProxy::Mode::kPass);
  auto after = ThroughProxy();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE((*after)->Ping().ok());
}

TEST_F(FaultProxyTest, AConnectionThatLostBytesInABlackholeNeverPassesAgain) {
  auto raw = RawSocket::Connect(proxy_->port());
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_TRUE(raw->Send("PING\r\n"));
  int error = 0;
  bool eof = false;
  ASSERT_EQ(raw->Read(7, absl::Seconds(2), &error, &eof), "+PONG\r\n");
  proxy_->SetMode(FaultProxy::Mode::kBlackhole);
  ASSERT_TRUE(raw->Send("SET lost 1\r\n"));
  EXPECT_EQ(raw->Read(1, absl::Milliseconds(200), &error, &eof), "");
  proxy_->SetMode(FaultProxy::Mode::kPass);
  // Passing the next command would pair its reply with the lost one.
  ASSERT_TRUE(raw->Send("PING\r\n"));
  EXPECT_EQ(raw->Read(1, absl::Milliseconds(200), &error, &eof), "");
  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(*direct->Get("lost"), std::nullopt);
  auto fresh = ThroughProxy();
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE((*fresh)->Ping().ok());
}

TEST_F(FaultProxyTest, ResetModeResetsOpenAndNewConnections) {
  auto raw = RawSocket::Connect(proxy_->port());
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_TRUE(raw->Send("PING\r\n"));
  int error = 0;
  bool eof = false;
  ASSERT_EQ(raw->Read(7, absl::Seconds(2), &error, &eof), "+PONG\r\n");

  proxy_->SetMode(FaultProxy::Mode::kReset);
  raw->Read(1, absl::Seconds(2), &error, &eof);
  EXPECT_EQ(error, ECONNRESET) << "eof=" << eof;
  EXPECT_EQ(proxy_->counters().resets, 1);

  // A new connection is accepted and reset at once: the client sees a reset
  // (or EOF), never an answer.
  auto client = ThroughProxy(absl::Milliseconds(500));
  if (client.ok()) {
    absl::Status ping = (*client)->Ping();
    EXPECT_EQ(ping.code(), absl::StatusCode::kUnavailable) << ping;
  } else {
    EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable)
        << client.status();
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  while (proxy_->counters().resets < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(proxy_->counters().resets, 2);

  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_TRUE(direct->Ping().ok());
}

TEST_F(FaultProxyTest, ResetAllConnectionsResetsOnceAndKeepsPassing) {
  auto client = ThroughProxy();
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Ping().ok());
  proxy_->ResetAllConnections();
  absl::Status ping = (*client)->Ping();
  EXPECT_EQ(ping.code(), absl::StatusCode::kUnavailable) << ping;
  EXPECT_EQ(proxy_->counters().resets, 1);
  EXPECT_EQ(proxy_->counters().open_connections, 0);
  auto again = ThroughProxy();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->Ping().ok());
}

TEST_F(FaultProxyTest, RefuseGivesConnectionRefusedAndLeavingItListensAgain) {
  auto open = ThroughProxy();
  ASSERT_TRUE(open.ok()) << open.status();
  // Answered, so the proxy has accepted it (not still in the backlog, which
  // closing the listener would reset).
  ASSERT_TRUE((*open)->Ping().ok());
  const int port = proxy_->port();

  proxy_->SetMode(FaultProxy::Mode::kRefuse);
  auto refused = RawSocket::Connect(port);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "refused"))
      << refused.status();
  // Existing connections keep passing.
  EXPECT_TRUE((*open)->Ping().ok());

  proxy_->SetMode(FaultProxy::Mode::kPass);
  EXPECT_EQ(proxy_->port(), port);
  auto again = ThroughProxy();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->Ping().ok());
}

TEST_F(FaultProxyTest, CutAfterBytesForwardsExactlyTheLimitThenResets) {
  proxy_->CutAfterBytes(20);
  auto raw = RawSocket::Connect(proxy_->port());
  ASSERT_TRUE(raw.ok()) << raw.status();
  // 14 bytes to the server, then 7 back would make 21: the last byte of the
  // reply is not forwarded and the connection is reset.
  ASSERT_TRUE(raw->Send("*1\r\n$4\r\nPING\r\n"));
  int error = 0;
  bool eof = false;
  std::string got = raw->Read(7, absl::Seconds(2), &error, &eof);
  EXPECT_TRUE(error == ECONNRESET || eof) << "error=" << error;
  EXPECT_NE(got, "+PONG\r\n");
  const FaultProxy::Counters counters = proxy_->counters();
  EXPECT_EQ(counters.cuts, 1);
  EXPECT_EQ(counters.bytes_to_server, 14);
  EXPECT_EQ(counters.bytes_to_client, 6);
  EXPECT_EQ(counters.open_connections, 0);

  proxy_->CutAfterBytes(0);
  auto client = ThroughProxy();
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Ping().ok());
  EXPECT_TRUE((*client)->Ping().ok());
}

TEST_F(FaultProxyTest, UpstreamDownClosesTheClientSide) {
  ASSERT_TRUE(server_->Kill().ok());
  auto raw = RawSocket::Connect(proxy_->port());
  ASSERT_TRUE(raw.ok()) << raw.status();  // The proxy itself accepts.
  raw->Send("PING\r\n");
  int error = 0;
  bool eof = false;
  std::string got = raw->Read(1, absl::Seconds(2), &error, &eof);
  EXPECT_EQ(got, "");
  // Closed, not left hanging.
  EXPECT_TRUE(eof || error == ECONNRESET) << "error=" << error;
}

TEST(FaultProxyStartTest, RejectsNonLoopbackUpstreamAndBadPorts) {
  FaultProxy::Config config;
  config.upstream_host = "10.1.2.3";
  config.upstream_port = 6379;
  EXPECT_EQ(FaultProxy::Start(config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.upstream_host = "db.example.com";
  EXPECT_EQ(FaultProxy::Start(config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.upstream_host = "127.0.0.1";
  config.upstream_port = 0;
  EXPECT_EQ(FaultProxy::Start(config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.upstream_port = 6379;
  config.listen_port = 70000;
  EXPECT_EQ(FaultProxy::Start(config).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace redlock::testing
