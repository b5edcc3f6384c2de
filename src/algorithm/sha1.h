// Copyright 2026 The redlock Authors.
//
// SHA-1 of a string, as Redis computes it for EVALSHA. Used only to name Lua
// scripts, never for security.

#ifndef REDLOCK_SRC_ALGORITHM_SHA1_H_
#define REDLOCK_SRC_ALGORITHM_SHA1_H_

#include <string>

#include "absl/strings/string_view.h"

namespace redlock::internal {

// 40 lowercase hex digits.
std::string Sha1Hex(absl::string_view data);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_SHA1_H_
