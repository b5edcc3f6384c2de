// Copyright 2026 The redlock Authors.

#include "src/engine.h"

#include <event2/event.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "redlock/keys.h"
#include "src/lock_state.h"
#include "src/options_internal.h"
#include "src/quorum_round.h"
#include "src/retry.h"
#include "src/scripts.h"
#include "src/token.h"
#include "src/validity.h"
#include "src/vote.h"

namespace redlock::internal {
namespace {

constexpr size_t kMaxResourceBytes = 4096;
constexpr absl::string_view kTrustedMarker = "trusted";
constexpr absl::string_view kRebornMarker = "reborn";
// INFO reports uptime in whole seconds of the server's wall clock, so it can
// be off by up to this much.
constexpr absl::Duration kUptimeResolution = absl::Seconds(1);
// A wait longer than this is "until it succeeds"; it keeps deadlines finite.
constexpr absl::Duration kLongestWait = absl::Hours(24 * 365);

absl::string_view LossSummary(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kAborted:
      return "held by another owner";
    case absl::StatusCode::kUnavailable:
      return "too few masters answered";
    case absl::StatusCode::kDeadlineExceeded:
      return "no validity left";
    default:
      return "failed";
  }
}

std::shared_ptr<LockState> StateOf(const Lock& lock) { return lock.state(); }

// Counts the fenced-acquire replies whose counter can be trusted, and the
// highest such counter. A read counts only from a master whose grants count
// right now (`judged`: the restart guard's rule, the same as for grants), and
// then only if its counter cannot have been forgotten: a master that never
// lost its data (marker "trusted") knows that a missing counter means 0; a
// reborn one may have forgotten it, so only a counter it holds counts, one
// written back after its restart. `untrusted`, if not null, names the others
// (by index).
int TrustedFenceReads(const std::vector<std::optional<RedisReply>>& replies,
                      const std::function<absl::Status(int)>& judged,
                      uint64_t* highest, std::string* untrusted) {
  int trusted = 0;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i].has_value()) continue;
    absl::StatusOr<FenceRead> read = ParseFenceRead(*replies[i]);
    if (!read.ok()) continue;
    absl::Status veto = judged(static_cast<int>(i));
    if (veto.ok() &&
        (read->marker == kTrustedMarker ||
         (read->marker == kRebornMarker && read->counter_present))) {
      ++trusted;
      if (highest != nullptr) *highest = std::max(*highest, read->counter);
    } else if (untrusted != nullptr) {
      absl::StrAppend(
          untrusted, untrusted->empty() ? "" : ", ", "master ", i + 1, " (",
          !veto.ok()            ? std::string(veto.message())
          : read->marker.empty() ? std::string("no marker")
                                 : absl::StrCat(read->marker, ", no counter"),
          ")");
    }
  }
  return trusted;
}

}  // namespace

// An acquire, extend or release in flight. Runs its quorum rounds and hands
// its one result to Engine::Finish().
class Engine::Operation : public std::enable_shared_from_this<Operation> {
 public:
  // `what` names it in messages: acquire "recalc-ratings".
  Operation(Engine* engine, std::string what)
      : engine_(engine), what_(std::move(what)) {}
  virtual ~Operation() = default;

  // The engine is going away: stop the round (nothing more is sent) and
  // answer kCancelled.
  void Cancel() {
    if (round_) round_->Cancel();
    round_.reset();
    OnCancel();
    Fail(absl::CancelledError(
        absl::StrCat(what_, ": the client was shut down")));
  }

 protected:
  void StartRound(RoundConfig config) {
    round_ =
        QuorumRound::Start(engine_->links_, std::move(config), engine_->clock_,
                           [self = shared_from_this()](RoundResult result) {
                             self->round_.reset();
                             self->OnRound(std::move(result));
                           });
  }

  // Hands `result` to `done` on a later loop turn.
  template <typename Callback, typename Result>
  void Deliver(Callback& done, Result result) {
    engine_->Finish(
        this, [done = std::move(done), result = std::move(result)]() mutable {
          done(std::move(result));
        });
  }

  // The round started by StartRound() was decided.
  virtual void OnRound(RoundResult result) {}
  virtual void Fail(absl::Status status) = 0;
  virtual void OnCancel() {}

  Engine* const engine_;
  const std::string what_;

 private:
  std::shared_ptr<QuorumRound> round_;
};

