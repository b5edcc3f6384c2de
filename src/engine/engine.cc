// Copyright 2026 The redlock Authors.

#include "src/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "redlock/keys.h"
#include "src/algorithm/retry.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/semaphore.h"
#include "src/algorithm/token.h"
#include "src/algorithm/validity.h"
#include "src/algorithm/vote.h"
#include "src/config/options_internal.h"
#include "src/engine/acquire_op.h"
#include "src/engine/block_pool.h"
#include "src/engine/extend_op.h"
#include "src/engine/keep_alive_batch.h"
#include "src/engine/keep_alive_op.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"
#include "src/engine/quorum_round.h"
#include "src/engine/release_op.h"
#include "src/transport/libevent_runtime.h"
#include "src/transport/tls.h"

namespace redlock::internal {
namespace {

constexpr size_t kMaxResourceBytes = 4096;
// Resources in one lock: each is a key on every master, set in one script.
constexpr size_t kMaxResources = 64;
// Adopt(): ours are 32; room for other tools' formats.
constexpr size_t kMaxTokenBytes = 256;
// While the deployment is younger than this, a master whose uptime cannot be
// told from the deployment's age is left unjudged (its marker read again)
// rather than judged reborn: a bootstrapping client's "trusted" may still be
// on its way to it.
constexpr absl::Duration kJudgementHorizon = absl::Seconds(3);

std::shared_ptr<LockState> StateOf(const Lock& lock) { return lock.state(); }

// What tells one marker written on a server from another: when and for
// which server process (Engine::MarkerReplaced()).
std::string MarkerStamp(const MasterIdentity& id) {
  return absl::StrCat(id.marker_time_us, ":", id.marker_run_id);
}

// MarkerStamp(id) == stamp, without building it (asked at every grant).
bool IsMarkerStamp(absl::string_view stamp, const MasterIdentity& id) {
  char digits[absl::numbers_internal::kFastToBufferSize];
  const absl::string_view time(digits, absl::numbers_internal::FastIntToBuffer(
                                           id.marker_time_us, digits) -
                                           digits);
  return stamp.size() == time.size() + 1 + id.marker_run_id.size() &&
         absl::StartsWith(stamp, time) && stamp[time.size()] == ':' &&
         stamp.substr(time.size() + 1) == id.marker_run_id;
}

// "3s ago", or "under a second ago": uptime comes in whole seconds.
std::string SecondsAgo(absl::Duration uptime) {
  if (uptime < absl::Seconds(1)) return "under a second ago";
  return absl::StrCat(
      absl::FormatDuration(absl::Trunc(uptime, absl::Seconds(1))), " ago");
}

}  // namespace

void StopKeepAlive(KeepAliveOp& op, bool release) { op.Stop(release); }

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(event_base* base,
                                                       Options options) {
  if (base == nullptr) {
    return absl::InvalidArgumentError("event_base must not be null");
  }
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  // The TLS settings are read once, here, if any master needs them: a CA
  // file that cannot be read fails the client now, not every connection.
  std::shared_ptr<const TlsContext> tls;
  absl::StatusOr<std::vector<MasterAddress>> addresses =
      ParseMasters(options, /*require_numeric_hosts=*/false);
  if (!addresses.ok()) return addresses.status();
  if (std::any_of(addresses->begin(), addresses->end(),
                  [](const MasterAddress& a) {
                    return a.transport == MasterAddress::Transport::kTls;
                  })) {
    absl::StatusOr<std::shared_ptr<TlsContext>> context =
        TlsContext::Create(options.tls);
    if (!context.ok()) return context.status();
    tls = *std::move(context);
  }
  return Create(std::make_unique<LibeventRuntime>(base, std::move(tls)),
                std::move(options));
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    std::unique_ptr<Runtime> runtime, Options options) {
  if (runtime == nullptr) {
    return absl::InvalidArgumentError("runtime must not be null");
  }
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  absl::StatusOr<std::vector<MasterAddress>> addresses =
      ParseMasters(options, /*require_numeric_hosts=*/true);
  if (!addresses.ok()) return addresses.status();
  return std::make_unique<Engine>(std::move(runtime), std::move(options),
                                  *std::move(addresses));
}

Engine::Engine(std::unique_ptr<Runtime> runtime, Options options,
               std::vector<MasterAddress> addresses)
    : runtime_(std::move(runtime)),
      options_(std::move(options)),
      bitgen_(runtime_.get()),
      completions_(runtime_.get()),
      marker_key_(DeploymentMarkerKey(options_)),
      observer_(options_.observer.get()) {
  const int n = static_cast<int>(addresses.size());
  quorum_ = options_.quorum == Quorum::kUnanimous ? n : n / 2 + 1;
  for (MasterAddress& address : addresses) {
    MasterConfig config;
    config.address = std::move(address);
    config.request_timeout = options_.request_timeout;
    config.connect_timeout = options_.connect_timeout;
    config.stalled_timeout = options_.stalled_connection_timeout;
    config.backoff = options_.reconnect;
    config.marker_key = marker_key_;
    masters_.push_back(
        std::make_unique<Master>(runtime_.get(), std::move(config)));
    links_.push_back(masters_.back().get());
  }
  {
    auto* context = new LockContext();
    context->owner = this;
    context->clock = runtime_->LockClock();
    for (const MasterLink* link : links_) {
      context->master_names.push_back(link->name());
    }
    lock_context_ = LockContextRef(context);
  }
  for (const auto& master : masters_) {
    names_.push_back(master->config().address.MemberName());
  }
  duplicate_.assign(masters_.size(), false);
  reported_ready_.assign(masters_.size(), false);
  // Not judged yet, as GrantVeto() says before any handshake.
  reported_verdict_.assign(masters_.size(),
                           absl::FailedPreconditionError("not yet judged"));
  marker_busy_.assign(masters_.size(), false);
  first_marker_.assign(masters_.size(), std::string());
  for (const auto& master : masters_) {
    master->set_on_state_change([this] { OnMasterStateChange(); });
  }
  // A master whose handshake hangs (a stopped server accepts TCP) neither
  // completes nor fails for a while: do not wait for it longer than this.
  rejudge_timer_ = runtime_->NewTimer([this] { RefreshMarkers(); });
  deployment_timer_ = runtime_->NewTimer([this] { MarkReadyToAttempt(); });
  deployment_timer_->Arm(options_.connect_timeout +
                         2 * options_.request_timeout);
  OnMasterStateChange();
  // The blocks a granted lock keeps (block_pool.h): their first slabs are
  // mapped now, while the handshakes are in flight, not as a lock is won.
  ReservePoolFor<LockState>();
  ReservePoolFor<KeepAliveOp>();
}

void Engine::SendToAll(const Command& command) {
  for (MasterLink* master : links_) {
    master->Send(command, [](absl::StatusOr<RedisReply>) {});
  }
}

Wakeups* Engine::WakeupsForWaiting() {
  if (wakeups_ == nullptr && options_.retry.wake_on_release) {
    std::vector<MasterConfig> configs;
    configs.reserve(masters_.size());
    for (const auto& master : masters_) configs.push_back(master->config());
    wakeups_ = std::make_unique<Wakeups>(runtime_.get(), configs);
  }
  return wakeups_.get();
}

void Engine::Rejudge() {
  std::vector<MemberView> views(masters_.size());
  std::vector<std::string> list;
  int unknown = 0;
  for (size_t i = 0; i < masters_.size(); ++i) {
    const MasterIdentity& id = masters_[i]->identity();
    // A server that carries a record is the member it says it is, whatever
    // address this client reaches it by (a proxy, another host name),
    // unless this client named it explicitly (?member=): then the two must
    // agree (JudgeMembership).
    const MasterAddress& address = masters_[i]->config().address;
    names_[i] = id.known && id.has_record && address.member.empty()
                    ? id.member
                    : address.MemberName();
    if (first_marker_[i].empty() && id.known && !id.marker.empty()) {
      first_marker_[i] = MarkerStamp(id);
    }
    MemberView& v = views[i];
    v.known = id.known;
    // One server (same run_id) or one member (same name: a replica carries
    // its master's marker) is one entry of the list.
    bool duplicate = SameServerAs(static_cast<int>(i)) >= 0;
    for (size_t j = 0; j < i && !duplicate; ++j)
      duplicate = names_[j] == names_[i];
    duplicate_[i] = duplicate;
    v.marked = id.known && !id.marker.empty();
    v.has_record = id.known && id.has_record;
    if (id.known) v.record_error = id.record_error;
    v.member = id.member;
    v.record = id.record;
    v.holder_current =
        v.has_record && RecordKept(id.record, id.marker_run_id, id.run_id,
                                   /*durable=*/false);
    // A marker without a record is kept as a record is: in the process it
    // was written to (it has never been given a record since), or durably.
    const bool same_process =
        v.has_record ? v.holder_current
                     : !id.run_id.empty() && id.marker_run_id == id.run_id;
    v.kept = v.marked && (same_process || Durable(id.persistence));
    if (!id.known) {
      ++unknown;
    } else if (!duplicate) {
      list.push_back(names_[i]);
    }
  }
  list_ = Canonical(std::move(list));
  unknown_ = unknown;
  membership_ =
      JudgeMembership(views, names_, list_, options_.quorum, unknown,
                      /*guard_judges_unmarked=*/options_.restart_guard,
                      /*trust_unknown_records=*/trust_unknown_records_);
  // Two servers that say they are one member (a replica listed beside its
  // master, a copied data directory) cast one vote: the later one none.
  for (size_t i = 0; i < masters_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (names_[j] == names_[i] && membership_.standing[i].ok() &&
          SameServerAs(static_cast<int>(i)) != static_cast<int>(j)) {
        membership_.standing[i] = absl::FailedPreconditionError(absl::StrCat(
            "membership: the same member (", names_[i], ") as master ", j + 1,
            " but another server: one member casts one vote"));
        break;
      }
    }
  }
  // Replaced only when they change: a round started under other groups
  // counts no grant (JudgeVotes()), so the pointer says "the same groups".
  max_ttl_agreement_ = ComputeMaxTtlAgreement();
  if (membership_.adopted.has_value() && !ignore_membership_) {
    // A second address of a server already counted (or of a member) is in
    // no group: its vote is that server's again (and, a denial by the key
    // its first address just set, must not count against the group).
    std::vector<std::string> voting = names_;
    for (size_t i = 0; i < voting.size(); ++i) {
      if (duplicate_[i]) voting[i].clear();
    }
    std::vector<QuorumGroup> groups =
        QuorumGroups(*membership_.adopted, voting, options_.quorum);
    // Under a steady record the plain count (quorum_ of this client's n
    // masters, one vote per server, non-members vetoed) is enough whenever
    // it asks at least as much as a quorum of the m members: n >= m for a
    // majority (n/2 + 1 distinct members' grants are a majority of m),
    // n == m for every member. It also gives a second address of one
    // server the slack it always had: that address may take the key first
    // and make the first one's answer a denial. Rounds then need no groups.
    const int m = static_cast<int>(membership_.adopted->members.size());
    const int n = static_cast<int>(masters_.size());
    const bool plain =
        !membership_.adopted->joint() &&
        (options_.quorum == Quorum::kUnanimous ? n == m : n >= m);
    if (plain) {
      groups_.reset();
    } else if (groups_ == nullptr || !SameGroups(*groups_, groups)) {
      groups_ =
          std::make_shared<const std::vector<QuorumGroup>>(std::move(groups));
    }
  } else {
    groups_.reset();
  }
}

