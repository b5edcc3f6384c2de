// Copyright 2026 The redlock Authors.
//
// PrometheusObserver (redlock/prometheus.h): hand-made events in, the
// registry's text exposition out, exact values checked; then a real client
// on real masters, scraped over HTTP from prometheus::Exposer.

#include "redlock/prometheus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tests/support/redis_server.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using Labels = std::map<std::string, std::string>;

// --- the text exposition format, read back ----------------------------------

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

// Samples of a text exposition (comments skipped); label values unescaped.
// A line that does not parse fails the test.
std::vector<Sample> ParseExposition(absl::string_view text) {
  std::vector<Sample> samples;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    Sample sample;
    size_t pos = line.find_first_of("{ ");
    if (pos == absl::string_view::npos) {
      ADD_FAILURE() << "bad line: " << line;
      continue;
    }
    sample.name = std::string(line.substr(0, pos));
    if (line[pos] == '{') {
      ++pos;
      while (pos < line.size() && line[pos] != '}') {
        const size_t eq = line.find("=\"", pos);
        if (eq == absl::string_view::npos) break;
        std::string name(line.substr(pos, eq - pos));
        std::string value;
        size_t i = eq + 2;
        for (; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] == '\\' && i + 1 < line.size()) {
            ++i;
            value.push_back(line[i] == 'n' ? '\n' : line[i]);
          } else {
            value.push_back(line[i]);
          }
        }
        sample.labels[name] = value;
        pos = i + 1;
        if (pos < line.size() && line[pos] == ',') ++pos;
      }
      ++pos;  // '}'
    }
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(std::min(pos, line.size())));
    if (!absl::SimpleAtod(value, &sample.value)) {
      ADD_FAILURE() << "bad value in line: " << line;
      continue;
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

class Exposition {
 public:
  explicit Exposition(absl::string_view text)
      : text_(text), samples_(ParseExposition(text)) {}

  // The sample with exactly these labels; nullopt if there is none.
  std::optional<double> Get(absl::string_view name,
                            const Labels& labels = {}) const {
    for (const Sample& s : samples_) {
      if (s.name == name && s.labels == labels) return s.value;
    }
    return std::nullopt;
  }

  // The sum of the samples whose labels include `labels`.
  double Sum(absl::string_view name, const Labels& labels = {}) const {
    double sum = 0;
    for (const Sample& s : samples_) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = s.labels.find(k);
        match &= it != s.labels.end() && it->second == v;
      }
      if (match) sum += s.value;
    }
    return sum;
  }

  // How many series `name` has.
  int Series(absl::string_view name) const {
    int n = 0;
    for (const Sample& s : samples_) n += s.name == name ? 1 : 0;
    return n;
  }

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<Sample> samples_;
};

Exposition Serialize(const prometheus::Registry& registry) {
  return Exposition(prometheus::TextSerializer().Serialize(registry.Collect()));
}

// --- hand-made events -------------------------------------------------------

constexpr char kM1[] = "127.0.0.1:7001";
constexpr char kM2[] = "127.0.0.1:7002";
constexpr char kM3[] = "127.0.0.1:7003";

MasterVote Vote(const std::string& master, MasterVote::Kind kind,
                absl::Duration latency, absl::Status error = absl::OkStatus()) {
  MasterVote vote;
  vote.master = master;
  vote.kind = kind;
  vote.latency = latency;
  vote.error = std::move(error);
  return vote;
}

MasterVote Granted(const std::string& master, absl::Duration latency) {
  return Vote(master, MasterVote::Kind::kGranted, latency);
}
MasterVote Denied(const std::string& master, absl::Duration latency) {
  return Vote(master, MasterVote::Kind::kDenied, latency);
}
MasterVote Pending(const std::string& master) {
  return Vote(master, MasterVote::Kind::kPending, absl::ZeroDuration());
}
MasterVote Failed(const std::string& master, absl::Duration latency,
                  absl::Status error) {
  return Vote(master, MasterVote::Kind::kFailed, latency, std::move(error));
}
// A grant the restart guard did not count, worded as the engine words it.
MasterVote GuardVeto(const std::string& master, absl::Duration latency) {
  return Failed(master, latency,
                absl::FailedPreconditionError(
                    "restart guard: this master lost its data when it "
                    "restarted 12s ago; its grants count again in 59m48s"));
}
MasterVote Timeout(const std::string& master, absl::Duration latency) {
  return Failed(master, latency,
                absl::DeadlineExceededError("no reply within 50ms"));
}

