// Copyright 2026 The redlock Authors.

#include "tools/redlock/direct.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "redlock/keys.h"
#include "redlock/lock.h"
#include "src/algorithm/redis_reply.h"
#include "src/engine/master.h"

namespace redlock::cli {
namespace {

absl::Duration Since(MonotonicTime start) {
  return absl::FromChrono(MonotonicClock::now() - start);
}

// `r` with the type codes of Reply.
Reply CopyReply(const internal::RedisReply& r) {
  using Type = internal::RedisReply::Type;
  Reply reply;
  switch (r.type) {
    case Type::kStatus:
      reply.type = REDIS_REPLY_STATUS;
      break;
    case Type::kError:
      reply.type = REDIS_REPLY_ERROR;
      break;
    case Type::kInteger:
      reply.type = REDIS_REPLY_INTEGER;
      break;
    case Type::kString:
      reply.type = REDIS_REPLY_STRING;
      break;
    case Type::kNil:
      reply.type = REDIS_REPLY_NIL;
      break;
    case Type::kArray:
      reply.type = REDIS_REPLY_ARRAY;
      break;
  }
  reply.integer = r.integer;
  reply.str = r.str;
  for (const internal::RedisReply& e : r.elements) {
    reply.elements.push_back(CopyReply(e));
  }
  return reply;
}

}  // namespace

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
  absl::StatusOr<internal::RedisReply> reply =
      connection_->Command(args, timeouts_.command);
  if (!reply.ok()) return reply.status();
  return CopyReply(*reply);
}

std::string Connection::TlsDescription() const {
  return connection_->TlsDescription();
}

Timeouts TimeoutsOf(const Config& config) {
  return Timeouts{config.options.connect_timeout,
                  config.options.request_timeout, config.options.tls};
}

