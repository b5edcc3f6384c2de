// Copyright 2026 The redlock Authors.
//
// SimCluster: N simulated Redis masters (SimRedis) on a simulated network,
// on a SimLoop, with the faults a torture run injects into real servers:
// SIGKILL and restart (with or without the keyspace, or with what the
// master's persistence kept), SIGSTOP/SIGCONT,
// CLIENT KILL, refused connects, slow links, master clock rate and jumps,
// SCRIPT FLUSH and eviction. Clients reach it through SimRuntime::Connect().
//
//   SimLoop loop;
//   SimCluster cluster(&loop, SimCluster::Config{}, /*seed=*/1);
//   // Masters at 127.0.0.1:7001..7005; cluster.master_uris() for Options.
//   cluster.Pause(2);
//   loop.After(absl::Seconds(3), [&] { cluster.Resume(2); });
//
// The network mirrors TCP to a redis-server:
//  - Each message (connect, command, reply, reset) takes a one-way delay:
//    a base latency drawn uniformly from [min_latency, max_latency] plus
//    the master's extra delay (a slow link) at the time it is sent. Each
//    connection is FIFO in each direction: a message never overtakes an
//    earlier one.
//  - Connect: the SYN reaches the master after one delay; if the process
//    exists (running or paused: a stopped server's kernel still accepts) and
//    connects are not being refused, OnConnect(OK) after another delay;
//    otherwise OnConnect(kUnavailable "connect failed: Connection refused").
//    Commands sent while connecting leave when the client learns it is
//    connected, as hiredis writes its buffer once the socket is writable.
//  - A command runs on the master (SimRedis::Execute, with that
//    connection's db/auth state) when it arrives; on a paused master it
//    waits, and everything waiting runs on Resume() in arrival order across
//    connections. The reply then travels back.
//  - Crash() (SIGKILL) and ResetConnections() (CLIENT KILL): every
//    connection to that master is lost. Commands still travelling to it, or
//    waiting on a paused master, are dropped; each client gets
//    OnLost(kUnavailable "connection lost: Connection reset by peer") one
//    delay later, after the replies the master had already sent (they are
//    on the wire, as with TCP) unless Config::lose_replies_in_flight.
//    After Crash() connects are refused until Restart().
//  - Destroying a connection on the client side: commands already sent
//    still arrive and run; their replies are dropped; no observer call.
//    Commands still buffered while connecting are never sent.
//  - Pub/sub: a message the master pushes to a subscribed connection (a
//    PUBLISH, or a release or acquire script publishing, on any
//    connection) leaves when the publishing command runs and travels like
//    a reply: one delay, FIFO with that connection's replies, lost with the
//    connection (and dropped with the replies in flight under
//    Config::lose_replies_in_flight). A paused master runs nothing, so it
//    publishes nothing until resumed. A crash or reset ends every
//    subscription; so does the client closing a subscribed connection, once
//    its close reaches the master (after what it sent before; a paused
//    master sees it on Resume()).
//  - Observer calls come only from loop events, never from inside Connect(),
//    Send() or a destructor; an observer may destroy its connection inside
//    any of them.
//
// Not thread-safe. Must outlive its connections and the SimRuntimes using it,
// and the loop must not run after it is destroyed.

#ifndef REDLOCK_TESTS_SIM_SIM_CLUSTER_H_
#define REDLOCK_TESTS_SIM_SIM_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/transport/runtime.h"
#include "tests/sim/sim_loop.h"
#include "tests/sim/sim_redis.h"

namespace redlock::sim {

class SimCluster {
 public:
  struct Config {
    // Number of masters. Default: 5.
    int masters = 5;
    // Every master's host. Default: "127.0.0.1".
    std::string host = "127.0.0.1";
    // Master i listens on first_port + i. Default: 7001.
    int first_port = 7001;
    // Base one-way delay of each message, uniform in [min, max].
    // Default: 50us..500us.
    absl::Duration min_latency = absl::Microseconds(50);
    absl::Duration max_latency = absl::Microseconds(500);
    // Every master's settings; `port` is replaced by the master's port.
    // Default: SimRedis::Config{}.
    SimRedis::Config redis;
    // If it has an entry for master i, master i's settings instead of
    // `redis` (a deployment whose masters persist differently).
    // Default: empty.
    std::vector<SimRedis::Config> redis_per_master;
    // On a crash or reset, also drop the replies already on their way to
    // the client (as when a reset discards the server's send buffer). Off:
    // they arrive, then the loss, as with TCP. Default: false.
    bool lose_replies_in_flight = false;
  };

  enum class MasterState { kRunning, kPaused, kCrashed };

  // Faults actually applied (a fault that changes nothing is not counted:
  // pausing a paused master, crashing a crashed one, ...).
  struct FaultCounts {
    int64_t crashes = 0;
    int64_t restarts = 0;
    int64_t pauses = 0;
    int64_t resumes = 0;
    int64_t connection_resets = 0;  // ResetConnections() calls.
    int64_t connections_lost = 0;   // By crashes and resets.
    int64_t refuse_periods = 0;     // SetRefuseConnects(i, true) from false.
    int64_t connects_refused = 0;   // Connects answered "refused".
    int64_t slow_links = 0;         // SetExtraDelay() to a positive delay.
    int64_t clock_rate_changes = 0;
    int64_t clock_jumps = 0;
    int64_t script_flushes = 0;
    int64_t evictions = 0;
  };

  SimCluster(SimLoop* loop, Config config, uint64_t seed);
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;
  ~SimCluster();