class PrometheusObserverTest : public ::testing::Test {
 protected:
  void SetUp() override { Make({}); }

  void Make(PrometheusOptions options) {
    registry_ = std::make_shared<prometheus::Registry>();
    auto observer = PrometheusObserver::Create(registry_, std::move(options));
    ASSERT_TRUE(observer.ok()) << observer.status();
    observer_ = *std::move(observer);
  }

  void Attempt(absl::string_view resource, absl::Status outcome,
               absl::Duration elapsed, const std::vector<MasterVote>& votes) {
    AttemptEvent e;
    e.resource = resource;
    e.attempt = 1;
    e.outcome = std::move(outcome);
    e.elapsed = elapsed;
    e.votes = &votes;
    observer_->OnAttempt(e);
  }
  void Acquired(absl::string_view resource,
                absl::Duration wait = absl::Milliseconds(2)) {
    AcquiredEvent e;
    e.resource = resource;
    e.attempts = 1;
    e.wait = wait;
    observer_->OnAcquired(e);
  }
  void AcquireFailed(absl::string_view resource, absl::Status status,
                     absl::Duration wait = absl::Milliseconds(3)) {
    AcquireFailedEvent e;
    e.resource = resource;
    e.status = std::move(status);
    e.attempts = 1;
    e.wait = wait;
    observer_->OnAcquireFailed(e);
  }
  void Extended(absl::string_view resource, absl::Status status,
                bool keep_alive, const std::vector<MasterVote>& votes) {
    ExtendedEvent e;
    e.resource = resource;
    e.status = std::move(status);
    e.elapsed = absl::Milliseconds(1);
    e.votes = &votes;
    e.keep_alive = keep_alive;
    observer_->OnExtended(e);
  }
  void Lost(absl::string_view resource, absl::Status reason) {
    LostEvent e;
    e.resource = resource;
    e.reason = std::move(reason);
    observer_->OnLost(e);
  }
  void Released(absl::string_view resource, bool freed = true,
                std::vector<MasterVote> votes = {},
                absl::Duration held_for = absl::Seconds(1)) {
    ReleaseReport report;
    report.freed = freed;
    report.votes = std::move(votes);
    ReleasedEvent e;
    e.resource = resource;
    e.report = &report;
    e.held_for = held_for;
    observer_->OnReleased(e);
  }
  void Master(const std::string& master, MasterEvent::Kind kind,
              absl::Status status = absl::OkStatus()) {
    MasterEvent e;
    e.kind = kind;
    e.master = master;
    e.status = std::move(status);
    observer_->OnMaster(e);
  }

  Exposition Scrape() const { return Serialize(*registry_); }

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<PrometheusObserver> observer_;
};

TEST_F(PrometheusObserverTest, AcquisitionsAreCountedByTheirStatusCode) {
  Acquired("a", absl::Milliseconds(4));
  Acquired("b", absl::Milliseconds(6));
  AcquireFailed("a", absl::AbortedError("held"), absl::Milliseconds(30));
  AcquireFailed("a", absl::AbortedError("held"), absl::Milliseconds(20));
  AcquireFailed("c", absl::UnavailableError("too few"));
  AcquireFailed("c", absl::DeadlineExceededError("too late"));
  AcquireFailed("d", absl::CancelledError("cancelled"));

  const Exposition m = Scrape();
  const char kName[] = "redlock_acquisitions_total";
  EXPECT_EQ(m.Get(kName, {{"outcome", "ok"}}), 2) << m.text();
  EXPECT_EQ(m.Get(kName, {{"outcome", "aborted"}}), 2);
  EXPECT_EQ(m.Get(kName, {{"outcome", "unavailable"}}), 1);
  EXPECT_EQ(m.Get(kName, {{"outcome", "deadline_exceeded"}}), 1);
  EXPECT_EQ(m.Get(kName, {{"outcome", "cancelled"}}), 1);
  EXPECT_EQ(m.Get(kName, {{"outcome", "internal"}}), 0);
  const char kWait[] = "redlock_acquire_wait_seconds_count";
  EXPECT_EQ(m.Get(kWait, {{"outcome", "ok"}}), 2);
  EXPECT_EQ(m.Get(kWait, {{"outcome", "aborted"}}), 2);
  EXPECT_DOUBLE_EQ(
      *m.Get("redlock_acquire_wait_seconds_sum", {{"outcome", "aborted"}}),
      0.05);
  EXPECT_EQ(m.Get("redlock_acquire_wait_seconds_bucket",
                  {{"outcome", "ok"}, {"le", "0.005"}}),
            1);
  EXPECT_EQ(m.Get("redlock_acquire_wait_seconds_bucket",
                  {{"outcome", "ok"}, {"le", "0.01"}}),
            2);
}

