// Copyright 2026 The redlock Authors.
//
// The read-write lock's scripts and commands: a reader's acquisition,
// extension and release, a waiting writer's acquisition.

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
// A read-write lock's scripts. R is the lock key; 'shared' is
// kSharedLockValue (keys.h; rwlock_test checks they agree). A reader's key is
// the index's key base followed by its token, so the base is KEYS[2] without
// the token's length.
//
// ReaderAcquireScript() (AcquireOptions::shared). KEYS: R, the reader's key
// (SharedHolderKey()), the writer-waiting key, the readers' index
// (SharedHoldersKey()). ARGV: token, TTL in ms, the most readers per
// resource.
// Refuses, changing nothing, with {0, "writer waiting"} while the
// writer-waiting key exists, {0, "writer"} if R holds anything but 'shared',
// {0, "too many readers"} if the index still has the most readers once
// pruned of readers whose key is gone. Otherwise sets R to 'shared' with PX
// the longer of its remaining TTL and ttl, the reader's key to the token with
// PX ttl, adds the token to the index with R's TTL, and returns {1}.
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

// ReaderExtendScript(). KEYS: R, the reader's key, the index. ARGV: token,
// TTL in ms.
// 0, changing nothing, unless the reader's key holds the token and R holds
// 'shared' (never extends a writer's R). Else sets the reader's key to PX
// ttl, R and the index to PX the longer of R's remaining TTL and ttl, keeps
// the token in the index, and returns 1.
constexpr absl::string_view kReaderExtendSource =
    "if redis.call('get', KEYS[2]) ~= ARGV[1] then return 0 end\n"
    "if redis.call('get', KEYS[1]) ~= 'shared' then return 0 end\n"
    "redis.call('pexpire', KEYS[2], ARGV[2])\n"
    "local grown = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "redis.call('pexpire', KEYS[1], grown)\n"
    "redis.call('sadd', KEYS[3], ARGV[1])\n"
    "redis.call('pexpire', KEYS[3], grown)\n"
    "return 1\n";

// ReaderReleaseScript(). KEYS: R, the reader's key, the index. ARGV: token,
// and "0" to publish nothing.
// 0, changing nothing, unless the reader's key holds the token. Else deletes
// it, drops the index's members whose key is gone, and if R holds 'shared':
// deletes R and the index (publishing kReleasedMessage on R) when no reader
// is left, else sets R and the index to PX the longest remaining reader's
// TTL. Returns 1. A reader key without a TTL (never set so by this library)
// keeps R as it is: fail closed.
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

// WriterAcquireScript(): a writer's attempt after a refusal (one resource,
// no fencing). KEYS: R, the writer-waiting key; optional [3] the waiter's
// arrival key (WaiterArrivalKeyPrefix() + waiter id), [4] its hand-off entry
// (WaiterHandOffKeyPrefix() + waiter id). ARGV: token, TTL in ms, the waiter
// id, the waiting key's TTL in ms, "1" to publish kTakenMessage on a win;
// with KEYS[4], [6] a proof and [7] the entry's TTL in ms.
// The waiting key is a set of the waiting writers' ids (several writers may
// wait at once; one winning must not unmark the others). If R is missing,
// sets it to the token with PX ttl, removes the waiter id from the set, and
// returns 1; else adds the waiter id, raises the set's TTL to the longer of
// its own and the given one, and returns 0. A writer whose wait ends removes
// its id (SREM; Redis deletes the set with its last member). KEYS[3] is
// deleted on a win; on a refusal it is set to the master's TIME in
// microseconds unless it exists (the first refusal's time stays), with PX
// the waiting key's TTL. With KEYS[4]: R holding the token already (a
// release handed it over) is a win as R missing is, R's TTL set to ttl
// again, and the entry deleted; on a refusal the entry is set to
// "<proof> <ttl ms> <token>" with PX ARGV[7], so that a release may hand R
// to this waiter (kReleaseSource).
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

// WriterMarkScript(): a waiting writer that does not use the writer
// acquire script (a fenced writer, or one of several resources) marks
// itself waiting before each attempt after a refusal. KEYS: pairs R, its
// writer-waiting key (WriterWaitingKey()), one pair per resource. ARGV: the
// waiter id, the waiting key's TTL in ms. For each pair whose R exists (the
// resource is held there), adds the id to the waiting set and raises the
// set's TTL to the longer of its own and the given one, as the writer
// acquire script does on a refusal; a free resource is left unmarked. Sets
// and deletes no lock key. Returns how many pairs were marked.
constexpr absl::string_view kWriterMarkSource =
    "local marked = 0\n"
    "for i = 1, #KEYS, 2 do\n"
    "  if redis.call('exists', KEYS[i]) == 1 then\n"
    "    redis.call('sadd', KEYS[i + 1], ARGV[1])\n"
    "    local wait = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[i + 1]))\n"
    "    redis.call('pexpire', KEYS[i + 1], wait)\n"
    "    marked = marked + 1\n"
    "  end\n"
    "end\n"
    "return marked\n";

// clang-format on

}  // namespace

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

const Script& WriterMarkScript() {
  static const Script* const script =
      new Script(MakeScript("writer mark", kWriterMarkSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

Command WriterMarkCommand(absl::Span<const std::string> lock_keys,
                          absl::Span<const std::string> waiting_keys,
                          absl::string_view waiter_id,
                          absl::Duration waiting_ttl) {
  std::vector<std::string> keys;
  keys.reserve(2 * lock_keys.size());
  for (size_t i = 0; i < lock_keys.size() && i < waiting_keys.size(); ++i) {
    keys.push_back(lock_keys[i]);
    keys.push_back(waiting_keys[i]);
  }
  return KeysCommand(WriterMarkScript(), keys,
                     {std::string(waiter_id), TtlMillis(waiting_ttl)});
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

}  // namespace redlock::internal
