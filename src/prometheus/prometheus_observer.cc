// Copyright 2026 The redlock Authors.
//
// PrometheusObserver (redlock/prometheus.h). Every family is registered once,
// in Create(); the events only look up series (prometheus-cpp's Family::Add
// returns the existing series for known labels) and update them. The series
// a master needs are looked up once and cached per master name; that cache
// and the count of locks held per resource are guarded by `mu_`, since
// several clients' loop threads may call one observer at once.

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "prometheus/check_names.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/labels.h"
#include "prometheus/registry.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "redlock/prometheus.h"

namespace redlock {
namespace {

using ::prometheus::Counter;
using ::prometheus::Family;
using ::prometheus::Gauge;
using ::prometheus::Histogram;
using ::prometheus::Labels;

// Loopback to WAN: 100us .. 10s.
const Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const buckets = new Histogram::BucketBoundaries{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *buckets;
}

// An acquisition's wait may last as long as its caller allows: 1ms .. 10m.
const Histogram::BucketBoundaries& WaitBuckets() {
  static const auto* const buckets = new Histogram::BucketBoundaries{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
      1,     2.5,    5,     10,   30,    60,   120, 300,  600};
  return *buckets;
}

// How long a lock was held: 10ms .. 1h (Options::max_ttl's default; a
// kept-alive lock may be held longer).
const Histogram::BucketBoundaries& HoldBuckets() {
  static const auto* const buckets = new Histogram::BucketBoundaries{
      0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600};
  return *buckets;
}

// "ok", "aborted", "deadline_exceeded": absl's name of the code, lower case.
std::string CodeLabel(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

// The codes an acquisition can end with (AcquireFailedEvent), an attempt
// can be decided with (AttemptEvent), an extension (ExtendedEvent) and a
// loss (LostEvent): their series exist from the start, at 0.
const std::vector<absl::StatusCode>& AcquisitionCodes() {
  static const auto* const codes = new std::vector<absl::StatusCode>{
      absl::StatusCode::kOk,          absl::StatusCode::kAborted,
      absl::StatusCode::kUnavailable, absl::StatusCode::kDeadlineExceeded,
      absl::StatusCode::kCancelled,   absl::StatusCode::kInternal};
  return *codes;
}
const std::vector<absl::StatusCode>& AttemptCodes() {
  static const auto* const codes = new std::vector<absl::StatusCode>{
      absl::StatusCode::kOk, absl::StatusCode::kAborted,
      absl::StatusCode::kUnavailable, absl::StatusCode::kDeadlineExceeded};
  return *codes;
}
const std::vector<absl::StatusCode>& ExtensionCodes() {
  static const auto* const codes = new std::vector<absl::StatusCode>{
      absl::StatusCode::kOk, absl::StatusCode::kAborted,
      absl::StatusCode::kUnavailable, absl::StatusCode::kDeadlineExceeded,
      absl::StatusCode::kCancelled};
  return *codes;
}
const std::vector<absl::StatusCode>& LossCodes() {
  static const auto* const codes = new std::vector<absl::StatusCode>{
      absl::StatusCode::kAborted, absl::StatusCode::kUnavailable,
      absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled};
  return *codes;
}

constexpr const char* kOps[] = {"acquire", "extend", "release"};
enum Op { kAcquireOp = 0, kExtendOp = 1, kReleaseOp = 2 };

constexpr const char* kVoteNames[] = {"granted", "denied", "failed", "pending"};

int VoteIndex(MasterVote::Kind kind) {
  switch (kind) {
    case MasterVote::Kind::kGranted:
      return 0;
    case MasterVote::Kind::kDenied:
      return 1;
    case MasterVote::Kind::kFailed:
      return 2;
    case MasterVote::Kind::kPending:
      return 3;
  }
  return 3;
}

// Labels set by the observer itself; a constant label must not reuse one.
constexpr const char* kReservedLabels[] = {"master",     "op",       "outcome",
                                           "reason",     "vote",     "freed",
                                           "keep_alive", "resource", "le"};

const char* Bool(bool b) { return b ? "true" : "false"; }

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// A vote vetoed by the restart guard: a grant that did not count.
bool IsGuardVeto(const MasterVote& vote) {
  return vote.kind == MasterVote::Kind::kFailed &&
         absl::StartsWith(vote.error.message(), "restart guard:");
}

bool IsTimeout(const MasterVote& vote) {
  return vote.kind == MasterVote::Kind::kFailed &&
         absl::IsDeadlineExceeded(vote.error);
}

// Whether a vote's latency is a request's round trip (or its timeout): not
// for a pending vote (no answer yet, latency zero), nor for a failure with no
// usable connection (kUnavailable, kCancelled: nothing was answered).
bool HasRequestLatency(const MasterVote& vote) {
  if (vote.kind == MasterVote::Kind::kPending) return false;
  if (vote.kind != MasterVote::Kind::kFailed) return true;
  return !absl::IsUnavailable(vote.error) && !absl::IsCancelled(vote.error);
}

}  // namespace

class PrometheusObserver::Metrics {
 public:
  Metrics(std::shared_ptr<prometheus::Registry> registry,
          PrometheusOptions options)
      : registry_(std::move(registry)),
        options_(std::move(options)),
        acquisitions_(AddCounter(
            "redlock_acquisitions_total",
            "Acquisitions completed, by outcome: ok (a lock), or the status "
            "code they failed with (aborted: held elsewhere; unavailable: too "
            "few masters answered; deadline_exceeded: quorum came too late; "
            "cancelled; internal).")),
        attempts_(AddCounter(
            "redlock_acquire_attempts_total",
            "Acquisition attempts (quorum rounds) decided, by outcome: ok "
            "(won), aborted, unavailable or deadline_exceeded.")),
        extensions_(AddCounter(
            "redlock_extensions_total",
            "Extensions decided, by outcome (ok or the status code) and "
            "keep_alive (true: made by a keep-alive).")),
        lost_(AddCounter("redlock_lost_locks_total",
                         "Kept-alive locks declared lost, by the status code "
                         "of the reason (Lock::lost_reason()).")),
        releases_(AddCounter(
            "redlock_releases_total",
            "Releases decided, by freed (true: a quorum confirmed the token "
            "gone, others can take the resource now; false: copies remain "
            "until their TTL).")),
        master_votes_(AddCounter(
            "redlock_master_votes_total",
            "Votes cast by each master, by op (acquire: attempts, extend, "
            "release) and vote (granted, denied, failed, pending: no answer "
            "when the round was decided).")),
        master_timeouts_(AddCounter(
            "redlock_master_timeouts_total",
            "Votes of acquisitions, extensions and releases that failed "
            "because the master did not answer within request_timeout "
            "before the round was decided (a master still pending at the "
            "decision is not counted).")),
        guard_vetoes_(AddCounter(
            "redlock_restart_guard_vetoes_total",
            "Grants (of acquisition attempts and extensions) the restart "
            "guard did not count: the master restarted without its data "
            "less than max_ttl ago, or could not be judged yet.")),
        master_connects_(AddCounter(
            "redlock_master_connects_total",
            "Connections to a master whose handshake completed (the first "
            "and every reconnection).")),
        master_disconnects_(AddCounter(
            "redlock_master_disconnects_total",
            "Connections to a master that failed or closed after their "
            "handshake.")),
        attempt_duration_(AddHistogram(
            "redlock_acquire_attempt_duration_seconds",
            "Time from sending an acquisition attempt's commands to its "
            "decision.")),
        acquire_wait_(AddHistogram(
            "redlock_acquire_wait_seconds",
            "Time from an acquisition's call to its end (retries' waits "
            "included), by outcome as in redlock_acquisitions_total.")),
        extend_duration_(AddHistogram(
            "redlock_extend_duration_seconds",
            "Time from sending an extension's commands to its decision.")),
        hold_duration_(AddHistogram(
            "redlock_lock_hold_duration_seconds",
            "Time from a lock's acquisition (or adoption) to its release.")),
        request_duration_(AddHistogram(
            "redlock_master_request_duration_seconds",
            "Per master and op, time from sending a request to its answer "
            "(a timeout counts as request_timeout); pending votes and "
            "failures without a connection are not observed.")),
        locks_held_(AddGauge(
            "redlock_locks_held",
            "Locks acquired and neither released nor declared lost, by "
            "resource (unless the resource label is turned off).")),
        master_connected_(
            AddGauge("redlock_master_connected",
                     "1 while the client has a connection to the master whose "
                     "handshake completed, else 0.")),
        master_grants_counted_(AddGauge(
            "redlock_master_grants_counted",
            "1 while the restart guard counts the master's grants (always "
            "1 with restart_guard off), else 0. Set when the client reports "
            "a change (connection, marker, the start of an acquisition "
            "attempt); a second address of one server is not told apart.")) {
    for (absl::StatusCode code : AcquisitionCodes()) {
      acquisitions_.Add({{"outcome", CodeLabel(code)}});
      acquire_wait_.Add({{"outcome", CodeLabel(code)}}, WaitBuckets());
    }
    for (absl::StatusCode code : AttemptCodes()) {
      attempts_.Add({{"outcome", CodeLabel(code)}});
    }
    for (absl::StatusCode code : ExtensionCodes()) {
      for (bool keep_alive : {false, true}) {
        extensions_.Add(
            {{"outcome", CodeLabel(code)}, {"keep_alive", Bool(keep_alive)}});
      }
    }
    for (absl::StatusCode code : LossCodes()) {
      lost_.Add({{"reason", CodeLabel(code)}});
    }
    for (bool freed : {false, true}) releases_.Add({{"freed", Bool(freed)}});
    attempt_duration_series_ = &attempt_duration_.Add({}, LatencyBuckets());
    extend_duration_series_ = &extend_duration_.Add({}, LatencyBuckets());
    hold_duration_series_ = &hold_duration_.Add({}, HoldBuckets());
    if (!options_.resource_label) total_held_series_ = &locks_held_.Add({});
  }