TEST_F(PrometheusObserverTest, AttemptsAreCountedByOutcomeWithTheirDuration) {
  const std::vector<MasterVote> won = {Granted(kM1, absl::Microseconds(300)),
                                       Granted(kM2, absl::Microseconds(400)),
                                       Pending(kM3)};
  const std::vector<MasterVote> lost = {Denied(kM1, absl::Microseconds(200)),
                                        Denied(kM2, absl::Microseconds(300)),
                                        Granted(kM3, absl::Microseconds(900))};
  Attempt("a", absl::OkStatus(), absl::Microseconds(400), won);
  Attempt("a", absl::AbortedError(""), absl::Microseconds(900), lost);
  Attempt("a", absl::AbortedError(""), absl::Milliseconds(20), lost);

  const Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_acquire_attempts_total", {{"outcome", "ok"}}), 1)
      << m.text();
  EXPECT_EQ(m.Get("redlock_acquire_attempts_total", {{"outcome", "aborted"}}),
            2);
  EXPECT_EQ(
      m.Get("redlock_acquire_attempts_total", {{"outcome", "unavailable"}}), 0);
  EXPECT_EQ(m.Get("redlock_acquire_attempt_duration_seconds_count"), 3);
  EXPECT_EQ(m.Get("redlock_acquire_attempt_duration_seconds_bucket",
                  {{"le", "0.0005"}}),
            1);
  EXPECT_EQ(m.Get("redlock_acquire_attempt_duration_seconds_bucket",
                  {{"le", "0.001"}}),
            2);
  EXPECT_EQ(m.Get("redlock_acquire_attempt_duration_seconds_bucket",
                  {{"le", "+Inf"}}),
            3);
  // Every master's vote, by kind; pending votes have no latency to observe.
  const char kVotes[] = "redlock_master_votes_total";
  EXPECT_EQ(
      m.Get(kVotes, {{"master", kM1}, {"op", "acquire"}, {"vote", "granted"}}),
      1);
  EXPECT_EQ(
      m.Get(kVotes, {{"master", kM1}, {"op", "acquire"}, {"vote", "denied"}}),
      2);
  EXPECT_EQ(
      m.Get(kVotes, {{"master", kM3}, {"op", "acquire"}, {"vote", "pending"}}),
      1);
  EXPECT_EQ(
      m.Get(kVotes, {{"master", kM3}, {"op", "acquire"}, {"vote", "granted"}}),
      2);
  const char kLatency[] = "redlock_master_request_duration_seconds_count";
  EXPECT_EQ(m.Get(kLatency, {{"master", kM1}, {"op", "acquire"}}), 3);
  EXPECT_EQ(m.Get(kLatency, {{"master", kM3}, {"op", "acquire"}}), 2);
  EXPECT_DOUBLE_EQ(*m.Get("redlock_master_request_duration_seconds_sum",
                          {{"master", kM3}, {"op", "acquire"}}),
                   0.0018);
}

