// Copyright 2026 The redlock Authors.

#include "tools/redlock/args.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "redlock/options.h"

namespace redlock::cli {
namespace {

// The option as the user should see it in messages: "--request-timeout".
std::string Spelling(absl::string_view name) {
  return absl::StrCat("--", absl::StrReplaceAll(name, {{"_", "-"}}));
}

absl::Status UnknownOption(absl::string_view arg) {
  return absl::InvalidArgumentError(
      absl::StrCat("unknown option ", arg, " (see redlock --help)"));
}

// Sets flag `name` from `value`; the error names the option and the value.
absl::Status SetFlag(absl::string_view name, absl::string_view value) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return UnknownOption(Spelling(name));
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    // Abseil's own message repeats the value; say what would be right.
    const absl::string_view expected =
        flag->IsOfType<absl::Duration>() ? "a duration like 250ms, 30s or 10m"
        : flag->IsOfType<int>()          ? "an integer"
        : flag->IsOfType<bool>()         ? "true or false"
                                         : "a value";
    return absl::InvalidArgumentError(
        absl::StrCat(Spelling(name), ": bad value \"", absl::CHexEscape(value),
                     "\"; expected ", expected));
  }
  return absl::OkStatus();
}

bool IsBoolFlag(absl::string_view name) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && flag->IsOfType<bool>();
}

}  // namespace

SplitArgs SplitAtSeparator(int argc, const char* const* argv) {
  SplitArgs split;
  int i = 1;
  for (; i < argc; ++i) {
    if (absl::string_view(argv[i]) == "--") {
      split.has_separator = true;
      ++i;
      break;
    }
    split.options.emplace_back(argv[i]);
  }
  for (; i < argc; ++i) split.command.emplace_back(argv[i]);
  return split;
}

absl::StatusOr<ParsedOptions> ParseOptions(
    const std::vector<std::string>& args,
    const absl::flat_hash_set<std::string>& known) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help" || arg == "-help" ||
        arg == "--helpfull") {
      parsed.help = true;
      continue;
    }
    if (arg == "-q" || arg == "-v") {
      const std::string name = arg == "-q" ? "quiet" : "verbose";
      if (absl::Status s = SetFlag(name, "true"); !s.ok()) return s;
      parsed.flags_set.push_back(name);
      continue;
    }
    // Like Abseil: "-name" and "--name" are the same option.
    absl::string_view body = arg;
    if (!absl::ConsumePrefix(&body, "--")) body.remove_prefix(1);
    absl::string_view name_part = body;
    std::optional<absl::string_view> value;
    if (const size_t eq = body.find('='); eq != absl::string_view::npos) {
      name_part = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    std::string name = absl::StrReplaceAll(name_part, {{"-", "_"}});
    if (name.empty()) return UnknownOption(arg);

    if (!known.contains(name)) {
      // --nofencing / --no-fencing for a known boolean option.
      absl::string_view negated = name;
      if (absl::ConsumePrefix(&negated, "no_") ||
          absl::ConsumePrefix(&negated, "no")) {
        const std::string target(negated);
        if (known.contains(target) && IsBoolFlag(target) &&
            !value.has_value()) {
          if (absl::Status s = SetFlag(target, "false"); !s.ok()) return s;
          parsed.flags_set.push_back(target);
          continue;
        }
      }
      return UnknownOption(
          value.has_value() ? std::string(arg.substr(0, arg.find('='))) : arg);
    }
    if (!value.has_value()) {
      if (IsBoolFlag(name)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("option ", Spelling(name), " needs a value"));
      }
    }
    if (absl::Status s = SetFlag(name, *value); !s.ok()) return s;
    parsed.flags_set.push_back(name);
  }
  return parsed;
}

std::vector<std::string> SplitMasterList(absl::string_view list) {
  std::vector<std::string> uris;
  for (absl::string_view uri : absl::StrSplit(list, ',')) {
    uri = absl::StripAsciiWhitespace(uri);
    if (!uri.empty()) uris.emplace_back(uri);
  }
  return uris;
}

absl::StatusOr<std::vector<std::string>> ApplyPassword(
    const std::vector<std::string>& uris, absl::string_view password) {
  std::vector<std::string> result;
  for (const std::string& uri : uris) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return address.status();
    if (password.empty() || address->has_password) {
      result.push_back(uri);
      continue;
    }
    address->password = std::string(password);
    address->has_password = true;
    result.push_back(address->Uri());
  }
  return result;
}

absl::StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--password-file ", path, ": cannot read it: ", std::strerror(errno)));
  }
  std::stringstream contents;
  contents << file.rdbuf();
  std::string password = contents.str();
  while (!password.empty() &&
         (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--password-file ", path, ": the file is empty"));
  }
  return password;
}

}  // namespace redlock::cli
