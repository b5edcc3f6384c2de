// Copyright 2026 The redlock Authors.
//
// AsyncRedlock: the Redlock engine on a caller's libevent loop.
//
// It keeps one connection to each master, fans every request out to all of
// them in one loop turn, and decides as soon as the votes allow: success once
// a quorum granted, failure once a quorum became impossible. It never waits
// for a straggler to make a decision, and after a failed attempt it sends the
// token-checked release to every master that did not deny the attempt (a
// denial means that master set nothing), quietly (no `released` message),
// queued behind any request still pending there, so no late SET leaves a key
// behind.
//
//   event_base* base = event_base_new();
//   auto engine = redlock::AsyncRedlock::Create(base, options);
//   (*engine)->AcquireAsync("recalc-ratings", absl::Seconds(30),
//                           absl::Seconds(5),
//                           [](absl::StatusOr<redlock::Lock> lock) { ... });
//   event_base_dispatch(base);
//
// Signals: hiredis writes with write(2), so a master that resets its
// connection can raise SIGPIPE on the loop thread. Ignore or block SIGPIPE in
// programs that use AsyncRedlock (the blocking Redlock does it for its own
// loop thread).
//
// Thread safety: an AsyncRedlock is used on its loop thread only: create it,
// call it and destroy it there (or before the loop runs). Callbacks run on the
// loop thread. The Lock values it hands out may be read from any thread.
// For ordinary threaded code use redlock::Redlock (redlock.h).

#ifndef REDLOCK_ASYNC_REDLOCK_H_
#define REDLOCK_ASYNC_REDLOCK_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/cancel.h"
#include "redlock/election.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/options.h"

// libevent's loop, used opaquely.
struct event_base;

