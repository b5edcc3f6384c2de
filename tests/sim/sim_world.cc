// Copyright 2026 The redlock Authors.

#include "tests/sim/sim_world.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "redlock/async_redlock.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "redlock/observer.h"
#include "src/admin/reconfigure.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"
#include "src/engine/election_ops.h"
#include "src/engine/engine.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_loop.h"
#include "tests/sim/sim_redis.h"
#include "tests/sim/unsafe_rules.h"

namespace redlock::sim {
namespace {

constexpr const char* kResources[2] = {"fenced", "plain"};
// PlannedOp::resource 2 (churn configurations only): both, as one lock.
constexpr int kBoth = 2;
// PlannedOp::resource 3 (WorldConfig::kSemaphore only): the semaphore.
constexpr int kPool = 3;
constexpr const char* kPoolName = "pool";
// PlannedOp::resource 4 (WorldConfig::kElection only): the election.
constexpr int kElection = 4;
constexpr const char* kElectionName = "leader";

// The resources (indexes into kResources) of a planned op's lock.
std::vector<int> ResourcesOf(int resource) {
  if (resource == kBoth) return {0, 1};
  return {resource};
}

// The name of one of ResourcesOf()'s elements (the semaphore's, or a
// resource's).
const char* NameOf(int resource) {
  if (resource == kElection) return kElectionName;
  return resource == kPool ? kPoolName : kResources[resource];
}

std::string ResourceName(int resource) {
  return resource == kBoth ? "fenced+plain" : NameOf(resource);
}

int64_t Ns(absl::Duration d) { return absl::ToInt64Nanoseconds(d); }

// The winning attempt's votes, one letter per master (torture::Section).
std::string VoteLetters(const std::vector<MasterVote>& votes) {
  std::string out;
  for (const MasterVote& v : votes) {
    switch (v.kind) {
      case MasterVote::Kind::kGranted:
        out += 'g';
        break;
      case MasterVote::Kind::kDenied:
        out += 'd';
        break;
      case MasterVote::Kind::kFailed:
        out += 'f';
        break;
      case MasterVote::Kind::kPending:
        out += 'p';
        break;
    }
  }
  return out;
}

absl::Duration Uniform(std::mt19937_64& rng, absl::Duration lo,
                       absl::Duration hi) {
  if (hi <= lo) return lo;
  std::uniform_int_distribution<int64_t> d(Ns(lo), Ns(hi));
  return absl::Nanoseconds(d(rng));
}

const char* OpName(PlannedOp::Kind kind) {
  switch (kind) {
    case PlannedOp::Kind::kWorkRelease:
      return "work-release";
    case PlannedOp::Kind::kExtend:
      return "extend";
    case PlannedOp::Kind::kKeepAlive:
      return "keep-alive";
    case PlannedOp::Kind::kPausedWriter:
      return "paused-writer";
    case PlannedOp::Kind::kLead:
      return "lead";
    case PlannedOp::Kind::kPausedLeader:
      return "paused-leader";
    case PlannedOp::Kind::kObserve:
      return "observe";
  }
  return "?";
}

const char* FaultName(PlannedFault::Kind kind) {
  switch (kind) {
    case PlannedFault::Kind::kCrashRestart:
      return "crash";
    case PlannedFault::Kind::kPause:
      return "pause";
    case PlannedFault::Kind::kSlowLink:
      return "slow-link";
    case PlannedFault::Kind::kResetConnections:
      return "reset";
    case PlannedFault::Kind::kRefuseConnects:
      return "refuse";
    case PlannedFault::Kind::kFastClock:
      return "fast-clock";
    case PlannedFault::Kind::kFlushScripts:
      return "script-flush";
    case PlannedFault::Kind::kCrashEmpty:
      return "crash-empty";
    case PlannedFault::Kind::kSnapshot:
      return "snapshot";
  }
  return "?";
}

// One history in progress. Owns the loop, the masters and the clients.
// Counts the acquisitions won by a release's hand-off
// (AcquiredEvent::handed_over), over every client.
class HandOffCounter final : public Observer {
 public:
  void OnAcquired(const AcquiredEvent& event) override {
    if (event.handed_over) ++wins_;
  }
  int64_t wins() const { return wins_; }

 private:
  int64_t wins_ = 0;  // The simulation runs on one thread.
};

// Tells of every election lease a client's engine wins (a campaign's
// acquisition), with its epoch: the campaign's value is then written,
// whether or not the campaign goes on to succeed.
class LeaseWatcher final : public Observer {
 public:
  explicit LeaseWatcher(absl::AnyInvocable<void(uint64_t epoch)> on_won)
      : on_won_(std::move(on_won)) {}
  void OnAcquired(const AcquiredEvent& event) override {
    if (event.resource == ElectionResource(kElectionName)) {
      on_won_(event.fence);
    }
  }

 private:
  absl::AnyInvocable<void(uint64_t)> on_won_;
};

class World {
 public:
  World(const WorldConfig& config, const Plan& plan)
      : config_(config),
        plan_(plan),
        loop_(),
        cluster_(&loop_, ClusterConfig(config, plan), plan.seed),
        storage_(SimRedis::Config{}, plan.seed ^ 0x5707a9e, loop_.now()),
        rng_(plan.seed * 0x9e3779b97f4a7c15ULL + 17) {}

  WorldResult Run();

 private:
  struct Client {
    SimRuntime* runtime = nullptr;  // Owned by the engine.
    std::unique_ptr<internal::Engine> engine;
    std::vector<int> ops;  // Indexes into plan_.ops, in order.
    size_t next = 0;
    // WorldConfig::membership: the list it runs on, and its planned
    // switches (indexes into plan_.switches, in order) not yet made.
    PlannedSwitch::List list = PlannedSwitch::List::kOld;
    std::vector<int> switches;
    size_t next_switch = 0;
    int64_t sections = 0;
    bool done = false;
    // WorldConfig::kElection: campaigns and observations started, and the
    // value of the campaign in flight.
    int64_t campaigns = 0;
    int64_t watches = 0;
    std::string campaign_value;
  };
  // A won lock being used.
  struct Holding {
    int client = 0;
    const PlannedOp* op = nullptr;
    Lock lock;
    size_t section = 0;  // Index into history_.sections: the first.
    int sections = 1;    // Consecutive sections (one per resource).
    std::shared_ptr<internal::KeepAliveOp> keep_alive;
    bool lost = false;
    bool finished = false;  // Work ended (released or being released).
    // WorldConfig::kElection: the leadership (`lock` is its lease), the
    // revision of its next proclamation, and its values' prefix.
    Leadership leadership;
    int64_t next_revision = 2;
    std::string value_base;
  };

  static SimCluster::Config ClusterConfig(const WorldConfig& config,
                                          const Plan& plan) {
    SimCluster::Config c;
    c.masters = config.masters;
    // What CONFIG GET says matches what a restart keeps.
    c.redis.persistence = config.persistence ? SimRedis::Persistence::kAofAlways
                                             : SimRedis::Persistence::kNone;
    if (config.partial_loss || config.lossy_change) {
      c.redis_per_master = plan.masters;
    }
    return c;
  }
  // A crashed master back: with what its persistence kept (partial loss),
  // else everything or nothing as WorldConfig::persistence says.
  void RestartMaster(int m) {
    if (config_.lossy_change && cluster_.redis(m).config().persistence !=
                                    SimRedis::Persistence::kAofAlways) {
      lost_data_.insert(m);
    }
    if (config_.partial_loss || config_.lossy_change) {
      cluster_.Restart(m);
    } else {
      cluster_.Restart(m, config_.persistence);
    }
  }

  int64_t T() const {
    return absl::ToInt64Nanoseconds(loop_.now() - loop_.epoch());
  }
  // A client's MonotonicTime as true time (ns from the epoch).
  int64_t TrueOf(const Client& c, MonotonicTime t) const {
    return T() +
           absl::ToInt64Nanoseconds(absl::FromChrono(t - c.runtime->Now()));
  }

  // Every server (the keys' names do not depend on the list).
  Options EngineOptions() const;
  // A client's options: every server, or with WorldConfig::membership the
  // servers of `list`.
  Options ClientOptions(PlannedSwitch::List list) const;
  // WorldConfig::membership: the servers of a list, and a server's member
  // name (MasterAddress::MemberName() of its URI).
  std::vector<int> Servers(PlannedSwitch::List list) const;
  static std::string MemberName(int m) {
    return absl::StrCat("127.0.0.1:", 7001 + m);
  }
  std::vector<std::string> MemberNames(PlannedSwitch::List list) const;
  // Makes the switches of `client` due by now; true if its list changed.
  bool TakeSwitches(int client);
  // The deployment as it starts: steady(O), epoch 1, written on every
  // server of O as a client bootstrapping it would (MarkerCommand), and the
  // last server marked without a record.
  void WriteFirstRecords();
  // The operator's reconfiguration O -> N (WorldConfig::kReconfigure): what
  // `redlock reconfigure --masters=O --to=N` does, run again on a timer
  // until it reports the change finished.
  void ReconfigureStep();
  // WorldConfig::lossy_change: the plan's master down through the change
  // goes down, and comes back (after the finish, or at the heal).
  void TakeDown();
  void BringBack();
  internal::RedisReply Exec(int m, const std::vector<std::string>& argv);
  bool Running(int m) const {
    return cluster_.state(m) == SimCluster::MasterState::kRunning;
  }
  // The operator's tool (src/admin/reconfigure.h) on the servers named in
  // `masters` or `to`: passes of --masters=`masters` --to=`to` at this
  // instant, until one needs no other at once (at most 8). The steps the
  // passes took go to `steps`; returns the last pass's outcome.
  admin::Outcome OperatorPasses(const std::vector<std::string>& masters,
                                const std::vector<std::string>& to,
                                std::vector<admin::Step>* steps);
  // The operator's view of masters `servers` (its server i is master
  // servers[i]): each command at this instant; a crashed or paused master
  // answers kUnavailable.
  std::unique_ptr<admin::ServerIo> OperatorIo(std::vector<int> servers);
  // admin::Server entries for masters `servers`, named as the clients name
  // them (MemberName()).
  std::vector<admin::Server> OperatorServers(
      const std::vector<int>& servers) const;
  // Makes client `i`'s engine, replacing the one it had (a new process).
  void NewEngine(int i);
  void StartClients();
  void NextOp(int client);
  void Acquire(int client, const PlannedOp* op, absl::Duration wait,
               absl::AnyInvocable<void(absl::StatusOr<Lock>)> then);
  void OnWon(int client, const PlannedOp* op, Lock lock);
  void Write(std::shared_ptr<Holding> h, absl::AnyInvocable<void()> then);
  void Release(std::shared_ptr<Holding> h, absl::AnyInvocable<void()> then);
  void FinishWork(std::shared_ptr<Holding> h);
  // WorldConfig::kElection (sim_world.cc, "Elections"): a campaign recorded
  // as Acquire() records an acquisition, the leadership it won, a
  // proclamation, the end of a leadership (resigned), an observation.
  void Campaign(int client, const PlannedOp* op, absl::Duration wait,
                std::shared_ptr<Holding> h,
                absl::AnyInvocable<void(absl::StatusOr<Leadership>)> then);
  void Lead(std::shared_ptr<Holding> h);
  void Proclaim(std::shared_ptr<Holding> h);
  void FinishLeading(std::shared_ptr<Holding> h,
                     absl::AnyInvocable<void()> then);
  void Observe(int client, const PlannedOp* op);
  void ProbeElection(size_t index, absl::AnyInvocable<void()> done);
  // The fenced resource (the election with WorldConfig::kElection): its
  // name in the history and the storage's keys, and the resource its fence
  // counter is named for (the election's lease).
  std::string FencedName() const {
    return config_.primitive == WorldConfig::Primitive::kElection
               ? kElectionName
               : kResources[0];
  }
  std::string FencedResource() const {
    return config_.primitive == WorldConfig::Primitive::kElection
               ? ElectionResource(kElectionName)
               : kResources[0];
  }
  // Counts a call; returns its index in history_.calls.
  size_t NewCall(int client, absl::string_view kind, int resource);
  void ApplyFault(const PlannedFault& f);
  void HealAll();
  void RunOperatorSteps();
  // The fenced resource's counter raised by hand on every master to a floor
  // above every token issued (docs/lifetime-and-fencing.md, "Restoring
  // fencing"): the highest the storage accepted or any master holds, plus
  // 1000. Raise-only; nothing else runs at this instant.
  void RaiseCountersByHand();
  // Master `m` marked by hand, "trusted:0:<its run_id>", vouching for its
  // running process; `only_if_unmarked`: SET NX. With `keep_record`, what
  // followed the first ';' of its marker (the membership record) is kept.
  void MarkByHand(int m, bool only_if_unmarked, bool keep_record = false);
  // When the tool's finish stops because too few old members' counters are
  // known to hold every token (admin::WhyCountersIncomplete()), the
  // operator does what its message says: raises the counters by hand, then
  // re-marks each old member it named, keeping its record. True if it did.
  bool RestoreFencingForTheFinish();
  // The operator's restore of the membership record when the tool finds
  // too few members carrying it kept for it to be known current (a majority
  // restarted since it was written, and no client has written it again):
  // `redlock reconfigure --masters=L --to=L`, L the record's members, run
  // through the tool's protocol. True if it restored.
  bool RestoreRecordIfUnknown();
  // The tool's judgement over every server: the record's, if it is not
  // known to be current (OK otherwise, and without records).
  absl::Status RecordNotKnownCurrent();
  // The tool's judgement of what every server carries now.
  absl::StatusOr<admin::Judged> OperatorJudge();
  void Probe(size_t index, absl::AnyInvocable<void()> done);
  bool AllClientsDone() const;

