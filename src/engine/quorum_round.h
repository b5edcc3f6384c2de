// Copyright 2026 The redlock Authors.
//
// One round of the Redlock algorithm: send one command to every master in the
// same loop turn, count each master's vote once, and decide as early as the
// votes allow — won as soon as `quorum` granted, lost as soon as so many
// denied or failed that quorum is out of reach. Stragglers never delay the
// decision. A won round must also leave validity: start + ttl - drift must lie
// more than min_validity ahead when quorum is reached. A lost round sends its
// clean-up command (RoundConfig::cleanup_on_loss, the token-checked release)
// to every master, including the ones that have not answered, except the ones
// that denied when RoundConfig::cleanup_skips_denied is set (an acquire's
// denial means that master set nothing): on each connection it queues behind
// the request still pending there, so a late SET cannot leave a key behind.

#ifndef REDLOCK_SRC_ENGINE_QUORUM_ROUND_H_
#define REDLOCK_SRC_ENGINE_QUORUM_ROUND_H_

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/lock.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/vote.h"
#include "src/engine/master_link.h"

namespace redlock::internal {

// Counts votes. Pure: no I/O, no clock. The votes are counted per group
// (QuorumGroup): one group of every master, or during a change of the
// deployment's members the old members and the new ones; a grant needs a
// quorum of every group, and a group's members this client has no address
// for count as failed votes.
class VoteTally {
 public:
  // One group: every master, `quorum` of them.
  VoteTally(int masters, int quorum);
  // `groups` non-empty, each `in` of size `masters`; shared, not copied,
  // by every round of one membership.
  VoteTally(int masters,
            std::shared_ptr<const std::vector<QuorumGroup>> groups);
  VoteTally(int masters, std::vector<QuorumGroup> groups);

  // Records `master`'s vote. A second vote from the same master is ignored
  // and returns false: no vote counts twice.
  bool Record(int master, const absl::StatusOr<Vote>& vote);

  bool QuorumReached() const;
  // So many masters denied or failed that quorum can no longer be reached.
  bool QuorumImpossible() const;
  bool AllVoted() const { return granted_ + denied_ + failed_ == masters_; }
  // A release's question: a quorum answered that our token is no longer
  // there (deleted now, or gone already).
  bool QuorumCleared() const;
  // So many failed that a quorum can no longer confirm it.
  bool ClearingImpossible() const;

  // Why a round that cannot win lost: kUnavailable when the failures alone
  // put quorum out of reach (retrying may help once masters recover),
  // otherwise kAborted (other owners hold the lock).
  absl::StatusCode LossCode() const;

  int masters() const { return masters_; }
  // "quorum 2 of 3", or "quorum 2 of 3 old members and 2 of 3 new".
  std::string DescribeQuorum() const;
  int granted() const { return granted_; }
  int denied() const { return denied_; }
  int failed() const { return failed_; }
  int pending() const { return masters_ - granted_ - denied_ - failed_; }

 private:
  struct Count {
    int granted = 0;
    int denied = 0;
    int failed = 0;  // Including the members this client has no address for.
  };
  struct Group {
    const std::vector<bool>* in;  // Null: every master.
    int size;
    int quorum;
    bool Has(int master) const {
      return in == nullptr ||
             (master < static_cast<int>(in->size()) && (*in)[master]);
    }
  };
  int masters_;
  // Owns what groups_ points into (null for one group of every master).
  std::shared_ptr<const std::vector<QuorumGroup>> keep_;
  absl::InlinedVector<Group, 2> groups_;
  absl::InlinedVector<Count, 2> counts_;
  int granted_ = 0;
  int denied_ = 0;
  int failed_ = 0;
  absl::InlinedVector<bool, 8> voted_;
};

struct RoundConfig {
  Command command;  // Moved out by Start(), into the round.
  VoteMapper map_reply = nullptr;
  int quorum = 1;
  // If set, replaces `quorum`: a quorum of each group (the deployment's
  // members, or during a change its old and new members).
  std::shared_ptr<const std::vector<QuorumGroup>> groups;
  // If set, asked at each reply: when it gives other (non-null) groups than
  // the votes are counted under, every vote so far is counted again under
  // them. (A change to null — the client refused meanwhile — keeps the
  // groups: the refusal vetoes every later grant anyway.)
  std::function<std::shared_ptr<const std::vector<QuorumGroup>>()>
      current_groups;
  // When the round is decided.
  enum class DecideWhen {
    // Acquire and extend: won as soon as `quorum` granted, lost as soon as
    // that is out of reach.
    kQuorumGranted,
    // Release: as soon as `quorum` masters answered that the token is no
    // longer there (granted: deleted now; denied: gone already) — OK, the
    // resource can be taken again — or so many failed that this can no
    // longer be confirmed (kUnavailable).
    kQuorumCleared,
    // Only once every master answered or failed; OK if `quorum` granted.
    kAllVoted,
  };
  DecideWhen decide_when = DecideWhen::kQuorumGranted;
  // Acquire and extend: a won round needs validity left.
  bool check_validity = false;
  absl::Duration ttl;
  double drift_factor = 0.01;
  absl::Duration min_validity;
  // Per master: a non-OK status turns that master's grant into a failed
  // vote with this reason (the restart guard). Empty: every grant counts.
  // Asked when a master grants, so it sees what the master's connection
  // learned in its handshake just before.
  std::function<absl::Status(int master)> grant_veto;
  // Per master: its failure domain (the server's run_id), empty if unknown.
  // Two masters of one domain (one server under two addresses) cast one
  // grant between them: the second becomes a failed vote. Asked when a master
  // grants, like grant_veto.
  std::function<absl::string_view(int master)> failure_domain;
  // Keep every reply received before the decision (RoundResult::replies).
  bool keep_replies = false;
  // With keep_replies: once quorum granted, the round is won only when this
  // also holds for the replies so far, or when every master has answered.
  // Fencing uses it to wait for enough trustworthy counter reads.
  std::function<bool(const std::vector<std::optional<RedisReply>>&)>
      ready_to_win;
  // Sent to every master when the round is lost...
  std::optional<Command> cleanup_on_loss;
  // ...except those that denied, if set: an acquire's denial (SET NX or the
  // script answered "not set") means that master holds nothing of this
  // round. Not for rounds whose denial says nothing of the lock keys (the
  // fence write-back). A vetoed grant is a failed vote, never a denial.
  bool cleanup_skips_denied = false;
};

struct RoundResult {
  // OK: won. Otherwise VoteTally::LossCode(), or kDeadlineExceeded when
  // quorum came too late to leave validity. The message counts the votes and
  // lists each master's.
  absl::Status status;
  MonotonicTime start;
  MonotonicTime decided_at;
  // With check_validity: start + ttl - drift.
  MonotonicTime valid_until;
  int granted = 0;
  int denied = 0;
  int failed = 0;
  int pending = 0;
  // A quorum (of every group) answered granted or denied: for a release,
  // the token is no longer held.
  bool quorum_cleared = false;
  std::vector<MasterVote> votes;
  // With keep_replies: master i's reply, if one came before the decision.
  std::vector<std::optional<RedisReply>> replies;
};

class QuorumRound : public std::enable_shared_from_this<QuorumRound> {
 public:
  using Done = absl::AnyInvocable<void(RoundResult)>;

