// Copyright 2026 The redlock Authors.
//
// The Redis keys the library uses on every master, for tools and operators
// who look at the masters directly (redlock status, redis-cli).

#ifndef REDLOCK_KEYS_H_
#define REDLOCK_KEYS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "redlock/options.h"

namespace redlock {

// Resource names starting with this are reserved for the library's own keys
// and rejected (kInvalidArgument).
inline constexpr absl::string_view kReservedResourcePrefix = "__";

// key_prefix + resource: holds the owner's token, with the lock's TTL.
std::string LockKey(const Options& options, absl::string_view resource);

// Pub/sub, for waiters woken on release (RetryPolicy::wake_on_release): the
// channel of a resource is named as its lock key (LockKey()). A release
// publishes kReleasedMessage on it on each master where it deleted the key;
// an acquisition retried while others wait publishes kTakenMessage where it
// set it. `redis-cli SUBSCRIBE <lock key>` shows a lock changing hands.
// Where waiting writers of a single-resource lock are queued on that master
// (WriterWaitingKey(), WaiterArrivalKeyPrefix()), the release names the one
// that has waited longest there: kReleasedMessage, a space, its waiter id
// ("released 3f9a..."). That waiter tries at once and the others a moment
// later; the name is a hint about who tries first, never a grant.
inline constexpr absl::string_view kReleasedMessage = "released";
// Where a waiter registered to be handed the lock (RetryPolicy::hand_off,
// WaiterHandOffKeyPrefix()), the release sets the key to that waiter's token
// instead of deleting it, and publishes kGrantedMessage, a space and the
// proof the waiter's registration carried ("granted 9c01..."): never the
// token. Only that waiter knows the proof; to every other listener it means
// the lock was taken.
inline constexpr absl::string_view kGrantedMessage = "granted";
inline constexpr absl::string_view kTakenMessage = "taken";

// key_prefix + "__fence__:" + resource: the fencing counter, an integer with
// no TTL, on every master.
std::string FenceCounterKey(const Options& options, absl::string_view resource);

// key_prefix + "__sem__:" + semaphore + ":" + slot: slot `slot` (0-based,
// below the semaphore's limit) of a counting semaphore
// (Redlock::AcquirePermits()). An ordinary lock key: it holds the token of
// the permit set that took it, with that set's TTL. Never a plain lock key:
// resource names may not start with kReservedResourcePrefix.
std::string SemaphoreSlotKey(const Options& options,
                             absl::string_view semaphore, int slot);

// key_prefix + "__semlimit__:" + semaphore: the limit the semaphore's
// holders agreed on, as decimal digits, with a TTL at least as long as any of
// its slots' (set by every grant and extension to the longer of the two).
std::string SemaphoreLimitKey(const Options& options,
                              absl::string_view semaphore);

// The value a lock key (LockKey()) holds while readers share it
// (AcquireOptions::shared): a writer's SET NX fails on it as on another
// owner's token, and it can never be a token (this library's are 32 hex
// digits; Adopt() refuses it). Its TTL is at least every reader's there.
inline constexpr absl::string_view kSharedLockValue = "shared";

// key_prefix + "__reader__:" + resource + ":" + token: one reader of
// `resource` on one master, holding its token with its TTL. The token ends
// the key, so the key decodes uniquely.
std::string SharedHolderKey(const Options& options, absl::string_view resource,
                            absl::string_view token);

// key_prefix + "__readers__:" + resource: the set of the tokens of the
// readers of `resource` on one master (pruned of readers whose key is gone),
// with the lock key's TTL; the reader release script reads it to shrink or
// delete the lock key.
std::string SharedHoldersKey(const Options& options,
                             absl::string_view resource);

// key_prefix + "__writerwait__:" + resource: the set of the ids (random, one
// per acquisition) of the writers of `resource` that were refused and still
// wait, with a TTL that each refused attempt raises to at least
// min(writer TTL, its wait left); while it exists new readers of `resource`
// are refused there. A writer's id leaves it when the writer gets in or its
// acquisition ends; the set goes with its last id, or at its TTL.
std::string WriterWaitingKey(const Options& options,
                             absl::string_view resource);

// key_prefix + "__arrival__:" + resource + ":": followed by a waiting
// writer's id (as in WriterWaitingKey()), the key holding when that writer
// was first refused on this master (the master's TIME, in microseconds,
// decimal), with the TTL its refused attempts give the waiting set; deleted
// when the writer gets in or its acquisition ends. The release names the
// waiter with the earliest one (kReleasedMessage). Waiter ids are hex
// digits, so the key decodes uniquely.
std::string WaiterArrivalKeyPrefix(const Options& options,
                                   absl::string_view resource);

// key_prefix + "__handoff__:" + resource + ":": followed by a queued
// writer's id, its hand-off entry (RetryPolicy::hand_off): "<proof> <ttl in
// ms> <token>", refreshed by each of its refused attempts with a short TTL.
// A release hands the key to the writer queued longest that has one.
std::string WaiterHandOffKeyPrefix(const Options& options,
                                   absl::string_view resource);

// The resource an election's lease is a lock on: "__elect__:" + name (a
// reserved name, so no lock of a resource can collide with an election).
std::string ElectionResource(absl::string_view name);
// LockKey(options, ElectionResource(name)): the lease, holding the leader's
// token with its TTL. Its pub/sub channel (named as the key) carries
// kTakenMessage when a leader is elected or proclaims, kReleasedMessage when
// it resigns. The epoch counter is FenceCounterKey(options,
// ElectionResource(name)).
std::string ElectionLockKey(const Options& options, absl::string_view name);
// key_prefix + "__leader__:" + name: the leader's record, "<epoch>
// <revision> <token> <value>" (decimal, decimal, the lease's token, any
// bytes), no TTL: written only where the lease key holds that token, and
// counted only while it still does.
std::string ElectionRecordKey(const Options& options, absl::string_view name);
// key_prefix + "__deployment__": the marker the restart guard uses to tell a
// master that lost its data ("reborn") from a trusted one ("trusted"); no
// TTL.
std::string DeploymentMarkerKey(const Options& options);

}  // namespace redlock

#endif  // REDLOCK_KEYS_H_
