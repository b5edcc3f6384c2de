// Copyright 2026 The redlock Authors.

#include "src/algorithm/token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace redlock::internal {

absl::StatusOr<std::string> NewToken() {
  uint8_t bytes[kTokenBytes];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("getrandom failed: ", std::strerror(errno)));
    }
    filled += static_cast<size_t>(n);
  }
  std::string token(kTokenDigits, '\0');
  SpellToken(bytes, token.data());
  return token;
}

bool PackToken(absl::string_view token, uint8_t bytes[kTokenBytes]) {
  if (token.size() != kTokenDigits) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < kTokenBytes; ++i) {
    const int hi = nibble(token[2 * i]);
    const int lo = nibble(token[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace redlock::internal