std::string Engine::RecordSuffixFor(size_t i) const {
  // One server under two addresses is one member, named as its first
  // address: whichever address's write lands first names it for all.
  const int same = SameServerAs(static_cast<int>(i));
  const std::string& member = names_[same >= 0 ? same : i];
  // The record names the server process it is written to: the one whose
  // handshake this connection read, which is the one the write reaches (a
  // reply comes only after the handshake on the same connection).
  const std::string& holder = masters_[i]->identity().run_id;
  if (membership_.adopted.has_value()) {
    return membership_.needs_record[i]
               ? MarkerSuffix(member, *membership_.adopted, holder)
               : std::string();
  }
  // Refused (two deployments, a record that does not parse): write nothing.
  if (!membership_.standing[i].ok()) return std::string();
  // A new deployment's record names every master: only once all answered.
  if (unknown_ > 0) return std::string();
  // No record anywhere yet: this client's list makes a new deployment's.
  Membership record;
  record.members = list_;
  record.quorum = options_.quorum;
  record.epoch = 1;
  record.deployment = NewDeploymentId(record.members, record.quorum);
  return MarkerSuffix(member, record, holder);
}

absl::Status Engine::MembershipVeto(int master, bool fresh_read) const {
  if (ignore_membership_) return absl::OkStatus();  // Unsafe; see setter.
  if (const absl::Status& standing = membership_.standing[master];
      !standing.ok()) {
    return standing;
  }
  if (fresh_read && membership_.adopted.has_value()) {
    const absl::Duration age = ToDuration(
        runtime_->Now() - masters_[master]->identity().marker_read_at);
    if (age > kMembershipStale) {
      return absl::FailedPreconditionError(absl::StrCat(
          "membership: its record was last read ",
          absl::FormatDuration(absl::Trunc(age, absl::Milliseconds(1))),
          " ago (more than ", absl::FormatDuration(kMembershipStale),
          "); it is read again before each attempt"));
    }
  }
  return absl::OkStatus();
}

bool Engine::QuorumHeld(const std::vector<bool>& counted) const {
  if (groups_ != nullptr) return QuorumOfEvery(*groups_, counted);
  return std::count(counted.begin(), counted.end(), true) >= quorum_;
}

std::string Engine::DescribeQuorum() const {
  if (groups_ == nullptr) {
    return absl::StrCat("quorum ", quorum_, " of ", masters_.size());
  }
  return VoteTally(static_cast<int>(masters_.size()), groups_).DescribeQuorum();
}

