// Copyright 2026 The redlock Authors.

#include "src/algorithm/validity.h"

#include "src/algorithm/clock.h"

namespace redlock::internal {

absl::Duration Drift(absl::Duration ttl, double drift_factor) {
  return ttl * drift_factor + kMinDrift;
}

MonotonicTime ValidUntil(MonotonicTime start, absl::Duration ttl,
                         double drift_factor) {
  return start + ToChrono(ttl - Drift(ttl, drift_factor));
}

absl::Duration Remaining(MonotonicTime valid_until, MonotonicTime now) {
  return ToDuration(valid_until - now);
}

bool HasValidity(MonotonicTime valid_until, MonotonicTime now,
                 absl::Duration min_validity) {
  return Remaining(valid_until, now) > min_validity;
}

}  // namespace redlock::internal
