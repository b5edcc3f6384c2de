// Copyright 2026 The redlock Authors.

#include "src/algorithm/scripts.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/sha1.h"

namespace redlock::internal {
namespace {

// Every script takes one key per resource of a lock (one, or several for a
// multi-resource lock) and treats them as one: a master's answer is for the
// whole set.

// Deletes every key that holds ARGV[1]. Returns 1 if it deleted any, else 0.
// With ARGV[3] (a waiting set, WriterWaitingKey()) and ARGV[4] (its
// arrival keys' prefix, WaiterArrivalKeyPrefix()), the message names the
// waiter of that set whose arrival key is earliest; none if the set is
// missing, larger than 64, or unreadable (pcall: a foreign value there must
// not fail the release), or no id in it has an arrival key. With ARGV[5]
// (the hand-off entries' prefix, WaiterHandOffKeyPrefix()), the key goes to
// the waiter queued longest among those with a well-formed hand-off entry
// "<proof> <ttl ms> <token>" for another token than ARGV[1]: the key is set
// to its token with PX its TTL, its id, arrival key and entry are removed,
// and the message is "granted <proof>", published on the heir's own channel
// (the name of its entry, ARGV[5] .. id) rather than the key's: a hand-off
// wakes no other waiter. With ARGV[6], a waiter id: that
// waiter's hand-off entry is deleted first, and with ARGV[7] "1" its id
// and arrival key too (it leaves the queue), so that no release hands it
// the key after this one. ARGV[2] "h": hands on, but publishes only a
// hand-off (a lost attempt's give-back is quiet, or the waiters it woke,
// itself included, would try again against the holder at once).
// One Lua line per C++ line (scripts/mutants.txt finds them).
// clang-format off
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
// clang-format on

// PEXPIRE on existing keys only, and only if every key still holds ARGV[1]:
// an expired lock is never resurrected, a set that lost one key is not
// extended at all.
constexpr absl::string_view kExtendSource =
    "for i = 1, #KEYS do\n"
    "  if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('pexpire', KEYS[i], ARGV[2])\n"
    "end\n"
    "return 1\n";

// Many locks' extensions in one call (Engine's keep-alive batches). ARGV is
// one group of four per lock: its number of keys n, its token, its TTL in ms,
// and its semaphore limit ('' for a lock). Its keys are the next n of KEYS
// (a semaphore's: the limit key, then its slots). Each lock is judged alone,
// all or none over its own keys, exactly as kExtendSource (a lock) and
// kSemaphoreExtendSource (a permit set) judge it; one lock's refusal changes
// nothing for the others. Returns one integer per lock, in order: 1
// extended, 0 not ours (nothing changed), -1 its semaphore's limit key holds
// another limit (nothing changed). No unpack: no Lua stack limit applies.
// clang-format off
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
// clang-format on

// All or none: sets every key (NX, PX ARGV[2]) only if none exists. Returns
// 1 if it set them, else 0.
constexpr absl::string_view kMultiAcquireSource =
    "for i = 1, #KEYS do\n"
    "  if redis.call('exists', KEYS[i]) == 1 then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])\n"
    "  redis.call('publish', KEYS[i], 'taken')\n"
    "end\n"
    "return 1\n";

// A counting semaphore's permit set (see SemaphoreAcquireScript()). KEYS:
// the limit key, then slot 0 .. slot L-1. ARGV: token, ttl ms, limit, then
// the candidate slot numbers. Takes every candidate slot, or none; answers
// with the free slots either way.
// clang-format off
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
    "for s = 2, #KEYS do\n"
    "  if redis.call('exists', KEYS[s]) == 0 then reply[#reply + 1] = s - 2 end\n"
    "end\n"
    "return reply\n";
// clang-format on

// TEST ONLY, and unsafe (see SemaphoreCountersAcquireScript()): admits the
// holder while at least ARGV[4] of this master's own slots are free, taking
// the lowest free ones.
// clang-format off
constexpr absl::string_view kSemaphoreCountersAcquireSource =
    "local limit = redis.call('get', KEYS[1])\n"
    "if limit and limit ~= ARGV[3] then return {-1, limit} end\n"
    "local free = {}\n"
    "for s = 2, #KEYS do\n"
    "  if redis.call('exists', KEYS[s]) == 0 then free[#free + 1] = s end\n"
    "end\n"
    "local reply = {0}\n"
    "if #free >= tonumber(ARGV[4]) then\n"
    "  for i = 1, tonumber(ARGV[4]) do\n"
    "    redis.call('set', KEYS[free[i]], ARGV[1], 'PX', ARGV[2])\n"
    "  end\n"
    "  local ttl = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "  redis.call('set', KEYS[1], ARGV[3], 'PX', ttl)\n"
    "  reply[1] = 1\n"
    "end\n"
    "for s = 2, #KEYS do\n"
    "  if redis.call('exists', KEYS[s]) == 0 then reply[#reply + 1] = s - 2 end\n"
    "end\n"
    "return reply\n";
// clang-format on

// KEYS: the limit key, then the permit set's slot keys. ARGV: token, ttl ms,
// limit. The extend script's rule on the slots, and the limit key raised to
// the longer of its TTL and ARGV[2] (set again if it is gone); a limit key
// that holds another limit is an error reply, and nothing changes.
// clang-format off
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

// A read-write lock (see ReaderAcquireScript() and the three after it).
// 'shared' is kSharedLockValue (keys.h); rwlock_test checks they agree. A
// reader's key is the index's key base followed by its token, so the base
// is KEYS[2] without the token's length.
// clang-format off
constexpr absl::string_view kReaderAcquireSource =
    "if redis.call('exists', KEYS[3]) == 1 then return {0, 'writer waiting'} end\n"
    "local holder = redis.call('get', KEYS[1])\n"
    "if holder and holder ~= 'shared' then return {0, 'writer'} end\n"
    "if redis.call('scard', KEYS[4]) >= tonumber(ARGV[3]) then\n"
    "  local base = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[1])\n"
    "  for _, t in ipairs(redis.call('smembers', KEYS[4])) do\n"
    "    if redis.call('exists', base .. t) == 0 then redis.call('srem', KEYS[4], t) end\n"
    "  end\n"
    "  if redis.call('scard', KEYS[4]) >= tonumber(ARGV[3]) then return {0, 'too many readers'} end\n"
    "end\n"
    "local longer = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "redis.call('set', KEYS[1], 'shared', 'PX', longer)\n"
    "redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2])\n"
    "redis.call('sadd', KEYS[4], ARGV[1])\n"
    "redis.call('pexpire', KEYS[4], longer)\n"
    "return {1}\n";

constexpr absl::string_view kReaderExtendSource =
    "if redis.call('get', KEYS[2]) ~= ARGV[1] then return 0 end\n"
    "if redis.call('get', KEYS[1]) ~= 'shared' then return 0 end\n"
    "redis.call('pexpire', KEYS[2], ARGV[2])\n"
    "local grown = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "redis.call('pexpire', KEYS[1], grown)\n"
    "redis.call('sadd', KEYS[3], ARGV[1])\n"
    "redis.call('pexpire', KEYS[3], grown)\n"
    "return 1\n";

// A reader key without a TTL (never set so by this library) keeps R as it
// is: fail closed.
constexpr absl::string_view kReaderReleaseSource =
    "if redis.call('get', KEYS[2]) ~= ARGV[1] then return 0 end\n"
    "redis.call('del', KEYS[2])\n"
    "redis.call('srem', KEYS[3], ARGV[1])\n"
    "local base = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[1])\n"
    "local longest = 0\n"
    "local forever = false\n"
    "for _, t in ipairs(redis.call('smembers', KEYS[3])) do\n"
    "  local left = redis.call('pttl', base .. t)\n"
    "  if left == -2 then redis.call('srem', KEYS[3], t)\n"
    "  elseif left == -1 then forever = true\n"
    "  else longest = math.max(longest, left, 1) end\n"
    "end\n"
    "if forever or redis.call('get', KEYS[1]) ~= 'shared' then return 1 end\n"
    "if longest == 0 then\n"
    "  redis.call('del', KEYS[1], KEYS[3])\n"
    "  if ARGV[2] ~= '0' then redis.call('publish', KEYS[1], 'released') end\n"
    "else\n"
    "  redis.call('pexpire', KEYS[1], longest)\n"
    "  redis.call('pexpire', KEYS[3], longest)\n"
    "end\n"
    "return 1\n";

constexpr absl::string_view kWriterAcquireSource =
    "local mine = KEYS[4] and redis.call('get', KEYS[1]) == ARGV[1]\n"
    "if mine or redis.call('exists', KEYS[1]) == 0 then\n"
    "  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
    "  if ARGV[5] == '1' then redis.call('publish', KEYS[1], 'taken') end\n"
    "  redis.call('srem', KEYS[2], ARGV[3])\n"
    "  if KEYS[3] then redis.call('del', KEYS[3]) end\n"
    "  if KEYS[4] then redis.call('del', KEYS[4]) end\n"
    "  return 1\n"
    "end\n"
    "redis.call('sadd', KEYS[2], ARGV[3])\n"
    "local wait = math.max(tonumber(ARGV[4]), redis.call('pttl', KEYS[2]))\n"
    "redis.call('pexpire', KEYS[2], wait)\n"
    "if KEYS[3] then\n"
    "  local now = redis.call('time')\n"
    "  local at = now[1] .. string.format('%06d', tonumber(now[2]))\n"
    "  redis.call('set', KEYS[3], at, 'NX', 'PX', ARGV[4])\n"
    "  redis.call('pexpire', KEYS[3], ARGV[4])\n"
    "end\n"
    "if KEYS[4] then redis.call('set', KEYS[4], ARGV[6] .. ' ' .. ARGV[2] .. ' ' .. ARGV[1], 'PX', ARGV[7]) end\n"
    "return 0\n";
// clang-format on

// KEYS: n lock keys, their n counters, the marker. All or none, like the
// multi acquire, and reads every counter and the marker in the same step:
// returns {1 or 0, counter 1 or "", ..., counter n or "", marker or ""}.
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

// Raises every counter to ARGV[1], only if every one is lower (never lowers
// one). Returns 1 if it raised them, else 0.
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

// ARGV: state, run_id, max_ttl, the membership suffix (MarkerSuffix(), or
// empty). Writes "<state>:<TIME>:<run_id>:<max_ttl><suffix>;since=<TIME>"
// unless a marker is there. A marker from before membership records (no
// ';') gets the suffix appended, its own part kept. Returns the marker now
// stored.
constexpr absl::string_view kMarkerSource =
    "local current = redis.call('get', KEYS[1])\n"
    "local now = redis.call('time')\n"
    "local stamp = now[1] .. string.sub('000000' .. now[2], -6)\n"
    "local suffix = ''\n"
    "if ARGV[4] ~= '' then suffix = ARGV[4] .. ';since=' .. stamp end\n"
    "if current then\n"
    "  if suffix == '' or string.find(current, ';', 1, true) then\n"
    "    return current\n"
    "  end\n"
    "  current = current .. suffix\n"
    "  redis.call('set', KEYS[1], current)\n"
    "  return current\n"
    "end\n"
    "local value = ARGV[1] .. ':' .. stamp .. ':' .. ARGV[2] .. ':' ..\n"
    "    ARGV[3] .. suffix\n"
    "redis.call('set', KEYS[1], value)\n"
    "return value\n";

// A change of the deployment's members (`redlock reconfigure`). ARGV: the
// record expected there now (RecordText(), or '' for none), the new suffix
// (MarkerSuffix()), and for a server that carries no marker its state,
// run_id and max_ttl. Writes the new record only over the expected one,
// keeping the marker's own part and refusing a server whose marker names it
// as another member. Returns {1, marker now} if written, {0, marker now} if
// not (another record, or another member name).
constexpr absl::string_view kReconfigureSource =
    "local current = redis.call('get', KEYS[1])\n"
    "local now = redis.call('time')\n"
    "local stamp = now[1] .. string.sub('000000' .. now[2], -6)\n"
    "local suffix = ARGV[2] .. ';since=' .. stamp\n"
    "if not current then\n"
    "  if ARGV[1] ~= '' then return {0, ''} end\n"
    "  local value = ARGV[3] .. ':' .. stamp .. ':' .. ARGV[4] .. ':' ..\n"
    "      ARGV[5] .. suffix\n"
    "  redis.call('set', KEYS[1], value)\n"
    "  return {1, value}\n"
    "end\n"
    "local cut = string.find(current, ';', 1, true)\n"
    "local own = current\n"
    "local record = ''\n"
    "if cut then\n"
    "  own = string.sub(current, 1, cut - 1)\n"
    "  local rest = string.sub(current, cut)\n"
    "  local member = string.match(rest, ';member=([^;]*)')\n"
    "  local wanted = string.match(ARGV[2], ';member=([^;]*)')\n"
    "  if member ~= wanted then return {0, current} end\n"
    "  record = string.match(rest, ';(deployment=.*);since=') or\n"
    "      string.match(rest, ';(deployment=.*)$') or ''\n"
    "end\n"
    "if record ~= ARGV[1] then return {0, current} end\n"
    "local value = own .. suffix\n"
    "redis.call('set', KEYS[1], value)\n"
    "return {1, value}\n";

Script MakeScript(absl::string_view name, absl::string_view source,
                  bool creates_lock = false, bool loaded_on_connect = true) {
  return Script{name, source, Sha1Hex(source), creates_lock, loaded_on_connect};
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

const Script& FencedAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("fenced acquire", kFencedAcquireSource,
                            /*creates_lock=*/true));
  return *script;
}

const Script& MultiAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("multi acquire", kMultiAcquireSource,
                            /*creates_lock=*/true));
  return *script;
}

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