namespace redlock {

namespace internal {
class Engine;
class KeepAliveOp;
class Elections;
}  // namespace internal

// How to acquire: what AcquireAsync(resource, ttl, wait, done) takes, plus
// the opt-ins.
struct AcquireOptions {
  // In (request_timeout, max_ttl]. Zero: Options::default_ttl. Default: 0.
  absl::Duration ttl = absl::ZeroDuration();
  // Retry until this has passed; 0 makes one attempt. Default: 0.
  absl::Duration wait = absl::ZeroDuration();
  // Cancel() on it (from any thread) stops the wait: see cancel.h. Default:
  // a Cancellation nobody else holds, so never cancelled.
  Cancellation cancel;
  // Issue a fencing token with the grant (Lock::fence()). Costs one more
  // round trip (the counter is written back to a quorum before success is
  // reported, inside the validity time). Default: false.
  bool fencing = false;
  // Take the read side of a read-write lock on the resource (many readers,
  // or one writer): false (the default) takes today's exclusive lock, which
  // IS the write side, so an exclusive Acquire("R") and a reader of "R"
  // exclude each other whichever API or tool takes them. Readers share the
  // lock key, which then holds kSharedLockValue (keys.h) with a TTL at least
  // every reader's; each reader also has its own key (SharedHolderKey()).
  // A reader is refused (kAborted) while a writer holds the lock, and also
  // while a writer that was refused waits for it (a writer of this resource
  // alone, without fencing, after its first attempt; WriterWaitingKey()): new
  // readers queue behind a waiting writer, for at most that writer's TTL
  // after its last attempt and never past the end of its wait. Readers
  // inside keep their validity, extensions and keep-alive meanwhile. A
  // reader Lock has Lock::shared() true and is extended, kept alive and
  // released as a lock is; its release deletes the lock key when it was the
  // last reader there, else shortens it to the longest remaining reader's
  // TTL. With `shared`, AcquireAsync refuses (kInvalidArgument) `fencing`
  // (readers need no fencing token; writers keep theirs) and more than one
  // resource. At most 1024 live readers per resource and master (more are
  // refused there). AcquirePermitsAsync refuses it (kInvalidArgument: its
  // permits are never shared). Default: false.
  bool shared = false;
};

// A counting semaphore (AsyncRedlock::AcquirePermitsAsync()): at most `limit`
// permits held at once across the masters, `permits` of them taken by one
// acquisition.
struct SemaphoreOptions {
  // In [1, 1024]. Every client of one semaphore name must give the same
  // limit: one that gives another is refused (kFailedPrecondition). Default:
  // 0, which is refused (kInvalidArgument): there is no default limit.
  int limit = 0;
  // In [1, limit]: taken all or none. Default: 1.
  int permits = 1;
};

// What AsyncRedlock::Adopt() makes of a token acquired elsewhere. The
// default is a writer's (exclusive) lock on the one key of the resource, as
// Adopt(resource, token, fence) makes.
struct AdoptOptions {
  // The fencing token that came with a writer's lock (0 if none); fence()
  // returns it as given, unchecked. Must be 0 for a reader or a permit set
  // (they have none).
  uint64_t fence = 0;
  // A reader of the resource (a Lock with shared() true, e.g. printed by
  // `redlock acquire --shared`): extending and releasing it send the
  // reader's scripts, so the last reader's release deletes the shared lock
  // key. Not with `limit`.
  bool shared = false;
  // A permit set of the semaphore named by the resource: the limit every
  // client of it gives (SemaphoreOptions::limit, in [1, 1024]) and the slots
  // the token holds (Lock::slots() of the acquired lock, `slots=` of
  // `redlock acquire --limit`): at least one, each in [0, limit), no repeats,
  // in any order. Extension refreshes these slots and the limit key, and
  // fails when a master holds another limit; release deletes these slots
  // where they hold the token. 0 and empty: not a permit set.
  int limit = 0;
  std::vector<int> slots;
};

// How to release.
struct ReleaseOptions {
  // Deliver the result only once every master answered or timed out, for a
  // full report: at most request_timeout after the release was sent to a
  // connected master; a master whose connection is still being made holds
  // it until the connection is up, so up to connect_timeout +
  // request_timeout (a refused or timed-out connect fails its vote then).
  // Default: false — delivered as soon as the outcome is decided (a quorum
  // answered, or too many failed), so a slow master never delays the
  // caller; the others still get the release.
  bool wait_for_all_masters = false;
};

// How a held lock is kept alive while work runs.
struct HoldOptions {
  // Extend every this long. Zero: ttl / 3. Must be shorter than
  // ttl - safety_margin. Default: 0.
  absl::Duration extend_every = absl::ZeroDuration();
  // The lock is declared lost when less than this validity is left and no
  // extension has succeeded since, so the work can stop before the lock
  // really expires. Zero: ttl / 10 (at least 2 * request_timeout).
  // Default: 0.
  absl::Duration safety_margin = absl::ZeroDuration();
  // Stop extending once the lock has been held this long (the Redlock paper
  // asks that re-acquisition be limited); the lock is then declared lost
  // (kDeadlineExceeded) when the safety margin is reached. Default: no cap.
  absl::Duration max_hold = absl::InfiniteDuration();
  // Called once, on the loop thread, when the lock is declared lost, with
  // the reason (also in Lock::lost_reason()). Must not block. Not called
  // when the keep-alive is stopped normally, nor when the lock is released
  // (ReleaseAsync()) while kept alive: a release is not a loss; the
  // keep-alive just stops. Default: none.
  absl::AnyInvocable<void(const absl::Status&)> on_lost;
};

// Keeps a lock alive; see AsyncRedlock::KeepAlive(). Move-only. Loop thread
// only, like the engine.
class KeepAliveHandle {
 public:
  KeepAliveHandle() = default;
  KeepAliveHandle(KeepAliveHandle&& other) noexcept = default;
  KeepAliveHandle& operator=(KeepAliveHandle&& other) noexcept;
  // Stop(/*release=*/true).
  ~KeepAliveHandle();

  // Stops extending; with `release`, also releases the lock (the result is
  // not reported: use AsyncRedlock::ReleaseAsync() to see it). A lock that
  // was declared lost is released too: the masters that still hold its token
  // would otherwise keep it for up to a TTL. Does nothing if already stopped,
  // if the lock was already released, or if the engine is gone.
  void Stop(bool release = true);

