// Copyright 2026 The redlock Authors.
//
// The state every copy of a Lock handle shares. Written on the engine's loop
// thread, read from any thread.

#ifndef REDLOCK_SRC_ENGINE_LOCK_STATE_H_
#define REDLOCK_SRC_ENGINE_LOCK_STATE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "src/algorithm/clock.h"

namespace redlock::internal {

struct LockState;
// The mutex that guards `state` (LockState::mu()); defined once, in the
// library (src/api/lock.cc), so that every module picks the same one.
std::mutex& LockStateMutex(const LockState* state);

struct LockState {
  // A semaphore's permit set's and a reader's own fields, kept out of line:
  // a plain lock (most of the locks an engine keeps alive) has none, and
  // pays one null pointer for them instead of about 130 bytes.
  struct Extra {
    // A semaphore's permit set (Engine::AcquirePermits()): its slot numbers,
    // ascending, in the order of `keys`; the semaphore's limit key and
    // limit.
    std::vector<int> slots;
    std::string limit_key;
    int limit = 0;
    // A reader of a read-write lock (AcquireOptions::shared): key() is the
    // shared lock key, `reader_key` its own key (SharedHolderKey()),
    // `readers_key` the readers' index (SharedHoldersKey()).
    bool shared = false;
    std::string reader_key;
    std::string readers_key;
  };

  // Immutable after construction.
  const void* owner = nullptr;  // The engine that acquired it.
  // Runtime::LockClock() of that engine: what remaining() measures with.
  internal::Clock* clock = nullptr;
  // Every resource of the lock, sorted, and their keys in the same order
  // (one, or several for a multi-resource lock; a permit set: the
  // semaphore's name alone, and its slots' keys). Never empty once made.
  std::vector<std::string> resources;
  std::vector<std::string> keys;
  std::string token;
  MonotonicTime acquired_at;
  uint64_t fence = 0;
  bool adopted = false;  // Made by Adopt(), not won by an acquisition.
  // Null for a plain lock (a writer, one or several resources).
  std::unique_ptr<Extra> extra;

  // resources[0] and keys[0] (one copy of each, not two): the lock's
  // resource (for a permit set, the semaphore's name) and its first key.
  // Empty for a state without resources (Lock's empty handle).
  const std::string& resource() const {
    return resources.empty() ? EmptyString() : resources.front();
  }
  const std::string& key() const {
    return keys.empty() ? EmptyString() : keys.front();
  }
  // Extra's fields; empty, 0 and false for a plain lock.
  const std::vector<int>& slots() const {
    static const auto* const kNone = new std::vector<int>();
    return extra != nullptr ? extra->slots : *kNone;
  }
  const std::string& limit_key() const {
    return extra != nullptr ? extra->limit_key : EmptyString();
  }
  int limit() const { return extra != nullptr ? extra->limit : 0; }
  bool shared() const { return extra != nullptr && extra->shared; }
  const std::string& reader_key() const {
    return extra != nullptr ? extra->reader_key : EmptyString();
  }
  const std::string& readers_key() const {
    return extra != nullptr ? extra->readers_key : EmptyString();
  }
  // Made on first use; only while the state is being built.
  Extra& MutableExtra() {
    if (extra == nullptr) extra = std::make_unique<Extra>();
    return *extra;
  }

  static const std::string& EmptyString() {
    static const auto* const kEmpty = new std::string();
    return *kEmpty;
  }

  // What guards the fields below: one of a fixed set of mutexes, picked by
  // the state's address, rather than one of its own (40 bytes a lock; a
  // client may keep a great many). Held only for a few reads or writes of
  // one state, never while another state's is held or a callback runs, so
  // two states sharing one only ever wait for each other briefly.
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it even
  // though Debian's Abseil is not built for it.
  std::mutex& mu() const { return LockStateMutex(this); }
  MonotonicTime valid_until;      // Guarded by mu.
  bool released = false;          // Guarded by mu.
  absl::Status lost;              // Guarded by mu. OK until lost.

  // votes(): how each master answered the last acquisition or extension
  // that succeeded. Kept packed (16 bytes a vote instead of MasterVote's 64:
  // the master as an index into the engine's shared `master_names`, the
  // latency in whole nanoseconds below about 4.29 s); VotesLocked() gives
  // back exactly the MasterVotes SetVotesLocked() was given. A vote that
  // does not pack exactly (a master not in master_names, a latency that is
  // not a whole number of nanoseconds, or is negative or longer) keeps all of
  // them as given, in `unpacked_votes`.
  struct PackedVote {
    absl::Status error;
    uint32_t latency_ns = 0;
    uint8_t master = 0;  // Index into *master_names.
    uint8_t kind = 0;    // MasterVote::Kind.
  };
  // The engine's master names (MasterAddress::Name(), in the order of its
  // links), shared by all its locks. Immutable after construction; may be
  // null (then every vote is kept unpacked).
  std::shared_ptr<const std::vector<std::string>> master_names;
  std::vector<PackedVote> packed_votes;                     // Guarded by mu.
  std::unique_ptr<std::vector<MasterVote>> unpacked_votes;  // Guarded by mu.

  // Requires mu held.
  void SetVotesLocked(std::vector<MasterVote> votes) {
    unpacked_votes.reset();
    // In place: an extension's votes reuse the acquisition's storage.
    packed_votes.resize(votes.size());
    for (size_t i = 0; i < votes.size(); ++i) {
      const MasterVote& v = votes[i];
      int index = -1;
      if (master_names != nullptr) {
        const std::vector<std::string>& names = *master_names;
        if (i < names.size() && names[i] == v.master) {
          index = static_cast<int>(i);  // Rounds vote in link order.
        } else {
          for (size_t j = 0; j < names.size(); ++j) {
            if (names[j] == v.master) index = static_cast<int>(j);
          }
        }
      }
      const int64_t ns = absl::ToInt64Nanoseconds(v.latency);
      if (index < 0 || index > 255 || ns < 0 || ns > UINT32_MAX ||
          absl::Nanoseconds(ns) != v.latency) {
        packed_votes.clear();
        packed_votes.shrink_to_fit();
        unpacked_votes =
            std::make_unique<std::vector<MasterVote>>(std::move(votes));
        return;
      }
      PackedVote& p = packed_votes[i];
      p.error = v.error;
      p.latency_ns = static_cast<uint32_t>(ns);
      p.master = static_cast<uint8_t>(index);
      p.kind = static_cast<uint8_t>(v.kind);
    }
  }

  // Requires mu held.
  std::vector<MasterVote> VotesLocked() const {
    if (unpacked_votes != nullptr) return *unpacked_votes;
    std::vector<MasterVote> votes;
    votes.reserve(packed_votes.size());
    for (const PackedVote& p : packed_votes) {
      MasterVote v;
      v.master = (*master_names)[p.master];
      v.kind = static_cast<MasterVote::Kind>(p.kind);
      v.error = p.error;
      v.latency = absl::Nanoseconds(p.latency_ns);
      votes.push_back(std::move(v));
    }
    return votes;
  }

  // Marks the lock lost (first reason wins). Returns false if it already was.
  bool MarkLost(absl::Status reason) {
    std::lock_guard<std::mutex> lock(mu());
    if (!lost.ok()) return false;
    lost = std::move(reason);
    return true;
  }
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_LOCK_STATE_H_