  const WorldConfig& config_;
  const Plan& plan_;
  SimLoop loop_;
  SimCluster cluster_;
  SimRedis storage_;  // The fenced resource's storage.
  SimRedis::Connection storage_conn_;
  std::mt19937_64 rng_;
  std::vector<Client> clients_;
  // Every lock being used, to drop their keep-alives before the engines go.
  std::vector<std::weak_ptr<Holding>> holdings_;
  torture::History history_;
  int64_t operations_ = 0;
  int64_t last_fault_end_ = 0;
  bool stuck_ = false;
  bool quiescing_ = false;  // The engines are going: start nothing.
  int64_t operator_steps_ = 0;
  int64_t remarked_masters_ = 0;
  int64_t fresh_clients_ = 0;
  int64_t wakeup_messages_ = 0;  // Heard by engines since gone.
  // Every client's observer with WorldConfig::hand_off.
  std::shared_ptr<HandOffCounter> hand_offs_ =
      std::make_shared<HandOffCounter>();
  int64_t switched_clients_ = 0;
  std::array<int64_t, 3> grants_by_list_ = {0, 0, 0};
  int64_t grants_during_change_ = 0;
  // The reconfiguration: 0 not begun, 1 joint landed (waiting), 2 done.
  int reconfigure_phase_ = 0;
  // WorldConfig::lossy_change: the plan's down master is down (its record
  // in history_.faults: down_fault_); the plan's partition is on (new
  // engines of the partitioned client cannot reach the master), and was
  // applied.
  bool down_ = false;
  size_t down_fault_ = 0;
  bool partition_on_ = false;
  bool partition_applied_ = false;
  // WorldConfig::lossy_change: masters that restarted with less than every
  // write (empty, from a snapshot, without an AOF tail). The operator knows
  // them (RunOperatorSteps): a counter the tool raised on one during the
  // change is no sign that it kept the tokens issued.
  std::set<int> lost_data_;
  // Adds what `c`'s engine's subscribers heard, before it goes.
  void CountWakeups(const Client& c) {
    if (c.engine == nullptr) return;
    for (const MasterHealth& h : c.engine->Health()) {
      wakeup_messages_ += h.subscriber_messages;
    }
  }
};

Options World::EngineOptions() const {
  return ClientOptions(PlannedSwitch::List::kUnion);
}

std::vector<int> World::Servers(PlannedSwitch::List list) const {
  std::vector<int> out;
  const int spare = config_.masters - 1;
  for (int m = 0; m < config_.masters; ++m) {
    if (config_.membership == WorldConfig::Membership::kOff ||
        list == PlannedSwitch::List::kUnion) {
      out.push_back(m);
    } else if (list == PlannedSwitch::List::kOld ? m != spare
                                                 : m != plan_.replaced) {
      out.push_back(m);
    }
  }
  return out;
}

std::vector<std::string> World::MemberNames(PlannedSwitch::List list) const {
  std::vector<std::string> names;
  for (int m : Servers(list)) names.push_back(MemberName(m));
  return internal::Canonical(std::move(names));
}

Options World::ClientOptions(PlannedSwitch::List list) const {
  Options options;
  for (int i : Servers(list)) {
    options.masters.push_back(absl::StrCat("redis://127.0.0.1:", 7001 + i));
  }
  options.max_ttl = config_.max_ttl;
  options.default_ttl = config_.ttl;
  options.drift_factor = config_.drift_factor;
  options.restart_guard = config_.restart_guard;
  options.retry.hand_off = config_.hand_off;
  if (config_.hand_off) options.observer = hand_offs_;
  options.on_warning = [](absl::string_view) {};
  return options;
}

size_t World::NewCall(int client, absl::string_view kind, int resource) {
  torture::Call call;
  call.client = client;
  call.id = static_cast<int64_t>(history_.calls.size());
  call.kind = std::string(kind);
  call.resource = resource >= 0 ? ResourceName(resource) : "";
  call.start = T();
  history_.calls.push_back(std::move(call));
  return history_.calls.size() - 1;
}

void World::NewEngine(int i) {
  // The old engine goes first: what it still has in flight (releases
  // decided at quorum, their stragglers) is handed to the network or lost,
  // as when a process exits.
  CountWakeups(clients_[i]);
  clients_[i].engine.reset();
  auto runtime = std::make_unique<SimRuntime>(&loop_, &cluster_, plan_.seed);
  if (partition_on_ && i == plan_.partitioned_client) {
    runtime->SetUnreachable(plan_.unreachable_master, true);
  }
  clients_[i].runtime = runtime.get();
  // The unsafe rules this world shows, if any (unsafe_rules.h).
  std::shared_ptr<redlock::testing::UnsafeRules> unsafe;
  if (config_.legacy_grant_rule || config_.semaphore_counters ||
      config_.trust_marked_restarts ||
      config_.membership == WorldConfig::Membership::kIgnored ||
      config_.trust_unknown_records) {
    unsafe = std::make_shared<redlock::testing::UnsafeRules>();
    unsafe->legacy_grant_rule = config_.legacy_grant_rule;
    unsafe->semaphore_counters = config_.semaphore_counters;
    unsafe->trust_marked_restarts = config_.trust_marked_restarts;
    unsafe->ignore_membership =
        config_.membership == WorldConfig::Membership::kIgnored;
    unsafe->trust_unknown_records = config_.trust_unknown_records;
  }
  Options options = ClientOptions(clients_[i].list);
  if (config_.primitive == WorldConfig::Primitive::kElection) {
    options.observer =
        std::make_shared<LeaseWatcher>([this, i](uint64_t epoch) {
          torture::Proclamation p;
          p.client = i;
          p.election = kElectionName;
          p.epoch = static_cast<int64_t>(epoch);
          p.revision = 1;
          p.value = clients_[i].campaign_value;
          p.start = T();
          history_.proclamations.push_back(std::move(p));
        });
  }
  absl::StatusOr<std::unique_ptr<internal::Engine>> engine =
      internal::Engine::Create(std::move(runtime), std::move(options),
                               std::move(unsafe));
  if (!engine.ok()) {
    // A harness bug: every history would fail the same way, loudly.
    history_.summary.details.push_back(
        absl::StrCat("engine: ", engine.status().ToString()));
    stuck_ = true;
    return;
  }
  clients_[i].engine = *std::move(engine);
}

void World::StartClients() {
  clients_.resize(config_.clients);
  for (size_t k = 0; k < plan_.switches.size(); ++k) {
    const int c = plan_.switches[k].client;
    if (c >= 0 && c < config_.clients) {
      clients_[c].switches.push_back(static_cast<int>(k));
    }
  }
  for (int i = 0; i < config_.clients; ++i) NewEngine(i);
  for (size_t k = 0; k < plan_.ops.size(); ++k) {
    const int c = plan_.ops[k].client;
    if (c >= 0 && c < config_.clients)
      clients_[c].ops.push_back(static_cast<int>(k));
  }
  for (int i = 0; i < config_.clients; ++i) NextOp(i);
}

bool World::TakeSwitches(int client) {
  Client& c = clients_[client];
  const PlannedSwitch::List before = c.list;
  while (c.next_switch < c.switches.size() &&
         loop_.epoch() + plan_.switches[c.switches[c.next_switch]].at <=
             loop_.now()) {
    c.list = plan_.switches[c.switches[c.next_switch++]].list;
  }
  return c.list != before;
}

internal::RedisReply World::Exec(int m, const std::vector<std::string>& argv) {
  SimRedis::Connection conn;
  return cluster_.redis(m).Execute(loop_.now(), conn, argv);
}

void World::WriteFirstRecords() {
  internal::Membership old_record;
  old_record.members = MemberNames(PlannedSwitch::List::kOld);
  old_record.epoch = 1;
  old_record.deployment =
      internal::NewDeploymentId(old_record.members, Quorum::kMajority);
  const Options options = EngineOptions();
  for (int m : Servers(PlannedSwitch::List::kOld)) {
    Exec(m, internal::CommandArgv(
                internal::MarkerCommand(
                    DeploymentMarkerKey(options), internal::kTrustedMarker,
                    cluster_.redis(m).run_id(), config_.max_ttl,
                    internal::MarkerSuffix(MemberName(m), old_record)),
                /*eval=*/true));
  }
  // The last server, set up to join: marked as a client from before
  // records would mark it (no record), so that a client configured with it
  // judges it at once.
  const int spare = config_.masters - 1;
  Exec(spare, internal::CommandArgv(
                  internal::MarkerCommand(
                      DeploymentMarkerKey(options), internal::kTrustedMarker,
                      cluster_.redis(spare).run_id(), config_.max_ttl, ""),
                  /*eval=*/true));
}

namespace {

// A ServerIo over a function: the simulation's servers answer at once, so
// ForEach's default (one server after another) is all it needs.
class FunctionIo final : public admin::ServerIo {
 public:
  using CallFn = std::function<absl::StatusOr<internal::RedisReply>(
      int, const std::vector<std::string>&)>;
  explicit FunctionIo(CallFn call) : call_(std::move(call)) {}
  absl::StatusOr<internal::RedisReply> Call(
      int server, const std::vector<std::string>& argv) override {
    return call_(server, argv);
  }

