// Copyright 2026 The redlock Authors.
//
// Engine::AcquireOp: one acquisition, its attempts and retries, and the fencing
// token's read and write-back.
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_ACQUIRE_OP_H_
#define REDLOCK_SRC_ENGINE_ACQUIRE_OP_H_

#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/distributions.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "redlock/cancel.h"
#include "redlock/keys.h"
#include "src/algorithm/retry.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/semaphore.h"
#include "src/algorithm/token.h"
#include "src/algorithm/validity.h"
#include "src/algorithm/vote.h"
#include "src/engine/cancel_state.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"
#include "src/engine/wakeups.h"

namespace redlock::internal {

// A counting semaphore's acquisition (Engine::AcquirePermits()): each
// attempt names `permits` candidate slots and the semaphore acquire script
// takes all of them or none on each master, so a grant is a grant of the
// same keys and the round counts it as for a lock on several resources.
struct SemaphoreSpec {
  std::string name;
  int limit = 0;
  int permits = 0;
  std::string limit_key;
  std::vector<std::string> slot_keys;  // All `limit` of them, slot order.
};

// With RetryPolicy::wake_on_release, an acquisition whose attempt failed
// becomes a waiter (src/engine/wakeups.h): its next attempt comes at the poll
// delay, or a jitter after a release is heard, whichever is first; it does not
// start before the lock's channels are subscribed on every master that can
// subscribe, so a release after that attempt cannot go unheard; and it may
// wait for a wake-up until the end of its budget even when no further poll
// fits in it.
class AcquireOp final : public NamedOperation, private Wakeups::Waiter {
 public:
  // `resources`: sorted, without duplicates, at least one. With
  // `semaphore`: its name alone, and `options.fencing` false.
  AcquireOp(OperationHost* host, std::vector<std::string> resources,
            const AcquireOptions& options, AsyncRedlock::AcquireCallback done,
            std::optional<SemaphoreSpec> semaphore = std::nullopt);

  ~AcquireOp() override { Unwatch(); }

  // Cancelling `cancel` (from any thread) ends this acquisition through the
  // runtime's mailbox, on the loop thread.
  void WatchCancellation(const Cancellation& cancel);

  // One attempt: a new token (a hand-off waiter keeps its own), the
  // masters' markers refreshed, the round planned for this kind of lock and
  // started.
  void StartAttempt();

 private:
  // The checks and resets that open an attempt; false if none is to start
  // (finished, cancelled, yielding to a woken waiter, no token).
  bool BeginAttempt();
  // How an attempt is planned for each kind of lock (acquire_plan.cc): the
  // command and how a reply becomes a vote. One or several resources, no
  // fencing, not waiting as a writer; `announce`: on a contended resource,
  // the win is published so that woken waiters stand down.
  void PlanPlain(RoundConfig& config, bool announce);
  // Fenced: the counters read with the grant; won once a quorum of
  // trusted counter reads is in.
  void PlanFenced(RoundConfig& config);
  // A reader of a read-write lock.
  void PlanReader(RoundConfig& config);
  // A semaphore's permits: the candidate slots, all or none per master.
  void PlanSemaphore(RoundConfig& config);
  // A writer refused before: it marks itself waiting (and, with hand-off,
  // leaves its entry). False if no proof could be made (Fail() ran).
  bool PlanWaitingWriter(RoundConfig& config, bool announce);
  void OnRound(RoundResult result) override;
  // OnRound()'s parts. A hand-off waiter's lost attempt gives back what it
  // holds, or may hold, with its entry.
  void GiveBackAfterLoss(const RoundResult& result);
  // A writer's round: which masters took its waiting mark off.
  void NoteWriterMarks(const RoundResult& result);
  // Tells the observer of the attempt.
  void ReportAttempt(const RoundResult& result);
  // A writer refused for the first time marks itself waiting from its next
  // attempt on (and, with hand-off, draws the token it keeps from then on
  // and watches its own channel). False if no id or token could be made
  // (Fail() ran).
  bool StartWaitingAsWriter();
  // The same for a writer that marks itself (marks_as_writer_): its attempts
  // from the next on are preceded by a mark on every master. False if no id
  // could be made (Fail() ran).
  bool StartMarkingAsWriter();
  // Sends the mark (WriterMarkCommand) to every master, ahead of the
  // attempt on the same connection.
  void MarkAsWaitingWriter();
  // How long a waiting mark made now holds new readers off: the writer's
  // TTL, never past the end of its wait (at least 1 ms).
  absl::Duration WaitingTtl();
  // The round was won with fencing: the token is one more than the highest
  // trusted counter read, written back to a quorum; or, without a quorum
  // of trusted reads, the lock is released and no token issued.
  void IssueFence();

