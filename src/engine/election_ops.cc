// Copyright 2026 The redlock Authors.

#include "src/engine/election_ops.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "redlock/keys.h"
#include "src/algorithm/vote.h"

namespace redlock::internal {
namespace {

// A round whose grants are judged as an acquisition's (the restart guard,
// membership, one vote per server), without a validity to check: an
// election's record and reads are not leases. As before every attempt, the
// markers and membership records due are read again first, on each
// master's connection ahead of the round's command; so make it just before
// starting the round.
RoundConfig JudgedRound(const OperationHost& host) {
  host.guard().RefreshMarkers();
  RoundConfig config = host.BaseRound(host.options().default_ttl);
  config.check_validity = false;
  return config;
}

// The round that writes `lease`'s record of `name` at `revision` with
// `value` (ProclaimScript()): granted where the lease holds its token.
RoundConfig RecordRound(const OperationHost& host, absl::string_view name,
                        const Lock& lease, uint64_t revision,
                        const std::string& value) {
  LeaderRecord record;
  record.epoch = lease.fence();
  record.revision = revision;
  record.token = lease.token();
  record.value = value;
  RoundConfig config = JudgedRound(host);
  config.command =
      ProclaimCommand(ElectionLockKey(host.options(), name),
                      ElectionRecordKey(host.options(), name), record);
  config.map_reply = &ScriptVote;
  return config;
}

VoteTally TallyFor(
    const OperationHost& host, int masters,
    const std::shared_ptr<const std::vector<QuorumGroup>>& groups) {
  return groups != nullptr ? VoteTally(masters, groups)
                           : VoteTally(masters, host.quorum());
}

}  // namespace

absl::Status CheckElectionValue(absl::string_view value) {
  if (value.size() > kMaxElectionValueSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("election value is ", value.size(), " bytes; at most ",
                     kMaxElectionValueSize, " allowed"));
  }
  return absl::OkStatus();
}

CampaignOp::CampaignOp(OperationHost* host, std::string name, std::string value,
                       CampaignOptions options,
                       AsyncRedlock::CampaignCallback done)
    : NamedOperation(host, absl::StrCat("campaign \"", name, "\"")),
      name_(std::move(name)),
      value_(std::move(value)),
      options_(std::move(options)),
      done_(std::move(done)) {}

AcquireOptions CampaignOp::LeaseOptions() const {
  AcquireOptions lease;
  lease.ttl = options_.ttl;
  lease.wait = std::min(options_.wait, kLongestWait);
  lease.cancel = options_.cancel;
  // The epoch: larger than every earlier leader's.
  lease.fencing = true;
  return lease;
}

void CampaignOp::OnAcquired(absl::StatusOr<Lock> lock) {
  if (finished_ || cancelled()) return;  // The engine is going away.
  if (!lock.ok()) {
    Fail(lock.status());
    return;
  }
  lease_ = *std::move(lock);
  if (options_.cancel.cancelled()) {
    GiveBack();
    Fail(absl::CancelledError(absl::StrCat(What(), ": cancelled")));
    return;
  }
  StartRound(RecordRound(*host_, name_, *lease_, /*revision=*/1, value_));
}

void CampaignOp::OnRound(RoundResult result) {
  if (finished_) return;
  if (!result.status.ok()) {
    GiveBack();
    Fail(absl::Status(result.status.code(),
                      absl::StrCat(What(),
                                   ": the leader's value was not "
                                   "written to a quorum: ",
                                   result.status.message())));
    return;
  }
  if (options_.cancel.cancelled()) {
    GiveBack();
    Fail(absl::CancelledError(absl::StrCat(What(), ": cancelled")));
    return;
  }
  auto state = std::make_shared<LeadershipState>(name_, *lease_, value_);
  HoldOptions hold;
  hold.extend_every = options_.extend_every;
  hold.safety_margin = options_.safety_margin;
  hold.on_lost = std::move(options_.on_lost);
  absl::StatusOr<std::shared_ptr<KeepAliveOp>> keep =
      host_->KeepAlive(*lease_, options_.ttl, std::move(hold));
  if (!keep.ok()) {
    GiveBack();
    Fail(keep.status());
    return;
  }
  state->keep_alive = *keep;
  finished_ = true;
  Deliver(done_, absl::StatusOr<Leadership>(Leadership(std::move(state))));
}

