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
// Persistence (Config::persistence) decides what a crash keeps: Crash(now)
// is the SIGKILL, Restart(now) the start that loads what was on disk:
//   kNone          nothing (save "", appendonly no);
//   kAofAlways     every acknowledged write (appendfsync always);
//   kAofEverysec   all but the writes of the last aof_loss_window before the
//                  crash (appendfsync everysec: up to about a second);
//   kRdb           the last snapshot, taken by the `save` rules (Redis's
//                  "save <seconds> <changes>") or by Save(); none: empty.
// CONFIG GET reports the mode as Redis 7.0 does (appendonly, appendfsync,
// save, ...), in an order that changes with every start, as real Redis's
// does (its config table is a hash table with a per-process random seed):
//
//   SimRedis::Config config;
//   config.persistence = SimRedis::Persistence::kRdb;
//   config.save = {{1, 1}};                  // "save 1 1"
//   SimRedis master(config, /*seed=*/1, start);
//   ...
//   master.Crash(now);                       // SIGKILL
//   master.Restart(now + absl::Seconds(1));  // back with the last snapshot
//
// Pub/sub (RESP2): SUBSCRIBE, UNSUBSCRIBE and PUBLISH, server-wide as in
// Redis (not per database). What a command writes to a connection other than
// its own reply (a message to a subscriber) is recorded as a Push; the caller
// drains them after each command and carries them to their connections:
//
//   SimRedis::Connection subscriber, publisher;
//   master.Execute(now, subscriber, {"SUBSCRIBE", "lock"});
//   master.Execute(now, publisher, {"PUBLISH", "lock", "hi"});  // 1
//   for (SimRedis::Push& push : master.TakePushes()) {
//     // push.connection == subscriber.id;
//     // push.reply == ["message", "lock", "hi"]
//   }
//
// Lua scripts are not interpreted: the engine's scripts (every one of
// AllScripts(): release, extend, multi acquire, fenced acquire, fence
// write, marker, semaphore acquire and extend, reader acquire, extend and
// release, writer acquire, and the test-only semaphore counters acquire),
// ProclaimScript() (an election's record), ReconfigureScript() and
// kFencedSetScript are recognised by SHA-1 and run
// as C++ with the same semantics (including
// Redis's Lua-to-reply conversion: a table becomes an array, a number an
// integer, false nil, redis.error_reply() an error reply). The semaphore,
// reader and writer acquire scripts, the proclaim script, and the
// release's withdrawal and hand-off steps, also give back, as Redis does,
// the error of a call that
// fails inside them (WRONGTYPE on a key of the other type, a TTL SET
// refuses), with what they wrote before it left in place; the older scripts
// do not (they read a set key as a missing value). Any other script can be
// loaded but running it returns an ERR reply.
//
// Data types: strings (MGET among their commands: nil for a key that is
// missing or a set, as in Redis), and sets (for the readers' index) through
// SADD, SREM, SMEMBERS and SCARD, each also a plain command. A set emptied by
// SREM is deleted, as in Redis; a command of the other type answers WRONGTYPE.
// SMEMBERS answers in ascending byte order (Redis answers in its hash
// table's order, which no client can rely on; an all-integer set, an intset
// there, comes sorted numerically).
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
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::sim {

class SimRedis {
 public:
  // One script call, as the simulated scripts see it (sim_redis.cc).
  class ScriptCall;
  enum class Persistence { kNone, kAofAlways, kAofEverysec, kRdb };

  // One "save <seconds> <changes>" rule: a snapshot once at least `changes`
  // writes were made and `seconds` passed since the last one.
  struct SaveRule {
    int64_t seconds = 0;
    int64_t changes = 0;
  };

  struct Config {
    // What a Crash() and Restart() keep (see the file comment), and what
    // CONFIG GET reports. Default: kAofAlways (every key survives).
    Persistence persistence = Persistence::kAofAlways;
    // kAofEverysec: a crash loses the writes made this long before it (at
    // most; Crash() can be told a shorter window). Default: 1s.
    absl::Duration aof_loss_window = absl::Seconds(1);
    // kRdb: the snapshot schedule. Empty: snapshots only by Save().
    // Default: empty.
    std::vector<SaveRule> save;
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
  // A connection's channels are kept by the server (see Subscriptions()):
  // this only names the connection.
  struct Connection {
    int db = 0;
    bool authenticated = false;
    // Names the connection in a Push. Given by the server at the
    // connection's first SUBSCRIBE, unique for the server's lifetime (also
    // across Restart()); 0 until then.
    uint64_t id = 0;
  };

  // A reply the server writes to a connection other than as the reply to
  // that connection's command just run: ["message", channel, payload] to a
  // subscriber of a channel published to (by PUBLISH or by a script), or the
  // second and later replies of a SUBSCRIBE or UNSUBSCRIBE of several
  // channels (one reply per channel, the first one returned by Execute()).
  struct Push {
    uint64_t connection = 0;  // The receiver's Connection::id.
    internal::RedisReply reply;
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

  // The pushes of the commands run since the last call, in the order the
  // server wrote them, and forgets them. A push to the connection whose
  // command made it follows that command's reply (in RESP2 a subscribed
  // connection can neither PUBLISH nor run a script, so a connection never
  // gets its own message before its reply).
  std::vector<Push> TakePushes();

  // The client of `connection` is gone (it closed, or the connection was
  // lost): the server drops its subscriptions, as Redis does when it frees
  // a client. Nothing happens for a connection that never subscribed.
  void Disconnect(const Connection& connection);

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
  // A crash and start: new run_id, uptime from `now`, empty script cache,
  // no subscriptions, no pushes left to take.
  // keep_data: every key survives (AOF always); else the keyspace is empty.
  // Whatever Config::persistence says; what is kept is then what is on disk
  // (the last snapshot, for kRdb).
  void Restart(absl::Time now, bool keep_data);
  // SIGKILL at `now`: what the persistence keeps is fixed now (for kRdb, a
  // snapshot that fell due before now is taken first). Nothing may run on
  // the master until Restart(). kAofEverysec: `aof_lost` is how far back
  // writes are lost (clamped to [0, Config::aof_loss_window]); nullopt:
  // the whole window.
  void Crash(absl::Time now,
             std::optional<absl::Duration> aof_lost = std::nullopt);
  // Starts again after Crash() (a crash at `now` if there was none) with the
  // keyspace Config::persistence kept; otherwise as Restart(now, keep_data).
  void Restart(absl::Time now);
  // Takes a snapshot now (SAVE / BGSAVE), whatever the schedule; it is what
  // a kRdb master restarts with until the next one. Ignored by other modes.
  void Save(absl::Time now);
  // Snapshots taken since construction (by schedule or Save()).
  int64_t snapshots() const { return snapshots_; }
  // Releases that handed a lock key to a waiter (the release script's
  // hand-off), since this master was made.
  int64_t hand_offs() const { return hand_offs_; }
  // SCRIPT FLUSH from elsewhere (an operator, a failover).
  void FlushScripts() { scripts_.clear(); }
  // Drops every key that has a TTL, as a volatile-* maxmemory-policy does
  // under memory pressure.
  void EvictVolatileKeys();

  // Inspection for tests and simulation checkers.
  const std::string& run_id() const { return run_id_; }
  const Config& config() const { return config_; }
  // Number of keys live at `now` in `db`.
  int KeyCount(absl::Time now, int db = 0);
  bool ScriptCached(absl::string_view sha1) const;
  // Number of channels `connection` is subscribed to.
  int Subscriptions(const Connection& connection) const;
  // Number of connections subscribed to `channel`.
  int Subscribers(absl::string_view channel) const;
  // The keys live at `now` in `db`, in order. Read-only: unlike a command,
  // it drops nothing that has expired.
  std::vector<std::string> Keys(absl::Time now, int db = 0) const;
  // The value of `key` if it is live at `now` in `db` and a string.
  // Read-only likewise.
  std::optional<std::string> Value(absl::Time now, int db,
                                   absl::string_view key) const;

 private:
  struct Entry {
    std::string value;  // A string key's.
    // On the master clock; nullopt: no TTL.
    std::optional<absl::Time> expires_at;
    // A set key's members (`value` then unused). Never empty: the last SREM
    // deletes the key.
    bool is_set = false;
    std::set<std::string> members;
  };
  using Keyspace = std::map<std::string, Entry, std::less<>>;

  // One command, with the master clock at `mnow`, in database `db`.
  internal::RedisReply Dispatch(absl::Time mnow, Connection& connection,
                                const std::vector<std::string>& argv);

  // The live entry for `key` in `db`, or null; drops it if it has expired.
  Entry* Find(absl::Time mnow, int db, absl::string_view key);
  // Every write to the keyspace goes through these two, so persistence sees
  // it (the AOF everysec journal, the snapshot schedule's change count).
  // An expired key dropped on access is no write: it is gone after a
  // restart too.
  void Put(absl::Time mnow, int db, const std::string& key, Entry entry);
  void Erase(absl::Time mnow, int db, const std::string& key);
  // Records the write about to be made to `key`: its old entry, for a crash
  // to undo (kAofEverysec), and one more change (kRdb).
  void Journal(absl::Time mnow, int db, const std::string& key);
  // kRdb: takes the snapshots the schedule made due by `mnow`.
  void MaybeSave(absl::Time mnow);
  // What a restart keeps under Config::persistence, from the crash.
  void LoadPersisted();
  // Sets keys_loaded_ for the start just made: the live keys if it loaded a
  // snapshot (`from_rdb`), else 0.
  void CountKeysLoaded(bool from_rdb);
  // The state a fresh process starts its persistence bookkeeping with.
  void ResetPersistence(absl::Time mnow);
  internal::RedisReply ConfigCommand(
      const std::vector<std::string>& argv) const;
  // CONFIG GET's answer for `name` (a known, lower-case name).
  std::string ConfigValue(absl::string_view name) const;

  // The commands, argv already checked for arity.
  internal::RedisReply Auth(Connection& connection,
                            const std::vector<std::string>& argv);
  internal::RedisReply Set(absl::Time mnow, int db,
                           const std::vector<std::string>& argv);
  internal::RedisReply Pexpire(absl::Time mnow, int db,
                               const std::vector<std::string>& argv);
  // SADD, SREM, SMEMBERS, SCARD (`name` lower-case).
  internal::RedisReply SetCommand(absl::Time mnow, int db,
                                  const std::string& name,
                                  const std::vector<std::string>& argv);
  internal::RedisReply Info(absl::Time mnow,
                            const std::vector<std::string>& argv);
  internal::RedisReply Script(const std::vector<std::string>& argv);
  internal::RedisReply Eval(absl::Time mnow, int db,
                            const std::vector<std::string>& argv);
  // Runs a cached or just-loaded script by its SHA-1.
  // Runs the simulated twin of the script `sha1` names (sim_redis.cc: one
  // function per script, each given a ScriptCall).
  internal::RedisReply RunScript(absl::Time mnow, int db,
                                 const std::string& sha1,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args);
  internal::RedisReply Time(absl::Time mnow) const;
  internal::RedisReply Subscribe(Connection& connection,
                                 const std::vector<std::string>& argv);
  internal::RedisReply Unsubscribe(const Connection& connection,
                                   const std::vector<std::string>& argv);
  // Pushes `message` to every subscriber of `channel`; returns how many.
  int64_t Publish(const std::string& channel, const std::string& message);

  std::string NewRunId();
  // A new order for CONFIG GET's replies, drawn from the run_id (so the
  // run_ids' draws stay as they were).
  void ShuffleConfigOrder();
  // A new process: new run_id, uptime from `now`, no scripts, no
  // subscriptions or pushes, not crashed. The keyspace is the caller's.
  void StartProcess(absl::Time now);

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
  // Pub/sub, server-wide. Each channel's subscribers in the order they
  // subscribed, the order a publish reaches them (a list in Redis too).
  std::map<std::string, std::vector<uint64_t>, std::less<>> subscribers_;
  // Connection::id -> its channels; a connection with none is absent.
  std::map<uint64_t, std::set<std::string>> channels_;
  uint64_t next_connection_id_ = 1;
  std::vector<Push> pushes_;

  // Persistence. The master clock's now as of the last command.
  absl::Time last_mnow_;
  // kAofEverysec: the writes of the last aof_loss_window, oldest first:
  // each key's entry before the write (nullopt: absent).
  struct Undo {
    absl::Time at;  // Master clock.
    int db = 0;
    std::string key;
    std::optional<Entry> before;
  };
  std::vector<Undo> journal_;
  // kRdb: the last snapshot; when it (or the start) was; the changes since,
  // with the master clock time of each, up to the largest rule's count.
  std::optional<std::array<Keyspace, kDatabases>> snapshot_;
  // INFO persistence rdb_last_load_keys_loaded: the keys this process's
  // start read from a snapshot (kRdb); 0 otherwise.
  int64_t keys_loaded_ = 0;
  absl::Time last_save_;
  int64_t dirty_ = 0;
  std::vector<absl::Time> dirty_at_;
  int64_t snapshots_ = 0;
  int64_t hand_offs_ = 0;
  // Set by Crash(): when, on the master clock, and the AOF window lost.
  std::optional<absl::Time> crashed_at_;
  absl::Duration aof_lost_ = absl::ZeroDuration();
  // CONFIG GET's order of the known names for this start.
  std::vector<std::string> config_order_;
};

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_REDIS_H_
