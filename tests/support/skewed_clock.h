// Copyright 2026 The redlock Authors.
//
// SkewedClock: steers the wall clock of redis-server processes started with
// the clock shim (clock_shim.c) — the master whose clock runs fast or jumps,
// which Redlock's safety argument assumes away.
//
//   auto clock = SkewedClock::Create(dir + "/clock");
//   RedisServer::Config config;
//   config.env = (*clock)->ServerEnv();   // LD_PRELOAD + control page
//   auto server = RedisServer::Start(config);
//   (*clock)->SetRate(2.0);               // keys now expire twice as fast
//   (*clock)->Jump(absl::Seconds(5));     // and 5s sooner
//
// A change takes effect at once, in every server started with ServerEnv()
// (also after a restart) and without their cooperation: the shim reads the
// shared page on every clock call. The server's monotonic clock is untouched.
//
// Not thread-safe: steer one SkewedClock from one thread.

#ifndef REDLOCK_TESTS_SUPPORT_SKEWED_CLOCK_H_
#define REDLOCK_TESTS_SUPPORT_SKEWED_CLOCK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

struct redlock_clock_page;

namespace redlock::testing {

class SkewedClock {
 public:
  // Creates (or truncates) the control page at `path`, set to the true time
  // at the true rate. Errors: kFailedPrecondition if the shim library is not
  // where the build put it; kInternal if the file cannot be created or mapped.
  static absl::StatusOr<std::unique_ptr<SkewedClock>> Create(std::string path);

  // Unmaps the page and removes the file. Servers still running keep their
  // mapping (and the last setting) until they exit.
  ~SkewedClock();

  SkewedClock(const SkewedClock&) = delete;
  SkewedClock& operator=(const SkewedClock&) = delete;

  // The environment entries for RedisServer::Config::env:
  // LD_PRELOAD=<the shim> and REDLOCK_CLOCK_CONTROL=<path>.
  std::vector<std::string> ServerEnv() const;

  // From now on the servers' wall clock advances `rate` seconds per true
  // second (1: correct, 2: twice as fast), continuing from where it is.
  // kInvalidArgument unless 0 < rate <= 1000.
  absl::Status SetRate(double rate);
  // Moves the servers' wall clock by `by` at once (forward if positive).
  void Jump(absl::Duration by);

  // The servers' wall clock now, and how far it is ahead of the true one.
  absl::Time Now() const;
  absl::Duration Offset() const;
  double rate() const;

  // Where the build put libredlock_clock_shim.so.
  static std::string ShimPath();

 private:
  SkewedClock(std::string path, redlock_clock_page* page)
      : path_(std::move(path)), page_(page) {}
  // Re-anchors at the current fake time and applies the change.
  void Update(double rate, int64_t jump_ns);

  const std::string path_;
  redlock_clock_page* const page_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_SKEWED_CLOCK_H_
