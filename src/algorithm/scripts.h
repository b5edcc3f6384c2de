// Copyright 2026 The redlock Authors.
//
// The commands the engine sends, and the Lua scripts behind the token-checked
// ones. A script is run with EVALSHA under the SHA-1 we compute ourselves, so
// the first call after connecting needs no round trip for SCRIPT LOAD; each
// connection loads the scripts once, pipelined ahead of every other command,
// and a NOSCRIPT reply (after SCRIPT FLUSH) falls back to EVAL.

#ifndef REDLOCK_SRC_ALGORITHM_SCRIPTS_H_
#define REDLOCK_SRC_ALGORITHM_SCRIPTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace redlock::internal {

struct Script {
  absl::string_view name;    // For messages: "release", "extend".
  absl::string_view source;  // Lua.
  std::string sha1;          // Sha1Hex(source).
  // Run later than sent, it could leave a lock key behind: a NOSCRIPT reply
  // is then re-sent as EVAL only if nothing was sent after it on that
  // connection (see Master::OnReply). The other scripts are safe in any
  // order: release and extend are token-checked and never create the key,
  // the fence write only raises, the marker is written once.
  bool creates_lock = false;
  // Loaded by every connection's handshake. The others (the semaphore's) are
  // loaded on a connection just before their first call there, so a client
  // that never uses them keeps the handshake, its cost and its order.
  bool loaded_on_connect = true;
};

// The scripts. Each one's contract — its KEYS, its ARGV, its reply and what
// it changes — is written once, above its Lua in the family's file; the
// simulation's twin of each is a function of its own (tests/sim/
// sim_redis.cc: SimRelease for ReleaseScript, ...), held to redis-server's
// replies by the differential tests in tests/sim/sim_redis_test.cc. Every
// script takes a lock's keys — one, or one per resource of a multi-resource
// lock — and answers for the whole set. Waiters (RetryPolicy::wake_on_release)
// hear of the keys through pub/sub on a channel named as each key: the release
// scripts publish kReleasedMessage for every key they delete, the acquire
// scripts kTakenMessage for every key they set.
//
// lock_scripts.cc: release (with the hand-off to a queued waiter), extend,
// the keep-alive's batched extend, acquire of several keys all or none.
const Script& ReleaseScript();
const Script& ExtendScript();
const Script& BatchExtendScript();
const Script& MultiAcquireScript();
// fence_scripts.cc: the fenced acquire (keys, counters and marker read in
// one step) and the fence write (counters raised, never lowered).
const Script& FencedAcquireScript();
const Script& FenceWriteScript();
// semaphore_scripts.cc: a counting semaphore's permit set.
const Script& SemaphoreAcquireScript();
const Script& SemaphoreExtendScript();
// rwlock_scripts.cc: a read-write lock's reader, and a writer that waits.
const Script& ReaderAcquireScript();
const Script& ReaderExtendScript();
const Script& ReaderReleaseScript();
const Script& WriterAcquireScript();
const Script& WriterMarkScript();
// marker_scripts.cc: the deployment marker (MarkerScript(),
// ReconfigureScript(), declared with their commands below).

// Every script a connection loads when it connects.
const std::vector<const Script*>& AllScripts();

// One request to one master: a plain command, or a script call.
struct Command {
  // Plain command: the whole argv. Script call: the keys, then the args.
  std::vector<std::string> args;
  const Script* script = nullptr;
  int num_keys = 0;  // Script calls only.
  // Empty, or the RESP text of the EVALSHA call (EncodeCall()): made once for
  // a command sent to every master, each of which then copies these bytes
  // instead of encoding the call again. Ignored for an EVAL resend of a
  // command with `args`.
  std::string encoded;
  // A command made as its RESP text alone (EncodedBatchExtendCommand():
  // `encoded` set, `args` empty): where its arguments after the SHA1 begin
  // in `encoded`. EvalText() makes its EVAL resend from there.
  size_t encoded_args_at = 0;
};

// SET key token NX PX ttl_ms.
Command AcquireCommand(absl::string_view key, absl::string_view token,
                       absl::Duration ttl);
// One key: the SET above; several: MultiAcquireScript. `announce` (a retry
// while waiters listen): MultiAcquireScript even for one key, so that a win
// publishes kTakenMessage and the other waiters stand down.
Command AcquireCommand(absl::Span<const std::string> keys,
                       absl::string_view token, absl::Duration ttl,
                       bool announce = false);
// `announce`: publish kReleasedMessage for each key deleted. A lost
// attempt's cleanup does not: waking the waiters for keys that never made a
// lock would only send them against the lock's real holder, and their own
// lost attempts' cleanups would wake them again.
Command ReleaseCommand(absl::string_view key, absl::string_view token,
                       bool announce = true);
Command ReleaseCommand(absl::Span<const std::string> keys,
                       absl::string_view token, bool announce = true);