void CampaignOp::Fail(absl::Status status) {
  if (finished_) return;
  finished_ = true;
  Deliver(done_, absl::StatusOr<Leadership>(std::move(status)));
}

void CampaignOp::OnCancel() {
  // The engine is going away: nothing can be sent; a lease won expires with
  // its TTL, as any lock still held then.
  lease_.reset();
}

void CampaignOp::GiveBack() {
  if (!lease_.has_value() || lease_->released()) return;
  host_->Release(*lease_, ReleaseOptions{},
                 [](absl::StatusOr<ReleaseReport>) {});
}

ProclaimOp::ProclaimOp(OperationHost* host,
                       std::shared_ptr<LeadershipState> state,
                       std::string value, AsyncRedlock::ExtendCallback done)
    : NamedOperation(host, absl::StrCat("proclaim \"", state->name, "\"")),
      state_(std::move(state)),
      value_(std::move(value)),
      done_(std::move(done)) {}

void ProclaimOp::Start() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    revision_ = state_->next_revision++;
  }
  StartRound(
      RecordRound(*host_, state_->name, state_->lock, revision_, value_));
}

void ProclaimOp::OnRound(RoundResult result) {
  if (!result.status.ok()) {
    Fail(absl::Status(
        result.status.code(),
        absl::StrCat(What(), ": ",
                     result.status.code() == absl::StatusCode::kAborted
                         ? "too many masters no longer hold this leader's "
                           "lease: "
                         : "",
                     result.status.message())));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (revision_ > state_->revision) {
      state_->revision = revision_;
      state_->value = value_;
    }
  }
  Deliver(done_, absl::OkStatus());
}

RoundConfig LeaderReadRound(const OperationHost& host, absl::string_view name) {
  RoundConfig config = JudgedRound(host);
  config.command = LeaderReadCommand(ElectionLockKey(host.options(), name),
                                     ElectionRecordKey(host.options(), name));
  config.map_reply = &LeaderReadVote;
  config.keep_replies = true;
  // Won early only once a quorum names one lease; otherwise every master is
  // heard (bounded by request_timeout) before JudgeLeaderRound() decides.
  const int quorum = host.quorum();
  config.ready_to_win =
      [quorum](const std::vector<std::optional<RedisReply>>& replies) {
        absl::flat_hash_map<std::string, int> named;
        for (const std::optional<RedisReply>& reply : replies) {
          if (!reply.has_value()) continue;
          absl::StatusOr<LeaderReading> reading = ParseLeaderReading(*reply);
          if (reading.ok() && reading->kind == LeaderReading::Kind::kLeading &&
              ++named[reading->record.token] >= quorum) {
            return true;
          }
        }
        return false;
      };
  return config;
}

absl::StatusOr<LeaderInfo> JudgeLeaderRound(
    const OperationHost& host, absl::string_view name,
    const std::shared_ptr<const std::vector<QuorumGroup>>& groups,
    const RoundResult& result) {
  const int n = static_cast<int>(result.votes.size());
  // Per lease token: the masters where it leads and whose grant counted.
  std::map<std::string, std::vector<std::pair<int, LeaderRecord>>> leading;
  VoteTally vacant = TallyFor(host, n, groups);
  absl::flat_hash_set<std::string> vacant_servers;
  for (int i = 0; i < n && i < static_cast<int>(result.replies.size()); ++i) {
    if (!result.replies[i].has_value()) continue;
    absl::StatusOr<LeaderReading> reading =
        ParseLeaderReading(*result.replies[i]);
    if (!reading.ok()) continue;
    if (reading->kind == LeaderReading::Kind::kLeading &&
        result.votes[i].kind == MasterVote::Kind::kGranted) {
      leading[reading->record.token].emplace_back(i, reading->record);
    } else if (reading->kind == LeaderReading::Kind::kVacant &&
               host.guard().GrantVeto(i).ok()) {
      // A master that restarted empty says "vacant" of a lease it lost:
      // only one the guard trusts counts, once per server.
      const absl::string_view server = host.guard().FailureDomain(i);
      if (!server.empty() &&
          !vacant_servers.insert(std::string(server)).second) {
        continue;
      }
      vacant.Record(i, Vote::kGranted);
    }
  }
  for (const auto& [token, masters] : leading) {
    VoteTally tally = TallyFor(host, n, groups);
    for (const auto& entry : masters) tally.Record(entry.first, Vote::kGranted);
    if (!tally.QuorumReached()) continue;
    LeaderInfo info;
    info.name = std::string(name);
    for (const auto& [master, record] : masters) {
      if (info.epoch != 0 && record.epoch != info.epoch) {
        return absl::UnavailableError(absl::StrCat(
            "the leader of \"", name,
            "\" is unknown: masters disagree on its lease's epoch (",
            info.epoch, " and ", record.epoch, ")"));
      }
      info.epoch = record.epoch;
      if (record.revision > info.revision) {
        info.revision = record.revision;
        info.value = record.value;
      }
    }
    return info;
  }
  if (vacant.QuorumReached()) {
    return absl::NotFoundError(absl::StrCat("no leader of \"", name,
                                            "\": ", vacant.granted(), " of ", n,
                                            " masters hold no lease"));
  }
  return absl::UnavailableError(
      absl::StrCat("the leader of \"", name,
                   "\" is unknown: no quorum of masters agrees on one (",
                   DescribeVotes(result.votes), ")"));
}

