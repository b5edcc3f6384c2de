// Copyright 2026 The redlock Authors.
//
// SyncConnection: one blocking connection to one Redis server, on the
// library's own transport (src/transport/wire.h: TCP, TLS, Unix sockets, every
// bound against a hostile server), for tools that ask a master something and
// wait for the answer (`redlock status`, `redlock reconfigure`). Each has an
// event loop of its own, run only inside its calls. Not thread-safe; one per
// thread. Never used by the engine.

#ifndef REDLOCK_SRC_TRANSPORT_SYNC_CONNECTION_H_
#define REDLOCK_SRC_TRANSPORT_SYNC_CONNECTION_H_

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/algorithm/redis_reply.h"
#include "src/transport/runtime.h"
#include "src/transport/tls.h"

struct event_base;

namespace redlock::internal {

class SyncConnection final : private ConnectionObserver {
 public:
  // Connected (and the TLS handshake done) within `timeout`, or
  // kUnavailable / kDeadlineExceeded saying why not. No AUTH or SELECT:
  // the caller sends them. `tls` is needed for Transport::kTls.
  static absl::StatusOr<std::unique_ptr<SyncConnection>> Open(
      const MasterAddress& address, std::shared_ptr<const TlsContext> tls,
      absl::Duration timeout);
  ~SyncConnection() override;
  SyncConnection(const SyncConnection&) = delete;
  SyncConnection& operator=(const SyncConnection&) = delete;

  // Sends `argv` and waits at most `timeout` for its reply (an error reply
  // is a reply). kDeadlineExceeded or kUnavailable otherwise, and then the
  // connection is broken: every later call fails.
  absl::StatusOr<RedisReply> Command(const std::vector<std::string>& argv,
                                     absl::Duration timeout);

  // The TLS protocol and cipher, for a TLS connection.
  std::string TlsDescription() const;

 private:
  SyncConnection();
  // Runs the loop until `done()` or `timeout` has passed; false on timeout.
  template <typename Done>
  bool RunUntil(Done done, absl::Duration timeout);

  void OnConnect(absl::Status status) override;
  void OnReply(RedisReply reply) override;
  void OnLost(absl::Status why) override;

  event_base* base_;
  std::unique_ptr<Connection> connection_;
  std::optional<absl::Status> connected_;
  std::deque<RedisReply> replies_;
  absl::Status broken_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_SYNC_CONNECTION_H_
