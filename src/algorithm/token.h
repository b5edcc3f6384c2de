// Copyright 2026 The redlock Authors.
//
// Lock tokens: 128 bits from the OS CSPRNG, as 32 lowercase hex digits. A
// token proves ownership on release and extend, so it must be unguessable and
// never reused: getrandom(2), never a seeded PRNG.

#ifndef REDLOCK_SRC_ALGORITHM_TOKEN_H_
#define REDLOCK_SRC_ALGORITHM_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"

namespace redlock::internal {

// kInternal if the kernel's CSPRNG cannot be read (getrandom fails with
// anything but EINTR).
absl::StatusOr<std::string> NewToken();

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_TOKEN_H_
