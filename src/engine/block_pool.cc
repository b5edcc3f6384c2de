// Copyright 2026 The redlock Authors.

#include "src/engine/block_pool.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define REDLOCK_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDLOCK_POOL_ASAN 1
#endif
#endif

#if defined(REDLOCK_POOL_ASAN)
#include <sanitizer/asan_interface.h>
// A free block is poisoned, so that a use after free is still reported as
// one under AddressSanitizer although the memory stays mapped.
#define REDLOCK_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define REDLOCK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define REDLOCK_POISON(p, n) ((void)(p), (void)(n))
#define REDLOCK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace redlock::internal {
namespace {

constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A free block's first word: the next free block of its slab.
struct FreeBlock {
  FreeBlock* next;
};

}  // namespace

std::atomic<size_t> BlockPool::mapped_bytes_{0};

struct BlockPool::Slab {
  BlockPool* pool;
  FreeBlock* free;  // Blocks given back, most recent first.
  size_t carved;    // Blocks handed out at least once (the rest never were).
  size_t used;      // Blocks handed out now.
  Slab* prev;       // In the pool's with_room_ list while `listed`.
  Slab* next;
  bool listed;
};

BlockPool::BlockPool(size_t block_size, size_t alignment)
    : block_size_(RoundUp(
          block_size < sizeof(FreeBlock) ? sizeof(FreeBlock) : block_size,
          alignment)),
      first_offset_(RoundUp(sizeof(Slab), alignment)),
      capacity_((kSlabBytes - first_offset_) / block_size_) {
  // Not for the caller to get wrong at run time: the types are ours.
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 64 ||
      block_size_ > kSlabBytes / 8) {
    std::abort();
  }
}

BlockPool::~BlockPool() {
  std::lock_guard<std::mutex> lock(mu_);
  while (with_room_ != nullptr) {
    Slab* slab = with_room_;
    Unlist(slab);
    Unmap(slab);
    --slabs_;
  }
}

size_t BlockPool::slabs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slabs_;
}

BlockPool::Slab* BlockPool::NewSlab() {
  // Twice the size, then the unaligned ends unmapped: a slab starts at a
  // multiple of kSlabBytes, so Free() finds it from a block's address.
  void* raw = mmap(nullptr, 2 * kSlabBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kSlabBytes);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + 2 * kSlabBytes;
  if (end > aligned + kSlabBytes) {
    munmap(reinterpret_cast<void*>(aligned + kSlabBytes),
           end - (aligned + kSlabBytes));
  }
  Slab* slab = reinterpret_cast<Slab*>(aligned);
  *slab = Slab{this, nullptr, 0, 0, nullptr, nullptr, false};
  REDLOCK_POISON(reinterpret_cast<char*>(slab) + first_offset_,
                 capacity_ * block_size_);
  ++slabs_;
  mapped_bytes_.fetch_add(kSlabBytes, std::memory_order_relaxed);
  return slab;
}

void BlockPool::Unmap(Slab* slab) {
  // Mapped memory handed out later at this address must not look poisoned.
  REDLOCK_UNPOISON(slab, kSlabBytes);
  munmap(slab, kSlabBytes);
  mapped_bytes_.fetch_sub(kSlabBytes, std::memory_order_relaxed);
}

void BlockPool::ListFirst(Slab* slab) {
  slab->prev = nullptr;
  slab->next = with_room_;
  if (with_room_ != nullptr) with_room_->prev = slab;
  with_room_ = slab;
  slab->listed = true;
  ++listed_;
}

void BlockPool::Unlist(Slab* slab) {
  if (slab->prev != nullptr) {
    slab->prev->next = slab->next;
  } else {
    with_room_ = slab->next;
  }
  if (slab->next != nullptr) slab->next->prev = slab->prev;
  slab->prev = slab->next = nullptr;
  slab->listed = false;
  --listed_;
}

void* BlockPool::Allocate() {
  std::lock_guard<std::mutex> lock(mu_);
  Slab* slab = with_room_;
  if (slab == nullptr) {
    slab = NewSlab();
    if (slab == nullptr) return nullptr;
    ListFirst(slab);
  }
  void* block;
  if (slab->free != nullptr) {
    FreeBlock* f = slab->free;
    REDLOCK_UNPOISON(f, block_size_);
    slab->free = f->next;
    block = f;
  } else {
    block = reinterpret_cast<char*>(slab) + first_offset_ +
            slab->carved * block_size_;
    ++slab->carved;
    REDLOCK_UNPOISON(block, block_size_);
  }
  if (++slab->used == capacity_) Unlist(slab);
  return block;
}

void BlockPool::Free(void* block) {
  if (block == nullptr) return;
  Slab* slab = reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(block) &
                                       ~(uintptr_t{kSlabBytes} - 1));
  // Another pool's block, or none of ours: freeing it here would corrupt
  // both pools; stop before that.
  if (slab->pool != this) std::abort();
  bool unmap = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    FreeBlock* f = static_cast<FreeBlock*>(block);
    f->next = slab->free;
    slab->free = f;
    REDLOCK_POISON(block, block_size_);
    --slab->used;
    if (!slab->listed) ListFirst(slab);
    if (slab->used == 0 && listed_ > 1) {
      // Empty, and another slab has room: back to the system, once out of
      // the lock (the loop thread may be waiting for it to allocate).
      Unlist(slab);
      --slabs_;
      unmap = true;
    }
  }
  if (unmap) Unmap(slab);
}

}  // namespace redlock::internal
