// Copyright 2026 The redlock Authors.
//
// Reply-to-vote mapping: what one master's answer means for one request. A
// failed vote is data (a non-OK status), counted like any other vote.

#ifndef REDLOCK_SRC_VOTE_H_
#define REDLOCK_SRC_VOTE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/redis_reply.h"

namespace redlock::internal {

enum class Vote {
  kGranted,  // The master did what we asked: set, extended or deleted.
  kDenied,   // It refused for a lock reason: held by another owner, or
             // (extend, release) our token is no longer there.
};

using VoteMapper = absl::StatusOr<Vote> (*)(const RedisReply&);

// SET key token NX PX ttl: "OK" granted, nil denied (held by another owner).
absl::StatusOr<Vote> AcquireVote(const RedisReply& reply);

// The token-checked extend and release scripts: 1 granted, 0 denied.
absl::StatusOr<Vote> ScriptVote(const RedisReply& reply);

// The fenced acquire script: {1|0, counter, marker}; 1 granted, 0 denied.
absl::StatusOr<Vote> FencedAcquireVote(const RedisReply& reply);

// The fence write-back script: 1 (raised to our token) is granted, 0 (the
// counter was already at or above it) is denied: two acquisitions must
// never issue the same token. Any other integer is a failure.
absl::StatusOr<Vote> FenceWriteVote(const RedisReply& reply);

// What a fenced acquire read on one master.
struct FenceRead {
  bool counter_present = false;
  uint64_t counter = 0;
  std::string marker;  // The marker's state: "trusted", "reborn" or empty.
};
// kInternal if `reply` is not a well-formed fenced acquire reply (a
// counter that is not a non-negative integer included).
absl::StatusOr<FenceRead> ParseFenceRead(const RedisReply& reply);

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

#endif  // REDLOCK_SRC_VOTE_H_
