// Copyright 2026 The redlock Authors.
//
// SHA-1 as specified in FIPS 180-4, sections 5.1.1 (padding), 5.3.1 (initial
// hash value) and 6.1.2 (hash computation). Scripts are small and hashed once
// each, so this favours being obviously right over being fast.

#include "src/algorithm/sha1.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace redlock::internal {
namespace {

constexpr size_t kBlockBytes = 64;
// Padding needs one 0x80 byte and the 8-byte length after the message.
constexpr size_t kLengthBytes = 8;

uint32_t RotateLeft(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// Folds one 512-bit block into `state`.
void ProcessBlock(const unsigned char* block, uint32_t state[5]) {
  uint32_t w[80];
  for (int t = 0; t < 16; ++t) {
    w[t] = static_cast<uint32_t>(block[4 * t]) << 24 |
           static_cast<uint32_t>(block[4 * t + 1]) << 16 |
           static_cast<uint32_t>(block[4 * t + 2]) << 8 |
           static_cast<uint32_t>(block[4 * t + 3]);
  }
  for (int t = 16; t < 80; ++t) {
    w[t] = RotateLeft(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  }

  uint32_t a = state[0];
  uint32_t b = state[1];
  uint32_t c = state[2];
  uint32_t d = state[3];
  uint32_t e = state[4];
  for (int t = 0; t < 80; ++t) {
    uint32_t f;
    uint32_t k;
    if (t < 20) {
      f = (b & c) | (~b & d);  // Ch
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;  // Parity
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);  // Maj
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;  // Parity
      k = 0xca62c1d6;
    }
    const uint32_t temp = RotateLeft(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = RotateLeft(b, 30);
    b = a;
    a = temp;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
}

}  // namespace

std::string Sha1Hex(absl::string_view data) {
  uint32_t state[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                       0xc3d2e1f0};

  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const size_t whole_blocks_bytes = data.size() / kBlockBytes * kBlockBytes;
  for (size_t offset = 0; offset < whole_blocks_bytes; offset += kBlockBytes) {
    ProcessBlock(bytes + offset, state);
  }

  // The rest of the message, 0x80, zeros, then the length in bits as a
  // 64-bit big-endian number: one block if that fits, else two.
  unsigned char tail[2 * kBlockBytes] = {};
  const size_t rest = data.size() - whole_blocks_bytes;
  if (rest > 0) std::memcpy(tail, bytes + whole_blocks_bytes, rest);
  tail[rest] = 0x80;
  const size_t tail_size =
      rest + 1 + kLengthBytes <= kBlockBytes ? kBlockBytes : 2 * kBlockBytes;
  const uint64_t bit_length = static_cast<uint64_t>(data.size()) * 8;
  for (size_t i = 0; i < kLengthBytes; ++i) {
    tail[tail_size - 1 - i] = static_cast<unsigned char>(bit_length >> (8 * i));
  }
  for (size_t offset = 0; offset < tail_size; offset += kBlockBytes) {
    ProcessBlock(tail + offset, state);
  }

  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(40);
  for (uint32_t word : state) {
    for (int shift = 28; shift >= 0; shift -= 4) {
      hex.push_back(kHexDigits[(word >> shift) & 0xf]);
    }
  }
  return hex;
}

}  // namespace redlock::internal