  void AddMaster(absl::string_view master) {
    std::lock_guard<std::mutex> lock(mu_);
    Master(master);
  }

  void OnAttempt(const AttemptEvent& e) {
    attempts_.Add({{"outcome", CodeLabel(e.outcome.code())}}).Increment();
    attempt_duration_series_->Observe(Seconds(e.elapsed));
    if (e.votes != nullptr) CountVotes(*e.votes, kAcquireOp);
  }

  void OnAcquired(const AcquiredEvent& e) {
    const std::string ok = CodeLabel(absl::StatusCode::kOk);
    acquisitions_.Add({{"outcome", ok}}).Increment();
    acquire_wait_.Add({{"outcome", ok}}, WaitBuckets())
        .Observe(Seconds(e.wait));
    std::lock_guard<std::mutex> lock(mu_);
    HeldCount& count = held_[std::string(e.resource)];
    ++count.held;
    ++total_held_;
    PublishHeld(e.resource, count);
  }

  void OnAcquireFailed(const AcquireFailedEvent& e) {
    const std::string outcome = CodeLabel(e.status.code());
    acquisitions_.Add({{"outcome", outcome}}).Increment();
    acquire_wait_.Add({{"outcome", outcome}}, WaitBuckets())
        .Observe(Seconds(e.wait));
  }

