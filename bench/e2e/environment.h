// Copyright 2026 The redlock Authors.
//
// The environment probe: versions of the servers and libraries, compiler,
// kernel, CPU, and where the masters come from.

#ifndef REDLOCK_BENCH_E2E_ENVIRONMENT_H_
#define REDLOCK_BENCH_E2E_ENVIRONMENT_H_

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/e2e/masters.h"

namespace redlock::bench {

struct Environment {
  std::string date_utc;
  std::string redis_version;
  std::string redis_benchmark_version;
  std::string hiredis_version =
      absl::StrCat(HIREDIS_MAJOR, ".", HIREDIS_MINOR, ".", HIREDIS_PATCH);
  std::string libevent_version = event_get_version();
  std::string abseil_version;
  std::string compiler;
  std::string kernel;
  std::string cpu_model;
  int cores = 0;
  bool optimized = false;
  bool own_masters = true;
  int masters = 0;
};

// `own`: the harness started the masters. `redis_benchmark`: the binary
// whose --version is reported.
Environment CollectEnvironment(const std::vector<Master>& masters, bool own,
                               const std::string& redis_benchmark);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_ENVIRONMENT_H_
