// Copyright 2026 The redlock Authors.

#include "src/engine/quorum_round.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/algorithm/validity.h"

namespace redlock::internal {

VoteTally::VoteTally(int masters, int quorum)
    : masters_(masters), voted_(masters, false) {
  // One group of every master: nothing to allocate.
  groups_.push_back(Group{nullptr, masters, quorum});
  counts_.resize(1);
}

VoteTally::VoteTally(int masters, std::vector<QuorumGroup> groups)
    : VoteTally(masters, std::make_shared<const std::vector<QuorumGroup>>(
                             std::move(groups))) {}

VoteTally::VoteTally(int masters,
                     std::shared_ptr<const std::vector<QuorumGroup>> groups)
    : masters_(masters), keep_(std::move(groups)), voted_(masters, false) {
  for (const QuorumGroup& group : *keep_) {
    groups_.push_back(Group{&group.in, group.size, group.quorum});
  }
  counts_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    int present = 0;
    for (int i = 0; i < masters_; ++i) present += group.Has(i);
    // Members without an address here never vote: failed from the start.
    counts_[g].failed = std::max(0, group.size - present);
  }
}

bool VoteTally::Record(int master, const absl::StatusOr<Vote>& vote) {
  if (master < 0 || master >= masters_ || voted_[master]) return false;
  voted_[master] = true;
  int Count::*field = !vote.ok()                ? &Count::failed
                      : *vote == Vote::kGranted ? &Count::granted
                                                : &Count::denied;
  if (!vote.ok()) {
    ++failed_;
  } else if (*vote == Vote::kGranted) {
    ++granted_;
  } else {
    ++denied_;
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].Has(master)) ++(counts_[g].*field);
  }
  return true;
}

bool VoteTally::QuorumReached() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (counts_[g].granted < groups_[g].quorum) return false;
  }
  return true;
}

bool VoteTally::QuorumImpossible() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    if (counts_[g].denied + counts_[g].failed > group.size - group.quorum) {
      return true;
    }
  }
  return false;
}

bool VoteTally::QuorumCleared() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (counts_[g].granted + counts_[g].denied < groups_[g].quorum) {
      return false;
    }
  }
  return true;
}

bool VoteTally::ClearingImpossible() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    if (counts_[g].failed > group.size - group.quorum) return true;
  }
  return false;
}

absl::StatusCode VoteTally::LossCode() const {
  return ClearingImpossible() ? absl::StatusCode::kUnavailable
                              : absl::StatusCode::kAborted;
}

std::string VoteTally::DescribeQuorum() const {
  const absl::InlinedVector<Group, 2>& groups = groups_;
  if (groups.size() == 1) {
    return absl::StrFormat("quorum %d of %d", groups[0].quorum, groups[0].size);
  }
  std::string out = "quorum";
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::StrAppendFormat(&out, "%s %d of %d %s", g == 0 ? "" : " and",
                          groups[g].quorum, groups[g].size,
                          g == 0 ? "old members" : "new members");
  }
  return out;
}

std::shared_ptr<QuorumRound> QuorumRound::Start(
    absl::Span<MasterLink* const> masters, RoundConfig config, Clock* clock,
    Done done) {
  Command command = std::move(config.command);
  auto round = std::make_shared<QuorumRound>(
      masters, std::make_shared<const RoundConfig>(std::move(config)), clock,
      std::move(done));
  round->command_ = std::move(command);
  round->SendAll();
  return round;
}

QuorumRound::QuorumRound(absl::Span<MasterLink* const> masters,
                         std::shared_ptr<const RoundConfig> config,
                         Clock* clock, MonotonicTime start, Done done)
    : QuorumRound(masters, WithoutCleanup(std::move(config)), clock,
                  std::move(done)) {
  start_ = start;
}

std::shared_ptr<const RoundConfig> QuorumRound::WithoutCleanup(
    std::shared_ptr<const RoundConfig> config) {
  if (!config->cleanup_on_loss.has_value()) return config;
  // Not a fed round's to send: the caller's request carried other rounds.
  auto without = std::make_shared<RoundConfig>(*config);
  without->cleanup_on_loss.reset();
  return without;
}

