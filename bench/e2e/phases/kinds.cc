// Copyright 2026 The redlock Authors.
//
// Kinds phase: the uncontended cycle (acquire, then the release awaited; one
// client, sequential) of a semaphore permit (limit 8, 1 permit) and of a
// reader of a read-write lock, each beside the plain lock's cycle on the
// same masters (N=5), with the same client kind. Per client kind (async:
// AsyncRedlock on this thread; blocking: redlock::Redlock), the lock, the
// semaphore and the reader run in interleaved blocks of the same size, the
// order rotating by round, so that noise hits all three alike; the headline
// is each one's p50 over the lock's p50 (same client kind, same run).
//
// Reports results.json's "kinds".

#include <sys/resource.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "redlock/redlock.h"

ABSL_FLAG(int, kinds_rounds, 12,
          "Kinds phase: rounds; each runs a block of the lock, the semaphore "
          "and the reader per client kind.");
ABSL_FLAG(int, kinds_block_cycles, 300, "Kinds phase: cycles per block.");
ABSL_FLAG(int, kinds_limit, 8, "Kinds phase: the semaphore's limit.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;

enum Kind { kLock = 0, kSemaphore = 1, kReader = 2 };
constexpr const char* kKindNames[] = {"lock", "semaphore", "reader"};
constexpr int kKinds = 3;

// How one cycle acquires: the kind decides the call.
struct Take {
  Kind kind = kLock;
  int limit = 8;
  absl::Duration ttl;
  AcquireOptions Options() const {
    AcquireOptions o;
    o.ttl = ttl;
    o.shared = kind == kReader;
    return o;
  }
  SemaphoreOptions Sem() const {
    SemaphoreOptions s;
    s.limit = limit;
    s.permits = 1;
    return s;
  }
};

// AsyncRedlock on an event_base this thread turns, as AsyncRunner, taking
// one kind.
class AsyncKindRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<AsyncKindRunner>> Create(
      redlock::Options options, std::string resource, Take take) {
    event_base* base = event_base_new();
    if (base == nullptr) return absl::InternalError("event_base_new failed");
    if (absl::Status s = ResolveMasterHosts(options); !s.ok()) {
      event_base_free(base);
      return s;
    }
    absl::StatusOr<std::unique_ptr<AsyncRedlock>> client =
        AsyncRedlock::Create(base, std::move(options));
    if (!client.ok()) {
      event_base_free(base);
      return client.status();
    }
    return std::unique_ptr<AsyncKindRunner>(new AsyncKindRunner(
        base, *std::move(client), std::move(resource), take));
  }

  ~AsyncKindRunner() override {
    client_.reset();
    event_base_free(base_);
  }

  absl::Status Cycle(CycleSample* sample) override {
    const SteadyTime t0 = Now();
    std::optional<absl::StatusOr<Lock>> lock;
    auto done = [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); };
    absl::Status s =
        take_.kind == kSemaphore
            ? client_->AcquirePermitsAsync(resource_, take_.Sem(),
                                           take_.Options(), done)
            : client_->AcquireAsync(resource_, take_.Options(), done);
    if (!s.ok()) return s;
    if (!RunUntil(
            base_, [&] { return lock.has_value(); }, absl::Seconds(5))) {
      return absl::DeadlineExceededError("async acquire: no callback in 5s");
    }
    if (!lock->ok()) return lock->status();
    const SteadyTime t1 = Now();
    std::optional<absl::StatusOr<ReleaseReport>> report;
    s = client_->ReleaseAsync(**lock,
                              [&report](absl::StatusOr<ReleaseReport> r) {
                                report.emplace(std::move(r));
                              });
    if (!s.ok()) return s;
    if (!RunUntil(
            base_, [&] { return report.has_value(); }, absl::Seconds(5))) {
      return absl::DeadlineExceededError("async release: no callback in 5s");
    }
    if (!report->ok()) return report->status();
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

  void Idle(absl::Duration d) override { RunFor(base_, d); }

 private:
  AsyncKindRunner(event_base* base, std::unique_ptr<AsyncRedlock> client,
                  std::string resource, Take take)
      : base_(base),
        client_(std::move(client)),
        resource_(std::move(resource)),
        take_(take) {}

  event_base* const base_;
  std::unique_ptr<AsyncRedlock> client_;
  const std::string resource_;
  const Take take_;
};