TEST_F(PrometheusObserverTest,
       GuardVetoesAndTimeoutsAreCountedPerMasterFromVotes) {
  // m2's grant vetoed by the restart guard, m3 timed out.
  const std::vector<MasterVote> attempt = {
      Granted(kM1, absl::Microseconds(300)),
      GuardVeto(kM2, absl::Microseconds(350)),
      Timeout(kM3, absl::Milliseconds(50))};
  Attempt("a", absl::UnavailableError(""), absl::Milliseconds(50), attempt);
  Attempt("a", absl::UnavailableError(""), absl::Milliseconds(50), attempt);
  // Failures that are neither: a second address of one server, a refused
  // connection.
  const std::vector<MasterVote> other = {
      Granted(kM1, absl::Microseconds(300)),
      Failed(kM2, absl::Microseconds(10),
             absl::FailedPreconditionError(
                 "same server as 127.0.0.1:7001, which granted already: one "
                 "server casts one vote")),
      Failed(kM3, absl::ZeroDuration(),
             absl::UnavailableError("Connection refused"))};
  Attempt("a", absl::UnavailableError(""), absl::Microseconds(300), other);
  // An extension's vetoed grant counts too; a release's timeout counts.
  Extended("a", absl::OkStatus(), /*keep_alive=*/true,
           {Granted(kM1, absl::Microseconds(300)),
            GuardVeto(kM2, absl::Microseconds(300)),
            Granted(kM3, absl::Microseconds(300))});
  Released("a", /*freed=*/true,
           {Granted(kM1, absl::Microseconds(200)),
            Granted(kM2, absl::Microseconds(200)),
            Timeout(kM3, absl::Milliseconds(50))});

  const Exposition m = Scrape();
  const char kVetoes[] = "redlock_restart_guard_vetoes_total";
  EXPECT_EQ(m.Get(kVetoes, {{"master", kM1}}), 0) << m.text();
  EXPECT_EQ(m.Get(kVetoes, {{"master", kM2}}), 3);
  EXPECT_EQ(m.Get(kVetoes, {{"master", kM3}}), 0);
  const char kTimeouts[] = "redlock_master_timeouts_total";
  EXPECT_EQ(m.Get(kTimeouts, {{"master", kM1}}), 0);
  EXPECT_EQ(m.Get(kTimeouts, {{"master", kM2}}), 0);
  EXPECT_EQ(m.Get(kTimeouts, {{"master", kM3}}), 3);
  // A refused connection is a failed vote without a request latency; a
  // timeout's latency is observed.
  const char kLatency[] = "redlock_master_request_duration_seconds_count";
  EXPECT_EQ(m.Get(kLatency, {{"master", kM3}, {"op", "acquire"}}), 2);
  EXPECT_EQ(m.Get(kLatency, {{"master", kM3}, {"op", "release"}}), 1);
  EXPECT_EQ(m.Get("redlock_master_votes_total",
                  {{"master", kM3}, {"op", "acquire"}, {"vote", "failed"}}),
            3);
  EXPECT_EQ(m.Get("redlock_master_votes_total",
                  {{"master", kM2}, {"op", "extend"}, {"vote", "failed"}}),
            1);
}

TEST_F(PrometheusObserverTest, ExtensionsAreCountedByOutcomeAndKeepAlive) {
  const std::vector<MasterVote> votes = {Granted(kM1, absl::Microseconds(100))};
  Extended("a", absl::OkStatus(), /*keep_alive=*/true, votes);
  Extended("a", absl::OkStatus(), /*keep_alive=*/true, votes);
  Extended("a", absl::OkStatus(), /*keep_alive=*/false, votes);
  Extended("a", absl::AbortedError("lost"), /*keep_alive=*/true, votes);

  const Exposition m = Scrape();
  const char kName[] = "redlock_extensions_total";
  EXPECT_EQ(m.Get(kName, {{"outcome", "ok"}, {"keep_alive", "true"}}), 2)
      << m.text();
  EXPECT_EQ(m.Get(kName, {{"outcome", "ok"}, {"keep_alive", "false"}}), 1);
  EXPECT_EQ(m.Get(kName, {{"outcome", "aborted"}, {"keep_alive", "true"}}), 1);
  EXPECT_EQ(m.Get(kName, {{"outcome", "aborted"}, {"keep_alive", "false"}}), 0);
  EXPECT_EQ(m.Get("redlock_extend_duration_seconds_count"), 4);
  EXPECT_EQ(m.Get("redlock_master_votes_total",
                  {{"master", kM1}, {"op", "extend"}, {"vote", "granted"}}),
            4);
}

TEST_F(PrometheusObserverTest, LocksHeldRisesOnAcquireAndFallsOnReleaseOrLoss) {
  Acquired("a");
  Acquired("a");  // A second client's lock of the same resource.
  Acquired("b");
  EXPECT_EQ(Scrape().Get("redlock_locks_held", {{"resource", "a"}}), 2);
  EXPECT_EQ(Scrape().Get("redlock_locks_held", {{"resource", "b"}}), 1);

  Released("a");
  Lost("b", absl::UnavailableError("extension failed"));
  Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "a"}}), 1) << m.text();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "b"}}), 0);
  EXPECT_EQ(m.Get("redlock_lost_locks_total", {{"reason", "unavailable"}}), 1);
  EXPECT_EQ(m.Get("redlock_lost_locks_total", {{"reason", "aborted"}}), 0);

  // The release that follows a loss does not take the lock off again.
  Released("b", /*freed=*/false);
  Acquired("b");
  m = Scrape();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "b"}}), 1) << m.text();
  Released("b");
  Released("a");
  m = Scrape();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "a"}}), 0) << m.text();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "b"}}), 0);
  EXPECT_EQ(m.Get("redlock_releases_total", {{"freed", "true"}}), 3);
  EXPECT_EQ(m.Get("redlock_releases_total", {{"freed", "false"}}), 1);
  EXPECT_EQ(m.Get("redlock_lock_hold_duration_seconds_count"), 4);

  // Two locks of one resource, one lost: the lost one's release leaves the
  // other counted.
  Acquired("c");
  Acquired("c");
  Lost("c", absl::AbortedError("taken"));
  EXPECT_EQ(Scrape().Get("redlock_locks_held", {{"resource", "c"}}), 1);
  Released("c", /*freed=*/false);
  EXPECT_EQ(Scrape().Get("redlock_locks_held", {{"resource", "c"}}), 1);
  Released("c");
  EXPECT_EQ(Scrape().Get("redlock_locks_held", {{"resource", "c"}}), 0);
}

