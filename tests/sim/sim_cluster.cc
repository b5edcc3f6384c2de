// Copyright 2026 The redlock Authors.

#include "tests/sim/sim_cluster.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace redlock::sim {

using internal::RedisReply;

// One connection, shared by the client's SimConnection and every event in
// flight on it: an event checks these flags when it runs, so a connection
// closed, lost or destroyed meanwhile is never touched through a dangling
// pointer.
struct SimCluster::ConnState {
  int master = -1;  // -1: the address is no master of the cluster.
  internal::ConnectionObserver* observer = nullptr;
  internal::ConnectionMode mode = internal::ConnectionMode::kReplies;
  SimRedis::Connection redis;  // The server's per-client state.

  // Client side.
  bool client_closed = false;  // SimConnection destroyed: no more calls.
  bool connected = false;      // OnConnect(OK) delivered.
  bool dead = false;           // OnConnect(error) or OnLost delivered.
  // Sent while connecting; leaves when OnConnect(OK) is delivered.
  std::vector<std::vector<std::string>> unsent;

  // Server side.
  bool accepted = false;      // The master took the connection.
  bool server_lost = false;   // Crash or reset: nothing more runs.
  bool fin_sent = false;      // The client's close is on its way.
  bool drop_replies = false;  // Lost with Config::lose_replies_in_flight.
  int in_flight = 0;          // Commands travelling to the master.

  // FIFO per direction: the latest arrival scheduled each way.
  absl::Time last_to_master = absl::InfinitePast();
  absl::Time last_to_client = absl::InfinitePast();
};

struct SimCluster::Master {
  int port = 0;
  std::unique_ptr<SimRedis> redis;
  MasterState state = MasterState::kRunning;
  bool refuse_connects = false;
  absl::Duration extra_delay = absl::ZeroDuration();
  // Accepted connections; lost and finished ones are pruned now and then.
  std::vector<std::shared_ptr<ConnState>> connections;
  size_t prune_at = 16;
  // What arrived while paused, in arrival order: commands, and closes
  // (`fin`) of subscribed connections.
  struct Arrival {
    std::shared_ptr<ConnState> conn;
    std::vector<std::string> argv;
    bool fin = false;
  };
  std::deque<Arrival> waiting;
  // Connections that subscribed, by SimRedis::Connection::id: where the
  // master's pushes go.
  absl::flat_hash_map<uint64_t, std::weak_ptr<ConnState>> subscribers;
  int64_t commands_executed = 0;
};

class SimCluster::SimConnection : public internal::Connection {
 public:
  SimConnection(SimCluster* cluster, std::shared_ptr<ConnState> conn)
      : cluster_(cluster), conn_(std::move(conn)) {}

  ~SimConnection() override {
    conn_->client_closed = true;
    // Never written to the socket: hiredis had not connected yet.
    conn_->unsent.clear();
    cluster_->ClientCloses(conn_);
  }

  bool SendArgs(absl::Span<const absl::string_view> views) override {
    if (conn_->dead) return false;
    std::vector<std::string> argv(views.begin(), views.end());
    if (!conn_->connected) {
      conn_->unsent.push_back(argv);
      return true;
    }
    cluster_->SendToMaster(conn_, argv);
    return true;
  }

  // What was sent is on the network already; what waits for the connect
  // cannot leave without it.
  void FlushBeforeClose() override {}

 private:
  SimCluster* const cluster_;
  const std::shared_ptr<ConnState> conn_;
};

namespace {

std::mt19937_64 MasterSeed(uint64_t seed, int index) {
  std::seed_seq seq{static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index), 0x3a57e12u};
  return std::mt19937_64(seq);
}

absl::Status Refused() {
  return absl::UnavailableError("connect failed: Connection refused");
}

absl::Status Reset() {
  return absl::UnavailableError("connection lost: Connection reset by peer");
}

}  // namespace

SimCluster::SimCluster(SimLoop* loop, Config config, uint64_t seed)
    : loop_(loop), config_(std::move(config)), rng_(MasterSeed(seed, -1)) {
  masters_.reserve(config_.masters);
  for (int i = 0; i < config_.masters; ++i) {
    auto master = std::make_unique<Master>();
    master->port = config_.first_port + i;
    SimRedis::Config redis_config =
        static_cast<size_t>(i) < config_.redis_per_master.size()
            ? config_.redis_per_master[i]
            : config_.redis;
    redis_config.port = master->port;
    master->redis = std::make_unique<SimRedis>(
        std::move(redis_config), MasterSeed(seed, i)(), loop_->now());
    masters_.push_back(std::move(master));
  }
}

