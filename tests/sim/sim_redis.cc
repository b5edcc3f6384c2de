// Copyright 2026 The redlock Authors.

#include "tests/sim/sim_redis.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "src/algorithm/election.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/sha1.h"
#include "tests/sim/unsafe_rules.h"

namespace redlock::sim {
namespace {

using internal::RedisReply;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

RedisReply Ok() { return RedisReply::Status("OK"); }

// Redis's own messages, word for word: the engine and its tests read them.
RedisReply ArityError(absl::string_view name) {
  return RedisReply::Error(
      absl::StrCat("ERR wrong number of arguments for '", name, "' command"));
}
RedisReply NotAnInteger() {
  return RedisReply::Error("ERR value is not an integer or out of range");
}
RedisReply SyntaxError() { return RedisReply::Error("ERR syntax error"); }
RedisReply NoScript() {
  return RedisReply::Error("NOSCRIPT No matching script. Please use EVAL.");
}
RedisReply WrongType() {
  return RedisReply::Error(
      "WRONGTYPE Operation against a key holding the wrong kind of value");
}
RedisReply InvalidExpire(absl::string_view command) {
  return RedisReply::Error(
      absl::StrCat("ERR invalid expire time in '", command, "' command"));
}

// Redis's string2ll: an optional '-', digits, no spaces, no '+', no leading
// zeros, no overflow. Stricter than absl::SimpleAtoi, which takes " +01".
bool ParseInt64(absl::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t value = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  if (negative) {
    if (value > static_cast<uint64_t>(kInt64Max) + 1) return false;
    *out = static_cast<int64_t>(0 - value);
  } else {
    if (value > static_cast<uint64_t>(kInt64Max)) return false;
    *out = static_cast<int64_t>(value);
  }
  return true;
}

// Lua 5.1's tonumber() on a string (luaO_str2d): strtod, then strtoul for a
// hex constant, trailing whitespace allowed. nullopt where Lua gives nil.
std::optional<double> LuaToNumber(const std::string& s) {
  const char* begin = s.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  if (*end == 'x' || *end == 'X') {
    value = static_cast<double>(std::strtoul(begin, &end, 16));
  }
  while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) {
    ++end;
  }
  // An embedded NUL also ends Lua's C string early; s.size() catches it.
  if (*end != '\0' || end != begin + s.size()) return std::nullopt;
  return value;
}

// An error raised by redis.call() inside a script, as Redis 7 reports it.
// SHA-1 of a script's source, remembered: a simulation loads the same few
// scripts on every connection. Bounded, so arbitrary sources cannot grow it.
std::string ScriptSha1(const std::string& source) {
  thread_local absl::flat_hash_map<std::string, std::string> cache;
  auto it = cache.find(source);
  if (it != cache.end()) return it->second;
  std::string sha1 = internal::Sha1Hex(source);
  if (cache.size() < 64) cache.emplace(source, sha1);
  return sha1;
}

RedisReply ScriptCallError(const RedisReply& error, const std::string& sha1,
                           int line) {
  return RedisReply::Error(absl::StrCat(error.str, " script: ", sha1,
                                        ", on @user_script:", line, "."));
}

// A Lua number as redis.call() sends it (Redis 7.0: "%.17g"), e.g. the TTL
// math.max() gives.
std::string LuaNumberArg(double value) {
  return absl::StrFormat("%.17g", value);
}

// Lua 5.1's string.sub(s, 1, j): a negative j counts from the end.
std::string LuaPrefix(const std::string& s, int64_t j) {
  const int64_t size = static_cast<int64_t>(s.size());
  if (j < 0) j = size + j + 1;
  j = std::min(j, size);
  return j < 1 ? std::string() : s.substr(0, static_cast<size_t>(j));
}

// What a subscriber receives, and what SUBSCRIBE and UNSUBSCRIBE reply for
// each channel.
RedisReply PubSubReply(absl::string_view kind, RedisReply channel,
                       RedisReply third) {
  return RedisReply::Array({RedisReply::String(std::string(kind)),
                            std::move(channel), std::move(third)});
}

std::string InfoLine(absl::string_view name, absl::string_view value) {
  return absl::StrCat(name, ":", value, "\r\n");
}

// Redis's stringmatchlen() with nocase: '*', '?', '[...]' (ranges, '^'
// negation) and '\\' escapes; case-insensitive.
bool GlobMatch(absl::string_view pattern, absl::string_view text) {
  auto lower = [](char c) {
    return absl::ascii_tolower(static_cast<unsigned char>(c));
  };
  size_t p = 0, t = 0;
  while (p < pattern.size()) {
    const char c = pattern[p];
    if (c == '*') {
      while (p + 1 < pattern.size() && pattern[p + 1] == '*') ++p;
      if (p + 1 == pattern.size()) return true;
      for (size_t k = t; k <= text.size(); ++k) {
        if (GlobMatch(pattern.substr(p + 1), text.substr(k))) return true;
      }
      return false;
    }
    if (t >= text.size()) return false;
    if (c == '?') {
      ++p;
      ++t;
      continue;
    }
    if (c == '[') {
      size_t q = p + 1;
      const bool negate = q < pattern.size() && pattern[q] == '^';
      if (negate) ++q;
      bool match = false;
      const char x = lower(text[t]);
      for (; q < pattern.size() && pattern[q] != ']'; ++q) {
        if (pattern[q] == '\\' && q + 1 < pattern.size()) {
          ++q;
          match |= lower(pattern[q]) == x;
        } else if (q + 2 < pattern.size() && pattern[q + 1] == '-') {
          char lo = lower(pattern[q]), hi = lower(pattern[q + 2]);
          if (lo > hi) std::swap(lo, hi);
          match |= x >= lo && x <= hi;
          q += 2;
        } else {
          match |= lower(pattern[q]) == x;
        }
      }
      if (negate) match = !match;
      if (!match) return false;
      p = q < pattern.size() ? q + 1 : q;  // An unclosed '[' ends the pattern.
      ++t;
      continue;
    }
    char want = c;
    if (c == '\\' && p + 1 < pattern.size()) want = pattern[++p];
    if (lower(want) != lower(text[t])) return false;
    ++p;
    ++t;
  }
  return t == text.size();
}

// The configuration parameters CONFIG GET knows, by their Redis 7.0 names.
// Real Redis has ~190 more; a pattern matching only those matches nothing
// here.
constexpr const char* kConfigNames[] = {
    "appendonly", "appendfsync", "appendfilename",   "appenddirname",
    "save",       "maxmemory",   "maxmemory-policy",
};

}  // namespace

SimRedis::SimRedis(Config config, uint64_t seed, absl::Time now)
    : config_(std::move(config)),
      rng_(seed),
      true_anchor_(now),
      master_anchor_(now + config_.clock_offset) {
  run_id_ = NewRunId();
  ShuffleConfigOrder();
  started_at_ = MasterNow(now);
  ResetPersistence(started_at_);
}

absl::Time SimRedis::MasterNow(absl::Time now) const {
  return master_anchor_ + (now - true_anchor_) * rate_;
}

void SimRedis::SetClockRate(absl::Time now, double rate) {
  master_anchor_ = MasterNow(now);
  true_anchor_ = now;
  rate_ = rate;
}

void SimRedis::JumpClock(absl::Duration delta) { master_anchor_ += delta; }

void SimRedis::StartProcess(absl::Time now) {
  crashed_at_.reset();
  run_id_ = NewRunId();
  ShuffleConfigOrder();
  started_at_ = MasterNow(now);
  scripts_.clear();
  // A restart closes every connection: their subscriptions and unsent
  // output go with them.
  subscribers_.clear();
  channels_.clear();
  pushes_.clear();
}

void SimRedis::Restart(absl::Time now, bool keep_data) {
  StartProcess(now);
  if (!keep_data) {
    for (Keyspace& db : dbs_) db.clear();
  }
  CountKeysLoaded(keep_data && config_.persistence == Persistence::kRdb);
  // What is on disk now is what the process started with.
  ResetPersistence(started_at_);
  if (config_.persistence == Persistence::kRdb) {
    if (keep_data) {
      snapshot_ = dbs_;
    } else {
      snapshot_.reset();
    }
  }
}

void SimRedis::Crash(absl::Time now, std::optional<absl::Duration> aof_lost) {
  if (crashed_at_.has_value()) return;
  const absl::Time mnow = MasterNow(now);
  // serverCron ran until the end: what fell due was saved.
  MaybeSave(mnow);
  crashed_at_ = mnow;
  aof_lost_ = std::clamp(aof_lost.value_or(config_.aof_loss_window),
                         absl::ZeroDuration(), config_.aof_loss_window);
}

void SimRedis::Restart(absl::Time now) {
  Crash(now);
  LoadPersisted();
  StartProcess(now);
  CountKeysLoaded(config_.persistence == Persistence::kRdb &&
                  snapshot_.has_value());
  // The snapshot a kRdb master loaded stays what is on disk.
  std::optional<std::array<Keyspace, kDatabases>> disk = std::move(snapshot_);
  ResetPersistence(started_at_);
  snapshot_ = std::move(disk);
}

void SimRedis::CountKeysLoaded(bool from_rdb) {
  // Redis counts the keys an RDB load kept (not those expired by then); an
  // AOF's commands replayed are not counted.
  keys_loaded_ = 0;
  if (!from_rdb) return;
  for (const Keyspace& db : dbs_) {
    for (const auto& [key, entry] : db) {
      keys_loaded_ +=
          !entry.expires_at.has_value() || *entry.expires_at > started_at_;
    }
  }
}

