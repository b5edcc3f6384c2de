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
#include "src/engine/election_ops.h"
#include "src/engine/extend_op.h"
#include "src/engine/keep_alive_batch.h"
#include "src/engine/keep_alive_op.h"
#include "src/engine/lock_state.h"
#include "src/engine/master_reports.h"
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

std::shared_ptr<LockState> StateOf(const Lock& lock) { return lock.state(); }

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
    std::unique_ptr<Runtime> runtime, Options options,
    std::shared_ptr<const RuleOverrides> overrides) {
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
                                  *std::move(addresses), std::move(overrides));
}

Engine::Engine(std::unique_ptr<Runtime> runtime, Options options,
               std::vector<MasterAddress> addresses,
               std::shared_ptr<const RuleOverrides> overrides)
    : OperationHost(std::move(runtime), std::move(options),
                    std::move(overrides)) {
  const int n = static_cast<int>(addresses.size());
  quorum_ = options_.quorum == Quorum::kUnanimous ? n : n / 2 + 1;
  for (MasterAddress& address : addresses) {
    MasterConfig config;
    config.address = std::move(address);
    config.request_timeout = options_.request_timeout;
    config.connect_timeout = options_.connect_timeout;
    config.stalled_timeout = options_.stalled_connection_timeout;
    config.backoff = options_.reconnect;
    config.marker_key = DeploymentMarkerKey(options_);
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
  guard_ = std::make_unique<RestartGuard>(
      runtime_.get(), options_, masters_, quorum_,
      [this] { AfterGuardChange(); }, overrides_.get());
  reports_ = std::make_unique<MasterReports>(options_, masters_, *guard_);
  for (const auto& master : masters_) {
    master->set_on_state_change([this] { OnMasterStateChange(); });
  }
  // A master whose handshake hangs (a stopped server accepts TCP) neither
  // completes nor fails for a while: do not wait for it longer than this.
  deployment_timer_ = runtime_->NewTimer([this] { MarkReadyToAttempt(); });
  deployment_timer_->Arm(options_.connect_timeout +
                         2 * options_.request_timeout);
  OnMasterStateChange();
  // The blocks a granted lock keeps (block_pool.h): their first slabs are
  // mapped now, while the handshakes are in flight, not as a lock is won.
  ReservePoolFor<LockState>();
  ReservePoolFor<KeepAliveOp>();
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

std::vector<MasterHealth> Engine::Health() const {
  return reports_->Health(wakeups_.get());
}

void Engine::OnMasterStateChange() {
  guard_->Judge();
  AfterGuardChange();
}

void Engine::AfterGuardChange() {
  MaybeReadyToAttempt();
  reports_->WarnAboutRisks();
  reports_->ReportChanges();
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
  if (guard_->JudgedServers() >= quorum_) {
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

Engine::~Engine() {
  guard_->Shutdown();
  // Cancel first, so that no round sends to a master being destroyed.
  auto operations = std::move(operations_);
  operations_.clear();
  for (const std::shared_ptr<Operation>& op : operations) op->Cancel();
  attempt_waiters_.clear();
  // Before the masters: its batches in flight decide nothing more.
  keep_alive_batcher_.reset();
  deployment_timer_.reset();
  wakeups_.reset();
  links_.clear();
  masters_.clear();
  completions_.RunAll();
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

absl::Status Engine::CheckResource(absl::string_view resource,
                                   bool reserved_ok) const {
  if (resource.empty()) {
    return absl::InvalidArgumentError("resource name must not be empty");
  }
  if (!reserved_ok && absl::StartsWith(resource, kReservedResourcePrefix)) {
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

absl::Status Engine::CheckElection(absl::string_view name) const {
  if (name.empty()) {
    return absl::InvalidArgumentError("election name must not be empty");
  }
  return CheckResource(ElectionResource(name), /*reserved_ok=*/true);
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

absl::Status Engine::AcquireLease(std::string resource,
                                  const AcquireOptions& options,
                                  AsyncRedlock::AcquireCallback done) {
  std::vector<std::string> one;
  one.push_back(std::move(resource));
  return AcquireOwned(std::move(one), options, std::move(done),
                      /*reserved_ok=*/true);
}

absl::Status Engine::AcquireOwned(std::vector<std::string> resources,
                                  const AcquireOptions& options,
                                  AsyncRedlock::AcquireCallback done,
                                  bool reserved_ok) {
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
    if (absl::Status status = CheckResource(resource, reserved_ok);
        !status.ok()) {
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

absl::Status Engine::CheckHold(absl::Duration ttl, absl::Duration* every,
                               absl::Duration* margin,
                               absl::Duration max_hold) const {
  if (*every == absl::ZeroDuration()) *every = ttl / 3;
  if (*margin == absl::ZeroDuration()) {
    *margin = std::max(ttl / 10, 2 * options_.request_timeout);
  }
  if (*every <= absl::ZeroDuration() || *margin < absl::ZeroDuration() ||
      *every >= ttl - *margin || max_hold <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keep-alive: extend_every (", absl::FormatDuration(*every),
        ") must be positive and shorter than ttl - safety_margin (",
        absl::FormatDuration(ttl), " - ", absl::FormatDuration(*margin),
        "), and max_hold positive"));
  }
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
  absl::Duration margin = options.safety_margin;
  if (absl::Status status = CheckHold(ttl, &every, &margin, options.max_hold);
      !status.ok()) {
    return status;
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

absl::Status Engine::Campaign(absl::string_view name, absl::string_view value,
                              CampaignOptions options,
                              AsyncRedlock::CampaignCallback done) {
  if (absl::Status status = CheckElection(name); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckElectionValue(value); !status.ok()) {
    return status;
  }
  if (options.ttl == absl::ZeroDuration()) options.ttl = options_.default_ttl;
  if (absl::Status status = CheckTtl(options.ttl); !status.ok()) return status;
  if (options.wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wait ", absl::FormatDuration(options.wait), " must not be negative"));
  }
  if (absl::Status status =
          CheckHold(options.ttl, &options.extend_every, &options.safety_margin,
                    absl::InfiniteDuration());
      !status.ok()) {
    return status;
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op =
      std::make_shared<CampaignOp>(this, std::string(name), std::string(value),
                                   std::move(options), std::move(done));
  std::weak_ptr<CampaignOp> weak = op;
  absl::Status status = AcquireLease(ElectionResource(name), op->LeaseOptions(),
                                     [weak](absl::StatusOr<Lock> lease) {
                                       if (auto self = weak.lock())
                                         self->OnAcquired(std::move(lease));
                                     });
  if (!status.ok()) return status;
  operations_.insert(op);
  return absl::OkStatus();
}

namespace {

// The leadership behind `leadership`, or kInvalidArgument for an empty one.
absl::StatusOr<std::shared_ptr<LeadershipState>> StateOfLeadership(
    const Leadership& leadership) {
  if (leadership.state() == nullptr) {
    return absl::InvalidArgumentError("the leadership is empty (never won)");
  }
  return leadership.state();
}

}  // namespace

absl::Status Engine::Proclaim(const Leadership& leadership,
                              absl::string_view value,
                              AsyncRedlock::ExtendCallback done) {
  absl::StatusOr<std::shared_ptr<LeadershipState>> state =
      StateOfLeadership(leadership);
  if (!state.ok()) return state.status();
  if (absl::Status status = CheckElectionValue(value); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckLock((*state)->lock); !status.ok()) {
    return status;
  }
  if ((*state)->lock.lost()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the leadership of \"", (*state)->name,
                     "\" is lost: ", (*state)->lock.lost_reason().message()));
  }
  {
    std::lock_guard<std::mutex> lock((*state)->mu);
    if ((*state)->resigned) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the leadership of \"", (*state)->name, "\" was resigned"));
    }
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op = std::make_shared<ProclaimOp>(this, *std::move(state),
                                         std::string(value), std::move(done));
  operations_.insert(op);
  op->Start();
  return absl::OkStatus();
}

absl::Status Engine::Resign(const Leadership& leadership,
                            AsyncRedlock::ReleaseCallback done) {
  absl::StatusOr<std::shared_ptr<LeadershipState>> state =
      StateOfLeadership(leadership);
  if (!state.ok()) return state.status();
  if (absl::Status status = CheckLock((*state)->lock); !status.ok()) {
    return status;
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  {
    std::lock_guard<std::mutex> lock((*state)->mu);
    if ((*state)->resigned) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the leadership of \"", (*state)->name, "\" was resigned already"));
    }
    (*state)->resigned = true;
  }
  // The release below is the resignation: the keep-alive stops first so it
  // cannot extend what is being given back.
  if (std::shared_ptr<KeepAliveOp> keep = (*state)->keep_alive.lock()) {
    StopKeepAlive(*keep, /*release=*/false);
  }
  return Release((*state)->lock, ReleaseOptions{}, std::move(done));
}

absl::Status Engine::Leader(absl::string_view name,
                            AsyncRedlock::LeaderCallback done) {
  if (absl::Status status = CheckElection(name); !status.ok()) {
    return status;
  }
  if (!done) return absl::InvalidArgumentError("callback must not be empty");
  auto op =
      std::make_shared<LeaderOp>(this, std::string(name), std::move(done));
  operations_.insert(op);
  std::weak_ptr<LeaderOp> weak = op;
  WhenReadyToAttempt([weak] {
    if (auto self = weak.lock()) self->Start();
  });
  return absl::OkStatus();
}

absl::StatusOr<std::weak_ptr<ObserveOp>> Engine::Observe(
    absl::string_view name, ObserveOptions options) {
  if (absl::Status status = CheckElection(name); !status.ok()) {
    return status;
  }
  if (!options.on_leader) {
    return absl::InvalidArgumentError("ObserveOptions.on_leader is required");
  }
  if (options.poll_every <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ObserveOptions.poll_every (", absl::FormatDuration(options.poll_every),
        ") must be positive"));
  }
  auto op =
      std::make_shared<ObserveOp>(this, std::string(name), std::move(options));
  operations_.insert(op);
  op->Start();
  return std::weak_ptr<ObserveOp>(op);
}

}  // namespace redlock::internal