void Engine::OnMasterStateChange() {
  Rejudge();
  auto marked = [](const Master& x) {
    return x.identity().known && !x.identity().marker.empty();
  };
  const MonotonicTime now = runtime_->Now();
  bool others_marked = false;
  // The age of the oldest "trusted" marker — about the deployment's age —
  // each measured on its own server's clock. Unknown (-1) if none has a time.
  absl::Duration deployment_age = absl::Seconds(-1);
  for (const auto& x : masters_) {
    if (!marked(*x)) continue;
    others_marked = true;
    const MasterIdentity& id = x->identity();
    if (id.marker == kTrustedMarker && id.marker_time_us > 0 &&
        id.server_time_us > 0) {
      deployment_age =
          std::max(deployment_age,
                   absl::Microseconds(id.server_time_us - id.marker_time_us) +
                       ToDuration(now - id.seen_at));
    }
  }
  // A client whose max_ttl the deployment's markers contradict judges
  // nothing: its markers would carry its max_ttl to masters that lost theirs,
  // and hold back every client that has the deployment's.
  const bool agreed = MaxTtlAgreement().ok();
  if (others_marked && agreed) {
    // A master without the marker the others carry either restarted since
    // the deployment was marked (it lost its data: reborn), or has been up
    // since before and only missed the marking (a client bootstrapping the
    // deployment right now, or it was unreachable then: trusted). Its uptime
    // is compared with the deployment's age, but INFO gives uptime in whole
    // seconds of a clock Redis refreshes ten times a second, so the true
    // uptime is only known to within kUptimeUncertainty either way:
    //   surely longer than the age    trusted;
    //   surely shorter                reborn;
    //   can't tell (a restart within about a second of the marking, or a
    //   bootstrap's write still on its way)
    //                                 not judged yet, while the deployment is
    //                                 younger than kJudgementHorizon: its
    //                                 marker is read again at the next
    //                                 acquisition attempt (RefreshMarkers),
    //                                 and a bootstrap's "trusted" has landed
    //                                 by then; after that, reborn.
    // Without a dated trusted marker to compare with, it is judged reborn.
    // Reborn costs liveness only (max_ttl); trusting a master that restarted
    // empty lets a second owner in (found by tests/sim). Every unmarked
    // master is looked at again each time: one that answered before the
    // others could not be judged then.
    absl::Duration rejudge_in = absl::InfiniteDuration();
    for (const auto& x : masters_) {
      const MasterIdentity& id = x->identity();
      if (!x->ready() || !id.known || !id.marker.empty()) continue;
      const absl::Duration uptime =
          absl::Seconds(id.uptime_s) + ToDuration(now - id.seen_at);
      // Only a member of the deployment is marked, with its record.
      if (!MayWriteMarker(*x)) continue;
      if (deployment_age >= absl::ZeroDuration() &&
          uptime - kUptimeUncertainty >= deployment_age) {
        WriteMarker(*x, kTrustedMarker);
      } else if (deployment_age < absl::ZeroDuration() ||
                 uptime + kUptimeUncertainty < deployment_age ||
                 deployment_age >= kJudgementHorizon) {
        WriteMarker(*x, kRebornMarker);
      } else {
        // Left unjudged for now: judged again (its marker read first) once
        // the deployment is past the horizon, whether or not an attempt
        // comes to ask — a master must not stay unjudged for want of one.
        rejudge_in = std::min(rejudge_in, kJudgementHorizon - deployment_age);
      }
    }
    if (rejudge_in != absl::InfiniteDuration() && !rejudge_timer_->armed()) {
      rejudge_timer_->Arm(rejudge_in + absl::Milliseconds(10));
    }
  }
  // A marked master without a record (one from before records, or a member
  // that lost its record with a partial restart) gets the record appended
  // to its marker: the adopted one, or — once every master answered and none
  // carries one — this client's list's.
  bool any_record = false;
  bool every_known = true;
  for (const auto& x : masters_) {
    any_record |= x->identity().known && x->identity().has_record;
    every_known &= x->identity().known;
  }
  if (agreed && (any_record || every_known)) {
    for (const auto& x : masters_) {
      const MasterIdentity& id = x->identity();
      if (x->ready() && marked(*x) && !id.has_record && id.record_error.ok() &&
          MayWriteMarker(*x)) {
        WriteMarker(*x, id.marker);
      }
    }
  }
  // A member whose record is not kept (it restarted from a snapshot, or an
  // AOF that may have lost writes) gets the adopted record written over it,
  // once the adopted one is known to be current (JudgeMembership()).
  if (agreed && membership_.adopted.has_value()) {
    for (size_t i = 0; i < masters_.size(); ++i) {
      const MasterIdentity& id = masters_[i]->identity();
      if (masters_[i]->ready() && marked(*masters_[i]) && id.has_record &&
          membership_.needs_record[i]) {
        RestampRecord(i);
      }
    }
  }
  bool all_known = true;
  bool any_marked = false;
  for (const auto& x : masters_) {
    all_known &= x->identity().known;
    any_marked |= marked(*x);
  }
  // A client that has seen the deployment marked never takes it for a new
  // one: if its masters all come back unmarked later (restarts within the
  // judgement horizon, one after another), they lost their data.
  if (any_marked) deployment_seen_ = true;
  if (all_known && !any_marked && !deployment_seen_) {
    // Every master answered and none carries the marker: a brand-new
    // deployment — if the answers are of one moment. A master that answered
    // late (it was down, or restarted) may find the others' "absent" stale:
    // another client may have marked them since, and a master that
    // restarted empty after that must not be marked trusted as new. So the
    // markers read more than a request timeout before the newest are read
    // again first.
    MonotonicTime newest = masters_[0]->identity().marker_read_at;
    for (const auto& x : masters_) {
      newest = std::max(newest, x->identity().marker_read_at);
    }
    bool fresh = true;
    for (size_t i = 0; i < masters_.size(); ++i) {
      Master& x = *masters_[i];
      if (x.identity().marker_read_at + ToChrono(options_.request_timeout) >=
          newest) {
        continue;
      }
      fresh = false;
      if (x.ready()) ReadMarker(i);
    }
    if (fresh) {
      deployment_seen_ = true;
      for (const auto& x : masters_) {
        if (MayWriteMarker(*x)) WriteMarker(*x, kTrustedMarker);
      }
    }
  }
  MaybeReadyToAttempt();
  WarnAboutRisks();
  ReportMasterChanges();
}

size_t Engine::IndexOf(const Master& master) const {
  return static_cast<size_t>(
      std::find_if(masters_.begin(), masters_.end(),
                   [&master](const auto& x) { return x.get() == &master; }) -
      masters_.begin());
}

bool Engine::MayWriteMarker(const Master& master) const {
  // Unsafe, test only: markers are written as before records (none where
  // the membership refuses).
  if (ignore_membership_) return true;
  return !RecordSuffixFor(IndexOf(master)).empty();
}

void Engine::WriteMarker(Master& master, absl::string_view value) {
  const size_t i = IndexOf(master);
  if (marker_busy_[i]) return;  // A write or read is on its way.
  marker_busy_[i] = true;
  // The local view follows the reply: another client may have written first
  // (a bootstrap racing a restart check), and then its marker is the one.
  master.Send(MarkerCommand(marker_key_, value, master.identity().run_id,
                            options_.max_ttl, RecordSuffixFor(i)),
              [this, i](absl::StatusOr<RedisReply> reply) {
                marker_busy_[i] = false;
                if (destroying_) return;
                // Whatever is stored now, ours or another client's. On an
                // error (a timeout on a slow link) the master stays unjudged
                // until RefreshMarkers() or the next handshake asks again.
                if (reply.ok() && reply->type == RedisReply::Type::kString) {
                  masters_[i]->set_marker(reply->str, runtime_->Now());
                  Rejudge();
                  ReportMasterChanges();
                }
                // Whatever its outcome, the last write back may be what the
                // first attempt waits for.
                MaybeReadyToAttempt();
              });
}