void SimRedis::LoadPersisted() {
  switch (config_.persistence) {
    case Persistence::kNone:
      for (Keyspace& db : dbs_) db.clear();
      return;
    case Persistence::kAofAlways:
      return;
    case Persistence::kAofEverysec: {
      // Undo, newest first, every write the last fsync did not cover.
      const absl::Time synced = *crashed_at_ - aof_lost_;
      for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
        if (it->at <= synced) break;
        if (it->before.has_value()) {
          dbs_[it->db][it->key] = *it->before;
        } else {
          dbs_[it->db].erase(it->key);
        }
      }
      return;
    }
    case Persistence::kRdb:
      if (snapshot_.has_value()) {
        dbs_ = *snapshot_;
      } else {
        for (Keyspace& db : dbs_) db.clear();
      }
      return;
  }
}

void SimRedis::ResetPersistence(absl::Time mnow) {
  last_mnow_ = mnow;
  journal_.clear();
  last_save_ = mnow;
  dirty_ = 0;
  dirty_at_.clear();
}

void SimRedis::Save(absl::Time now) {
  if (config_.persistence != Persistence::kRdb) return;
  snapshot_ = dbs_;
  ++snapshots_;
  last_save_ = MasterNow(now);
  dirty_ = 0;
  dirty_at_.clear();
}

void SimRedis::MaybeSave(absl::Time mnow) {
  if (config_.persistence != Persistence::kRdb) return;
  // A rule falls due at the later of `seconds` after the last save and the
  // moment its `changes`-th write was made. The keyspace has not changed
  // since the last command, so the snapshot is the current keyspace, taken
  // at the earliest due moment. (Redis saves at the next serverCron tick,
  // up to 100ms later, and a BGSAVE takes a while: a simulated snapshot is
  // never older than a real one.)
  std::optional<absl::Time> due;
  for (const SaveRule& rule : config_.save) {
    if (rule.changes <= 0 || dirty_ < rule.changes) continue;
    const absl::Time at =
        std::max(last_save_ + absl::Seconds(rule.seconds),
                 dirty_at_[static_cast<size_t>(rule.changes - 1)]);
    if (at <= mnow && (!due.has_value() || at < *due)) due = at;
  }
  if (!due.has_value()) return;
  snapshot_ = dbs_;
  ++snapshots_;
  last_save_ = *due;
  dirty_ = 0;
  dirty_at_.clear();
}

void SimRedis::Journal(absl::Time mnow, int db, const std::string& key) {
  switch (config_.persistence) {
    case Persistence::kAofEverysec: {
      // What is older than the window can no longer be lost.
      const absl::Time keep = mnow - config_.aof_loss_window;
      auto first = std::find_if(journal_.begin(), journal_.end(),
                                [keep](const Undo& u) { return u.at > keep; });
      journal_.erase(journal_.begin(), first);
      Undo undo{mnow, db, key, std::nullopt};
      const Keyspace& keys = dbs_[db];
      if (auto it = keys.find(key); it != keys.end()) undo.before = it->second;
      journal_.push_back(std::move(undo));
      return;
    }
    case Persistence::kRdb: {
      ++dirty_;
      size_t most = 0;
      for (const SaveRule& rule : config_.save) {
        most = std::max(
            most, static_cast<size_t>(std::max<int64_t>(0, rule.changes)));
      }
      if (dirty_at_.size() < most) dirty_at_.push_back(mnow);
      return;
    }
    case Persistence::kNone:
    case Persistence::kAofAlways:
      return;
  }
}

void SimRedis::Put(absl::Time mnow, int db, const std::string& key,
                   Entry entry) {
  Journal(mnow, db, key);
  dbs_[db][key] = std::move(entry);
}

void SimRedis::Erase(absl::Time mnow, int db, const std::string& key) {
  if (dbs_[db].find(key) == dbs_[db].end()) return;
  Journal(mnow, db, key);
  dbs_[db].erase(key);
}

void SimRedis::ShuffleConfigOrder() {
  config_order_.assign(std::begin(kConfigNames), std::end(kConfigNames));
  // FNV-1a of the run_id: a new order with every start, the same for the
  // same seed, and no draw from rng_.
  uint64_t h = 1469598103934665603ULL;
  for (char c : run_id_) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  std::mt19937_64 order(h);
  std::shuffle(config_order_.begin(), config_order_.end(), order);
}

void SimRedis::EvictVolatileKeys() {
  for (int i = 0; i < kDatabases; ++i) {
    std::vector<std::string> evicted;
    for (const auto& [key, entry] : dbs_[i]) {
      if (entry.expires_at.has_value()) evicted.push_back(key);
    }
    // Redis propagates an eviction as a DEL: a write like any other.
    for (const std::string& key : evicted) Erase(last_mnow_, i, key);
  }
}

int SimRedis::KeyCount(absl::Time now, int db) {
  const absl::Time mnow = MasterNow(now);
  int count = 0;
  for (const auto& [key, entry] : dbs_.at(db)) {
    if (!entry.expires_at.has_value() || *entry.expires_at > mnow) ++count;
  }
  return count;
}

std::vector<std::string> SimRedis::Keys(absl::Time now, int db) const {
  const absl::Time mnow = MasterNow(now);
  std::vector<std::string> keys;
  for (const auto& [key, entry] : dbs_.at(db)) {
    if (!entry.expires_at.has_value() || *entry.expires_at > mnow) {
      keys.push_back(key);
    }
  }
  return keys;
}

std::optional<std::string> SimRedis::Value(absl::Time now, int db,
                                           absl::string_view key) const {
  const Keyspace& keys = dbs_.at(db);
  auto it = keys.find(key);
  if (it == keys.end()) return std::nullopt;
  if (it->second.expires_at.has_value() &&
      *it->second.expires_at <= MasterNow(now)) {
    return std::nullopt;
  }
  if (it->second.is_set) return std::nullopt;
  return it->second.value;
}

bool SimRedis::ScriptCached(absl::string_view sha1) const {
  return scripts_.find(sha1) != scripts_.end();
}

int SimRedis::Subscriptions(const Connection& connection) const {
  auto it = channels_.find(connection.id);
  return it == channels_.end() ? 0 : static_cast<int>(it->second.size());
}

int SimRedis::Subscribers(absl::string_view channel) const {
  auto it = subscribers_.find(channel);
  return it == subscribers_.end() ? 0 : static_cast<int>(it->second.size());
}

std::vector<SimRedis::Push> SimRedis::TakePushes() {
  std::vector<Push> pushes = std::move(pushes_);
  pushes_.clear();
  return pushes;
}

void SimRedis::Disconnect(const Connection& connection) {
  auto it = channels_.find(connection.id);
  if (it == channels_.end()) return;
  for (const std::string& channel : it->second) {
    std::vector<uint64_t>& ids = subscribers_[channel];
    ids.erase(std::find(ids.begin(), ids.end(), connection.id));
    if (ids.empty()) subscribers_.erase(channel);
  }
  channels_.erase(it);
}

std::string SimRedis::NewRunId() {
  std::string id;
  while (id.size() < 40) {
    absl::StrAppendFormat(&id, "%016x", rng_());
  }
  id.resize(40);
  return id;
}

SimRedis::Entry* SimRedis::Find(absl::Time mnow, int db,
                                absl::string_view key) {
  Keyspace& keys = dbs_[db];
  auto it = keys.find(key);
  if (it == keys.end()) return nullptr;
  if (it->second.expires_at.has_value() && *it->second.expires_at <= mnow) {
    keys.erase(it);
    return nullptr;
  }
  return &it->second;
}

RedisReply SimRedis::Execute(absl::Time now, Connection& connection,
                             const std::vector<std::string>& argv) {
  const absl::Time mnow = MasterNow(now);
  last_mnow_ = mnow;
  MaybeSave(mnow);
  return Dispatch(mnow, connection, argv);
}

