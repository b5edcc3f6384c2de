// Copyright 2026 The redlock Authors.
//
// What every part of the end-to-end harness uses: the clock, progress
// logging, CPU and memory readings, the key prefix of every key it writes,
// finding the executables it starts.

#ifndef REDLOCK_BENCH_E2E_COMMON_H_
#define REDLOCK_BENCH_E2E_COMMON_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace redlock::bench {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

inline constexpr absl::string_view kKeyPrefix = "redlock-bench:";

inline SteadyTime Now() { return SteadyClock::now(); }
inline double MicrosBetween(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
inline double SecondsBetween(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double>(b - a).count();
}

// One progress line on stderr.
void Log(const std::string& line);

// The directory of this process's own executable (/proc/self/exe), where
// the helper binaries built with the harness are; "." if it cannot be read.
std::string SelfDirectory();

// `name` itself if it has a '/' (and is executable), else the first
// executable of that name on PATH; "" if none.
std::string FindOnPath(const std::string& name);

// CPU seconds of this thread (RUSAGE_THREAD) or process (RUSAGE_SELF).
struct Cpu {
  double user = 0;
  double sys = 0;
  double switches = 0;  // Context switches, voluntary and involuntary.
  double total() const { return user + sys; }
  Cpu operator-(const Cpu& o) const {
    return {user - o.user, sys - o.sys, switches - o.switches};
  }
  Cpu& operator+=(const Cpu& o) {
    user += o.user;
    sys += o.sys;
    switches += o.switches;
    return *this;
  }
};

Cpu CpuNow(int who);

// A field of /proc/self/status in kB (VmRSS, VmHWM), or -1.
int64_t ProcStatusKb(absl::string_view field);

// Resident memory at the points of the run the report names, in kB.
struct Memory {
  int64_t start_kb = -1;                 // Before the masters.
  int64_t with_floor_kb = -1;            // Floor connected and warm.
  int64_t with_latency_clients_kb = -1;  // Latency clients connected.
  int64_t end_kb = -1;                   // After the last phase.
  int64_t peak_kb = -1;                  // VmHWM after the last phase.
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_COMMON_H_
