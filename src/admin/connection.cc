// Copyright 2026 The redlock Authors.

#include "src/admin/connection.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/config/options_internal.h"
#include "src/transport/sync_connection.h"
#include "src/transport/tls.h"

namespace redlock::admin {

absl::StatusOr<std::vector<MasterAddress>> ResolveMasters(
    const Options& options, std::vector<std::string> uris) {
  Options resolved = options;
  resolved.masters = std::move(uris);
  if (absl::Status s = ResolveMasterHosts(resolved); !s.ok()) return s;
  return internal::ParseMasters(resolved, /*require_numeric_hosts=*/true);
}

absl::Status CheckTls(const TlsOptions& tls) {
  return internal::TlsContext::Create(tls).status();
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(
    const MasterAddress& address, const Timeouts& timeouts) {
  std::shared_ptr<const internal::TlsContext> tls;
  if (address.transport == MasterAddress::Transport::kTls) {
    absl::StatusOr<std::shared_ptr<internal::TlsContext>> made =
        internal::TlsContext::Create(timeouts.tls);
    if (!made.ok()) return made.status();
    tls = *std::move(made);
  }
  absl::StatusOr<std::unique_ptr<internal::SyncConnection>> sync =
      internal::SyncConnection::Open(address, std::move(tls), timeouts.connect);
  if (!sync.ok()) return sync.status();
  auto connection =
      std::unique_ptr<Connection>(new Connection(*std::move(sync), timeouts));
  if (address.has_password) {
    std::vector<std::string> auth = {"AUTH"};
    if (!address.user.empty()) auth.push_back(address.user);
    auth.push_back(address.password);
    absl::StatusOr<Reply> reply = connection->Command(auth);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      return absl::UnauthenticatedError(
          absl::StrCat("AUTH failed: ", reply->str));
    }
  }
  if (address.db != 0) {
    absl::StatusOr<Reply> reply =
        connection->Command({"SELECT", absl::StrCat(address.db)});
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      return absl::FailedPreconditionError(
          absl::StrCat("SELECT failed: ", reply->str));
    }
  }
  return connection;
}

Connection::Connection(std::unique_ptr<internal::SyncConnection> connection,
                       const Timeouts& timeouts)
    : connection_(std::move(connection)), timeouts_(timeouts) {}

Connection::~Connection() = default;

absl::StatusOr<Reply> Connection::Command(
    const std::vector<std::string>& args) {
  return connection_->Command(args, timeouts_.command);
}

std::string Connection::TlsDescription() const {
  return connection_->TlsDescription();
}

void ForEachInParallel(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

ConnectionIo::ConnectionIo(const std::vector<MasterAddress>& addresses,
                           const Timeouts& timeouts)
    : addresses_(addresses),
      timeouts_(timeouts),
      connections_(addresses.size()) {}

ConnectionIo::~ConnectionIo() = default;

absl::StatusOr<internal::RedisReply> ConnectionIo::Call(
    int server, const std::vector<std::string>& argv) {
  std::unique_ptr<Connection>& c = connections_[server];
  if (c == nullptr) {
    absl::StatusOr<std::unique_ptr<Connection>> opened =
        Connection::Open(addresses_[server], timeouts_);
    if (!opened.ok()) return opened.status();
    c = *std::move(opened);
  }
  absl::StatusOr<Reply> reply = c->Command(argv);
  // Failed for good (Connection::Command); a later call opens another.
  if (!reply.ok()) c.reset();
  return reply;
}

void ConnectionIo::ForEach(size_t n, const std::function<void(size_t)>& fn) {
  ForEachInParallel(n, fn);
}

}  // namespace redlock::admin
