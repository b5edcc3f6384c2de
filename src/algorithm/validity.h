// Copyright 2026 The redlock Authors.
//
// Validity arithmetic of the Redlock algorithm. A lock whose attempt started
// at `start` (monotonic) is safely held until
//   start + ttl - drift,   drift = ttl * drift_factor + 2ms,
// and an attempt counts only if, at the moment quorum is reached, more than
// `min_validity` of that is left.

#ifndef REDLOCK_SRC_ALGORITHM_VALIDITY_H_
#define REDLOCK_SRC_ALGORITHM_VALIDITY_H_

#include "absl/time/time.h"
#include "redlock/lock.h"

namespace redlock::internal {

inline constexpr absl::Duration kMinDrift = absl::Milliseconds(2);

// ttl * drift_factor + kMinDrift.
absl::Duration Drift(absl::Duration ttl, double drift_factor);

// start + ttl - Drift(ttl, drift_factor).
MonotonicTime ValidUntil(MonotonicTime start, absl::Duration ttl,
                         double drift_factor);

// valid_until - now; negative once it has passed.
absl::Duration Remaining(MonotonicTime valid_until, MonotonicTime now);

// True when Remaining(valid_until, now) > min_validity.
bool HasValidity(MonotonicTime valid_until, MonotonicTime now,
                 absl::Duration min_validity);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_VALIDITY_H_
