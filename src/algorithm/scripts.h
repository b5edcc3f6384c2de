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

// Every script below takes a lock's keys — one, or one per resource of a
// multi-resource lock — and answers for the whole set.
//
// Waiters (RetryPolicy::wake_on_release) hear of the keys through pub/sub on
// a channel named as each key: the release script publishes
// kReleasedMessage for every key it deletes, the acquire scripts
// kTakenMessage for every key they set.
//
// Deletes every key that holds ARGV[1], publishing on each unless ARGV[2] is
// "0". Returns 1 if it deleted any, else 0. With ARGV[3], a waiting set
// (WriterWaitingKey()), and ARGV[4], its arrival keys' prefix: the message
// is "released <id>" for the id of that set with the earliest arrival key
// (kReleasedMessage in keys.h), or plain kReleasedMessage if none has one
// or the set holds more than 64 ids. With ARGV[5], the hand-off entries'
// prefix (WaiterHandOffKeyPrefix()): if a queued waiter left a well-formed
// entry "<proof> <ttl ms> <token>" for another token than ARGV[1], the key is
// handed to the one of them queued longest instead of deleted: set to its
// token with PX its TTL, its id, arrival key and entry removed, and the
// message is "granted <proof>" (kGrantedMessage), published on the
// heir's own channel, named as its entry (ARGV[5] + its id), instead of the
// key's: the other waiters are not woken by it. With ARGV[6], a waiter id,
// and ARGV[7]: first deletes that waiter's hand-off entry, and with ARGV[7]
// "1" its id and arrival key too, so that no later release hands it the key
// (WithdrawCommand()).
const Script& ReleaseScript();
// Sets the TTL of every key to ARGV[2] ms if every one holds ARGV[1], else
// changes nothing; never creates a key. Returns 1 if extended, else 0.
const Script& ExtendScript();
// Many locks at once, each judged alone (the keep-alive's batches): KEYS are
// every lock's keys in turn, ARGV four per lock (its key count, token, TTL
// in ms, semaphore limit or ""). Per lock, all or none over its own keys:
// a lock's keys are extended as ExtendScript() would (a permit set's as
// SemaphoreExtendScript() would, its limit key first among its keys) and
// another lock's refusal changes nothing for it. Returns an array with one
// integer per lock, in order: 1 extended, 0 not held by that token (nothing
// of that lock changed), -1 a permit set whose limit key holds another
// limit (nothing of it changed). Never creates a lock key.
const Script& BatchExtendScript();
// Several resources, all or none: sets every key to ARGV[1] with PX ARGV[2]
// if none exists. Returns 1 if it set them, else 0. Also a retry's acquire
// for one resource while waiters listen (it publishes; SET does not).
const Script& MultiAcquireScript();
// Fenced acquire, KEYS = n lock keys, their n fencing counters, the
// deployment marker: sets the lock keys as MultiAcquireScript does and reads
// every counter and the marker in the same step. Returns {1 or 0 (set or
// not), counter 1 or "", ..., counter n or "", marker or ""}.
const Script& FencedAcquireScript();
// A counting semaphore's permit set, all or none. KEYS = the semaphore's
// limit key, then its `limit` slot keys (slot 0 first); ARGV = token, ttl
// ms, limit, then the candidate slot numbers (distinct, each below limit).
// Returns {-1, the limit stored} if the limit key holds another limit and
// changes nothing; else {1, the slots free now, ascending} if every
// candidate slot was free and is now set to the token with PX ttl, the limit
// key set to the limit with PX the longer of its remaining TTL and ttl; else
// {0, every free slot number, ascending} and changes nothing.
const Script& SemaphoreAcquireScript();
// KEYS = the limit key, then a permit set's slot keys; ARGV = token, ttl ms,
// limit. If every slot holds the token: an error reply "SEMLIMIT ..." if the
// limit key holds another limit (nothing changes), else the slots' TTLs set
// to ttl, the limit key set to the limit with PX the longer of its remaining
// TTL and ttl, and 1. Otherwise 0, nothing changes; never creates a slot.
const Script& SemaphoreExtendScript();
// A read-write lock's reader (AcquireOptions::shared), KEYS = the lock key
// R, the reader's key (SharedHolderKey(), ending with the token), the
// writer-waiting key, the readers' index (SharedHoldersKey()); ARGV = token,
// ttl ms, the most readers per resource. Refuses, changing nothing, with
// {0, "writer waiting"} while the writer-waiting key exists, {0, "writer"}
// if R holds anything but kSharedLockValue, {0, "too many readers"} if the
// index still has the most readers once pruned of readers whose key is gone.
// Otherwise sets R to kSharedLockValue with PX the longer of its remaining
// TTL and ttl, the reader's key to the token with PX ttl, adds the token to
// the index with R's TTL, and returns {1}.
const Script& ReaderAcquireScript();
// KEYS = R, the reader's key, the index; ARGV = token, ttl ms. 0, changing
// nothing, unless the reader's key holds the token and R holds
// kSharedLockValue (never extends a writer's R). Else sets the reader's key
// to PX ttl, R and the index to PX the longer of R's remaining TTL and ttl,
// keeps the token in the index, and returns 1.
const Script& ReaderExtendScript();
// KEYS = R, the reader's key, the index; ARGV = token, and "0" to publish
// nothing. 0, changing nothing, unless the reader's key holds the token.
// Else deletes it, drops the index's members whose key is gone, and if R
// holds kSharedLockValue: deletes R and the index (publishing
// kReleasedMessage on R) when no reader is left, else sets R and the index
// to PX the longest remaining reader's TTL. Returns 1.
const Script& ReaderReleaseScript();
// A writer's attempt after a refusal (one resource, no fencing): KEYS = R,
// the writer-waiting key; ARGV = token, ttl ms, the waiter id, the waiting
// key's TTL in ms, "1" to publish kTakenMessage on a win. The waiting key
// is a set of the waiting writers' ids (several writers may wait at once;
// one winning must not unmark the others). If R is missing, sets it to the
// token with PX ttl, removes the waiter id from the set, and returns 1; else
// adds the waiter id and raises the set's TTL to the longer of its own and
// the given one, and returns 0. A writer whose wait ends removes its id
// (SREM; Redis deletes the set with its last member). An optional KEYS[3],
// the waiter's arrival key (WaiterArrivalKeyPrefix() + waiter id), is
// deleted on a win; on a refusal it is set to the master's TIME in
// microseconds unless it exists (the first refusal's time stays), with PX
// the waiting key's TTL given. With KEYS[4] as well, the waiter's hand-off
// entry (WaiterHandOffKeyPrefix() + waiter id), and ARGV[6] (a proof) and
// ARGV[7] (the entry's TTL in ms): R holding the token already (a release
// handed it over) is a win as R missing is, R's TTL set to ttl again, and
// the entry is deleted on a win; on a refusal the entry is set to
// "<proof> <ttl ms> <token>" with PX ARGV[7], so that a release may hand R
// to this waiter (ReleaseScript()).
const Script& WriterAcquireScript();
// Raises every counter in KEYS to ARGV[1] if every one is lower (never
// lowers one). Returns 1 if it raised them, 0 if any was already at or above
// ARGV[1]: then another acquisition wrote that token (or a higher one), and
// this one must not be issued.
const Script& FenceWriteScript();
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
// Writes the deployment marker "<state>:<server TIME in microseconds>:
// <run_id>:<max_ttl in ms>" unless one is there, and returns the marker now
// stored (ours or the one that was there). `run_id` is the server's, as the
// handshake read it on the connection the command is sent on: the marker
// records which server process carried it when it was written, so that a
// later restart is seen exactly (a new run_id), not guessed from uptime.
// `max_ttl` is the writing client's Options::max_ttl: the deployment's,
// which every other client must share.
// `suffix` (MarkerSuffix(), src/algorithm/membership.h), if not empty, is the
// deployment's membership record for this server: written with the marker,
// or appended to a marker from before records (one without ';'), followed by
// ";since=<server TIME in microseconds>".
Command MarkerCommand(absl::string_view marker_key, absl::string_view state,
                      absl::string_view run_id, absl::Duration max_ttl,
                      absl::string_view suffix = "");
const Script& MarkerScript();
// `redlock reconfigure`'s write: replaces the membership record
// `expected_record` (RecordText(), or empty for a server without a marker)
// with `suffix`, keeping the marker's own part, unless the marker names the
// server as another member than `suffix` does. A server with no marker gets
// "<state>:<TIME>:<run_id>:<max_ttl>" first. Returns {1, the marker now} if
// it wrote, {0, the marker now (or "")} if not.
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
