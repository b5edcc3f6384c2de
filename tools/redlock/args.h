// Copyright 2026 The redlock Authors.
//
// Command-line pieces of the `redlock` tool that need no server: splitting
// argv at "--", reading options into the tool's Abseil flags, and turning
// --masters / REDLOCK_MASTERS / REDLOCK_PASSWORD / --password-file into
// master URIs.
//
// absl::ParseCommandLine() is not used: it exits with status 1 and several
// lines of output on an unknown flag or a bad value, and its --help lists
// every Abseil flag in the binary. ParseOptions() reads the same syntax
// (--name=value, --name value, --bool, --nobool) and hands each value to the
// flag through Abseil's reflection API, so values are parsed exactly as
// absl::ParseCommandLine() would parse them.

#ifndef REDLOCK_TOOLS_REDLOCK_ARGS_H_
#define REDLOCK_TOOLS_REDLOCK_ARGS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace redlock::cli {

// argv without argv[0], split at the first "--".
struct SplitArgs {
  std::vector<std::string> options;  // Before "--": options and positionals.
  bool has_separator = false;        // Was there a "--"?
  std::vector<std::string> command;  // After "--", untouched.
};

SplitArgs SplitAtSeparator(int argc, const char* const* argv);

struct ParsedOptions {
  std::vector<std::string> positional;  // In order.
  std::vector<std::string> flags_set;   // Flag names (with '_'), in order.
  bool help = false;                    // -h, --help or --helpfull.
};

// Reads `args` (SplitArgs::options). Each option names one of `known` (flag
// names spelled with '_'; "--request-timeout" and "--request_timeout" both
// work) and its value is parsed by that Abseil flag. Short options: -h
// (help), -q (quiet), -v (verbose). kInvalidArgument, with a one-line
// message, for an unknown option, a missing or bad value.
absl::StatusOr<ParsedOptions> ParseOptions(
    const std::vector<std::string>& args,
    const absl::flat_hash_set<std::string>& known);

// "redis://a:1, redis://b:2" -> {"redis://a:1", "redis://b:2"}; blanks
// trimmed, empty entries dropped.
std::vector<std::string> SplitMasterList(absl::string_view list);

// Gives every URI that has no password `password` (percent-encoded into the
// URI). URIs that carry one keep it. Empty `password`: unchanged.
// kInvalidArgument names a malformed URI (without its password).
absl::StatusOr<std::vector<std::string>> ApplyPassword(
    const std::vector<std::string>& uris, absl::string_view password);

// The password in `path`: the file's contents without trailing newlines.
// kInvalidArgument if it cannot be read or is empty.
absl::StatusOr<std::string> ReadPasswordFile(const std::string& path);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_ARGS_H_