RedisReply SimRedis::Dispatch(absl::Time mnow, Connection& connection,
                              const std::vector<std::string>& argv) {
  if (argv.empty()) return RedisReply::Error("ERR empty command");
  const std::string name = absl::AsciiStrToLower(argv[0]);
  const int argc = static_cast<int>(argv.size());

  // Arity as in Redis's command table: positive exact, negative a minimum.
  static const auto* const kArity = new absl::flat_hash_map<std::string, int>{
      {"ping", -1},        {"auth", -2},    {"select", 2},   {"get", 2},
      {"set", -3},         {"del", -2},     {"pexpire", -3}, {"pttl", 2},
      {"exists", -2},      {"time", 1},     {"info", -1},    {"script", -2},
      {"eval", -3},        {"evalsha", -3}, {"dbsize", 1},   {"subscribe", -2},
      {"unsubscribe", -1}, {"publish", 3},  {"config", -2},  {"sadd", -3},
      {"srem", -3},        {"smembers", 2}, {"scard", 2},    {"mget", -2}};
  auto arity = kArity->find(name);
  if (arity == kArity->end()) {
    // Redis quotes the name as sent and the first arguments, up to ~128
    // characters, each followed by a space.
    std::string args;
    for (int i = 1; i < argc && args.size() < 128; ++i) {
      const int room = 128 - static_cast<int>(args.size());
      absl::StrAppend(&args, "'", absl::string_view(argv[i]).substr(0, room),
                      "' ");
    }
    return RedisReply::Error(absl::StrCat(
        "ERR unknown command '", absl::string_view(argv[0]).substr(0, 128),
        "', with args beginning with: ", args));
  }
  if ((arity->second > 0 && argc != arity->second) ||
      (arity->second < 0 && argc < -arity->second)) {
    return ArityError(name);
  }
  // SCRIPT's and CONFIG's subcommands are commands of their own in Redis
  // 7: looked up and arity-checked before authentication, like the rest.
  // (CONFIG SET, RESETSTAT and REWRITE are not simulated: unknown here.)
  if (name == "script" || name == "config") {
    static const auto* const kSubArity = new std::map<std::string, int>{
        {"load", 3}, {"flush", -2}, {"exists", -3}};
    static const auto* const kConfigSubArity =
        new std::map<std::string, int>{{"get", -3}};
    const auto* const table = name == "script" ? kSubArity : kConfigSubArity;
    const std::string sub = absl::AsciiStrToLower(argv[1]);
    auto sub_arity = table->find(sub);
    if (sub_arity == table->end()) {
      return RedisReply::Error(absl::StrCat(
          "ERR unknown subcommand '", absl::string_view(argv[1]).substr(0, 128),
          "'. Try ", absl::AsciiStrToUpper(argv[0]), " HELP."));
    }
    if ((sub_arity->second > 0 && argc != sub_arity->second) ||
        (sub_arity->second < 0 && argc < -sub_arity->second)) {
      return ArityError(absl::StrCat(name, "|", sub));
    }
  }
  if (config_.requirepass.has_value() && !connection.authenticated &&
      name != "auth") {
    return RedisReply::Error("NOAUTH Authentication required.");
  }
  // RESP2: a subscribed connection may only (un)subscribe and ping. (QUIT,
  // RESET and the pattern and shard variants, also allowed, are unknown
  // commands here: the engine sends none of them.)
  const bool subscribed = Subscriptions(connection) > 0;
  if (subscribed && name != "subscribe" && name != "unsubscribe" &&
      name != "ping") {
    const std::string full_name =
        name == "script" || name == "config"
            ? absl::StrCat(name, "|", absl::AsciiStrToLower(argv[1]))
            : name;
    return RedisReply::Error(absl::StrCat(
        "ERR Can't execute '", full_name,
        "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
        "allowed in this context"));
  }

  const int db = connection.db;
  if (name == "ping") {
    if (argc > 2) return ArityError(name);
    if (subscribed) {
      return RedisReply::Array({RedisReply::String("pong"),
                                RedisReply::String(argc == 1 ? "" : argv[1])});
    }
    return argc == 1 ? RedisReply::Status("PONG") : RedisReply::String(argv[1]);
  }
  if (name == "subscribe") return Subscribe(connection, argv);
  if (name == "unsubscribe") return Unsubscribe(connection, argv);
  if (name == "publish") return RedisReply::Integer(Publish(argv[1], argv[2]));
  if (name == "auth") return Auth(connection, argv);
  if (name == "select") {
    int64_t index = 0;
    if (!ParseInt64(argv[1], &index) ||
        index < std::numeric_limits<int>::min() ||
        index > std::numeric_limits<int>::max()) {
      return NotAnInteger();
    }
    if (index < 0 || index >= kDatabases) {
      return RedisReply::Error("ERR DB index is out of range");
    }
    connection.db = static_cast<int>(index);
    return Ok();
  }
  if (name == "get") {
    const Entry* entry = Find(mnow, db, argv[1]);
    if (entry == nullptr) return RedisReply::Nil();
    if (entry->is_set) return WrongType();
    return RedisReply::String(entry->value);
  }
  if (name == "mget") {
    // Nil for a key that is missing or not a string, as in Redis.
    std::vector<RedisReply> values;
    for (int i = 1; i < argc; ++i) {
      const Entry* entry = Find(mnow, db, argv[i]);
      values.push_back(entry == nullptr || entry->is_set
                           ? RedisReply::Nil()
                           : RedisReply::String(entry->value));
    }
    return RedisReply::Array(std::move(values));
  }
  if (name == "set") return Set(mnow, db, argv);
  if (name == "sadd" || name == "srem" || name == "smembers" ||
      name == "scard") {
    return SetCommand(mnow, db, name, argv);
  }
  if (name == "del" || name == "exists") {
    int64_t count = 0;
    for (int i = 1; i < argc; ++i) {
      if (Find(mnow, db, argv[i]) == nullptr) continue;
      ++count;
      if (name == "del") Erase(mnow, db, argv[i]);
    }
    return RedisReply::Integer(count);
  }
  if (name == "pexpire") return Pexpire(mnow, db, argv);
  if (name == "pttl") {
    const Entry* entry = Find(mnow, db, argv[1]);
    if (entry == nullptr) return RedisReply::Integer(-2);
    if (!entry->expires_at.has_value()) return RedisReply::Integer(-1);
    return RedisReply::Integer(
        absl::ToInt64Milliseconds(*entry->expires_at - mnow));
  }
  if (name == "dbsize") {
    int64_t count = 0;
    for (const auto& [key, entry] : dbs_[db]) {
      if (!entry.expires_at.has_value() || *entry.expires_at > mnow) ++count;
    }
    return RedisReply::Integer(count);
  }
  if (name == "time") return Time(mnow);
  if (name == "info") return Info(mnow, argv);
  if (name == "script") return Script(argv);
  if (name == "config") return ConfigCommand(argv);
  return Eval(mnow, db, argv);  // eval, evalsha
}

RedisReply SimRedis::Auth(Connection& connection,
                          const std::vector<std::string>& argv) {
  if (argv.size() > 3) return SyntaxError();
  std::string user = "default";
  const std::string& password = argv.back();
  if (argv.size() == 2) {
    if (!config_.requirepass.has_value()) {
      return RedisReply::Error(
          "ERR AUTH <password> called without any password configured for "
          "the default user. Are you sure your configuration is correct?");
    }
  } else {
    user = argv[1];
  }
  // Only the default user exists; without requirepass it is "nopass" and
  // takes any password.
  if (user != "default" ||
      (config_.requirepass.has_value() && password != *config_.requirepass)) {
    return RedisReply::Error(
        "WRONGPASS invalid username-password pair or user is disabled.");
  }
  connection.authenticated = true;
  return Ok();
}

RedisReply SimRedis::Subscribe(Connection& connection,
                               const std::vector<std::string>& argv) {
  if (connection.id == 0) connection.id = next_connection_id_++;
  std::set<std::string>& mine = channels_[connection.id];
  std::vector<RedisReply> replies;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (mine.insert(argv[i]).second) {
      subscribers_[argv[i]].push_back(connection.id);
    }
    replies.push_back(
        PubSubReply("subscribe", RedisReply::String(argv[i]),
                    RedisReply::Integer(static_cast<int64_t>(mine.size()))));
  }
  for (size_t i = 1; i < replies.size(); ++i) {
    pushes_.push_back(Push{connection.id, std::move(replies[i])});
  }
  return std::move(replies[0]);
}

RedisReply SimRedis::Unsubscribe(const Connection& connection,
                                 const std::vector<std::string>& argv) {
  auto mine = channels_.find(connection.id);
  std::vector<std::string> channels(argv.begin() + 1, argv.end());
  if (channels.empty()) {
    // All of them. Redis goes in its dict's order, which no client can rely
    // on; here the channels' order.
    if (mine == channels_.end()) {
      return PubSubReply("unsubscribe", RedisReply::Nil(),
                         RedisReply::Integer(0));
    }
    channels.assign(mine->second.begin(), mine->second.end());
  }
  std::vector<RedisReply> replies;
  for (const std::string& channel : channels) {
    if (mine != channels_.end() && mine->second.erase(channel) == 1) {
      std::vector<uint64_t>& ids = subscribers_[channel];
      ids.erase(std::find(ids.begin(), ids.end(), connection.id));
      if (ids.empty()) subscribers_.erase(channel);
    }
    const int64_t count =
        mine == channels_.end() ? 0 : static_cast<int64_t>(mine->second.size());
    replies.push_back(PubSubReply("unsubscribe", RedisReply::String(channel),
                                  RedisReply::Integer(count)));
  }
  if (mine != channels_.end() && mine->second.empty()) channels_.erase(mine);
  for (size_t i = 1; i < replies.size(); ++i) {
    pushes_.push_back(Push{connection.id, std::move(replies[i])});
  }
  return std::move(replies[0]);
}

int64_t SimRedis::Publish(const std::string& channel,
                          const std::string& message) {
  auto it = subscribers_.find(channel);
  if (it == subscribers_.end()) return 0;
  for (uint64_t id : it->second) {
    pushes_.push_back(
        Push{id, PubSubReply("message", RedisReply::String(channel),
                             RedisReply::String(message))});
  }
  return static_cast<int64_t>(it->second.size());
}

RedisReply SimRedis::Set(absl::Time mnow, int db,
                         const std::vector<std::string>& argv) {
  // Flag parsing as Redis's parseExtendedStringArgumentsOrReply: a repeated
  // flag is allowed, a conflicting one is a syntax error.
  bool nx = false, xx = false, get = false, keepttl = false;
  enum class Unit { kNone, kSeconds, kMillis } unit = Unit::kNone;
  const std::string* expire_arg = nullptr;
  for (size_t i = 3; i < argv.size(); ++i) {
    const std::string opt = absl::AsciiStrToLower(argv[i]);
    const bool has_next = i + 1 < argv.size();
    if (opt == "nx" && !xx) {
      nx = true;
    } else if (opt == "xx" && !nx) {
      xx = true;
    } else if (opt == "get") {
      get = true;
    } else if (opt == "keepttl" && unit == Unit::kNone) {
      keepttl = true;
    } else if (opt == "ex" && !keepttl && unit != Unit::kMillis && has_next) {
      unit = Unit::kSeconds;
      expire_arg = &argv[++i];
    } else if (opt == "px" && !keepttl && unit != Unit::kSeconds && has_next) {
      unit = Unit::kMillis;
      expire_arg = &argv[++i];
    } else {
      return SyntaxError();
    }
  }
  std::optional<absl::Time> expires_at;
  if (expire_arg != nullptr) {
    int64_t amount = 0;
    if (!ParseInt64(*expire_arg, &amount)) return NotAnInteger();
    if (amount <= 0 || (unit == Unit::kSeconds && amount > kInt64Max / 1000)) {
      return InvalidExpire("set");
    }
    const int64_t ms = unit == Unit::kSeconds ? amount * 1000 : amount;
    if (ms > kInt64Max - absl::ToUnixMillis(mnow)) return InvalidExpire("set");
    expires_at = mnow + absl::Milliseconds(ms);
  }
  Entry* existing = Find(mnow, db, argv[1]);
  // SET ... GET reads the old value first: a set there is an error, and
  // nothing is written. Without GET, SET replaces a key of any type.
  if (get && existing != nullptr && existing->is_set) return WrongType();
  RedisReply old = existing == nullptr ? RedisReply::Nil()
                                       : RedisReply::String(existing->value);
  if ((nx && existing != nullptr) || (xx && existing == nullptr)) {
    return get ? old : RedisReply::Nil();
  }
  if (keepttl && existing != nullptr) expires_at = existing->expires_at;
  Put(mnow, db, argv[1], Entry{argv[2], expires_at});
  return get ? old : Ok();
}

