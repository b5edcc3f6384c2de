// Copyright 2026 The redlock Authors.
//
// SimWorld: one simulated history. K clients, each a real redlock engine
// (src/engine/engine.h, the production code) on a SimRuntime, contend for two
// resources — one fenced, one not, as in examples/lease/ — on N simulated
// masters, while a nemesis injects faults on a schedule drawn from the seed.
// (With WorldConfig::primitive, permits of one counting semaphore instead,
// readers and writers of the two resources, or the leaders and observers
// of one election.)
// Everything runs on one SimLoop: a history is a pure function of its Plan,
// and the Plan a pure function of (config, seed), so any history replays.
//
// What a history is (docs/safety-under-faults.md, "Simulation"):
//   1. the active phase: every client runs its operations one after another
//      (acquire with a wait, then one of: work and release; work, extend,
//      work and release; keep-alive through work longer than the TTL; or a
//      "paused" holder that wakes past its TTL and writes to the fenced
//      storage anyway), while the planned faults come and go;
//   2. heal: every fault is undone, then the world settles for max_ttl + ttl
//      (a restarted master's grants count again; old keys expire); if a
//      majority of masters restarted empty, fencing stays unavailable until
//      an operator raises the counters (docs/lifetime-and-fencing.md), and
//      if all did, no grant counts until an operator marks the masters
//      (docs/failure-behaviour.md); a master that restarted since it was
//      marked, without durable persistence, never again gives a trusted
//      fence counter read until an operator raises the counters and
//      re-marks it: the heal takes those steps too;
//   3. the liveness probe: clients acquire and release every resource in
//      turn, each acquisition waiting long enough to succeed if the library
//      is live;
//   4. quiescence: every engine is destroyed and the loop runs dry; then the
//      masters are searched for lock keys (none may be left) and every
//      operation's callback count is read (each must have run exactly once).
// The History then goes to the torture tool's checker, the same code that
// judges real-server runs (tools/torture/history.h).

#ifndef REDLOCK_TESTS_SIM_SIM_WORLD_H_
#define REDLOCK_TESTS_SIM_SIM_WORLD_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tests/sim/sim_redis.h"
#include "tools/torture/history.h"