void Engine::RestampRecord(size_t i) {
  if (marker_busy_[i]) return;  // A write or read is on its way.
  const std::string suffix = RecordSuffixFor(i);
  if (suffix.empty()) return;
  Master& master = *masters_[i];
  const MasterIdentity& id = master.identity();
  marker_busy_[i] = true;
  // Compare-and-set against the record read: a record written since (by
  // `redlock reconfigure`, or another client) is not overwritten.
  master.Send(ReconfigureCommand(marker_key_, RecordText(id.record), suffix,
                                 id.marker, id.run_id, options_.max_ttl),
              [this, i](absl::StatusOr<RedisReply> reply) {
                marker_busy_[i] = false;
                if (destroying_) return;
                // {written, the marker now}: either way, what is stored.
                if (reply.ok() && reply->type == RedisReply::Type::kArray &&
                    reply->elements.size() == 2 &&
                    reply->elements[1].type == RedisReply::Type::kString &&
                    !reply->elements[1].str.empty()) {
                  masters_[i]->set_marker(reply->elements[1].str,
                                          runtime_->Now());
                  Rejudge();
                  ReportMasterChanges();
                }
              });
}

void Engine::RefreshMarkers(bool fencing) {
  bool any_marked = false;
  bool any_record = false;
  for (const auto& x : masters_) {
    any_marked |= x->identity().known && !x->identity().marker.empty();
    any_record |= x->identity().known && (x->identity().has_record ||
                                          !x->identity().record_error.ok());
  }
  const MonotonicTime now = runtime_->Now();
  // A reborn master's grants count again with time alone: tell the
  // observer at each attempt.
  ReportMasterChanges();
  // With no marker anywhere in this client's view and no bootstrap made yet,
  // there is nothing to read: it bootstraps once every master has answered.
  if (!any_marked && !deployment_seen_) return;
  for (size_t i = 0; i < masters_.size(); ++i) {
    Master& master = *masters_[i];
    if (!master.ready() || !master.identity().known || marker_busy_[i]) {
      continue;
    }
    // A marked master is read again only by a fencing attempt, and only if
    // its counters are distrusted for a restart since it was marked: an
    // operator's re-mark ("trusted:0:<run_id>", after raising its counters)
    // is what restores it, and it must not wait for a new connection.
    const bool fence_remark =
        fencing && !master.identity().marker.empty() &&
        GrantVeto(static_cast<int>(i), /*fresh_read=*/false).ok() &&
        !FenceVeto(static_cast<int>(i)).ok();
    // Every record is read again once it is a second old: a change of the
    // deployment's members must reach this client (MembershipVeto()).
    const bool record_stale =
        any_record && !ignore_membership_ &&
        ToDuration(now - master.identity().marker_read_at) > kMembershipRefresh;
    if (!master.identity().marker.empty() && !fence_remark && !record_stale) {
      continue;
    }
    // Read first: another client (or an operator) may have marked it since
    // the handshake, or our own write may have landed after its reply timed
    // out. The read is queued ahead of this attempt's commands, so its
    // answer is in before their votes are counted.
    ReadMarker(i);
  }
}

void Engine::ReadMarker(size_t i) {
  if (marker_busy_[i]) return;  // A write or read is on its way.
  marker_busy_[i] = true;
  Command get;
  get.args = {"GET", marker_key_};
  masters_[i]->Send(get, [this, i](absl::StatusOr<RedisReply> reply) {
    marker_busy_[i] = false;
    if (destroying_ || !reply.ok()) return;
    // Whatever marker is stored now; a read never unmarks a master.
    if (reply->type == RedisReply::Type::kString) {
      // The once-a-second re-read of a record that did not change: nothing
      // to parse or judge again.
      if (masters_[i]->identity().known && !reply->str.empty() &&
          masters_[i]->identity().marker_value == reply->str) {
        masters_[i]->set_marker_read_at(runtime_->Now());
        return;
      }
      masters_[i]->set_marker(reply->str, runtime_->Now());
    } else {
      masters_[i]->set_marker_read_at(runtime_->Now());
    }
    OnMasterStateChange();
  });
}

void Engine::MarkReadyToAttempt() {
  if (ready_to_attempt_) return;
  ready_to_attempt_ = true;
  if (deployment_timer_ != nullptr) deployment_timer_->Cancel();
  for (auto& fn : attempt_waiters_) completions_.Post(std::move(fn));
  attempt_waiters_.clear();
}

void Engine::MaybeReadyToAttempt() {
  if (ready_to_attempt_) return;
  if (JudgedServers() >= quorum_) {
    MarkReadyToAttempt();
    return;
  }
  // Once every master answered or failed. This client's own marker writes
  // (or reads) may still be on their way — a new deployment's bootstrap —
  // and their records decide the membership's verdict; that needs no wait:
  // each went out before the attempt's command on the same connection, so
  // its reply is judged before the grant that follows it.
  const bool settled = std::all_of(
      masters_.begin(), masters_.end(),
      [](const auto& x) { return x->identity().known || x->ever_failed(); });
  if (settled) MarkReadyToAttempt();
}

void Engine::WhenReadyToAttempt(absl::AnyInvocable<void()> fn) {
  if (ready_to_attempt_) {
    fn();
  } else {
    attempt_waiters_.push_back(std::move(fn));
  }
}

int Engine::JudgedServers() const {
  // Starting an attempt early is safe whatever this counts: every grant is
  // judged again when it arrives (GrantVeto), and an unjudged master's
  // counts for nothing. It only spares an attempt that could not win. The
  // guard's verdict is asked even with the guard off: fencing trusts only
  // marked counters, and a new deployment is marked once every master
  // answered.
  // The membership's verdict too: until a quorum of the record's members
  // has answered with it, no master's grant counts (JudgeMembership()).
  std::vector<absl::string_view> servers;
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (!masters_[i]->ready() || !GuardVerdict(static_cast<int>(i)).ok() ||
        !MembershipVeto(static_cast<int>(i), /*fresh_read=*/false).ok()) {
      continue;
    }
    const absl::string_view domain = FailureDomain(static_cast<int>(i));
    if (std::find(servers.begin(), servers.end(), domain) == servers.end()) {
      servers.push_back(domain);
    }
  }
  return static_cast<int>(servers.size());
}