RedisReply SimRedis::Pexpire(absl::Time mnow, int db,
                             const std::vector<std::string>& argv) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < argv.size(); ++i) {
    const std::string opt = absl::AsciiStrToLower(argv[i]);
    if (opt == "nx") {
      nx = true;
    } else if (opt == "xx") {
      xx = true;
    } else if (opt == "gt") {
      gt = true;
    } else if (opt == "lt") {
      lt = true;
    } else {
      return RedisReply::Error(
          absl::StrCat("ERR Unsupported option ", argv[i]));
    }
  }
  if (nx && (xx || gt || lt)) {
    return RedisReply::Error(
        "ERR NX and XX, GT or LT options at the same time are not "
        "compatible");
  }
  if (gt && lt) {
    return RedisReply::Error(
        "ERR GT and LT options at the same time are not compatible");
  }
  int64_t ms = 0;
  if (!ParseInt64(argv[2], &ms)) return NotAnInteger();
  const int64_t now_ms = absl::ToUnixMillis(mnow);
  if ((ms > 0 && ms > kInt64Max - now_ms) ||
      (ms < 0 && ms < std::numeric_limits<int64_t>::min() + now_ms)) {
    return InvalidExpire("pexpire");
  }
  Entry* entry = Find(mnow, db, argv[1]);
  if (entry == nullptr) return RedisReply::Integer(0);
  const absl::Time when = mnow + absl::Milliseconds(ms);
  const bool has_ttl = entry->expires_at.has_value();
  if ((nx && has_ttl) || (xx && !has_ttl) ||
      (gt && (!has_ttl || when <= *entry->expires_at)) ||
      (lt && has_ttl && when >= *entry->expires_at)) {
    return RedisReply::Integer(0);
  }
  if (when <= mnow) {
    // A time already past deletes the key, and still counts as set.
    Erase(mnow, db, argv[1]);
    return RedisReply::Integer(1);
  }
  Entry updated = *entry;
  updated.expires_at = when;
  Put(mnow, db, argv[1], std::move(updated));
  return RedisReply::Integer(1);
}

RedisReply SimRedis::SetCommand(absl::Time mnow, int db,
                                const std::string& name,
                                const std::vector<std::string>& argv) {
  const Entry* entry = Find(mnow, db, argv[1]);
  if (entry != nullptr && !entry->is_set) return WrongType();
  if (name == "scard") {
    return RedisReply::Integer(
        entry == nullptr ? 0 : static_cast<int64_t>(entry->members.size()));
  }
  if (name == "smembers") {
    std::vector<RedisReply> members;
    if (entry != nullptr) {
      for (const std::string& member : entry->members) {
        members.push_back(RedisReply::String(member));
      }
    }
    return RedisReply::Array(std::move(members));
  }
  Entry updated;
  if (entry != nullptr) updated = *entry;
  updated.is_set = true;
  int64_t changed = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    changed += name == "sadd"
                   ? (updated.members.insert(argv[i]).second ? 1 : 0)
                   : static_cast<int64_t>(updated.members.erase(argv[i]));
  }
  // Only a change is a write; the last member's removal deletes the key.
  if (changed > 0) {
    if (updated.members.empty()) {
      Erase(mnow, db, argv[1]);
    } else {
      Put(mnow, db, argv[1], std::move(updated));
    }
  }
  return RedisReply::Integer(changed);
}

RedisReply SimRedis::Time(absl::Time mnow) const {
  const int64_t us = absl::ToUnixMicros(mnow);
  return RedisReply::Array({RedisReply::String(absl::StrCat(us / 1000000)),
                            RedisReply::String(absl::StrCat(us % 1000000))});
}

RedisReply SimRedis::Info(absl::Time mnow,
                          const std::vector<std::string>& argv) {
  bool server = argv.size() == 1, memory = argv.size() == 1,
       persistence = argv.size() == 1, keyspace = argv.size() == 1;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string section = absl::AsciiStrToLower(argv[i]);
    const bool every =
        section == "all" || section == "everything" || section == "default";
    server |= every || section == "server";
    memory |= every || section == "memory";
    persistence |= every || section == "persistence";
    keyspace |= every || section == "keyspace";
  }
  std::vector<std::string> sections;
  if (server) {
    const int64_t uptime = absl::ToInt64Seconds(mnow - started_at_);
    sections.push_back(absl::StrCat(
        "# Server\r\n", InfoLine("redis_version", "7.0.15"),
        InfoLine("redis_mode", "standalone"), InfoLine("process_id", "1"),
        InfoLine("run_id", run_id_),
        InfoLine("tcp_port", absl::StrCat(config_.port)),
        InfoLine("server_time_usec", absl::StrCat(absl::ToUnixMicros(mnow))),
        InfoLine("uptime_in_seconds", absl::StrCat(uptime)),
        InfoLine("uptime_in_days", absl::StrCat(uptime / 86400)),
        InfoLine("hz", "10")));
  }
  if (memory) {
    sections.push_back(
        absl::StrCat("# Memory\r\n", InfoLine("maxmemory", "0"),
                     InfoLine("maxmemory_human", "0B"),
                     InfoLine("maxmemory_policy", config_.maxmemory_policy)));
  }
  if (persistence) {
    const bool aof = config_.persistence == Persistence::kAofAlways ||
                     config_.persistence == Persistence::kAofEverysec;
    sections.push_back(absl::StrCat(
        "# Persistence\r\n", InfoLine("loading", "0"),
        InfoLine("async_loading", "0"),
        InfoLine("rdb_last_load_keys_expired", "0"),
        InfoLine("rdb_last_load_keys_loaded", absl::StrCat(keys_loaded_)),
        InfoLine("aof_enabled", aof ? "1" : "0")));
  }
  if (keyspace) {
    std::string text = "# Keyspace\r\n";
    for (int i = 0; i < kDatabases; ++i) {
      int64_t keys = 0, expires = 0;
      for (const auto& [key, entry] : dbs_[i]) {
        if (entry.expires_at.has_value() && *entry.expires_at <= mnow) continue;
        ++keys;
        if (entry.expires_at.has_value()) ++expires;
      }
      if (keys == 0) continue;
      absl::StrAppend(&text, "db", i, ":keys=", keys, ",expires=", expires,
                      ",avg_ttl=0\r\n");
    }
    sections.push_back(std::move(text));
  }
  // Sections are separated by an empty line; every line ends in \r\n.
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) out += "\r\n";
    out += sections[i];
  }
  return RedisReply::String(std::move(out));
}

RedisReply SimRedis::ConfigCommand(const std::vector<std::string>& argv) const {
  // get: the parameters matching any of the patterns (a name without
  // "[*?" is looked up as given, and answered with the spelling asked),
  // each once, as a flat [name, value, ...] array (RESP2) in this start's
  // order.
  std::map<std::string, std::string> matched;  // Known name -> reply name.
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string& pattern = argv[i];
    const bool glob = pattern.find_first_of("[*?") != std::string::npos;
    for (const char* known : kConfigNames) {
      if (matched.count(known) > 0) continue;
      if (glob ? GlobMatch(pattern, known)
               : absl::AsciiStrToLower(pattern) == known) {
        matched[known] = glob ? std::string(known) : pattern;
      }
    }
  }
  std::vector<RedisReply> reply;
  for (const std::string& name : config_order_) {
    auto it = matched.find(name);
    if (it == matched.end()) continue;
    reply.push_back(RedisReply::String(it->second));
    reply.push_back(RedisReply::String(ConfigValue(name)));
  }
  return RedisReply::Array(std::move(reply));
}

std::string SimRedis::ConfigValue(absl::string_view name) const {
  const Persistence mode = config_.persistence;
  if (name == "appendonly") {
    return mode == Persistence::kAofAlways || mode == Persistence::kAofEverysec
               ? "yes"
               : "no";
  }
  // Redis's default where AOF is off.
  if (name == "appendfsync") {
    return mode == Persistence::kAofAlways ? "always" : "everysec";
  }
  if (name == "appendfilename") return "appendonly.aof";
  if (name == "appenddirname") return "appendonlydir";
  if (name == "save") {
    if (mode != Persistence::kRdb) return "";
    std::vector<std::string> parts;
    for (const SaveRule& rule : config_.save) {
      parts.push_back(absl::StrCat(rule.seconds, " ", rule.changes));
    }
    return absl::StrJoin(parts, " ");
  }
  if (name == "maxmemory") return "0";
  if (name == "maxmemory-policy") return config_.maxmemory_policy;
  return "";
}

