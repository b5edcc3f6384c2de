// Copyright 2026 The redlock Authors.

#include "src/admin/probe.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "redlock/keys.h"
#include "redlock/lock.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/engine/master_identity.h"

namespace redlock::admin {
namespace {

absl::Duration Since(MonotonicTime start) {
  return absl::FromChrono(MonotonicClock::now() - start);
}

}  // namespace

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
  // Whether the connection still answers (an error reply leaves it usable).
  auto may_run = [&] {
    return status.error.ok() || absl::IsInternal(status.error);
  };
  // Records a failed read as `run` does; true if it succeeded.
  auto record = [&](const absl::Status& read) {
    if (read.ok()) return true;
    if (!absl::IsInternal(read) || status.error.ok()) status.error = read;
    return false;
  };
  auto run = [&](const std::vector<std::string>& args) -> std::optional<Reply> {
    if (!may_run()) return std::nullopt;
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
    if (!reply.has_value() || reply->type != Reply::Type::kString) {
      return std::nullopt;
    }
    return reply->str;
  };

  status.token = string_or_nil(run({"GET", keys.lock}));
  if (std::optional<Reply> pttl = run({"PTTL", keys.lock});
      pttl.has_value() && pttl->type == Reply::Type::kInteger) {
    status.pttl_ms = pttl->integer;
  }
  if (!full) return status;
  status.fence = string_or_nil(run({"GET", keys.fence}));
  if (status.token == kSharedLockValue && !keys.readers.empty() && may_run()) {
    absl::StatusOr<std::vector<std::string>> members =
        SetMembers(connection, keys.readers);
    if (record(members.status())) {
      std::vector<std::string> reader_keys;
      for (const std::string& m : *members) {
        reader_keys.push_back(keys.reader_base + m);
      }
      // Only readers whose own key lives: the index is pruned on release.
      absl::StatusOr<std::vector<std::optional<std::string>>> alive =
          GetMany(connection, reader_keys);
      if (record(alive.status())) {
        for (size_t i = 0; i < alive->size(); ++i) {
          if ((*alive)[i].has_value()) status.readers.push_back((*members)[i]);
        }
      }
    }
  }
  if (!keys.limit_key.empty()) {
    status.stored_limit = string_or_nil(run({"GET", keys.limit_key}));
    int limit = keys.limit;
    if (limit == 0 && status.stored_limit.has_value() &&
        !absl::SimpleAtoi(*status.stored_limit, &limit)) {
      limit = 0;
    }
    if (limit > 0 && limit <= 1024 && may_run()) {
      std::vector<std::string> slot_keys;
      for (int i = 0; i < limit; ++i) {
        slot_keys.push_back(absl::StrCat(keys.slot_base, i));
      }
      absl::StatusOr<std::vector<std::optional<std::string>>> slots =
          GetMany(connection, slot_keys);
      if (record(slots.status())) {
        status.limit = limit;
        status.slots = *std::move(slots);
      }
    }
  }
  if (std::optional<Reply> info = run({"INFO", "server"});
      info.has_value() && info->type == Reply::Type::kString) {
    status.run_id = std::string(internal::InfoField(info->str, "run_id"));
    if (int64_t uptime = 0; absl::SimpleAtoi(
            internal::InfoField(info->str, "uptime_in_seconds"), &uptime)) {
      status.uptime_s = uptime;
    }
  }
  status.marker = string_or_nil(run({"GET", keys.marker}));
  if (std::optional<Reply> info = run({"INFO", "memory"});
      info.has_value() && info->type == Reply::Type::kString) {
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
      internal::AddConfigReply(*config, &merged);
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

MarkerRecord RecordOf(const MasterStatus& s) {
  MarkerRecord out;
  if (!s.marker.has_value()) return out;
  std::string state;
  int64_t time_us = 0;
  std::optional<std::string> record;
  internal::ParseMarker(*s.marker, &state, &time_us, nullptr, nullptr, &record);
  if (!record.has_value()) return out;
  out.present = true;
  out.error = internal::ParseMarkerRecord(*record, &out.member, &out.record);
  return out;
}

std::string MembershipText(const MasterStatus& s) {
  const MarkerRecord r = RecordOf(s);
  if (!r.present) return "-";
  if (!r.error.ok()) return absl::StrCat("unreadable: ", r.error.message());
  std::string text = absl::StrCat("epoch ", r.record.epoch,
                                  r.record.joint() ? " joint " : " steady ",
                                  internal::JoinMembers(r.record.members));
  if (r.record.joint()) {
    absl::StrAppend(&text, " -> ", internal::JoinMembers(r.record.next));
  }
  if (r.member != s.member) {
    absl::StrAppend(&text, " (names this server ", r.member, ")");
  }
  return text;
}

std::string MarkerState(const MasterStatus& s) {
  if (!s.marker.has_value()) return "none";
  std::string state;
  int64_t time_us = 0;
  internal::ParseMarker(*s.marker, &state, &time_us);
  return state;
}

bool GrantsCount(const MasterStatus& s, absl::Duration max_ttl) {
  if (!s.reachable || s.same_server_as >= 0) return false;
  const std::string state = MarkerState(s);
  const bool up_max_ttl =
      s.uptime_s.has_value() && absl::Seconds(*s.uptime_s) >= max_ttl;
  if (state == internal::kTrustedMarker) {
    // The probe reads no TIME: an older marker without a run_id cannot be
    // compared with the uptime, and counts as a restart, as the client's
    // guard counts what it cannot tell.
    internal::MasterIdentity id;
    id.run_id = s.run_id;
    id.uptime_s = s.uptime_s.value_or(0);
    std::string ignored;
    internal::ParseMarker(*s.marker, &ignored, &id.marker_time_us,
                          &id.marker_run_id);
    return internal::RestartedSinceMarked(id) == internal::Restarted::kNo ||
           internal::Durable(s.persistence) || up_max_ttl;
  }
  return state == internal::kRebornMarker && up_max_ttl;
}

std::string PersistenceText(const MasterStatus& s) {
  return internal::DescribePersistence(s.persistence);
}

bool Durable(const MasterStatus& s) { return internal::Durable(s.persistence); }

bool EvictionRisk(const MasterStatus& s) {
  // An unread (empty) policy is no risk to internal::EvictionRisk either.
  return !internal::EvictionRisk(s.maxmemory_policy).ok();
}

std::vector<std::string> RiskNotes(const MasterStatus& s) {
  std::vector<std::string> notes;
  if (absl::Status risk = internal::EvictionRisk(s.maxmemory_policy);
      !risk.ok()) {
    notes.push_back(std::string(risk.message()));
  }
  if (absl::Status risk = internal::DurabilityRisk(s.persistence); !risk.ok()) {
    notes.push_back(std::string(risk.message()));
  }
  return notes;
}

}  // namespace redlock::admin