std::vector<MasterHealth> Engine::Health() const {
  std::vector<MasterHealth> out;
  out.reserve(masters_.size());
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    MasterHealth h;
    h.master = m.name();
    h.connected = m.ready();
    switch (m.config().address.transport) {
      case MasterAddress::Transport::kTcp:
        h.transport = "tcp";
        break;
      case MasterAddress::Transport::kTls:
        h.transport = "tls";
        if (m.ready()) h.tls = m.tls_description();
        break;
      case MasterAddress::Transport::kUnix:
        h.transport = "unix";
        break;
    }
    h.last_error = m.last_error();
    if (wakeups_ != nullptr) {
      h.wakeups = wakeups_->subscribers()[i]->last_error();
    }
    if (m.identity().known) h.marker = m.identity().marker;
    // Not the freshness of the record read: an idle client reads it again
    // at its next attempt, and a master is no worse for that.
    h.grants_count = GrantVeto(static_cast<int>(i), /*fresh_read=*/false);
    if (const int same = SameServerAs(static_cast<int>(i)); same >= 0) {
      // Rounds count one grant per server; name the duplicate for people.
      h.grants_count = absl::FailedPreconditionError(absl::StrCat(
          "same server as master ", same + 1, " (", masters_[same]->name(),
          ", run_id ", m.identity().run_id.substr(0, 8),
          "...): one server casts one vote"));
    }
    h.member = names_[i];
    if (m.identity().known && m.identity().has_record) {
      h.membership = RecordText(m.identity().record);
    }
    h.maxmemory_policy = m.identity().maxmemory_policy;
    h.eviction = EvictionRisk(m.identity().maxmemory_policy);
    if (m.identity().known) {
      h.persistence = DescribePersistence(m.identity().persistence);
      h.durability = DurabilityRisk(m.identity().persistence);
    }
    const MasterCounters& c = m.counters();
    h.requests = c.sent;
    h.replies = c.replies;
    h.error_replies = c.error_replies;
    h.timeouts = c.timeouts;
    h.connects = c.connects;
    h.connection_failures = c.connection_failures;
    h.noscript_fallbacks = c.noscript_fallbacks;
    if (wakeups_ != nullptr) {
      const Subscriber& subscriber = *wakeups_->subscribers()[i];
      h.subscriber_requests = subscriber.sent();
      h.subscriber_messages = subscriber.messages();
    }
    out.push_back(std::move(h));
  }
  return out;
}

absl::Status Engine::GrantVeto(int master, bool fresh_read) const {
  // A client that disagrees with the deployment's max_ttl is told so first:
  // it writes no record either (OnMasterStateChange()).
  if (options_.restart_guard) {
    if (absl::Status agreed = MaxTtlAgreement(); !agreed.ok()) return agreed;
  }
  if (absl::Status veto = MembershipVeto(master, fresh_read); !veto.ok()) {
    return veto;
  }
  if (!options_.restart_guard) return absl::OkStatus();
  const MasterIdentity& id = masters_[master]->identity();
  if (legacy_grant_rule_ && (!id.known || id.marker != kRebornMarker)) {
    return absl::OkStatus();  // Unsafe; see set_legacy_grant_rule_for_testing.
  }
  return GuardVerdict(master);
}

absl::Status Engine::GuardVerdict(int master) const {
  const Master& m = *masters_[master];
  const MasterIdentity& id = m.identity();
  // Fail closed: whatever is not known to be trustworthy casts no grant.
  if (!m.ready() || !id.known) {
    return absl::FailedPreconditionError(
        "restart guard: not yet judged (no handshake completed on the "
        "current connection)");
  }
  // The guard's wait is max_ttl: a client with a shorter one would count a
  // reborn master while another client's longer lock may still be on the
  // keys it forgot. The deployment's is the one its markers record, and a
  // client that disagrees with any of them counts no master's grant.
  if (absl::Status agreed = MaxTtlAgreement(); !agreed.ok()) return agreed;
  // Without a run_id a second address of one server cannot be told apart.
  if (id.run_id.empty()) {
    return absl::FailedPreconditionError(
        "restart guard: not yet judged (INFO server gave no run_id)");
  }
  if (id.marker.empty()) {
    bool others_marked = false;
    for (const auto& x : masters_) {
      others_marked |= x->identity().known && !x->identity().marker.empty();
    }
    if (others_marked) {
      return absl::FailedPreconditionError(
          "restart guard: not yet judged (its deployment marker is being "
          "written or read)");
    }
    return absl::FailedPreconditionError(
        deployment_seen_
            ? "restart guard: not yet judged (no master carries the "
              "deployment marker any more: if every master lost its data, "
              "mark them by hand once every lock has expired, see "
              "docs/failure-behaviour.md)"
            : "restart guard: not yet judged (no marker, and no marked master "
              "reachable to compare its uptime with; a new deployment is "
              "trusted only once every master answered unmarked)");
  }
  if (id.marker != kTrustedMarker && id.marker != kRebornMarker) {
    return absl::FailedPreconditionError(absl::StrCat(
        "restart guard: unknown deployment marker \"", id.marker, "\""));
  }
  const absl::Duration uptime =
      absl::Seconds(id.uptime_s) + ToDuration(runtime_->Now() - id.seen_at);
  if (id.marker == kTrustedMarker) {
    if (trust_marked_restarts_) {
      return absl::OkStatus();  // Unsafe; see the setter.
    }
    if (MarkerReplaced(master)) {
      // It lost the marker this client read (and what it stored then)
      // before the new one was written: the spec's delayed restart, timed
      // from the new marker, on the server's clock. Unknown age: refused.
      const absl::Duration age =
          id.server_time_us > 0
              ? absl::Microseconds(id.server_time_us - id.marker_time_us) +
                    ToDuration(runtime_->Now() - id.seen_at)
              : absl::ZeroDuration();
      if (age >= options_.max_ttl) return absl::OkStatus();
      return absl::FailedPreconditionError(absl::StrCat(
          "restart guard: this master's deployment marker was written "
          "again since this client first read it (it lost its data, and a "
          "client marked it anew); its grants count again in ",
          absl::FormatDuration(
              absl::Ceil(options_.max_ttl - age, absl::Seconds(1)))));
    }
    // It kept its marker, but if it restarted since the marker was written
    // it may have come back with part of its data (an RDB snapshot, an AOF
    // whose last second was not fsynced): the spec's delayed restart.
    const Restarted restarted = RestartedSinceMarked(id);
    if (restarted == Restarted::kNo || Durable(id.persistence) ||
        uptime >= options_.max_ttl) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "restart guard: ",
        restarted == Restarted::kYes
            ? absl::StrCat("this master restarted ", SecondsAgo(uptime),
                           ", after it was marked, ")
            : absl::StrCat(
                  "cannot tell whether this master restarted since it was "
                  "marked (",
                  id.marker_time_us == 0
                      ? "its marker carries neither a date nor a run_id"
                      : "its uptime is too close to its marker's age",
                  "), "),
        "and its persistence (", DescribePersistence(id.persistence),
        ") may have lost the newest grants; its grants count again in ",
        absl::FormatDuration(
            absl::Ceil(options_.max_ttl - uptime, absl::Seconds(1)))));
  }
  if (uptime >= options_.max_ttl) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "restart guard: this master lost its data when it restarted ",
      SecondsAgo(uptime), "; its grants count again in ",
      absl::FormatDuration(
          absl::Ceil(options_.max_ttl - uptime, absl::Seconds(1)))));
}

absl::Status Engine::ComputeMaxTtlAgreement() const {
  const int64_t ours = absl::ToInt64Milliseconds(options_.max_ttl);
  for (const auto& x : masters_) {
    const MasterIdentity& id = x->identity();
    if (!id.known || id.marker_max_ttl_ms == 0 ||
        id.marker_max_ttl_ms == ours) {
      continue;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "restart guard: this client's max_ttl is ",
        absl::FormatDuration(options_.max_ttl), ", the deployment's is ",
        absl::FormatDuration(absl::Milliseconds(id.marker_max_ttl_ms)),
        " (recorded in the marker on ", x->name(),
        "): every client of a deployment must use the same max_ttl"));
  }
  return absl::OkStatus();
}