const Script& SemaphoreCountersAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("semaphore counters acquire (test only, unsafe)",
                            kSemaphoreCountersAcquireSource,
                            /*creates_lock=*/true,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& ReaderAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("reader acquire", kReaderAcquireSource,
                            /*creates_lock=*/true,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& ReaderExtendScript() {
  static const Script* const script =
      new Script(MakeScript("reader extend", kReaderExtendSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& ReaderReleaseScript() {
  static const Script* const script =
      new Script(MakeScript("reader release", kReaderReleaseSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& WriterAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("writer acquire", kWriterAcquireSource,
                            /*creates_lock=*/true,
                            /*loaded_on_connect=*/false));
  return *script;
}

const Script& FenceWriteScript() {
  static const Script* const script =
      new Script(MakeScript("fence write", kFenceWriteSource));
  return *script;
}

const Script& ReconfigureScript() {
  static const Script* const script =
      new Script(MakeScript("reconfigure", kReconfigureSource));
  return *script;
}

const Script& MarkerScript() {
  static const Script* const script =
      new Script(MakeScript("marker", kMarkerSource));
  return *script;
}

const std::vector<const Script*>& AllScripts() {
  static const auto* const scripts = new std::vector<const Script*>{
      &ReleaseScript(), &ExtendScript(), &FencedAcquireScript(),
      &FenceWriteScript(), &MultiAcquireScript(), &MarkerScript(),
      &SemaphoreAcquireScript(), &SemaphoreExtendScript(),
      &ReaderAcquireScript(), &ReaderExtendScript(), &ReaderReleaseScript(),
      &WriterAcquireScript(), &BatchExtendScript(),
      // Test only (Engine::set_semaphore_majority_of_counters_for_testing);
      // listed so that its on-demand SCRIPT LOAD is recognised.
      &SemaphoreCountersAcquireScript()};
  // Not ReconfigureScript(): only `redlock reconfigure` runs it, with EVAL.
  return *scripts;
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

Command MarkerCommand(absl::string_view marker_key, absl::string_view state,
                      absl::string_view run_id, absl::Duration max_ttl,
                      absl::string_view suffix) {
  Command c;
  c.script = &MarkerScript();
  c.num_keys = 1;
  c.args = {std::string(marker_key), std::string(state), std::string(run_id),
            absl::StrCat(absl::ToInt64Milliseconds(max_ttl)),
            std::string(suffix)};
  return c;
}

Command ReconfigureCommand(absl::string_view marker_key,
                           absl::string_view expected_record,
                           absl::string_view suffix, absl::string_view state,
                           absl::string_view run_id, absl::Duration max_ttl) {
  Command c;
  c.script = &ReconfigureScript();
  c.num_keys = 1;
  c.args = {std::string(marker_key),
            std::string(expected_record),
            std::string(suffix),
            std::string(state),
            std::string(run_id),
            absl::StrCat(absl::ToInt64Milliseconds(max_ttl))};
  return c;
}

void ParseMarker(absl::string_view value, std::string* state, int64_t* time_us,
                 std::string* run_id, int64_t* max_ttl_ms,
                 std::optional<std::string>* record) {
  // The membership record follows the first ';' (member names hold ':').
  const size_t cut = value.find(';');
  if (record != nullptr) {
    if (cut == absl::string_view::npos) {
      record->reset();
    } else {
      *record = std::string(value.substr(cut + 1));
    }
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(value.substr(0, cut), ':');
  *state = std::string(fields[0]);
  *time_us = 0;
  if (run_id != nullptr) run_id->clear();
  if (max_ttl_ms != nullptr) *max_ttl_ms = 0;
  int64_t t = 0;
  if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &t) && t > 0) {
    *time_us = t;
  }
  if (fields.size() > 2 && run_id != nullptr) *run_id = std::string(fields[2]);
  if (fields.size() > 3 && max_ttl_ms != nullptr &&
      absl::SimpleAtoi(fields[3], &t) && t > 0) {
    *max_ttl_ms = t;
  }
}

absl::Duration SentTtl(absl::Duration ttl) {
  return absl::Milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
}

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(absl::ToInt64Milliseconds(SentTtl(ttl)));
}

Command AcquireCommand(absl::string_view key, absl::string_view token,
                       absl::Duration ttl) {
  Command c;
  c.args = {"SET", std::string(key), std::string(token), "NX",
            "PX",  TtlMillis(ttl)};
  return c;
}

namespace {

// A script call on `keys` with `args` after them.
Command KeysCommand(const Script& script, absl::Span<const std::string> keys,
                    std::vector<std::string> args) {
  Command c;
  c.script = &script;
  c.num_keys = static_cast<int>(keys.size());
  c.args.reserve(keys.size() + args.size());
  c.args.insert(c.args.end(), keys.begin(), keys.end());
  c.args.insert(c.args.end(), std::make_move_iterator(args.begin()),
                std::make_move_iterator(args.end()));
  return c;
}

}  // namespace

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

Command SemaphoreAnnounceCommand(absl::string_view limit_key,
                                 absl::string_view message) {
  Command command;
  command.args = {"PUBLISH", std::string(limit_key), std::string(message)};
  return command;
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

namespace {

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
    argv->push_back(number(static_cast<int64_t>(e.keys.size()) +
                           (e.limit_key != nullptr)));
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

Command SemaphoreCountersAcquireCommand(absl::string_view limit_key,
                                        absl::Span<const std::string> slot_keys,
                                        absl::string_view token,
                                        absl::Duration ttl, int limit,
                                        int permits) {
  Command c;
  c.script = &SemaphoreCountersAcquireScript();
  c.num_keys = static_cast<int>(slot_keys.size() + 1);
  c.args.reserve(c.num_keys + 4);
  c.args.emplace_back(limit_key);
  c.args.insert(c.args.end(), slot_keys.begin(), slot_keys.end());
  c.args.emplace_back(token);
  c.args.push_back(TtlMillis(ttl));
  c.args.push_back(absl::StrCat(limit));
  c.args.push_back(absl::StrCat(permits));
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

Command ReaderAcquireCommand(absl::string_view lock_key,
                             absl::string_view reader_key,
                             absl::string_view waiting_key,
                             absl::string_view readers_key,
                             absl::string_view token, absl::Duration ttl,
                             int max_readers) {
  const std::string keys[] = {std::string(lock_key), std::string(reader_key),
                              std::string(waiting_key),
                              std::string(readers_key)};
  return KeysCommand(
      ReaderAcquireScript(), keys,
      {std::string(token), TtlMillis(ttl), absl::StrCat(max_readers)});
}

Command ReaderExtendCommand(absl::string_view lock_key,
                            absl::string_view reader_key,
                            absl::string_view readers_key,
                            absl::string_view token, absl::Duration ttl) {
  const std::string keys[] = {std::string(lock_key), std::string(reader_key),
                              std::string(readers_key)};
  return KeysCommand(ReaderExtendScript(), keys,
                     {std::string(token), TtlMillis(ttl)});
}

Command ReaderReleaseCommand(absl::string_view lock_key,
                             absl::string_view reader_key,
                             absl::string_view readers_key,
                             absl::string_view token, bool announce) {
  const std::string keys[] = {std::string(lock_key), std::string(reader_key),
                              std::string(readers_key)};
  return KeysCommand(ReaderReleaseScript(), keys,
                     {std::string(token), announce ? "1" : "0"});
}

Command WriterAcquireCommand(absl::string_view lock_key,
                             absl::string_view waiting_key,
                             absl::string_view token, absl::Duration ttl,
                             absl::string_view waiter_id,
                             absl::Duration waiting_ttl, bool announce,
                             absl::string_view arrival_key,
                             const HandOffEntry* hand_off) {
  std::vector<std::string> keys = {std::string(lock_key),
                                   std::string(waiting_key)};
  if (!arrival_key.empty()) keys.emplace_back(arrival_key);
  std::vector<std::string> args = {
      std::string(token), TtlMillis(ttl), std::string(waiter_id),
      TtlMillis(waiting_ttl), announce ? "1" : "0"};
  if (hand_off != nullptr && !arrival_key.empty()) {
    keys.emplace_back(hand_off->key);
    args.emplace_back(hand_off->proof);
    args.push_back(TtlMillis(hand_off->ttl));
  }
  return KeysCommand(WriterAcquireScript(), keys, std::move(args));
}

void CommandArgvViews(const Command& command, bool eval, CommandViews* out) {
  out->argv.clear();
  if (command.script == nullptr) {
    out->argv.assign(command.args.begin(), command.args.end());
    return;
  }
  out->argv.reserve(command.args.size() + 3);
  if (eval) {
    out->argv.emplace_back("EVAL");
    out->argv.emplace_back(command.script->source);
  } else {
    out->argv.emplace_back("EVALSHA");
    out->argv.emplace_back(command.script->sha1);
  }
  char* end =
      absl::numbers_internal::FastIntToBuffer(command.num_keys, out->num_keys);
  out->argv.emplace_back(out->num_keys, end - out->num_keys);
  out->argv.insert(out->argv.end(), command.args.begin(), command.args.end());
}

void EncodeCall(Command* command) {
  CommandViews views;
  CommandArgvViews(*command, /*eval=*/false, &views);
  command->encoded.clear();
  AppendRespCommand(views.argv, &command->encoded);
}

std::string EvalText(const Command& command) {
  const absl::string_view text = command.encoded;
  const absl::string_view count = text.substr(0, text.find("\r\n") + 2);
  const absl::string_view source = command.script->source;
  std::string out;
  out.reserve(count.size() + 10 + 24 + source.size() +
              (text.size() - command.encoded_args_at));
  absl::StrAppend(&out, count, "$4\r\nEVAL\r\n$", source.size(), "\r\n", source,
                  "\r\n");
  out.append(text.data() + command.encoded_args_at,
             text.size() - command.encoded_args_at);
  return out;
}

std::vector<std::string> CommandArgv(const Command& command, bool eval) {
  CommandViews views;
  CommandArgvViews(command, eval, &views);
  return std::vector<std::string>(views.argv.begin(), views.argv.end());
}

}  // namespace redlock::internal
