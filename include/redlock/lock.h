// Copyright 2026 The redlock Authors.
//
// A held lock and the per-master record of how it was won.
//
// Lock is a cheap, copyable handle: copies share one state, so an Extend()
// through one copy is seen by all. Every method is thread-safe.
//
//   absl::StatusOr<redlock::Lock> lock = client.Acquire("recalc-ratings",
//                                                        absl::Seconds(30),
//                                                        absl::ZeroDuration());
//   if (lock.ok()) {
//     while (lock->remaining() > absl::Seconds(1)) { ... }
//   }

#ifndef REDLOCK_LOCK_H_
#define REDLOCK_LOCK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace redlock {

// Linux's CLOCK_BOOTTIME as a std::chrono clock: monotonic like
// std::chrono::steady_clock (CLOCK_MONOTONIC), but it also counts the time the
// machine spends suspended, which CLOCK_MONOTONIC does not. The masters expire
// keys on their own clocks, which run on while this machine sleeps; a lock's
// validity measured on CLOCK_MONOTONIC would come back from a suspension
// still promising the time the masters have already spent. Nanoseconds since
// boot, the same duration type as steady_clock's; its time points are a
// different type, so they cannot be mixed up with steady_clock's.
class BootClock {
 public:
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;

  // The current reading. Thread-safe. clock_gettime(CLOCK_BOOTTIME) cannot
  // fail on Linux 2.6.39 or later; should it, the process aborts rather than
  // hand out a time it does not have.
  static time_point now() noexcept;
};

// Every decision about validity is made on this clock, never the wall clock:
// valid_until(), remaining(), the validity of an acquisition or extension,
// and the keep-alive's safety margin. See docs/lifetime-and-fencing.md, "The
// clock validity is measured on".
using MonotonicClock = BootClock;
using MonotonicTime = MonotonicClock::time_point;

// How one master answered one request of an acquisition, extension or
// release.
struct MasterVote {
  enum class Kind {
    kGranted,  // Set (acquire), extended (extend) or deleted (release).
    kDenied,   // Held by another owner, or (extend/release) not held by us.
    kFailed,   // No usable answer: see `error`.
    kPending,  // Had not answered when the round was decided.
  };
  std::string master;  // MasterAddress::Name(): "host:port[/db]".
  Kind kind = Kind::kPending;
  // For kFailed: why, e.g. kDeadlineExceeded "no reply within 50ms",
  // kUnavailable "Connection refused", kResourceExhausted "OOM ...",
  // kFailedPrecondition "READONLY ...", kUnauthenticated "WRONGPASS ...".
  absl::Status error;
  // From sending the request to its answer; zero for kPending.
  absl::Duration latency;
};

absl::string_view MasterVoteKindName(MasterVote::Kind kind);

// "127.0.0.1:7001 granted (0.21ms), 127.0.0.1:7002 denied (held by another
// owner) ..." — one entry per master, for logs and error messages.
std::string DescribeVotes(const std::vector<MasterVote>& votes);

// What a release found on the masters, as far as they had answered when it
// was delivered (see AsyncRedlock::ReleaseAsync()).
struct ReleaseReport {
  int released = 0;  // Masters that held our token and deleted it.
  int not_held = 0;  // Masters where the key was gone or another owner's.
  int failed = 0;    // Masters that could not be asked; their copy expires
                     // with its TTL.
  // Masters that had not answered yet (0 with
  // ReleaseOptions::wait_for_all_masters). They were sent the release with
  // the others and get it all the same; only this report did not wait.
  int pending = 0;
  // A quorum answered that the token is no longer there (released +
  // not_held >= quorum): another owner can take the resource now. False when
  // too many masters failed to confirm it: their copies keep the resource
  // taken until they expire (at most the TTL). Unlike grants, a release's
  // answers are not counted once per server: one server listed under two
  // addresses counts twice (one `released`, one `not_held`), so with such a
  // listing `freed` can be true while fewer distinct servers confirmed it.
  bool freed = false;
  std::vector<MasterVote> votes;
};

