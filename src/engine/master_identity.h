// Copyright 2026 The redlock Authors.
//
// What a handshake tells of a master's server process (MasterIdentity): its
// run_id and uptime, its deployment marker and membership record, its
// eviction policy and persistence; and the pure functions that read them
// from the server's replies. The restart guard judges by these.

#ifndef REDLOCK_SRC_ENGINE_MASTER_IDENTITY_H_
#define REDLOCK_SRC_ENGINE_MASTER_IDENTITY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/persistence.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {

// What the last handshake learned about the server process.
struct MasterIdentity {
  bool known = false;          // A handshake completed at least once.
  std::string run_id;          // INFO server run_id.
  int64_t uptime_s = 0;        // INFO server uptime_in_seconds...
  MonotonicTime seen_at;       // ...as of this moment.
  int64_t server_time_us = 0;  // TIME on the server, as of seen_at.
  // When the marker was last read (the handshake's GET, or a read since).
  MonotonicTime marker_read_at;
  // The deployment marker's state: "trusted", "reborn", or empty if absent.
  std::string marker;
  // When the marker was written, on that server's clock (0 if unknown).
  int64_t marker_time_us = 0;
  // The run_id recorded in the marker: the server process that carried it
  // when it was written. Empty for markers written before markers carried
  // one, and for a marker an operator wrote by hand without it.
  std::string marker_run_id;
  // The max_ttl (ms) of the client that wrote the marker: the deployment's.
  // 0 if the marker does not say (older markers, an operator's).
  int64_t marker_max_ttl_ms = 0;
  // The deployment's membership record in the marker
  // (src/algorithm/membership.h): `has_record` if it carries one that parsed,
  // `record_error` if it carries one that did not; `member` is this server's
  // name in it.
  bool has_record = false;
  absl::Status record_error;
  // The marker's whole value as read ("" if absent).
  std::string marker_value;
  std::string member;
  Membership record;
  // INFO memory maxmemory_policy ("noeviction", "allkeys-lru", ...); empty
  // if the server did not say.
  std::string maxmemory_policy;
  // Its persistence, from CONFIG GET append* and save: known only if the server
  // answered it (an ACL without +config|get, or a proxy, may refuse).
  Persistence persistence;
  // INFO persistence rdb_last_load_keys_loaded: the keys it read from an RDB
  // file at its last load, which for a master is its start. -1 if it did not
  // say (Redis before 7.0 has no such field).
  int64_t rdb_keys_loaded = -1;
};

// rdb_last_load_keys_loaded from an INFO persistence reply: a count >= 0, or
// -1 if the field is missing or not a count. Pure.
int64_t ParseRdbKeysLoaded(absl::string_view info);
// True only if the server started empty and a restart leaves it empty: no
// AOF and no RDB snapshots (save ""), and INFO says its start loaded no key
// (save "" does not stop Redis from loading a dump.rdb it finds: one taken
// by a SAVE or BGSAVE by hand, or left by another configuration). Then
// whatever it holds was written since it started. Unknown: false. Pure.
bool EmptyAfterRestart(const MasterIdentity& id);
// Why EmptyAfterRestart(id) is false, for a message: "" if it is true. Pure.
std::string WhyNotEmptyAfterRestart(const MasterIdentity& id);

// Fills `id`'s marker fields (state, time, run_id, max_ttl, membership)
// from a marker's value ("" if absent). Pure.
void ReadMarkerValue(absl::string_view value, MasterIdentity* id);

// INFO reports uptime in whole seconds of the server's wall clock, cached by
// Redis for up to 100ms, so the true uptime is within this of the reading
// (either way).
inline constexpr absl::Duration kUptimeUncertainty = absl::Milliseconds(1100);

// Whether the server `id` describes restarted since its marker was written:
// kYes or kNo when the marker names the process that carried it (run_id) or,
// for an older dated marker, when the uptime is clearly shorter or longer
// than the marker's age (both on the server's clock, as of the handshake);
// kUnknown otherwise (too close to tell, undated, or a clock that went
// back), which the restart guard takes as a restart. Pure.
enum class Restarted { kNo, kYes, kUnknown };
Restarted RestartedSinceMarked(const MasterIdentity& id);

// InfoField() (the value of one field of an INFO reply) is in
// src/algorithm/redis_reply.h.
// "run_id" and "uptime_in_seconds" from an INFO server reply. Pure.
void ParseInfoServer(absl::string_view info, std::string* run_id,
                     int64_t* uptime_s);
// OK for "noeviction" or an unknown (empty) policy. Otherwise
// kFailedPrecondition saying which of the library's keys the policy may evict
// and what to set instead. Pure.
absl::Status EvictionRisk(absl::string_view maxmemory_policy);

// "a status", "an integer", ... for messages. Pure.
absl::string_view TypeName(RedisReply::Type type);
// The server's TIME reply in microseconds; nullopt unless it is two decimal
// strings, seconds >= 0 and microseconds 0-999999, whose total fits. Pure.
std::optional<int64_t> TimeReplyMicros(const RedisReply& reply);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_MASTER_IDENTITY_H_