absl::Status Engine::FenceVeto(int master) const {
  if (absl::Status veto = GrantVeto(master); !veto.ok()) return veto;
  const MasterIdentity& id = masters_[master]->identity();
  if (trust_marked_restarts_) return absl::OkStatus();  // Unsafe; see setter.
  // Whatever its persistence: its counters went with the marker this client
  // read, and the one it carries now was written by a client that could not
  // know how high tokens went. Only an operator's re-mark restores it.
  if (MarkerReplaced(master)) {
    return absl::FailedPreconditionError(
        "its deployment marker was written again since this client first "
        "read it (it lost its data, and a client marked it anew): its "
        "fencing counters may be older than tokens already issued");
  }
  if (Durable(id.persistence)) return absl::OkStatus();
  // Fail closed: without a judged marker nothing says whether its counters
  // came through a restart (the guard refuses such a master already; this
  // holds with the guard off too).
  if (!id.known || id.marker.empty()) {
    return absl::FailedPreconditionError(
        "not yet judged: no marker read on the current connection");
  }
  // Judged reborn (it came back without its marker), but not necessarily
  // empty: an RDB snapshot or an AOF that lost its tail may have dropped the
  // marker and kept older counters. Only a master that restarts empty holds
  // no counter but those written back since.
  if (id.marker == kRebornMarker && !EmptyAfterRestart(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("reborn, with ", WhyNotEmptyAfterRestart(id),
                     ": a counter it kept may be older than tokens already "
                     "issued"));
  }
  if (RestartedSinceMarked(id) == Restarted::kNo) return absl::OkStatus();
  // Its counters may be older than tokens already issued, and time does
  // not change that: only an operator can (docs/lifetime-and-fencing.md).
  return absl::FailedPreconditionError(absl::StrCat(
      "restarted since it was marked, with persistence ",
      DescribePersistence(id.persistence),
      ": its fencing counters may be older than tokens already issued"));
}

bool Engine::MarkerReplaced(int master) const {
  const MasterIdentity& id = masters_[master]->identity();
  return id.known && id.marker == kTrustedMarker && id.marker_time_us != 0 &&
         !first_marker_[master].empty() &&
         !IsMarkerStamp(first_marker_[master], id);
}

absl::string_view Engine::FailureDomain(int master) const {
  const MasterIdentity& id = masters_[master]->identity();
  return id.known ? absl::string_view(id.run_id) : absl::string_view();
}

void Engine::ReportMasterChanges() {
  if (observer_ == nullptr) return;
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    MasterEvent event;
    event.master = m.name();
    event.index = static_cast<int>(i);
    if (m.ready() != reported_ready_[i]) {
      reported_ready_[i] = m.ready();
      event.kind = m.ready() ? MasterEvent::Kind::kConnected
                             : MasterEvent::Kind::kDisconnected;
      event.status = m.ready() ? absl::OkStatus() : m.last_error();
      observer_->OnMaster(event);
    }
    absl::Status verdict = GrantVeto(static_cast<int>(i), /*fresh_read=*/false);
    // Only a change of "counts or not" is reported, not of the reason's
    // wording (the time left in a reborn master's message changes by itself).
    if (verdict.ok() != reported_verdict_[i].ok()) {
      reported_verdict_[i] = verdict;
      event.kind = MasterEvent::Kind::kJudged;
      event.status = std::move(verdict);
      observer_->OnMaster(event);
    }
  }
}

int Engine::SameServerAs(int master) const {
  const absl::string_view domain = FailureDomain(master);
  for (int j = 0; j < master && !domain.empty(); ++j) {
    if (FailureDomain(j) == domain) return j;
  }
  return -1;
}

void Engine::WarnAboutRisks() {
  // Called on every master state change: nothing to do once every kind of
  // risk had its line.
  if (std::all_of(risks_warned_.begin(), risks_warned_.end(),
                  [](bool warned) { return warned; })) {
    return;
  }
  // Once every master answered or failed, so that the line counts them all.
  for (const auto& x : masters_) {
    if (!x->identity().known && !x->ever_failed()) return;
  }
  // Each kind of risk: what master `i` risks (OK: nothing), and what the
  // line adds.
  struct Kind {
    std::function<absl::Status(const Master&)> risk;
    absl::string_view more;
  };
  const Kind kinds[] = {
      {[](const Master& m) {
         return m.identity().known
                    ? EvictionRisk(m.identity().maxmemory_policy)
                    : absl::OkStatus();
       },
       ""},
      {[this](const Master& m) {
         return m.identity().known && options_.restart_guard &&
                        !options_.accept_non_durable_masters
                    ? DurabilityRisk(m.identity().persistence)
                    : absl::OkStatus();
       },
       "; or accept that cost (Options::accept_non_durable_masters, "
       "--accept-non-durable, REDLOCK_ACCEPT_NON_DURABLE=1)"},
      {[this](const Master& m) {
         return m.config().address.transport == MasterAddress::Transport::kTls &&
                        options_.tls.insecure
                    ? absl::FailedPreconditionError(
                          "TLS certificate verification is off "
                          "(tls.insecure, --insecure): anyone on the path can "
                          "read and change these connections, AUTH password "
                          "included")
                    : absl::OkStatus();
       },
       ""}};
  static_assert(std::size(kinds) == std::tuple_size<decltype(risks_warned_)>());
  // On stderr, one line per kind for the whole process, however many
  // clients it makes.
  static std::atomic<uint32_t> printed{0};
  for (size_t k = 0; k < std::size(kinds); ++k) {
    if (risks_warned_[k]) continue;
    std::vector<std::string> names;
    std::string first;
    bool alike = true;
    for (const auto& x : masters_) {
      const absl::Status risk = kinds[k].risk(*x);
      if (risk.ok()) continue;
      names.push_back(x->name());
      if (first.empty()) {
        first = std::string(risk.message());
      } else if (risk.message() != first) {
        alike = false;
      }
    }
    if (names.empty()) continue;
    risks_warned_[k] = true;
    constexpr size_t kNamed = 3;
    std::string named = absl::StrJoin(
        names.begin(), names.begin() + std::min(names.size(), kNamed), ", ");
    if (names.size() > kNamed) {
      absl::StrAppend(&named, " and ", names.size() - kNamed, " more");
    }
    const std::string text = absl::StrCat(
        "redlock: warning: ", names.size(), " of ", masters_.size(),
        " masters (", named, "): ", first,
        alike ? "" : " (not all alike: `redlock status` shows each)",
        kinds[k].more);
    if (options_.on_warning) {
      options_.on_warning(text);
    } else if ((printed.fetch_or(1u << k) & (1u << k)) == 0) {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  }
}

Engine::~Engine() {
  destroying_ = true;
  // Cancel first, so that no round sends to a master being destroyed.
  auto operations = std::move(operations_);
  operations_.clear();
  for (const std::shared_ptr<Operation>& op : operations) op->Cancel();
  attempt_waiters_.clear();
  // Before the masters: its batches in flight decide nothing more.
  keep_alive_batcher_.reset();
  deployment_timer_.reset();
  rejudge_timer_.reset();
  wakeups_.reset();
  links_.clear();
  masters_.clear();
  completions_.RunAll();
}

RoundConfig Engine::BaseRound(absl::Duration ttl) const {
  RoundConfig config;
  config.quorum = quorum_;
  config.check_validity = true;
  // Validity is computed from the TTL the masters were given.
  config.ttl = SentTtl(ttl);
  config.drift_factor = options_.drift_factor;
  config.min_validity = options_.min_validity;
  JudgeVotes(config);
  return config;
}

KeepAliveBatcher& Engine::KeepAliveBatches() {
  if (keep_alive_batcher_ == nullptr) {
    keep_alive_batcher_ = std::make_unique<KeepAliveBatcher>(this);
  }
  return *keep_alive_batcher_;
}

int64_t Engine::keep_alive_batch_requests_for_testing() const {
  return keep_alive_batcher_ == nullptr ? 0 : keep_alive_batcher_->requests();
}

void Engine::Finish(Operation* op, absl::AnyInvocable<void()> deliver) {
  completions_.Post(std::move(deliver));
  auto it = operations_.find(op);
  if (it != operations_.end()) operations_.erase(it);
}

absl::Status Engine::CheckTtl(absl::Duration ttl) const {
  if (ttl <= options_.request_timeout) {
    return absl::InvalidArgumentError(
        absl::StrCat("ttl ", absl::FormatDuration(ttl),
                     " must be longer than request_timeout (",
                     absl::FormatDuration(options_.request_timeout), ")"));
  }
  if (ttl > options_.max_ttl) {
    return absl::InvalidArgumentError(
        absl::StrCat("ttl ", absl::FormatDuration(ttl), " exceeds max_ttl (",
                     absl::FormatDuration(options_.max_ttl), ")"));
  }
  const absl::Duration sent = SentTtl(ttl);
  if (sent - Drift(sent, options_.drift_factor) <= options_.min_validity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ttl ", absl::FormatDuration(ttl), " less the clock drift allowance (",
        absl::FormatDuration(Drift(sent, options_.drift_factor)),
        ") leaves no validity above min_validity (",
        absl::FormatDuration(options_.min_validity), ")"));
  }
  return absl::OkStatus();
}