// The blocking Redlock, as BlockingRunner, taking one kind.
class BlockingKindRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<BlockingKindRunner>> Create(
      redlock::Options options, std::string resource, Take take) {
    absl::StatusOr<std::unique_ptr<Redlock>> client =
        Redlock::Create(std::move(options));
    if (!client.ok()) return client.status();
    return std::unique_ptr<BlockingKindRunner>(
        new BlockingKindRunner(*std::move(client), std::move(resource), take));
  }

  absl::Status Cycle(CycleSample* sample) override {
    const SteadyTime t0 = Now();
    absl::StatusOr<Lock> lock =
        take_.kind == kSemaphore
            ? client_->AcquirePermits(resource_, take_.Sem(), take_.Options())
            : client_->Acquire(resource_, take_.Options());
    if (!lock.ok()) return lock.status();
    const SteadyTime t1 = Now();
    absl::StatusOr<ReleaseReport> report = client_->Release(*lock);
    if (!report.ok()) return report.status();
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

  int cpu_scope() const override { return RUSAGE_SELF; }

 private:
  BlockingKindRunner(std::unique_ptr<Redlock> client, std::string resource,
                     Take take)
      : client_(std::move(client)),
        resource_(std::move(resource)),
        take_(take) {}

  std::unique_ptr<Redlock> client_;
  const std::string resource_;
  const Take take_;
};

struct KindConfig {
  Kind kind = kLock;
  std::unique_ptr<Runner> runner;
  Samples own;
  // The masters' counters over this kind's blocks (INFO before and after
  // each block, on each of the 5 masters; our own INFO taken off).
  MasterCounters masters;
  // The masters' CPU per cycle (INFO cpu, summed over the 5 masters): the
  // commands, the scripts and the network I/O.
  double MasterCpuUsPerCycle() const {
    return own.cpu_cycles > 0 ? 1e6 * masters.cpu.total() / own.cpu_cycles : 0;
  }
  // EVALSHA's own time per call (INFO commandstats usec / calls; it
  // includes the commands the script runs).
  double EvalshaUsPerCall() const {
    auto calls = masters.calls.find("evalsha");
    auto usec = masters.usec.find("evalsha");
    if (calls == masters.calls.end() || usec == masters.usec.end()) return 0;
    return Ratio(static_cast<double>(usec->second), calls->second);
  }
  double CommandsPerCycle() const {
    return own.cpu_cycles > 0
               ? static_cast<double>(masters.commands) / own.cpu_cycles
               : 0;
  }
};

// One client kind: its lock, semaphore and reader.
struct ClientSet {
  std::string client;  // async, blocking
  KindConfig kinds[kKinds];
  // Per round: this kind's block p50 over the lock's block p50.
  std::vector<double> round_ratio_p50[kKinds];
};

double CpuPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.total() / s.cpu_cycles : 0;
}