class Engine::AcquireOp final : public Engine::Operation {
 public:
  AcquireOp(Engine* engine, std::string resource, const AcquireOptions& options,
            AsyncRedlock::AcquireCallback done)
      : Operation(engine, absl::StrCat("acquire \"", resource, "\"")),
        resource_(std::move(resource)),
        key_(LockKey(engine->options_, resource_)),
        counter_key_(FenceCounterKey(engine->options_, resource_)),
        ttl_(options.ttl),
        fencing_(options.fencing),
        done_(std::move(done)),
        started_(engine->clock_->Now()),
        schedule_(engine->options_.retry, started_,
                  std::min(options.wait, kLongestWait)),
        retry_timer_(evtimer_new(engine->base_, &AcquireOp::RetryThunk, this)) {
  }
  ~AcquireOp() override { event_free(retry_timer_); }

  void StartAttempt() {
    absl::StatusOr<std::string> token = NewToken();
    if (!token.ok()) {
      Fail(token.status());
      return;
    }
    token_ = *std::move(token);
    fence_write_ = false;
    RoundConfig config = engine_->BaseRound(ttl_);
    if (fencing_) {
      config.command = FencedAcquireCommand(key_, counter_key_,
                                            engine_->marker_key_, token_, ttl_);
      config.map_reply = &FencedAcquireVote;
      config.keep_replies = true;
      config.ready_to_win =
          [engine = engine_](
              const std::vector<std::optional<RedisReply>>& replies) {
            return TrustedFenceReads(replies, engine->Judge(), nullptr,
                                     nullptr) >= engine->quorum_;
          };
    } else {
      config.command = AcquireCommand(key_, token_, ttl_);
      config.map_reply = &AcquireVote;
    }
    config.cleanup_on_loss = ReleaseCommand(key_, token_);
    StartRound(std::move(config));
  }

 private:
  void OnRound(RoundResult result) override {
    if (fence_write_) {
      OnFenceWritten(std::move(result));
      return;
    }
    if (!result.status.ok()) {
      RetryOrFail(result.status);
      return;
    }
    won_ = std::move(result);
    if (!fencing_) {
      Succeed(/*fence=*/0);
      return;
    }
    // Fencing: the next token is one more than the highest counter read on
    // masters whose counters can be trusted. A quorum of such reads is
    // needed: any two quorums intersect, so it includes a master that
    // carries every earlier token written back to a quorum.
    uint64_t highest = 0;
    std::string untrusted;
    const int trusted = TrustedFenceReads(won_.replies, engine_->Judge(),
                                          &highest, &untrusted);
    if (trusted < engine_->quorum_) {
      SendToAll(ReleaseCommand(key_, token_));
      Fail(absl::UnavailableError(absl::StrCat(
          what_, ": fencing unavailable: only ", trusted,
          " masters answered with counters that can be trusted, ",
          engine_->quorum_, " needed",
          untrusted.empty() ? "" : absl::StrCat("; untrusted: ", untrusted),
          ". The lock was released; no token was issued.")));
      return;
    }
    fence_ = highest + 1;
    fence_write_ = true;
    RoundConfig config;
    config.command = FenceWriteCommand(counter_key_, fence_);
    config.map_reply = &FenceWriteVote;
    config.quorum = engine_->quorum_;
    // Counted under the same rule as grants: a later acquisition finds our
    // token only through a quorum of judged masters, and one server under
    // two addresses must not count twice.
    config.grant_veto = engine_->Judge();
    config.cleanup_on_loss = ReleaseCommand(key_, token_);
    StartRound(std::move(config));
  }

  void OnFenceWritten(RoundResult result) {
    if (result.status.code() == absl::StatusCode::kAborted) {
      // Masters denied: their counter was already at or above our token, so
      // another acquisition wrote it; issuing it again would give two holders
      // one token. The round already sent the release to every master.
      RetryOrFail(absl::AbortedError(absl::StrCat(
          "the fencing counter was already at or above ", fence_,
          " on too many masters (another acquisition wrote it); the lock "
          "was released: ",
          result.status.message())));
      return;
    }
    if (!result.status.ok()) {
      // The round already sent the release to every master.
      Fail(absl::UnavailableError(
          absl::StrCat(what_, ": the fencing token ", fence_,
                       " could not be written to a quorum; the lock was "
                       "released: ",
                       result.status.message())));
      return;
    }
    // The write-back counts inside the validity time.
    const MonotonicTime now = engine_->clock_->Now();
    if (!HasValidity(won_.valid_until, now, engine_->options_.min_validity)) {
      SendToAll(ReleaseCommand(key_, token_));
      RetryOrFail(absl::DeadlineExceededError(
          absl::StrCat("writing the fencing token left ",
                       absl::FormatDuration(Remaining(won_.valid_until, now)),
                       " of validity")));
      return;
    }
    Succeed(fence_);
  }