 private:
  CallFn call_;
};

// The tool's report has no reader here.
class DiscardOutput final : public admin::Output {
 public:
  void Line(absl::string_view) override {}
  void Error(absl::string_view) override {}
};

// The prefix a `SCAN ... MATCH <glob>*` asks for: the glob without its
// trailing '*' and its escapes (the tool's pattern for the counter keys).
std::string ScanPrefix(absl::string_view pattern) {
  absl::ConsumeSuffix(&pattern, "*");
  std::string prefix;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    prefix.push_back(pattern[i]);
  }
  return prefix;
}

}  // namespace

// The operator talks to the servers directly, each command at one instant
// of simulated time (no network): a server it can reach is one running (a
// crashed or paused one answers nothing). SimRedis has no SCAN: the one
// the tool sends for the counter keys is answered here, in one page, from
// the server's live keys.
std::unique_ptr<admin::ServerIo> World::OperatorIo(std::vector<int> servers) {
  return std::make_unique<FunctionIo>(
      [this, servers = std::move(servers)](int server,
                                           const std::vector<std::string>& argv)
          -> absl::StatusOr<internal::RedisReply> {
        const int m = servers[server];
        if (!Running(m)) {
          return absl::UnavailableError(
              absl::StrCat(MemberName(m), " is not running"));
        }
        if (!argv.empty() && absl::AsciiStrToUpper(argv[0]) == "SCAN") {
          if (argv.size() < 4) return internal::RedisReply::Error("ERR syntax");
          std::vector<internal::RedisReply> keys;
          for (const std::string& k : cluster_.Keys(m, ScanPrefix(argv[3]))) {
            keys.push_back(internal::RedisReply::String(k));
          }
          return internal::RedisReply::Array(
              {internal::RedisReply::String("0"),
               internal::RedisReply::Array(std::move(keys))});
        }
        return Exec(m, argv);
      });
}

std::vector<admin::Server> World::OperatorServers(
    const std::vector<int>& servers) const {
  std::vector<admin::Server> out;
  for (int m : servers) {
    admin::Server s;
    s.name = MemberName(m);
    s.address = s.name;
    out.push_back(std::move(s));
  }
  return out;
}

admin::Outcome World::OperatorPasses(const std::vector<std::string>& masters,
                                     const std::vector<std::string>& to,
                                     std::vector<admin::Step>* steps) {
  const Options options = EngineOptions();
  admin::Request request;
  request.masters = masters;
  request.to = to;
  request.marker_key = DeploymentMarkerKey(options);
  request.counter_prefix = FenceCounterKey(options, "");
  request.quorum = Quorum::kMajority;
  request.max_ttl = config_.max_ttl;
  request.unsafe_trust_joining_after_begin = config_.trust_joining_after_begin;
  auto named = [](const std::vector<std::string>& list, const std::string& n) {
    return std::binary_search(list.begin(), list.end(), n);
  };
  std::vector<int> indexes;
  for (int m = 0; m < config_.masters; ++m) {
    if (named(masters, MemberName(m)) || named(to, MemberName(m))) {
      indexes.push_back(m);
    }
  }
  std::vector<admin::Server> servers = OperatorServers(indexes);
  for (admin::Server& s : servers) {
    s.in_masters = named(masters, s.name);
    s.in_to = named(to, s.name);
  }
  std::unique_ptr<admin::ServerIo> io = OperatorIo(indexes);
  DiscardOutput out;
  admin::Outcome outcome;
  for (int pass = 0; pass < 8; ++pass) {
    outcome = admin::Pass(request, *io, out, &servers);
    if (steps != nullptr) steps->push_back(outcome.step);
    if (!outcome.again) break;
  }
  return outcome;
}

// Every 100ms until the change is finished: the pass begins it, then (the
// joint record up) finds the wait not over, then finishes it. A pass that
// cannot go on (too few servers answer, a record not known to be current)
// is run again at the next tick, as an operator would.
void World::ReconfigureStep() {
  if (quiescing_ || reconfigure_phase_ >= 2) return;
  const admin::Outcome o =
      OperatorPasses(MemberNames(PlannedSwitch::List::kOld),
                     MemberNames(PlannedSwitch::List::kNew), nullptr);
  const bool ok = o.code == admin::Outcome::Code::kOk && !o.again;
  // A finish step means the joint record is the deployment's; a steady one
  // under --to=N that the change is done.
  if (reconfigure_phase_ == 0 && ((o.step == admin::Step::kBegin && ok) ||
                                  o.step == admin::Step::kFinish)) {
    reconfigure_phase_ = 1;
  }
  if (ok &&
      (o.step == admin::Step::kFinish || o.step == admin::Step::kSteady)) {
    reconfigure_phase_ = 2;
    if (down_) {
      loop_.After(plan_.down_after_finish, [this] { BringBack(); });
    }
  }
  if (reconfigure_phase_ < 2) {
    loop_.After(absl::Milliseconds(100), [this] { ReconfigureStep(); });
  }
}

void World::TakeDown() {
  const int m = plan_.down_master;
  if (quiescing_ || down_ || reconfigure_phase_ >= 2) return;
  down_ = true;
  torture::Fault record;
  record.kind = plan_.down_refuses ? "refuse" : "pause";
  record.targets = absl::StrCat("m", m + 1);
  record.start = T();
  record.end = T();
  history_.faults.push_back(std::move(record));
  down_fault_ = history_.faults.size() - 1;
  if (plan_.down_refuses) {
    cluster_.SetRefuseConnects(m, true);
  } else {
    cluster_.Pause(m);
  }
}

void World::BringBack() {
  if (!down_) return;
  down_ = false;
  const int m = plan_.down_master;
  history_.faults[down_fault_].end = T();
  if (plan_.down_refuses) {
    cluster_.SetRefuseConnects(m, false);
  } else {
    cluster_.Resume(m);
  }
}

bool World::AllClientsDone() const {
  for (const Client& c : clients_) {
    if (!c.done) return false;
  }
  return true;
}

void World::NextOp(int client) {
  if (quiescing_) return;
  Client& c = clients_[client];
  if (c.engine == nullptr || c.next >= c.ops.size()) {
    c.done = true;
    return;
  }
  const PlannedOp* op = &plan_.ops[c.ops[c.next++]];
  loop_.After(op->think, [this, client, op] {
    ++operations_;
    // The partition begins with a new process of its client (its
    // connections from before would outlive it).
    bool partitioned = false;
    if (client == plan_.partitioned_client && !partition_applied_ &&
        plan_.unreachable_master >= 0 &&
        loop_.epoch() + plan_.partition_at <= loop_.now()) {
      partition_applied_ = partition_on_ = partitioned = true;
    }
    if (TakeSwitches(client)) {
      NewEngine(client);  // A new process on its new list.
      ++switched_clients_;
    } else if (partitioned) {
      NewEngine(client);
    } else if (op->fresh_client) {
      NewEngine(client);
      ++fresh_clients_;
    }
    if (op->kind == PlannedOp::Kind::kObserve) {
      Observe(client, op);
      return;
    }
    if (op->resource == kElection) {
      auto h = std::make_shared<Holding>();
      Campaign(client, op, op->wait, h,
               [this, client, h](absl::StatusOr<Leadership> lead) {
                 if (lead.ok()) {
                   Lead(h);
                 } else {
                   NextOp(client);
                 }
               });
      return;
    }
    Acquire(client, op, op->wait,
            [this, client, op](absl::StatusOr<Lock> lock) {
              if (lock.ok()) {
                OnWon(client, op, *std::move(lock));
              } else {
                NextOp(client);
              }
            });
  });
}

void World::Acquire(int client, const PlannedOp* op, absl::Duration wait,
                    absl::AnyInvocable<void(absl::StatusOr<Lock>)> then) {
  Client& c = clients_[client];
  if (c.engine == nullptr) return;
  AcquireOptions options;
  options.ttl = config_.ttl;
  options.wait = wait;
  // A lock that includes the fenced resource is fenced; a reader and a
  // semaphore's permits never are.
  options.fencing = op->resource != 1 && op->resource != kPool && !op->shared;
  options.shared = op->shared;
  if (op->cancel_after > absl::ZeroDuration()) {
    // From "another thread": through the runtime's mailbox, like a real one.
    loop_.After(op->cancel_after,
                [cancel = options.cancel]() mutable { cancel.Cancel(); });
  }
  const size_t call = NewCall(client, "acquire", op->resource);
  const int64_t start = T();
  std::vector<std::string> names;
  for (int r : ResourcesOf(op->resource)) names.push_back(NameOf(r));
  SemaphoreOptions sem;
  if (op->resource == kPool) {
    sem.limit = plan_.limit;
    sem.permits = op->permits;
  }
  AsyncRedlock::AcquireCallback done =
      [this, call, client, start, resource = op->resource, sem,
       shared = op->shared,
       then = std::move(then)](absl::StatusOr<Lock> lock) mutable {
        ++history_.calls[call].completions;
        // One record per resource: a lock on both holds each of them, and
        // the checker judges each resource's holders apart.
        for (int r : ResourcesOf(resource)) {
          if (!lock.ok()) {
            torture::AcquireFailure f;
            f.client = client;
            f.resource = NameOf(r);
            f.start = start;
            f.ret = T();
            f.code = absl::StatusCodeToString(lock.status().code());
            history_.failed_acquisitions.push_back(std::move(f));
          } else {
            torture::Section s;
            s.client = client;
            s.seq = clients_[client].sections++;
            s.resource = NameOf(r);
            s.shared = shared;
            // What the holder takes itself to hold: judged against the
            // limit by the checker.
            s.limit = resource == kPool ? sem.limit : 0;
            s.permits = resource == kPool ? sem.permits : 0;
            s.token = lock->token();
            s.votes = VoteLetters(lock->votes());
            s.fence = static_cast<int64_t>(lock->fence());
            s.start = start;
            s.ret = T();
            s.valid_until = TrueOf(clients_[client], lock->valid_until());
            s.work_start = s.ret;
            history_.sections.push_back(std::move(s));
          }
        }
        then(std::move(lock));
      };
  absl::Status sent =
      op->resource == kPool
          ? c.engine->AcquirePermits(kPoolName, sem, options, std::move(done))
          : c.engine->Acquire(names, options, std::move(done));
  if (!sent.ok()) {
    // Refused at once: the callback will not run.
    history_.calls[call].completions = 1;
    history_.summary.details.push_back(
        absl::StrCat("acquire refused: ", sent.ToString()));
    stuck_ = true;
    loop_.After(absl::ZeroDuration(),
                [then = std::move(then), sent]() mutable { then(sent); });
  }
}

void World::OnWon(int client, const PlannedOp* op, Lock lock) {
  ++grants_by_list_[static_cast<size_t>(clients_[client].list)];
  if (reconfigure_phase_ == 1) ++grants_during_change_;
  auto h = std::make_shared<Holding>();
  h->client = client;
  h->op = op;
  h->lock = std::move(lock);
  h->sections = static_cast<int>(ResourcesOf(op->resource).size());
  // The lock's sections are the last ones pushed, the fenced one first.
  h->section = history_.sections.size() - h->sections;
  holdings_.push_back(h);
  switch (op->kind) {
    case PlannedOp::Kind::kLead:
    case PlannedOp::Kind::kPausedLeader:
    case PlannedOp::Kind::kObserve:
      return;  // Elections: Lead() and Observe().
    case PlannedOp::Kind::kWorkRelease:
    case PlannedOp::Kind::kPausedWriter:
      // The paused writer wakes past its validity and writes all the same:
      // only the fencing token can stop it.
      loop_.After(op->work,
                  [this, h] { Write(h, [this, h] { FinishWork(h); }); });
      return;
    case PlannedOp::Kind::kExtend:
      loop_.After(op->work / 2, [this, h] {
        Client& c = clients_[h->client];
        if (h->finished || quiescing_) return;
        const size_t call = NewCall(h->client, "extend", h->op->resource);
        absl::Status sent = c.engine->Extend(
            h->lock, config_.ttl, [this, h, call](absl::Status status) {
              ++history_.calls[call].completions;
              if (!status.ok()) {
                FinishWork(h);  // Lost it: stop using it.
                return;
              }
              for (int k = 0; k < h->sections; ++k) {
                torture::Section& s = history_.sections[h->section + k];
                s.valid_until = std::max(
                    s.valid_until,
                    TrueOf(clients_[h->client], h->lock.valid_until()));
              }
              loop_.After(h->op->work / 2, [this, h] {
                Write(h, [this, h] { FinishWork(h); });
              });
            });
        if (!sent.ok()) {
          history_.calls[call].completions = 1;
          FinishWork(h);
        }
      });
      return;
    case PlannedOp::Kind::kKeepAlive: {
      Client& c = clients_[h->client];
      HoldOptions hold;
      std::weak_ptr<Holding> weak = h;
      hold.on_lost = [this, weak](const absl::Status&) {
        auto h = weak.lock();
        if (h == nullptr || h->finished) return;
        h->lost = true;
        FinishWork(h);  // The holder stops when told.
      };
      absl::StatusOr<std::shared_ptr<internal::KeepAliveOp>> ka =
          c.engine->KeepAlive(h->lock, config_.ttl, std::move(hold));
      if (!ka.ok()) {
        FinishWork(h);
        return;
      }
      h->keep_alive = *std::move(ka);
      loop_.After(op->work, [this, h] {
        if (h->finished) return;
        Write(h, [this, h] { FinishWork(h); });
      });
      return;
    }
  }
}

void World::Write(std::shared_ptr<Holding> h, absl::AnyInvocable<void()> then) {
  if (h->finished || quiescing_) return;
  torture::Section& s = history_.sections[h->section];
  // The unfenced resource, a semaphore's permits and a reader: no storage
  // can refuse their writes (a reader's are reads).
  if (h->op->resource == 1 || h->op->resource == kPool || h->op->shared) {
    ++s.unfenced;
    if (T() > s.valid_until) ++s.unfenced_late;
    then();
    return;
  }
  // The fenced storage: a Redis of its own, kFencedSetScript, one-way
  // latency like a master's.
  const int64_t send = T();
  const absl::Duration there =
      Uniform(rng_, absl::Microseconds(50), absl::Microseconds(500));
  const absl::Duration back =
      Uniform(rng_, absl::Microseconds(50), absl::Microseconds(500));
  const uint64_t fence = h->lock.fence();
  const std::string name = FencedName();
  loop_.After(there, [this, h, send, back, fence, name,
                      then = std::move(then)]() mutable {
    internal::RedisReply reply = storage_.Execute(
        loop_.now(), storage_conn_,
        FencedSetArgv(absl::StrCat("fence:", name), absl::StrCat("data:", name),
                      fence, absl::StrCat("c", h->client)));
    const bool accepted = reply.type == internal::RedisReply::Type::kInteger &&
                          reply.integer == 1;
    loop_.After(back, [this, h, send, fence, accepted,
                       then = std::move(then)]() mutable {
      torture::FencedWrite w;
      w.fence = static_cast<int64_t>(fence);
      w.send = send;
      w.ans = T();
      w.result = accepted ? "accepted" : "rejected";
      history_.sections[h->section].fenced.push_back(std::move(w));
      then();
    });
  });
}

void World::FinishWork(std::shared_ptr<Holding> h) {
  if (h->finished || clients_[h->client].engine == nullptr) return;
  h->finished = true;
  for (int k = 0; k < h->sections; ++k) {
    torture::Section& s = history_.sections[h->section + k];
    s.work_end = T();
    // An extension moved the validity on: the lock was held until then.
    s.valid_until = std::max(
        s.valid_until, TrueOf(clients_[h->client], h->lock.valid_until()));
  }
  if (h->keep_alive != nullptr) {
    internal::StopKeepAlive(*h->keep_alive, /*release=*/false);
    h->keep_alive.reset();
  }
  Release(h, [this, client = h->client] { NextOp(client); });
}

void World::Release(std::shared_ptr<Holding> h,
                    absl::AnyInvocable<void()> then) {
  Client& c = clients_[h->client];
  const size_t call = NewCall(h->client, "release", h->op->resource);
  absl::Status sent = c.engine->Release(
      h->lock, ReleaseOptions(),
      [this, h, call,
       then = std::move(then)](absl::StatusOr<ReleaseReport> report) mutable {
        ++history_.calls[call].completions;
        for (int k = 0; k < h->sections; ++k) {
          torture::Section& s = history_.sections[h->section + k];
          // Freed: a quorum no longer carries the token (the liveness
          // check counts the resource free from here).
          s.release = report.ok() ? (report->freed ? "ok" : "partial")
                                  : std::string(absl::StatusCodeToString(
                                        report.status().code()));
          s.release_at = T();
        }
        then();
      });
  if (!sent.ok()) {
    history_.calls[call].completions = 1;
    for (int k = 0; k < h->sections; ++k) {
      history_.sections[h->section + k].release = std::string(sent.message());
    }
    loop_.After(absl::ZeroDuration(), std::move(then));
  }
}

void World::ApplyFault(const PlannedFault& f) {
  const int m = f.master;
  // The master down through the change stays down: no other fault touches
  // it meanwhile (a crash would restart it, a pause end resume it).
  if (down_ && m == plan_.down_master) return;
  torture::Fault record;
  record.kind = FaultName(f.kind);
  record.targets = absl::StrCat("m", m + 1);
  record.start = T();
  record.end = T() + Ns(f.duration);
  history_.faults.push_back(std::move(record));
  auto at_end = [this, &f](absl::AnyInvocable<void()> fn) {
    loop_.After(f.duration, std::move(fn));
  };
  switch (f.kind) {
    case PlannedFault::Kind::kCrashRestart:
      if (config_.partial_loss) {
        cluster_.Crash(m, absl::Milliseconds(f.amount));
      } else if (config_.lossy_change) {
        cluster_.Crash(m, f.amount > 0 ? std::optional<absl::Duration>(
                                             absl::Milliseconds(f.amount))
                                       : std::nullopt);
      } else {
        cluster_.Crash(m);
      }
      at_end([this, m] {
        if (cluster_.state(m) == SimCluster::MasterState::kCrashed) {
          RestartMaster(m);
        }
      });
      return;
    case PlannedFault::Kind::kPause:
      cluster_.Pause(m);
      at_end([this, m] { cluster_.Resume(m); });
      return;
    case PlannedFault::Kind::kSlowLink:
      cluster_.SetExtraDelay(m, absl::Milliseconds(f.amount));
      at_end([this, m] { cluster_.SetExtraDelay(m, absl::ZeroDuration()); });
      return;
    case PlannedFault::Kind::kResetConnections:
      cluster_.ResetConnections(m);
      return;
    case PlannedFault::Kind::kRefuseConnects:
      cluster_.SetRefuseConnects(m, true);
      at_end([this, m] { cluster_.SetRefuseConnects(m, false); });
      return;
    case PlannedFault::Kind::kFastClock:
      cluster_.SetClockRate(m, f.amount);
      at_end([this, m] { cluster_.SetClockRate(m, 1.0); });
      return;
    case PlannedFault::Kind::kFlushScripts:
      cluster_.FlushScripts(m);
      return;
    case PlannedFault::Kind::kCrashEmpty:
      cluster_.Crash(m);
      at_end([this, m] {
        if (cluster_.state(m) == SimCluster::MasterState::kCrashed) {
          lost_data_.insert(m);
          cluster_.Restart(m, /*keep_data=*/false);
        }
      });
      return;
    case PlannedFault::Kind::kSnapshot:
      if (Running(m)) cluster_.redis(m).Save(loop_.now());
      return;
  }
}

void World::RaiseCountersByHand() {
  const Options options = EngineOptions();
  const std::string counter = FenceCounterKey(options, FencedResource());
  auto get = [this](int m, const std::string& key) {
    SimRedis::Connection conn;
    return cluster_.redis(m).Execute(loop_.now(), conn, {"GET", key});
  };
  // The floor: the highest token the storage accepted, or any counter a
  // master still has, plus a margin for a holder that has not written yet.
  int64_t floor = 0;
  auto raise_floor = [&floor](const internal::RedisReply& r) {
    int64_t v = 0;
    if (r.type == internal::RedisReply::Type::kString &&
        absl::SimpleAtoi(r.str, &v)) {
      floor = std::max(floor, v);
    }
  };
  raise_floor(storage_.Execute(loop_.now(), storage_conn_,
                               {"GET", absl::StrCat("fence:", FencedName())}));
  for (int m = 0; m < config_.masters; ++m) raise_floor(get(m, counter));
  floor += 1000;
  for (int m = 0; m < config_.masters; ++m) {
    // Raise-only; nothing else runs at this instant of simulated time.
    int64_t v = 0;
    const internal::RedisReply c = get(m, counter);
    if (c.type == internal::RedisReply::Type::kString &&
        absl::SimpleAtoi(c.str, &v) && v >= floor) {
      continue;
    }
    SimRedis::Connection conn;
    cluster_.redis(m).Execute(loop_.now(), conn,
                              {"SET", counter, absl::StrCat(floor)});
  }
}

void World::MarkByHand(int m, bool only_if_unmarked, bool keep_record) {
  const std::string marker = DeploymentMarkerKey(EngineOptions());
  SimRedis& redis = cluster_.redis(m);
  SimRedis::Connection conn;
  std::string suffix;
  if (keep_record) {
    const internal::RedisReply now =
        redis.Execute(loop_.now(), conn, {"GET", marker});
    if (now.type == internal::RedisReply::Type::kString) {
      const size_t cut = now.str.find(';');
      if (cut != std::string::npos) suffix = now.str.substr(cut);
    }
  }
  std::vector<std::string> argv = {
      "SET", marker,
      absl::StrCat(internal::kTrustedMarker, ":0:", redis.run_id(), suffix)};
  if (only_if_unmarked) argv.push_back("NX");
  redis.Execute(loop_.now(), conn, argv);
}

bool World::RestoreFencingForTheFinish() {
  if (config_.membership != WorldConfig::Membership::kReconfigure ||
      reconfigure_phase_ != 1) {
    return false;
  }
  const std::vector<std::string> old_list =
      MemberNames(PlannedSwitch::List::kOld);
  std::vector<int> old_masters;
  for (int m = 0; m < config_.masters; ++m) {
    if (std::binary_search(old_list.begin(), old_list.end(), MemberName(m))) {
      old_masters.push_back(m);
    }
  }
  std::vector<admin::Server> servers = OperatorServers(old_masters);
  admin::ReadServers(*OperatorIo(old_masters),
                     DeploymentMarkerKey(EngineOptions()), &servers);
  const int size = static_cast<int>(old_masters.size());
  const int needed = size - (size / 2 + 1) + 1;
  int complete = 0;
  std::vector<int> named;
  for (size_t i = 0; i < servers.size(); ++i) {
    if (!servers[i].reachable) continue;
    if (admin::WhyCountersIncomplete(servers[i]).empty()) {
      ++complete;
    } else {
      named.push_back(old_masters[i]);
    }
  }
  if (complete >= needed || named.empty()) return false;
  // Every restart is max_ttl old by now (faults end before the heal, and
  // the caller waited max_ttl since), as the runbook asks before a re-mark.
  RaiseCountersByHand();
  for (int m : named) MarkByHand(m, false, /*keep_record=*/true);
  remarked_masters_ += static_cast<int64_t>(named.size());
  return true;
}

// The operator's steps after data loss, as docs/failure-behaviour.md and
// docs/lifetime-and-fencing.md prescribe them; the heal runs them once every
// lock from before has expired. Each is a documented, fail-closed loss of
// liveness that only an operator can end:
//  - every master lost the deployment marker (all restarted empty): clients
//    that knew the deployment refuse every grant ("not yet judged") until
//    the masters are marked by hand;
//  - too many masters cannot give a trusted fence counter (a majority lost
//    the counters, or restarted since they were marked without durable
//    persistence, so their counters may be older than tokens issued):
//    fencing is refused until the counters are raised by hand to a floor
//    above every token issued, and the restarted masters re-marked (and
//    their clients' connections closed, so that the clients read the new
//    mark: they judge a marker when they connect).
// Raising the counters comes first: a master marked trusted with a counter
// too low would let a token be issued again. A mark by hand is
// "trusted:0:<run_id>", the run_id the master's INFO server reports now.
void World::RunOperatorSteps() {
  // First, when too few members carry the membership record kept (a
  // majority restarted without durable persistence): no client can know the
  // record is current, and the members without it cast no grant until the
  // operator restores it; those that restarted empty are marked reborn, and
  // the steps below see them so.
  if (RestoreRecordIfUnknown()) ++operator_steps_;
  const Options options = EngineOptions();
  const std::string counter = FenceCounterKey(options, FencedResource());
  const std::string marker = DeploymentMarkerKey(options);
  const int quorum = config_.masters / 2 + 1;
  auto get = [this](int m, const std::string& key) {
    SimRedis::Connection conn;
    return cluster_.redis(m).Execute(loop_.now(), conn, {"GET", key});
  };
  int untrusted_fence = 0, unmarked = 0;
  std::vector<int> restarted_lossy;
  for (int m = 0; m < config_.masters; ++m) {
    const internal::RedisReply k = get(m, marker);
    const bool is_marked = k.type == internal::RedisReply::Type::kString;
    std::string state, run_id;
    int64_t time_us = 0;
    if (is_marked) internal::ParseMarker(k.str, &state, &time_us, &run_id);
    const bool trusted = is_marked && state == internal::kTrustedMarker;
    if (!is_marked) ++unmarked;
    // Restarted since it was marked (a marker without a run_id cannot
    // tell: taken as restarted), and a crash may have lost its newest
    // counters.
    // Or judged reborn on a master that does not restart empty: it may have
    // lost its marker and kept older counters. The engine distrusts both
    // (RestartGuard::FenceVeto) until an operator re-marks them.
    const SimRedis::Persistence persistence =
        cluster_.redis(m).config().persistence;
    const bool lossy = is_marked &&
                       persistence != SimRedis::Persistence::kAofAlways &&
                       (run_id != cluster_.redis(m).run_id() ||
                        (state == internal::kRebornMarker &&
                         persistence != SimRedis::Persistence::kNone));
    // With lossy_change, also every master the operator knows lost data.
    if (lossy || lost_data_.count(m) > 0) restarted_lossy.push_back(m);
    if ((get(m, counter).type == internal::RedisReply::Type::kNil &&
         !trusted) ||
        lossy || lost_data_.count(m) > 0) {
      ++untrusted_fence;
    }
  }
  const bool all_unmarked = unmarked == config_.masters;
  const bool fencing_unavailable =
      untrusted_fence >= config_.masters - quorum + 1;
  if (fencing_unavailable || all_unmarked) {
    RaiseCountersByHand();
    ++operator_steps_;
  }
  if (all_unmarked) {
    for (int m = 0; m < config_.masters; ++m) MarkByHand(m, true);
    ++operator_steps_;
  }
  if (fencing_unavailable && !restarted_lossy.empty()) {
    // Connected clients read the new mark at their next fenced attempt
    // (Engine::RefreshUnmarked): no connection is closed.
    for (int m : restarted_lossy) MarkByHand(m, false);
    remarked_masters_ += static_cast<int64_t>(restarted_lossy.size());
    ++operator_steps_;
  }
  // A mark by hand replaces the marker, and the membership record with it:
  // with WorldConfig::lossy_change (which re-marks more masters) the
  // operator then writes the record back with the tool.
  if (config_.lossy_change && RestoreRecordIfUnknown()) ++operator_steps_;
}

absl::StatusOr<admin::Judged> World::OperatorJudge() {
  std::vector<int> every(config_.masters);
  for (int m = 0; m < config_.masters; ++m) every[m] = m;
  std::vector<admin::Server> servers = OperatorServers(every);
  admin::ReadServers(*OperatorIo(every), DeploymentMarkerKey(EngineOptions()),
                     &servers);
  return admin::Judge(Quorum::kMajority, servers);
}

bool World::RestoreRecordIfUnknown() {
  // The operator looks first (the tool's judgement over every server), and
  // restores only a record not known to be current, naming its members
  // both ways.
  const absl::StatusOr<admin::Judged> judged = OperatorJudge();
  if (!judged.ok() || judged->current.ok()) return false;
  // Only when no change happened since (docs/failure-behaviour.md): once
  // the operator's change finished, a record other than its steady N is
  // one the change left behind (the servers that carried N lost it), and
  // restoring it would undo the change. The operator leaves it (and the
  // liveness it costs: WorldResult::unrestorable_record).
  if (config_.membership == WorldConfig::Membership::kReconfigure &&
      reconfigure_phase_ >= 2 &&
      (judged->record.joint() ||
       judged->record.members != MemberNames(PlannedSwitch::List::kNew))) {
    return false;
  }
  std::vector<admin::Step> steps;
  OperatorPasses(judged->record.members, judged->record.members, &steps);
  return std::find(steps.begin(), steps.end(), admin::Step::kRestore) !=
         steps.end();
}

absl::Status World::RecordNotKnownCurrent() {
  const absl::StatusOr<admin::Judged> judged = OperatorJudge();
  if (!judged.ok()) return absl::OkStatus();
  return judged->current;
}

void World::HealAll() {
  BringBack();
  partition_on_ = false;
  for (int m = 0; m < config_.masters; ++m) {
    if (cluster_.state(m) == SimCluster::MasterState::kCrashed) {
      RestartMaster(m);
    }
    if (cluster_.state(m) == SimCluster::MasterState::kPaused) {
      cluster_.Resume(m);
    }
    cluster_.SetExtraDelay(m, absl::ZeroDuration());
    cluster_.SetRefuseConnects(m, false);
    cluster_.SetClockRate(m, 1.0);
  }
}

// Acquires resource `index` (then releases it) through a client, retrying
// until it wins or a bound well past the liveness bound has passed.
// Four probes: each resource twice (a lock, or with kRwLock a writer then a
// reader), or with kSemaphore one permit and all of them, twice.
void World::Probe(size_t index, absl::AnyInvocable<void()> done) {
  if (config_.primitive == WorldConfig::Primitive::kElection) {
    ProbeElection(index, std::move(done));
    return;
  }
  if (index >= 2 * std::size(kResources)) {
    done();
    return;
  }
  const int client = static_cast<int>(index % clients_.size());
  auto op = std::make_shared<PlannedOp>();
  op->client = client;
  op->resource = static_cast<int>(index % std::size(kResources));
  op->kind = PlannedOp::Kind::kWorkRelease;
  if (config_.primitive == WorldConfig::Primitive::kSemaphore) {
    op->resource = kPool;
    op->permits = index % 2 == 0 ? 1 : plan_.limit;
  } else if (config_.primitive == WorldConfig::Primitive::kRwLock) {
    op->shared = index >= std::size(kResources);
  }
  const int64_t give_up = T() + Ns(config_.ttl + absl::Seconds(3));
  auto attempt = std::make_shared<absl::AnyInvocable<void()>>();
  *attempt = [this, index, op, give_up, attempt,
              done = std::move(done)]() mutable {
    Acquire(op->client, op.get(), config_.ttl,
            [this, index, op, give_up, attempt,
             &done](absl::StatusOr<Lock> lock) mutable {
              if (!lock.ok()) {
                if (T() < give_up) {
                  loop_.After(absl::Milliseconds(50),
                              [attempt] { (*attempt)(); });
                } else {
                  auto next = std::move(done);
                  *attempt = nullptr;  // Breaks the cycle.
                  Probe(index + 1, std::move(next));
                }
                return;
              }
              auto h = std::make_shared<Holding>();
              h->client = op->client;
              h->op = op.get();
              h->lock = *std::move(lock);
              h->section = history_.sections.size() - 1;
              h->finished = true;
              history_.sections[h->section].work_end = T();
              Release(h, [this, index, op, attempt, &done] {
                auto next = std::move(done);
                *attempt = nullptr;
                Probe(index + 1, std::move(next));
              });
            });
  };
  (*attempt)();
}

// ---------------------------------------------------------------- elections

void World::Campaign(
    int client, const PlannedOp* op, absl::Duration wait,
    std::shared_ptr<Holding> h,
    absl::AnyInvocable<void(absl::StatusOr<Leadership>)> then) {
  Client& c = clients_[client];
  if (c.engine == nullptr) return;
  h->client = client;
  h->op = op;
  h->value_base = absl::StrCat("c", client, "-", c.campaigns++);
  // Read by the client's LeaseWatcher when the lease is won.
  c.campaign_value = absl::StrCat(h->value_base, "-r1");
  CampaignOptions options;
  options.ttl = config_.ttl;
  options.wait = wait;
  if (op->cancel_after > absl::ZeroDuration()) {
    loop_.After(op->cancel_after,
                [cancel = options.cancel]() mutable { cancel.Cancel(); });
  }
  // The leader stops leading when told it lost the lease.
  std::weak_ptr<Holding> weak = h;
  options.on_lost = [this, weak](const absl::Status&) {
    std::shared_ptr<Holding> h = weak.lock();
    if (h == nullptr || h->finished || h->leadership.state() == nullptr) {
      return;
    }
    h->lost = true;
    FinishLeading(h, [this, client = h->client] { NextOp(client); });
  };
  const size_t call = NewCall(client, "campaign", kElection);
  const int64_t start = T();
  absl::Status sent = c.engine->Campaign(
      kElectionName, c.campaign_value, std::move(options),
      [this, call, client, start, h,
       then = std::move(then)](absl::StatusOr<Leadership> lead) mutable {
        ++history_.calls[call].completions;
        if (!lead.ok()) {
          torture::AcquireFailure f;
          f.client = client;
          f.resource = kElectionName;
          f.start = start;
          f.ret = T();
          f.code = absl::StatusCodeToString(lead.status().code());
          history_.failed_acquisitions.push_back(std::move(f));
          then(std::move(lead));
          return;
        }
        // The leadership as a fenced lock of the election's name.
        torture::Section s;
        s.client = client;
        s.seq = clients_[client].sections++;
        s.resource = kElectionName;
        s.token = lead->lock().token();
        s.votes = VoteLetters(lead->lock().votes());
        s.fence = static_cast<int64_t>(lead->epoch());
        s.start = start;
        s.ret = T();
        s.valid_until = TrueOf(clients_[client], lead->lock().valid_until());
        s.work_start = s.ret;
        history_.sections.push_back(std::move(s));
        h->section = history_.sections.size() - 1;
        h->leadership = *lead;
        h->lock = lead->lock();
        then(std::move(lead));
      });
  if (!sent.ok()) {
    history_.calls[call].completions = 1;
    history_.summary.details.push_back(
        absl::StrCat("campaign refused: ", sent.ToString()));
    stuck_ = true;
    loop_.After(absl::ZeroDuration(),
                [then = std::move(then), sent]() mutable { then(sent); });
  }
}

void World::Lead(std::shared_ptr<Holding> h) {
  const PlannedOp* op = h->op;
  if (op->kind == PlannedOp::Kind::kPausedLeader) {
    // Paused at once: no extension from here on, and no word of the loss.
    // It wakes past its lease and acts on its old epoch all the same: only
    // the fencing epoch (and the lease the record script checks) can stop
    // it.
    if (auto keep = h->leadership.state()->keep_alive.lock()) {
      internal::StopKeepAlive(*keep, /*release=*/false);
    }
    loop_.After(op->work, [this, h] {
      Write(h, [this, h] {
        Proclaim(h);
        FinishLeading(h, [this, client = h->client] { NextOp(client); });
      });
    });
    return;
  }
  // A new leader writes the fenced storage at once (and again as it
  // stops): a leader paused past its lease finds its successor's epoch
  // there when it wakes.
  Write(h, [] {});
  for (int k = 0; k < op->proclaims; ++k) {
    loop_.After(op->work * (k + 1) / (op->proclaims + 1),
                [this, h] { Proclaim(h); });
  }
  loop_.After(op->work, [this, h] {
    if (h->finished) return;
    Write(h, [this, h] {
      if (!h->op->exits) {
        FinishLeading(h, [this, client = h->client] { NextOp(client); });
        return;
      }
      // The process exits without resigning: its lease expires with the
      // TTL, and candidates waiting take it then.
      if (h->finished) return;
      h->finished = true;
      torture::Section& s = history_.sections[h->section];
      s.work_end = T();
      s.valid_until = std::max(
          s.valid_until, TrueOf(clients_[h->client], h->lock.valid_until()));
      s.release = "exited";
      NewEngine(h->client);
      ++fresh_clients_;
      NextOp(h->client);
    });
  });
}

void World::Proclaim(std::shared_ptr<Holding> h) {
  Client& c = clients_[h->client];
  if (h->finished || quiescing_ || c.engine == nullptr) return;
  const std::string value = absl::StrCat(h->value_base, "-r", h->next_revision);
  const size_t call = NewCall(h->client, "proclaim", kElection);
  const int64_t start = T();
  absl::Status sent = c.engine->Proclaim(
      h->leadership, value,
      [this, call](absl::Status) { ++history_.calls[call].completions; });
  if (!sent.ok()) {  // Lost already: nothing was sent.
    history_.calls[call].completions = 1;
    return;
  }
  // Whatever the outcome, it may have landed: a value it may be seen with.
  torture::Proclamation p;
  p.client = h->client;
  p.election = kElectionName;
  p.epoch = static_cast<int64_t>(h->leadership.epoch());
  p.revision = h->next_revision++;
  p.value = value;
  p.start = start;
  history_.proclamations.push_back(std::move(p));
}

void World::FinishLeading(std::shared_ptr<Holding> h,
                          absl::AnyInvocable<void()> then) {
  Client& c = clients_[h->client];
  if (h->finished || c.engine == nullptr) return;
  h->finished = true;
  torture::Section& s = history_.sections[h->section];
  s.work_end = T();
  // The keep-alive moved the validity on: the leadership held until then.
  s.valid_until = std::max(s.valid_until, TrueOf(c, h->lock.valid_until()));
  const size_t call = NewCall(h->client, "resign", kElection);
  absl::Status sent = c.engine->Resign(
      h->leadership, [this, h, call, then = std::move(then)](
                         absl::StatusOr<ReleaseReport> report) mutable {
        ++history_.calls[call].completions;
        torture::Section& s = history_.sections[h->section];
        s.release =
            report.ok()
                ? (report->freed ? "ok" : "partial")
                : std::string(absl::StatusCodeToString(report.status().code()));
        s.release_at = T();
        then();
      });
  if (!sent.ok()) {
    history_.calls[call].completions = 1;
    s.release = std::string(sent.message());
    loop_.After(absl::ZeroDuration(), std::move(then));
  }
}

void World::Observe(int client, const PlannedOp* op) {
  Client& c = clients_[client];
  if (c.engine == nullptr) return;
  const int64_t watch = c.watches++;
  ObserveOptions options;
  options.poll_every = config_.ttl / 2;
  options.on_leader = [this, client, watch](const LeaderInfo& info) {
    torture::LeaderView v;
    v.client = client;
    v.watch = watch;
    v.election = info.name;
    v.epoch = static_cast<int64_t>(info.epoch);
    v.revision = static_cast<int64_t>(info.revision);
    v.value = info.value;
    v.at = T();
    history_.views.push_back(std::move(v));
  };
  absl::StatusOr<std::weak_ptr<internal::ObserveOp>> observing =
      c.engine->Observe(kElectionName, std::move(options));
  if (!observing.ok()) {
    history_.summary.details.push_back(
        absl::StrCat("observe refused: ", observing.status().ToString()));
    stuck_ = true;
    return;
  }
  loop_.After(op->work, [this, client, observing = *observing] {
    if (auto o = observing.lock()) o->Stop();
    NextOp(client);
  });
}

// Four campaigns, one client after another, each resigning at once,
// retried until won or a bound well past the liveness bound has passed.
void World::ProbeElection(size_t index, absl::AnyInvocable<void()> done) {
  if (index >= 4) {
    done();
    return;
  }
  auto op = std::make_shared<PlannedOp>();
  op->client = static_cast<int>(index % clients_.size());
  op->resource = kElection;
  op->kind = PlannedOp::Kind::kLead;
  const int64_t give_up = T() + Ns(config_.ttl + absl::Seconds(3));
  auto attempt = std::make_shared<absl::AnyInvocable<void()>>();
  *attempt = [this, index, op, give_up, attempt,
              done = std::move(done)]() mutable {
    auto h = std::make_shared<Holding>();
    Campaign(op->client, op.get(), config_.ttl, h,
             [this, index, op, give_up, attempt, h,
              &done](absl::StatusOr<Leadership> lead) mutable {
               if (!lead.ok()) {
                 if (T() < give_up) {
                   loop_.After(absl::Milliseconds(50),
                               [attempt] { (*attempt)(); });
                 } else {
                   auto next = std::move(done);
                   *attempt = nullptr;  // Breaks the cycle.
                   ProbeElection(index + 1, std::move(next));
                 }
                 return;
               }
               FinishLeading(h, [this, index, op, attempt, &done] {
                 auto next = std::move(done);
                 *attempt = nullptr;
                 ProbeElection(index + 1, std::move(next));
               });
             });
  };
  (*attempt)();
}

WorldResult World::Run() {
  history_.summary.t0 = 0;
  history_.summary.ttl_ns = Ns(config_.ttl);
  history_.summary.retry_max_ns = Ns(Options().retry.max_delay);
  if (config_.primitive == WorldConfig::Primitive::kSemaphore) {
    history_.resources = {kPoolName};
  } else if (config_.primitive == WorldConfig::Primitive::kElection) {
    history_.resources = {kElectionName};
  } else {
    history_.resources = {kResources[0], kResources[1]};
  }
  const bool membership = config_.membership != WorldConfig::Membership::kOff;
  if (membership) WriteFirstRecords();
  if (config_.lossy_change) {
    // The first snapshot of every RDB master: the deployment as it starts.
    for (int m = 0; m < config_.masters; ++m) {
      cluster_.redis(m).Save(loop_.now());
    }
  }
  StartClients();
  if (config_.membership == WorldConfig::Membership::kReconfigure) {
    loop_.At(loop_.epoch() + plan_.reconfigure_at,
             [this] { ReconfigureStep(); });
  }
  if (plan_.down_master >= 0) {
    loop_.At(loop_.epoch() + plan_.down_at, [this] { TakeDown(); });
  }
  for (const PlannedFault& f : plan_.faults) {
    loop_.At(loop_.epoch() + f.start, [this, &f] { ApplyFault(f); });
    last_fault_end_ = std::max(last_fault_end_, Ns(f.start + f.duration));
  }
  const absl::Time limit = loop_.epoch() + absl::Minutes(30);
  // 1. The active phase.
  while (!stuck_ && !AllClientsDone() && loop_.now() < limit) {
    if (!loop_.RunNext()) break;
  }
  const bool active_done = AllClientsDone();
  // 2. Heal and settle.
  loop_.RunUntil(std::max(loop_.now(),
                          loop_.epoch() + absl::Nanoseconds(last_fault_end_)));
  HealAll();
  if (membership) {
    // The change and the roll complete: the operator's last steps, then
    // every client on N.
    // If the tool still cannot finish a minute after the heal, the record
    // it reads is not known to be current (the servers that carried the
    // joint record lost it, WorldConfig::lossy_change): once every lock
    // from before has expired, the operator restores the record (the
    // change never finished, so no change happened since), and the tool,
    // still running, begins the change again.
    // If that fails too (the tool restores only a steady record), the
    // operator gives up a minute later: see `unrestorable` below.
    absl::Time stalled = loop_.now() + absl::Minutes(1);
    bool restored = false;
    while (config_.membership == WorldConfig::Membership::kReconfigure &&
           reconfigure_phase_ < 2 && loop_.now() < limit) {
      if (loop_.now() >= stalled) {
        if (restored) break;
        restored = true;
        loop_.RunUntil(loop_.now() + config_.max_ttl + config_.ttl);
        if (RestoreFencingForTheFinish()) ++operator_steps_;
        if (RestoreRecordIfUnknown()) ++operator_steps_;
        stalled = loop_.now() + absl::Minutes(1);
        continue;
      }
      if (!loop_.RunNext()) break;
    }
    for (int i = 0; i < config_.clients; ++i) {
      // A partitioned client is a new process too: the partition is over.
      const bool partitioned =
          partition_applied_ && i == plan_.partitioned_client;
      if (clients_[i].list == PlannedSwitch::List::kNew && !partitioned) {
        continue;
      }
      clients_[i].list = PlannedSwitch::List::kNew;
      NewEngine(i);
      ++switched_clients_;
    }
  }
  loop_.RunUntil(loop_.now() + config_.max_ttl + config_.ttl);
  RunOperatorSteps();
  // A record the operator could not restore (the tool refuses to restore a
  // joint record, and a change that never finished cannot be finished on
  // it): no grant counts until an operator writes it by hand, which no
  // documented step does. Fail-closed, and reported apart; the probe, which
  // could only fail, is not run.
  bool unrestorable = false;
  if (membership) {
    const absl::Status current = RecordNotKnownCurrent();
    if (!current.ok()) {
      unrestorable = true;
      history_.summary.details.push_back(absl::StrCat(
          "liveness not judged: the membership record could not be "
          "restored: ",
          current.message()));
    }
  }
  // 3. The liveness probe.
  history_.summary.heal = T();
  bool probed = unrestorable;
  if (active_done && !stuck_ && !unrestorable) {
    Probe(0, [&probed] { probed = true; });
    while (!probed && loop_.now() < limit) {
      if (!loop_.RunNext()) break;
    }
  }
  history_.summary.end = T();
  if (!active_done || !probed) {
    history_.summary.details.push_back(
        absl::StrCat("stuck: ", active_done ? "the probe" : "the active phase",
                     " did not finish"));
    history_.summary.liveness += 1;
  }
  // 4. Quiescence: leftover lock keys, once what is in flight has landed
  // (the clean-up release of a last failed attempt) and well before any TTL
  // could hide a leftover; then every engine goes and the loop runs dry
  // (callbacks still owed run now, cancelled).
  loop_.RunUntil(loop_.now() + absl::Milliseconds(100));
  const Options options = EngineOptions();
  // The keys that make a holder: lock keys, and a semaphore's slots or a
  // reader's key and a waiting writer's mark. (Not a semaphore's limit key:
  // it outlives the last release by up to a TTL, by design.)
  std::vector<std::string> exact, prefixes;
  if (config_.primitive == WorldConfig::Primitive::kSemaphore) {
    for (int i = 0; i < plan_.limit; ++i) {
      exact.push_back(SemaphoreSlotKey(options, kPoolName, i));
    }
  } else if (config_.primitive == WorldConfig::Primitive::kElection) {
    // The lease (the record stays, by design: it counts only with its
    // lease).
    exact.push_back(ElectionLockKey(options, kElectionName));
  } else {
    for (const char* resource : kResources) {
      exact.push_back(LockKey(options, resource));
      if (config_.primitive == WorldConfig::Primitive::kRwLock) {
        exact.push_back(WriterWaitingKey(options, resource));
        exact.push_back(SharedHoldersKey(options, resource));
        prefixes.push_back(SharedHolderKey(options, resource, ""));
      }
    }
  }
  for (int m = 0; m < config_.masters; ++m) {
    auto left_over = [&](const std::string& k) {
      torture::Leftover left;
      left.master = absl::StrCat("m", m + 1);
      left.key = k;
      history_.leftover_keys.push_back(std::move(left));
    };
    for (const std::string& key : exact) {
      for (const std::string& k : cluster_.Keys(m, key)) {
        if (k == key) left_over(k);
      }
    }
    for (const std::string& prefix : prefixes) {
      for (const std::string& k : cluster_.Keys(m, prefix)) left_over(k);
    }
  }
  history_.summary.leftover_check_ran = true;
  quiescing_ = true;
  for (auto& weak : holdings_) {
    if (auto h = weak.lock()) h->keep_alive.reset();
  }
  for (Client& c : clients_) {
    CountWakeups(c);
    c.engine.reset();
  }
  loop_.RunUntilIdle();
  WorldResult result;
  result.events = loop_.events_run();
  result.operations = operations_;
  result.faults = static_cast<int64_t>(plan_.faults.size());
  result.operator_steps = operator_steps_;
  result.remarked_masters = remarked_masters_;
  result.fresh_clients = fresh_clients_;
  result.wakeup_messages = wakeup_messages_;
  for (int m = 0; m < config_.masters; ++m) {
    result.hand_offs += cluster_.redis(m).hand_offs();
  }
  result.hand_off_wins = hand_offs_->wins();
  result.switched_clients = switched_clients_;
  result.reconfigure_phase = reconfigure_phase_;
  result.grants_by_list = grants_by_list_;
  result.grants_during_change = grants_during_change_;
  result.unrestorable_record = unrestorable;
  torture::CheckHistory(&history_);
  result.history = std::move(history_);
  return result;
}

}  // namespace

