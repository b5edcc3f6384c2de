// Copyright 2026 The redlock Authors.

#include "src/engine.h"

#include <event2/event.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
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

  virtual void OnRound(RoundResult result) = 0;
  virtual void Fail(absl::Status status) = 0;
  virtual void OnCancel() {}

  Engine* const engine_;
  const std::string what_;

 private:
  std::shared_ptr<QuorumRound> round_;
};

class Engine::AcquireOp final : public Engine::Operation {
 public:
  AcquireOp(Engine* engine, std::string resource, absl::Duration ttl,
            absl::Duration wait, AsyncRedlock::AcquireCallback done)
      : Operation(engine, absl::StrCat("acquire \"", resource, "\"")),
        resource_(std::move(resource)),
        key_(absl::StrCat(engine->options_.key_prefix, resource_)),
        ttl_(ttl),
        done_(std::move(done)),
        started_(engine->clock_->Now()),
        schedule_(engine->options_.retry, started_, wait),
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
    RoundConfig config = engine_->BaseRound(ttl_);
    config.command = AcquireCommand(key_, token_, ttl_);
    config.map_reply = &AcquireVote;
    config.cleanup_on_loss = ReleaseCommand(key_, token_);
    StartRound(std::move(config));
  }

 private:
  void OnRound(RoundResult result) override {
    if (result.status.ok()) {
      auto state = std::make_shared<LockState>();
      state->owner = engine_;
      state->resource = resource_;
      state->key = key_;
      state->token = token_;
      state->acquired_at = result.start;
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->valid_until = result.valid_until;
        state->votes = std::move(result.votes);
      }
      Deliver(done_, absl::StatusOr<Lock>(Lock(std::move(state))));
      return;
    }
    std::optional<absl::Duration> delay =
        schedule_.NextDelay(engine_->clock_->Now(), engine_->bitgen_);
    // An outage ends the wait at once (see AsyncRedlock::AcquireAsync).
    if (result.status.code() == absl::StatusCode::kUnavailable) delay.reset();
    if (delay.has_value()) {
      timeval tv = absl::ToTimeval(*delay);
      evtimer_add(retry_timer_, &tv);
      return;
    }
    const int attempts = schedule_.attempts();
    Fail(absl::Status(
        result.status.code(),
        absl::StrCat(
            what_, ": ", LossSummary(result.status.code()), " (", attempts,
            attempts == 1 ? " attempt" : " attempts", " in ",
            absl::FormatDuration(ToDuration(engine_->clock_->Now() - started_)),
            "); last attempt: ", result.status.message())));
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
  const absl::Duration ttl_;
  AsyncRedlock::AcquireCallback done_;
  const MonotonicTime started_;
  RetrySchedule schedule_;
  event* const retry_timer_;
  std::string token_;
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
      completions_(base) {
  const int n = static_cast<int>(addresses.size());
  quorum_ = options_.quorum == Quorum::kUnanimous ? n : n / 2 + 1;
  for (MasterAddress& address : addresses) {
    MasterConfig config;
    config.address = std::move(address);
    config.request_timeout = options_.request_timeout;
    config.connect_timeout = options_.connect_timeout;
    config.stalled_timeout = options_.stalled_connection_timeout;
    config.backoff = options_.reconnect;
    masters_.push_back(std::make_unique<Master>(base, std::move(config)));
    links_.push_back(masters_.back().get());
  }
}

Engine::~Engine() {
  // Cancel first, so that no round sends to a master being destroyed.
  auto operations = std::move(operations_);
  operations_.clear();
  for (const std::shared_ptr<Operation>& op : operations) op->Cancel();
  links_.clear();
  masters_.clear();
  completions_.RunAll();
}

RoundConfig Engine::BaseRound(absl::Duration ttl) const {
  RoundConfig config;
  config.quorum = quorum_;
  config.check_validity = true;
  config.ttl = ttl;
  config.drift_factor = options_.drift_factor;
  config.min_validity = options_.min_validity;
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

absl::Status Engine::Acquire(absl::string_view resource, absl::Duration ttl,
                             absl::Duration wait,
                             AsyncRedlock::AcquireCallback done) {
  if (resource.empty()) {
    return absl::InvalidArgumentError("resource name must not be empty");
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
  auto op = std::make_shared<AcquireOp>(this, std::string(resource), ttl,
                                        std::min(wait, kLongestWait),
                                        std::move(done));
  operations_.insert(op);
  op->StartAttempt();
  return absl::OkStatus();
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