namespace redlock::sim {

struct WorldConfig {
  // The configuration's name, for reports and replay commands.
  std::string name = "safe";
  int masters = 5;
  int clients = 3;
  // Client operations in the active phase, over all clients.
  int operations = 60;
  // Faults in the active phase.
  int faults = 6;
  absl::Duration ttl = absl::Milliseconds(800);
  absl::Duration max_ttl = absl::Seconds(2);
  double drift_factor = 0.01;
  bool restart_guard = true;
  // A restarted master keeps its keys (AOF, appendfsync always) or comes
  // back empty.
  bool persistence = true;
  // Masters' clocks may run this much fast (rate - 1) while a clock fault
  // lasts. Safe when the TTL's share of it stays inside the drift
  // allowance.
  double max_clock_speedup = 0.005;
  // The grant rule from before the fail-closed fix (a master not yet judged
  // counts); test-only, to show the simulator can find the hole.
  bool legacy_grant_rule = false;
  // Draw mostly crash-restarts, short ones (50-400ms), instead of every
  // kind of fault: a restart that lands while other clients hold locks is
  // what the guard is about.
  bool crash_heavy = false;
  // Client churn: some acquisitions are cancelled at a random moment
  // (Cancellation), some clients are replaced by a fresh engine (a new
  // process: its first attempt starts as soon as a quorum is judged) before
  // an acquisition, and some acquisitions take both resources as one lock.
  // Without persistence the last master is never crashed (only paused):
  // every master losing its data is the documented limit for a fresh
  // client. Off in the older configurations, whose plans (and recorded
  // seeds) stay as they were.
  bool churn = false;
  // Masters whose persistence keeps only part of the data (the plan draws
  // each master's: AOF everysec, whose crash loses up to its last
  // 0.5-2s of writes, RDB snapshots on a "save <1-3s> 1" schedule, or now
  // and then AOF always): a crash usually keeps the deployment marker but
  // not the newest lock keys and fence counters. Crashes restart with what
  // the master's persistence kept; `persistence` is not used. Off in the
  // older configurations, whose plans (and recorded seeds) stay as they
  // were.
  bool partial_loss = false;
  // The rule from before partial loss was guarded: a master that carries a
  // trusted marker counts at once, whatever its restarts and persistence
  // (UnsafeRules::trust_marked_restarts, unsafe_rules.h); test-only, to show
  // the simulator finds that hole.
  bool trust_marked_restarts = false;
  // Deployment membership (issue 22): the world has `masters` servers, and
  // each client a list of `masters` - 1 of them. The deployment starts as
  // steady(O), O = every server but the last; N is O with one member (the
  // plan's `replaced`) swapped for the last server. Clients start on O;
  // the plan's switches move some to N or to O+N (a new process on the new
  // list, just before an acquisition), while client 0 stays on O. At the
  // heal every client is on N. Off in the older configurations, whose
  // plans (and recorded seeds) stay as they were.
  enum class Membership {
    kOff,
    // An operator changes O to N with the safe procedure, racing the
    // clients: `redlock reconfigure --masters=O --to=N` run every 100ms
    // until it reports the change finished, through the tool's own
    // protocol (src/admin/reconfigure.h) on the simulated servers: begin
    // (joint O->N on every reachable server of O+N, on at least
    // |O| - quorum(O) + 1 of O), wait until the joint record is
    // max_ttl * 1.01 + 3s old on enough of those servers' clocks, raise
    // every fence counter of N to the highest of O+N, finish (steady N).
    kReconfigure,
    // No procedure, and every client counts a majority of its own list
    // (UnsafeRules::ignore_membership, unsafe_rules.h): the rolling deploy of
    // the issue; test-only, to show the simulator finds the double grant.
    kIgnored,
  };
  Membership membership = Membership::kOff;
  // What the clients take (issue 24). kLock: locks of the two resources (the
  // older configurations, whose plans and recorded seeds stay as they
  // were). kSemaphore: permits (1 or 2) of one counting semaphore, "pool",
  // of limit 2 or 3 (the plan's), unfenced. kRwLock: readers
  // (AcquireOptions::shared, 3 in 5 operations) and writers (a plain
  // acquisition: fenced on "fenced", unfenced on "plain", where a refused
  // writer marks itself waiting) of the two resources. kElection (issue
  // 49): one election, "leader"; each operation campaigns in it
  // (CampaignAsync() with the op's wait) and leads, or observes it
  // (PlannedOp::Kind::kLead, kPausedLeader, kObserve). A leadership is
  // recorded as a fenced lock of the election's name, whose fence is the
  // epoch: the lock rules judge the leaders. Every value a leader wrote or
  // tried to write, and every view an observer was told, is recorded for
  // the views' rule (torture::CheckLeaderViews()). Leftover: the lease key.
  enum class Primitive { kLock, kSemaphore, kRwLock, kElection };
  Primitive primitive = Primitive::kLock;
  // kSemaphore: the majority-of-counters rule
  // (UnsafeRules::semaphore_counters, unsafe_rules.h); test-only, to
  // show the simulator finds more holders than the limit.
  bool semaphore_counters = false;
  // Waiters are handed the lock by the release (RetryPolicy::hand_off):
  // the unfenced resource's refused writers leave hand-off entries, and
  // every release hands the key to the one queued longest. Off in the older
  // configurations, whose plans (and recorded seeds) stay as they were.
  bool hand_off = false;
  // With Membership::kReconfigure (issue 45): data lost around the change.
  // Each master's persistence is the plan's (none, RDB snapshots taken
  // only at the plan's kSnapshot moments and at the start, AOF everysec,
  // AOF always); the plan adds crashes before, during and after the joint
  // phase that restart with what the persistence kept (an older snapshot,
  // an AOF without its tail) or empty (kCrashEmpty), among them the joining
  // server restarting empty late in the joint phase and a member of both
  // lists restarting after the finish; a master down (paused or refusing
  // connects) through the whole change, back after the finish; and client
  // 0, on the old list, unable to reach one member of both lists from
  // about the finish on (SimRuntime::SetUnreachable: a partition between
  // that client and that master only). More operations, so that the active
  // phase outlasts the change. Off in the older configurations, whose plans
  // (and recorded seeds) stay as they were.
  bool lossy_change = false;
  // The membership rule from before a record had to be known current: a
  // member without a kept record counts, and is given the record, whatever
  // the others carry (UnsafeRules::trust_unknown_records, unsafe_rules.h);
  // test-only, to show the simulator finds that hole.
  bool trust_unknown_records = false;
  // The operator's tool from before it stopped re-trusting joining servers:
  // the finish's catch-up marks a joining server that restarted empty
  // during the joint phase trusted again
  // (admin::Request::unsafe_trust_joining_after_begin); test-only, to show
  // the simulator finds that hole.
  bool trust_joining_after_begin = false;
};

// The named configurations: "safe" (persistence, guard on), "guarded"
// (restarts lose data, guard on: safe because of the guard), "churn" and
// "guarded-churn" (the same two with client churn), "guarded-partial"
// (restarts lose part of the data, guard on), and the known unsafe ones
// "guard-off" (restarts lose data, guard off), "fast-clock" (master clocks
// up to 1.5x fast), "legacy-grant" (restarts lose data, the old grant rule)
// and "partial-trust-marked" (restarts lose part of the data, a marked
// master trusted at once); with a change of members (4 servers, lists of
// 3): "reconfigure" (the safe procedure, faults on) and the unsafe
// "membership-ignored" (no procedure, membership ignored); with a counting
// semaphore (WorldConfig::kSemaphore): "semaphore" (as "safe"),
// "semaphore-guarded" (as "guarded"), "semaphore-churn" (as
// "guarded-churn"), "semaphore-partial" (as "guarded-partial") and the
// unsafe "semaphore-counters" (restarts lose data, the majority-of-counters
// rule); with readers and writers (kRwLock): "rwlock", "rwlock-guarded",
// "rwlock-churn" and "rwlock-partial", likewise; with hand-offs
// (WorldConfig::hand_off): "handoff" (as "churn"), "handoff-guarded" (as
// "guarded-churn"), "handoff-partial" (as "guarded-partial") and
// "handoff-reconfigure" (as "reconfigure"); with an election
// (WorldConfig::kElection): "election" (as "safe"), "election-guarded" (as
// "guarded"), "election-churn" (as "guarded-churn": campaigns cancelled,
// candidates replaced by new processes) and "election-partial" (as
// "guarded-partial"); with data lost around the
// change (WorldConfig::lossy_change): "reconfigure-lossy" (the safe
// procedure and rule) and its unsafe twins "reconfigure-lossy-trust-unknown"
// (a member without a kept record counts under a record not known current)
// and "reconfigure-lossy-trust-joining" (the finish's catch-up re-trusts a
// joining server that restarted empty). kInvalidArgument for another
// name.
absl::StatusOr<WorldConfig> NamedConfig(absl::string_view name);
// Every name NamedConfig() knows.
std::vector<std::string> ConfigNames();
// True for the configurations that must show no violation.
bool ExpectedSafe(absl::string_view name);

// One planned client operation or fault. Times are from the start of the
// history.
struct PlannedOp {
  // kLead, kPausedLeader, kObserve: WorldConfig::kElection only.
  //   kLead          campaign; write the fenced storage with the epoch;
  //                  lead for `work` (the keep-alive running), proclaiming
  //                  `proclaims` new values spread over it; write the
  //                  fenced storage again; resign, or
  //                  with `exits` let the process go without resigning
  //                  (the lease expires).
  //   kPausedLeader  campaign; the process pauses at once (its keep-alive
  //                  stops, no extension) for `work`, past the lease; it
  //                  wakes and writes the fenced storage with its old
  //                  epoch, tries to proclaim, and resigns.
  //   kObserve       Observe() for `work`, every view recorded.
  enum class Kind {
    kWorkRelease,
    kExtend,
    kKeepAlive,
    kPausedWriter,
    kLead,
    kPausedLeader,
    kObserve,
  };
  int client = 0;
  // 0: fenced, 1: unfenced, 2: both as one lock (churn), 3: the semaphore
  // (WorldConfig::kSemaphore), 4: the election (WorldConfig::kElection).
  int resource = 0;
  Kind kind = Kind::kWorkRelease;
  absl::Duration think;  // Before the acquisition.
  absl::Duration wait;   // The acquisition's wait.
  absl::Duration work;   // Holding (the pause, for kPausedWriter).
  // With WorldConfig::churn: cancel the acquisition this long after it
  // starts (zero: never), and replace the client's engine by a new one just
  // before it.
  absl::Duration cancel_after;
  bool fresh_client = false;
  // WorldConfig::kSemaphore: the permits taken (1 or 2). kRwLock: a reader.
  int permits = 0;
  bool shared = false;
  // WorldConfig::kElection, kLead: see Kind.
  int proclaims = 0;
  bool exits = false;
};

struct PlannedFault {
  enum class Kind {
    kCrashRestart,
    kPause,
    kSlowLink,
    kResetConnections,
    kRefuseConnects,
    kFastClock,
    kFlushScripts,
    // WorldConfig::lossy_change: a crash whose restart comes back empty
    // whatever the master's persistence (a lost disk), and an RDB snapshot
    // taken now (SAVE; ignored by a master that is not running or does not
    // persist by RDB), which the master's later crashes restart from.
    kCrashEmpty,
    kSnapshot,
  };
  Kind kind = Kind::kCrashRestart;
  int master = 0;
  absl::Duration start;
  absl::Duration duration;
  // kSlowLink: extra delay in ms; kFastClock: the rate; kCrashRestart with
  // WorldConfig::partial_loss: the ms of writes an AOF everysec master
  // loses (WorldConfig::lossy_change: likewise, 0 for its whole window).
  double amount = 0;
};

// With WorldConfig::membership: from the first acquisition after `at`
// on, `client` runs on another list (a new engine).
struct PlannedSwitch {
  enum class List { kOld, kNew, kUnion };
  int client = 0;
  absl::Duration at;
  List list = List::kNew;
};

struct Plan {
  uint64_t seed = 0;
  std::vector<PlannedOp> ops;
  std::vector<PlannedFault> faults;
  // With WorldConfig::partial_loss or lossy_change: each master's settings
  // (persistence, AOF window, snapshot schedule). Empty otherwise: every
  // master persists as WorldConfig::persistence says.
  std::vector<SimRedis::Config> masters;
  // With WorldConfig::membership: the old member the last server replaces
  // (an index below masters - 1), when the operator begins the change
  // (kReconfigure), and the clients' switches, in time order.
  int replaced = -1;
  absl::Duration reconfigure_at;
  std::vector<PlannedSwitch> switches;
  // WorldConfig::kSemaphore: the semaphore's limit (every client's).
  int limit = 0;
  // WorldConfig::lossy_change: a master down through the change (-1:
  // none) from `down_at` until `down_after_finish` after the operator's
  // finish (or the heal), paused or refusing connects (`down_refuses`).
  int down_master = -1;
  bool down_refuses = false;
  absl::Duration down_at;
  absl::Duration down_after_finish;
  // WorldConfig::lossy_change: from its first acquisition after
  // `partition_at` on (a new process), `partitioned_client` cannot connect
  // to `unreachable_master` (-1: no partition), until the heal.
  int partitioned_client = -1;
  int unreachable_master = -1;
  absl::Duration partition_at;
  // Events in the plan (what shrinking reduces).
  size_t size() const { return ops.size() + faults.size(); }
};

// The plan for `seed` under `config`. Pure.
Plan MakePlan(const WorldConfig& config, uint64_t seed);

struct WorldResult {
  torture::History history;  // Checked: history.summary holds the verdict.
  int64_t events = 0;        // Loop events run.
  int64_t faults = 0;        // Faults injected.
  int64_t operations = 0;    // Client operations started.
  // Documented operator steps the heal had to take (see RunWorld): fence
  // counters raised by hand, masters marked by hand (after every master
  // lost its data, or re-marked after a restart that may have lost part of
  // it).
  int64_t operator_steps = 0;
  // Masters the heal re-marked "trusted:0:<run_id>" after they restarted
  // since they were marked without durable persistence.
  int64_t remarked_masters = 0;
  // With WorldConfig::churn: clients replaced by a fresh engine.
  int64_t fresh_clients = 0;
  // Pub/sub messages the clients' subscribers heard (waiters woken on
  // release), so a test can see wake-ups were exercised.
  int64_t wakeup_messages = 0;
  // Releases that handed a key to a waiter, summed over the masters
  // (WorldConfig::hand_off).
  int64_t hand_offs = 0;
  // Acquisitions won by a hand-off (AcquiredEvent::handed_over), not by an
  // attempt.
  int64_t hand_off_wins = 0;
  // With WorldConfig::membership: clients moved to another list (planned
  // switches and the heal's), and the operator's progress: 1 once joint
  // O->N landed (begin), 2 once steady N was written (finish).
  int64_t switched_clients = 0;
  int reconfigure_phase = 0;
  // Acquisitions won by clients on the old list, the new one and both
  // (PlannedSwitch::List order), and of those, won while the operator's
  // joint record was up (after begin, before finish).
  std::array<int64_t, 3> grants_by_list = {0, 0, 0};
  int64_t grants_during_change = 0;
  // With WorldConfig::membership: at the end of the heal the record was
  // still not known to be current and the operator's tool could not
  // restore it (the joint record of a change lost by a majority of its
  // members: the tool restores only a steady one). No grant can count, so
  // the liveness probe was not run (history.summary.details says why).
  bool unrestorable_record = false;
};

// Runs `plan` under `config` to quiescence and checks it. Deterministic.
WorldResult RunWorld(const WorldConfig& config, const Plan& plan);

// The smallest sub-plan found (greedy removal of events, then of chunks)
// that still shows a violation; `plan` itself if it shows none. At most
// `max_runs` runs.
Plan Shrink(const WorldConfig& config, const Plan& plan, int max_runs = 400);

// The plan, one line per event, for a report.
std::string FormatPlan(const Plan& plan);

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_WORLD_H_