// A single-resource lock's release that names its successor: announced,
// with the lock's waiting set (WriterWaitingKey()) and arrival keys' prefix
// (WaiterArrivalKeyPrefix()); see ReleaseScript().
// With `hand_off_prefix` (WaiterHandOffKeyPrefix()), it hands the key to the
// waiter queued longest that left a hand-off entry (RetryPolicy::hand_off).
Command ReleaseCommand(absl::string_view key, absl::string_view token,
                       absl::string_view waiting_key,
                       absl::string_view arrival_prefix,
                       absl::string_view hand_off_prefix = {});
// A hand-off waiter's withdrawal, in one step on a master: its hand-off
// entry goes (and with `leave_queue` its queue place: its id in
// `waiting_key`, its arrival key), then the release above of `token`, which
// hands the key on if a release had handed it to this waiter. Sent when an
// attempt is lost (queue place kept; quiet unless it hands the key on: a
// plain "released" would wake the waiters, itself included, against the
// holder) and when the acquisition ends without the lock (place left,
// announced).
Command WithdrawCommand(absl::string_view key, absl::string_view token,
                        absl::string_view waiting_key,
                        absl::string_view arrival_prefix,
                        absl::string_view hand_off_prefix,
                        absl::string_view waiter_id, bool leave_queue);
Command ExtendCommand(absl::string_view key, absl::string_view token,
                      absl::Duration ttl);
Command ExtendCommand(absl::Span<const std::string> keys,
                      absl::string_view token, absl::Duration ttl);
// One lock of a BatchExtendCommand. What it points to must outlive the call.
struct BatchExtendEntry {
  absl::Span<const std::string> keys;  // The lock's (slot) keys.
  absl::string_view token;
  absl::Duration ttl;
  // A semaphore's permit set: its limit key and limit; null for a lock.
  const std::string* limit_key = nullptr;
  int limit = 0;
};
// BatchExtendScript over `entries`, in order (non-empty; the caller bounds
// their number and keys: kMaxBatchExtendKeys).
Command BatchExtendCommand(absl::Span<const BatchExtendEntry> entries);
// The same call made straight into its RESP text (Command::encoded, with
// `args` left empty): each key and token is copied once, into the text,
// instead of into an argument string first. The bytes are exactly
// EncodeCall(BatchExtendCommand(entries))'s. What a keep-alive batch sends.
Command EncodedBatchExtendCommand(absl::Span<const BatchExtendEntry> entries);
// The most keys one BatchExtendCommand carries (a lock's keys never split).
inline constexpr size_t kMaxBatchExtendKeys = 500;
// SemaphoreAcquireScript: `slot_keys` are all of the semaphore's slots, in
// slot order; `candidates` the slots to take.
Command SemaphoreAcquireCommand(absl::string_view limit_key,
                                absl::Span<const std::string> slot_keys,
                                absl::string_view token, absl::Duration ttl,
                                int limit, absl::Span<const int> candidates);
// Tells a semaphore's waiters (RetryPolicy::wake_on_release) on its limit
// key's channel: PUBLISH limit_key message. kReleasedMessage follows a
// permit set's release on the same connection, so it is heard after the
// slots are free; kTakenMessage follows a win that left no slot free on a
// quorum. Its slot keys change between attempts, so a semaphore's waiters
// listen here rather than on its slots.
Command SemaphoreAnnounceCommand(absl::string_view limit_key,
                                 absl::string_view message);
// SemaphoreExtendScript: `slot_keys` are the permit set's.
Command SemaphoreExtendCommand(absl::string_view limit_key,
                               absl::Span<const std::string> slot_keys,
                               absl::string_view token, absl::Duration ttl,
                               int limit);
// ReaderAcquireScript, ReaderExtendScript, ReaderReleaseScript,
// WriterAcquireScript (see there for the keys).
Command ReaderAcquireCommand(absl::string_view lock_key,
                             absl::string_view reader_key,
                             absl::string_view waiting_key,
                             absl::string_view readers_key,
                             absl::string_view token, absl::Duration ttl,
                             int max_readers);
Command ReaderExtendCommand(absl::string_view lock_key,
                            absl::string_view reader_key,
                            absl::string_view readers_key,
                            absl::string_view token, absl::Duration ttl);
Command ReaderReleaseCommand(absl::string_view lock_key,
                             absl::string_view reader_key,
                             absl::string_view readers_key,
                             absl::string_view token, bool announce = true);
// A hand-off waiter's entry (WriterAcquireScript's KEYS[4], ARGV[6-7]).
struct HandOffEntry {
  std::string key;     // WaiterHandOffKeyPrefix() + waiter id.
  std::string proof;   // Fresh per attempt; published by the hand-off.
  absl::Duration ttl;  // How long the entry lives unless refreshed.
};
// `hand_off` (with `arrival_key` only): the waiter may be handed the key.
Command WriterAcquireCommand(absl::string_view lock_key,
                             absl::string_view waiting_key,
                             absl::string_view token, absl::Duration ttl,
                             absl::string_view waiter_id,
                             absl::Duration waiting_ttl, bool announce,
                             absl::string_view arrival_key = {},
                             const HandOffEntry* hand_off = nullptr);