 private:
  friend class AsyncRedlock;
  explicit KeepAliveHandle(std::weak_ptr<internal::KeepAliveOp> op)
      : op_(std::move(op)) {}
  std::weak_ptr<internal::KeepAliveOp> op_;
};

class AsyncRedlock {
 public:
  using AcquireCallback = absl::AnyInvocable<void(absl::StatusOr<Lock>)>;
  using ExtendCallback = absl::AnyInvocable<void(absl::Status)>;
  using ReleaseCallback =
      absl::AnyInvocable<void(absl::StatusOr<ReleaseReport>)>;

  // Validates `options` and starts connecting to every master on `base`.
  // Returns kInvalidArgument naming the bad option (see ValidateOptions();
  // host names must already be numeric, see ResolveMasterHosts()). Does not
  // wait for any connection: a master that is down is a failed vote later,
  // not an error here. `base` must outlive the engine.
  static absl::StatusOr<std::unique_ptr<AsyncRedlock>> Create(event_base* base,
                                                              Options options);

  // Fails every pending operation's callback with kCancelled (a lock whose
  // quorum was already decided is delivered as decided), then closes every
  // connection. Nothing is sent to undo an acquisition attempt still in
  // flight (a Cancellation does release it): keys it set, or sets late, stay
  // until their TTL and keep the resource taken meanwhile.
  ~AsyncRedlock();

  AsyncRedlock(const AsyncRedlock&) = delete;
  AsyncRedlock& operator=(const AsyncRedlock&) = delete;

  // Acquires `resource` for `ttl` on a quorum of masters, retrying with
  // jittered delays (Options::retry) until `wait` has passed; `wait` = 0
  // makes exactly one attempt. Returns kInvalidArgument, without calling
  // `done`, if the resource is empty or the TTL is not in
  // (request_timeout, max_ttl]. Otherwise calls `done` exactly once, on the
  // loop thread, never before AcquireAsync() returns:
  //   OK                 held; see Lock::valid_until().
  //   kAborted           the last attempt found the lock held by another
  //                      owner on too many masters.
  //   kUnavailable       an attempt could not reach a quorum because too
  //                      many masters failed (down, timeout, error replies).
  //                      Returned at once, without spending the rest of
  //                      `wait`: waiting is for a lock held elsewhere, and an
  //                      outage is for the caller to know now. Safe to retry.
  //   kDeadlineExceeded  the last attempt reached quorum too late to leave
  //                      more than min_validity.
  //   kCancelled         the engine was destroyed first, or the call's
  //                      Cancellation was cancelled (AcquireOptions::cancel).
  // A failure decided by a quorum round (kAborted, kUnavailable,
  // kDeadlineExceeded from an attempt) lists how each master voted in the
  // last attempt and why; a cancellation, a shutdown, "fencing unavailable"
  // and a fencing write-back that left no validity do not. A failed attempt
  // leaves none of its keys behind: its token-checked clean-up goes to every
  // master, and a master whose connection failed before it answered (the
  // attempt's SET may have run there) gets it again first thing on its next
  // connection, while the attempt's TTL has not passed and this client
  // lives (at most 1024 kept per master, the oldest dropped first).
  //
  // The first acquisitions of a new client start as soon as a quorum of
  // masters has been judged by the restart guard (a stopped master does not
  // hold them up), or once every master has answered or failed.
  absl::Status AcquireAsync(absl::string_view resource, absl::Duration ttl,
                            absl::Duration wait, AcquireCallback done);

  // The same with AcquireOptions. With `fencing`, a grant additionally
  // fails with kUnavailable ("fencing unavailable") when too few masters
  // hold trustworthy counters to issue a token that is sure to be larger
  // than every earlier one; the lock is then released, never handed out with
  // a token that might not increase.
  //
  // With `cancel`: once it is cancelled the call stops retrying, sends the
  // token-checked release to every master for the attempt in flight (so
  // whatever it won, or wins late, is deleted) and completes with
  // kCancelled. A call whose lock was already decided completes with the
  // lock; release it as usual.
  absl::Status AcquireAsync(absl::string_view resource,
                            const AcquireOptions& options,
                            AcquireCallback done);