absl::Status Engine::CheckLock(const Lock& lock) const {
  return CheckLockState(lock.state().get());
}

absl::Status Engine::CheckLockState(const LockState* state) const {
  if (state == nullptr) {
    return absl::InvalidArgumentError("the lock is empty (never acquired)");
  }
  if (state->owner() != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("the lock on \"", state->resource(),
                     "\" was acquired through another client"));
  }
  std::lock_guard<std::mutex> guard(state->mu());
  if (state->released) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the lock on \"", state->resource(), "\" was already released"));
  }
  return absl::OkStatus();
}

absl::Status Engine::CheckResource(absl::string_view resource) const {
  if (resource.empty()) {
    return absl::InvalidArgumentError("resource name must not be empty");
  }
  if (absl::StartsWith(resource, kReservedResourcePrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("resource name \"", resource, "\" starts with \"",
                     kReservedResourcePrefix,
                     "\", which is reserved for the library's own keys"));
  }
  if (resource.size() > kMaxResourceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("resource name is ", resource.size(), " bytes; at most ",
                     kMaxResourceBytes, " allowed"));
  }
  return absl::OkStatus();
}

absl::Status Engine::Acquire(absl::string_view resource,
                             const AcquireOptions& options,
                             AsyncRedlock::AcquireCallback done) {
  std::vector<std::string> one;
  one.emplace_back(resource);
  return AcquireOwned(std::move(one), options, std::move(done));
}

absl::Status Engine::Acquire(absl::Span<const std::string> resources,
                             const AcquireOptions& options,
                             AsyncRedlock::AcquireCallback done) {
  return AcquireOwned(
      std::vector<std::string>(resources.begin(), resources.end()), options,
      std::move(done));
}

absl::Status Engine::AcquireOwned(std::vector<std::string> resources,
                                  const AcquireOptions& options,
                                  AsyncRedlock::AcquireCallback done) {
  const absl::Duration ttl = options.ttl;
  const absl::Duration wait = options.wait;
  if (resources.empty()) {
    return absl::InvalidArgumentError("no resource to acquire");
  }
  if (resources.size() > kMaxResources) {
    return absl::InvalidArgumentError(
        absl::StrCat(resources.size(), " resources in one lock; at most ",
                     kMaxResources, " allowed"));
  }
  for (const std::string& resource : resources) {
    if (absl::Status status = CheckResource(resource); !status.ok()) {
      return status;
    }
  }
  // One order for everyone (it names the lock; the scripts need none: each
  // master takes the whole set at once).
  std::sort(resources.begin(), resources.end());
  resources.erase(std::unique(resources.begin(), resources.end()),
                  resources.end());
  if (options.shared && resources.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a reader (AcquireOptions.shared) takes one resource, not ",
        resources.size()));
  }
  if (options.shared && options.fencing) {
    return absl::InvalidArgumentError(
        "fencing for readers is not offered (AcquireOptions.shared with "
        "AcquireOptions.fencing); writers keep theirs");
  }
  if (absl::Status status = CheckTtl(ttl); !status.ok()) return status;
  if (wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wait ", absl::FormatDuration(wait), " must not be negative"));
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<AcquireOp>(this, std::move(resources), options,
                                        std::move(done));
  operations_.insert(op);
  // The restart guard judges masters by the deployment marker: the first
  // acquisitions wait until a quorum of them is judged, or every master has
  // been heard from (bounded by connect_timeout + 2 * request_timeout).
  op->WatchCancellation(options.cancel);
  std::weak_ptr<AcquireOp> weak = op;
  WhenReadyToAttempt([weak] {
    if (auto self = weak.lock()) self->StartAttempt();
  });
  return absl::OkStatus();
}

absl::Status Engine::AcquirePermits(absl::string_view name,
                                    const SemaphoreOptions& sem,
                                    const AcquireOptions& options,
                                    AsyncRedlock::AcquireCallback done) {
  if (absl::Status status = CheckResource(name); !status.ok()) {
    return status;
  }
  if (sem.limit < 1 || sem.limit > kMaxSemaphoreLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("SemaphoreOptions.limit is ", sem.limit,
                     "; must be in [1, ", kMaxSemaphoreLimit, "]"));
  }
  if (sem.permits < 1 || sem.permits > sem.limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("SemaphoreOptions.permits is ", sem.permits,
                     "; must be in [1, limit] (limit ", sem.limit, ")"));
  }
  if (options.fencing) {
    return absl::InvalidArgumentError(
        "AcquireOptions.fencing: a semaphore has no fencing token (its holders "
        "are not one after another; see docs/design.md)");
  }
  if (options.shared) {
    return absl::InvalidArgumentError(
        "AcquireOptions.shared: a semaphore's permits are not shared (a reader "
        "is AcquireAsync with shared)");
  }
  if (absl::Status status = CheckTtl(options.ttl); !status.ok()) {
    return status;
  }
  if (options.wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wait ", absl::FormatDuration(options.wait), " must not be negative"));
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  SemaphoreSpec spec;
  spec.name = std::string(name);
  spec.limit = sem.limit;
  spec.permits = sem.permits;
  spec.limit_key = SemaphoreLimitKey(options_, name);
  spec.slot_keys.reserve(sem.limit);
  for (int s = 0; s < sem.limit; ++s) {
    spec.slot_keys.push_back(SemaphoreSlotKey(options_, name, s));
  }
  std::vector<std::string> resources;
  resources.push_back(spec.name);
  auto op = std::make_shared<AcquireOp>(this, std::move(resources), options,
                                        std::move(done), std::move(spec));
  operations_.insert(op);
  op->WatchCancellation(options.cancel);
  std::weak_ptr<AcquireOp> weak = op;
  WhenReadyToAttempt([weak] {
    if (auto self = weak.lock()) self->StartAttempt();
  });
  return absl::OkStatus();
}

