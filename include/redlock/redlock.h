// Copyright 2026 The redlock Authors.
//
// Redlock: the blocking client for ordinary threaded code. It owns a loop
// thread that runs an AsyncRedlock, and every call here posts to it and waits
// for the answer.
//
//   redlock::Options options;
//   options.masters = {"redis://10.0.0.1:6379", "redis://10.0.0.2:6379",
//                      "redis://10.0.0.3:6379"};
//   auto client = redlock::Redlock::Create(options);
//   if (!client.ok()) return client.status();
//   auto guard = (*client)->AcquireScoped("recalc-ratings", absl::Minutes(5),
//                                         absl::ZeroDuration());
//   if (absl::IsAborted(guard.status())) return;  // Someone else runs it.
//   if (!guard.ok()) return guard.status();
//   RecalculateRatings(guard->lock().valid_until());
//   // Released when `guard` goes out of scope.
//
// Thread safety: every method may be called from any number of threads at
// once. A call turns the client's event loop on the calling thread when no
// other thread does (no hand-over to the loop thread and back), so the
// client's callbacks (Observer events, HoldOptions::on_lost) run either on
// its own loop thread or on a thread waiting in one of its calls. A blocking
// call made from inside such a callback of the same client is refused with
// kFailedPrecondition (it would wait for itself).

#ifndef REDLOCK_REDLOCK_H_
#define REDLOCK_REDLOCK_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/async_redlock.h"
#include "redlock/election.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/options.h"

namespace redlock {

class Redlock;

// Holds a lock and releases it when destroyed. Move-only.
//
// It may outlive its client safely: it holds the client weakly, and once the
// client is destroyed its destructor does nothing (the lock expires with its
// TTL, as for any lock still held when a client is destroyed) and Release()
// returns kFailedPrecondition.
class ScopedLock {
 public:
  ScopedLock(ScopedLock&& other) noexcept;
  ScopedLock& operator=(ScopedLock&& other) noexcept;
  ScopedLock(const ScopedLock&) = delete;
  ScopedLock& operator=(const ScopedLock&) = delete;
  // Releases the lock unless Release() already did; errors are ignored.
  ~ScopedLock();

  const Lock& lock() const { return lock_; }

  // Releases now. Same contract as Redlock::Release(); later calls and the
  // destructor do nothing. kFailedPrecondition if already released or if
  // the client is gone.
  absl::StatusOr<ReleaseReport> Release(ReleaseOptions options = {});

 private:
  friend class Redlock;
  class ClientRef;
  ScopedLock(std::weak_ptr<ClientRef> client, Lock lock);
  void ReleaseQuietly();

  std::weak_ptr<ClientRef> client_;  // Empty once released or moved from.
  Lock lock_;
};

class Redlock {
 public:
  // Validates `options`, resolves host names (blocking, on the calling
  // thread), starts the loop thread and begins connecting. kInvalidArgument
  // names a bad option or a host that does not resolve. Masters that are down
  // are not an error here.
  static absl::StatusOr<std::unique_ptr<Redlock>> Create(Options options);

  // Cancels pending calls (they return kCancelled), hands requests already
  // queued (the releases still on their way to slow masters) to the network
  // where that does not block, closes connections and joins the loop
  // thread. Locks still held are not released; they expire with their TTL.
  // An acquisition still in flight returns kCancelled ("the client was shut
  // down") and nothing is sent to undo its attempt (unlike a Cancellation,
  // which releases it): keys that attempt set, or sets late, stay on the
  // masters until their TTL, keeping the resource taken meanwhile. Cancel
  // such acquisitions (AcquireOptions::cancel) before destroying the client
  // to free them at once. ScopedLocks that outlive the client do nothing when
  // destroyed.
  ~Redlock();

  Redlock(const Redlock&) = delete;
  Redlock& operator=(const Redlock&) = delete;

  // Acquires `resource` for `ttl`, retrying until `wait` has passed (0: one
  // attempt). Same results as AsyncRedlock::AcquireAsync(): OK, or
  // kInvalidArgument, kAborted (held elsewhere), kUnavailable (too few masters
  // answered), kDeadlineExceeded (no validity left), kCancelled.
  // Every form that takes one duration names it (TryAcquire: the TTL) or
  // takes AcquireOptions, so a TTL cannot be passed as a wait by mistake.
  absl::StatusOr<Lock> Acquire(absl::string_view resource, absl::Duration ttl,
                               absl::Duration wait);

  // Acquire() with AcquireOptions: the default TTL (ttl = 0), fencing, and
  // cancellation from another thread (options.cancel: the call then returns
  // kCancelled soon after Cancel(), having released what its attempt in
  // flight won); see AsyncRedlock::AcquireAsync(resource, options, done).
  absl::StatusOr<Lock> Acquire(absl::string_view resource,
                               const AcquireOptions& options);

  // Several resources as one lock, all or none; see
  // AsyncRedlock::AcquireAsync(resources, options, done).
  //   auto lock = client->Acquire({"orders:42", "stock:7"}, options);
  absl::StatusOr<Lock> Acquire(absl::Span<const std::string> resources,
                               const AcquireOptions& options);

