// Copyright 2026 The redlock Authors.

#include "src/scripts.h"

#include <algorithm>
#include <cstdint>
#include <utility>

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

Script MakeScript(absl::string_view name, absl::string_view source) {
  return Script{name, source, Sha1Hex(source)};
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

const std::vector<const Script*>& AllScripts() {
  static const auto* const scripts =
      new std::vector<const Script*>{&ReleaseScript(), &ExtendScript()};
  return *scripts;
}

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
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