absl::StatusOr<WorldConfig> NamedConfig(absl::string_view name) {
  WorldConfig c;
  c.name = std::string(name);
  if (name == "safe") return c;
  if (name == "guarded") {
    c.persistence = false;
    return c;
  }
  if (name == "guard-off") {
    c.persistence = false;
    c.restart_guard = false;
    return c;
  }
  if (name == "fast-clock") {
    c.max_clock_speedup = 0.5;
    return c;
  }
  if (name == "legacy-grant") {
    c.persistence = false;
    c.legacy_grant_rule = true;
    c.crash_heavy = true;
    return c;
  }
  if (name == "churn") {
    c.churn = true;
    return c;
  }
  if (name == "guarded-churn") {
    c.persistence = false;
    c.churn = true;
    return c;
  }
  if (name == "guarded-crashes") {
    // "legacy-grant" with today's rule: must be safe.
    c.persistence = false;
    c.crash_heavy = true;
    return c;
  }
  if (name == "guarded-partial") {
    // Short crashes that keep the marker and lose the newest keys.
    c.partial_loss = true;
    c.crash_heavy = true;
    return c;
  }
  if (name == "reconfigure") {
    // A rolling change of one master with the safe procedure: 4 servers,
    // lists of 3, every kind of fault.
    c.masters = 4;
    c.clients = 4;
    c.membership = WorldConfig::Membership::kReconfigure;
    return c;
  }
  // Issue 45: the change with data lost around it, and partial reach
  // (WorldConfig::lossy_change), under the safe procedure and rule, and
  // with each of the two fixes off.
  if (absl::string_view rest = name;
      absl::ConsumePrefix(&rest, "reconfigure-lossy")) {
    c.masters = 4;
    c.clients = 4;
    c.operations = 100;
    c.membership = WorldConfig::Membership::kReconfigure;
    c.lossy_change = true;
    if (rest.empty()) return c;
    if (rest == "-trust-unknown") {
      c.trust_unknown_records = true;
      return c;
    }
    if (rest == "-trust-joining") {
      c.trust_joining_after_begin = true;
      return c;
    }
  }
  if (name == "membership-ignored") {
    // "reconfigure" without the procedure, each client counting a majority
    // of its own list: unsafe.
    c.masters = 4;
    c.clients = 4;
    c.membership = WorldConfig::Membership::kIgnored;
    return c;
  }
  // Issue 24: a counting semaphore, and readers with writers, under the
  // fault plans of "safe", "guarded", "guarded-churn" and "guarded-partial".
  for (const char* prefix : {"semaphore", "rwlock"}) {
    if (!absl::StartsWith(name, prefix)) continue;
    c.primitive = absl::string_view(prefix) == "semaphore"
                      ? WorldConfig::Primitive::kSemaphore
                      : WorldConfig::Primitive::kRwLock;
    c.clients = 4;
    const absl::string_view rest =
        name.substr(absl::string_view(prefix).size());
    if (rest.empty()) return c;
    if (rest == "-guarded") {
      c.persistence = false;
      return c;
    }
    if (rest == "-churn") {
      c.persistence = false;
      c.churn = true;
      return c;
    }
    if (rest == "-partial") {
      c.partial_loss = true;
      c.crash_heavy = true;
      return c;
    }
    if (rest == "-counters" &&
        c.primitive == WorldConfig::Primitive::kSemaphore) {
      // "semaphore" with the majority-of-counters rule: unsafe.
      c.semaphore_counters = true;
      return c;
    }
  }
  // Hand-offs in the release (RetryPolicy::hand_off) under the fault plans
  // of "churn", "guarded-churn", "guarded-partial" and "reconfigure".
  if (absl::string_view rest = name; absl::ConsumePrefix(&rest, "handoff")) {
    absl::StatusOr<WorldConfig> base = absl::InvalidArgumentError("");
    if (rest.empty()) base = NamedConfig("churn");
    if (rest == "-guarded") base = NamedConfig("guarded-churn");
    if (rest == "-partial") base = NamedConfig("guarded-partial");
    if (rest == "-reconfigure") base = NamedConfig("reconfigure");
    if (base.ok()) {
      base->name = std::string(name);
      base->hand_off = true;
      return base;
    }
  }
  // Issue 49: an election under the fault plans of "safe", "guarded",
  // "guarded-churn" and "guarded-partial".
  if (absl::string_view rest = name; absl::ConsumePrefix(&rest, "election")) {
    absl::StatusOr<WorldConfig> base = absl::InvalidArgumentError("");
    if (rest.empty()) base = NamedConfig("safe");
    if (rest == "-guarded") base = NamedConfig("guarded");
    if (rest == "-churn") base = NamedConfig("guarded-churn");
    if (rest == "-partial") base = NamedConfig("guarded-partial");
    if (base.ok()) {
      base->name = std::string(name);
      base->primitive = WorldConfig::Primitive::kElection;
      base->clients = 5;
      return base;
    }
  }
  if (name == "partial-trust-marked") {
    // "guarded-partial" with a marked master trusted at once: unsafe.
    c.partial_loss = true;
    c.crash_heavy = true;
    c.trust_marked_restarts = true;
    return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown configuration \"", name,
                   "\"; known: ", absl::StrJoin(ConfigNames(), ", ")));
}