LeaderOp::LeaderOp(OperationHost* host, std::string name,
                   AsyncRedlock::LeaderCallback done)
    : NamedOperation(host, absl::StrCat("leader of \"", name, "\"")),
      name_(std::move(name)),
      done_(std::move(done)) {}

void LeaderOp::Start() {
  RoundConfig config = LeaderReadRound(*host_, name_);
  groups_ = config.groups;
  StartRound(std::move(config));
}

void LeaderOp::OnRound(RoundResult result) {
  Deliver(done_, JudgeLeaderRound(*host_, name_, groups_, result));
}

ObserveOp::ObserveOp(OperationHost* host, std::string name,
                     ObserveOptions options)
    : NamedOperation(host, absl::StrCat("observe \"", name, "\"")),
      name_(std::move(name)),
      options_(std::move(options)) {
  channels_.push_back(ElectionLockKey(host->options(), name_));
}

void ObserveOp::Start() {
  poll_ = host_->runtime()->NewTimer([this] { Read(); });
  if (Wakeups* wakeups = host_->WakeupsForWaiting()) {
    wakeups_ = wakeups;
    wakeups_->Watch(this, channels_);
  }
  std::weak_ptr<Operation> weak = shared_from_this();
  host_->WhenReadyToAttempt([weak] {
    if (auto self = weak.lock()) static_cast<ObserveOp*>(self.get())->Read();
  });
}

void ObserveOp::Read() {
  if (stopped_ || cancelled()) return;
  if (reading_) {
    read_again_ = true;
    return;
  }
  reading_ = true;
  poll_->Cancel();
  RoundConfig config = LeaderReadRound(*host_, name_);
  groups_ = config.groups;
  StartRound(std::move(config));
}

void ObserveOp::OnRound(RoundResult result) {
  reading_ = false;
  if (stopped_ || cancelled()) return;
  absl::StatusOr<LeaderInfo> info =
      JudgeLeaderRound(*host_, name_, groups_, result);
  // Never back: only a view newer than the last told is told.
  if (info.ok() && (info->epoch > epoch_ ||
                    (info->epoch == epoch_ && info->revision > revision_))) {
    epoch_ = info->epoch;
    revision_ = info->revision;
    host_->completions().Post(
        [live = live_, self = shared_from_this(), info = *std::move(info)] {
          if (*live)
            static_cast<ObserveOp*>(self.get())->options_.on_leader(info);
        });
  }
  if (std::exchange(read_again_, false)) {
    Read();
    return;
  }
  poll_->Arm(options_.poll_every);
}

void ObserveOp::Wake(Wakeups::Event event, int master,
                     absl::string_view successor) {
  if (event == Wakeups::Event::kSettled) return;
  Read();
}

void ObserveOp::Quit() {
  stopped_ = true;
  *live_ = false;
  if (poll_ != nullptr) poll_->Cancel();
  if (wakeups_ != nullptr) {
    wakeups_->Unwatch(this, channels_);
    wakeups_ = nullptr;
  }
}

void ObserveOp::Stop() {
  if (stopped_) return;
  Quit();
  StopRound();
  host_->Finish(this, [] {});
}

void ObserveOp::OnCancel() { Quit(); }

}  // namespace redlock::internal
