// Copyright 2026 The redlock Authors.
//
// Leader election's record and what a master says of it (pure: no I/O).
// The lease is a fenced lock on ElectionLockKey(); the record
// (ElectionRecordKey()) is "<epoch> <revision> <token> <value>", written by
// ProclaimScript() only where the lease holds <token>. A master's reading is
// the pair MGET lease record.

#ifndef REDLOCK_SRC_ALGORITHM_ELECTION_H_
#define REDLOCK_SRC_ALGORITHM_ELECTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/vote.h"

namespace redlock::internal {

struct LeaderRecord {
  uint64_t epoch = 0;
  uint64_t revision = 0;
  std::string token;
  std::string value;
};

// "<epoch> <revision> <token> <value>".
std::string FormatLeaderRecord(const LeaderRecord& record);
// kInternal unless `text` is a record: two positive decimals without sign
// or leading zero that fit 64 bits, a token (one or more bytes, no space)
// and the value (any bytes, possibly empty), separated by single spaces.
absl::StatusOr<LeaderRecord> ParseLeaderRecord(absl::string_view text);

// What one master holds of an election.
struct LeaderReading {
  enum class Kind {
    kVacant,   // No lease: nobody leads there.
    kLeading,  // The lease holds the record's token: `record` leads there.
    kHeld,     // A lease without a record of its token (a campaign that has
               // not written its record yet, or a stale record).
  };
  Kind kind = Kind::kVacant;
  LeaderRecord record;  // kLeading only.
};

// One master's reply to LeaderReadCommand(): {lease or nil, record or nil}.
// kInternal for anything else, a malformed record included: untrusted
// bytes never make a leader.
absl::StatusOr<LeaderReading> ParseLeaderReading(const RedisReply& reply);
// As a vote: kLeading granted, kVacant and kHeld denied, malformed failed.
absl::StatusOr<Vote> LeaderReadVote(const RedisReply& reply);

// ProclaimScript(). KEYS: the lease, the record. ARGV: token, epoch,
// revision, value. Writes the record unless the lease does not hold the
// token (0) or the record already holds this token at this revision or a
// later one (1, unchanged: a late proclamation never undoes a newer one);
// publishes kTakenMessage on the lease's channel when it writes. 1 or 0.
const Script& ProclaimScript();
Command ProclaimCommand(absl::string_view lease_key,
                        absl::string_view record_key,
                        const LeaderRecord& record);
// MGET lease record.
Command LeaderReadCommand(absl::string_view lease_key,
                          absl::string_view record_key);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_ELECTION_H_