TEST_F(PrometheusObserverTest,
       ReleaseOrLossOfALockNeverSeenAcquiredChangesNoGauge) {
  // Adopt(): a token acquired by another process, extended and released here.
  Released("adopted");
  Lost("adopted", absl::AbortedError("gone"));
  Acquired("adopted");
  Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", "adopted"}}), 1)
      << m.text();
  EXPECT_EQ(m.Get("redlock_lost_locks_total", {{"reason", "aborted"}}), 1);
}

TEST_F(PrometheusObserverTest, WithoutTheResourceLabelLocksHeldIsOneSeries) {
  PrometheusOptions options;
  options.resource_label = false;
  Make(options);
  EXPECT_EQ(Scrape().Get("redlock_locks_held"), 0);
  Acquired("a");
  Acquired("b");
  Acquired("c");
  Lost("c", absl::DeadlineExceededError("margin"));
  Released("c");
  Released("a");
  const Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_locks_held"), 1) << m.text();
  EXPECT_EQ(m.Series("redlock_locks_held"), 1);
}

TEST_F(PrometheusObserverTest, MasterEventsSetItsGaugesAndCountConnections) {
  Master(kM1, MasterEvent::Kind::kConnected);
  Master(kM1, MasterEvent::Kind::kJudged);
  Master(kM2, MasterEvent::Kind::kConnected);
  Master(kM2, MasterEvent::Kind::kJudged);
  Master(kM2, MasterEvent::Kind::kDisconnected,
         absl::UnavailableError("connection closed by the server"));
  Master(kM2, MasterEvent::Kind::kJudged,
         absl::FailedPreconditionError("restart guard: not yet judged"));
  Master(kM2, MasterEvent::Kind::kConnected);

  const Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_master_connected", {{"master", kM1}}), 1)
      << m.text();
  EXPECT_EQ(m.Get("redlock_master_connected", {{"master", kM2}}), 1);
  EXPECT_EQ(m.Get("redlock_master_grants_counted", {{"master", kM1}}), 1);
  EXPECT_EQ(m.Get("redlock_master_grants_counted", {{"master", kM2}}), 0);
  EXPECT_EQ(m.Get("redlock_master_connects_total", {{"master", kM1}}), 1);
  EXPECT_EQ(m.Get("redlock_master_connects_total", {{"master", kM2}}), 2);
  EXPECT_EQ(m.Get("redlock_master_disconnects_total", {{"master", kM1}}), 0);
  EXPECT_EQ(m.Get("redlock_master_disconnects_total", {{"master", kM2}}), 1);

  Master(kM2, MasterEvent::Kind::kDisconnected, absl::UnavailableError(""));
  EXPECT_EQ(Scrape().Get("redlock_master_connected", {{"master", kM2}}), 0);
}

TEST_F(PrometheusObserverTest, AddMastersCreatesEachMastersSeriesAtZero) {
  ASSERT_TRUE(observer_
                  ->AddMasters({"redis://127.0.0.1:7001",
                                "redis://:secret@127.0.0.1:7002/3"})
                  .ok());
  const Exposition m = Scrape();
  for (const char* master : {"127.0.0.1:7001", "127.0.0.1:7002/3"}) {
    SCOPED_TRACE(master);
    EXPECT_EQ(m.Get("redlock_master_connected", {{"master", master}}), 0)
        << m.text();
    EXPECT_EQ(m.Get("redlock_master_grants_counted", {{"master", master}}), 0);
    EXPECT_EQ(m.Get("redlock_master_timeouts_total", {{"master", master}}), 0);
    EXPECT_EQ(m.Get("redlock_restart_guard_vetoes_total", {{"master", master}}),
              0);
    EXPECT_EQ(
        m.Get("redlock_master_votes_total",
              {{"master", master}, {"op", "release"}, {"vote", "pending"}}),
        0);
  }
  EXPECT_FALSE(absl::StrContains(m.text(), "secret"));
  EXPECT_EQ(m.Series("redlock_master_connected"), 2);

  const absl::Status bad =
      observer_->AddMasters({"redis://127.0.0.1:7003", "http://nope"});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_EQ(Scrape().Series("redlock_master_connected"), 3);
}

