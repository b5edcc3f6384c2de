// Copyright 2026 The redlock Authors.

#include "src/scripts.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/sha1.h"

namespace redlock::internal {
namespace {

constexpr absl::string_view kReleaseSource =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

// PEXPIRE on an existing key only: an expired lock is never resurrected.
constexpr absl::string_view kExtendSource =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('pexpire', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";

constexpr absl::string_view kFencedAcquireSource =
    "local set = redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])\n"
    "return {set and 1 or 0, redis.call('get', KEYS[2]) or '',\n"
    "        redis.call('get', KEYS[3]) or ''}\n";

constexpr absl::string_view kFenceWriteSource =
    "local current = tonumber(redis.call('get', KEYS[1]) or '0') or 0\n"
    "local wanted = tonumber(ARGV[1])\n"
    "if wanted > current then\n"
    "  redis.call('set', KEYS[1], ARGV[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

constexpr absl::string_view kMarkerSource =
    "local current = redis.call('get', KEYS[1])\n"
    "if current then return current end\n"
    "local now = redis.call('time')\n"
    "local value = ARGV[1] .. ':' .. now[1] ..\n"
    "    string.sub('000000' .. now[2], -6)\n"
    "redis.call('set', KEYS[1], value)\n"
    "return value\n";

Script MakeScript(absl::string_view name, absl::string_view source,
                  bool creates_lock = false) {
  return Script{name, source, Sha1Hex(source), creates_lock};
}

}  // namespace

const Script& ReleaseScript() {
  static const Script* const script =
      new Script(MakeScript("release", kReleaseSource));
  return *script;
}

const Script& ExtendScript() {
  static const Script* const script =
      new Script(MakeScript("extend", kExtendSource));
  return *script;
}

const Script& FencedAcquireScript() {
  static const Script* const script =
      new Script(MakeScript("fenced acquire", kFencedAcquireSource,
                            /*creates_lock=*/true));
  return *script;
}

const Script& FenceWriteScript() {
  static const Script* const script =
      new Script(MakeScript("fence write", kFenceWriteSource));
  return *script;
}

const Script& MarkerScript() {
  static const Script* const script =
      new Script(MakeScript("marker", kMarkerSource));
  return *script;
}

const std::vector<const Script*>& AllScripts() {
  static const auto* const scripts = new std::vector<const Script*>{
      &ReleaseScript(), &ExtendScript(), &FencedAcquireScript(),
      &FenceWriteScript(), &MarkerScript()};
  return *scripts;
}

Command FencedAcquireCommand(absl::string_view key,
                             absl::string_view counter_key,
                             absl::string_view marker_key,
                             absl::string_view token, absl::Duration ttl) {
  Command c;
  c.script = &FencedAcquireScript();
  c.num_keys = 3;
  c.args = {std::string(key), std::string(counter_key), std::string(marker_key),
            std::string(token), TtlMillis(ttl)};
  return c;
}

Command FenceWriteCommand(absl::string_view counter_key, uint64_t fence) {
  Command c;
  c.script = &FenceWriteScript();
  c.num_keys = 1;
  c.args = {std::string(counter_key), absl::StrCat(fence)};
  return c;
}

Command MarkerCommand(absl::string_view marker_key, absl::string_view state) {
  Command c;
  c.script = &MarkerScript();
  c.num_keys = 1;
  c.args = {std::string(marker_key), std::string(state)};
  return c;
}

void ParseMarker(absl::string_view value, std::string* state,
                 int64_t* time_us) {
  const size_t colon = value.find(':');
  *state = std::string(value.substr(0, colon));
  *time_us = 0;
  if (colon != absl::string_view::npos) {
    int64_t t = 0;
    if (absl::SimpleAtoi(value.substr(colon + 1), &t)) *time_us = t;
  }
}

absl::Duration SentTtl(absl::Duration ttl) {
  return absl::Milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
}

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(absl::ToInt64Milliseconds(SentTtl(ttl)));
}

Command AcquireCommand(absl::string_view key, absl::string_view token,
                       absl::Duration ttl) {
  Command c;
  c.args = {"SET", std::string(key), std::string(token), "NX",
            "PX",  TtlMillis(ttl)};
  return c;
}

Command ReleaseCommand(absl::string_view key, absl::string_view token) {
  Command c;
  c.script = &ReleaseScript();
  c.num_keys = 1;
  c.args = {std::string(key), std::string(token)};
  return c;
}

Command ExtendCommand(absl::string_view key, absl::string_view token,
                      absl::Duration ttl) {
  Command c;
  c.script = &ExtendScript();
  c.num_keys = 1;
  c.args = {std::string(key), std::string(token), TtlMillis(ttl)};
  return c;
}

std::vector<std::string> CommandArgv(const Command& command, bool eval) {
  if (command.script == nullptr) return command.args;
  std::vector<std::string> argv;
  argv.reserve(command.args.size() + 3);
  if (eval) {
    argv.emplace_back("EVAL");
    argv.emplace_back(command.script->source);
  } else {
    argv.emplace_back("EVALSHA");
    argv.emplace_back(command.script->sha1);
  }
  argv.push_back(absl::StrCat(command.num_keys));
  argv.insert(argv.end(), command.args.begin(), command.args.end());
  return argv;
}

}  // namespace redlock::internal
