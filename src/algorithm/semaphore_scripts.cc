// Copyright 2026 The redlock Authors.
//
// The counting semaphore's scripts and commands: its permits' acquisition (the
// candidate slots, all or none), extension and announcements.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/scripts_internal.h"

namespace redlock::internal {
namespace {

// One Lua line per C++ line (scripts/mutants.txt finds them).
// clang-format off
// SemaphoreAcquireScript(): a counting semaphore's permit set, all or none.
// KEYS: the limit key, then slot 0 .. slot L-1 (every slot, in order). ARGV:
// token, TTL in ms, limit L, then the candidate slot numbers (distinct, each
// below L).
// Returns {-1, the limit stored} if the limit key holds another limit, and
// changes nothing; else {1, the free-slot map} if every candidate was free
// and is now set to the token with PX ttl, the limit key set to L with PX the
// longer of its remaining TTL and ttl; else {0, the free-slot map}, and
// changes nothing. The free-slot map is a string of L characters, the i-th
// '1' if slot i is free now and '0' if not: about L bytes whatever L is (a
// list of free slots as integers was charged 72 bytes each by the client's
// reply bound, and a limit of 1024 did not fit in it).
constexpr absl::string_view kSemaphoreAcquireSource =
    "local limit = redis.call('get', KEYS[1])\n"
    "if limit and limit ~= ARGV[3] then return {-1, limit} end\n"
    "local taken = false\n"
    "for i = 4, #ARGV do\n"
    "  if redis.call('exists', KEYS[tonumber(ARGV[i]) + 2]) == 1 then taken = true end\n"
    "end\n"
    "local reply = {0}\n"
    "if not taken then\n"
    "  for i = 4, #ARGV do\n"
    "    redis.call('set', KEYS[tonumber(ARGV[i]) + 2], ARGV[1], 'PX', ARGV[2])\n"
    "  end\n"
    "  local ttl = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "  redis.call('set', KEYS[1], ARGV[3], 'PX', ttl)\n"
    "  reply[1] = 1\n"
    "end\n"
    "local map = {}\n"
    "for s = 2, #KEYS do\n"
    "  map[s - 1] = redis.call('exists', KEYS[s]) == 0 and '1' or '0'\n"
    "end\n"
    "return {reply[1], table.concat(map)}\n";

// SemaphoreExtendScript(). KEYS: the limit key, then a permit set's slot
// keys. ARGV: token, TTL in ms, limit.
// If every slot holds the token: an error reply "SEMLIMIT ..." if the limit
// key holds another limit (nothing changes), else the slots' TTLs set to
// ttl, the limit key set to the limit with PX the longer of its remaining TTL
// and ttl (set again if it is gone), and 1. Otherwise 0, and nothing
// changes; never creates a slot.
constexpr absl::string_view kSemaphoreExtendSource =
    "for i = 2, #KEYS do\n"
    "  if ARGV[1] ~= redis.call('get', KEYS[i]) then return 0 end\n"
    "end\n"
    "local limit = redis.call('get', KEYS[1])\n"
    "if limit and limit ~= ARGV[3] then\n"
    "  return redis.error_reply('SEMLIMIT this master has limit ' .. limit .. ', the holder ' .. ARGV[3])\n"
    "end\n"
    "for i = 2, #KEYS do\n"
    "  redis.call('pexpire', KEYS[i], ARGV[2])\n"
    "end\n"
    "local ttl = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "redis.call('set', KEYS[1], ARGV[3], 'PX', ttl)\n"
    "return 1\n";

// clang-format on

}  // namespace

const Script& SemaphoreAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("semaphore acquire", kSemaphoreAcquireSource,
                            /*creates_lock=*/true,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& SemaphoreExtendScript() {
  static const Script* const script =
      new Script(MakeScript("semaphore extend", kSemaphoreExtendSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

Command SemaphoreAnnounceCommand(absl::string_view limit_key,
                                 absl::string_view message) {
  Command command;
  command.args = {"PUBLISH", std::string(limit_key), std::string(message)};
  return command;
}

Command SemaphoreAcquireCommand(absl::string_view limit_key,
                                absl::Span<const std::string> slot_keys,
                                absl::string_view token, absl::Duration ttl,
                                int limit, absl::Span<const int> candidates) {
  Command c;
  c.script = &SemaphoreAcquireScript();
  c.num_keys = static_cast<int>(slot_keys.size() + 1);
  c.args.reserve(c.num_keys + 3 + candidates.size());
  c.args.emplace_back(limit_key);
  c.args.insert(c.args.end(), slot_keys.begin(), slot_keys.end());
  c.args.emplace_back(token);
  c.args.push_back(TtlMillis(ttl));
  c.args.push_back(absl::StrCat(limit));
  for (int slot : candidates) c.args.push_back(absl::StrCat(slot));
  return c;
}

Command SemaphoreExtendCommand(absl::string_view limit_key,
                               absl::Span<const std::string> slot_keys,
                               absl::string_view token, absl::Duration ttl,
                               int limit) {
  Command c;
  c.script = &SemaphoreExtendScript();
  c.num_keys = static_cast<int>(slot_keys.size() + 1);
  c.args.reserve(c.num_keys + 3);
  c.args.emplace_back(limit_key);
  c.args.insert(c.args.end(), slot_keys.begin(), slot_keys.end());
  c.args.emplace_back(token);
  c.args.push_back(TtlMillis(ttl));
  c.args.push_back(absl::StrCat(limit));
  return c;
}

}  // namespace redlock::internal