std::vector<std::string> ConfigNames() {
  return {"safe",
          "guarded",
          "guarded-crashes",
          "churn",
          "guarded-churn",
          "guarded-partial",
          "reconfigure",
          "reconfigure-lossy",
          "guard-off",
          "fast-clock",
          "legacy-grant",
          "partial-trust-marked",
          "membership-ignored",
          "reconfigure-lossy-trust-unknown",
          "reconfigure-lossy-trust-joining",
          "semaphore",
          "semaphore-guarded",
          "semaphore-churn",
          "semaphore-partial",
          "semaphore-counters",
          "rwlock",
          "rwlock-guarded",
          "rwlock-churn",
          "rwlock-partial",
          "handoff",
          "handoff-guarded",
          "handoff-partial",
          "handoff-reconfigure",
          "election",
          "election-guarded",
          "election-churn",
          "election-partial"};
}

bool ExpectedSafe(absl::string_view name) {
  return name == "safe" || name == "guarded" || name == "guarded-crashes" ||
         name == "churn" || name == "guarded-churn" ||
         name == "guarded-partial" || name == "reconfigure" ||
         name == "reconfigure-lossy" || name == "semaphore" ||
         name == "semaphore-guarded" || name == "semaphore-churn" ||
         name == "semaphore-partial" || name == "rwlock" ||
         name == "rwlock-guarded" || name == "rwlock-churn" ||
         name == "rwlock-partial" || name == "handoff" ||
         name == "handoff-guarded" || name == "handoff-partial" ||
         name == "handoff-reconfigure" || name == "election" ||
         name == "election-guarded" || name == "election-churn" ||
         name == "election-partial";
}