  void Succeed(uint64_t fence) {
    auto state = std::make_shared<LockState>();
    state->owner = engine_;
    state->resource = resource_;
    state->key = key_;
    state->token = token_;
    state->acquired_at = won_.start;
    state->fence = fence;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->valid_until = won_.valid_until;
      state->votes = std::move(won_.votes);
    }
    Deliver(done_, absl::StatusOr<Lock>(Lock(std::move(state))));
  }

  void RetryOrFail(const absl::Status& status) {
    std::optional<absl::Duration> delay =
        schedule_.NextDelay(engine_->clock_->Now(), engine_->bitgen_);
    // An outage ends the wait at once (see AsyncRedlock::AcquireAsync).
    if (status.code() == absl::StatusCode::kUnavailable) delay.reset();
    if (delay.has_value()) {
      timeval tv = absl::ToTimeval(*delay);
      evtimer_add(retry_timer_, &tv);
      return;
    }
    const int attempts = schedule_.attempts();
    Fail(absl::Status(
        status.code(),
        absl::StrCat(
            what_, ": ", LossSummary(status.code()), " (", attempts,
            attempts == 1 ? " attempt" : " attempts", " in ",
            absl::FormatDuration(ToDuration(engine_->clock_->Now() - started_)),
            "); last attempt: ", status.message())));
  }

  void SendToAll(const Command& command) {
    for (MasterLink* master : engine_->links_) {
      master->Send(command, [](absl::StatusOr<RedisReply>) {});
    }
  }

  void Fail(absl::Status status) override {
    Deliver(done_, absl::StatusOr<Lock>(std::move(status)));
  }
  void OnCancel() override { evtimer_del(retry_timer_); }

  static void RetryThunk(int, short, void* arg) {
    static_cast<AcquireOp*>(arg)->StartAttempt();
  }

  const std::string resource_;
  const std::string key_;
  const std::string counter_key_;
  const absl::Duration ttl_;
  const bool fencing_;
  AsyncRedlock::AcquireCallback done_;
  const MonotonicTime started_;
  RetrySchedule schedule_;
  event* const retry_timer_;
  std::string token_;
  RoundResult won_;  // The acquire round that reached quorum.
  bool fence_write_ = false;
  uint64_t fence_ = 0;
};

class Engine::ExtendOp final : public Engine::Operation {
 public:
  ExtendOp(Engine* engine, std::shared_ptr<LockState> state, absl::Duration ttl,
           AsyncRedlock::ExtendCallback done)
      : Operation(engine, absl::StrCat("extend \"", state->resource, "\"")),
        state_(std::move(state)),
        ttl_(ttl),
        done_(std::move(done)) {}

  void Start() {
    RoundConfig config = engine_->BaseRound(ttl_);
    config.command = ExtendCommand(state_->key, state_->token, ttl_);
    config.map_reply = &ScriptVote;
    StartRound(std::move(config));
  }

 private:
  void OnRound(RoundResult result) override {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (result.status.ok() && !state_->released) {
        state_->valid_until = result.valid_until;
        state_->votes = std::move(result.votes);
      } else {
        // A minority may already carry the new TTL; if it is shorter than
        // what was left, the lock is only as good as the shorter one.
        state_->valid_until = std::min(state_->valid_until, result.valid_until);
      }
    }
    if (result.status.ok()) {
      Deliver(done_, absl::OkStatus());
      return;
    }
    absl::string_view summary =
        result.status.code() == absl::StatusCode::kAborted
            ? "lock lost: too many masters no longer hold our token"
            : LossSummary(result.status.code());
    Fail(absl::Status(
        result.status.code(),
        absl::StrCat(what_, ": ", summary, ": ", result.status.message())));
  }

  void Fail(absl::Status status) override { Deliver(done_, std::move(status)); }

  std::shared_ptr<LockState> state_;
  const absl::Duration ttl_;
  AsyncRedlock::ExtendCallback done_;
};

