// Copyright 2026 The redlock Authors.
//
// libFuzzer target: arbitrary bytes as a master URI (ParseMasterUri) and,
// split on ',', as the masters of an otherwise default Options
// (ValidateOptions). Aborts when an invariant of fuzz/invariants.h fails.
// Built and run by scripts/fuzz.sh.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::string problem = redlock::fuzz::CheckMasterUri(input);
  if (problem.empty()) problem = redlock::fuzz::CheckValidateOptions(input);
  if (!problem.empty()) {
    std::fprintf(stderr, "invariant violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
