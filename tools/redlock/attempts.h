// Copyright 2026 The redlock Authors.
//
// The tool's wait for a lock: ONE blocking library call (Redlock::Acquire()
// or WithLock()) with AcquireOptions::wait set, which the library retries
// with its jittered delay; a terminating signal ends it at once through
// AcquireOptions::cancel.
//
// The signals are blocked and read through the SignalWatch's signalfd (no
// handlers), so while the calling thread is blocked in the library, a
// WaitInterrupter watches that fd on a thread of its own:
//
//   WaitInterrupter interrupter(config, signals, progress);
//   AcquireOptions acquire;
//   acquire.wait = config.wait;
//   acquire.cancel = interrupter.cancel();
//   absl::StatusOr<Lock> lock = client.Acquire(config.resource, acquire);
//   const int signo = interrupter.Finish();  // Before reading signals again.
//
// A signal that cancels the call is consumed by the watcher and returned by
// Finish(); any signal after Finish() stays in the signalfd for the caller.

#ifndef REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_
#define REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_

#include <atomic>
#include <mutex>
#include <thread>

#include "absl/time/time.h"
#include "redlock/cancel.h"
#include "redlock/lock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/progress.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

// How long a wait lasts before the progress display starts: a lock that is
// free is taken well within it, so nothing flashes on the terminal.
inline constexpr absl::Duration kProgressAfter = absl::Milliseconds(250);

class WaitInterrupter {
 public:
  // Starts watching `signals` at once. With config.wait > 0, also starts
  // `progress` once the wait has lasted kProgressAfter (it draws only on a
  // terminal). `signals` and `progress` must outlive the interrupter.
  WaitInterrupter(const Config& config, SignalWatch& signals,
                  ProgressDisplay& progress);
  // Finish().
  ~WaitInterrupter();

  WaitInterrupter(const WaitInterrupter&) = delete;
  WaitInterrupter& operator=(const WaitInterrupter&) = delete;

  // What to pass in AcquireOptions::cancel: cancelled by the first
  // terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT).
  const Cancellation& cancel() const { return cancel_; }

  // Stops watching and stops the progress display (erasing its line).
  // Returns the terminating signal that cancelled the wait, or 0. Call it
  // before anything else reads the signalfd or writes to stderr: once it
  // returns, the watcher reads no signal and starts nothing. It does not
  // wait for the watcher thread to exit (the destructor joins it), so that
  // `run` starts its command without a thread switch in between.
  // Idempotent: later calls return the same.
  int Finish();

 private:
  void Watch(absl::Duration progress_after);

  SignalWatch& signals_;
  ProgressDisplay& progress_;
  Cancellation cancel_;
  int stop_fd_ = -1;  // eventfd: readable once Finish() wants the thread out.
  // Held by the watcher while it reads signals or starts the display, and by
  // Finish() to set finished_: after Finish() the watcher does neither.
  std::mutex mu_;
  bool finished_ = false;  // Guarded by mu_.
  bool told_ = false;      // Finish() wrote stop_fd_. Calling thread only.
  std::atomic<int> signal_{0};
  std::thread thread_;
};

// With --verbose and a --wait, says before the call that it may wait and
// for how long (the library does not report its attempts one by one).
void PrintWaiting(const Config& config);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_
