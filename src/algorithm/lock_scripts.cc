// Copyright 2026 The redlock Authors.
//
// The lock's scripts and commands: acquire (one key, or several all or none),
// release (with the hand-off to a waiting writer), extend, the keep-alives'
// batched extension.

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
// ReleaseScript(). KEYS: a lock's keys. ARGV: [1] token, [2] "0" to publish
// nothing, "h" to publish only a hand-off, else publish; optional [3] the
// waiting set (WriterWaitingKey()), [4] its arrival keys' prefix
// (WaiterArrivalKeyPrefix()), [5] the hand-off entries' prefix
// (WaiterHandOffKeyPrefix()), [6] a waiter id, [7] "1" for that waiter to
// leave the queue.
// Deletes every key that holds ARGV[1]; returns 1 if it deleted any, else 0.
// For each key deleted it publishes on the key's channel kReleasedMessage,
// or with ARGV[3] and ARGV[4] "released <id>" for the waiter of that set
// whose arrival key is earliest (plain kReleasedMessage if the set is
// missing, holds more than 64 ids, is unreadable — pcall: a foreign value
// there must not fail the release — or no id in it has an arrival key).
// With ARGV[5] the key goes instead to the waiter queued longest among those
// with a well-formed hand-off entry "<proof> <ttl ms> <token>" for another
// token than ARGV[1]: the key is set to its token with PX its TTL, its id,
// arrival key and entry are removed, and "granted <proof>" (kGrantedMessage)
// is published on the heir's own channel (its entry's name, ARGV[5] .. id)
// rather than the key's, so a hand-off wakes no other waiter. With ARGV[6],
// that waiter's hand-off entry is deleted first, and with ARGV[7] "1" its id
// and arrival key too, so that no later release hands it the key
// (WithdrawCommand()). ARGV[2] "h" exists for a lost attempt's give-back:
// it hands on, but a plain "released" would wake the waiters, itself
// included, against the holder at once.
constexpr absl::string_view kReleaseSource =
    "local function released()\n"
    "  if not ARGV[3] then return 'released' end\n"
    "  local ids = redis.pcall('smembers', ARGV[3])\n"
    "  if type(ids) ~= 'table' or ids.err or #ids > 64 then return 'released' end\n"
    "  local next, first = nil, nil\n"
    "  local heir, since, deed = nil, nil, nil\n"
    "  for _, id in ipairs(ids) do\n"
    "    local at = redis.pcall('get', ARGV[4] .. id)\n"
    "    at = type(at) == 'string' and tonumber(at)\n"
    "    if at and (not first or at < first) then next, first = id, at end\n"
    "    local entry = at and ARGV[5] and redis.pcall('get', ARGV[5] .. id)\n"
    "    local proof, ttl, token = nil, nil, nil\n"
    "    if type(entry) == 'string' then proof, ttl, token = string.match(entry, '^(%x+) (%d+) (%x+)$') end\n"
    "    if token == ARGV[1] then token = nil end\n"
    "    if token and tonumber(ttl) > 0 and (not since or at < since) then heir, since, deed = id, at, {proof, ttl, token} end\n"
    "  end\n"
    "  if heir then return 'granted ' .. deed[1], heir, deed end\n"
    "  if next then return 'released ' .. next end\n"
    "  return 'released'\n"
    "end\n"
    "if ARGV[6] then\n"
    "  redis.call('del', ARGV[5] .. ARGV[6])\n"
    "  if ARGV[7] == '1' then redis.call('srem', ARGV[3], ARGV[6]) end\n"
    "  if ARGV[7] == '1' then redis.call('del', ARGV[4] .. ARGV[6]) end\n"
    "end\n"
    "local deleted = 0\n"
    "for i = 1, #KEYS do\n"
    "  if redis.call('get', KEYS[i]) == ARGV[1] then\n"
    "    deleted = deleted + redis.call('del', KEYS[i])\n"
    "    local message, heir, deed = 'released', nil, nil\n"
    "    if ARGV[2] ~= '0' then message, heir, deed = released() end\n"
    "    if heir then redis.call('set', KEYS[i], deed[3], 'PX', deed[2]) end\n"
    "    if heir then redis.call('srem', ARGV[3], heir) end\n"
    "    if heir then redis.call('del', ARGV[4] .. heir, ARGV[5] .. heir) end\n"
    "    if heir then redis.call('publish', ARGV[5] .. heir, message) elseif ARGV[2] ~= '0' and ARGV[2] ~= 'h' then redis.call('publish', KEYS[i], message) end\n"
    "  end\n"
    "end\n"
    "if deleted > 0 then return 1 end\n"
    "return 0\n";