  // Several resources as one lock, all or none: on each master one script
  // sets every resource's key, or none if any of them is held, so a master's
  // vote is for the whole set, and quorum, validity, extension, keep-alive,
  // fencing and release work on the set exactly as on one resource. The
  // resources are sorted and duplicates dropped; Lock::resources() lists
  // them, Lock::resource() is the first. Deadlock-free by construction: a
  // client never holds some of the keys while it waits for the others (an
  // attempt that does not win releases all it set), so no order of taking
  // them matters. With `fencing`, the lock gets one token for the set: one
  // more than the highest trusted counter of any of its resources, written
  // back to every one of their counters (all or none), so for each resource
  // it is larger than every token issued before for that resource, and the
  // resource-side check works per resource unchanged. kInvalidArgument for an
  // empty list, more than 64 resources, or a bad name (as for one resource).
  absl::Status AcquireAsync(absl::Span<const std::string> resources,
                            const AcquireOptions& options,
                            AcquireCallback done);

  // `sem.permits` permits of the counting semaphore `name`: at most
  // `sem.limit` permits of `name` are held at once, with a lock's fault
  // tolerance (a minority of masters down, slow, cut off or restarted), its
  // validity rule and its restart guard. The semaphore has `sem.limit` slots,
  // each an ordinary lock key on every master (SemaphoreSlotKey() in keys.h);
  // a permit set holds `sem.permits` of them, all or none, with one token, so
  // the returned Lock is extended, kept alive and released exactly as a lock
  // on several resources: its resource() is `name`, keys() the slot keys it
  // holds, slots() their numbers. Each attempt names its slots (the first:
  // 0 .. permits-1); a master takes all of them or none and otherwise
  // reports its free slots, and the next attempt tries slots that a quorum
  // of the masters that answered reported free, at once (at most 3 times
  // per call, even with `options.wait` zero), else after the retry delay.
  // The results are those of AcquireAsync(resource, options, done), plus:
  //   kFailedPrecondition  a master holds another limit for `name` (set by
  //                        a holder that gave another limit; it lasts as
  //                        long as that holder's slots): the message names
  //                        both limits and the master. Never retried.
  // kAborted means too few slots were free on a quorum of masters.
  // Returns kInvalidArgument, without calling `done`, for a bad `name` (as
  // for a resource), `sem.limit` not in [1, 1024], `sem.permits` not in
  // [1, limit] (the message names the field), a bad TTL or wait, or
  // `options.fencing` (a semaphore has no fencing token: its holders are
  // not one after another) or `options.shared`. A waiter is woken by a release
  // of a permit of `name` (RetryPolicy::wake_on_release), as a lock's waiter
  // is.
  absl::Status AcquirePermitsAsync(absl::string_view name,
                                   const SemaphoreOptions& sem,
                                   const AcquireOptions& options,
                                   AcquireCallback done);

