// Copyright 2026 The redlock Authors.
//
// SignalWatch: the `redlock` tool receives the signals it forwards or reacts
// to through a signalfd instead of handlers, so they arrive as ordinary
// readable events next to the child's exit and the lost-lock notice.
//
// Create it in main() before any thread starts: the signals are blocked in
// the calling thread and every thread started later inherits the mask, so
// none of them is delivered to the library's loop thread. A child must get
// original_mask() back before exec.
//
// EventNotice is the same kind of event from another thread of the tool: the
// library's loop thread says "the lock (or the leadership) was lost" or
// "a new leader" through one, without blocking, and the thread that polls
// the signalfd sees it next to the signals.

#ifndef REDLOCK_TOOLS_REDLOCK_SIGNALS_H_
#define REDLOCK_TOOLS_REDLOCK_SIGNALS_H_

#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace redlock::cli {

class SignalWatch {
 public:
  // Blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT (forwarded to the child or
  // ending a wait), SIGCHLD (the child changed state) and SIGTTOU (so the
  // tool may hand the terminal to the child and take it back).
  static absl::StatusOr<std::unique_ptr<SignalWatch>> Create();
  // Closes the signalfd and restores the original mask.
  ~SignalWatch();

  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Readable when a signal is pending. Close-on-exec.
  int fd() const { return fd_; }
  const sigset_t& original_mask() const { return original_mask_; }

  // Every signal delivered since the last call, without waiting.
  std::vector<int> Drain();

  // SIGINT, SIGTERM, SIGHUP or SIGQUIT.
  static bool IsTermination(int signo);

 private:
  SignalWatch(int fd, const sigset_t& original_mask)
      : fd_(fd), original_mask_(original_mask) {}

  int fd_;
  sigset_t original_mask_;
};

// An eventfd: Notify() from any thread (it never blocks), fd() readable
// until Clear(). Several Notify() calls before a Clear() read as one.
// Share it (std::shared_ptr) with a callback that may outlive its reader.
class EventNotice {
 public:
  EventNotice();
  ~EventNotice();
  EventNotice(const EventNotice&) = delete;
  EventNotice& operator=(const EventNotice&) = delete;

  // Negative if eventfd(2) failed: check before use. Close-on-exec.
  int fd() const { return fd_; }
  void Notify();
  void Clear();

 private:
  int fd_;
};

// Converts a timeout to poll(2) milliseconds: -1 for infinite, rounded up.
int PollTimeoutMs(absl::Duration timeout);

// "SIGTERM", or "signal 99" for a number without a name.
std::string SignalName(int signo);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_SIGNALS_H_