  // A semaphore attempt was decided. False if it is dealt with here: a
  // master holds another limit (the acquisition fails, whatever the votes),
  // or the slots free on a quorum of the masters that answered are tried at
  // once. Otherwise the next attempt's candidates are chosen, and the round
  // goes on as a lock's.
  bool OnSemaphoreRound(const RoundResult& result);

  // A reader's attempt was refused: what the masters said, for the message.
  void NoteRefusals(const RoundResult& result);

  // Deletes what this attempt may have set: the lock keys, or a reader's
  // own key (and the shared lock key if no other reader is left).
  Command UndoCommand(bool announce) const;

  // A hand-off waiter's withdrawal (WithdrawCommand() in scripts.h): its
  // entry goes (and with `leave_queue` its place), then its token is
  // released, handing on a key a release had handed it.
  Command WithdrawCommand(bool leave_queue) const;

  // Attempts leave hand-off entries (RetryPolicy::hand_off): a writer that
  // waits as one, woken on release.
  bool HandsOff() const { return !hand_off_key_.empty(); }

  void OnFenceWritten(RoundResult result);

  // The caller cancelled: stop retrying, undo the attempt in flight, answer
  // kCancelled. Nothing to do once the result was handed over.
  void CancelledByCaller();

  void Succeed(uint64_t fence);

  // The result is decided (`won`: the lock is delivered): cancellation no
  // longer applies.
  void Finished(bool won = false);

  void RetryOrFail(const absl::Status& status);

  // The wait is over: fails with the last attempt's `status`.
  void GiveUp(const absl::Status& status);

  enum class Next {
    kNone,      // No retry is armed (an attempt is in flight).
    kPoll,      // The poll delay.
    kWoken,     // A jitter after a release was heard.
    kGiveUp,    // The end of the budget, unless woken before.
    kSettling,  // Due, once the subscriptions settle; the end of the budget
                // if they do not.
  };

  void ArmRetry(Next next, absl::Duration after);

  void OnRetryTimer();

  // Wakeups::Waiter.
  void Wake(Wakeups::Event event, int master,
            absl::string_view successor) override;

  // The lock was taken somewhere (not handed to this waiter).
  void OnTaken(MonotonicTime now);

  // Master `master` published a hand-off with `proof`. False if the proof
  // is not one of this waiter's (the lock went to another). Otherwise the
  // hand-off is noted, dated by when the attempt that left the proof was
  // sent, unless it may predate a withdrawal sent to that master since
  // (counts_from_), or came over a subscriber connection to another server
  // run than the one that master's command connection knows (a restarted
  // master's hand-off must not slip past the restart guard; unknown runs
  // count as other runs). Then, if the hand-offs noted count for a quorum
  // (JudgeVotes(): the restart guard, membership, one vote per server),
  // with validity left from the earliest of their dates, the lock is won.
  bool HandedOver(int master, absl::string_view proof);

  // A new acquisition of a lock this client released a moment ago, while
  // others waited for it lately (its channels still subscribed), does not
  // try at once: it waits, as a waiter its release did not name would, for
  // successor_grace + WakeJitter(), watching the lock's channels. Otherwise the
  // releaser, whose next attempt goes out as the waiters hear the release and
  // draw their jitter, wins nearly every hand-off (99% in the contention_peer
  // benchmark's no-hold loop) and the waiters starve. A win heard meanwhile
  // ("taken") sends it to polling like any waiter (Wake()); else it
  // attempts when the jitter ends. Only the first attempt of a lock's
  // acquisition (not a semaphore's or a reader's), and only when more of
  // its wait budget is left than the jitter. Timing only: the attempt,
  // when made, counts as any other. True if it yielded.
  bool YieldsToWoken();
  // A hand-off waiter's first attempt of a resource this client waited for
  // lately (its channels still subscribed: Wakeups::Contended()), with wait
  // budget left, is already a waiting writer's: StartWaitingAsWriter() now,
  // the channels watched, and the attempt, which leaves the entries, made
  // once they are subscribed. Timing only, as YieldsToWoken(): the attempt
  // counts as any other. True if the attempt waits for the subscriptions
  // (or the acquisition failed); false to make it now.
  bool QueuesAtOnce();