TEST_F(PrometheusObserverTest, ConstantLabelsAreOnEverySeries) {
  PrometheusOptions options;
  options.const_labels = {{"service", "billing"}};
  Make(options);
  Acquired("a");
  Master(kM1, MasterEvent::Kind::kConnected);
  const Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_acquisitions_total",
                  {{"outcome", "ok"}, {"service", "billing"}}),
            1)
      << m.text();
  EXPECT_EQ(m.Get("redlock_master_connected",
                  {{"master", kM1}, {"service", "billing"}}),
            1);
  EXPECT_EQ(
      m.Get("redlock_locks_held", {{"resource", "a"}, {"service", "billing"}}),
      1);
}

TEST_F(PrometheusObserverTest, CreateRefusesBadInputWithoutThrowing) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(PrometheusObserver::Create(nullptr).status()));
  PrometheusOptions reserved;
  reserved.const_labels = {{"master", "x"}};
  EXPECT_TRUE(absl::IsInvalidArgument(
      PrometheusObserver::Create(registry_, reserved).status()));
  PrometheusOptions invalid;
  invalid.const_labels = {{"not a label", "x"}};
  EXPECT_TRUE(absl::IsInvalidArgument(
      PrometheusObserver::Create(registry_, invalid).status()));
  // One registry, two sets of constant labels: prometheus-cpp refuses the
  // second family of the same name.
  PrometheusOptions other;
  other.const_labels = {{"service", "other"}};
  const auto conflict = PrometheusObserver::Create(registry_, other);
  EXPECT_TRUE(absl::IsInvalidArgument(conflict.status())) << conflict.status();
  // The same constant labels: both observers update the same series.
  auto second = PrometheusObserver::Create(registry_);
  ASSERT_TRUE(second.ok()) << second.status();
  AcquiredEvent e;
  e.resource = "a";
  (*second)->OnAcquired(e);
  Acquired("b");
  EXPECT_EQ(Scrape().Get("redlock_acquisitions_total", {{"outcome", "ok"}}), 2);
}

TEST_F(PrometheusObserverTest, EventsFromManyThreadsWhileScrapedAddUpExactly) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) (void)Scrape();
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string resource = absl::StrCat("r", t % 2);
      const std::string master = absl::StrCat("127.0.0.1:", 7000 + t);
      const std::vector<MasterVote> votes = {
          Granted(master, absl::Microseconds(100)),
          Timeout(kM1, absl::Milliseconds(50))};
      for (int i = 0; i < kRounds; ++i) {
        Attempt(resource, absl::OkStatus(), absl::Microseconds(200), votes);
        Acquired(resource);
        Master(master, i % 2 == 0 ? MasterEvent::Kind::kConnected
                                  : MasterEvent::Kind::kDisconnected);
        if (i % 10 == 0) Lost(resource, absl::AbortedError(""));
        Released(resource);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done = true;
  scraper.join();
  const Exposition m = Scrape();
  EXPECT_EQ(m.Get("redlock_acquisitions_total", {{"outcome", "ok"}}),
            kThreads * kRounds);
  EXPECT_EQ(m.Get("redlock_acquire_attempts_total", {{"outcome", "ok"}}),
            kThreads * kRounds);
  EXPECT_EQ(m.Get("redlock_master_timeouts_total", {{"master", kM1}}),
            kThreads * kRounds);
  EXPECT_EQ(m.Sum("redlock_master_connects_total"), kThreads * kRounds / 2);
  EXPECT_EQ(m.Sum("redlock_locks_held"), 0) << m.text();
  EXPECT_EQ(m.Get("redlock_releases_total", {{"freed", "true"}}),
            kThreads * kRounds);
}

// --- a real client on real masters, scraped over HTTP -----------------------

