// Copyright 2026 The redlock Authors.
//
// The resource side of fencing tokens. A lock limits concurrency but does not
// guarantee exclusive execution after its lease expires: a holder paused past
// its validity (GC, swap, SIGSTOP) still believes it holds the lock. The
// protected resource must therefore check the fencing token each write
// carries and reject one lower than the highest it has seen.
//
// For a resource kept in Redis, run kFencedSetScript (EVAL, or SCRIPT LOAD +
// EVALSHA) on the server that holds the data — any Redis, not necessarily a
// lock master:
//
//   EVAL <kFencedSetScript> 2 <fence_key> <data_key> <token> <value>
//     -> 1  written, and <token> recorded as the highest seen
//     -> 0  rejected: a higher token was seen before; nothing written
//
// FencedSetArgv() builds that argv. For SQL and HTTP resources see
// docs/lifetime-and-fencing.md (UPDATE ... WHERE fence <= $token; a version
// precondition).

#ifndef REDLOCK_FENCING_H_
#define REDLOCK_FENCING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace redlock {

// Lua: KEYS[1] the highest token seen (an integer, no TTL), KEYS[2] the data;
// ARGV[1] the presented token, ARGV[2] the value. Writes the value and
// records the token only if token >= the highest seen. Returns 1 or 0.
// An equal token is accepted: it is the same holder writing again (one lock
// writes several times under its one token), and the library never issues
// one token to two holders — a fence write-back that finds the counter at or
// above its token is refused. A lower token is always rejected; a missing or
// non-numeric token is rejected.
extern const absl::string_view kFencedSetScript;

// {"EVAL", kFencedSetScript, "2", fence_key, data_key, token, value}.
std::vector<std::string> FencedSetArgv(absl::string_view fence_key,
                                       absl::string_view data_key,
                                       uint64_t token, absl::string_view value);

}  // namespace redlock

#endif  // REDLOCK_FENCING_H_
