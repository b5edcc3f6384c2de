// Copyright 2026 The redlock Authors.

#include "src/engine/restart_guard.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "redlock/keys.h"
#include "src/algorithm/persistence.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {
namespace {

// While the deployment is younger than this, a master whose uptime cannot be
// told from the deployment's age is left unjudged (its marker read again)
// rather than judged reborn: a bootstrapping client's "trusted" may still be
// on its way to it.
constexpr absl::Duration kJudgementHorizon = absl::Seconds(3);

// What tells one marker written on a server from another: when and for
// which server process (RestartGuard::MarkerReplaced()).
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

RestartGuard::RestartGuard(Runtime* runtime, const Options& options,
                           const std::vector<std::unique_ptr<Master>>& masters,
                           int quorum, absl::AnyInvocable<void()> on_change,
                           const RuleOverrides* overrides)
    : runtime_(runtime),
      options_(options),
      masters_(masters),
      on_change_(std::move(on_change)),
      marker_key_(DeploymentMarkerKey(options)),
      membership_(options, masters, quorum, overrides),
      overrides_(overrides) {
  marker_busy_.assign(masters_.size(), false);
  first_marker_.assign(masters_.size(), std::string());
  rejudge_timer_ = runtime_->NewTimer([this] { RefreshMarkers(); });
  bootstrap_retry_timer_ = runtime_->NewTimer([this] {
    if (shut_down_ || deployment_seen_) return;
    Judge();
    on_change_();
  });
  max_ttl_agreement_ = ComputeMaxTtlAgreement();
}

RestartGuard::~RestartGuard() { shut_down_ = true; }

void RestartGuard::Rejudge() {
  for (size_t i = 0; i < masters_.size(); ++i) {
    const MasterIdentity& id = masters_[i]->identity();
    if (first_marker_[i].empty() && id.known && !id.marker.empty()) {
      first_marker_[i] = MarkerStamp(id);
    }
  }
  membership_.Update();
  max_ttl_agreement_ = ComputeMaxTtlAgreement();
}

absl::Status RestartGuard::MembershipVeto(int master, bool fresh_read) const {
  return membership_.Veto(master, fresh_read, *runtime_);
}

void RestartGuard::JudgeVotes(RoundConfig& config) const {
  config.grant_veto = [this](int master) { return GrantVeto(master); };
  config.failure_domain = DomainFn();
  config.groups = membership_.groups();
  config.current_groups = [this] { return membership_.groups(); };
}

absl::Status RestartGuard::ComputeMaxTtlAgreement() const {
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

void RestartGuard::Judge() {
  Rejudge();
  // A client whose max_ttl the deployment's markers contradict judges
  // nothing: its markers would carry its max_ttl to masters that lost theirs,
  // and hold back every client that has the deployment's.
  const bool agreed = MaxTtlAgreement().ok();
  if (agreed) JudgeUnmarked();
  if (agreed) WriteRecords();
  MaybeBootstrap();
}

absl::Duration RestartGuard::DeploymentAge(MonotonicTime now,
                                           bool* any_marked) const {
  *any_marked = false;
  absl::Duration age = absl::Seconds(-1);
  for (const auto& x : masters_) {
    if (!Marked(*x)) continue;
    *any_marked = true;
    const MasterIdentity& id = x->identity();
    if (id.marker == kTrustedMarker && id.marker_time_us > 0 &&
        id.server_time_us > 0) {
      age = std::max(age,
                     absl::Microseconds(id.server_time_us - id.marker_time_us) +
                         ToDuration(now - id.seen_at));
    }
  }
  return age;
}

void RestartGuard::JudgeUnmarked() {
  const MonotonicTime now = runtime_->Now();
  bool others_marked = false;
  const absl::Duration deployment_age = DeploymentAge(now, &others_marked);
  if (!others_marked) return;
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

void RestartGuard::WriteRecords() {
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
  if (any_record || every_known) {
    for (const auto& x : masters_) {
      const MasterIdentity& id = x->identity();
      if (x->ready() && Marked(*x) && !id.has_record && id.record_error.ok() &&
          MayWriteMarker(*x)) {
        WriteMarker(*x, id.marker);
      }
    }
  }
  // A member whose record is not kept (it restarted from a snapshot, or an
  // AOF that may have lost writes) gets the adopted record written over it,
  // once the adopted one is known to be current (JudgeMembership()).
  if (membership_.adopted().has_value()) {
    for (size_t i = 0; i < masters_.size(); ++i) {
      const MasterIdentity& id = masters_[i]->identity();
      if (masters_[i]->ready() && Marked(*masters_[i]) && id.has_record &&
          membership_.needs_record(i)) {
        RestampRecord(i);
      }
    }
  }
}

void RestartGuard::MaybeBootstrap() {
  bool all_known = true;
  bool any_marked = false;
  for (const auto& x : masters_) {
    all_known &= x->identity().known;
    any_marked |= Marked(*x);
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
}

size_t RestartGuard::IndexOf(const Master& master) const {
  return static_cast<size_t>(
      std::find_if(masters_.begin(), masters_.end(),
                   [&master](const auto& x) { return x.get() == &master; }) -
      masters_.begin());
}

bool RestartGuard::MayWriteMarker(const Master& master) const {
  // Unsafe, test only: markers are written as before records (none where
  // the membership refuses).
  if (membership_.ignored()) return true;
  return !membership_.RecordSuffixFor(IndexOf(master)).empty();
}

void RestartGuard::WriteMarker(Master& master, absl::string_view value) {
  const size_t i = IndexOf(master);
  if (marker_busy_[i]) return;  // A write or read is on its way.
  marker_busy_[i] = true;
  // The local view follows the reply: another client may have written first
  // (a bootstrap racing a restart check), and then its marker is the one.
  master.Send(MarkerCommand(marker_key_, value, master.identity().run_id,
                            options_.max_ttl, membership_.RecordSuffixFor(i)),
              [this, i](absl::StatusOr<RedisReply> reply) {
                marker_busy_[i] = false;
                if (shut_down_) return;
                // Whatever is stored now, ours or another client's. On an
                // error (a timeout on a slow link) the master stays unjudged
                // until RefreshMarkers() or the next handshake asks again.
                if (reply.ok() && reply->type == RedisReply::Type::kString) {
                  masters_[i]->set_marker(reply->str, runtime_->Now());
                  Rejudge();
                }
                // Whatever its outcome, the last write back may be what the
                // first attempt waits for.
                on_change_();
              });
}

void RestartGuard::RestampRecord(size_t i) {
  if (marker_busy_[i]) return;  // A write or read is on its way.
  const std::string suffix = membership_.RecordSuffixFor(i);
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
                if (shut_down_) return;
                // {written, the marker now}: either way, what is stored.
                if (reply.ok() && reply->type == RedisReply::Type::kArray &&
                    reply->elements.size() == 2 &&
                    reply->elements[1].type == RedisReply::Type::kString &&
                    !reply->elements[1].str.empty()) {
                  masters_[i]->set_marker(reply->elements[1].str,
                                          runtime_->Now());
                  Rejudge();
                  on_change_();
                }
              });
}

void RestartGuard::RefreshMarkers(bool fencing) {
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
  on_change_();
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
        any_record && !membership_.ignored() &&
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

void RestartGuard::ReadMarker(size_t i) {
  if (marker_busy_[i]) return;  // A write or read is on its way.
  marker_busy_[i] = true;
  Command get;
  get.args = {"GET", marker_key_};
  masters_[i]->Send(get, [this, i](absl::StatusOr<RedisReply> reply) {
    marker_busy_[i] = false;
    if (shut_down_) return;
    if (!reply.ok()) {
      // The bootstrap waits for this read (MaybeBootstrap()): ask again
      // later, not never. A reconnect reads it in its handshake anyway.
      if (!deployment_seen_ && !bootstrap_retry_timer_->armed()) {
        bootstrap_retry_timer_->Arm(options_.request_timeout);
      }
      return;
    }
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
    Judge();
    on_change_();
  });
}

int RestartGuard::JudgedServers() const {
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

absl::Status RestartGuard::GrantVeto(int master, bool fresh_read) const {
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
  if (overrides_ != nullptr) {
    if (std::optional<absl::Status> v = overrides_->GrantVerdict(id)) return *v;
  }
  return GuardVerdict(master);
}

absl::Status RestartGuard::GuardVerdict(int master) const {
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
  if (id.marker.empty()) return UnmarkedVerdict();
  if (id.marker != kTrustedMarker && id.marker != kRebornMarker) {
    return absl::FailedPreconditionError(absl::StrCat(
        "restart guard: unknown deployment marker \"", id.marker, "\""));
  }
  const absl::Duration uptime =
      absl::Seconds(id.uptime_s) + ToDuration(runtime_->Now() - id.seen_at);
  if (id.marker == kTrustedMarker) return TrustedVerdict(master, uptime);
  if (uptime >= options_.max_ttl) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "restart guard: this master lost its data when it restarted ",
      SecondsAgo(uptime), "; its grants count again in ",
      absl::FormatDuration(
          absl::Ceil(options_.max_ttl - uptime, absl::Seconds(1)))));
}

absl::Status RestartGuard::UnmarkedVerdict() const {
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

absl::Status RestartGuard::TrustedVerdict(int master,
                                          absl::Duration uptime) const {
  const MasterIdentity& id = masters_[master]->identity();
  if (overrides_ != nullptr) {
    if (std::optional<absl::Status> v = overrides_->TrustedMarkerVerdict(id)) {
      return *v;
    }
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

absl::Status RestartGuard::FenceVeto(int master) const {
  if (absl::Status veto = GrantVeto(master); !veto.ok()) return veto;
  const MasterIdentity& id = masters_[master]->identity();
  if (overrides_ != nullptr) {
    if (std::optional<absl::Status> v = overrides_->FenceVerdict(id)) return *v;
  }
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

bool RestartGuard::MarkerReplaced(int master) const {
  const MasterIdentity& id = masters_[master]->identity();
  return id.known && id.marker == kTrustedMarker && id.marker_time_us != 0 &&
         !first_marker_[master].empty() &&
         !IsMarkerStamp(first_marker_[master], id);
}

}  // namespace redlock::internal
