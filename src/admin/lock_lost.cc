// Copyright 2026 The redlock Authors.

#include "src/admin/lock_lost.h"

#include <utility>

#include "src/engine/lock_state.h"

namespace redlock::admin {

bool MarkLost(const Lock& lock, absl::Status reason) {
  return lock.state()->MarkLost(std::move(reason));
}

}  // namespace redlock::admin
