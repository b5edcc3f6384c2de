// Copyright 2026 The redlock Authors.

#include "tools/redlock/cli.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace redlock::cli {

int QuorumSize(Quorum quorum, int masters) {
  return quorum == Quorum::kUnanimous ? masters : masters / 2 + 1;
}

void PrintError(absl::string_view message) {
  std::string line = absl::StrCat("redlock: ", message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  line.push_back('\n');
  // One write(2), so that lines from several processes sharing a terminal or
  // a log never interleave mid-line.
  const char* data = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, data, left);
    if (n <= 0) return;
    data += n;
    left -= static_cast<size_t>(n);
  }
}

void PrintInfo(Verbosity verbosity, absl::string_view message) {
  if (verbosity != Verbosity::kQuiet) PrintError(message);
}

void PrintDebug(Verbosity verbosity, absl::string_view message) {
  if (verbosity == Verbosity::kVerbose) PrintError(message);
}

std::string Pretty(absl::Duration d, absl::Duration precision) {
  if (d == absl::InfiniteDuration()) return "forever";
  d = absl::Trunc(d, precision);
  return d == absl::ZeroDuration() ? "0s" : absl::FormatDuration(d);
}

std::string TokenPrefix(absl::string_view token) {
  return std::string(token.substr(0, 8));
}

}  // namespace redlock::cli
