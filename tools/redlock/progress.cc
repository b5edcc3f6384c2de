// Copyright 2026 The redlock Authors.

#include "tools/redlock/progress.h"

#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "redlock/keys.h"

namespace redlock::cli {

using admin::HolderSummary;
using admin::MasterStatus;
using admin::ProbeMasters;
using admin::StatusKeys;
using admin::Summarize;
using admin::Timeouts;
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(250);
constexpr absl::string_view kEraseLine = "\r\033[K";

void WriteAll(absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// The progress display reads the lock key alone.
StatusKeys LockKeyOnly(std::string lock) {
  StatusKeys keys;
  keys.lock = std::move(lock);
  return keys;
}

}  // namespace

ProgressDisplay::ProgressDisplay(const Config& config, const Timeouts& timeouts,
                                 MonotonicTime started)
    : config_(config),
      timeouts_(timeouts),
      keys_(LockKeyOnly(LockKey(config.options, config.resource))),
      started_(started) {}

ProgressDisplay::~ProgressDisplay() { Stop(); }

void ProgressDisplay::Start() {
  if (thread_.joinable() || config_.verbosity == Verbosity::kQuiet ||
      !isatty(STDERR_FILENO)) {
    return;
  }
  thread_ = std::thread(&ProgressDisplay::Loop, this);
}

void ProgressDisplay::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  WriteAll(kEraseLine);
}

void ProgressDisplay::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    // Bounded by the timeouts; a dead master costs one connect timeout.
    const std::vector<MasterStatus> statuses =
        ProbeMasters(config_.masters, timeouts_, keys_, /*full=*/false);
    const std::string line = Line(statuses);
    lock.lock();
    if (stop_) break;
    WriteAll(absl::StrCat(kEraseLine, line));
    cv_.wait_for(lock, kRedrawEvery, [this] { return stop_; });
  }
}

std::string ProgressDisplay::Line(
    const std::vector<MasterStatus>& statuses) const {
  const absl::Duration elapsed =
      absl::FromChrono(MonotonicClock::now() - started_);
  std::string line = absl::StrCat("redlock: waiting ",
                                  Pretty(elapsed, absl::Milliseconds(100)));
  if (config_.wait != absl::InfiniteDuration()) {
    absl::StrAppend(&line, "/", Pretty(config_.wait));
  }
  absl::StrAppend(&line, " for ", config_.resource);
  const HolderSummary summary = Summarize(statuses, config_.quorum);
  const int n = static_cast<int>(statuses.size());
  if (summary.holders == 0) {
    absl::StrAppend(&line, ": not held, retrying");
  } else if (summary.holders >= config_.quorum) {
    absl::StrAppend(&line, ": held by ", TokenPrefix(summary.token), " on ",
                    summary.holders, "/", n, " masters, expires in ~",
                    Pretty(summary.expires_in, absl::Milliseconds(100)));
  } else {
    absl::StrAppend(&line, ": ", TokenPrefix(summary.token), " on ",
                    summary.holders, "/", n, " masters (no quorum)");
  }
  if (summary.reachable < n) {
    absl::StrAppend(&line, ", ", n - summary.reachable, " unreachable");
  }
  return line;
}

}  // namespace redlock::cli
