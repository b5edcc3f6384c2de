// Copyright 2026 The redlock Authors.

#include "src/admin/connection.h"

#include <algorithm>
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

namespace {

// An error reply as a status; OK otherwise.
absl::Status ErrorReply(const Reply& reply) {
  return reply.is_error() ? absl::InternalError(reply.str) : absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::optional<std::string>>> GetMany(
    Connection& connection, const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  for (size_t at = 0; at < keys.size(); at += kGetManyBatch) {
    const size_t n = std::min(kGetManyBatch, keys.size() - at);
    std::vector<std::string> mget = {"MGET"};
    mget.insert(mget.end(), keys.begin() + at, keys.begin() + at + n);
    absl::StatusOr<Reply> reply = connection.Command(mget);
    if (!reply.ok()) return reply.status();
    if (absl::Status error = ErrorReply(*reply); !error.ok()) return error;
    if (!reply->is_array() || reply->elements.size() != n) {
      return absl::InternalError("MGET answered with the wrong shape");
    }
    for (const Reply& e : reply->elements) {
      values.push_back(e.is_string() ? std::optional<std::string>(e.str)
                                     : std::nullopt);
    }
  }
  return values;
}

absl::StatusOr<std::vector<std::string>> SetMembers(Connection& connection,
                                                    const std::string& key) {
  std::vector<std::string> members;
  std::string cursor = "0";
  // A cursor that never returns to 0 (a hostile server) ends the loop at a
  // bound far above any honest set of this library's (1,024 readers).
  for (int calls = 0; calls < 10000; ++calls) {
    absl::StatusOr<Reply> reply = connection.Command(
        {"SSCAN", key, cursor, "COUNT", absl::StrCat(kScanBatch)});
    if (!reply.ok()) return reply.status();
    if (absl::Status error = ErrorReply(*reply); !error.ok()) return error;
    if (!reply->is_array() || reply->elements.size() != 2 ||
        !reply->elements[0].is_string() || !reply->elements[1].is_array()) {
      return absl::InternalError("SSCAN answered with the wrong shape");
    }
    for (const Reply& m : reply->elements[1].elements) {
      if (m.is_string()) members.push_back(m.str);
    }
    cursor = reply->elements[0].str;
    if (cursor == "0") {
      // SSCAN may return a member twice; a set holds it once.
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      return members;
    }
  }
  return absl::InternalError("SSCAN did not finish");
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
