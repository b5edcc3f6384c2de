// Copyright 2026 The redlock Authors.
//
// RuleOverrides: the one seam through which a test may put back a rule the
// engine had before and is known to let two owners in, so that the
// simulation can show the double grant it allows (tests/sim/unsafe_rules.h
// holds every such rule, and the unsafe semaphore script). No public
// header reaches it: an engine is made with overrides only through
// Engine::Create()'s internal overload, and the library never makes one.
// Each hook answers "no override" unless a test's subclass says otherwise.

#ifndef REDLOCK_SRC_ENGINE_RULE_OVERRIDES_H_
#define REDLOCK_SRC_ENGINE_RULE_OVERRIDES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/algorithm/scripts.h"
#include "src/engine/master_identity.h"

namespace redlock::internal {

// A semaphore attempt as the engine would plan it (AcquireOp::PlanSemaphore).
struct SemaphoreAttempt {
  absl::string_view limit_key;
  const std::vector<std::string>* slot_keys = nullptr;  // All of them.
  absl::string_view token;
  absl::Duration ttl;
  int limit = 0;
  int permits = 0;
};

class RuleOverrides {
 public:
  virtual ~RuleOverrides() = default;

  // Asked before the restart guard judges a master whose membership
  // standing lets it count: OK to count its grants whatever the guard
  // would say, or nullopt for the guard's verdict.
  virtual std::optional<absl::Status> GrantVerdict(
      const MasterIdentity& id) const {
    return std::nullopt;
  }
  // The same for a master that carries a "trusted" marker.
  virtual std::optional<absl::Status> TrustedMarkerVerdict(
      const MasterIdentity& id) const {
    return std::nullopt;
  }
  // The same for a master's fencing counters, once its grants count.
  virtual std::optional<absl::Status> FenceVerdict(
      const MasterIdentity& id) const {
    return std::nullopt;
  }
  // True: the membership records are not judged (no master refused for
  // its standing, no quorum groups, markers written without records).
  virtual bool IgnoreMembership() const { return false; }
  // True: the newest record heard is taken as current even when no quorum
  // of its members carries it kept (JudgeMembership()).
  virtual bool TrustUnknownRecords() const { return false; }
  // True if `command` (and the permit set's `keys`) replace the semaphore
  // attempt the engine planned.
  virtual bool PlanSemaphore(const SemaphoreAttempt& attempt, Command* command,
                             std::vector<std::string>* keys) const {
    return false;
  }
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_RULE_OVERRIDES_H_
