// Copyright 2026 The redlock Authors.
//
// What a Redis server keeps through a restart, as CONFIG GET says: the
// engine's handshake (src/engine/master.h) and the operator's tool
// (src/admin/reconfigure.h) read it the same way and judge it by the same
// rule, Durable(). Pure.

#ifndef REDLOCK_SRC_ALGORITHM_PERSISTENCE_H_
#define REDLOCK_SRC_ALGORITHM_PERSISTENCE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {

// What a server said of its persistence (CONFIG GET of append* and save).
struct Persistence {
  // The server answered CONFIG GET; otherwise `error` says how it refused.
  bool known = false;
  bool aof = false;         // appendonly yes.
  std::string appendfsync;  // "always", "everysec", "no"; empty if unsaid.
  bool said_save = false;   // The reply carried `save`...
  std::string save;         // ...with this value ("" : no RDB snapshots).
  std::string error;        // Why unknown, e.g. the NOPERM reply.
};

// The parameters the handshake reads for the persistence, one CONFIG GET
// each: CONFIG GET takes several names only from Redis 7.0 on, and a pattern
// ("[as][pa][pv]*", as before) made Redis 7.0 match it against every
// parameter it has: 10-56 us of the server's time per connection, against
// under 0.5 us for each name alone (INFO commandstats), paid by every new
// client process on every master.
inline constexpr absl::string_view kPersistenceConfigNames[] = {
    "appendonly", "appendfsync", "save"};

// Adds the reply to one CONFIG GET of kPersistenceConfigNames to `merged`,
// the replies so far (start with an empty array): its name, value pairs, or
// the first error, which then stands for all. Pure.
void AddConfigReply(const RedisReply& reply, RedisReply* merged);

// Fills `out` from a CONFIG GET reply (a flat array of name, value pairs).
// Anything else leaves it unknown, with the reason. Pure.
void ParseConfigPersistence(const RedisReply& reply, Persistence* out);
// True only if every acknowledged write survives a crash: AOF on with
// appendfsync always. Cheap (no message): for the vote-counting paths. Pure.
bool Durable(const Persistence& persistence);
// OK only if every acknowledged write survives a crash: AOF on with
// appendfsync always. Otherwise kFailedPrecondition saying what the server
// may lose in a crash (or that its persistence is unknown, and which
// permission lifts that) and what it costs: after a restart it stays out of
// quorums for max_ttl. Pure.
absl::Status DurabilityRisk(const Persistence& persistence);
// The persistence in a few words, for people: "aof always", "aof everysec",
// "no aof, no rdb", "no aof, rdb save \"3600 1\"", or "unknown (...)".
// Pure.
std::string DescribePersistence(const Persistence& persistence);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_PERSISTENCE_H_