SimCluster::~SimCluster() = default;

SimCluster::Master& SimCluster::master(int index) {
  return *masters_.at(index);
}
const SimCluster::Master& SimCluster::master(int index) const {
  return *masters_.at(index);
}

MasterAddress SimCluster::address(int index) const {
  MasterAddress address;
  address.host = config_.host;
  address.port = master(index).port;
  return address;
}

std::vector<std::string> SimCluster::master_uris() const {
  std::vector<std::string> uris;
  for (int i = 0; i < size(); ++i) uris.push_back(address(i).Uri());
  return uris;
}

int SimCluster::MasterIndex(const MasterAddress& address) const {
  if (address.host != config_.host) return -1;
  const int index = address.port - config_.first_port;
  return index >= 0 && index < size() ? index : -1;
}

absl::Duration SimCluster::OneWayDelay(int index) {
  const int64_t min_ns = absl::ToInt64Nanoseconds(config_.min_latency);
  const int64_t max_ns =
      std::max(min_ns, absl::ToInt64Nanoseconds(config_.max_latency));
  // Modulo rather than a std:: distribution, whose output differs between
  // standard libraries; the bias is immaterial here.
  const uint64_t span = static_cast<uint64_t>(max_ns - min_ns) + 1;
  absl::Duration delay =
      absl::Nanoseconds(min_ns + static_cast<int64_t>(rng_() % span));
  if (index >= 0) delay += master(index).extra_delay;
  return delay;
}

absl::StatusOr<std::unique_ptr<internal::Connection>> SimCluster::Connect(
    const MasterAddress& address, internal::ConnectionObserver* observer,
    internal::ConnectionMode mode) {
  auto conn = std::make_shared<ConnState>();
  conn->master = MasterIndex(address);
  conn->observer = observer;
  conn->mode = mode;
  conn->last_to_master = loop_->now() + OneWayDelay(conn->master);
  loop_->At(conn->last_to_master, [this, conn] { SynArrives(conn); });
  return std::make_unique<SimConnection>(this, std::move(conn));
}

// As the library's connections do: a push-mode connection hands every
// message to OnPush, the others match replies to commands.
void SimCluster::Deliver(ConnState& conn, RedisReply reply) {
  if (conn.mode == internal::ConnectionMode::kPushes) {
    conn.observer->OnPush(std::move(reply));
  } else {
    conn.observer->OnReply(std::move(reply));
  }
}

void SimCluster::SynArrives(const std::shared_ptr<ConnState>& conn) {
  // Closed before the handshake finished: the server never sees a client.
  if (conn->client_closed) return;
  const bool accepted = conn->master >= 0 &&
                        master(conn->master).state != MasterState::kCrashed &&
                        !master(conn->master).refuse_connects;
  if (accepted) {
    conn->accepted = true;
    Master& m = master(conn->master);
    if (m.connections.size() >= m.prune_at) PruneConnections(m);
    m.connections.push_back(conn);
  } else {
    ++faults_.connects_refused;
  }
  ToClient(conn, [this, conn, accepted] {
    if (conn->client_closed) return;
    if (!accepted) {
      conn->dead = true;
      conn->unsent.clear();
      conn->observer->OnConnect(Refused());
      return;
    }
    conn->connected = true;
    std::vector<std::vector<std::string>> unsent = std::move(conn->unsent);
    conn->unsent.clear();
    for (std::vector<std::string>& argv : unsent) {
      SendToMaster(conn, std::move(argv));
    }
    conn->observer->OnConnect(absl::OkStatus());
  });
}

void SimCluster::SendToMaster(const std::shared_ptr<ConnState>& conn,
                              std::vector<std::string> argv) {
  const absl::Time arrival =
      std::max(conn->last_to_master, loop_->now() + OneWayDelay(conn->master));
  conn->last_to_master = arrival;
  ++conn->in_flight;
  loop_->At(arrival, [this, conn, argv = std::move(argv)]() mutable {
    CommandArrives(conn, std::move(argv));
  });
}

void SimCluster::CommandArrives(const std::shared_ptr<ConnState>& conn,
                                std::vector<std::string> argv) {
  --conn->in_flight;
  if (conn->server_lost) return;
  Master& m = master(conn->master);
  if (m.state == MasterState::kPaused) {
    m.waiting.push_back(Master::Arrival{conn, std::move(argv)});
    return;
  }
  Execute(m, conn, argv);
}