namespace {

// AdoptOptions that describe a writer, a reader or a permit set; else
// kInvalidArgument naming the field.
absl::Status CheckAdoptOptions(const AdoptOptions& options) {
  if (options.shared && (options.limit != 0 || !options.slots.empty())) {
    return absl::InvalidArgumentError(
        "AdoptOptions.shared with AdoptOptions.limit: a token is a reader or "
        "a permit set, not both");
  }
  if (options.fence != 0 && (options.shared || options.limit != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AdoptOptions.fence is ", options.fence, "; ",
        options.shared ? "readers" : "permit sets", " have no fencing token"));
  }
  if (options.limit == 0 && options.slots.empty()) return absl::OkStatus();
  if (options.limit < 1 || options.limit > kMaxSemaphoreLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AdoptOptions.limit is ", options.limit, "; must be in [1, ",
        kMaxSemaphoreLimit, "] with AdoptOptions.slots"));
  }
  if (options.slots.empty()) {
    return absl::InvalidArgumentError(
        "AdoptOptions.slots is empty; a permit set holds at least one slot");
  }
  std::vector<bool> seen(options.limit, false);
  for (int slot : options.slots) {
    if (slot < 0 || slot >= options.limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AdoptOptions.slots has ", slot, "; must be in [0, ", options.limit,
          ") for AdoptOptions.limit ", options.limit));
    }
    if (seen[slot]) {
      return absl::InvalidArgumentError(
          absl::StrCat("AdoptOptions.slots has ", slot, " twice"));
    }
    seen[slot] = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Lock> Engine::Adopt(absl::string_view resource,
                                   absl::string_view token,
                                   const AdoptOptions& options) {
  if (absl::Status status = CheckResource(resource); !status.ok()) {
    return status;
  }
  if (token.empty()) return absl::InvalidArgumentError("token is empty");
  if (token == kSharedLockValue) {
    // Releasing or extending it as a token would delete or shorten the key
    // that readers share.
    return absl::InvalidArgumentError(
        absl::StrCat("token \"", kSharedLockValue,
                     "\" is what a lock key holds while readers share it, "
                     "never a token"));
  }
  if (token.size() > kMaxTokenBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token is ", token.size(), " bytes; at most ", kMaxTokenBytes,
        " allowed (this library's tokens are 32 hex digits)"));
  }
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "token has a byte that is not printable ASCII (or is a space) at "
          "offset ",
          i, "; this library's tokens are 32 hex digits"));
    }
  }
  if (absl::Status status = CheckAdoptOptions(options); !status.ok()) {
    return status;
  }
  auto state = MakeLockState();
  state->context = lock_context_;
  std::vector<std::string> keys = {LockKey(options_, resource)};
  state->SetToken(token);
  state->acquired_at = runtime_->Now();
  state->fence = options.fence;
  state->adopted = true;
  if (options.shared) {
    // As AcquireOp makes a reader: the shared lock key stays `key`.
    LockState::Extra& extra = state->MutableExtra();
    extra.shared = true;
    extra.reader_key = SharedHolderKey(options_, resource, token);
    extra.readers_key = SharedHoldersKey(options_, resource);
  } else if (options.limit > 0) {
    // As AcquireOp makes a permit set: slots ascending, keys in that order.
    LockState::Extra& extra = state->MutableExtra();
    extra.slots = options.slots;
    std::sort(extra.slots.begin(), extra.slots.end());
    keys.clear();
    for (int slot : extra.slots) {
      keys.push_back(SemaphoreSlotKey(options_, resource, slot));
    }
    extra.limit_key = SemaphoreLimitKey(options_, resource);
    extra.limit = options.limit;
  }
  state->SetNames({std::string(resource)}, std::move(keys));
  {
    std::lock_guard<std::mutex> lock(state->mu());
    // Unknown until an extension succeeds: nothing is promised.
    state->valid_until = state->acquired_at;
  }
  return Lock(std::move(state));
}

absl::StatusOr<std::shared_ptr<KeepAliveOp>> Engine::KeepAlive(
    const Lock& lock, absl::Duration ttl, HoldOptions options) {
  if (absl::Status status = CheckLock(lock); !status.ok()) return status;
  if (absl::Status status = CheckTtl(ttl); !status.ok()) return status;
  if (lock.lost()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the lock on \"", lock.resource(),
                     "\" is already lost: ", lock.lost_reason().message()));
  }
  absl::Duration every = options.extend_every;
  if (every == absl::ZeroDuration()) every = ttl / 3;
  absl::Duration margin = options.safety_margin;
  if (margin == absl::ZeroDuration()) {
    margin = std::max(ttl / 10, 2 * options_.request_timeout);
  }
  if (every <= absl::ZeroDuration() || margin < absl::ZeroDuration() ||
      every >= ttl - margin || options.max_hold <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keep-alive: extend_every (", absl::FormatDuration(every),
        ") must be positive and shorter than ttl - safety_margin (",
        absl::FormatDuration(ttl), " - ", absl::FormatDuration(margin),
        "), and max_hold positive"));
  }
  const KeepAliveDurations::Ns wanted =
      KeepAliveOp::DurationsNs(ttl, every, margin, options.max_hold);
  if (last_keep_alive_durations_.get() == nullptr ||
      !(last_keep_alive_durations_->ns == wanted)) {
    last_keep_alive_durations_ =
        CountedRef<KeepAliveDurations>(new KeepAliveDurations(wanted));
  }
  // Lives as long as the lock is held: from the pool (block_pool.h).
  auto op = std::allocate_shared<KeepAliveOp>(
      PoolAllocator<KeepAliveOp>(), this, lock.state(),
      last_keep_alive_durations_, std::move(options.on_lost));
  operations_.insert(op);
  op->Start();
  return op;
}

absl::Status Engine::Extend(const Lock& lock, absl::Duration ttl,
                            AsyncRedlock::ExtendCallback done,
                            bool keep_alive) {
  if (absl::Status status = CheckLock(lock); !status.ok()) return status;
  if (absl::Status status = CheckTtl(ttl); !status.ok()) return status;
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<ExtendOp>(this, StateOf(lock), ttl,
                                       std::move(done), keep_alive);
  operations_.insert(op);
  // Its grants are judged like an acquisition's: on a new client (an adopted
  // lock extended by a new process), not before a quorum can be judged.
  std::weak_ptr<ExtendOp> weak = op;
  WhenReadyToAttempt([weak] {
    if (auto self = weak.lock()) self->Start();
  });
  return absl::OkStatus();
}

absl::Status Engine::Release(const Lock& lock, const ReleaseOptions& options,
                             AsyncRedlock::ReleaseCallback done) {
  if (absl::Status status = CheckLock(lock); !status.ok()) return status;
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<ReleaseOp>(this, StateOf(lock), options,
                                        std::move(done));
  operations_.insert(op);
  op->Start();
  return absl::OkStatus();
}

}  // namespace redlock::internal
