// Copyright 2026 The redlock Authors.
//
// ProgressDisplay: while the tool waits for a lock on an interactive
// terminal, one line on stderr, redrawn a few times per second with '\r':
//
//   redlock: waiting 3.2s/1m for recalc-ratings: held by 3f2a9c1e on 5/5
//   masters, expires in ~6.8s
//
// It looks at the masters itself (GET and PTTL of the lock key), on its own
// thread, so the acquisition never waits for it. Nothing is drawn when stderr
// is not a terminal.

#ifndef REDLOCK_TOOLS_REDLOCK_PROGRESS_H_
#define REDLOCK_TOOLS_REDLOCK_PROGRESS_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "redlock/lock.h"
#include "src/admin/probe.h"
#include "tools/redlock/cli.h"

namespace redlock::cli {

class ProgressDisplay {
 public:
  // `config` must outlive the display.
  ProgressDisplay(const Config& config, const admin::Timeouts& timeouts,
                  MonotonicTime started);
  // Stop().
  ~ProgressDisplay();

  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // Starts drawing if stderr is a terminal and the tool is not quiet; does
  // nothing if already started.
  void Start();
  // Stops and erases the line. Idempotent.
  void Stop();

 private:
  void Loop();
  std::string Line(const std::vector<admin::MasterStatus>& statuses) const;

  const Config& config_;
  const admin::Timeouts timeouts_;
  const admin::StatusKeys keys_;
  const MonotonicTime started_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // Guarded by mu_.
  std::thread thread_;
};

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_PROGRESS_H_