  // Permits of a counting semaphore; same contract as
  // AsyncRedlock::AcquirePermitsAsync(). Release the Lock with Release().
  //   SemaphoreOptions sem;
  //   sem.limit = 4;  // Every client of "encoders" must say 4.
  //   auto permit = client->AcquirePermits("encoders", sem, options);
  absl::StatusOr<Lock> AcquirePermits(absl::string_view name,
                                      const SemaphoreOptions& sem,
                                      const AcquireOptions& options);
  // AcquirePermits(), returning a guard that releases the permits on scope
  // exit.
  absl::StatusOr<ScopedLock> AcquirePermitsScoped(
      absl::string_view name, const SemaphoreOptions& sem,
      const AcquireOptions& options);
  // WithLock() for permits: AcquirePermits(name, sem, acquire), `work` on the
  // calling thread while the permit set is extended in the background
  // (`hold`), released when `work` returns or unwinds. Returns as WithLock()
  // does (the loss reason if the permits were lost while `work` ran).
  absl::Status WithPermits(absl::string_view name, const SemaphoreOptions& sem,
                           const AcquireOptions& acquire,
                           absl::AnyInvocable<absl::Status(const Lock&)> work,
                           HoldOptions hold = {});

  // Exactly one attempt: Acquire(resource, ttl, absl::ZeroDuration()).
  absl::StatusOr<Lock> TryAcquire(absl::string_view resource,
                                  absl::Duration ttl);

  // Acquire(), returning a guard that releases the lock on scope exit.
  absl::StatusOr<ScopedLock> AcquireScoped(absl::string_view resource,
                                           absl::Duration ttl,
                                           absl::Duration wait);
  absl::StatusOr<ScopedLock> AcquireScoped(absl::string_view resource,
                                           const AcquireOptions& options);
  absl::StatusOr<ScopedLock> AcquireScoped(
      absl::Span<const std::string> resources, const AcquireOptions& options);

  // AsyncRedlock::Adopt(): a Lock for a token acquired elsewhere, to Extend()
  // and Release() here. Its validity is unknown (valid() is false) until an
  // Extend() succeeds. One resource only: a token of a lock on several
  // resources adopted for one of them extends and releases that key alone.
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token, uint64_t fence = 0);
  // AsyncRedlock::Adopt(resource, token, options): a reader (`shared`) or a
  // semaphore's permit set (`limit` and `slots`) acquired elsewhere, to
  // Extend() and Release() here. Errors as there.
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token,
                             const AdoptOptions& options);

  // Acquires `resource` (as Acquire(resource, acquire)), runs `work` on the
  // calling thread while the lock is extended in the background (`hold`),
  // and releases the lock when `work` returns — or unwinds: the release is
  // done by a destructor. `work` should poll lock.lost() and stop when it
  // turns true; hold.on_lost runs on the loop thread the moment it does.
  // Returns:
  //   the acquisition's error   `work` did not run.
  //   the keep-alive's error    the keep-alive could not start (as
  //                             AsyncRedlock::KeepAlive(), e.g.
  //                             kInvalidArgument for inconsistent `hold`
  //                             options): the lock won was released and
  //                             `work` did not run.
  //   the loss reason           the lock was lost while `work` ran (kAborted,
  //                             kUnavailable or kDeadlineExceeded): whatever
  //                             `work` returned, it did not run exclusively
  //                             to the end.
  //   what `work` returned      otherwise.
  absl::Status WithLock(absl::string_view resource,
                        const AcquireOptions& acquire,
                        absl::AnyInvocable<absl::Status(const Lock&)> work,
                        HoldOptions hold = {});
  // The same on several resources, all or none.
  absl::Status WithLock(absl::Span<const std::string> resources,
                        const AcquireOptions& acquire,
                        absl::AnyInvocable<absl::Status(const Lock&)> work,
                        HoldOptions hold = {});

  // Same contract as AsyncRedlock::ExtendAsync(); on OK every copy of `lock`
  // sees the new valid_until().
  absl::Status Extend(const Lock& lock, absl::Duration ttl);

  // Same contract as AsyncRedlock::ReleaseAsync(): returns as soon as a
  // quorum answered (a slow master does not delay it) unless
  // options.wait_for_all_masters.
  absl::StatusOr<ReleaseReport> Release(const Lock& lock,
                                        ReleaseOptions options = {});

  // Leader election (election.h); the contracts are AsyncRedlock's
  // CampaignAsync(), ProclaimAsync(), ResignAsync(), LeaderAsync() and
  // Observe(). While a leadership or an observation lasts, the client's loop
  // turns on its own thread, so on_lost and on_leader run there.
  absl::StatusOr<Leadership> Campaign(absl::string_view name,
                                      absl::string_view value,
                                      CampaignOptions options = {});
  absl::Status Proclaim(const Leadership& leadership, absl::string_view value);
  absl::StatusOr<ReleaseReport> Resign(const Leadership& leadership);
  absl::StatusOr<LeaderInfo> Leader(absl::string_view name);
  // Observe() and the handle's Stop() may be called from any thread, the
  // client's own callbacks included.
  absl::StatusOr<ObserveHandle> Observe(absl::string_view name,
                                        ObserveOptions options);

  // The options in force (validated, host names resolved).
  const Options& options() const;

  // AsyncRedlock::Health(): one entry per master, in the order of
  // Options::masters (health.h). Taken on the loop thread; waits for it
  // (safe to call from the client's own callbacks too).
  std::vector<MasterHealth> Health() const;

 private:
  class Impl;
  explicit Redlock(std::unique_ptr<Impl> impl);
  // WithLock() and WithPermits(): `acquire_async` starts the acquisition on
  // the loop thread (an AsyncRedlock call with its callback).
  absl::Status WorkWhileHeld(
      absl::AnyInvocable<
          absl::Status(absl::AnyInvocable<void(absl::StatusOr<Lock>)>)>
          acquire_async,
      const AcquireOptions& acquire,
      absl::AnyInvocable<absl::Status(const Lock&)> work, HoldOptions hold);
  std::unique_ptr<Impl> impl_;
  // What ScopedLocks hold weakly to reach this client.
  std::shared_ptr<ScopedLock::ClientRef> ref_;
};

}  // namespace redlock

#endif  // REDLOCK_REDLOCK_H_