class Engine::ReleaseOp final : public Engine::Operation {
 public:
  ReleaseOp(Engine* engine, std::shared_ptr<LockState> state,
            AsyncRedlock::ReleaseCallback done)
      : Operation(engine, absl::StrCat("release \"", state->resource, "\"")),
        state_(std::move(state)),
        done_(std::move(done)) {}

  void Start() {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->released = true;
      state_->valid_until =
          std::min(state_->valid_until, engine_->clock_->Now());
    }
    RoundConfig config;
    config.command = ReleaseCommand(state_->key, state_->token);
    config.map_reply = &ScriptVote;
    config.quorum = 1;
    config.wait_for_all = true;
    StartRound(std::move(config));
  }

 private:
  void OnRound(RoundResult result) override {
    ReleaseReport report;
    report.released = result.granted;
    report.not_held = result.denied;
    report.failed = result.failed;
    report.votes = std::move(result.votes);
    Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(report)));
  }

  void Fail(absl::Status status) override {
    Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(status)));
  }

  std::shared_ptr<LockState> state_;
  AsyncRedlock::ReleaseCallback done_;
};

// Keeps a lock alive: extends it every extend_every through the engine's own
// ExtendOp, and declares it lost when an extension fails or validity falls
// below the safety margin first.
class KeepAliveOp final : public Engine::Operation {
 public:
  KeepAliveOp(Engine* engine, std::shared_ptr<LockState> state,
              absl::Duration ttl, absl::Duration extend_every,
              absl::Duration margin, absl::Duration max_hold,
              absl::AnyInvocable<void(const absl::Status&)> on_lost)
      : Operation(engine, absl::StrCat("keep-alive \"", state->resource, "\"")),
        state_(std::move(state)),
        ttl_(ttl),
        extend_every_(extend_every),
        margin_(margin),
        max_hold_(max_hold),
        on_lost_(std::move(on_lost)),
        extend_timer_(
            evtimer_new(engine->base_, &KeepAliveOp::ExtendThunk, this)),
        margin_timer_(
            evtimer_new(engine->base_, &KeepAliveOp::MarginThunk, this)) {}
  ~KeepAliveOp() override {
    event_free(extend_timer_);
    event_free(margin_timer_);
  }

  void Start() {
    ArmMarginTimer();
    ArmExtendTimer();
  }

  // Also after the lock was lost: the masters that still hold our token keep
  // it for up to a TTL unless it is released.
  void Stop(bool release) {
    if (stopped_) return;
    stopped_ = true;
    lost_ = true;
    StopTimers();
    if (release && engine_->CheckLock(Lock(state_)).ok()) {
      engine_->Release(Lock(state_), [](absl::StatusOr<ReleaseReport>) {})
          .IgnoreError();
    }
    engine_->Finish(this, [] {});
  }

 private:
  void ArmExtendTimer() {
    const absl::Duration held =
        ToDuration(engine_->clock_->Now() - state_->acquired_at);
    if (held + extend_every_ > max_hold_) return;  // The cap: stop extending.
    timeval tv = absl::ToTimeval(extend_every_);
    evtimer_add(extend_timer_, &tv);
  }

