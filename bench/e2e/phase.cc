// Copyright 2026 The redlock Authors.

#include "bench/e2e/phase.h"

#include <algorithm>

#include "absl/strings/str_join.h"

namespace redlock::bench {
namespace {

// Constructed on first use, so that registrations from other files' static
// initialisers find it whatever the order the files initialise in.
std::vector<PhaseInfo>& Registry() {
  static auto* registry = new std::vector<PhaseInfo>();
  return *registry;
}

}  // namespace

Target Unmeasured(std::string what) {
  Target t;
  t.what = std::move(what);
  return t;
}

RegisterPhase::RegisterPhase(int order, std::string name, PhaseFactory make) {
  Registry().push_back({order, std::move(name), make});
}

std::vector<PhaseInfo> RegisteredPhases() {
  std::vector<PhaseInfo> phases = Registry();
  std::stable_sort(
      phases.begin(), phases.end(),
      [](const PhaseInfo& a, const PhaseInfo& b) { return a.order < b.order; });
  return phases;
}

std::string AllPhaseNames() {
  std::vector<std::string> names;
  for (const PhaseInfo& p : RegisteredPhases()) names.push_back(p.name);
  return absl::StrJoin(names, ",");
}

}  // namespace redlock::bench