// ExtendScript(). KEYS: a lock's keys. ARGV: token, TTL in ms.
// Sets every key's TTL to ARGV[2] if every one holds ARGV[1], else changes
// nothing. Returns 1 if extended, else 0. PEXPIRE on existing keys only: an
// expired lock is never resurrected, and a set that lost one key is not
// extended at all.
constexpr absl::string_view kExtendSource =
    "for i = 1, #KEYS do\n"
    "  if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('pexpire', KEYS[i], ARGV[2])\n"
    "end\n"
    "return 1\n";

// BatchExtendScript(): many locks' extensions in one call (the keep-alive's
// batches), each lock judged alone. ARGV: one group of four per lock — its
// number of keys n, its token, its TTL in ms, its semaphore limit ('' for a
// lock). KEYS: each lock's n keys in turn (a permit set's: its limit key,
// then its slots). Per lock, all or none over its own keys, exactly as
// kExtendSource (a lock) or kSemaphoreExtendSource (a permit set) judges it;
// one lock's refusal changes nothing for another. Returns an array with one
// integer per lock, in order: 1 extended, 0 not held by that token (nothing
// of it changed), -1 a permit set whose limit key holds another limit
// (nothing of it changed). Never creates a lock key. No unpack: no Lua stack
// limit applies.
constexpr absl::string_view kBatchExtendSource =
    "local out = {}\n"
    "local k = 0\n"
    "for e = 1, #ARGV, 4 do\n"
    "  local n = tonumber(ARGV[e])\n"
    "  local first = k + 1\n"
    "  if ARGV[e + 3] ~= '' then first = k + 2 end\n"
    "  local ok = 1\n"
    "  for i = first, k + n do\n"
    "    if redis.call('get', KEYS[i]) ~= ARGV[e + 1] then ok = 0 break end\n"
    "  end\n"
    "  if ok == 1 and ARGV[e + 3] ~= '' then\n"
    "    local limit = redis.call('get', KEYS[k + 1])\n"
    "    if limit and limit ~= ARGV[e + 3] then ok = -1 end\n"
    "  end\n"
    "  if ok == 1 then\n"
    "    for i = first, k + n do redis.call('pexpire', KEYS[i], ARGV[e + 2]) end\n"
    "    if ARGV[e + 3] ~= '' then\n"
    "      local ttl = math.max(tonumber(ARGV[e + 2]), redis.call('pttl', KEYS[k + 1]))\n"
    "      redis.call('set', KEYS[k + 1], ARGV[e + 3], 'PX', ttl)\n"
    "    end\n"
    "  end\n"
    "  out[#out + 1] = ok\n"
    "  k = k + n\n"
    "end\n"
    "return out\n";

// MultiAcquireScript(). KEYS: a lock's keys. ARGV: token, TTL in ms.
// All or none: sets every key to ARGV[1] with PX ARGV[2] if none exists, and
// publishes kTakenMessage on each. Returns 1 if it set them, else 0. Also a
// retry's acquire for one resource while waiters listen (SET does not
// publish).
constexpr absl::string_view kMultiAcquireSource =
    "for i = 1, #KEYS do\n"
    "  if redis.call('exists', KEYS[i]) == 1 then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
    "  redis.call('publish', KEYS[i], 'taken')\n"
    "end\n"
    "return 1\n";

// clang-format on

// BatchExtendScript's keys, then its arguments, for `entries`, appended to
// `argv` as views into the entries and into `numbers` (the key counts, TTLs
// and limits as text; reserved whole here, so that the views stay good).
// Returns the number of keys.
int AppendBatchExtendArgs(absl::Span<const BatchExtendEntry> entries,
                          std::string* numbers,
                          std::vector<absl::string_view>* argv) {
  size_t keys = 0;
  for (const BatchExtendEntry& e : entries) {
    keys += e.keys.size() + (e.limit_key == nullptr ? 0 : 1);
  }
  numbers->reserve(3 * entries.size() *
                   absl::numbers_internal::kFastToBufferSize);
  auto number = [numbers](int64_t n) {
    char buffer[absl::numbers_internal::kFastToBufferSize];
    char* end = absl::numbers_internal::FastIntToBuffer(n, buffer);
    const size_t at = numbers->size();
    numbers->append(buffer, end - buffer);
    return absl::string_view(numbers->data() + at, end - buffer);
  };
  argv->reserve(argv->size() + keys + 4 * entries.size());
  for (const BatchExtendEntry& e : entries) {
    if (e.limit_key != nullptr) argv->emplace_back(*e.limit_key);
    argv->insert(argv->end(), e.keys.begin(), e.keys.end());
  }
  // Entries of one batch mostly share a TTL: its text is made once.
  absl::Duration last_ttl = -absl::InfiniteDuration();
  absl::string_view ttl_text;
  for (const BatchExtendEntry& e : entries) {
    argv->push_back(
        number(static_cast<int64_t>(e.keys.size()) + (e.limit_key != nullptr)));
    argv->emplace_back(e.token);
    if (e.ttl != last_ttl) {
      last_ttl = e.ttl;
      ttl_text = number(absl::ToInt64Milliseconds(SentTtl(e.ttl)));
    }
    argv->push_back(ttl_text);
    argv->push_back(e.limit_key == nullptr ? absl::string_view()
                                           : number(e.limit));
  }
  return static_cast<int>(keys);
}

}  // namespace