  void ArmMarginTimer() {
    MonotonicTime valid_until;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      valid_until = state_->valid_until;
    }
    const absl::Duration until_margin =
        Remaining(valid_until, engine_->clock_->Now()) - margin_;
    timeval tv = absl::ToTimeval(std::max(until_margin, absl::ZeroDuration()));
    evtimer_add(margin_timer_, &tv);
  }

  void StopTimers() {
    evtimer_del(extend_timer_);
    evtimer_del(margin_timer_);
  }

  void OnExtendTimer() {
    std::weak_ptr<Operation> weak = shared_from_this();
    absl::Status sent =
        engine_->Extend(Lock(state_), ttl_, [weak](absl::Status status) {
          if (auto self = weak.lock()) {
            static_cast<KeepAliveOp*>(self.get())->OnExtended(status);
          }
        });
    if (!sent.ok()) Lost(sent);
  }

  void OnExtended(const absl::Status& status) {
    if (lost_) return;
    if (!status.ok()) {
      Lost(status);
      return;
    }
    ArmMarginTimer();
    ArmExtendTimer();
  }

  void OnMarginTimer() {
    const absl::Duration held =
        ToDuration(engine_->clock_->Now() - state_->acquired_at);
    Lost(absl::DeadlineExceededError(
        held + extend_every_ > max_hold_
            ? absl::StrCat(what_, ": held for ", absl::FormatDuration(held),
                           ", the max_hold cap (",
                           absl::FormatDuration(max_hold_),
                           "); no longer extended")
            : absl::StrCat(what_,
                           ": less than the safety margin of validity left (",
                           absl::FormatDuration(margin_),
                           ") and no extension succeeded in time")));
  }

  // The lock can no longer be trusted: say so once, stop extending. The
  // lock is not released here, and the operation stays registered with the
  // engine: the handle's owner stops it, and that releases whatever the
  // masters still hold.
  void Lost(absl::Status reason) {
    if (lost_) return;
    lost_ = true;
    StopTimers();
    state_->MarkLost(reason);
    if (on_lost_) {
      engine_->completions_.Post(
          [done = std::move(on_lost_), reason]() mutable { done(reason); });
    }
  }

  // The engine is going away (Cancel): nothing can be released any more.
  void Fail(absl::Status status) override {
    Lost(std::move(status));
    stopped_ = true;
  }

  static void ExtendThunk(int, short, void* arg) {
    static_cast<KeepAliveOp*>(arg)->OnExtendTimer();
  }
  static void MarginThunk(int, short, void* arg) {
    static_cast<KeepAliveOp*>(arg)->OnMarginTimer();
  }

  std::shared_ptr<LockState> state_;
  const absl::Duration ttl_;
  const absl::Duration extend_every_;
  const absl::Duration margin_;
  const absl::Duration max_hold_;
  absl::AnyInvocable<void(const absl::Status&)> on_lost_;
  event* const extend_timer_;
  event* const margin_timer_;
  bool lost_ = false;     // No more extensions; on_lost_ was posted.
  bool stopped_ = false;  // Stop() ran, or the engine cancelled us.
};

void StopKeepAlive(KeepAliveOp& op, bool release) { op.Stop(release); }

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(event_base* base,
                                                       Options options) {
  if (base == nullptr) {
    return absl::InvalidArgumentError("event_base must not be null");
  }
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  absl::StatusOr<std::vector<MasterAddress>> addresses =
      ParseMasters(options, /*require_numeric_hosts=*/true);
  if (!addresses.ok()) return addresses.status();
  return std::make_unique<Engine>(base, std::move(options),
                                  *std::move(addresses));
}

Engine::Engine(event_base* base, Options options,
               std::vector<MasterAddress> addresses)
    : base_(base),
      options_(std::move(options)),
      clock_(Clock::Real()),
      completions_(base),
      marker_key_(DeploymentMarkerKey(options_)) {
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
    masters_.push_back(std::make_unique<Master>(base, std::move(config)));
    links_.push_back(masters_.back().get());
  }
  eviction_warned_.assign(masters_.size(), -1);
  for (const auto& master : masters_) {
    master->set_on_state_change([this] { OnMasterStateChange(); });
  }
  // A master whose handshake hangs (a stopped server accepts TCP) neither
  // completes nor fails for a while: do not wait for it longer than this.
  deployment_timer_ = evtimer_new(
      base,
      [](int, short, void* arg) {
        static_cast<Engine*>(arg)->MarkDeploymentKnown();
      },
      this);
  timeval tv =
      absl::ToTimeval(options_.connect_timeout + 2 * options_.request_timeout);
  evtimer_add(deployment_timer_, &tv);
  OnMasterStateChange();
}