RedisReply SimRedis::Script(const std::vector<std::string>& argv) {
  const std::string sub = absl::AsciiStrToLower(argv[1]);
  if (sub == "load") {
    std::string sha1 = ScriptSha1(argv[2]);
    scripts_[sha1] = argv[2];
    return RedisReply::String(std::move(sha1));
  }
  if (sub == "flush") {
    if (argv.size() > 3 ||
        (argv.size() == 3 && absl::AsciiStrToLower(argv[2]) != "sync" &&
         absl::AsciiStrToLower(argv[2]) != "async")) {
      return RedisReply::Error(
          "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    scripts_.clear();
    return Ok();
  }
  // exists
  std::vector<RedisReply> found;
  for (size_t i = 2; i < argv.size(); ++i) {
    found.push_back(RedisReply::Integer(
        ScriptCached(absl::AsciiStrToLower(argv[i])) ? 1 : 0));
  }
  return RedisReply::Array(std::move(found));
}

RedisReply SimRedis::Eval(absl::Time mnow, int db,
                          const std::vector<std::string>& argv) {
  const bool evalsha = absl::AsciiStrToLower(argv[0]) == "evalsha";
  if (evalsha && argv[1].size() != 40) return NoScript();
  int64_t num_keys = 0;
  if (!ParseInt64(argv[2], &num_keys)) return NotAnInteger();
  const int64_t available = static_cast<int64_t>(argv.size()) - 3;
  if (num_keys > available) {
    return RedisReply::Error(
        "ERR Number of keys can't be greater than number of args");
  }
  if (num_keys < 0) {
    return RedisReply::Error("ERR Number of keys can't be negative");
  }
  std::string sha1;
  if (evalsha) {
    sha1 = absl::AsciiStrToLower(argv[1]);
    if (!ScriptCached(sha1)) return NoScript();
  } else {
    // EVAL caches what it runs: a later EVALSHA finds it.
    sha1 = ScriptSha1(argv[1]);
    scripts_[sha1] = argv[1];
  }
  const auto keys_begin = argv.begin() + 3;
  const std::vector<std::string> keys(keys_begin, keys_begin + num_keys);
  const std::vector<std::string> args(keys_begin + num_keys, argv.end());
  return RunScript(mnow, db, sha1, keys, args);
}

// Each script below is the C++ reading of its Lua source
// (src/algorithm/scripts.cc, src/config/fencing.cc), step by step, with Redis's
// conversions: redis.call() returns nil as false and status OK as a table
// (truthy); a Lua number becomes an integer reply, a table an array, a string a
// bulk string.
// One script call as the simulated scripts see it: the keys and arguments,
// and the commands they run (each on a connection already in the call's db
// and authenticated).
class SimRedis::ScriptCall {
 public:
  ScriptCall(SimRedis& redis, absl::Time mnow, int db, const std::string& sha1,
             const std::vector<std::string>& keys,
             const std::vector<std::string>& args)
      : keys(keys),
        args(args),
        sha1(sha1),
        mnow(mnow),
        db(db),
        redis_(redis),
        inner_{db, true} {}

  RedisReply call(std::vector<std::string> argv) {
    return redis_.Dispatch(mnow, inner_, argv);
  }
  bool need(size_t num_keys, size_t num_args) const {
    return keys.size() >= num_keys && args.size() >= num_args;
  }
  // Real Redis raises a Lua error for a nil argument; the engine never
  // sends one, so the simulator only says so.
  RedisReply missing(absl::string_view script) const {
    return RedisReply::Error(absl::StrCat(
        "ERR SimRedis: ", script, " script called with too few keys or args"));
  }
  bool holds(const std::string& key) {
    const RedisReply current = call({"GET", key});
    return current.type == RedisReply::Type::kString && current.str == args[0];
  }
  bool exists(const std::string& key) {
    return call({"EXISTS", key}).integer == 1;
  }
  // The semaphore and reader scripts check every call that can fail (a key
  // of the other type, a bad TTL): redis.call() raises its error, the
  // script stops there with what it wrote so far kept, and the reply is the
  // error with the script's SHA-1 and the Lua line of the call. `line` is
  // that line in the script's source (src/algorithm/*_scripts.cc).
  bool call_at(std::vector<std::string> argv, int line, RedisReply* reply) {
    *reply = call(std::move(argv));
    if (reply->type != RedisReply::Type::kError) return true;
    *reply = ScriptCallError(*reply, sha1, line);
    return false;
  }
  // tonumber(ARGV[i]) where Lua goes on only with a number (math.max, a
  // comparison, a KEYS index): the engine always sends one.
  RedisReply not_a_number(absl::string_view script) const {
    return RedisReply::Error(
        absl::StrCat("ERR SimRedis: ", script,
                     " script given a non-number where Lua needs one"));
  }
  static bool is_string(const RedisReply& r, absl::string_view value) {
    return r.type == RedisReply::Type::kString && r.str == value;
  }
  int64_t pttl(const std::string& key) { return call({"PTTL", key}).integer; }
  // The tail of both semaphore acquire scripts (KEYS: the limit key, then
  // the slots; ARGV: token, ttl, limit, ...): takes `take` (none if null),
  // raises the limit key, then lists the free slots.
  RedisReply take_and_list(const std::vector<const std::string*>* take,
                           absl::string_view script) {
    std::vector<RedisReply> reply = {RedisReply::Integer(0)};
    if (take != nullptr) {
      RedisReply r;
      for (const std::string* slot : *take) {
        if (!call_at({"SET", *slot, args[0], "PX", args[1]}, 10, &r)) return r;
      }
      const std::optional<double> ttl = LuaToNumber(args[1]);
      if (!ttl.has_value()) return not_a_number(script);
      const double longer = std::max(*ttl, static_cast<double>(pttl(keys[0])));
      if (!call_at({"SET", keys[0], args[2], "PX", LuaNumberArg(longer)}, 13,
                   &r)) {
        return r;
      }
      reply[0] = RedisReply::Integer(1);
    }
    std::string map;
    for (size_t s = 1; s < keys.size(); ++s) {
      map.push_back(exists(keys[s]) ? '0' : '1');
    }
    reply.push_back(RedisReply::String(std::move(map)));
    return RedisReply::Array(std::move(reply));
  }
  // A release handed the key over (SimRedis::hand_offs()).
  void CountHandOff() { ++redis_.hand_offs_; }

  const std::vector<std::string>& keys;
  const std::vector<std::string>& args;
  const std::string& sha1;
  const absl::Time mnow;
  const int db;

 private:
  SimRedis& redis_;
  Connection inner_;
};

namespace {

// Each script as the simulation runs it: the twin of its Lua (checked
// against redis-server by SimRedisDifferentialTest).

RedisReply SimRelease(SimRedis::ScriptCall& c) {
  if (!c.need(0, 1)) return c.missing("release");
  // c.args[2]: the waiting set; c.args[3]: the arrival c.keys' prefix;
  // c.args[4]: the hand-off entries' prefix; c.args[5], c.args[6]: a waiter to
  // withdraw, and "1" if it leaves the queue too.
  const bool has_hand_off = c.args.size() >= 5;
  // A hand-off entry "<proof> <ttl> <token>", as string.match(entry,
  // '^(%x+) (%d+) (%x+)$') splits it (%x, %d: C locale, as Lua's).
  struct Deed {
    std::string proof, ttl, token;
  };
  auto parse_entry = [](const std::string& entry) -> std::optional<Deed> {
    auto all_of = [](absl::string_view s, bool (*is)(unsigned char)) {
      return !s.empty() && std::all_of(s.begin(), s.end(), [is](char c) {
        return is(static_cast<unsigned char>(c));
      });
    };
    const size_t first = entry.find(' ');
    if (first == std::string::npos) return std::nullopt;
    const size_t second = entry.find(' ', first + 1);
    if (second == std::string::npos) return std::nullopt;
    Deed deed{entry.substr(0, first),
              entry.substr(first + 1, second - first - 1),
              entry.substr(second + 1)};
    if (!all_of(deed.proof, absl::ascii_isxdigit) ||
        !all_of(deed.ttl, absl::ascii_isdigit) ||
        !all_of(deed.token, absl::ascii_isxdigit)) {
      return std::nullopt;
    }
    return deed;
  };
  // released(): the waiting set's id (c.args[2]) whose arrival key (c.args[3]
  // + id) holds the smallest number, named in the message; pcall, so an
  // error names nobody. With c.args[4], the heir: of the ids with an arrival
  // number and a well-formed hand-off entry (c.args[4] + id) for another
  // token than c.args[0] and a TTL above 0, the one whose arrival number is
  // smallest; the message is then "granted <proof>", published on the
  // heir's own channel (c.args[4] + its id).
  struct Released {
    std::string message;
    std::string heir;  // Empty: none.
    Deed deed;
  };
  auto released = [&]() {
    Released out{std::string(kReleasedMessage), "", {}};
    if (c.args.size() < 4) return out;
    const RedisReply ids = c.call({"SMEMBERS", c.args[2]});
    if (ids.type != RedisReply::Type::kArray || ids.elements.size() > 64) {
      return out;
    }
    std::optional<double> first, since;
    std::string next;
    for (const RedisReply& id : ids.elements) {
      const RedisReply at = c.call({"GET", c.args[3] + id.str});
      double value = 0;
      // tonumber(): decimal digits here (the engine writes TIME's).
      if (at.type != RedisReply::Type::kString ||
          !absl::SimpleAtod(at.str, &value)) {
        continue;
      }
      if (!first.has_value() || value < *first) {
        first = value;
        next = id.str;
      }
      if (!has_hand_off) continue;
      const RedisReply entry = c.call({"GET", c.args[4] + id.str});
      if (entry.type != RedisReply::Type::kString) continue;
      std::optional<Deed> deed = parse_entry(entry.str);
      if (!deed.has_value() || deed->token == c.args[0]) continue;
      // tonumber(ttl) > 0: digits only, so any but zeros.
      if (deed->ttl.find_first_not_of('0') == std::string::npos) continue;
      if (!since.has_value() || value < *since) {
        since = value;
        out.heir = id.str;
        out.deed = *std::move(deed);
      }
    }
    if (!out.heir.empty()) {
      out.message = absl::StrCat(kGrantedMessage, " ", out.deed.proof);
    } else if (first.has_value()) {
      absl::StrAppend(&out.message, " ", next);
    }
    return out;
  };
  if (c.args.size() >= 6) {
    // The withdrawal, before any release: a withdrawn waiter is no heir.
    c.call({"DEL", c.args[4] + c.args[5]});
    if (c.args.size() >= 7 && c.args[6] == "1") {
      const RedisReply srem = c.call({"SREM", c.args[2], c.args[5]});
      if (srem.type == RedisReply::Type::kError) {
        return ScriptCallError(srem, c.sha1, /*line=*/23);
      }
      c.call({"DEL", c.args[3] + c.args[5]});
    }
  }
  const bool announce = c.args.size() < 2 || c.args[1] != "0";
  int64_t deleted = 0;
  for (const std::string& key : c.keys) {
    if (!c.holds(key)) continue;
    deleted += c.call({"DEL", key}).integer;
    Released r{std::string(kReleasedMessage), "", {}};
    if (announce) r = released();
    if (!r.heir.empty()) {
      const RedisReply set =
          c.call({"SET", key, r.deed.token, "PX", r.deed.ttl});
      if (set.type == RedisReply::Type::kError) {
        return ScriptCallError(set, c.sha1, /*line=*/32);
      }
      c.call({"SREM", c.args[2], r.heir});
      c.call({"DEL", c.args[3] + r.heir, c.args[4] + r.heir});
      c.CountHandOff();
    }
    // A hand-off goes to the heir's own channel (its entry's name) alone;
    // "h": hands on, publishing only a hand-off.
    const bool quiet = c.args.size() >= 2 && c.args[1] == "h";
    if (!r.heir.empty()) {
      c.call({"PUBLISH", c.args[4] + r.heir, r.message});
    } else if (announce && !quiet) {
      c.call({"PUBLISH", key, r.message});
    }
  }
  return RedisReply::Integer(deleted > 0 ? 1 : 0);
}

RedisReply SimExtend(SimRedis::ScriptCall& c) {
  if (!c.need(0, 2)) return c.missing("extend");
  for (const std::string& key : c.keys) {
    if (!c.holds(key)) return RedisReply::Integer(0);
  }
  for (const std::string& key : c.keys) {
    const RedisReply result = c.call({"PEXPIRE", key, c.args[1]});
    if (result.type == RedisReply::Type::kError) {
      return ScriptCallError(result, c.sha1, /*line=*/5);
    }
  }
  return RedisReply::Integer(1);
}

RedisReply SimMultiAcquire(SimRedis::ScriptCall& c) {
  if (!c.need(0, 2)) return c.missing("multi acquire");
  for (const std::string& key : c.keys) {
    if (c.exists(key)) return RedisReply::Integer(0);
  }
  for (const std::string& key : c.keys) {
    const RedisReply set = c.call({"SET", key, c.args[0], "PX", c.args[1]});
    if (set.type == RedisReply::Type::kError) {
      return ScriptCallError(set, c.sha1, /*line=*/5);
    }
    c.call({"PUBLISH", key, std::string(kTakenMessage)});
  }
  return RedisReply::Integer(1);
}

// What the writer scripts do to mark a writer waiting: `id` joins the set
// `waiting`, whose TTL becomes the longer of its own and `ttl` ms. An error
// reply if a call fails (SADD at the Lua line `sadd_line`, the TTL not a
// number for math.max on the next line), else nothing.
std::optional<RedisReply> MarkWaiting(SimRedis::ScriptCall& c,
                                      const std::string& waiting,
                                      const std::string& id,
                                      const std::string& ttl, int sadd_line) {
  const RedisReply sadd = c.call({"SADD", waiting, id});
  if (sadd.type == RedisReply::Type::kError) {
    return ScriptCallError(sadd, c.sha1, sadd_line);
  }
  int64_t wait = 0;
  if (!absl::SimpleAtoi(ttl, &wait)) {
    const int line = sadd_line + 1;
    return RedisReply::Error(absl::StrCat(
        "ERR user_script:", line,
        ": bad argument #1 to 'max' (number expected, got nil) script: ",
        c.sha1, ", on @user_script:", line, "."));
  }
  const int64_t pttl = c.pttl(waiting);
  c.call({"PEXPIRE", waiting, absl::StrCat(std::max(wait, pttl))});
  return std::nullopt;
}

RedisReply SimWriterAcquire(SimRedis::ScriptCall& c) {
  // KEYS[3] (the arrival key) and KEYS[4] (the hand-off entry) optional;
  // with KEYS[4], ARGV[6] (the proof) and ARGV[7] (the entry's TTL).
  if (!c.need(2, 5) || (c.keys.size() >= 4 && c.args.size() < 7)) {
    return c.missing("writer acquire");
  }
  const bool hand_off = c.keys.size() >= 4;
  // Ours already (a release handed it to us): a win as a missing key is.
  bool mine = false;
  if (hand_off) {
    const RedisReply current = c.call({"GET", c.keys[0]});
    if (current.type == RedisReply::Type::kError) {
      return ScriptCallError(current, c.sha1, /*line=*/1);
    }
    mine =
        current.type == RedisReply::Type::kString && current.str == c.args[0];
  }
  if (mine || !c.exists(c.keys[0])) {
    const RedisReply set =
        c.call({"SET", c.keys[0], c.args[0], "PX", c.args[1]});
    if (set.type == RedisReply::Type::kError) {
      return ScriptCallError(set, c.sha1, /*line=*/3);
    }
    if (c.args[4] == "1") {
      c.call({"PUBLISH", c.keys[0], std::string(kTakenMessage)});
    }
    const RedisReply srem = c.call({"SREM", c.keys[1], c.args[2]});
    if (srem.type == RedisReply::Type::kError) {
      return ScriptCallError(srem, c.sha1, /*line=*/5);
    }
    if (c.keys.size() >= 3) c.call({"DEL", c.keys[2]});
    if (hand_off) c.call({"DEL", c.keys[3]});
    return RedisReply::Integer(1);
  }
  if (std::optional<RedisReply> error =
          MarkWaiting(c, c.keys[1], c.args[2], c.args[3], /*sadd_line=*/10)) {
    return *error;
  }
  if (c.keys.size() >= 3) {
    // The first refusal's TIME, seconds then microseconds padded to six.
    const RedisReply now = c.call({"TIME"});
    const std::string at = absl::StrCat(
        now.elements[0].str, std::string(6 - now.elements[1].str.size(), '0'),
        now.elements[1].str);
    c.call({"SET", c.keys[2], at, "NX", "PX", c.args[3]});
    c.call({"PEXPIRE", c.keys[2], c.args[3]});
  }
  if (hand_off) {
    // "<proof> <ttl> <token>", ARGV[2] as sent.
    const RedisReply set =
        c.call({"SET", c.keys[3],
                absl::StrCat(c.args[5], " ", c.args[1], " ", c.args[0]), "PX",
                c.args[6]});
    if (set.type == RedisReply::Type::kError) {
      return ScriptCallError(set, c.sha1, /*line=*/19);
    }
  }
  return RedisReply::Integer(0);
}

RedisReply SimWriterMark(SimRedis::ScriptCall& c) {
  // KEYS: pairs (lock key, waiting key); ARGV: the waiter id, the TTL.
  if (!c.need(0, 2)) return c.missing("writer mark");
  int64_t marked = 0;
  for (size_t i = 0; i + 1 < c.keys.size(); i += 2) {
    if (!c.exists(c.keys[i])) continue;
    if (std::optional<RedisReply> error = MarkWaiting(
            c, c.keys[i + 1], c.args[0], c.args[1], /*sadd_line=*/4)) {
      return *error;
    }
    ++marked;
  }
  return RedisReply::Integer(marked);
}

RedisReply SimSemaphoreAcquire(SimRedis::ScriptCall& c) {
  if (!c.need(1, 3)) return c.missing("semaphore acquire");
  RedisReply limit;
  if (!c.call_at({"GET", c.keys[0]}, 1, &limit)) return limit;
  if (limit.type == RedisReply::Type::kString && limit.str != c.args[2]) {
    return RedisReply::Array({RedisReply::Integer(-1), limit});
  }
  // KEYS[tonumber(ARGV[i]) + 2]: candidate slot n is c.keys[n + 1].
  std::vector<const std::string*> slots;
  for (size_t i = 3; i < c.args.size(); ++i) {
    const std::optional<double> n = LuaToNumber(c.args[i]);
    if (!n.has_value() || *n != static_cast<double>(static_cast<int64_t>(*n)) ||
        *n + 1 < 0 || *n + 1 >= static_cast<double>(c.keys.size())) {
      return c.not_a_number("semaphore acquire");
    }
    slots.push_back(&c.keys[static_cast<size_t>(*n + 1)]);
  }
  bool taken = false;
  for (const std::string* slot : slots) taken = taken || c.exists(*slot);
  return c.take_and_list(taken ? nullptr : &slots, "semaphore acquire");
}

// TEST ONLY, unsafe (tests/sim/unsafe_rules.h).
RedisReply SimSemaphoreCountersAcquire(SimRedis::ScriptCall& c) {
  if (!c.need(1, 4)) return c.missing("semaphore counters acquire");
  RedisReply limit;
  if (!c.call_at({"GET", c.keys[0]}, 1, &limit)) return limit;
  if (limit.type == RedisReply::Type::kString && limit.str != c.args[2]) {
    return RedisReply::Array({RedisReply::Integer(-1), limit});
  }
  std::vector<size_t> free;
  for (size_t s = 1; s < c.keys.size(); ++s) {
    if (!c.exists(c.keys[s])) free.push_back(s);
  }
  const std::optional<double> permits = LuaToNumber(c.args[3]);
  if (!permits.has_value()) return c.not_a_number("semaphore counters acquire");
  if (static_cast<double>(free.size()) < *permits) {
    return c.take_and_list(nullptr, "semaphore counters acquire");
  }
  std::vector<const std::string*> take;
  for (size_t i = 0; static_cast<double>(i) + 1 <= *permits; ++i) {
    take.push_back(&c.keys[free[i]]);
  }
  return c.take_and_list(&take, "semaphore counters acquire");
}

RedisReply SimSemaphoreExtend(SimRedis::ScriptCall& c) {
  if (!c.need(1, 3)) return c.missing("semaphore extend");
  RedisReply r;
  for (size_t i = 1; i < c.keys.size(); ++i) {
    if (!c.call_at({"GET", c.keys[i]}, 2, &r)) return r;
    if (!c.is_string(r, c.args[0])) return RedisReply::Integer(0);
  }
  RedisReply limit;
  if (!c.call_at({"GET", c.keys[0]}, 4, &limit)) return limit;
  if (limit.type == RedisReply::Type::kString && limit.str != c.args[2]) {
    return RedisReply::Error(absl::StrCat("SEMLIMIT this master has limit ",
                                          limit.str, ", the holder ",
                                          c.args[2]));
  }
  for (size_t i = 1; i < c.keys.size(); ++i) {
    if (!c.call_at({"PEXPIRE", c.keys[i], c.args[1]}, 9, &r)) return r;
  }
  const std::optional<double> ttl = LuaToNumber(c.args[1]);
  if (!ttl.has_value()) return c.not_a_number("semaphore extend");
  const double longer = std::max(*ttl, static_cast<double>(c.pttl(c.keys[0])));
  if (!c.call_at({"SET", c.keys[0], c.args[2], "PX", LuaNumberArg(longer)}, 12,
                 &r)) {
    return r;
  }
  return RedisReply::Integer(1);
}

RedisReply SimBatchExtend(SimRedis::ScriptCall& c) {
  // ARGV: four per lock (key count, token, ttl, semaphore limit or "");
  // each lock judged alone over its own c.keys, as the Lua does.
  std::vector<RedisReply> out;
  size_t k = 0;
  RedisReply r;
  for (size_t e = 0; e + 4 <= c.args.size(); e += 4) {
    const std::optional<double> n = LuaToNumber(c.args[e]);
    if (!n.has_value()) return c.not_a_number("batch extend");
    const size_t count = static_cast<size_t>(*n);
    if (k + count > c.keys.size()) return c.missing("batch extend");
    const bool semaphore = !c.args[e + 3].empty();
    const size_t first = semaphore ? k + 1 : k;
    int64_t ok = 1;
    for (size_t i = first; i < k + count; ++i) {
      if (!c.call_at({"GET", c.keys[i]}, 9, &r)) return r;
      if (!c.is_string(r, c.args[e + 1])) {
        ok = 0;
        break;
      }
    }
    if (ok == 1 && semaphore) {
      if (!c.call_at({"GET", c.keys[k]}, 12, &r)) return r;
      if (r.type == RedisReply::Type::kString && r.str != c.args[e + 3]) {
        ok = -1;
      }
    }
    if (ok == 1) {
      for (size_t i = first; i < k + count; ++i) {
        if (!c.call_at({"PEXPIRE", c.keys[i], c.args[e + 2]}, 16, &r)) return r;
      }
      if (semaphore) {
        const std::optional<double> ttl = LuaToNumber(c.args[e + 2]);
        if (!ttl.has_value()) return c.not_a_number("batch extend");
        const double longer =
            std::max(*ttl, static_cast<double>(c.pttl(c.keys[k])));
        if (!c.call_at(
                {"SET", c.keys[k], c.args[e + 3], "PX", LuaNumberArg(longer)},
                19, &r)) {
          return r;
        }
      }
    }
    out.push_back(RedisReply::Integer(ok));
    k += count;
  }
  return RedisReply::Array(std::move(out));
}

RedisReply SimReaderAcquire(SimRedis::ScriptCall& c) {
  if (!c.need(4, 3)) return c.missing("reader acquire");
  const std::string& lock = c.keys[0];
  const std::string& mine = c.keys[1];
  const std::string& index = c.keys[3];
  if (c.exists(c.keys[2])) {
    return RedisReply::Array(
        {RedisReply::Integer(0), RedisReply::String("writer waiting")});
  }
  RedisReply r;
  if (!c.call_at({"GET", lock}, 2, &r)) return r;
  if (r.type == RedisReply::Type::kString && r.str != kSharedLockValue) {
    return RedisReply::Array(
        {RedisReply::Integer(0), RedisReply::String("writer")});
  }
  if (!c.call_at({"SCARD", index}, 4, &r)) return r;
  const std::optional<double> most = LuaToNumber(c.args[2]);
  if (!most.has_value()) return c.not_a_number("reader acquire");
  if (static_cast<double>(r.integer) >= *most) {
    const std::string base =
        LuaPrefix(mine, static_cast<int64_t>(mine.size()) -
                            static_cast<int64_t>(c.args[0].size()));
    RedisReply members;
    if (!c.call_at({"SMEMBERS", index}, 6, &members)) return members;
    for (const RedisReply& t : members.elements) {
      if (!c.exists(base + t.str)) c.call({"SREM", index, t.str});
    }
    if (!c.call_at({"SCARD", index}, 9, &r)) return r;
    if (static_cast<double>(r.integer) >= *most) {
      return RedisReply::Array(
          {RedisReply::Integer(0), RedisReply::String("too many readers")});
    }
  }
  const std::optional<double> ttl = LuaToNumber(c.args[1]);
  if (!ttl.has_value()) return c.not_a_number("reader acquire");
  const std::string longer =
      LuaNumberArg(std::max(*ttl, static_cast<double>(c.pttl(lock))));
  if (!c.call_at({"SET", lock, std::string(kSharedLockValue), "PX", longer}, 12,
                 &r)) {
    return r;
  }
  if (!c.call_at({"SET", mine, c.args[0], "PX", c.args[1]}, 13, &r)) return r;
  if (!c.call_at({"SADD", index, c.args[0]}, 14, &r)) return r;
  if (!c.call_at({"PEXPIRE", index, longer}, 15, &r)) return r;
  return RedisReply::Array({RedisReply::Integer(1)});
}

RedisReply SimReaderExtend(SimRedis::ScriptCall& c) {
  if (!c.need(3, 2)) return c.missing("reader extend");
  const std::string& lock = c.keys[0];
  const std::string& mine = c.keys[1];
  const std::string& index = c.keys[2];
  RedisReply r;
  if (!c.call_at({"GET", mine}, 1, &r)) return r;
  if (!c.is_string(r, c.args[0])) return RedisReply::Integer(0);
  if (!c.call_at({"GET", lock}, 2, &r)) return r;
  if (!c.is_string(r, kSharedLockValue)) return RedisReply::Integer(0);
  if (!c.call_at({"PEXPIRE", mine, c.args[1]}, 3, &r)) return r;
  const std::optional<double> ttl = LuaToNumber(c.args[1]);
  if (!ttl.has_value()) return c.not_a_number("reader extend");
  const std::string grown =
      LuaNumberArg(std::max(*ttl, static_cast<double>(c.pttl(lock))));
  if (!c.call_at({"PEXPIRE", lock, grown}, 5, &r)) return r;
  if (!c.call_at({"SADD", index, c.args[0]}, 6, &r)) return r;
  if (!c.call_at({"PEXPIRE", index, grown}, 7, &r)) return r;
  return RedisReply::Integer(1);
}

RedisReply SimReaderRelease(SimRedis::ScriptCall& c) {
  if (!c.need(3, 1)) return c.missing("reader release");
  const std::string& lock = c.keys[0];
  const std::string& mine = c.keys[1];
  const std::string& index = c.keys[2];
  RedisReply r;
  if (!c.call_at({"GET", mine}, 1, &r)) return r;
  if (!c.is_string(r, c.args[0])) return RedisReply::Integer(0);
  c.call({"DEL", mine});
  if (!c.call_at({"SREM", index, c.args[0]}, 3, &r)) return r;
  const std::string base =
      LuaPrefix(mine, static_cast<int64_t>(mine.size()) -
                          static_cast<int64_t>(c.args[0].size()));
  int64_t longest = 0;
  bool forever = false;
  RedisReply members;
  if (!c.call_at({"SMEMBERS", index}, 7, &members)) return members;
  for (const RedisReply& t : members.elements) {
    const int64_t left = c.pttl(base + t.str);
    if (left == -2) {
      c.call({"SREM", index, t.str});
    } else if (left == -1) {
      forever = true;
    } else {
      longest = std::max<int64_t>({longest, left, 1});
    }
  }
  if (forever) return RedisReply::Integer(1);
  if (!c.call_at({"GET", lock}, 13, &r)) return r;
  if (!c.is_string(r, kSharedLockValue)) return RedisReply::Integer(1);
  if (longest == 0) {
    c.call({"DEL", lock, index});
    if (c.args.size() < 2 || c.args[1] != "0") {
      c.call({"PUBLISH", lock, std::string(kReleasedMessage)});
    }
  } else {
    const std::string left = absl::StrCat(longest);
    if (!c.call_at({"PEXPIRE", lock, left}, 18, &r)) return r;
    if (!c.call_at({"PEXPIRE", index, left}, 19, &r)) return r;
  }
  return RedisReply::Integer(1);
}

RedisReply SimFencedAcquire(SimRedis::ScriptCall& c) {
  if (!c.need(3, 2) || c.keys.size() % 2 == 0)
    return c.missing("fenced acquire");
  const size_t n = (c.keys.size() - 1) / 2;
  bool set = true;
  for (size_t i = 0; i < n; ++i) set = set && !c.exists(c.keys[i]);
  if (set) {
    for (size_t i = 0; i < n; ++i) {
      const RedisReply r =
          c.call({"SET", c.keys[i], c.args[0], "PX", c.args[1]});
      if (r.type == RedisReply::Type::kError) {
        return ScriptCallError(r, c.sha1, /*line=*/8);
      }
      c.call({"PUBLISH", c.keys[i], std::string(kTakenMessage)});
    }
  }
  auto or_empty = [](const RedisReply& r) {
    return RedisReply::String(r.type == RedisReply::Type::kString ? r.str : "");
  };
  std::vector<RedisReply> reply = {RedisReply::Integer(set ? 1 : 0)};
  for (size_t i = 0; i < n; ++i) {
    reply.push_back(or_empty(c.call({"GET", c.keys[n + i]})));
  }
  reply.push_back(or_empty(c.call({"GET", c.keys.back()})));
  return RedisReply::Array(std::move(reply));
}

RedisReply SimFenceWrite(SimRedis::ScriptCall& c) {
  if (!c.need(1, 1)) return c.missing("fence write");
  const std::optional<double> wanted = LuaToNumber(c.args[0]);
  for (const std::string& key : c.keys) {
    const RedisReply stored = c.call({"GET", key});
    const double current =
        LuaToNumber(stored.type == RedisReply::Type::kString ? stored.str : "0")
            .value_or(0);
    if (!wanted.has_value()) {
      return RedisReply::Error(absl::StrCat(
          "ERR user_script:4: attempt to compare nil with number script: ",
          c.sha1, ", on @user_script:4."));
    }
    if (*wanted <= current) return RedisReply::Integer(0);
  }
  for (const std::string& key : c.keys) c.call({"SET", key, c.args[0]});
  return RedisReply::Integer(1);
}

RedisReply SimMarker(SimRedis::ScriptCall& c) {
  if (!c.need(1, 1)) return c.missing("marker");
  const RedisReply current = c.call({"GET", c.keys[0]});
  const RedisReply now = c.call({"TIME"});
  const std::string micros = absl::StrCat("000000", now.elements[1].str);
  const std::string stamp =
      absl::StrCat(now.elements[0].str, micros.substr(micros.size() - 6));
  // ARGV[4], if sent and not empty: the membership record, stamped.
  const std::string suffix = c.args.size() > 3 && !c.args[3].empty()
                                 ? absl::StrCat(c.args[3], ";since=", stamp)
                                 : std::string();
  if (current.type == RedisReply::Type::kString) {
    // A marker from before records gets the record appended.
    if (suffix.empty() || absl::StrContains(current.str, ';')) {
      return current;
    }
    const std::string value = current.str + suffix;
    c.call({"SET", c.keys[0], value});
    return RedisReply::String(value);
  }
  std::string value = absl::StrCat(c.args[0], ":", stamp);
  // ARGV[2] and ARGV[3], if sent: the run_id the client's handshake read
  // and the client's max_ttl.
  for (size_t i = 1; i < c.args.size() && i < 3; ++i) {
    absl::StrAppend(&value, ":", c.args[i]);
  }
  value += suffix;
  c.call({"SET", c.keys[0], value});
  return RedisReply::String(value);
}

RedisReply SimReconfigure(SimRedis::ScriptCall& c) {
  if (!c.need(1, 5)) return c.missing("reconfigure");
  const RedisReply current = c.call({"GET", c.keys[0]});
  const RedisReply now = c.call({"TIME"});
  const std::string micros = absl::StrCat("000000", now.elements[1].str);
  const std::string stamp =
      absl::StrCat(now.elements[0].str, micros.substr(micros.size() - 6));
  const std::string suffix = absl::StrCat(c.args[1], ";since=", stamp);
  auto answer = [](int64_t written, std::string value) {
    return RedisReply::Array(
        {RedisReply::Integer(written), RedisReply::String(std::move(value))});
  };
  if (current.type != RedisReply::Type::kString) {
    if (!c.args[0].empty()) return answer(0, "");
    std::string value = absl::StrCat(c.args[2], ":", stamp, ":", c.args[3], ":",
                                     c.args[4], suffix);
    c.call({"SET", c.keys[0], value});
    return answer(1, std::move(value));
  }
  // string.match(s, ';member=([^;]*)'): the text after the first
  // ";member=" up to the next ';' or the end; nullopt (nil) if none.
  auto member_of = [](absl::string_view s) -> std::optional<std::string> {
    const size_t at = s.find(";member=");
    if (at == absl::string_view::npos) return std::nullopt;
    absl::string_view rest = s.substr(at + 8);
    return std::string(rest.substr(0, rest.find(';')));
  };
  const std::string& value_now = current.str;
  const size_t cut = value_now.find(';');
  std::string own = value_now;
  std::string record;
  if (cut != std::string::npos) {
    own = value_now.substr(0, cut);
    const absl::string_view rest = absl::string_view(value_now).substr(cut);
    if (member_of(rest) != member_of(c.args[1])) {
      return answer(0, value_now);
    }
    // ';(deployment=.*);since=' (greedy: to the last ";since=" after the
    // first ";deployment="), else ';(deployment=.*)$', else ''.
    const size_t from = rest.find(";deployment=");
    if (from != absl::string_view::npos) {
      const size_t since = rest.rfind(";since=");
      record = since != absl::string_view::npos && since > from
                   ? std::string(rest.substr(from + 1, since - from - 1))
                   : std::string(rest.substr(from + 1));
    }
  }
  if (record != c.args[0]) return answer(0, value_now);
  std::string value = own + suffix;
  c.call({"SET", c.keys[0], value});
  return answer(1, std::move(value));
}

RedisReply SimFencedSet(SimRedis::ScriptCall& c) {
  if (!c.need(2, 2)) return c.missing("fenced set");
  const RedisReply stored = c.call({"GET", c.keys[0]});
  const double seen =
      LuaToNumber(stored.type == RedisReply::Type::kString ? stored.str : "0")
          .value_or(0);
  const std::optional<double> token = LuaToNumber(c.args[0]);
  if (!token.has_value() || *token < seen) return RedisReply::Integer(0);
  c.call({"SET", c.keys[0], c.args[0]});
  c.call({"SET", c.keys[1], c.args[1]});
  return RedisReply::Integer(1);
}

// The election's record (src/algorithm/election.cc, kProclaimSource),
// with the error of a GET of a set key, as Redis gives it.
RedisReply SimProclaim(SimRedis::ScriptCall& c) {
  if (!c.need(2, 4)) return c.missing("proclaim");
  RedisReply lease;
  if (!c.call_at({"GET", c.keys[0]}, 1, &lease)) return lease;
  if (!c.is_string(lease, c.args[0])) return RedisReply::Integer(0);
  RedisReply old;
  if (!c.call_at({"GET", c.keys[1]}, 2, &old)) return old;
  if (old.type == RedisReply::Type::kString) {
    // string.match(old, '^(%d+) (%d+) (%S+) '): its second and third
    // captures, or nothing. Greedy runs of one class each, every one
    // followed by a character outside it, so no backtracking can help.
    const std::string& text = old.str;
    size_t i = 0;
    auto run = [&text, &i](bool (*in)(unsigned char)) {
      const size_t from = i;
      while (i < text.size() && in(static_cast<unsigned char>(text[i]))) ++i;
      return text.substr(from, i - from);
    };
    auto space = [&text, &i] {
      if (i >= text.size() || text[i] != ' ') return false;
      ++i;
      return true;
    };
    auto not_space = [](unsigned char ch) { return !absl::ascii_isspace(ch); };
    const std::string epoch = run(absl::ascii_isdigit);
    const bool e_ok = !epoch.empty() && space();
    const std::string revision = e_ok ? run(absl::ascii_isdigit) : "";
    const bool r_ok = !revision.empty() && space();
    const std::string token = r_ok ? run(not_space) : "";
    if (!token.empty() && space() && token == c.args[0]) {
      const std::optional<double> wanted = LuaToNumber(c.args[2]);
      if (!wanted.has_value()) return c.not_a_number("proclaim");
      if (LuaToNumber(revision).value_or(0) >= *wanted) {
        return RedisReply::Integer(1);
      }
    }
  }
  c.call({"SET", c.keys[1],
          absl::StrCat(c.args[1], " ", c.args[2], " ", c.args[0], " ",
                       c.args[3])});
  c.call({"PUBLISH", c.keys[0], std::string(kTakenMessage)});
  return RedisReply::Integer(1);
}

}  // namespace

RedisReply SimRedis::RunScript(absl::Time mnow, int db, const std::string& sha1,
                               const std::vector<std::string>& keys,
                               const std::vector<std::string>& args) {
  ScriptCall c(*this, mnow, db, sha1, keys, args);
  using Run = RedisReply (*)(ScriptCall&);
  static const auto* const kScripts =
      new std::vector<std::pair<const std::string*, Run>>{
          {&internal::ReleaseScript().sha1, &SimRelease},
          {&internal::ExtendScript().sha1, &SimExtend},
          {&internal::MultiAcquireScript().sha1, &SimMultiAcquire},
          {&internal::WriterAcquireScript().sha1, &SimWriterAcquire},
          {&internal::WriterMarkScript().sha1, &SimWriterMark},
          {&internal::SemaphoreAcquireScript().sha1, &SimSemaphoreAcquire},
          {&redlock::testing::SemaphoreCountersAcquireScript().sha1,
           &SimSemaphoreCountersAcquire},
          {&internal::SemaphoreExtendScript().sha1, &SimSemaphoreExtend},
          {&internal::BatchExtendScript().sha1, &SimBatchExtend},
          {&internal::ReaderAcquireScript().sha1, &SimReaderAcquire},
          {&internal::ReaderExtendScript().sha1, &SimReaderExtend},
          {&internal::ReaderReleaseScript().sha1, &SimReaderRelease},
          {&internal::FencedAcquireScript().sha1, &SimFencedAcquire},
          {&internal::FenceWriteScript().sha1, &SimFenceWrite},
          {&internal::MarkerScript().sha1, &SimMarker},
          {&internal::ProclaimScript().sha1, &SimProclaim},
          {&internal::ReconfigureScript().sha1, &SimReconfigure}};
  for (const auto& [script_sha1, run] : *kScripts) {
    if (sha1 == *script_sha1) return run(c);
  }
  static const std::string* const kFencedSetSha1 =
      new std::string(internal::Sha1Hex(kFencedSetScript));
  if (sha1 == *kFencedSetSha1) return SimFencedSet(c);
  return RedisReply::Error(
      absl::StrCat("ERR SimRedis does not support this script: ", sha1));
}

}  // namespace redlock::sim