  // What SimRuntime::Connect() does: always returns a connection (so never
  // an error); the outcome comes to `observer` as described above. An
  // address that is no master of the cluster is refused.
  absl::StatusOr<std::unique_ptr<internal::Connection>> Connect(
      const MasterAddress& address, internal::ConnectionObserver* observer,
      internal::ConnectionMode mode);

  int size() const { return static_cast<int>(masters_.size()); }
  MasterAddress address(int master) const;
  // "redis://127.0.0.1:7001", ... for Options::masters.
  std::vector<std::string> master_uris() const;
  // The master listening on `address`, or -1.
  int MasterIndex(const MasterAddress& address) const;

  // Faults on master `master` (0-based), effective at the loop's now().
  // SIGKILL: see the file comment. Also drops what a paused master held.
  // What its persistence keeps is fixed now (SimRedis::Crash; `aof_lost`:
  // the writes lost by an AOF everysec master, nullopt: its whole window).
  void Crash(int master, std::optional<absl::Duration> aof_lost = std::nullopt);
  // Starts a crashed master again (crashing it first if it is not):
  // SimRedis::Restart (new run_id, uptime 0, no scripts; the keyspace kept
  // if `keep_data`, as with AOF fsync always, else empty), accepting again.
  void Restart(int master, bool keep_data);
  // The same, with the keyspace the master's persistence kept
  // (SimRedis::Config::persistence).
  void Restart(int master);
  // SIGSTOP / SIGCONT. Resume() runs what waited, in arrival order.
  void Pause(int master);
  void Resume(int master);
  // Every current connection to the master is lost; it keeps running.
  void ResetConnections(int master);
  // While on, new connects to the master are refused; existing connections
  // are not affected.
  void SetRefuseConnects(int master, bool refuse);
  // Added to every message to or from the master sent from now on, until
  // set again (zero ends it). FIFO per connection still holds.
  void SetExtraDelay(int master, absl::Duration extra);
  // The master's clock: see SimRedis::SetClockRate / JumpClock.
  void SetClockRate(int master, double rate);
  void JumpClock(int master, absl::Duration delta);
  void FlushScripts(int master);
  void EvictVolatileKeys(int master);

  // Sends, now, the pushes the master recorded and nobody sent: those of
  // commands a test ran directly on redis(master), as redis-cli on the
  // master's host would. (Otherwise they leave with the next command the
  // master runs for a client.)
  void SendPushes(int master);

  // Inspection, for tests and checkers.
  MasterState state(int master) const;
  SimRedis& redis(int master);
  // Keys live at now() in `db`; of a crashed master, what it held when it
  // died (what a restart with keep_data would bring back).
  int KeyCount(int master, int db = 0);
  std::vector<std::string> Keys(int master, absl::string_view prefix,
                                int db = 0) const;
  // Master indices holding a live key starting with `prefix`, in `db`; empty
  // means no lock key is left anywhere. Crashed masters are included.
  std::vector<int> MastersWithKeys(absl::string_view prefix, int db = 0) const;
  // Connections the master currently counts (accepted, not lost, not
  // closed by the client with nothing left in flight).
  int connections(int master) const;
  // Commands the master has run since the cluster was made.
  int64_t commands_executed(int master) const;
  const FaultCounts& faults() const { return faults_; }

  // For SimRuntime. A new client's number.
  int RegisterClient() { return next_client_id_++; }
  // Records `token` as issued to `client`. False if it was issued before.
  bool ClaimToken(const std::string& token, int client);
  // The client a token was issued to, if any: lets a checker tell whose
  // value a key holds.
  std::optional<int> TokenOwner(absl::string_view token) const;

  SimLoop* loop() const { return loop_; }

 private:
  struct ConnState;
  class SimConnection;
  struct Master;

  // A message to or from `master` (-1: no master) sent now: base latency
  // plus the master's extra delay.
  absl::Duration OneWayDelay(int master);
  // Sends on `conn`, FIFO after what it sent before in that direction.
  void SendToMaster(const std::shared_ptr<ConnState>& conn,
                    std::vector<std::string> argv);
  void SynArrives(const std::shared_ptr<ConnState>& conn);
  static void Deliver(ConnState& conn, internal::RedisReply reply);
  void CommandArrives(const std::shared_ptr<ConnState>& conn,
                      std::vector<std::string> argv);
  void Execute(Master& master, const std::shared_ptr<ConnState>& conn,
               const std::vector<std::string>& argv);
  // Sends what the master's last commands pushed to subscribers.
  void SendPushes(Master& master);
  // The client destroyed `conn`; see SendFin().
  void ClientCloses(const std::shared_ptr<ConnState>& conn);
  // The close of a subscribed connection travels to the master, which then
  // drops its subscriptions (Unsubscribe()).
  void SendFin(const std::shared_ptr<ConnState>& conn);
  void Unsubscribe(Master& master, const std::shared_ptr<ConnState>& conn);
  void ToClient(const std::shared_ptr<ConnState>& conn,
                absl::AnyInvocable<void()> fn);
  // Loses every connection of the master (crash or reset).
  void LoseConnections(Master& master);
  void PruneConnections(Master& master);
  Master& master(int index);
  const Master& master(int index) const;

  SimLoop* const loop_;
  const Config config_;
  std::mt19937_64 rng_;  // Latencies. Deterministic on purpose.
  std::vector<std::unique_ptr<Master>> masters_;
  FaultCounts faults_;
  int next_client_id_ = 0;
  absl::flat_hash_map<std::string, int> token_owner_;
};

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_CLUSTER_H_
