// Copyright 2026 The redlock Authors.

#include "redlock/cancel.h"

#include "src/engine/cancel_state.h"

namespace redlock {

Cancellation::Cancellation()
    : state_(std::make_shared<internal::CancelState>()) {}

void Cancellation::Cancel() { state_->Cancel(); }

bool Cancellation::cancelled() const { return state_->IsCancelled(); }

}  // namespace redlock