QuorumRound::QuorumRound(absl::Span<MasterLink* const> masters,
                         std::shared_ptr<const RoundConfig> config,
                         Clock* clock, Done done)
    : masters_(masters.begin(), masters.end()),
      config_(std::move(config)),
      clock_(clock),
      done_(std::move(done)),
      tally_(
          config_->groups == nullptr
              ? VoteTally(static_cast<int>(masters_.size()), config_->quorum)
              : VoteTally(static_cast<int>(masters_.size()), config_->groups)),
      counted_under_(config_->groups) {
  votes_.resize(masters_.size());
  // Kept only when asked for (fencing): one allocation less per round.
  if (config_->keep_replies || config_->ready_to_win) {
    replies_.resize(masters_.size());
  }
  for (size_t i = 0; i < masters_.size(); ++i) {
    votes_[i].master = masters_[i]->name();
  }
}

void QuorumRound::SendAll() {
  start_ = clock_->Now();
  // A script's call is kept by each link until answered (to resend it as
  // EVAL): one copy shared by every link instead of one each.
  std::shared_ptr<const Command> shared;
  if (command_.script != nullptr) {
    shared = std::make_shared<const Command>(std::move(command_));
  }
  for (size_t i = 0; i < masters_.size(); ++i) {
    auto done = [self = shared_from_this(),
                 i](absl::StatusOr<RedisReply> reply) {
      self->OnReply(static_cast<int>(i), std::move(reply));
    };
    if (shared != nullptr) {
      masters_[i]->Send(shared, std::move(done));
    } else {
      masters_[i]->Send(command_, std::move(done));
    }
  }
}

void QuorumRound::Cancel() {
  cancelled_ = true;
  done_ = nullptr;
}

void QuorumRound::OnReply(int master, absl::StatusOr<RedisReply> reply) {
  if (cancelled_ || decided_) return;  // Late: the decision stands.
  absl::StatusOr<Vote> vote = reply.ok() ? config_->map_reply(*reply)
                                         : absl::StatusOr<Vote>(reply.status());
  if (config_->keep_replies && reply.ok()) {
    replies_[master] = *std::move(reply);
  }
  Count(master, std::move(vote), clock_->Now());
}

void QuorumRound::Feed(int master, const RedisReply& reply,
                       MonotonicTime received_at) {
  if (cancelled_ || decided_) return;
  absl::StatusOr<Vote> vote = config_->map_reply(reply);
  if (config_->keep_replies) replies_[master] = reply;
  Count(master, std::move(vote), received_at);
}

void QuorumRound::Feed(int master, const absl::Status& failure,
                       MonotonicTime received_at) {
  if (cancelled_ || decided_) return;
  Count(master, failure, received_at);
}

void QuorumRound::Count(int master, absl::StatusOr<Vote> vote,
                        MonotonicTime at) {
  if (vote.ok() && *vote == Vote::kGranted && config_->grant_veto) {
    if (absl::Status veto = config_->grant_veto(master); !veto.ok()) {
      vote = std::move(veto);
    }
  }
  if (vote.ok() && *vote == Vote::kGranted && config_->failure_domain) {
    if (int same = GrantedSameDomain(master); same >= 0) {
      vote = absl::FailedPreconditionError(
          absl::StrCat("same server as ", masters_[same]->name(),
                       ", which granted already: one server casts one vote"));
    }
  }
  FollowGroups();
  if (!tally_.Record(master, vote)) return;

  MasterVote& record = votes_[master];
  record.latency = ToDuration(at - start_);
  if (!vote.ok()) {
    record.kind = MasterVote::Kind::kFailed;
    record.error = vote.status();
  } else {
    record.kind = *vote == Vote::kGranted ? MasterVote::Kind::kGranted
                                          : MasterVote::Kind::kDenied;
  }

  switch (config_->decide_when) {
    case RoundConfig::DecideWhen::kAllVoted:
      if (!tally_.AllVoted()) return;
      Decide(tally_.QuorumReached() ? absl::OkStatus()
                                    : absl::Status(tally_.LossCode(), ""));
      return;
    case RoundConfig::DecideWhen::kQuorumCleared:
      if (tally_.QuorumCleared()) {
        Decide(absl::OkStatus());
      } else if (tally_.ClearingImpossible()) {
        Decide(absl::UnavailableError("too few masters answered"));
      }
      return;
    case RoundConfig::DecideWhen::kQuorumGranted:
      break;
  }
  if (tally_.QuorumReached()) {
    if (!config_->ready_to_win || tally_.AllVoted() ||
        config_->ready_to_win(replies_)) {
      Decide(absl::OkStatus());
    }
  } else if (tally_.QuorumImpossible()) {
    Decide(absl::Status(tally_.LossCode(), ""));
  }
}

