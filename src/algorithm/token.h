// Copyright 2026 The redlock Authors.
//
// Lock tokens: 128 bits from the OS CSPRNG, as 32 lowercase hex digits. A
// token proves ownership on release and extend, so it must be unguessable and
// never reused: getrandom(2), never a seeded PRNG.

#ifndef REDLOCK_SRC_ALGORITHM_TOKEN_H_
#define REDLOCK_SRC_ALGORITHM_TOKEN_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace redlock::internal {

inline constexpr size_t kTokenBytes = 16;
inline constexpr size_t kTokenDigits = 2 * kTokenBytes;

// kInternal if the kernel's CSPRNG cannot be read (getrandom fails with
// anything but EINTR). SpellToken() of 16 random bytes.
absl::StatusOr<std::string> NewToken();

// Every byte's two lowercase hex digits, in byte order.
struct HexPairTable {
  char digits[512];
};
constexpr HexPairTable MakeHexPairTable() {
  HexPairTable table{};
  constexpr char kDigits[] = "0123456789abcdef";
  for (int b = 0; b < 256; ++b) {
    table.digits[2 * b] = kDigits[b >> 4];
    table.digits[2 * b + 1] = kDigits[b & 0xf];
  }
  return table;
}
inline constexpr HexPairTable kHexPairs = MakeHexPairTable();

// A token's 32 digits from its 16 bytes, into `out` (no terminator). Inline:
// a keep-alive batch spells every lock's token.
inline void SpellToken(const uint8_t bytes[kTokenBytes],
                       char out[kTokenDigits]) {
  for (size_t i = 0; i < kTokenBytes; ++i) {
    std::memcpy(out + 2 * i, kHexPairs.digits + 2 * bytes[i], 2);
  }
}

// The inverse for a token NewToken() could have made (32 lowercase hex
// digits): its bytes into `bytes`, true. False, `bytes` unset, for anything
// else (an adopted token is kept as given).
bool PackToken(absl::string_view token, uint8_t bytes[kTokenBytes]);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_TOKEN_H_
