// Copyright 2026 The redlock Authors.
//
// Leader election on the Redlock masters, with a fencing epoch per leader.
//
// An election is named; candidates campaign for it with a value (what others
// should know of the leader: an address, a host name). At most one candidate
// leads at a time, for a lease that is kept alive like a lock's, and every
// leader carries an epoch strictly greater than every earlier leader's of
// that name: the fencing token of its lease (AcquireOptions::fencing), with
// every guarantee and limit a fencing token has (docs/lifetime-and-fencing.md).
// A resource the leader writes should check the epoch and reject a lower one:
// that is what keeps a leader that was paused past its lease (GC, SIGSTOP,
// swap) from doing harm when it wakes.
//
//   redlock::CampaignOptions campaign;
//   campaign.on_lost = [](const absl::Status& why) { StopServing(); };
//   absl::StatusOr<redlock::Leadership> lead =
//       client->Campaign("scheduler", "10.0.0.7:8080", campaign);
//   if (!lead.ok()) return lead.status();
//   while (lead->valid()) RunOneTick(lead->epoch());
//   client->Resign(*lead);
//
// How it maps onto the masters (keys.h): the lease is a fenced lock on
// ElectionLockKey() with its counter FenceCounterKey(options,
// ElectionResource(name)); the value lives in ElectionRecordKey(), written
// only where the lease's key holds the leader's token, so a record counts
// only with the lease it names.
//
// Compared with what users know (etcd's concurrency.Election, Curator's
// LeaderLatch, client-go's leaderelection): Campaign/Proclaim/Resign/
// Leader/Observe follow etcd's names and meaning; the epoch is etcd's leader
// key revision, here guaranteed across a quorum of independent masters; the
// lost signal (CampaignOptions::on_lost) fires *before* the lease's validity
// ends, by the keep-alive's safety margin, which client-go's
// OnStoppedLeading does not promise (its docs say leader election does not
// guarantee fencing).

#ifndef REDLOCK_ELECTION_H_
#define REDLOCK_ELECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/cancel.h"
#include "redlock/lock.h"

namespace redlock {

namespace internal {
struct LeadershipState;
}  // namespace internal

// The longest value a candidate may proclaim, in bytes. Any bytes.
inline constexpr size_t kMaxElectionValueSize = 4096;

// How to campaign.
struct CampaignOptions {
  // The lease: each extension sets it again. In (request_timeout, max_ttl].
  // Zero: Options::default_ttl. Default: 0.
  absl::Duration ttl = absl::ZeroDuration();
  // Campaign until elected or until this has passed (kAborted then: another
  // candidate leads); 0 makes one attempt. Default: until elected (or
  // cancelled, or the client is destroyed).
  absl::Duration wait = absl::InfiniteDuration();
  // Cancel() on it (from any thread) stops the campaign with kCancelled; a
  // lease won meanwhile is released.
  Cancellation cancel;
  // The lease is extended every this long: zero is ttl / 3. The leadership
  // is declared lost when less than safety_margin of validity is left and
  // no extension succeeded since (zero: ttl / 10, at least 2 *
  // request_timeout). As HoldOptions.
  absl::Duration extend_every = absl::ZeroDuration();
  absl::Duration safety_margin = absl::ZeroDuration();
  // Called once, on the client's loop thread, when the leadership is
  // declared lost (Leadership::lost()), with the reason. Not called on
  // Resign(). Must not block. Default: none.
  absl::AnyInvocable<void(const absl::Status&)> on_lost;
};

// A leader as a quorum of masters holds it.
struct LeaderInfo {
  std::string name;   // The election.
  std::string value;  // The last value the leader proclaimed.
  // The leader's fencing epoch: larger than every earlier leader's.
  uint64_t epoch = 0;
  // 1 for the value given to Campaign(), one more for each Proclaim().
  uint64_t revision = 0;
};

// One candidate's leadership, from its election to its resignation or loss.
// A cheap, copyable handle (copies share one state); every method is
// thread-safe. It leads until Resign() succeeds, the lease is lost, or the
// client that won it is destroyed (then the lease expires with its TTL, as
// an etcd session's does).
class Leadership {
 public:
  // An empty handle: valid() is false.
  Leadership();
  explicit Leadership(std::shared_ptr<internal::LeadershipState> state);

  const std::string& name() const;
  // The last value proclaimed (Campaign()'s, then each Proclaim()'s).
  std::string value() const;
  // The lease's fencing token: larger than every earlier leader's epoch.
  uint64_t epoch() const;
  // 1 after the campaign, one more for each successful Proclaim().
  uint64_t revision() const;
  // The lease, a fenced Lock (lock().fence() == epoch()).
  const Lock& lock() const;
  // lock().remaining(), lock().valid(): how long the leadership is safely
  // held, on MonotonicClock. valid() is false once lost or resigned.
  absl::Duration remaining() const;
  bool valid() const;
  // True once the keep-alive declared the lease lost (see
  // CampaignOptions::on_lost); never goes back to false.
  bool lost() const;
  absl::Status lost_reason() const;
  // True once Resign() was called.
  bool resigned() const;
  // LeaderInfo as this leader knows itself.
  LeaderInfo info() const;

  const std::shared_ptr<internal::LeadershipState>& state() const {
    return state_;
  }

 private:
  std::shared_ptr<internal::LeadershipState> state_;
};

// How to observe.
struct ObserveOptions {
  // Called on the client's loop thread with the current leader once it is
  // known, then on every change: a new leader, or a new value proclaimed.
  // Strictly in (epoch, revision) order: a view older than one already
  // delivered is never delivered. Must not block. Required.
  absl::AnyInvocable<void(const LeaderInfo&)> on_leader;
  // Masters' messages (RetryPolicy::wake_on_release) wake the observer at
  // once; it also asks the masters this often in case a message was missed
  // (a leader that died says nothing). Must be positive. Default: 1 s.
  absl::Duration poll_every = absl::Seconds(1);
};

// Stops an observation when destroyed or Stop()ped. Move-only. From an
// AsyncRedlock, on its loop thread only; from a Redlock, on any thread,
// inside the client's own callbacks (on_leader, on_lost) too.
class ObserveHandle {
 public:
  ObserveHandle() = default;
  explicit ObserveHandle(absl::AnyInvocable<void()> stop)
      : stop_(std::move(stop)) {}
  ObserveHandle(ObserveHandle&& other) noexcept = default;
  ObserveHandle& operator=(ObserveHandle&& other) noexcept {
    if (this != &other) {
      Stop();
      stop_ = std::move(other.stop_);
    }
    return *this;
  }
  ~ObserveHandle() { Stop(); }
  // No on_leader call starts after Stop() returns. Does nothing twice.
  void Stop() {
    if (stop_) std::exchange(stop_, nullptr)();
  }

 private:
  absl::AnyInvocable<void()> stop_;
};

}  // namespace redlock

#endif  // REDLOCK_ELECTION_H_