  // Notes whom `master`'s release named (`successor`, empty: nobody); true
  // if the masters whose latest release since this waiter's last attempt
  // began named it hold a quorum (Engine::QuorumHeld()). Each master names
  // the waiter whose arrival it stamped first, and masters may disagree
  // (waiters that queued at about the same moment reach them in different
  // orders): a waiter named by a minority that tried at once could split
  // the votes with another, and neither would win. Only each master's
  // latest name counts, so no two waiters can each hold a quorum of names
  // (quorums intersect), not even across releases: a name an earlier
  // release gave, that master's later one takes back.
  bool NamedBy(int master, absl::string_view successor);

  // When a waiter woken by a release tries: at once if a quorum of the
  // release's messages named it as the longest queued (NamedBy());
  // successor_grace later than WakeJitter() if a message named another, who
  // should have taken the lock by then (if it has, "taken" sends this one
  // back to polling), or named this one without a quorum yet; after
  // WakeJitter() if it named nobody.
  absl::Duration WokenDelay(bool named, absl::string_view successor);

  // Uniform in [0, min(wake_jitter, max_delay)].
  absl::Duration WakeJitter();

  void Unwatch();

  // Watches WatchKeys() and, once it has one, this waiter's own channel.
  // True if one of WatchKeys() was not subscribed before (Wakeups::Watch()):
  // a release since the last attempt may have gone unheard. The own channel
  // needs no such check: nothing is handed to this waiter before the
  // attempt that leaves its entries, which waits until it is settled.
  bool WatchChannels();

  // Wakeups::Settled() for every channel WatchChannels() watches.
  bool ChannelsSettled() const;

  // The channel on which a release tells this waiter alone that it was
  // handed the lock: its hand-off entry's name, once it has one (HandsOff()).
  absl::Span<const std::string> OwnChannel() const;

  void SendToAll(const Command& command) { host_->SendToAll(command); }
  // This attempt's clean-up, delivered even across a reconnection.
  void CleanUp(const Command& command) {
    host_->CleanUpEverywhere(command, ttl_);
  }

  // The channels this acquisition's waiting listens on: its lock keys, or
  // a semaphore's limit key (its slot keys change between attempts).
  absl::Span<const std::string> WatchKeys() const {
    return semaphore_.has_value() ? watch_keys_ : keys_;
  }

  void Fail(absl::Status status) override;
  void OnCancel() override { retry_timer_->Cancel(); }

  static std::vector<std::string> KeysOf(
      const Options& options, const std::vector<std::string>& resources,
      std::string (*key_of)(const Options&, absl::string_view));

  // A hand-off entry lives at most 2 * max_delay plus this, unless the next
  // attempt refreshes it.
  static constexpr absl::Duration kEntrySlack = absl::Milliseconds(200);
  // Proofs a hand-off waiter recognises: its latest attempts'. An older
  // one's entry has expired on every master by then.
  static constexpr size_t kProofsKept = 32;
  // Immediate attempts per semaphore acquisition (OnSemaphoreRound()).
  static constexpr int kQuickRetries = 3;
  // YieldsToWoken(): a release less than the wake jitter and this long ago
  // still has waiters that were woken by it about to try.
  static constexpr absl::Duration kYieldMargin = absl::Milliseconds(2);
  // Live readers per resource and master (AcquireOptions::shared): bounds
  // the reader release script's walk over the readers' index.
  static constexpr int kMaxReaders = 1024;