void SimCluster::Execute(Master& m, const std::shared_ptr<ConnState>& conn,
                         const std::vector<std::string>& argv) {
  RedisReply reply = m.redis->Execute(loop_->now(), conn->redis, argv);
  ++m.commands_executed;
  ToClient(conn, [conn, reply = std::move(reply)]() mutable {
    if (conn->client_closed || conn->drop_replies) return;
    Deliver(*conn, std::move(reply));
  });
  if (conn->redis.id != 0) {
    m.subscribers.try_emplace(conn->redis.id, conn);
    // A SUBSCRIBE that was on its way when the client closed: the close
    // follows it.
    if (conn->client_closed) SendFin(conn);
  }
  SendPushes(m);
}

void SimCluster::SendPushes(int index) { SendPushes(master(index)); }

void SimCluster::SendPushes(Master& m) {
  for (SimRedis::Push& push : m.redis->TakePushes()) {
    auto it = m.subscribers.find(push.connection);
    if (it == m.subscribers.end()) continue;
    std::shared_ptr<ConnState> to = it->second.lock();
    if (to == nullptr || to->server_lost) continue;
    // On the wire like a reply: same delay, same order, same losses.
    ToClient(to, [to, reply = std::move(push.reply)]() mutable {
      if (to->client_closed || to->drop_replies) return;
      Deliver(*to, std::move(reply));
    });
  }
}

void SimCluster::ClientCloses(const std::shared_ptr<ConnState>& conn) {
  // Only a subscribed connection's close changes what the master does (a
  // publish no longer reaches it); others close unseen, so that histories
  // without pub/sub run exactly the events they always did. Reading the
  // server-side id here is a shortcut for "the master has subscribed it";
  // a SUBSCRIBE still on its way sends the close when it runs (Execute()).
  if (conn->redis.id != 0) SendFin(conn);
}

void SimCluster::SendFin(const std::shared_ptr<ConnState>& conn) {
  if (!conn->accepted || conn->server_lost || conn->fin_sent) return;
  conn->fin_sent = true;
  // After every command sent before it; a fixed delay, so closing draws
  // nothing from the latency generator.
  const absl::Time arrival =
      std::max(conn->last_to_master, loop_->now() + config_.min_latency +
                                         master(conn->master).extra_delay);
  conn->last_to_master = arrival;
  loop_->At(arrival, [this, conn] {
    if (conn->server_lost) return;
    Master& m = master(conn->master);
    if (m.state == MasterState::kPaused) {
      m.waiting.push_back(Master::Arrival{conn, {}, /*fin=*/true});
      return;
    }
    Unsubscribe(m, conn);
  });
}

void SimCluster::Unsubscribe(Master& m,
                             const std::shared_ptr<ConnState>& conn) {
  m.redis->Disconnect(conn->redis);
  m.subscribers.erase(conn->redis.id);
}

void SimCluster::ToClient(const std::shared_ptr<ConnState>& conn,
                          absl::AnyInvocable<void()> fn) {
  const absl::Time arrival =
      std::max(conn->last_to_client, loop_->now() + OneWayDelay(conn->master));
  conn->last_to_client = arrival;
  loop_->At(arrival, std::move(fn));
}

void SimCluster::LoseConnections(Master& m) {
  // Every lost connection had been accepted, so OnConnect(OK) is on its way
  // or delivered, and this OnLost follows it.
  for (const std::shared_ptr<ConnState>& conn : m.connections) {
    if (conn->server_lost) continue;
    conn->server_lost = true;
    if (conn->client_closed) continue;
    ++faults_.connections_lost;
    if (config_.lose_replies_in_flight) conn->drop_replies = true;
    ToClient(conn, [conn] {
      if (conn->client_closed) return;
      conn->dead = true;
      conn->observer->OnLost(Reset());
    });
  }
  m.connections.clear();
  // The master forgets their subscriptions; a closed client's FIN still on
  // its way finds its connection lost.
  for (const auto& [id, weak] : m.subscribers) {
    if (std::shared_ptr<ConnState> conn = weak.lock()) {
      conn->server_lost = true;
      m.redis->Disconnect(conn->redis);
    }
  }
  m.subscribers.clear();
  m.prune_at = 16;
  // Whatever waited on a paused master came over connections now lost.
  m.waiting.clear();
}

void SimCluster::PruneConnections(Master& m) {
  auto finished = [](const std::shared_ptr<ConnState>& conn) {
    return conn->server_lost || (conn->client_closed && conn->in_flight == 0);
  };
  m.connections.erase(
      std::remove_if(m.connections.begin(), m.connections.end(), finished),
      m.connections.end());
  m.prune_at = std::max<size_t>(16, 2 * m.connections.size());
}