void Engine::OnMasterStateChange() {
  auto marked = [](const Master& x) {
    return x.identity().known && !x.identity().marker.empty();
  };
  const MonotonicTime now = clock_->Now();
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
  if (others_marked) {
    // A master without the marker the others carry either restarted since
    // the deployment was marked (it lost its data: reborn), or has been up
    // since before and only missed the marking (a client bootstrapping the
    // deployment right now, or it was unreachable then: trusted). Uptime is
    // known to the second, so a master counts as up since before only if its
    // uptime is at least the deployment's age less that resolution; without
    // a dated trusted marker to compare with, it is judged reborn. Every
    // unmarked master is looked at again each time: one that answered before
    // the others could not be judged then.
    for (const auto& x : masters_) {
      const MasterIdentity& id = x->identity();
      if (!x->ready() || !id.known || !id.marker.empty()) continue;
      const absl::Duration uptime =
          absl::Seconds(id.uptime_s) + ToDuration(now - id.seen_at);
      const bool restarted_since = deployment_age < absl::ZeroDuration() ||
                                   uptime + kUptimeResolution < deployment_age;
      WriteMarker(*x, restarted_since ? kRebornMarker : kTrustedMarker);
    }
  }
  bool all_known = true;
  bool any_marked = false;
  bool all_settled = true;
  for (const auto& x : masters_) {
    all_known &= x->identity().known;
    any_marked |= marked(*x);
    all_settled &= x->identity().known || x->ever_failed();
  }
  if (all_known && !any_marked && !bootstrapped_) {
    // Every master answered and none carries the marker: a brand-new
    // deployment. Mark them all trusted.
    bootstrapped_ = true;
    for (const auto& x : masters_) {
      WriteMarker(*x, kTrustedMarker);
    }
  }
  if (all_settled) MarkDeploymentKnown();
  WarnAboutEviction();
}

void Engine::WriteMarker(Master& master, absl::string_view value) {
  // The local view follows the reply: another client may have written first
  // (a bootstrap racing a restart check), and then its marker is the one.
  master.Send(MarkerCommand(marker_key_, value),
              [&master](absl::StatusOr<RedisReply> reply) {
                // Whatever is stored now, ours or another client's. On an
                // error the next handshake reads it again.
                if (reply.ok() && reply->type == RedisReply::Type::kString) {
                  master.set_marker(reply->str);
                }
              });
}

void Engine::MarkDeploymentKnown() {
  if (deployment_known_) return;
  deployment_known_ = true;
  if (deployment_timer_ != nullptr) evtimer_del(deployment_timer_);
  for (auto& fn : deployment_waiters_) completions_.Post(std::move(fn));
  deployment_waiters_.clear();
}

void Engine::WhenDeploymentKnown(absl::AnyInvocable<void()> fn) {
  if (deployment_known_) {
    fn();
  } else {
    deployment_waiters_.push_back(std::move(fn));
  }
}

std::vector<MasterHealth> Engine::Health() const {
  std::vector<MasterHealth> out;
  out.reserve(masters_.size());
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    MasterHealth h;
    h.master = m.name();
    h.connected = m.ready();
    h.last_error = m.last_error();
    if (m.identity().known) h.marker = m.identity().marker;
    h.grants_count = GrantVeto(static_cast<int>(i));
    h.maxmemory_policy = m.identity().maxmemory_policy;
    h.eviction = EvictionRisk(m.identity().maxmemory_policy);
    const MasterCounters& c = m.counters();
    h.requests = c.sent;
    h.replies = c.replies;
    h.error_replies = c.error_replies;
    h.timeouts = c.timeouts;
    h.connects = c.connects;
    h.connection_failures = c.connection_failures;
    h.noscript_fallbacks = c.noscript_fallbacks;
    out.push_back(std::move(h));
  }
  return out;
}

absl::Status Engine::GrantVeto(int master) const {
  const Master& m = *masters_[master];
  const MasterIdentity& id = m.identity();
  // One server under two addresses (an IPv6-mapped address, a second IP, a
  // DNS alias, a proxy) is one failure domain: it casts one vote, under the
  // first of its addresses.
  if (id.known && !id.run_id.empty()) {
    for (int j = 0; j < master; ++j) {
      const MasterIdentity& other = masters_[j]->identity();
      if (other.known && other.run_id == id.run_id) {
        return absl::FailedPreconditionError(absl::StrCat(
            "same server as master ", j + 1, " (", masters_[j]->name(),
            ", run_id ", id.run_id.substr(0, 8),
            "...): one server casts one vote"));
      }
    }
  }
  if (!options_.restart_guard) return absl::OkStatus();
  // Fail closed: whatever is not known to be trustworthy casts no grant.
  if (!m.ready() || !id.known) {
    return absl::FailedPreconditionError(
        "restart guard: not yet judged (no handshake completed on the "
        "current connection)");
  }
  if (id.marker.empty()) {
    bool others_marked = false;
    for (const auto& x : masters_) {
      others_marked |= x->identity().known && !x->identity().marker.empty();
    }
    return absl::FailedPreconditionError(
        bootstrapped_ || others_marked
            ? "restart guard: not yet judged (its deployment marker is being "
              "written)"
            : "restart guard: not yet judged (no marker, and no marked master "
              "reachable to compare its uptime with; a new deployment is "
              "trusted only once every master answered unmarked)");
  }
  if (id.marker == kTrustedMarker) return absl::OkStatus();
  if (id.marker != kRebornMarker) {
    return absl::FailedPreconditionError(absl::StrCat(
        "restart guard: unknown deployment marker \"", id.marker, "\""));
  }
  const absl::Duration uptime =
      absl::Seconds(id.uptime_s) + ToDuration(clock_->Now() - id.seen_at);
  if (uptime >= options_.max_ttl) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "restart guard: this master lost its data when it restarted ",
      absl::FormatDuration(absl::Trunc(uptime, absl::Seconds(1))),
      " ago; its grants count again in ",
      absl::FormatDuration(
          absl::Ceil(options_.max_ttl - uptime, absl::Seconds(1)))));
}

