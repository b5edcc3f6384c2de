// Copyright 2026 The redlock Authors.
//
// The rules the engine had before, each known to let two owners in (or more
// holders than a semaphore's limit), kept here — outside the library — so
// that the simulation can show what each breaks, with its recorded seed
// (sim_world_test.cc). They reach an engine only through the seam
// src/engine/rule_overrides.h (Engine::Create()'s `overrides`), and
// tests/tools/library_symbols_test.sh fails if any is found in the library.

#ifndef REDLOCK_TESTS_SIM_UNSAFE_RULES_H_
#define REDLOCK_TESTS_SIM_UNSAFE_RULES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "src/algorithm/scripts.h"
#include "src/engine/rule_overrides.h"

namespace redlock::testing {

struct UnsafeRules final : public internal::RuleOverrides {
  // The restart guard's grant rule from before it failed closed: a master
  // counts unless it is known to be reborn and young, so a master not yet
  // judged (no marker read or written yet) casts a grant.
  bool legacy_grant_rule = false;
  // The restart guard's rule from before it knew of partial data loss: a
  // master carrying a trusted marker counts at once, even if it restarted
  // since it was marked with persistence that can lose acknowledged writes
  // (RDB snapshots, appendfsync everysec), and its fencing counters are
  // trusted.
  bool trust_marked_restarts = false;
  // The rule from before deployments knew their members: every client
  // counts a majority of its own list, whatever the masters' membership
  // records say, so clients on two lists (a rolling change of one master)
  // can both win.
  bool ignore_membership = false;
  // The membership rule from before a record had to be known current: a
  // member without a kept record (restarted since it was written: empty,
  // from an older RDB snapshot, a lost AOF tail) counts and is given the
  // newest record this client hears, so a client that hears only servers
  // left behind by a change acts under the old record.
  bool trust_unknown_records = false;
  // A semaphore's acquisitions use the majority-of-counters rule
  // (SemaphoreCountersAcquireScript(): each master admits while its own
  // count leaves room, taking any free slot of its own, and a majority of
  // admissions wins), which admits more holders than the limit
  // (docs/design.md, "Why not counters"). The permit set's keys are then
  // all of the semaphore's slots (release deletes those holding the token;
  // extension fails).
  bool semaphore_counters = false;

  std::optional<absl::Status> GrantVerdict(
      const internal::MasterIdentity& id) const override;
  std::optional<absl::Status> TrustedMarkerVerdict(
      const internal::MasterIdentity& id) const override;
  std::optional<absl::Status> FenceVerdict(
      const internal::MasterIdentity& id) const override;
  bool IgnoreMembership() const override { return ignore_membership; }
  bool TrustUnknownRecords() const override { return trust_unknown_records; }
  bool PlanSemaphore(const internal::SemaphoreAttempt& attempt,
                     internal::Command* command,
                     std::vector<std::string>* keys) const override;
};

// TEST ONLY, and unsafe: the majority-of-counters rule (redis-semaphore's
// RedlockSemaphore), kept so the simulation can show the semaphore it
// admits more holders than the limit (UnsafeRules::semaphore_counters). KEYS
// and the reply as SemaphoreAcquireScript(); ARGV = token, ttl ms, limit,
// permits k. The master admits the holder if at least k of its own slots are
// free (its count of live holders leaves room): it takes the k lowest free
// slots, whichever they are, and answers {1, the slots free now}; else
// {0, every free slot}. A master's admission says nothing about the slots
// the other masters gave, so a majority of admissions is not a majority for
// any one slot.
const internal::Script& SemaphoreCountersAcquireScript();
// Its call: `slot_keys` are all of the semaphore's slots, in slot order.
internal::Command SemaphoreCountersAcquireCommand(
    absl::string_view limit_key, absl::Span<const std::string> slot_keys,
    absl::string_view token, absl::Duration ttl, int limit, int permits);

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SIM_UNSAFE_RULES_H_
