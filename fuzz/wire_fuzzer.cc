// Copyright 2026 The redlock Authors.
//
// libFuzzer target: arbitrary bytes as what a server sends on the library's
// own connection (src/transport/wire.h), split at points the input chooses, to
// a real Master (its whole handshake: SCRIPT LOAD, INFO, INFO memory, CONFIG
// GET, TIME, GET marker, and AUTH / SELECT when the input asks for them) or a
// Subscriber in push mode, over a real Unix socket on a real libevent loop;
// or straight to a ReplyReader. Aborts when an invariant of
// fuzz/wire_invariants.h fails. Built and run by scripts/fuzz.sh.
//
// Input layout (fuzz/wire_invariants.h, ParseWireInput):
//   byte 0       target (mode % 3: Master, Subscriber, ReplyReader) and flags
//   byte 1       number of cut points (% 16); / 16: the last piece is
//                repeated 2^that times (at most 4096 times, 192 KB)
//   2 bytes each the length of each piece but the last (little-endian)
//   the rest     the stream; the last piece is whatever is left.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/wire_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Static, so that its socket and directory are removed at exit.
  static redlock::fuzz::WireHarness harness;
  static const bool ready = [] {
    if (std::string error = harness.Init(); !error.empty()) {
      std::fprintf(stderr, "wire fuzzer: cannot start: %s\n", error.c_str());
      std::abort();
    }
    return true;
  }();
  (void)ready;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string problem = harness.Run(input);
  if (!problem.empty()) {
    std::fprintf(stderr, "invariant violated: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