  // Starts a round on `masters` (all sent before Start() returns). Calls
  // `done` exactly once, on the loop thread, never before Start() returns,
  // unless Cancel() comes first. The masters must outlive the round or
  // cancel its requests when destroyed (Master does).
  static std::shared_ptr<QuorumRound> Start(
      absl::Span<MasterLink* const> masters, RoundConfig config, Clock* clock,
      Done done);

  // Master `master`'s answer for this round, received at `received_at` (a
  // vote's latency is counted to it): its reply, or why none came. Judged
  // as a link's callback's reply or failure is for a round from Start().
  void Feed(int master, const RedisReply& reply, MonotonicTime received_at);
  void Feed(int master, const absl::Status& failure, MonotonicTime received_at);

  // After Cancel(), `done` is never called and nothing more is sent. Late
  // replies are dropped.
  void Cancel();

  // Use Start(); the constructor below makes a fed round.
  QuorumRound(absl::Span<MasterLink* const> masters,
              std::shared_ptr<const RoundConfig> config, Clock* clock,
              Done done);
  // A fed round: one whose request the caller sends, one request carrying
  // several rounds (the keep-alive's batches: one call extends many locks),
  // made in place by its owner (a batch keeps its rounds in a deque).
  // Nothing is sent: `start` is when the caller sent the request (validity
  // is counted from it), and each master's answer comes through Feed().
  // Everything else — the votes, the vetoes, the tally, the early decision,
  // validity — is judged by the same code as a round from Start(). `config`
  // may be shared by many such rounds (a batch's locks of one TTL); its
  // `command` is not used, and its `cleanup_on_loss` is ignored. The owner
  // calls Cancel() if it stops feeding the round before the decision.
  QuorumRound(absl::Span<MasterLink* const> masters,
              std::shared_ptr<const RoundConfig> config, Clock* clock,
              MonotonicTime start, Done done);

 private:
  static std::shared_ptr<const RoundConfig> WithoutCleanup(
      std::shared_ptr<const RoundConfig> config);
  void SendAll();
  void OnReply(int master, absl::StatusOr<RedisReply> reply);
  // Counts master `master`'s vote (its vetoes first), which came at `at`,
  // and decides if the votes so far allow.
  void Count(int master, absl::StatusOr<Vote> vote, MonotonicTime at);
  // Counts every vote so far again if the client's groups changed.
  void FollowGroups();
  // A master of `master`'s failure domain whose grant already counted, or -1.
  int GrantedSameDomain(int master) const;
  void Decide(absl::Status status);

  absl::InlinedVector<MasterLink*, 8> masters_;
  std::shared_ptr<const RoundConfig> config_;
  Command command_;  // Start(): what SendAll() sends (the config's command).
  Clock* clock_;
  Done done_;
  VoteTally tally_;
  // The groups tally_ counts under (RoundConfig::current_groups).
  std::shared_ptr<const std::vector<QuorumGroup>> counted_under_;
  MonotonicTime start_;
  std::vector<MasterVote> votes_;
  std::vector<std::optional<RedisReply>> replies_;
  bool decided_ = false;
  bool cancelled_ = false;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_QUORUM_ROUND_H_
