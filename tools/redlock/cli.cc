// Copyright 2026 The redlock Authors.

#include "tools/redlock/cli.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace redlock::cli {

admin::Timeouts TimeoutsOf(const Config& config) {
  return admin::Timeouts{config.options.connect_timeout,
                         config.options.request_timeout, config.options.tls};
}

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

namespace {

constexpr int kMilestones = static_cast<int>(Milestone::kCount);
constexpr const char* kMilestoneNames[kMilestones] = {
    "main",   "configured", "client",   "acquired", "spawning",
    "forked", "reaped",     "released", "exit"};
int64_t milestone_ns[kMilestones] = {};

}  // namespace

void Mark(Milestone milestone) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  milestone_ns[static_cast<int>(milestone)] =
      static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void WriteTimings() {
  const char* path = std::getenv("REDLOCK_TIMING_FILE");
  if (path == nullptr || *path == '\0') return;
  std::string line = absl::StrCat("timing ", getpid());
  for (int i = 0; i < kMilestones; ++i) {
    if (milestone_ns[i] != 0) {
      absl::StrAppend(&line, " ", kMilestoneNames[i], "=", milestone_ns[i]);
    }
  }
  line.push_back('\n');
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  close(fd);
}

}  // namespace redlock::cli