  void OnExtended(const ExtendedEvent& e) {
    extensions_
        .Add({{"outcome", CodeLabel(e.status.code())},
              {"keep_alive", Bool(e.keep_alive)}})
        .Increment();
    extend_duration_series_->Observe(Seconds(e.elapsed));
    if (e.votes != nullptr) CountVotes(*e.votes, kExtendOp);
  }

  // The rule for redlock_locks_held (docs/observability.md): a lock counts
  // from OnAcquired until OnLost or OnReleased, whichever comes first. A lost
  // lock is remembered as lost-not-yet-released, and the release that
  // follows it (its owner stops the keep-alive and releases) consumes that
  // instead of taking a held lock off again. The events name only the
  // resource, so locks of one resource are told apart by count alone, and
  // counts never go below zero: a release or loss of a lock this observer
  // did not see acquired (Adopt()) changes nothing.
  void OnLost(const LostEvent& e) {
    lost_.Add({{"reason", CodeLabel(e.reason.code())}}).Increment();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(e.resource);
    if (it == held_.end() || it->second.held == 0) return;
    --it->second.held;
    ++it->second.lost;
    --total_held_;
    PublishHeld(e.resource, it->second);
  }

  void OnReleased(const ReleasedEvent& e) {
    const bool freed = e.report != nullptr && e.report->freed;
    releases_.Add({{"freed", Bool(freed)}}).Increment();
    hold_duration_series_->Observe(Seconds(e.held_for));
    if (e.report != nullptr) CountVotes(e.report->votes, kReleaseOp);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(e.resource);
    if (it == held_.end()) return;
    HeldCount& count = it->second;
    if (count.lost > 0) {
      --count.lost;
    } else if (count.held > 0) {
      --count.held;
      --total_held_;
      PublishHeld(e.resource, count);
    }
    if (count.held == 0 && count.lost == 0) held_.erase(it);
  }

