// Copyright 2026 The redlock Authors.
//
// SimRedis: one simulated Redis 7 master for a deterministic discrete-event
// simulation of the engine. It answers exactly the commands the engine (and a
// fenced resource) sends, with the reply types and error wording of real
// redis-server 7.0, as checked by sim_redis_test against a real server. It is
// pure: no I/O, no real clock, no global state. The caller passes simulated
// true time into every call; the master's own clock is derived from it.
//
//   SimRedis master(SimRedis::Config{}, /*seed=*/1, start);
//   SimRedis::Connection conn;
//   RedisReply r = master.Execute(now, conn, {"SET", "k", "tok", "NX", "PX",
//                                             "1000"});
//   master.SetClockRate(now, 1.5);          // a fast master clock
//   master.Restart(now, /*keep_data=*/false);  // a crash without persistence
//
// Lua scripts are not interpreted: the engine's five scripts and
// kFencedSetScript are recognised by SHA-1 and run as C++ with the same
// semantics (including Redis's Lua-to-reply conversion). Any other script can
// be loaded but running it returns an ERR reply.
//
// Expiry is lazy and by the master clock: a key whose expiry is at or before
// the master's now does not exist. (Real Redis stores expiry in whole
// milliseconds and keeps a key during its last millisecond, `now > when`; the
// simulator keeps full resolution, so a key may vanish up to 1ms sooner,
// which only makes a simulated lock easier to take over, never harder.)
//
// Not thread-safe: a simulation drives it from one thread.

#ifndef REDLOCK_TESTS_SIM_SIM_REDIS_H_
#define REDLOCK_TESTS_SIM_SIM_REDIS_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/redis_reply.h"

namespace redlock::sim {

class SimRedis {
 public:
  struct Config {
    // As reported by INFO memory. Default: "noeviction".
    std::string maxmemory_policy = "noeviction";
    // If set, every command but AUTH needs AUTH first (user "default").
    // Default: unset.
    std::optional<std::string> requirepass;
    // The master clock's offset from simulated true time at construction.
    // Default: zero.
    absl::Duration clock_offset = absl::ZeroDuration();
    // Reported as tcp_port by INFO server. Default: 6379.
    int port = 6379;
  };

  // What Redis keeps per client connection. A new simulated connection
  // starts with a default-constructed one; after Restart() the caller must
  // drop its connections (a real restart closes them) and start new ones.
  struct Connection {
    int db = 0;
    bool authenticated = false;
  };

  static constexpr int kDatabases = 16;

  // `seed` drives the run_ids (deterministic by design: the same seed gives
  // the same simulation). `now` is simulated true time: the server starts
  // then.
  SimRedis(Config config, uint64_t seed, absl::Time now);

  SimRedis(const SimRedis&) = delete;
  SimRedis& operator=(const SimRedis&) = delete;

  // Runs one command at simulated true time `now` (which must not go
  // backwards between calls) on `connection`, and returns the reply real
  // Redis 7 would give. Never fails otherwise: every problem is an error
  // reply. Command names are case-insensitive.
  internal::RedisReply Execute(absl::Time now, Connection& connection,
                               const std::vector<std::string>& argv);

  // The master's clock at true time `now`: true time x rate + offset,
  // continuous across SetClockRate() and shifted by JumpClock().
  absl::Time MasterNow(absl::Time now) const;

  // Faults.
  // From `now` on, the master clock advances `rate` master seconds per true
  // second (1.0 = accurate). It does not jump.
  void SetClockRate(absl::Time now, double rate);
  // Moves the master clock by `delta` (negative: backwards) at once. Keys
  // whose expiry it passes are gone.
  void JumpClock(absl::Duration delta);
  // A crash and start: new run_id, uptime from `now`, empty script cache.
  // keep_data: every key survives (AOF always); else the keyspace is empty.
  void Restart(absl::Time now, bool keep_data);
  // SCRIPT FLUSH from elsewhere (an operator, a failover).
  void FlushScripts() { scripts_.clear(); }
  // Drops every key that has a TTL, as a volatile-* maxmemory-policy does
  // under memory pressure.
  void EvictVolatileKeys();

  // Inspection for tests and simulation checkers.
  const std::string& run_id() const { return run_id_; }
  // Number of keys live at `now` in `db`.
  int KeyCount(absl::Time now, int db = 0);
  bool ScriptCached(absl::string_view sha1) const;
  // The keys live at `now` in `db`, in order. Read-only: unlike a command,
  // it drops nothing that has expired.
  std::vector<std::string> Keys(absl::Time now, int db = 0) const;
  // The value of `key` if it is live at `now` in `db`. Read-only likewise.
  std::optional<std::string> Value(absl::Time now, int db,
                                   absl::string_view key) const;

 private:
  struct Entry {
    std::string value;
    // On the master clock; nullopt: no TTL.
    std::optional<absl::Time> expires_at;
  };
  using Keyspace = std::map<std::string, Entry, std::less<>>;

  // One command, with the master clock at `mnow`, in database `db`.
  internal::RedisReply Dispatch(absl::Time mnow, Connection& connection,
                                const std::vector<std::string>& argv);

  // The live entry for `key` in `db`, or null; drops it if it has expired.
  Entry* Find(absl::Time mnow, int db, absl::string_view key);

  // The commands, argv already checked for arity.
  internal::RedisReply Auth(Connection& connection,
                            const std::vector<std::string>& argv);
  internal::RedisReply Set(absl::Time mnow, int db,
                           const std::vector<std::string>& argv);
  internal::RedisReply Pexpire(absl::Time mnow, int db,
                               const std::vector<std::string>& argv);
  internal::RedisReply Info(absl::Time mnow,
                            const std::vector<std::string>& argv);
  internal::RedisReply Script(const std::vector<std::string>& argv);
  internal::RedisReply Eval(absl::Time mnow, int db,
                            const std::vector<std::string>& argv);
  // Runs a cached or just-loaded script by its SHA-1.
  internal::RedisReply RunScript(absl::Time mnow, int db,
                                 const std::string& sha1,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args);
  internal::RedisReply Time(absl::Time mnow) const;

  std::string NewRunId();

  const Config config_;
  // Deterministic on purpose: run_ids must repeat with the seed. Not a token.
  std::mt19937_64 rng_;
  std::string run_id_;
  // Master clock = master_anchor_ + (true time - true_anchor_) * rate_.
  absl::Time true_anchor_;
  absl::Time master_anchor_;
  double rate_ = 1.0;
  absl::Time started_at_;  // Master clock.
  std::array<Keyspace, kDatabases> dbs_;
  // SHA-1 -> source of every loaded script.
  std::map<std::string, std::string, std::less<>> scripts_;
};

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_REDIS_H_
