// Copyright 2026 The redlock Authors.
//
// CountedRef<T>: a counted reference to a const T that keeps its own count
// (a `mutable std::atomic<int64_t> refs` member): 8 bytes where a
// std::shared_ptr takes 16. For what a great many locks share (a lock's
// engine context, a keep-alive's durations), one reference each.

#ifndef REDLOCK_SRC_ENGINE_COUNTED_REF_H_
#define REDLOCK_SRC_ENGINE_COUNTED_REF_H_

#include <atomic>
#include <cstdint>
#include <utility>

namespace redlock::internal {

template <typename T>
class CountedRef {
 public:
  CountedRef() = default;
  // Takes ownership of `value` (made with new, referenced by nothing else).
  explicit CountedRef(T* value) : value_(value) {
    if (value_ != nullptr) value_->refs.store(1, std::memory_order_relaxed);
  }
  CountedRef(const CountedRef& other) : value_(other.value_) {
    if (value_ != nullptr) value_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  CountedRef(CountedRef&& other) noexcept
      : value_(std::exchange(other.value_, nullptr)) {}
  CountedRef& operator=(CountedRef other) noexcept {
    std::swap(value_, other.value_);
    return *this;
  }
  // Copied and dropped from any thread; the last reference deletes it.
  ~CountedRef() {
    if (value_ != nullptr &&
        value_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete value_;
    }
  }

  const T* get() const { return value_; }
  const T* operator->() const { return value_; }
  const T& operator*() const { return *value_; }

 private:
  const T* value_ = nullptr;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_COUNTED_REF_H_