  void OnMaster(const MasterEvent& e) {
    std::lock_guard<std::mutex> lock(mu_);
    MasterSeries& m = Master(e.master);
    switch (e.kind) {
      case MasterEvent::Kind::kConnected:
        m.connects->Increment();
        m.connected->Set(1);
        break;
      case MasterEvent::Kind::kDisconnected:
        m.disconnects->Increment();
        m.connected->Set(0);
        break;
      case MasterEvent::Kind::kJudged:
        m.grants_counted->Set(e.status.ok() ? 1 : 0);
        break;
    }
  }

 private:
  struct MasterSeries {
    Counter* votes[3][4];  // [op][vote]
    Histogram* request_duration[3];
    Counter* timeouts;
    Counter* guard_vetoes;
    Counter* connects;
    Counter* disconnects;
    Gauge* connected;
    Gauge* grants_counted;
  };

  struct HeldCount {
    int64_t held = 0;  // Acquired, not lost, not released.
    int64_t lost = 0;  // Lost, not released yet.
  };

  Family<Counter>& AddCounter(const std::string& name,
                              const std::string& help) {
    return prometheus::BuildCounter()
        .Name(name)
        .Help(help)
        .Labels(options_.const_labels)
        .Register(*registry_);
  }
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help) {
    return prometheus::BuildGauge()
        .Name(name)
        .Help(help)
        .Labels(options_.const_labels)
        .Register(*registry_);
  }
  Family<Histogram>& AddHistogram(const std::string& name,
                                  const std::string& help) {
    return prometheus::BuildHistogram()
        .Name(name)
        .Help(help)
        .Labels(options_.const_labels)
        .Register(*registry_);
  }

  // The series of `master`, created (every one of them, at 0) on first use.
  // Requires mu_.
  MasterSeries& Master(absl::string_view master) {
    auto it = masters_.find(master);
    if (it != masters_.end()) return it->second;
    const std::string name(master);
    MasterSeries m;
    for (int op = 0; op < 3; ++op) {
      for (int vote = 0; vote < 4; ++vote) {
        m.votes[op][vote] = &master_votes_.Add(
            {{"master", name}, {"op", kOps[op]}, {"vote", kVoteNames[vote]}});
      }
      m.request_duration[op] = &request_duration_.Add(
          {{"master", name}, {"op", kOps[op]}}, LatencyBuckets());
    }
    const Labels labels = {{"master", name}};
    m.timeouts = &master_timeouts_.Add(labels);
    m.guard_vetoes = &guard_vetoes_.Add(labels);
    m.connects = &master_connects_.Add(labels);
    m.disconnects = &master_disconnects_.Add(labels);
    m.connected = &master_connected_.Add(labels);
    m.grants_counted = &master_grants_counted_.Add(labels);
    return masters_.emplace(name, m).first->second;
  }

  void CountVotes(const std::vector<MasterVote>& votes, Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const MasterVote& vote : votes) {
      MasterSeries& m = Master(vote.master);
      m.votes[op][VoteIndex(vote.kind)]->Increment();
      if (HasRequestLatency(vote)) {
        m.request_duration[op]->Observe(Seconds(vote.latency));
      }
      if (IsTimeout(vote)) m.timeouts->Increment();
      if (op != kReleaseOp && IsGuardVeto(vote)) m.guard_vetoes->Increment();
    }
  }

