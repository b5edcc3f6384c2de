// Copyright 2026 The redlock Authors.
//
// libFuzzer target: arbitrary bytes as what a master sends back. They go
// through hiredis's reader (fed in two halves, so replies that arrive in
// parts are covered, and bounded as the library bounds its connections:
// BoundReplyReader), every reply through FromHiredis and every vote mapper
// of src/algorithm/vote.h. Aborts when an invariant
// of fuzz/invariants.h fails. Built and run by scripts/fuzz.sh.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view stream(reinterpret_cast<const char*>(data), size);
  const std::string problem = redlock::fuzz::CheckRespStream(stream, size / 2);
  if (!problem.empty()) {
    std::fprintf(stderr, "invariant violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