  // A Lock for a token acquired elsewhere — printed by `redlock acquire`,
  // handed over by another process — so that this client can extend and
  // release it. Nothing is sent: the masters are asked at the next
  // ExtendAsync() or ReleaseAsync(). Its validity is unknown until then:
  // valid_until() is the moment of adoption (valid() is false, remaining()
  // 0) and becomes start + ttl - drift when an extension succeeds, exactly as
  // for an acquired lock. `fence` is the fencing token that came with it (0
  // if none); it is returned by fence() as given, not checked. The lock is
  // on this one resource only: a token of a lock on several resources (e.g.
  // REDLOCK_TOKEN of `redlock run a b`) adopted for "a" extends and releases
  // key "a" alone; the other keys keep their TTL. Returns
  // kInvalidArgument naming what is wrong with the resource or the token
  // (empty, too long, or not printable ASCII without spaces).
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token, uint64_t fence = 0);
  // Adopt() of a reader or a permit set, or of a writer as above
  // (AdoptOptions). Nothing is sent; validity is unknown until an extension
  // succeeds, as above. The masters are not asked whether the token holds
  // what `options` says: a wrong token, or slots it does not hold, make
  // ExtendAsync() fail (kAborted) and ReleaseAsync() delete nothing; a limit
  // other than the masters' makes ExtendAsync() fail and change nothing.
  // Returns kInvalidArgument, naming the field (AdoptOptions.limit, .slots,
  // .shared, .fence), for a limit out of [1, 1024], slots without a limit or
  // a limit without slots, a slot out of [0, limit) or given twice, `shared`
  // with `limit`, or a fence with `shared` or `limit`; and as above for the
  // resource and the token.
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token,
                             const AdoptOptions& options);

  // Extends `lock` to `ttl` every options.extend_every until the handle is
  // stopped or destroyed (which releases the lock), or until the lock is
  // lost: an extension fails, or validity falls below the safety margin
  // before one succeeds. Then Lock::lost() becomes true and
  // options.on_lost runs, once. Returns kInvalidArgument for an empty lock,
  // a bad TTL or inconsistent options, kFailedPrecondition for a released
  // or lost lock.
  absl::StatusOr<KeepAliveHandle> KeepAlive(const Lock& lock,
                                            absl::Duration ttl,
                                            HoldOptions options);

  // Sets the TTL of `lock` to `ttl` again on every master that still holds
  // its token (a token-checked PEXPIRE: a key that expired or changed owner is
  // never recreated). Decided at quorum, like an acquisition, and its grants
  // are judged by the restart guard the same way (on a new client, it starts
  // once a quorum of masters can be judged). Returns kInvalidArgument without
  // calling `done` for an empty lock or a bad TTL, kFailedPrecondition for a
  // released lock. Otherwise calls `done` exactly once, on the loop thread,
  // never before ExtendAsync() returns:
  //   OK                 a quorum extended it; lock.valid_until() is now
  //                      start of this extension + ttl - drift, or, if
  //                      another extension of the lock ran at the same time,
  //                      the shortest of theirs and the one before
  //                      (Lock::valid_until()).
  //   kAborted           too many masters no longer hold our token: the lock
  //                      is lost.
  //   kUnavailable       too many masters failed to answer.
  //   kDeadlineExceeded  the quorum came too late to leave validity.
  //   kCancelled         the engine was destroyed first.
  // On failure lock.valid_until() is kept, or moved earlier if a minority
  // already applied a TTL shorter than what was left.
  absl::Status ExtendAsync(const Lock& lock, absl::Duration ttl,
                           ExtendCallback done);

  // Deletes `lock`'s key on every master where it still carries the lock's
  // token (sent to all of them in one loop turn), and marks the lock
  // released. Returns kInvalidArgument for an empty lock and
  // kFailedPrecondition if it was already released, without calling `done`.
  // Otherwise calls `done` exactly once, on the loop thread, never before
  // ReleaseAsync() returns, as soon as the outcome is decided: a quorum
  // answered that the token is gone (ReleaseReport::freed: another owner can
  // take the resource now), or so many masters failed that a quorum can no
  // longer confirm it (freed is false; their copies expire with the TTL). A
  // slow master never delays it; it still gets the release, and the report
  // counts it as pending.
  //   OK          see ReleaseReport.
  //   kCancelled  the engine was destroyed first.
  absl::Status ReleaseAsync(const Lock& lock, ReleaseCallback done);

  // The same; with options.wait_for_all_masters, `done` waits for every
  // master's answer or timeout.
  absl::Status ReleaseAsync(const Lock& lock, const ReleaseOptions& options,
                            ReleaseCallback done);

  using CampaignCallback = absl::AnyInvocable<void(absl::StatusOr<Leadership>)>;
  using LeaderCallback = absl::AnyInvocable<void(absl::StatusOr<LeaderInfo>)>;

  // Campaigns in the election `name` (election.h) with `value`: acquires its
  // lease (a fenced lock, see election.h), writes `value` with the lease's
  // epoch to a quorum, and keeps the lease alive until ResignAsync(), a loss
  // (options.on_lost), or the engine's destruction. Waits as an acquisition
  // does (woken when the leader resigns, polling otherwise) for
  // options.wait. Returns kInvalidArgument, without calling `done`, for an
  // empty name, a name whose lease resource (ElectionResource(name)) is
  // longer than a resource may be, a value longer than
  // kMaxElectionValueSize, a bad TTL or inconsistent
  // extend_every/safety_margin. (Any other bytes make a name; the tool,
  // which prints names on one line, also refuses spaces and control
  // characters.) Otherwise calls `done`
  // exactly once, on the loop thread, never before CampaignAsync() returns:
  //   OK                 elected; Leadership::epoch() is the fencing epoch.
  //   kAborted           another candidate led until the wait ran out.
  //   kUnavailable       too few masters answered (the acquisition's, the
  //                      fencing counters', or the value's write), or too
  //                      few hold trustworthy counters to issue an epoch.
  //   kDeadlineExceeded  elected too late to leave validity.
  //   kCancelled         options.cancel was cancelled, or the engine went
  //                      away.
  // A lease won and then not reported (the value's write failed, a
  // cancellation) is released.
  absl::Status CampaignAsync(absl::string_view name, absl::string_view value,
                             CampaignOptions options, CampaignCallback done);

  // Writes `value` as the leader's value without a new election: the
  // revision is one more than the last. Decided at quorum: OK once a quorum
  // of masters where the lease still holds this leader's token stored it;
  // kAborted when too many masters no longer hold the lease (the leadership
  // is lost: the keep-alive will say so too); kUnavailable when too many
  // failed to answer (some may show the new value: LeaderAsync() reports the
  // highest revision a quorum's leader holds). kInvalidArgument without
  // calling `done` for an empty handle or a bad value; kFailedPrecondition
  // for a resigned or lost leadership.
  absl::Status ProclaimAsync(const Leadership& leadership,
                             absl::string_view value, ExtendCallback done);

  // Stops keeping the lease alive and releases it, as ReleaseAsync() does a
  // lock: the candidates waiting are woken and the first to win leads next,
  // with a larger epoch. kInvalidArgument without calling `done` for an
  // empty handle, kFailedPrecondition if already resigned.
  absl::Status ResignAsync(const Leadership& leadership, ReleaseCallback done);

  // The current leader of `name` as a quorum of masters holds it: one round
  // to every master, decided once a quorum agrees on one lease (the value
  // of the highest revision among them) or every master answered:
  //   OK            the leader, its epoch and value.
  //   kNotFound     no leader: a quorum of masters hold no lease for `name`.
  //   kUnavailable  unknown: no quorum agrees (a campaign or resignation in
  //                 flight, masters down, masters not yet judged by the
  //                 restart guard). Never a guess.
  //   kCancelled    the engine was destroyed first.
  // kInvalidArgument without calling `done` for a bad name.
  absl::Status LeaderAsync(absl::string_view name, LeaderCallback done);

  // Watches the election `name`: options.on_leader hears the current leader
  // and every later one, in epoch order (election.h, ObserveOptions).
  // kInvalidArgument for a bad name, a missing on_leader or a poll_every that
  // is not positive.
  absl::StatusOr<ObserveHandle> Observe(absl::string_view name,
                                        ObserveOptions options);

  // The options in force (validated).
  const Options& options() const;

  // One entry per master, in the order of Options::masters: connection
  // state, the restart guard's view and request counts (health.h). A
  // snapshot for monitoring; never needed for using a lock.
  std::vector<MasterHealth> Health() const;

 private:
  explicit AsyncRedlock(std::unique_ptr<internal::Engine> engine);
  std::unique_ptr<internal::Engine> engine_;
};

}  // namespace redlock

#endif  // REDLOCK_ASYNC_REDLOCK_H_