namespace {

// WorldConfig::lossy_change: each master's persistence and the data lost
// around the change (see the field), drawn after everything else.
void PlanLossyChange(const WorldConfig& config, std::mt19937_64& rng,
                     absl::Duration active, Plan* plan) {
  const int spare = config.masters - 1;
  // The change's wait, as the operator's tool measures it; the finish
  // comes about this long after the begin (later if servers are down).
  const absl::Duration wait = config.max_ttl * 1.01 + absl::Seconds(3);
  const absl::Duration begin = plan->reconfigure_at;
  const absl::Duration finish = begin + wait;
  auto at_least_zero = [](absl::Duration d) {
    return std::max(absl::ZeroDuration(), d);
  };
  // Persistence: none, RDB (snapshots at the start and at the plan's
  // kSnapshot moments only, so a restart is from an older one), AOF
  // everysec, AOF always.
  for (int m = 0; m < config.masters; ++m) {
    SimRedis::Config redis;
    const int pick = static_cast<int>(rng() % 6);
    redis.persistence = pick < 1   ? SimRedis::Persistence::kNone
                        : pick < 4 ? SimRedis::Persistence::kRdb
                        : pick < 5 ? SimRedis::Persistence::kAofEverysec
                                   : SimRedis::Persistence::kAofAlways;
    redis.aof_loss_window =
        Uniform(rng, absl::Milliseconds(500), absl::Seconds(2));
    plan->masters.push_back(redis);
  }
  // Members of both lists: old members but the replaced one. One of them,
  // the anchor, keeps every write (AOF always) and never restarts empty:
  // with every member of a list restarted empty, a client that never saw
  // the deployment takes it for a new one, the documented limit
  // (docs/design.md, "What it cannot see"), which the simulation finds at
  // once and which is no finding. The partition cuts client 0 off from it.
  std::vector<int> both;
  for (int m = 0; m < spare; ++m) {
    if (m != plan->replaced) both.push_back(m);
  }
  const int anchor = both[rng() % both.size()];
  plan->masters[anchor].persistence = SimRedis::Persistence::kAofAlways;
  std::vector<int> others;  // Both lists', but the anchor.
  for (int m : both) {
    if (m != anchor) others.push_back(m);
  }
  // The master down through the change: mostly the replaced one (left
  // behind by the change), else the anchor (missed by the joint phase's
  // holders).
  if (rng() % 4 != 0) {
    plan->down_master = rng() % 2 == 0 ? plan->replaced : anchor;
    plan->down_refuses = rng() % 2 == 0;
    plan->down_at = at_least_zero(
        begin - Uniform(rng, absl::ZeroDuration(), absl::Milliseconds(500)));
    plan->down_after_finish =
        Uniform(rng, absl::ZeroDuration(), absl::Milliseconds(1000));
  }
  // Client 0 (the old list throughout) cut off from one member of both
  // lists from about the finish on.
  if (rng() % 4 != 0) {
    plan->partitioned_client = 0;
    plan->unreachable_master = anchor;
    plan->partition_at = at_least_zero(
        finish + Uniform(rng, -absl::Milliseconds(500), absl::Seconds(2)));
  }
  auto crash = [&](PlannedFault::Kind kind, int master, absl::Duration start) {
    PlannedFault f;
    f.kind = master == anchor ? PlannedFault::Kind::kCrashRestart : kind;
    f.master = master;
    f.start = at_least_zero(start);
    f.duration = Uniform(rng, absl::Milliseconds(50), absl::Milliseconds(400));
    // The share of an AOF everysec window lost (0: all of it).
    f.amount = absl::ToDoubleMilliseconds(
        plan->masters[master].aof_loss_window *
        (static_cast<double>(rng() % 1001) / 1000.0));
    plan->faults.push_back(f);
  };
  // Snapshots of the old record, shortly before the begin.
  for (int m = 0; m < config.masters; ++m) {
    if (plan->masters[m].persistence != SimRedis::Persistence::kRdb) continue;
    PlannedFault f;
    f.kind = PlannedFault::Kind::kSnapshot;
    f.master = m;
    f.start = at_least_zero(
        begin - Uniform(rng, absl::ZeroDuration(), absl::Seconds(1)));
    f.duration = absl::ZeroDuration();
    plan->faults.push_back(f);
  }
  // The joining server restarts empty late in the joint phase.
  if (rng() % 4 != 0) {
    crash(PlannedFault::Kind::kCrashEmpty, spare,
          finish +
              Uniform(rng, -absl::Milliseconds(800), absl::Milliseconds(200)));
  }
  // A member of both lists restarts with what it kept after the finish
  // (an older snapshot: the old record), or empty.
  if (rng() % 4 != 0 && !others.empty()) {
    const int m = others[rng() % others.size()];
    crash(rng() % 4 == 0 ? PlannedFault::Kind::kCrashEmpty
                         : PlannedFault::Kind::kCrashRestart,
          m, finish + Uniform(rng, absl::Milliseconds(300), absl::Seconds(4)));
  }
  // And a few more anywhere around the change, before, during and after
  // the joint phase, of any master.
  const int more = static_cast<int>(rng() % 4);
  for (int k = 0; k < more; ++k) {
    const int m = static_cast<int>(rng() % config.masters);
    crash(rng() % 3 == 0 ? PlannedFault::Kind::kCrashEmpty
                         : PlannedFault::Kind::kCrashRestart,
          m,
          begin + Uniform(rng, -absl::Seconds(1),
                          std::min(active, wait + absl::Seconds(3))));
  }
}

}  // namespace