namespace internal {
struct LockState;
}  // namespace internal

class Lock {
 public:
  // An empty handle: resource() is empty and valid() is false. Handles that
  // hold a lock come from a client: Acquire() or Adopt().
  Lock();
  explicit Lock(std::shared_ptr<internal::LockState> state);

  // The resource name as passed to Acquire (without the key prefix); for a
  // lock on several resources, the first of resources(); for a semaphore's
  // permit set, the semaphore's name (and resources() is that name alone).
  const std::string& resource() const;
  // The Redis key: Options::key_prefix + resource(); for a semaphore's
  // permit set, keys()[0].
  const std::string& key() const;
  // Every resource the lock holds, sorted (one unless it was acquired on
  // several at once), and their keys in the same order.
  // Views into the lock's own storage: good while any handle to it lives.
  absl::Span<const std::string> resources() const;
  absl::Span<const std::string> keys() const;
  // A semaphore's permit set (Redlock::AcquirePermits()): the slot numbers
  // it holds, ascending, one per entry of keys() and in the same order.
  // Empty for a lock.
  const std::vector<int>& slots() const;
  // slots().size(): the permits held; 0 for a lock (and an empty handle).
  int permits() const;
  // True for a reader of a read-write lock (AcquireOptions::shared): others
  // may hold the same resource as readers, no writer can. False for a lock
  // (a writer) and an empty handle.
  bool shared() const;
  // The random value stored under key() on the masters: 32 hex digits from
  // the OS CSPRNG, fresh for every acquisition attempt (for an adopted lock,
  // the token it was adopted with, exactly). The lock keeps a generated
  // token as its 16 bytes; the string is made on the first call, from any
  // thread, and stays the same while any handle to the lock lives.
  const std::string& token() const;
  // When the winning attempt started (MonotonicClock); for an adopted lock,
  // when it was adopted.
  MonotonicTime acquired_at() const;
  // True for a lock made by Adopt() from a token acquired elsewhere: its
  // validity is unknown (valid_until() == acquired_at()) until an Extend()
  // through this client succeeds.
  bool adopted() const;

  // Until when the lock is safely held, as far as the Redlock algorithm can
  // tell: start of the last successful acquire or extend + ttl - drift. After
  // a failed extend this may move earlier, never later; so it may after
  // extensions that ran at the same time (a KeepAlive and an Extend): the
  // masters may have applied their TTLs in either order, so it is then the
  // shortest of theirs and the one before. After Release() it is the moment
  // of the release.
  MonotonicTime valid_until() const;
  // valid_until() - now, never negative; now is read from MonotonicClock at
  // the call, so after the machine was suspended it counts the suspension
  // (and is zero if the lock ran out meanwhile).
  absl::Duration remaining() const;
  // remaining() > 0 and not released.
  bool valid() const;
  // True once a Release() of this lock has been sent.
  bool released() const;

  // The fencing token of this grant, when the acquisition asked for one
  // (AcquireOptions::fencing): for one resource, a grant that started after
  // another completed has a larger token (see docs/lifetime-and-fencing.md
  // for the exact guarantee). Pass it to the resource you write, which must
  // reject a token lower than the highest it has seen. 0 when not requested.
  uint64_t fence() const;

  // True once a keep-alive (AsyncRedlock::KeepAlive, Redlock::WithLock)
  // decided the lock can no longer be trusted: an extension failed, or
  // validity ran below the safety margin before one succeeded. Work under the
  // lock should poll it and stop. Never goes back to false.
  bool lost() const;
  // Why lost() became true; OK while it is false.
  absl::Status lost_reason() const;

  // How each master voted in the attempt that won the lock, or in the last
  // successful extension.
  std::vector<MasterVote> votes() const;

  // The shared state; for the client implementation.
  const std::shared_ptr<internal::LockState>& state() const { return state_; }

 private:
  std::shared_ptr<internal::LockState> state_;
};

}  // namespace redlock

#endif  // REDLOCK_LOCK_H_