void QuorumRound::FollowGroups() {
  if (!config_->current_groups) return;
  std::shared_ptr<const std::vector<QuorumGroup>> now =
      config_->current_groups();
  if (now == nullptr || now == counted_under_) return;
  counted_under_ = now;
  VoteTally tally(static_cast<int>(masters_.size()), std::move(now));
  for (size_t j = 0; j < votes_.size(); ++j) {
    switch (votes_[j].kind) {
      case MasterVote::Kind::kGranted:
        tally.Record(static_cast<int>(j), Vote::kGranted);
        break;
      case MasterVote::Kind::kDenied:
        tally.Record(static_cast<int>(j), Vote::kDenied);
        break;
      case MasterVote::Kind::kFailed:
        tally.Record(static_cast<int>(j), votes_[j].error.ok()
                                              ? absl::UnknownError("failed")
                                              : votes_[j].error);
        break;
      default:
        break;  // No vote yet.
    }
  }
  tally_ = std::move(tally);
}

int QuorumRound::GrantedSameDomain(int master) const {
  const absl::string_view domain = config_->failure_domain(master);
  if (domain.empty()) return -1;
  for (size_t j = 0; j < votes_.size(); ++j) {
    if (votes_[j].kind == MasterVote::Kind::kGranted &&
        config_->failure_domain(static_cast<int>(j)) == domain) {
      return static_cast<int>(j);
    }
  }
  return -1;
}

void QuorumRound::Decide(absl::Status status) {
  decided_ = true;
  RoundResult result;
  result.start = start_;
  result.decided_at = clock_->Now();
  if (config_->check_validity) {
    result.valid_until =
        ValidUntil(start_, config_->ttl, config_->drift_factor);
    if (status.ok() && !HasValidity(result.valid_until, result.decided_at,
                                    config_->min_validity)) {
      status = absl::DeadlineExceededError(absl::StrCat(
          "quorum reached after ",
          ReadableDuration(ToDuration(result.decided_at - start_)),
          ", leaving ",
          ReadableDuration(Remaining(result.valid_until, result.decided_at)),
          " of validity (needs more than ",
          absl::FormatDuration(config_->min_validity), ")"));
    }
  }
  result.granted = tally_.granted();
  result.denied = tally_.denied();
  result.failed = tally_.failed();
  result.pending = tally_.pending();
  result.quorum_cleared = tally_.QuorumCleared();
  // Nothing reads votes_ once decided (late replies are dropped).
  result.votes = std::move(votes_);
  result.replies = std::move(replies_);
  if (status.ok()) {
    result.status = status;
  } else {
    // Only a loss is explained: describing every won round would cost a
    // tenth of a lock cycle's instructions, thrown away.
    std::string counts = absl::StrFormat(
        "%d granted, %d denied, %d failed, %d no reply (%s): %s",
        result.granted, result.denied, result.failed, result.pending,
        tally_.DescribeQuorum(), DescribeVotes(result.votes));
    result.status = absl::Status(
        status.code(), status.message().empty()
                           ? counts
                           : absl::StrCat(status.message(), "; ", counts));
  }

  if (!result.status.ok() && config_->cleanup_on_loss.has_value()) {
    for (size_t i = 0; i < masters_.size(); ++i) {
      if (config_->cleanup_skips_denied &&
          result.votes[i].kind == MasterVote::Kind::kDenied) {
        continue;
      }
      masters_[i]->SendCleanup(*config_->cleanup_on_loss, config_->ttl);
    }
  }
  Done done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(result));
}

}  // namespace redlock::internal
