// Copyright 2026 The redlock Authors.

#include "src/algorithm/scripts.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts_internal.h"
#include "src/algorithm/sha1.h"

namespace redlock::internal {

// Every script takes one key per resource of a lock (one, or several for a
// multi-resource lock) and treats them as one: a master's answer is for the
// whole set. The scripts themselves, each next to its command builders, are
// in lock_scripts.cc, fence_scripts.cc, semaphore_scripts.cc,
// rwlock_scripts.cc and marker_scripts.cc.

Script MakeScript(absl::string_view name, absl::string_view source,
                  bool creates_lock, bool loaded_on_connect) {
  return Script{name, source, Sha1Hex(source), creates_lock, loaded_on_connect};
}

const std::vector<const Script*>& AllScripts() {
  static const auto* const scripts = new std::vector<const Script*>{
      &ReleaseScript(),          &ExtendScript(),
      &FencedAcquireScript(),    &FenceWriteScript(),
      &MultiAcquireScript(),     &MarkerScript(),
      &SemaphoreAcquireScript(), &SemaphoreExtendScript(),
      &ReaderAcquireScript(),    &ReaderExtendScript(),
      &ReaderReleaseScript(),    &WriterAcquireScript(),
      &WriterMarkScript(),       &BatchExtendScript()};
  // Not ReconfigureScript(): only `redlock reconfigure` runs it, with EVAL.
  return *scripts;
}

absl::Duration SentTtl(absl::Duration ttl) {
  return absl::Milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
}

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(absl::ToInt64Milliseconds(SentTtl(ttl)));
}

Command KeysCommand(const Script& script, absl::Span<const std::string> keys,
                    std::vector<std::string> args) {
  Command c;
  c.script = &script;
  c.num_keys = static_cast<int>(keys.size());
  c.args.reserve(keys.size() + args.size());
  c.args.insert(c.args.end(), keys.begin(), keys.end());
  c.args.insert(c.args.end(), std::make_move_iterator(args.begin()),
                std::make_move_iterator(args.end()));
  return c;
}

void CommandArgvViews(const Command& command, bool eval, CommandViews* out) {
  out->argv.clear();
  if (command.script == nullptr) {
    out->argv.assign(command.args.begin(), command.args.end());
    return;
  }
  out->argv.reserve(command.args.size() + 3);
  if (eval) {
    out->argv.emplace_back("EVAL");
    out->argv.emplace_back(command.script->source);
  } else {
    out->argv.emplace_back("EVALSHA");
    out->argv.emplace_back(command.script->sha1);
  }
  char* end =
      absl::numbers_internal::FastIntToBuffer(command.num_keys, out->num_keys);
  out->argv.emplace_back(out->num_keys, end - out->num_keys);
  out->argv.insert(out->argv.end(), command.args.begin(), command.args.end());
}

void EncodeCall(Command* command) {
  CommandViews views;
  CommandArgvViews(*command, /*eval=*/false, &views);
  command->encoded.clear();
  AppendRespCommand(views.argv, &command->encoded);
}

std::string EvalText(const Command& command) {
  const absl::string_view text = command.encoded;
  const absl::string_view count = text.substr(0, text.find("\r\n") + 2);
  const absl::string_view source = command.script->source;
  std::string out;
  out.reserve(count.size() + 10 + 24 + source.size() +
              (text.size() - command.encoded_args_at));
  absl::StrAppend(&out, count, "$4\r\nEVAL\r\n$", source.size(), "\r\n", source,
                  "\r\n");
  out.append(text.data() + command.encoded_args_at,
             text.size() - command.encoded_args_at);
  return out;
}

std::vector<std::string> CommandArgv(const Command& command, bool eval) {
  CommandViews views;
  CommandArgvViews(command, eval, &views);
  return std::vector<std::string>(views.argv.begin(), views.argv.end());
}

}  // namespace redlock::internal
