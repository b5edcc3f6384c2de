// Copyright 2026 The redlock Authors.

#include "src/engine/master_identity.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {

absl::string_view TypeName(RedisReply::Type type) {
  switch (type) {
    case RedisReply::Type::kStatus:
      return "a status";
    case RedisReply::Type::kError:
      return "an error";
    case RedisReply::Type::kInteger:
      return "an integer";
    case RedisReply::Type::kString:
      return "a bulk string";
    case RedisReply::Type::kNil:
      return "a nil";
    case RedisReply::Type::kArray:
      return "an array";
  }
  return "an unknown type";
}

std::optional<int64_t> TimeReplyMicros(const RedisReply& reply) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 2 ||
      reply.elements[0].type != RedisReply::Type::kString ||
      reply.elements[1].type != RedisReply::Type::kString) {
    return std::nullopt;
  }
  int64_t seconds = 0, micros = 0;
  if (!absl::SimpleAtoi(reply.elements[0].str, &seconds) ||
      !absl::SimpleAtoi(reply.elements[1].str, &micros)) {
    return std::nullopt;
  }
  // Checked before multiplying: a hostile reply must not overflow.
  constexpr int64_t kMaxSeconds =
      (std::numeric_limits<int64_t>::max() - 999999) / 1000000;
  if (seconds < 0 || seconds > kMaxSeconds || micros < 0 || micros > 999999) {
    return std::nullopt;
  }
  return seconds * 1000000 + micros;
}

void ParseInfoServer(absl::string_view info, std::string* run_id,
                     int64_t* uptime_s) {
  *run_id = std::string(InfoField(info, "run_id"));
  int64_t value = 0;
  if (absl::SimpleAtoi(InfoField(info, "uptime_in_seconds"), &value)) {
    *uptime_s = value;
  }
}

absl::Status EvictionRisk(absl::string_view maxmemory_policy) {
  if (maxmemory_policy.empty() || maxmemory_policy == "noeviction") {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "maxmemory-policy is ", maxmemory_policy,
      absl::StartsWith(maxmemory_policy, "volatile")
          ? ": under memory pressure it may evict lock keys (they have a TTL)"
          : ": under memory pressure it may evict lock keys, fencing "
            "counters and the deployment marker",
      ", which lets a second owner in; set maxmemory-policy noeviction"));
}

int64_t ParseRdbKeysLoaded(absl::string_view info) {
  int64_t loaded = -1;
  if (!absl::SimpleAtoi(InfoField(info, "rdb_last_load_keys_loaded"),
                        &loaded) ||
      loaded < 0) {
    loaded = -1;  // Unsaid, or not a count: not known to be empty.
  }
  return loaded;
}

bool EmptyAfterRestart(const MasterIdentity& id) {
  const Persistence& p = id.persistence;
  return p.known && !p.aof && p.said_save && p.save.empty() &&
         id.rdb_keys_loaded == 0;
}

std::string WhyNotEmptyAfterRestart(const MasterIdentity& id) {
  const Persistence& p = id.persistence;
  if (!p.known || p.aof || !p.said_save || !p.save.empty()) {
    return absl::StrCat("persistence ", DescribePersistence(p));
  }
  if (id.rdb_keys_loaded < 0) {
    return "persistence no aof, no rdb, but INFO persistence does not say "
           "whether it started empty (rdb_last_load_keys_loaded, Redis 7.0)";
  }
  if (id.rdb_keys_loaded > 0) {
    return absl::StrCat(
        "persistence no aof, no rdb, but it loaded ", id.rdb_keys_loaded,
        " keys from an RDB file when it started (a snapshot taken by hand?)");
  }
  return "";
}

void ReadMarkerValue(absl::string_view value, MasterIdentity* id) {
  std::optional<std::string> record;
  ParseMarker(value, &id->marker, &id->marker_time_us, &id->marker_run_id,
              &id->marker_max_ttl_ms, &record);
  id->marker_value = std::string(value);
  id->has_record = false;
  id->record_error = absl::OkStatus();
  id->member.clear();
  id->record = Membership();
  if (!record.has_value()) return;
  id->record_error = ParseMarkerRecord(*record, &id->member, &id->record);
  id->has_record = id->record_error.ok();
}

Restarted RestartedSinceMarked(const MasterIdentity& id) {
  // Exact when the marker names the server process that carried it.
  if (!id.marker_run_id.empty()) {
    return id.marker_run_id == id.run_id ? Restarted::kNo : Restarted::kYes;
  }
  // Markers from before they carried a run_id: the uptime against the
  // marker's age, both on the server's own clock, as of the handshake.
  if (id.marker_time_us <= 0 || id.server_time_us <= 0) {
    return Restarted::kUnknown;
  }
  const absl::Duration age =
      absl::Microseconds(id.server_time_us - id.marker_time_us);
  const absl::Duration uptime = absl::Seconds(id.uptime_s);
  // A negative age: its clock went back since; nothing to compare.
  if (age < absl::ZeroDuration()) return Restarted::kUnknown;
  if (uptime - kUptimeUncertainty >= age) return Restarted::kNo;
  if (uptime + kUptimeUncertainty < age) return Restarted::kYes;
  return Restarted::kUnknown;
}

}  // namespace redlock::internal
