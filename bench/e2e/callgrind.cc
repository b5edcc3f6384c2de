// Copyright 2026 The redlock Authors.

#include "bench/e2e/callgrind.h"

#include <cstdio>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/blocking_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/floor_runner.h"
#include "bench/e2e/raw_fanout_runner.h"
#include "bench/e2e/runner.h"

namespace redlock::bench {

int RunCallgrind(const std::vector<Master>& masters, const std::string& which,
                 int n, int cycles, absl::Duration ttl) {
  absl::StatusOr<std::unique_ptr<Runner>> runner;
  const std::string resource = absl::StrCat("callgrind-", which, "-", n);
  if (which == "floor") {
    runner = FloorRunner::Create(masters[0].address, ttl);
  } else if (which == "raw") {
    runner = RawFanoutRunner::Create(masters, n, ttl);
  } else if (which == "async") {
    runner = AsyncRunner::Create(ClientOptions(UrisOf(masters, n), true),
                                 resource, ttl);
  } else if (which == "blocking") {
    runner = BlockingRunner::Create(ClientOptions(UrisOf(masters, n), true),
                                    resource, ttl);
  } else if (which == "handover") {
    runner = BlockingRunner::Create(ClientOptions(UrisOf(masters, n), true),
                                    resource, ttl, /*callers_turn=*/false);
  } else {
    Log("--callgrind must be floor, raw, async, blocking or handover");
    return 2;
  }
  if (!runner.ok()) {
    Log(runner.status().ToString());
    return 1;
  }
  if (absl::Status s = WarmUp(**runner, 20, absl::Seconds(60)); !s.ok()) {
    Log(s.ToString());
    return 1;
  }
  int errors = 0;
  for (int i = 0; i < cycles; ++i) {
    CycleSample sample;
    if (!(*runner)->Cycle(&sample).ok()) ++errors;
  }
  std::printf("callgrind config=%s masters=%d cycles=%d errors=%d\n",
              which.c_str(), which == "floor" ? 1 : n, cycles, errors);
  return errors == 0 ? 0 : 1;
}

}  // namespace redlock::bench