class KindsPhase : public Phase {
 public:
  explicit KindsPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_kinds_rounds)),
        block_cycles_(quick ? 60 : absl::GetFlag(FLAGS_kinds_block_cycles)),
        limit_(absl::GetFlag(FLAGS_kinds_limit)) {}

  absl::Status Run(Context& ctx) override {
    if (static_cast<int>(ctx.masters.size()) < kMasters) {
      skipped_ = "needs 5 masters";
      Log(absl::StrCat("kinds: skipped: ", skipped_));
      return absl::OkStatus();
    }
    ttl_ = ctx.ttl;
    std::vector<ContextPtr> info;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(ctx.masters[i].address);
      if (!c.ok()) {
        return absl::InternalError(
            absl::StrCat("kinds: INFO connection: ", c.status().ToString()));
      }
      info.push_back(*std::move(c));
    }
    for (const char* client : {"async", "blocking"}) {
      ClientSet set;
      set.client = client;
      for (int k = 0; k < kKinds; ++k) {
        const Kind kind = static_cast<Kind>(k);
        Take take{kind, limit_, ctx.ttl};
        const std::string resource =
            absl::StrCat("kinds-", client, "-", kKindNames[k]);
        redlock::Options options =
            ClientOptions(UrisOf(ctx.masters, kMasters), false);
        absl::StatusOr<std::unique_ptr<Runner>> runner;
        if (set.client == "async") {
          runner = AsyncKindRunner::Create(std::move(options), resource, take);
        } else {
          runner =
              BlockingKindRunner::Create(std::move(options), resource, take);
        }
        const std::string name = absl::StrCat(client, " ", kKindNames[k]);
        if (!runner.ok()) {
          return absl::InternalError(
              absl::StrCat("kinds: ", name, ": ", runner.status().ToString()));
        }
        set.kinds[k].kind = kind;
        set.kinds[k].runner = *std::move(runner);
        if (absl::Status s =
                WarmUp(*set.kinds[k].runner, 50, absl::Seconds(10));
            !s.ok()) {
          return absl::InternalError(
              absl::StrCat("kinds: ", name, ": ", s.ToString()));
        }
      }
      sets_.push_back(std::move(set));
    }
    Log(absl::StrCat("kinds: 2 clients x 3 kinds x ", rounds_, " rounds x ",
                     block_cycles_, " cycles, interleaved"));
    for (int round = 0; round < rounds_; ++round) {
      for (ClientSet& set : sets_) {
        double p50[kKinds] = {0, 0, 0};
        for (int j = 0; j < kKinds; ++j) {
          const int k = (j + round) % kKinds;  // Rotate the order.
          KindConfig& c = set.kinds[k];
          absl::StatusOr<MasterCounters> before = ReadAll(info);
          if (!before.ok()) return before.status();
          p50[k] = RunBlock(*c.runner, block_cycles_, c.own).p50_us;
          absl::StatusOr<MasterCounters> after = ReadAll(info);
          if (!after.ok()) return after.status();
          MasterCounters d = *after - *before;
          d.RemoveInfo(kMasters);
          c.masters += d;
        }
        for (int k = 0; k < kKinds; ++k) {
          if (p50[k] > 0 && p50[kLock] > 0) {
            set.round_ratio_p50[k].push_back(p50[k] / p50[kLock]);
          }
        }
      }
      Log(absl::StrCat("kinds round ", round + 1, "/", rounds_));
    }
    ran_ = true;
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["kinds_rounds"] = rounds_;
    settings["kinds_block_cycles"] = block_cycles_;
    settings["kinds_limit"] = limit_;
  }

  void AddTargets(std::vector<Target>& targets) const override {
    for (Kind k : {kSemaphore, kReader}) {
      for (const char* client : {"async", "blocking"}) {
        Target t = Unmeasured(absl::StrCat(
            "uncontended ",
            k == kSemaphore
                ? absl::StrCat("semaphore (limit ", limit_, ", 1 permit)")
                : std::string("reader"),
            " cycle p50 ≤ 1.2× the lock's cycle p50, N=5 (", client, ")"));
        if (const ClientSet* set = Find(client)) {
          const Dist own = Summarize(set->kinds[k].own.cycle_us);
          const Dist lock = Summarize(set->kinds[kLock].own.cycle_us);
          const double r = Ratio(own.p50, lock.p50);
          t = {t.what,
               absl::StrFormat("%s (%s vs %s µs; per round %s)", X(r),
                               Us(own.p50), Us(lock.p50),
                               Spread(set->round_ratio_p50[k], "—")),
               r > 0 && r <= 1.2, true};
        }
        targets.push_back(t);
      }
    }
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "Uncontended kinds skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md,
        "### Uncontended cycle of a semaphore permit and of a reader, beside "
        "the lock (one client, sequential, N=5)\n\n",
        "Acquire, then the release awaited, on the same 5 masters: the plain "
        "lock (`Acquire(R)`), one permit of a semaphore of limit ",
        limit_, " (`AcquirePermits(S, {limit ", limit_,
        ", permits 1})`) and a reader (`AcquireOptions::shared`), TTL ",
        absl::FormatDuration(ttl_),
        ", each on a resource of its own, one "
        "client per kind. ",
        rounds_, " rounds; in each, for each client kind, a block of ",
        block_cycles_,
        " cycles of each of the three, back to back, the order rotating by "
        "round. \"÷ lock\" is a kind's figure over the lock's (same client "
        "kind, same run). Times in µs.\n\n",
        "| configuration | cycles | p50 | p90 | p99 | p99.9 | acquire p50 | "
        "÷ lock p50 | ÷ lock p99 | ÷ lock p50 per round (min / median / max) | "
        "client CPU µs/cycle | masters' commands per cycle | masters' CPU µs "
        "per cycle | EVALSHA µs per call | errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|\n");
    for (const ClientSet& set : sets_) {
      const Dist lock = Summarize(set.kinds[kLock].own.cycle_us);
      for (int k = 0; k < kKinds; ++k) {
        const KindConfig& c = set.kinds[k];
        const Dist own = Summarize(c.own.cycle_us);
        const Dist acq = Summarize(c.own.acquire_us);
        absl::StrAppend(
            &md, "| ", set.client, " ", kKindNames[k], " | ", own.count, " | ",
            Us(own.p50), " | ", Us(own.p90), " | ", Us(own.p99), " | ",
            Us(own.p999), " | ", Us(acq.p50), " | ",
            k == kLock ? "" : X(Ratio(own.p50, lock.p50)), " | ",
            k == kLock ? "" : X(Ratio(own.p99, lock.p99)), " | ",
            k == kLock ? "" : Spread(set.round_ratio_p50[k], "—"), " | ",
            absl::StrFormat("%.1f | %.1f | %.1f | %.1f", CpuPerCycleUs(c.own),
                            c.CommandsPerCycle(), c.MasterCpuUsPerCycle(),
                            c.EvalshaUsPerCall()),
            " | ", c.own.errors, " |\n");
      }
    }
    absl::StrAppend(
        &md,
        "\nWhat each sends per master: the lock `SET NX PX` and the release "
        "script; the permit the semaphore acquire script (its KEYS are the "
        "limit key and all ",
        limit_,
        " slot keys; it checks each slot), the release script on its slot and "
        "a PUBLISH \"released\" on the semaphore's limit key (its waiters' "
        "channel); "
        "the reader the reader acquire script (checks the lock key and the "
        "writer's waiting key, sets the lock key, its own key and the readers' "
        "index) and the reader release script: per master and cycle, three "
        "requests for the permit and two for the others (seen with MONITOR). "
        "\"Masters' commands\" counts the commands run "
        "inside the scripts too (`total_commands_processed`, summed over the 5 "
        "masters); \"masters' CPU\" is their `used_cpu_user` + `used_cpu_sys` "
        "over the kind's blocks (summed over the 5 masters, network I/O "
        "included); \"EVALSHA µs per call\" is the masters' own time per "
        "script call (`INFO commandstats`: the lock's release, the others' "
        "acquire and release). The client CPU is RUSAGE_THREAD for async, "
        "RUSAGE_SELF for blocking.\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["masters"] = kMasters;
      j["limit"] = limit_;
      j["permits"] = 1;
      j["ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
      Json configs = Json::array();
      for (const ClientSet& set : sets_) {
        const Dist lock = Summarize(set.kinds[kLock].own.cycle_us);
        for (int k = 0; k < kKinds; ++k) {
          const KindConfig& c = set.kinds[k];
          const Dist own = Summarize(c.own.cycle_us);
          Json r = Json::object();
          r["name"] = absl::StrCat(set.client, " ", kKindNames[k]);
          r["client"] = set.client;
          r["kind"] = kKindNames[k];
          r["cycle"] = DistJson(own);
          r["acquire"] = DistJson(Summarize(c.own.acquire_us));
          r["ratio_p50_to_lock"] = Num(Ratio(own.p50, lock.p50));
          r["ratio_p99_to_lock"] = Num(Ratio(own.p99, lock.p99));
          r["round_ratio_p50_to_lock"] = Nums(set.round_ratio_p50[k]);
          r["cpu_us_per_cycle"] = Num(CpuPerCycleUs(c.own));
          r["master_commands_per_cycle"] = Num(c.CommandsPerCycle());
          r["master_cpu_us_per_cycle"] = Num(c.MasterCpuUsPerCycle());
          r["evalsha_us_per_call"] = Num(c.EvalshaUsPerCall());
          r["errors"] = c.own.errors;
          r["last_error"] = c.own.last_error;
          configs.push_back(std::move(r));
        }
      }
      j["configs"] = std::move(configs);
    }
    results["kinds"] = std::move(j);
  }

 private:
  static absl::StatusOr<MasterCounters> ReadAll(std::vector<ContextPtr>& info) {
    MasterCounters sum;
    for (ContextPtr& c : info) {
      absl::StatusOr<MasterCounters> one = ReadMasterCounters(c.get());
      if (!one.ok()) return one.status();
      sum += *one;
    }
    return sum;
  }

  const ClientSet* Find(absl::string_view client) const {
    if (!ran_) return nullptr;
    for (const ClientSet& s : sets_) {
      if (s.client == client) return &s;
    }
    return nullptr;
  }

  const int rounds_;
  const int block_cycles_;
  const int limit_;
  absl::Duration ttl_;
  bool ran_ = false;
  std::string skipped_;
  std::vector<ClientSet> sets_;
};

const RegisterPhase kRegistered(15, "kinds",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<KindsPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