Plan MakePlan(const WorldConfig& config, uint64_t seed) {
  std::mt19937_64 rng(seed * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL);
  Plan plan;
  plan.seed = seed;
  const absl::Duration ttl = config.ttl;
  for (int k = 0; k < config.operations; ++k) {
    PlannedOp op;
    op.client = k % config.clients;
    op.resource = static_cast<int>(rng() % 2);
    const int pick = static_cast<int>(rng() % 10);
    op.kind = pick < 4   ? PlannedOp::Kind::kWorkRelease
              : pick < 6 ? PlannedOp::Kind::kExtend
              : pick < 8 ? PlannedOp::Kind::kKeepAlive
                         : PlannedOp::Kind::kPausedWriter;
    op.think = Uniform(rng, absl::ZeroDuration(), absl::Milliseconds(100));
    op.wait = Uniform(rng, absl::ZeroDuration(), absl::Milliseconds(1500));
    switch (op.kind) {
      case PlannedOp::Kind::kWorkRelease:
        op.work = Uniform(rng, absl::ZeroDuration(), ttl * 0.7);
        break;
      case PlannedOp::Kind::kExtend:
        op.work = Uniform(rng, absl::ZeroDuration(), ttl);
        break;
      case PlannedOp::Kind::kKeepAlive:
        op.work = Uniform(rng, ttl, ttl * 3);
        break;
      case PlannedOp::Kind::kPausedWriter:
        op.work = Uniform(rng, ttl * 1.05, ttl * 2);
        break;
    }
    if (config.churn) {
      // Drawn after the rest, so the plans of other configurations keep
      // their draws.
      if (rng() % 4 == 0) {
        op.cancel_after = Uniform(rng, absl::Microseconds(1),
                                  op.wait + absl::Milliseconds(20));
      }
      op.fresh_client = rng() % 5 == 0;
      if (rng() % 5 == 0) op.resource = kBoth;
    }
    // Drawn after the rest too.
    if (config.primitive == WorldConfig::Primitive::kSemaphore) {
      op.resource = kPool;
      op.permits = static_cast<int>(rng() % 2) + 1;
    } else if (config.primitive == WorldConfig::Primitive::kRwLock) {
      op.shared = rng() % 5 < 3;
      // A reader takes one resource.
      if (op.shared && op.resource == kBoth) op.resource = 1;
    } else if (config.primitive == WorldConfig::Primitive::kElection) {
      op.resource = kElection;
      const int role = static_cast<int>(rng() % 10);
      op.kind = role < 4   ? PlannedOp::Kind::kLead
                : role < 6 ? PlannedOp::Kind::kPausedLeader
                           : PlannedOp::Kind::kObserve;
      op.work = op.kind == PlannedOp::Kind::kLead
                    ? Uniform(rng, ttl * 0.3, ttl * 3)
                : op.kind == PlannedOp::Kind::kPausedLeader
                    ? Uniform(rng, ttl * 1.05, ttl * 2)
                    : Uniform(rng, ttl, ttl * 4);
      op.proclaims = static_cast<int>(rng() % 3);
      op.exits = rng() % 4 == 0;
    }
    plan.ops.push_back(op);
  }
  // Faults during the active phase, which lasts about this long.
  const int per_client =
      (config.operations + config.clients - 1) / std::max(1, config.clients);
  const absl::Duration active =
      std::max(absl::Seconds(2), per_client * ttl * 0.7);
  std::vector<PlannedFault::Kind> kinds = {
      PlannedFault::Kind::kCrashRestart,
      PlannedFault::Kind::kCrashRestart,
      PlannedFault::Kind::kPause,
      PlannedFault::Kind::kSlowLink,
      PlannedFault::Kind::kResetConnections,
      PlannedFault::Kind::kRefuseConnects,
      PlannedFault::Kind::kFlushScripts};
  if (config.max_clock_speedup > 0) {
    kinds.push_back(PlannedFault::Kind::kFastClock);
    kinds.push_back(PlannedFault::Kind::kFastClock);
  }
  if (config.crash_heavy) {
    // A master a holder missed (paused, slow) and one that restarts under
    // it are what a second grant needs.
    kinds = {
        PlannedFault::Kind::kCrashRestart, PlannedFault::Kind::kCrashRestart,
        PlannedFault::Kind::kCrashRestart, PlannedFault::Kind::kPause,
        PlannedFault::Kind::kSlowLink,     PlannedFault::Kind::kRefuseConnects};
  }
  for (int k = 0; k < config.faults; ++k) {
    PlannedFault f;
    f.kind = kinds[rng() % kinds.size()];
    f.master = static_cast<int>(rng() % config.masters);
    f.start = Uniform(rng, absl::ZeroDuration(), active);
    f.duration = Uniform(rng, absl::Milliseconds(50), absl::Seconds(2));
    if (config.crash_heavy) {
      // Short restarts; long slow links, so that a restarted master's
      // handshake is often slow too.
      f.duration =
          f.kind == PlannedFault::Kind::kSlowLink
              ? Uniform(rng, absl::Seconds(1), absl::Seconds(4))
              : Uniform(rng, absl::Milliseconds(50), absl::Milliseconds(400));
    }
    if (f.kind == PlannedFault::Kind::kSlowLink) {
      // Crash-heavy: links slow enough to widen a reconnect's handshake,
      // fast enough that replies still beat request_timeout (50ms).
      f.amount = config.crash_heavy ? static_cast<double>(rng() % 20 + 5)
                                    : static_cast<double>(rng() % 300 + 20);
    }
    if (f.kind == PlannedFault::Kind::kFastClock) {
      std::uniform_real_distribution<double> d(config.max_clock_speedup / 2,
                                               config.max_clock_speedup);
      f.amount = 1.0 + d(rng);
      f.duration = Uniform(rng, absl::Seconds(1), absl::Seconds(4));
    }
    if (config.churn && !config.persistence && config.masters > 1 &&
        f.kind == PlannedFault::Kind::kCrashRestart &&
        f.master == config.masters - 1) {
      // With fresh clients, the last master always keeps its data: if every
      // master lost its data, a client that never saw the deployment marked
      // takes it for a new one — the documented limit (docs/design.md,
      // "What it cannot see"), which the simulation found at once, not a
      // finding. It is paused instead.
      f.kind = PlannedFault::Kind::kPause;
    }
    if (config.partial_loss && f.kind == PlannedFault::Kind::kCrashRestart) {
      // The share of an AOF everysec master's window this crash loses, in
      // thousandths (scaled to the master's window below).
      f.amount = static_cast<double>(rng() % 1001);
    }
    plan.faults.push_back(f);
  }
  if (config.partial_loss) {
    // Each master's persistence, drawn after everything else. Mostly
    // lossy: AOF everysec or RDB snapshots; now and then AOF always.
    for (int m = 0; m < config.masters; ++m) {
      SimRedis::Config redis;
      const int pick = static_cast<int>(rng() % 5);
      redis.persistence = pick < 2   ? SimRedis::Persistence::kAofEverysec
                          : pick < 4 ? SimRedis::Persistence::kRdb
                                     : SimRedis::Persistence::kAofAlways;
      redis.aof_loss_window =
          Uniform(rng, absl::Milliseconds(500), absl::Seconds(2));
      redis.save = {{static_cast<int64_t>(rng() % 3 + 1), 1}};
      plan.masters.push_back(redis);
    }
    for (PlannedFault& f : plan.faults) {
      if (f.kind != PlannedFault::Kind::kCrashRestart) continue;
      const absl::Duration window = plan.masters[f.master].aof_loss_window;
      f.amount = absl::ToDoubleMilliseconds(window * (f.amount / 1000.0));
    }
  }
  if (config.membership != WorldConfig::Membership::kOff &&
      config.masters >= 2) {
    // Drawn after everything else. The change begins early in the active
    // phase; client 0 stays on O; each other client switches to N or to
    // O+N somewhere from a second before the change to a second after its
    // wait, and from O+N now and then to N later.
    const absl::Duration wait = config.max_ttl * 1.01 + absl::Seconds(3);
    plan.replaced = static_cast<int>(rng() % (config.masters - 1));
    plan.reconfigure_at = Uniform(rng, active * 0.1, active * 0.3);
    for (int c = 1; c < config.clients; ++c) {
      if (rng() % 5 == 0) continue;  // Stays on O too.
      PlannedSwitch first;
      first.client = c;
      first.list = rng() % 2 == 0 ? PlannedSwitch::List::kNew
                                  : PlannedSwitch::List::kUnion;
      first.at =
          std::max(absl::ZeroDuration(),
                   plan.reconfigure_at + Uniform(rng, -absl::Seconds(1),
                                                 wait + absl::Seconds(1)));
      plan.switches.push_back(first);
      if (first.list == PlannedSwitch::List::kUnion && rng() % 2 == 0) {
        PlannedSwitch second = first;
        second.list = PlannedSwitch::List::kNew;
        second.at = first.at + Uniform(rng, absl::Milliseconds(500), wait);
        plan.switches.push_back(second);
      }
    }
    std::sort(plan.switches.begin(), plan.switches.end(),
              [](const PlannedSwitch& a, const PlannedSwitch& b) {
                return a.at < b.at;
              });
  }
  if (config.primitive == WorldConfig::Primitive::kSemaphore) {
    plan.limit = static_cast<int>(rng() % 2) + 2;  // Drawn last.
  }
  if (config.lossy_change && plan.replaced >= 0)
    PlanLossyChange(config, rng, active, &plan);
  std::sort(plan.faults.begin(), plan.faults.end(),
            [](const PlannedFault& a, const PlannedFault& b) {
              return a.start < b.start;
            });
  return plan;
}

