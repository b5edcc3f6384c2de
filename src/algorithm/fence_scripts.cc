// Copyright 2026 The redlock Authors.
//
// Fencing's scripts and commands: the acquisition that reads the counters, the
// write-back that raises them.

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
// FencedAcquireScript(). KEYS: n lock keys, their n fencing counters, the
// deployment marker. ARGV: token, TTL in ms.
// Sets the lock keys as kMultiAcquireSource does (all or none) and reads
// every counter and the marker in the same step. Returns {1 or 0 (set or
// not), counter 1 or "", ..., counter n or "", marker or ""}.
constexpr absl::string_view kFencedAcquireSource =
    "local n = (#KEYS - 1) / 2\n"
    "local set = 1\n"
    "for i = 1, n do\n"
    "  if redis.call('exists', KEYS[i]) == 1 then set = 0 end\n"
    "end\n"
    "if set == 1 then\n"
    "  for i = 1, n do\n"
    "    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
    "    redis.call('publish', KEYS[i], 'taken')\n"
    "  end\n"
    "end\n"
    "local reply = {set}\n"
    "for i = 1, n do\n"
    "  reply[#reply + 1] = redis.call('get', KEYS[n + i]) or ''\n"
    "end\n"
    "reply[#reply + 1] = redis.call('get', KEYS[#KEYS]) or ''\n"
    "return reply\n";

// FenceWriteScript(). KEYS: fencing counters. ARGV: the fence.
// Raises every counter to ARGV[1] if every one is lower (never lowers one).
// Returns 1 if it raised them, 0 if any was already at or above ARGV[1]: then
// another acquisition wrote that fence (or a higher one), and this one must
// not be issued.
constexpr absl::string_view kFenceWriteSource =
    "local wanted = tonumber(ARGV[1])\n"
    "for i = 1, #KEYS do\n"
    "  local current = tonumber(redis.call('get', KEYS[i]) or '0') or 0\n"
    "  if wanted <= current then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('set', KEYS[i], ARGV[1])\n"
    "end\n"
    "return 1\n";

// clang-format on

}  // namespace

const Script& FencedAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("fenced acquire", kFencedAcquireSource,
                            /*creates_lock=*/true));
  return *script;
}

const Script& FenceWriteScript() {
  static const Script* const script =
      new Script(MakeScript("fence write", kFenceWriteSource));
  return *script;
}

Command FencedAcquireCommand(absl::Span<const std::string> keys,
                             absl::Span<const std::string> counter_keys,
                             absl::string_view marker_key,
                             absl::string_view token, absl::Duration ttl) {
  Command c;
  c.script = &FencedAcquireScript();
  c.num_keys = static_cast<int>(keys.size() + counter_keys.size() + 1);
  c.args.reserve(c.num_keys + 2);
  c.args.insert(c.args.end(), keys.begin(), keys.end());
  c.args.insert(c.args.end(), counter_keys.begin(), counter_keys.end());
  c.args.emplace_back(marker_key);
  c.args.emplace_back(token);
  c.args.push_back(TtlMillis(ttl));
  return c;
}

Command FencedAcquireCommand(absl::string_view key,
                             absl::string_view counter_key,
                             absl::string_view marker_key,
                             absl::string_view token, absl::Duration ttl) {
  const std::string k[] = {std::string(key)};
  const std::string c[] = {std::string(counter_key)};
  return FencedAcquireCommand(k, c, marker_key, token, ttl);
}

Command FenceWriteCommand(absl::Span<const std::string> counter_keys,
                          uint64_t fence) {
  Command c;
  c.script = &FenceWriteScript();
  c.num_keys = static_cast<int>(counter_keys.size());
  c.args.assign(counter_keys.begin(), counter_keys.end());
  c.args.push_back(absl::StrCat(fence));
  return c;
}

Command FenceWriteCommand(absl::string_view counter_key, uint64_t fence) {
  const std::string k[] = {std::string(counter_key)};
  return FenceWriteCommand(k, fence);
}

}  // namespace redlock::internal