  const std::vector<std::string> resources_;
  const std::string resource_;  // The first; names the lock in events.
  const std::optional<SemaphoreSpec> semaphore_;
  // The lock's keys; for a semaphore, the current attempt's candidate
  // slots' keys.
  std::vector<std::string> keys_;
  std::vector<std::string> watch_keys_;  // A semaphore's limit key.
  std::vector<int> candidates_;          // Semaphore: this attempt's slots.
  int quick_retries_ = 0;
  const std::vector<std::string> counter_keys_;  // Fencing only.
  const absl::Duration ttl_;
  const bool fencing_;
  // Read-write lock (AcquireOptions::shared).
  const bool shared_;              // A reader.
  const bool may_wait_as_writer_;  // A writer that can wait as one.
  // A writer that marks itself waiting with WriterMarkScript() before each
  // attempt after a refusal (fenced, or of several resources).
  const bool marks_as_writer_;
  // The waiting keys a waiting writer may be marked in, one per resource
  // (made at its first refusal: an uncontended acquisition builds none).
  std::vector<std::string> waiting_keys_;
  const bool hand_off_;  // RetryPolicy::hand_off asked for, and this lock can.
  const std::string waiting_key_;  // WriterWaitingKey().
  const std::string readers_key_;  // Readers: SharedHoldersKey().
  std::string reader_key_;         // Readers: this attempt's own key.
  bool waits_as_writer_ = false;   // Attempts use the writer script.
  bool marking_ = false;           // Attempts are preceded by a mark.
  bool writer_round_ = false;      // The round in flight is a writer's.
  std::vector<bool> marked_;       // Per master: its id may be waiting.
  std::string waiter_id_;          // Its id in the waiting set.
  std::string arrival_key_;        // WaiterArrivalKeyPrefix() + waiter_id_.
  std::vector<bool> named_by_;     // Per master: its latest name was this
                                   // waiter (since the last attempt).
  // Hand-off (RetryPolicy::hand_off).
  std::string hand_off_key_;  // Set once waiting: HandsOff().
  struct Proof {
    int attempt;  // attempts_ of the attempt that sent it.
    std::string value;
    MonotonicTime sent_at;  // Before that attempt was sent.
  };
  std::vector<Proof> proofs_;  // The latest kProofsKept.
  bool handed_over_ = false;   // Won by HandedOver().
  // Per master: the first attempt whose proofs count there (a withdrawal
  // was sent to it after the ones before).
  std::vector<int> counts_from_;
  // Per master: handed over, dated by the proof's sent_at.
  std::vector<std::optional<MonotonicTime>> handed_at_;
  std::string refusals_;  // Readers: the last refusals.
  AsyncRedlock::AcquireCallback done_;
  const MonotonicTime started_;
  RetrySchedule schedule_;
  const std::unique_ptr<Timer> retry_timer_;
  std::string token_;
  RoundResult won_;  // The acquire round that reached quorum.
  bool fence_write_ = false;
  uint64_t fence_ = 0;
  bool finished_ = false;
  int attempts_ = 0;  // Attempts started.
  // Wake-ups (RetryPolicy::wake_on_release).
  bool watching_ = false;                // A waiter of the engine's Wakeups.
  bool in_attempt_ = false;              // An acquire round is in flight.
  bool woken_in_attempt_ = false;        // A release was heard during it...
  absl::Duration woken_delay_;           // ...and the soonest WokenDelay().
  bool recheck_ = false;                 // Try once more when subscribed.
  bool yielded_ = false;                 // YieldsToWoken() once.
  Next next_ = Next::kNone;              // What the retry timer will do...
  MonotonicTime next_at_;                // ...and when.
  // The poll (or the end of the budget) a wake-up armed sooner replaced:
  // a "taken" heard goes back to it (OnTaken()) rather than to a new poll
  // delay, so that a stream of releases and takes cannot put it off.
  Next fallback_ = Next::kNone;
  MonotonicTime fallback_at_;
  // How long the last attempt took to be decided: HandedOver() gives the
  // rest of a release's hand-offs at least twice that to arrive.
  absl::Duration last_round_;
  absl::Status last_status_;             // The last failed attempt's.
  std::shared_ptr<CancelState> cancel_;  // Null when not watched.
  uint64_t subscription_ = 0;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_ACQUIRE_OP_H_