// GET http://127.0.0.1:port/path over a plain socket, HTTP/1.0 (the server
// closes the connection after the response). Every step is bounded by
// `timeout` in all. The body on 200; an error status otherwise.
absl::StatusOr<std::string> HttpGet(int port, absl::string_view path,
                                    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto wait_for = [&](short events) -> absl::Status {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return absl::DeadlineExceededError("GET timed out");
    pollfd p = {fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(ms));
    if (n == 0) return absl::DeadlineExceededError("GET timed out");
    if (n < 0) return absl::InternalError("poll failed");
    return absl::OkStatus();
  };
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) return absl::UnavailableError("connect failed");
    if (absl::Status s = wait_for(POLLOUT); !s.ok()) return s;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return absl::UnavailableError("connect failed");
  }
  const std::string request =
      absl::StrCat("GET ", path,
                   " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  size_t sent = 0;
  while (sent < request.size()) {
    if (absl::Status s = wait_for(POLLOUT); !s.ok()) return s;
    const ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) return absl::UnavailableError("send failed");
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string response;
  char buffer[4096];
  while (true) {
    if (absl::Status s = wait_for(POLLIN); !s.ok()) return s;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN) continue;
      return absl::UnavailableError("recv failed");
    }
    response.append(buffer, static_cast<size_t>(n));
  }
  const size_t end = response.find("\r\n\r\n");
  if (end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no header end in: ", response));
  }
  const absl::string_view head = absl::string_view(response).substr(0, end);
  if (!absl::StartsWith(head, "HTTP/1.1 200") &&
      !absl::StartsWith(head, "HTTP/1.0 200")) {
    return absl::UnavailableError(absl::StrCat("not 200: ", head));
  }
  if (absl::StrContains(absl::AsciiStrToLower(head), "chunked")) {
    return absl::UnimplementedError("chunked response");
  }
  return response.substr(end + 4);
}

class PrometheusEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      uris_ = RedisServer::ExternalMasters();
    } else {
      auto cluster = RedisCluster::Start(3);
      ASSERT_TRUE(cluster.ok()) << cluster.status();
      cluster_ = *std::move(cluster);
      uris_ = cluster_->Uris();
    }
  }

  std::vector<std::string> uris_;
  std::unique_ptr<RedisCluster> cluster_;
};

