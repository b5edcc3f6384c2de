// Copyright 2026 The redlock Authors.

#include "redlock/fencing.h"

#include "absl/strings/str_cat.h"

namespace redlock {

// Tokens are compared as numbers (Lua doubles: exact up to 2^53, far beyond
// any counter a deployment reaches). A missing record counts as 0.
const absl::string_view kFencedSetScript =
    "local seen = tonumber(redis.call('get', KEYS[1]) or '0') or 0\n"
    "local token = tonumber(ARGV[1])\n"
    "if token == nil or token < seen then return 0 end\n"
    "redis.call('set', KEYS[1], ARGV[1])\n"
    "redis.call('set', KEYS[2], ARGV[2])\n"
    "return 1\n";

std::vector<std::string> FencedSetArgv(absl::string_view fence_key,
                                       absl::string_view data_key,
                                       uint64_t token,
                                       absl::string_view value) {
  return {"EVAL",
          std::string(kFencedSetScript),
          "2",
          std::string(fence_key),
          std::string(data_key),
          absl::StrCat(token),
          std::string(value)};
}

}  // namespace redlock