void ForEachInParallel(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

namespace {

MasterStatus Probe(const MasterAddress& address, const Timeouts& timeouts,
                   const StatusKeys& keys, bool full) {
  MasterStatus status;
  status.master = address.Name();
  status.member = address.MemberName();
  status.transport = address.transport == MasterAddress::Transport::kTls ? "tls"
                     : address.transport == MasterAddress::Transport::kUnix
                         ? "unix"
                         : "tcp";
  absl::StatusOr<std::unique_ptr<Connection>> opened =
      Connection::Open(address, timeouts);
  if (!opened.ok()) {
    status.error = opened.status();
    return status;
  }
  Connection& connection = **opened;
  status.tls = connection.TlsDescription();

  const MonotonicTime ping_start = MonotonicClock::now();
  absl::StatusOr<Reply> ping = connection.Command({"PING"});
  status.latency = Since(ping_start);
  if (!ping.ok()) {
    status.error = ping.status();
    return status;
  }
  // A master that refuses us (NOAUTH, WRONGPASS, LOADING) is no use to a
  // lock either.
  if (ping->is_error()) {
    status.error = absl::UnavailableError(ping->str);
    return status;
  }
  status.reachable = true;

  // A failed command ends the probe (the connection is gone); an error
  // reply is recorded and the next command still goes out.
  auto run = [&](const std::vector<std::string>& args) -> std::optional<Reply> {
    if (!status.error.ok() && !absl::IsInternal(status.error)) {
      return std::nullopt;
    }
    absl::StatusOr<Reply> reply = connection.Command(args);
    if (!reply.ok()) {
      status.error = reply.status();
      return std::nullopt;
    }
    if (reply->is_error()) {
      if (status.error.ok()) status.error = absl::InternalError(reply->str);
      return std::nullopt;
    }
    return *std::move(reply);
  };
  auto string_or_nil =
      [](const std::optional<Reply>& reply) -> std::optional<std::string> {
    if (!reply.has_value() || reply->type != REDIS_REPLY_STRING) {
      return std::nullopt;
    }
    return reply->str;
  };

  status.token = string_or_nil(run({"GET", keys.lock}));
  if (std::optional<Reply> pttl = run({"PTTL", keys.lock});
      pttl.has_value() && pttl->type == REDIS_REPLY_INTEGER) {
    status.pttl_ms = pttl->integer;
  }
  if (!full) return status;
  status.fence = string_or_nil(run({"GET", keys.fence}));
  if (status.token == kSharedLockValue && !keys.readers.empty()) {
    if (std::optional<Reply> members = run({"SMEMBERS", keys.readers});
        members.has_value()) {
      for (const Reply& m : members->elements) {
        if (!m.is_string()) continue;
        // Only readers whose own key lives: the index is pruned on release.
        if (std::optional<Reply> exists =
                run({"EXISTS", keys.reader_base + m.str});
            exists.has_value() && exists->integer == 1) {
          status.readers.push_back(m.str);
        }
      }
      std::sort(status.readers.begin(), status.readers.end());
    }
  }
  if (!keys.limit_key.empty()) {
    status.stored_limit = string_or_nil(run({"GET", keys.limit_key}));
    int limit = keys.limit;
    if (limit == 0 && status.stored_limit.has_value() &&
        !absl::SimpleAtoi(*status.stored_limit, &limit)) {
      limit = 0;
    }
    if (limit > 0 && limit <= 1024) {
      std::vector<std::string> mget = {"MGET"};
      for (int i = 0; i < limit; ++i) {
        mget.push_back(absl::StrCat(keys.slot_base, i));
      }
      if (std::optional<Reply> slots = run(mget);
          slots.has_value() && slots->elements.size() == mget.size() - 1) {
        status.limit = limit;
        for (const Reply& e : slots->elements) {
          status.slots.push_back(
              e.is_string() ? std::optional<std::string>(e.str) : std::nullopt);
        }
      }
    }
  }
  if (std::optional<Reply> info = run({"INFO", "server"});
      info.has_value() && info->type == REDIS_REPLY_STRING) {
    status.run_id = std::string(internal::InfoField(info->str, "run_id"));
    if (int64_t uptime = 0; absl::SimpleAtoi(
            internal::InfoField(info->str, "uptime_in_seconds"), &uptime)) {
      status.uptime_s = uptime;
    }
  }
  status.marker = string_or_nil(run({"GET", keys.marker}));
  if (std::optional<Reply> info = run({"INFO", "memory"});
      info.has_value() && info->type == REDIS_REPLY_STRING) {
    status.maxmemory_policy =
        std::string(internal::InfoField(info->str, "maxmemory_policy"));
  }
  // As the library's handshake reads it; a refusal (an ACL without
  // +config|get) is not a failed probe, only unknown persistence. Asked
  // after an earlier error reply too (the connection still answers): only a
  // connection that failed leaves it unread.
  if (status.error.ok() || absl::IsInternal(status.error)) {
    internal::RedisReply merged = internal::RedisReply::Array({});
    bool answered = true;
    for (absl::string_view name : internal::kPersistenceConfigNames) {
      absl::StatusOr<Reply> config =
          connection.Command({"CONFIG", "GET", std::string(name)});
      if (!config.ok()) {
        status.error = config.status();
        answered = false;
        break;
      }
      internal::RedisReply converted;
      converted.type = config->is_error() ? internal::RedisReply::Type::kError
                       : config->type == REDIS_REPLY_ARRAY
                           ? internal::RedisReply::Type::kArray
                           : internal::RedisReply::Type::kNil;
      converted.str = config->str;
      for (const Reply& e : config->elements) {
        converted.elements.push_back(
            e.type == REDIS_REPLY_STRING
                ? internal::RedisReply::String(e.str)
                : internal::RedisReply::Integer(e.integer));
      }
      internal::AddConfigReply(converted, &merged);
    }
    if (answered) {
      internal::ParseConfigPersistence(merged, &status.persistence);
    }
  }
  return status;
}

}  // namespace

std::vector<MasterStatus> ProbeMasters(
    const std::vector<MasterAddress>& masters, const Timeouts& timeouts,
    const StatusKeys& keys, bool full) {
  std::vector<MasterStatus> statuses(masters.size());
  ForEachInParallel(masters.size(), [&](size_t i) {
    statuses[i] = Probe(masters[i], timeouts, keys, full);
  });
  // One server under two addresses is one failure domain, as the library
  // counts it: the later address is marked and not counted.
  for (size_t i = 0; i < statuses.size(); ++i) {
    for (size_t j = 0; j < i && !statuses[i].run_id.empty(); ++j) {
      if (statuses[j].run_id == statuses[i].run_id) {
        statuses[i].same_server_as = static_cast<int>(j);
        break;
      }
    }
  }
  return statuses;
}

HolderSummary Summarize(const std::vector<MasterStatus>& statuses, int quorum) {
  HolderSummary summary;
  absl::flat_hash_map<std::string, int> counts;
  for (const MasterStatus& s : statuses) {
    if (s.same_server_as >= 0) continue;  // Counted under its first address.
    if (s.reachable) ++summary.reachable;
    if (s.token.has_value()) ++counts[*s.token];
  }
  for (const auto& [token, count] : counts) {
    if (count > summary.holders ||
        (count == summary.holders && token < summary.token)) {
      summary.token = token;
      summary.holders = count;
    }
  }
  if (summary.holders < quorum) return summary;
  std::vector<absl::Duration> left;
  for (const MasterStatus& s : statuses) {
    if (s.token != summary.token || s.same_server_as >= 0) continue;
    left.push_back(s.pttl_ms == -1
                       ? absl::InfiniteDuration()
                       : absl::Milliseconds(std::max<int64_t>(0, s.pttl_ms)));
  }
  std::sort(left.begin(), left.end(), std::greater<absl::Duration>());
  summary.expires_in = left[quorum - 1];
  return summary;
}

}  // namespace redlock::cli
