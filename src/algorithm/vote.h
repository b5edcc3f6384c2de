// Copyright 2026 The redlock Authors.
//
// Reply-to-vote mapping: what one master's answer means for one request. A
// failed vote is data (a non-OK status), counted like any other vote.

#ifndef REDLOCK_SRC_ALGORITHM_VOTE_H_
#define REDLOCK_SRC_ALGORITHM_VOTE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {

enum class Vote {
  kGranted,  // The master did what we asked: set, extended or deleted.
  kDenied,   // It refused for a lock reason: held by another owner, or
             // (extend, release) our token is no longer there.
};

using VoteMapper = absl::StatusOr<Vote> (*)(const RedisReply&);

// SET key token NX PX ttl: "OK" granted, nil denied (held by another owner).
absl::StatusOr<Vote> AcquireVote(const RedisReply& reply);

// The scripts that answer 1 or 0: extend and release (1: ours, and
// extended or deleted; 0: not held by us) and the fence write-back (1: raised
// to our token; 0: the counter was already at or above it, so another
// acquisition wrote that token and ours must not be issued).
absl::StatusOr<Vote> ScriptVote(const RedisReply& reply);

// Splits one master's BatchExtendScript reply into one reply per lock, to be
// judged each by ScriptVote() exactly as a single extension's reply: an
// entry 1 or 0 is that integer; -1 (a permit set whose limit key holds
// another limit) an error reply "SEMLIMIT ...", as the single semaphore
// extension answers; anything else is passed on as it is, so that ScriptVote
// fails that lock alone. A reply that is not an array of exactly `locks`
// elements (an error reply, a wrong count, garbage) is no answer for any of
// them: a non-OK status (ErrorReplyStatus() for an error reply, else
// kInternal), a failed vote for every lock in it. Fail closed.
absl::StatusOr<std::vector<RedisReply>> SplitBatchExtendReply(RedisReply reply,
                                                              size_t locks);

// The fenced acquire script: {1|0, counter, marker}; 1 granted, 0 denied.
absl::StatusOr<Vote> FencedAcquireVote(const RedisReply& reply);

// The semaphore acquire script: {1, free-slot map} granted, {0, free-slot
// map} denied, {-1, stored limit} a failed vote (kFailedPrecondition naming
// the stored limit): fail closed, never a grant.
absl::StatusOr<Vote> SemaphoreAcquireVote(const RedisReply& reply);

// The reader acquire script: {1} granted, {0, reason} denied (a writer
// holds the lock there, one is waiting, or too many readers).
absl::StatusOr<Vote> ReaderAcquireVote(const RedisReply& reply);
// The reason of a reader acquire script's denial ("writer", "writer
// waiting", "too many readers"); empty for any other reply.
std::string ReaderRefusal(const RedisReply& reply);

// What one master's semaphore acquire reply says.
struct SemaphoreReply {
  enum class Kind { kGranted, kDenied, kLimitMismatch };
  Kind kind = Kind::kDenied;
  // kGranted, kDenied: the slots free there (after the grant).
  std::vector<int> free_slots;
  std::string stored_limit;  // kLimitMismatch: the master's limit.
};
// kInternal if `reply` is not a well-formed semaphore acquire reply: a
// free-slot map (semaphore_scripts.cc) of other than `limit` characters, or
// one that is not '0' or '1', included. `limit` kUnknownLimit: a map of any
// length.
inline constexpr int kUnknownLimit = 0;
absl::StatusOr<SemaphoreReply> ParseSemaphoreReply(const RedisReply& reply,
                                                   int limit);

// What a fenced acquire read on one master.
struct FenceRead {
  // Every counter the reply carries (one per resource of the lock) present.
  bool counter_present = false;
  // The highest of them (a missing counter reads 0).
  uint64_t counter = 0;
  std::string marker;  // The marker's state: "trusted", "reborn" or empty.
};
// kInternal if `reply` is not a well-formed fenced acquire reply (a
// counter that is not a non-negative integer included).
absl::StatusOr<FenceRead> ParseFenceRead(const RedisReply& reply);

// Counts the fenced-acquire replies whose counter can be trusted, and the
// highest such counter. A read counts only from a master whose grants count
// right now (`veto` OK: the restart guard's rule, the same as for grants),
// once per failure domain (`domain`: one server under two addresses reads
// once), and only if its counter cannot have been forgotten: a master that
// never lost its data (marker "trusted") knows that a missing counter means
// 0; a reborn one may have forgotten it, so only a counter it holds counts,
// one written back after its restart. `highest` and `untrusted` may be null;
// `untrusted` names the reads that did not count and why. Pure.
int CountTrustedFenceReads(
    const std::vector<std::optional<RedisReply>>& replies,
    const std::function<absl::Status(int)>& veto,
    const std::function<absl::string_view(int)>& domain, uint64_t* highest,
    std::string* untrusted, std::vector<bool>* trusted_masters = nullptr);

// A Redis error reply as a status, by its error code prefix:
//   OOM                                   kResourceExhausted
//   READONLY MASTERDOWN LOADING BUSY
//   MISCONF NOREPLICAS                    kFailedPrecondition
//   NOAUTH WRONGPASS                      kUnauthenticated
//   NOPERM                                kPermissionDenied
//   NOSCRIPT                              kNotFound
//   anything else                         kInternal
// The message is the server's text.
absl::Status ErrorReplyStatus(absl::string_view message);

// True for the NOSCRIPT error reply that EVALSHA gives for an unknown script.
bool IsNoScript(const RedisReply& reply);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_VOTE_H_