namespace {

// A history's violations by kind, gravest first.
std::array<int64_t, 11> ViolationKinds(const torture::Summary& s) {
  return {s.mutual_exclusion,
          s.reader_with_writer,
          s.permits_over_limit,
          s.stale_fenced_accepted,
          s.fence_duplicate,
          s.fence_order,
          s.view_unknown,
          s.view_order,
          s.callbacks,
          s.leftovers,
          s.liveness};
}

}  // namespace

WorldResult RunWorld(const WorldConfig& config, const Plan& plan) {
  World world(config, plan);
  return world.Run();
}

Plan Shrink(const WorldConfig& config, const Plan& plan, int max_runs) {
  // The kind of violation to keep: the first of the original's, in order of
  // gravity. A shrink that trades a double grant for a liveness failure has
  // not shrunk the failure.
  const std::array<int64_t, 11> first =
      ViolationKinds(RunWorld(config, plan).history.summary);
  const auto wanted =
      std::find_if(first.begin(), first.end(), [](int64_t n) { return n > 0; });
  int runs = 1;
  Plan best = plan;
  if (wanted == first.end()) return best;
  const size_t kind = static_cast<size_t>(wanted - first.begin());
  auto fails = [&](const Plan& p) {
    return ViolationKinds(RunWorld(config, p).history.summary)[kind] > 0;
  };
  // Removes chunks of faults, then of operations, halving the chunk size
  // down to one event, and starts again while that helped.
  bool progress = true;
  while (progress && runs < max_runs) {
    progress = false;
    for (int which = 0; which < 2; ++which) {
      size_t n = which == 0 ? best.faults.size() : best.ops.size();
      for (size_t chunk = std::max<size_t>(1, n / 2);
           chunk >= 1 && runs < max_runs; chunk /= 2) {
        for (size_t start = 0; runs < max_runs;) {
          n = which == 0 ? best.faults.size() : best.ops.size();
          if (start >= n) break;
          Plan trial = best;
          if (which == 0) {
            trial.faults.erase(
                trial.faults.begin() + start,
                trial.faults.begin() + std::min(n, start + chunk));
          } else {
            trial.ops.erase(trial.ops.begin() + start,
                            trial.ops.begin() + std::min(n, start + chunk));
          }
          ++runs;
          if (fails(trial)) {
            best = std::move(trial);
            progress = true;
          } else {
            start += chunk;
          }
        }
        if (chunk == 1) break;
      }
    }
  }
  return best;
}

std::string FormatPlan(const Plan& plan) {
  std::string out;
  for (size_t m = 0; m < plan.masters.size(); ++m) {
    const SimRedis::Config& c = plan.masters[m];
    absl::StrAppendFormat(
        &out, "  master m%d  %s\n", m + 1,
        c.persistence == SimRedis::Persistence::kAofEverysec
            ? absl::StrFormat("aof everysec, window %.3fs",
                              absl::ToDoubleSeconds(c.aof_loss_window))
        : c.persistence == SimRedis::Persistence::kRdb && c.save.empty()
            ? std::string("rdb, snapshots at the start and as planned")
        : c.persistence == SimRedis::Persistence::kRdb
            ? absl::StrFormat("rdb, save \"%d %d\"", c.save[0].seconds,
                              c.save[0].changes)
        : c.persistence == SimRedis::Persistence::kAofAlways
            ? std::string("aof always")
            : std::string("none"));
  }
  if (plan.limit > 0) {
    absl::StrAppendFormat(&out, "  semaphore %s limit %d\n", kPoolName,
                          plan.limit);
  }
  if (plan.replaced >= 0) {
    absl::StrAppendFormat(
        &out, "  change m%d replaced by the last server, begins %.3fs\n",
        plan.replaced + 1, absl::ToDoubleSeconds(plan.reconfigure_at));
  }
  if (plan.down_master >= 0) {
    absl::StrAppendFormat(
        &out, "  down   %8.3fs  %-12s m%d until %.3fs after the finish\n",
        absl::ToDoubleSeconds(plan.down_at),
        plan.down_refuses ? "refuse" : "pause", plan.down_master + 1,
        absl::ToDoubleSeconds(plan.down_after_finish));
  }
  if (plan.unreachable_master >= 0) {
    absl::StrAppendFormat(&out,
                          "  partition %5.3fs  client %d cannot reach m%d\n",
                          absl::ToDoubleSeconds(plan.partition_at),
                          plan.partitioned_client, plan.unreachable_master + 1);
  }
  for (const PlannedSwitch& w : plan.switches) {
    absl::StrAppendFormat(&out, "  switch %8.3fs  client %d to %s\n",
                          absl::ToDoubleSeconds(w.at), w.client,
                          w.list == PlannedSwitch::List::kNew     ? "new"
                          : w.list == PlannedSwitch::List::kUnion ? "old+new"
                                                                  : "old");
  }
  for (const PlannedFault& f : plan.faults) {
    absl::StrAppendFormat(
        &out, "  fault  %8.3fs  %-12s m%d for %.3fs%s\n",
        absl::ToDoubleSeconds(f.start), FaultName(f.kind), f.master + 1,
        absl::ToDoubleSeconds(f.duration),
        f.kind == PlannedFault::Kind::kFastClock
            ? absl::StrFormat(" (rate %.3f)", f.amount)
        : f.kind == PlannedFault::Kind::kSlowLink
            ? absl::StrFormat(" (+%.0fms)", f.amount)
        : f.kind == PlannedFault::Kind::kCrashRestart && !plan.masters.empty()
            ? absl::StrFormat(" (aof loses %.0fms)", f.amount)
            : std::string());
  }
  for (const PlannedOp& op : plan.ops) {
    absl::StrAppendFormat(
        &out,
        "  op     client %d  %-13s %-6s think %.3fs wait %.3fs work "
        "%.3fs%s%s%s\n",
        op.client, OpName(op.kind), ResourceName(op.resource),
        absl::ToDoubleSeconds(op.think), absl::ToDoubleSeconds(op.wait),
        absl::ToDoubleSeconds(op.work),
        op.cancel_after > absl::ZeroDuration()
            ? absl::StrFormat(" cancel %.3fs",
                              absl::ToDoubleSeconds(op.cancel_after))
            : std::string(),
        op.fresh_client ? " fresh-client" : "",
        op.permits > 0 ? absl::StrFormat(" permits %d", op.permits)
        : op.shared    ? std::string(" reader")
        : op.kind == PlannedOp::Kind::kLead
            ? absl::StrFormat(" proclaims %d%s", op.proclaims,
                              op.exits ? " exits" : "")
            : std::string());
  }
  return out;
}

}  // namespace redlock::sim