void SimCluster::Crash(int index, std::optional<absl::Duration> aof_lost) {
  Master& m = master(index);
  if (m.state == MasterState::kCrashed) return;
  m.state = MasterState::kCrashed;
  ++faults_.crashes;
  m.redis->Crash(loop_->now(), aof_lost);
  LoseConnections(m);
}

void SimCluster::Restart(int index, bool keep_data) {
  Crash(index);
  Master& m = master(index);
  m.redis->Restart(loop_->now(), keep_data);
  m.state = MasterState::kRunning;
  ++faults_.restarts;
}

void SimCluster::Restart(int index) {
  Crash(index);
  Master& m = master(index);
  m.redis->Restart(loop_->now());
  m.state = MasterState::kRunning;
  ++faults_.restarts;
}

void SimCluster::Pause(int index) {
  Master& m = master(index);
  if (m.state != MasterState::kRunning) return;
  m.state = MasterState::kPaused;
  ++faults_.pauses;
}

void SimCluster::Resume(int index) {
  Master& m = master(index);
  if (m.state != MasterState::kPaused) return;
  m.state = MasterState::kRunning;
  ++faults_.resumes;
  // All at the moment of SIGCONT, in arrival order. Execute() only
  // schedules, so nothing can change `waiting` meanwhile.
  while (!m.waiting.empty()) {
    Master::Arrival arrival = std::move(m.waiting.front());
    m.waiting.pop_front();
    if (arrival.conn->server_lost) continue;
    if (arrival.fin) {
      Unsubscribe(m, arrival.conn);
    } else {
      Execute(m, arrival.conn, arrival.argv);
    }
  }
}

void SimCluster::ResetConnections(int index) {
  Master& m = master(index);
  if (m.state == MasterState::kCrashed) return;
  ++faults_.connection_resets;
  LoseConnections(m);
}

void SimCluster::SetRefuseConnects(int index, bool refuse) {
  Master& m = master(index);
  if (refuse && !m.refuse_connects) ++faults_.refuse_periods;
  m.refuse_connects = refuse;
}

void SimCluster::SetExtraDelay(int index, absl::Duration extra) {
  Master& m = master(index);
  if (extra > absl::ZeroDuration() && extra != m.extra_delay) {
    ++faults_.slow_links;
  }
  m.extra_delay = std::max(extra, absl::ZeroDuration());
}

void SimCluster::SetClockRate(int index, double rate) {
  master(index).redis->SetClockRate(loop_->now(), rate);
  ++faults_.clock_rate_changes;
}

void SimCluster::JumpClock(int index, absl::Duration delta) {
  master(index).redis->JumpClock(delta);
  ++faults_.clock_jumps;
}

void SimCluster::FlushScripts(int index) {
  master(index).redis->FlushScripts();
  ++faults_.script_flushes;
}

void SimCluster::EvictVolatileKeys(int index) {
  master(index).redis->EvictVolatileKeys();
  ++faults_.evictions;
}

SimCluster::MasterState SimCluster::state(int index) const {
  return master(index).state;
}

SimRedis& SimCluster::redis(int index) { return *master(index).redis; }

int SimCluster::KeyCount(int index, int db) {
  return master(index).redis->KeyCount(loop_->now(), db);
}

std::vector<std::string> SimCluster::Keys(int index, absl::string_view prefix,
                                          int db) const {
  std::vector<std::string> keys = master(index).redis->Keys(loop_->now(), db);
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [prefix](const std::string& key) {
                              return !absl::StartsWith(key, prefix);
                            }),
             keys.end());
  return keys;
}

std::vector<int> SimCluster::MastersWithKeys(absl::string_view prefix,
                                             int db) const {
  std::vector<int> holding;
  for (int i = 0; i < size(); ++i) {
    if (!Keys(i, prefix, db).empty()) holding.push_back(i);
  }
  return holding;
}

int SimCluster::connections(int index) const {
  int count = 0;
  for (const std::shared_ptr<ConnState>& conn : master(index).connections) {
    if (!conn->server_lost && !(conn->client_closed && conn->in_flight == 0)) {
      ++count;
    }
  }
  return count;
}

int64_t SimCluster::commands_executed(int index) const {
  return master(index).commands_executed;
}

bool SimCluster::ClaimToken(const std::string& token, int client) {
  return token_owner_.emplace(token, client).second;
}

std::optional<int> SimCluster::TokenOwner(absl::string_view token) const {
  auto it = token_owner_.find(token);
  if (it == token_owner_.end()) return std::nullopt;
  return it->second;
}

}  // namespace redlock::sim
