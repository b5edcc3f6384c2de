// Copyright 2026 The redlock Authors.

#include "tools/redlock/signals.h"

#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace redlock::cli {
namespace {

constexpr int kWatched[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGTTOU};

}  // namespace

int PollTimeoutMs(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return -1;
  if (timeout <= absl::ZeroDuration()) return 0;
  const int64_t ms =
      absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1)));
  return static_cast<int>(
      std::min<int64_t>(ms, std::numeric_limits<int>::max()));
}

absl::StatusOr<std::unique_ptr<SignalWatch>> SignalWatch::Create() {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : kWatched) sigaddset(&set, signo);
  sigset_t original;
  if (const int err = pthread_sigmask(SIG_BLOCK, &set, &original); err != 0) {
    return absl::InternalError(
        absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  const int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    pthread_sigmask(SIG_SETMASK, &original, nullptr);
    return absl::InternalError(absl::StrCat("signalfd: ", std::strerror(err)));
  }
  return std::unique_ptr<SignalWatch>(new SignalWatch(fd, original));
}

SignalWatch::~SignalWatch() {
  close(fd_);
  pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
}

std::vector<int> SignalWatch::Drain() {
  std::vector<int> signals;
  signalfd_siginfo info;
  while (true) {
    const ssize_t n = read(fd_, &info, sizeof(info));
    if (n != static_cast<ssize_t>(sizeof(info))) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    signals.push_back(static_cast<int>(info.ssi_signo));
  }
  return signals;
}

EventNotice::EventNotice() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

EventNotice::~EventNotice() {
  if (fd_ >= 0) close(fd_);
}

void EventNotice::Notify() {
  const uint64_t one = 1;
  ssize_t ignored = write(fd_, &one, sizeof(one));
  (void)ignored;
}

void EventNotice::Clear() {
  uint64_t value = 0;
  ssize_t ignored = read(fd_, &value, sizeof(value));
  (void)ignored;
}

std::string SignalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", signo);
}

bool SignalWatch::IsTermination(int signo) {
  return signo == SIGINT || signo == SIGTERM || signo == SIGHUP ||
         signo == SIGQUIT;
}

}  // namespace redlock::cli
