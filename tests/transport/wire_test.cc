// Copyright 2026 The redlock Authors.
//
// The library's own connection (src/transport/wire.h) alone: the socket's
// behaviour toward the caller's process. Its reply reader's bounds are in
// tests/transport/reply_reader_test.cc. The same connection
// against misbehaving servers, inside the whole client, is in
// tests/transport/hostile_master_test.cc.

#include "src/transport/wire.h"

#include <event2/event.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redlock/options.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/transport/reply_reader.h"
#include "src/transport/runtime.h"

namespace redlock {
namespace {

using internal::RedisReply;
using internal::ReplyReader;
using ::testing::HasSubstr;

// A Unix socket that accepts one connection and closes it at once.
class ClosingPeer {
 public:
  ClosingPeer() {
    char dir[] = "/tmp/redlock-wire-XXXXXX";
    dir_ = mkdtemp(dir) != nullptr ? dir : "";
    path_ = dir_ + "/peer.sock";
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd_, 4) != 0) {
      path_.clear();
    }
  }
  ~ClosingPeer() {
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  // Accepts the pending connection and closes it.
  bool AcceptAndClose() {
    const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return false;
    close(conn);
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

struct Outcome final : internal::ConnectionObserver {
  void OnConnect(absl::Status status) override { connected = status; }
  void OnReply(RedisReply) override { ++replies; }
  void OnLost(absl::Status why) override { lost = why; }
  absl::Status connected = absl::UnknownError("no OnConnect");
  absl::Status lost = absl::OkStatus();
  int replies = 0;
};

TEST(WireConnectionTest, WritingToAPeerThatWentAwayRaisesNoSigpipe) {
  // The caller's thread, as an AsyncRedlock's: SIGPIPE neither blocked nor
  // ignored, so a write(2) to the closed socket would end this process.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ASSERT_EQ(sigaction(SIGPIPE, &dfl, nullptr), 0);
  sigset_t none;
  sigemptyset(&none);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &none, nullptr), 0);

  ClosingPeer peer;
  ASSERT_FALSE(peer.path().empty());
  event_base* base = event_base_new();
  ASSERT_NE(base, nullptr);
  MasterAddress address;
  address.transport = MasterAddress::Transport::kUnix;
  address.path = peer.path();
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  ASSERT_TRUE(connection.ok()) << connection.status();
  for (int i = 0; i < 20 && !outcome.connected.ok(); ++i) {
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
  }
  ASSERT_TRUE(outcome.connected.ok()) << outcome.connected;
  ASSERT_TRUE(peer.AcceptAndClose());
  // Queued in this turn; the send at its end meets the closed peer (EPIPE)
  // before the read event sees the close.
  ASSERT_TRUE((*connection)->Send({"PING"}));
  for (int i = 0; i < 20 && outcome.lost.ok(); ++i) {
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
  }
  EXPECT_FALSE(outcome.lost.ok());
  EXPECT_EQ(outcome.replies, 0);
  connection->reset();
  event_base_free(base);
}

TEST(WireConnectionTest, AMissingUnixSocketFailsAtOnceSayingWhy) {
  event_base* base = event_base_new();
  MasterAddress address;
  address.transport = MasterAddress::Transport::kUnix;
  address.path = "/nonexistent/redlock/redis.sock";
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(connection.status().message(),
              HasSubstr("No such file or directory"));
  event_base_free(base);
}

TEST(WireConnectionTest, ATlsMasterWithoutATlsContextIsRefused) {
  event_base* base = event_base_new();
  MasterAddress address;
  address.transport = MasterAddress::Transport::kTls;
  address.host = "127.0.0.1";
  address.port = 1;
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kFailedPrecondition);
  event_base_free(base);
}

}  // namespace
}  // namespace redlock