// Waits (bounded) until `done` is true.
template <typename F>
bool Eventually(F done, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST_F(PrometheusEndToEndTest, ScrapeOverHttpShowsWhatTheClientDid) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto observer = PrometheusObserver::Create(registry);
  ASSERT_TRUE(observer.ok()) << observer.status();
  ASSERT_TRUE((*observer)->AddMasters(uris_).ok());
  prometheus::Exposer exposer("127.0.0.1:0", /*num_threads=*/1);
  exposer.RegisterCollectable(registry);
  ASSERT_EQ(exposer.GetListeningPorts().size(), 1u);
  const int port = exposer.GetListeningPorts().front();
  ASSERT_GT(port, 0);

  Options options;
  options.masters = uris_;
  options.request_timeout = absl::Milliseconds(500);
  options.connect_timeout = absl::Milliseconds(500);
  options.stalled_connection_timeout = absl::Seconds(5);
  options.observer = *observer;
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  const int n = static_cast<int>(uris_.size());
  // Every master judged first: no grant of the test's is vetoed.
  ASSERT_TRUE(Eventually([&] {
    for (const MasterHealth& h : (*client)->Health()) {
      if (!h.grants_count.ok()) return false;
    }
    return true;
  }));

  // Unique names: external masters may be shared.
  const std::string tag =
      absl::StrCat(getpid(), "-", absl::ToUnixMicros(absl::Now()));
  const std::vector<std::string> resources = {absl::StrCat("prom-a-", tag),
                                              absl::StrCat("prom-b-", tag),
                                              absl::StrCat("prom-c-", tag)};
  std::vector<Lock> locks;
  for (const std::string& resource : resources) {
    absl::StatusOr<Lock> lock =
        (*client)->TryAcquire(resource, absl::Seconds(20));
    ASSERT_TRUE(lock.ok()) << lock.status();
    locks.push_back(*lock);
  }
  const absl::StatusOr<Lock> refused =
      (*client)->TryAcquire(resources[0], absl::Seconds(20));
  ASSERT_TRUE(absl::IsAborted(refused.status())) << refused.status();

  // Held now: one of each.
  {
    absl::StatusOr<std::string> body =
        HttpGet(port, "/metrics", absl::Seconds(5));
    ASSERT_TRUE(body.ok()) << body.status();
    const Exposition m(*body);
    for (const std::string& resource : resources) {
      EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", resource}}), 1)
          << *body;
    }
  }
  for (const Lock& lock : locks) {
    absl::StatusOr<ReleaseReport> report = (*client)->Release(lock);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_TRUE(report->freed);
  }

  // The masters' gauges follow events the client reports on its own loop:
  // scrape until they are all in (bounded), then check everything.
  std::optional<Exposition> scraped;
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<std::string> body =
        HttpGet(port, "/metrics", absl::Seconds(5));
    if (!body.ok()) return false;
    scraped.emplace(*body);
    return scraped->Sum("redlock_master_connected") == n &&
           scraped->Sum("redlock_master_grants_counted") == n;
  })) << (scraped.has_value() ? scraped->text() : "no scrape");
  const Exposition& m = *scraped;

  const char kAcquisitions[] = "redlock_acquisitions_total";
  EXPECT_EQ(m.Get(kAcquisitions, {{"outcome", "ok"}}), 3) << m.text();
  EXPECT_EQ(m.Get(kAcquisitions, {{"outcome", "aborted"}}), 1);
  EXPECT_EQ(m.Get(kAcquisitions, {{"outcome", "unavailable"}}), 0);
  EXPECT_EQ(m.Get(kAcquisitions, {{"outcome", "deadline_exceeded"}}), 0);
  EXPECT_EQ(m.Get("redlock_acquire_attempts_total", {{"outcome", "ok"}}), 3);
  EXPECT_EQ(m.Get("redlock_acquire_attempts_total", {{"outcome", "aborted"}}),
            1);
  EXPECT_EQ(m.Get("redlock_acquire_attempt_duration_seconds_count"), 4);
  EXPECT_EQ(m.Get("redlock_acquire_wait_seconds_count", {{"outcome", "ok"}}),
            3);
  EXPECT_EQ(
      m.Get("redlock_acquire_wait_seconds_count", {{"outcome", "aborted"}}), 1);
  EXPECT_EQ(m.Get("redlock_releases_total", {{"freed", "true"}}), 3);
  EXPECT_EQ(m.Get("redlock_releases_total", {{"freed", "false"}}), 0);
  EXPECT_EQ(m.Get("redlock_lock_hold_duration_seconds_count"), 3);
  for (const std::string& resource : resources) {
    EXPECT_EQ(m.Get("redlock_locks_held", {{"resource", resource}}), 0);
  }
  EXPECT_EQ(m.Sum("redlock_lost_locks_total"), 0);
  EXPECT_EQ(m.Sum("redlock_extensions_total"), 0);

  // Every attempt and release has one vote per master.
  EXPECT_EQ(m.Sum("redlock_master_votes_total", {{"op", "acquire"}}), 4 * n);
  EXPECT_EQ(m.Sum("redlock_master_votes_total", {{"op", "release"}}), 3 * n);
  const int quorum = n / 2 + 1;
  EXPECT_GE(m.Sum("redlock_master_votes_total",
                  {{"op", "acquire"}, {"vote", "granted"}}),
            3 * quorum);
  EXPECT_GE(m.Sum("redlock_master_votes_total",
                  {{"op", "acquire"}, {"vote", "denied"}}),
            n - quorum + 1);
  EXPECT_EQ(m.Sum("redlock_master_votes_total",
                  {{"op", "acquire"}, {"vote", "failed"}}),
            0);
  // A latency for each vote that was answered in time.
  EXPECT_EQ(m.Sum("redlock_master_request_duration_seconds_count",
                  {{"op", "acquire"}}),
            4 * n - m.Sum("redlock_master_votes_total",
                          {{"op", "acquire"}, {"vote", "pending"}}));
  for (const std::string& uri : uris_) {
    const std::string master = ParseMasterUri(uri)->Name();
    SCOPED_TRACE(master);
    EXPECT_EQ(m.Get("redlock_master_connected", {{"master", master}}), 1);
    EXPECT_EQ(m.Get("redlock_master_grants_counted", {{"master", master}}), 1);
    EXPECT_GE(m.Get("redlock_master_connects_total", {{"master", master}}), 1);
    EXPECT_EQ(m.Get("redlock_master_disconnects_total", {{"master", master}}),
              0);
    EXPECT_EQ(m.Get("redlock_master_timeouts_total", {{"master", master}}), 0);
    EXPECT_EQ(m.Get("redlock_restart_guard_vetoes_total", {{"master", master}}),
              0);
  }
}

}  // namespace
}  // namespace redlock
