// Copyright 2026 The redlock Authors.
//
// What the script files (lock_scripts.cc, fence_scripts.cc,
// semaphore_scripts.cc, rwlock_scripts.cc, marker_scripts.cc) share: how a
// Script is made from its Lua and how a call on keys is built. Each of those
// files holds a family's Lua next to its Script and its command builders.

#ifndef REDLOCK_SRC_ALGORITHM_SCRIPTS_INTERNAL_H_
#define REDLOCK_SRC_ALGORITHM_SCRIPTS_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {

// A script named `name` (for messages) with its SHA-1 for EVALSHA.
// `creates_lock`: a NOSCRIPT fallback to EVAL is safe only once per call
// (Script::creates_lock); `loaded_on_connect`: SCRIPT LOAD at each
// handshake.
Script MakeScript(absl::string_view name, absl::string_view source,
                  bool creates_lock = false, bool loaded_on_connect = true);

// A script call on `keys` with `args` after them.
Command KeysCommand(const Script& script, absl::Span<const std::string> keys,
                    std::vector<std::string> args);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_SCRIPTS_INTERNAL_H_
