// Copyright 2026 The redlock Authors.
//
// The lease sequence from the fencing discussion, shared by the examples
// that run it against a resource (examples/lease: Redis; examples/postgres:
// PostgreSQL): A takes a fenced lock, stalls past its TTL, B takes the lock
// and writes, A wakes up and writes as if nothing happened. The resource
// decides what each write did.

#ifndef REDLOCK_EXAMPLES_LEASE_LEASE_SEQUENCE_H_
#define REDLOCK_EXAMPLES_LEASE_LEASE_SEQUENCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/redlock.h"
#include "tests/support/test_options.h"

namespace redlock::examples {

// A one-second fenced lock, waited for up to three seconds.
inline AcquireOptions SequenceLease() {
  AcquireOptions options;
  options.ttl = absl::Seconds(1);
  options.wait = absl::Seconds(3);
  options.fencing = true;
  return options;
}

// A client of `masters` with the tests' options (tests/support).
inline std::unique_ptr<Redlock> SequenceClient(
    const std::vector<std::string>& masters) {
  auto client = Redlock::Create(testing::TestOptions(masters));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

struct LeaseSequenceResult {
  uint64_t a_token = 0;
  uint64_t b_token = 0;
  bool a_accepted = false;
  bool b_accepted = false;
};

// Runs the sequence with clients `a` and `b` on `resource`; `write(lock,
// value)` is how a holder writes, true if the resource took it. A writes
// `a_value`, B `b_value`. A failed acquisition is a test failure (the
// result then says nothing was written).
template <typename Value, typename Write>
LeaseSequenceResult RunLeaseSequence(Redlock& a, Redlock& b,
                                     absl::string_view resource,
                                     const Value& a_value, const Value& b_value,
                                     Write write) {
  LeaseSequenceResult result;
  absl::StatusOr<Lock> a_lock = a.Acquire(resource, SequenceLease());
  EXPECT_TRUE(a_lock.ok()) << a_lock.status();
  if (!a_lock.ok()) return result;
  result.a_token = a_lock->fence();
  // A stalls past its TTL.
  absl::SleepFor(absl::Milliseconds(1300));
  EXPECT_FALSE(a_lock->valid()) << "A's lease should have run out";
  absl::StatusOr<Lock> b_lock = b.Acquire(resource, SequenceLease());
  EXPECT_TRUE(b_lock.ok()) << b_lock.status();
  if (!b_lock.ok()) return result;
  result.b_token = b_lock->fence();
  result.b_accepted = write(*b_lock, b_value);
  // A wakes up and writes as if nothing happened.
  result.a_accepted = write(*a_lock, a_value);
  return result;
}

}  // namespace redlock::examples

#endif  // REDLOCK_EXAMPLES_LEASE_LEASE_SEQUENCE_H_