  // Sets redlock_locks_held from the counts. Requires mu_.
  void PublishHeld(absl::string_view resource, const HeldCount& count) {
    if (options_.resource_label) {
      locks_held_.Add({{"resource", std::string(resource)}})
          .Set(static_cast<double>(count.held));
    } else {
      total_held_series_->Set(static_cast<double>(total_held_));
    }
  }

  const std::shared_ptr<prometheus::Registry> registry_;
  const PrometheusOptions options_;

  Family<Counter>& acquisitions_;
  Family<Counter>& attempts_;
  Family<Counter>& extensions_;
  Family<Counter>& lost_;
  Family<Counter>& releases_;
  Family<Counter>& master_votes_;
  Family<Counter>& master_timeouts_;
  Family<Counter>& guard_vetoes_;
  Family<Counter>& master_connects_;
  Family<Counter>& master_disconnects_;
  Family<Histogram>& attempt_duration_;
  Family<Histogram>& acquire_wait_;
  Family<Histogram>& extend_duration_;
  Family<Histogram>& hold_duration_;
  Family<Histogram>& request_duration_;
  Family<Gauge>& locks_held_;
  Family<Gauge>& master_connected_;
  Family<Gauge>& master_grants_counted_;

  Histogram* attempt_duration_series_ = nullptr;
  Histogram* extend_duration_series_ = nullptr;
  Histogram* hold_duration_series_ = nullptr;
  Gauge* total_held_series_ = nullptr;  // Without the resource label.

  // Guards the maps below. std::mutex rather than absl::Mutex:
  // ThreadSanitizer sees through it even with Debian's uninstrumented Abseil.
  std::mutex mu_;
  absl::flat_hash_map<std::string, MasterSeries> masters_;
  absl::flat_hash_map<std::string, HeldCount> held_;
  int64_t total_held_ = 0;
};

absl::StatusOr<std::shared_ptr<PrometheusObserver>> PrometheusObserver::Create(
    std::shared_ptr<prometheus::Registry> registry, PrometheusOptions options) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError("PrometheusObserver: registry is null");
  }
  for (const auto& [name, value] : options.const_labels) {
    for (const char* reserved : kReservedLabels) {
      if (name == reserved) {
        return absl::InvalidArgumentError(
            absl::StrCat("PrometheusObserver: constant label \"", name,
                         "\" is one the observer sets itself"));
      }
    }
    if (!prometheus::CheckLabelName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PrometheusObserver: invalid constant label name \"", name, "\""));
    }
  }
  // prometheus-cpp reports a conflicting family by throwing; nothing is
  // thrown across this API.
  try {
    auto metrics =
        std::make_unique<Metrics>(std::move(registry), std::move(options));
    return std::shared_ptr<PrometheusObserver>(
        new PrometheusObserver(std::move(metrics)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PrometheusObserver: cannot register the metrics: ", e.what()));
  }
}

PrometheusObserver::PrometheusObserver(std::unique_ptr<Metrics> metrics)
    : metrics_(std::move(metrics)) {}

PrometheusObserver::~PrometheusObserver() = default;

absl::Status PrometheusObserver::AddMasters(
    const std::vector<std::string>& master_uris) {
  for (const std::string& uri : master_uris) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return address.status();
    metrics_->AddMaster(address->Name());
  }
  return absl::OkStatus();
}

void PrometheusObserver::OnAttempt(const AttemptEvent& event) {
  metrics_->OnAttempt(event);
}
void PrometheusObserver::OnAcquired(const AcquiredEvent& event) {
  metrics_->OnAcquired(event);
}
void PrometheusObserver::OnAcquireFailed(const AcquireFailedEvent& event) {
  metrics_->OnAcquireFailed(event);
}
void PrometheusObserver::OnExtended(const ExtendedEvent& event) {
  metrics_->OnExtended(event);
}
void PrometheusObserver::OnLost(const LostEvent& event) {
  metrics_->OnLost(event);
}
void PrometheusObserver::OnReleased(const ReleasedEvent& event) {
  metrics_->OnReleased(event);
}
void PrometheusObserver::OnMaster(const MasterEvent& event) {
  metrics_->OnMaster(event);
}

}  // namespace redlock