const Script& ReleaseScript() {
  static const Script* const script =
      new Script(MakeScript("release", kReleaseSource));
  return *script;
}

const Script& ExtendScript() {
  static const Script* const script =
      new Script(MakeScript("extend", kExtendSource));
  return *script;
}

const Script& BatchExtendScript() {
  static const Script* const script =
      new Script(MakeScript("batch extend", kBatchExtendSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& MultiAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("multi acquire", kMultiAcquireSource,
                            /*creates_lock=*/true));
  return *script;
}

Command AcquireCommand(absl::string_view key, absl::string_view token,
                       absl::Duration ttl) {
  Command c;
  c.args = {"SET", std::string(key), std::string(token), "NX",
            "PX",  TtlMillis(ttl)};
  return c;
}

Command AcquireCommand(absl::Span<const std::string> keys,
                       absl::string_view token, absl::Duration ttl,
                       bool announce) {
  if (keys.size() == 1 && !announce) return AcquireCommand(keys[0], token, ttl);
  return KeysCommand(MultiAcquireScript(), keys,
                     {std::string(token), TtlMillis(ttl)});
}

Command ReleaseCommand(absl::Span<const std::string> keys,
                       absl::string_view token, bool announce) {
  // A lock's release, the common case, takes no extra argument.
  if (announce) return KeysCommand(ReleaseScript(), keys, {std::string(token)});
  return KeysCommand(ReleaseScript(), keys, {std::string(token), "0"});
}

Command ReleaseCommand(absl::string_view key, absl::string_view token,
                       bool announce) {
  const std::string k[] = {std::string(key)};
  return ReleaseCommand(k, token, announce);
}

Command ReleaseCommand(absl::string_view key, absl::string_view token,
                       absl::string_view waiting_key,
                       absl::string_view arrival_prefix,
                       absl::string_view hand_off_prefix) {
  const std::string k[] = {std::string(key)};
  std::vector<std::string> args = {std::string(token), "1",
                                   std::string(waiting_key),
                                   std::string(arrival_prefix)};
  if (!hand_off_prefix.empty()) args.emplace_back(hand_off_prefix);
  return KeysCommand(ReleaseScript(), k, std::move(args));
}

Command WithdrawCommand(absl::string_view key, absl::string_view token,
                        absl::string_view waiting_key,
                        absl::string_view arrival_prefix,
                        absl::string_view hand_off_prefix,
                        absl::string_view waiter_id, bool leave_queue) {
  const std::string k[] = {std::string(key)};
  return KeysCommand(
      ReleaseScript(), k,
      {std::string(token), leave_queue ? "1" : "h", std::string(waiting_key),
       std::string(arrival_prefix), std::string(hand_off_prefix),
       std::string(waiter_id), leave_queue ? "1" : "0"});
}

Command ExtendCommand(absl::Span<const std::string> keys,
                      absl::string_view token, absl::Duration ttl) {
  return KeysCommand(ExtendScript(), keys,
                     {std::string(token), TtlMillis(ttl)});
}

Command ExtendCommand(absl::string_view key, absl::string_view token,
                      absl::Duration ttl) {
  const std::string k[] = {std::string(key)};
  return ExtendCommand(k, token, ttl);
}

Command BatchExtendCommand(absl::Span<const BatchExtendEntry> entries) {
  Command c;
  c.script = &BatchExtendScript();
  std::string numbers;
  std::vector<absl::string_view> args;
  c.num_keys = AppendBatchExtendArgs(entries, &numbers, &args);
  c.args.reserve(args.size());
  for (absl::string_view arg : args) c.args.emplace_back(arg);
  return c;
}

Command EncodedBatchExtendCommand(absl::Span<const BatchExtendEntry> entries) {
  Command c;
  c.script = &BatchExtendScript();
  std::string numbers;
  std::vector<absl::string_view> argv = {"EVALSHA", c.script->sha1, ""};
  c.num_keys = AppendBatchExtendArgs(entries, &numbers, &argv);
  char num_keys[absl::numbers_internal::kFastToBufferSize];
  argv[2] = absl::string_view(
      num_keys,
      absl::numbers_internal::FastIntToBuffer(c.num_keys, num_keys) - num_keys);
  AppendRespCommand(argv, &c.encoded);
  // Right after "*<n>\r\n$7\r\nEVALSHA\r\n$40\r\n<sha1>\r\n" (the
  // SHA1's hex digits cannot occur in what comes before it).
  c.encoded_args_at =
      c.encoded.find(c.script->sha1) + c.script->sha1.size() + 2;
  return c;
}

}  // namespace redlock::internal
