// Copyright 2026 The redlock Authors.

#include "tools/redlock/attempts.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace redlock::cli {

WaitInterrupter::WaitInterrupter(const Config& config, SignalWatch& signals,
                                 ProgressDisplay& progress)
    : signals_(signals),
      progress_(progress),
      stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  // Without an eventfd the thread could not be told to stop: the wait then
  // cannot be interrupted, but it still ends by itself (--wait is bounded or
  // the lock comes free).
  if (stop_fd_ < 0) return;
  thread_ = std::thread(&WaitInterrupter::Watch, this,
                        config.wait > absl::ZeroDuration()
                            ? kProgressAfter
                            : absl::InfiniteDuration());
}

WaitInterrupter::~WaitInterrupter() {
  Finish();
  if (thread_.joinable()) thread_.join();
  if (stop_fd_ >= 0) close(stop_fd_);
}

int WaitInterrupter::Finish() {
  {
    std::lock_guard<std::mutex> guard(mu_);
    finished_ = true;
  }
  if (thread_.joinable() && !told_) {
    told_ = true;
    const uint64_t one = 1;
    ssize_t ignored = write(stop_fd_, &one, sizeof(one));
    (void)ignored;
  }
  // After finished_ is set: the watcher may have started it just before,
  // and starts nothing after.
  progress_.Stop();
  return signal_.load();
}

void WaitInterrupter::Watch(absl::Duration progress_after) {
  // glibc makes a thread's malloc arena (an mmap and a munmap) at its first
  // malloc() or free(). This thread's would be made as it exits, when
  // std::thread frees its state: the moment the lock was granted and the
  // command is being started. Made here, while the wait goes on.
  void* volatile first = std::malloc(1);
  std::free(first);
  // Monotonic: a wall-clock step must not start the display early or late.
  const MonotonicTime start = MonotonicClock::now();
  bool progress_pending = progress_after != absl::InfiniteDuration();
  while (true) {
    const absl::Duration until_progress =
        progress_pending
            ? progress_after - absl::FromChrono(MonotonicClock::now() - start)
            : absl::InfiniteDuration();
    if (progress_pending && until_progress <= absl::ZeroDuration()) {
      progress_pending = false;
      std::lock_guard<std::mutex> guard(mu_);
      if (finished_) return;
      progress_.Start();
      continue;
    }
    pollfd fds[2] = {{signals_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, PollTimeoutMs(until_progress));
    if (ready < 0 && errno != EINTR) {
      // Cannot happen with valid descriptors; do not spin.
      absl::SleepFor(absl::Milliseconds(10));
    }
    if (fds[1].revents & POLLIN) return;
    if (fds[0].revents & POLLIN) {
      std::lock_guard<std::mutex> guard(mu_);
      // The signals are the caller's now.
      if (finished_) return;
      // Other signals (SIGCHLD, SIGTTOU) mean nothing before a child exists.
      for (int signo : signals_.Drain()) {
        if (!SignalWatch::IsTermination(signo)) continue;
        signal_.store(signo);
        // The call stops retrying, releases what its attempt in flight won
        // and returns kCancelled.
        cancel_.Cancel();
        return;
      }
    }
  }
}

void PrintWaiting(const Config& config) {
  if (config.wait <= absl::ZeroDuration()) return;
  PrintDebug(config.verbosity,
             absl::StrCat("waiting for ", config.resource, " (",
                          config.wait == absl::InfiniteDuration()
                              ? "no time limit"
                              : absl::StrCat("up to ", Pretty(config.wait)),
                          ") if it is held elsewhere"));
}

}  // namespace redlock::cli