void Engine::WarnAboutEviction() {
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    if (!m.ready() || eviction_warned_[i] == m.counters().connects) continue;
    absl::Status risk = EvictionRisk(m.identity().maxmemory_policy);
    if (risk.ok()) continue;
    eviction_warned_[i] = m.counters().connects;
    const std::string text =
        absl::StrCat("redlock: warning: master ", m.name(), ": ", risk.message());
    if (options_.on_warning) {
      options_.on_warning(text);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  }
}

Engine::~Engine() {
  // Cancel first, so that no round sends to a master being destroyed.
  auto operations = std::move(operations_);
  operations_.clear();
  for (const std::shared_ptr<Operation>& op : operations) op->Cancel();
  deployment_waiters_.clear();
  event_free(deployment_timer_);
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
  config.grant_veto = [this](int master) { return GrantVeto(master); };
  return config;
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
  const std::shared_ptr<LockState>& state = lock.state();
  if (state == nullptr) {
    return absl::InvalidArgumentError("the lock is empty (never acquired)");
  }
  if (state->owner != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("the lock on \"", state->resource,
                     "\" was acquired through another client"));
  }
  std::lock_guard<std::mutex> guard(state->mu);
  if (state->released) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the lock on \"", state->resource, "\" was already released"));
  }
  return absl::OkStatus();
}

absl::Status Engine::Acquire(absl::string_view resource,
                             const AcquireOptions& options,
                             AsyncRedlock::AcquireCallback done) {
  const absl::Duration ttl = options.ttl;
  const absl::Duration wait = options.wait;
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
  if (absl::Status status = CheckTtl(ttl); !status.ok()) return status;
  if (wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wait ", absl::FormatDuration(wait), " must not be negative"));
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<AcquireOp>(this, std::string(resource), options,
                                        std::move(done));
  operations_.insert(op);
  // The restart guard and fencing judge masters by the deployment marker:
  // the first acquisitions wait until every master has been heard from
  // (bounded by connect_timeout + 2 * request_timeout).
  std::weak_ptr<AcquireOp> weak = op;
  WhenDeploymentKnown([weak] {
    if (auto self = weak.lock()) self->StartAttempt();
  });
  return absl::OkStatus();
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
  auto op = std::make_shared<KeepAliveOp>(this, lock.state(), ttl, every,
                                          margin, options.max_hold,
                                          std::move(options.on_lost));
  operations_.insert(op);
  op->Start();
  return op;
}

absl::Status Engine::Extend(const Lock& lock, absl::Duration ttl,
                            AsyncRedlock::ExtendCallback done) {
  if (absl::Status status = CheckLock(lock); !status.ok()) return status;
  if (absl::Status status = CheckTtl(ttl); !status.ok()) return status;
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op =
      std::make_shared<ExtendOp>(this, StateOf(lock), ttl, std::move(done));
  operations_.insert(op);
  op->Start();
  return absl::OkStatus();
}

absl::Status Engine::Release(const Lock& lock,
                             AsyncRedlock::ReleaseCallback done) {
  if (absl::Status status = CheckLock(lock); !status.ok()) return status;
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<ReleaseOp>(this, StateOf(lock), std::move(done));
  operations_.insert(op);
  op->Start();
  return absl::OkStatus();
}

}  // namespace redlock::internal
