// Copyright 2026 The redlock Authors.
//
// What the handoff phase (phases/handoff.cc) and each of its contender
// processes (handoff_contender_main.cc) say to each other, one line at a
// time, over the contender's stdin and stdout (one socket):
//
//   phase → contender  "masters URI,URI,...\n"   (not on the command line,
//                                                 where a password would show)
//   contender → phase  "ready\n"                 its client is connected to
//                                                 every master and has taken
//                                                 and released a lock of its
//                                                 own
//   phase → contender  "go START_NS END_NS\n"    loop from START; start no
//                                                 acquisition after END
//   contender → phase  the report (EncodeReport), ending with "done\n"
//   phase → contender  end of file               exit
//
// Times are steady-clock (CLOCK_MONOTONIC) nanoseconds, which every process
// on one machine reads alike.

#ifndef REDLOCK_BENCH_E2E_HANDOFF_PROTOCOL_H_
#define REDLOCK_BENCH_E2E_HANDOFF_PROTOCOL_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

inline constexpr absl::string_view kHandoffReady = "ready";
inline constexpr absl::string_view kHandoffDone = "done";

inline int64_t SteadyNanos(SteadyTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}
inline SteadyTime FromSteadyNanos(int64_t ns) {
  return SteadyTime(std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::nanoseconds(ns)));
}

// One critical section, in steady-clock nanoseconds.
struct HandoffSection {
  int64_t acquire_called_ns = 0;  // Acquire() called.
  int64_t acquired_ns = 0;        // Acquire() returned OK.
  int64_t release_start_ns = 0;   // Release() called.
  int64_t release_end_ns = 0;     // Release() returned.
  // The acquisition's attempts (AcquiredEvent::attempts): 1 when the first
  // attempt won, 2 or more when the contender had to wait for the lock.
  int attempts = 0;
  // A semaphore's permit: the first slot it holds (Lock::slots()); -1 for a
  // lock or a reader.
  int slot = -1;
  // A reader of a read-write lock (Lock::shared()).
  bool shared = false;
  // When the winning attempt was sent: the observer's OnAttempt time of the
  // winning attempt minus its AttemptEvent::elapsed. 0 if not seen.
  int64_t won_sent_ns = 0;
  // A writer: when its second attempt was decided and lost (OnAttempt with
  // attempt 2), so from when its waiting mark was on the masters that
  // refused it (a writer's retries run the writer script, which sets it).
  // 0 if it had no refused second attempt.
  int64_t marked_ns = 0;
};

// An acquisition that returned without a lock.
struct FailedWait {
  int64_t called_ns = 0;
  int64_t returned_ns = 0;
};

// What one contender did between START and the end of its loop.
struct ContenderReport {
  std::vector<HandoffSection> sections;
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;  // One line.
  Cpu cpu;                 // The whole process (RUSAGE_SELF), over the loop.
  // Commands its client sent over the loop, by its own count, summed over
  // the masters: MasterHealth::requests on the lock connections,
  // subscriber_requests on the subscriber connections, and the messages
  // those heard (subscriber_messages).
  int64_t requests = 0;
  int64_t subscriber_requests = 0;
  int64_t subscriber_messages = 0;
  // Time spent inside Acquire(), failed calls included.
  int64_t waiting_ns = 0;
  // Every acquisition that failed, with its times.
  std::vector<FailedWait> failed_waits;
};

// The report as lines, ending with "done\n".
std::string EncodeReport(const ContenderReport& report);

// The inverse of EncodeReport(), given the lines before "done".
// kInvalidArgument on a line it does not know.
absl::StatusOr<ContenderReport> ParseReport(absl::string_view text);

// "go START_NS END_NS".
std::string EncodeGo(int64_t start_ns, int64_t end_ns);
absl::Status ParseGo(absl::string_view line, int64_t* start_ns,
                     int64_t* end_ns);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_HANDOFF_PROTOCOL_H_