// WriterMarkScript: `lock_keys[i]` paired with `waiting_keys[i]` (of the
// same length, in the same order).
Command WriterMarkCommand(absl::Span<const std::string> lock_keys,
                          absl::Span<const std::string> waiting_keys,
                          absl::string_view waiter_id,
                          absl::Duration waiting_ttl);
Command FencedAcquireCommand(absl::string_view key,
                             absl::string_view counter_key,
                             absl::string_view marker_key,
                             absl::string_view token, absl::Duration ttl);
// `keys` and `counter_keys` of the same length, in the same order.
Command FencedAcquireCommand(absl::Span<const std::string> keys,
                             absl::Span<const std::string> counter_keys,
                             absl::string_view marker_key,
                             absl::string_view token, absl::Duration ttl);
Command FenceWriteCommand(absl::string_view counter_key, uint64_t fence);
Command FenceWriteCommand(absl::Span<const std::string> counter_keys,
                          uint64_t fence);
// MarkerScript(): writes the deployment marker unless one is there, and
// returns the marker now stored. `run_id` is the server's, as the handshake
// read it on the connection the command is sent on: the marker records which
// server process carried it when it was written, so that a later restart is
// seen exactly (a new run_id), not guessed from uptime. `max_ttl` is the
// writing client's Options::max_ttl: the deployment's, which every other
// client must share. `suffix` (MarkerSuffix(), src/algorithm/membership.h),
// if not empty, is the deployment's membership record for this server.
Command MarkerCommand(absl::string_view marker_key, absl::string_view state,
                      absl::string_view run_id, absl::Duration max_ttl,
                      absl::string_view suffix = "");
const Script& MarkerScript();
// ReconfigureScript(): `redlock reconfigure`'s compare-and-set of the
// membership record `expected_record` (RecordText(), or empty for a server
// without a marker) to `suffix`; `state`, `run_id` and `max_ttl` make the
// marker of a server that has none.
Command ReconfigureCommand(absl::string_view marker_key,
                           absl::string_view expected_record,
                           absl::string_view suffix, absl::string_view state,
                           absl::string_view run_id, absl::Duration max_ttl);
const Script& ReconfigureScript();

// The deployment marker's states: the master never lost its data, or it
// restarted without it (docs/failure-behaviour.md).
inline constexpr absl::string_view kTrustedMarker = "trusted";
inline constexpr absl::string_view kRebornMarker = "reborn";

// A marker's value is "<state>:<server time in microseconds>:<run_id>:
// <max_ttl in ms>" (older markers stop after the time or the run_id; one an
// operator wrote by hand may be the state alone, or "trusted:0:<run_id>").
// Splits it; a missing or non-positive time gives time 0, a missing run_id
// an empty `run_id`, a missing max_ttl 0 (each output if not null). A
// membership record (src/algorithm/membership.h) follows the first ';':
// `record` gets the text after it, or nullopt if there is none.
void ParseMarker(absl::string_view value, std::string* state, int64_t* time_us,
                 std::string* run_id = nullptr, int64_t* max_ttl_ms = nullptr,
                 std::optional<std::string>* record = nullptr);

// The argv to send: the plain command, or EVALSHA sha numkeys ... (or, with
// `eval`, EVAL source numkeys ...).
std::vector<std::string> CommandArgv(const Command& command, bool eval);

// The same argv as views, without copying the arguments: into `command`,
// the script's static text, and `num_keys` (which holds the key count's
// digits). Valid while `command` and `num_keys` are, and not moved.
struct CommandViews {
  char num_keys[absl::numbers_internal::kFastToBufferSize];
  absl::InlinedVector<absl::string_view, 8> argv;
};
void CommandArgvViews(const Command& command, bool eval, CommandViews* out);

// Sets `command->encoded` to the RESP text of its EVALSHA call, the bytes
// AppendRespCommand() makes of CommandArgvViews(*command, false). Script
// calls only; worth it for a big command sent to several masters.
void EncodeCall(Command* command);

// The RESP text of `command`'s EVAL call (its script's source in place of
// the SHA1), for a command made as its text alone (Command::encoded_args_at);
// what a master resends when it answers NOSCRIPT.
std::string EvalText(const Command& command);

// The TTL the masters are given: `ttl` truncated to whole milliseconds, at
// least 1ms. Validity is computed from this, never from the TTL asked for.
absl::Duration SentTtl(absl::Duration ttl);
// SentTtl(ttl) in milliseconds, for PX and PEXPIRE.
std::string TtlMillis(absl::Duration ttl);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_SCRIPTS_H_
