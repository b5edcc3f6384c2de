// Copyright 2026 The redlock Authors.
//
// BlockPool: blocks of one size, from slabs of their own, for the objects a
// held lock keeps for as long as it is held (its LockState and its
// KeepAliveOp, each with its shared_ptr control block: PoolAllocator<T> with
// std::allocate_shared).
//
// Why not malloc: a lock's long-lived blocks are made as its acquisition
// ends, while the chunks other acquisitions have just freed (an AcquireOp of
// 1 KB, a QuorumRound of 480 B) are in malloc's bins. malloc carves the new
// block out of such a chunk, and the rest of it stays a hole beside a block
// that may live for hours, too small for the next AcquireOp. At 200,000 held
// locks that left 189,000 free chunks, 100 B a lock of RSS above the heap in
// use (docs/perf-notes/keep-alive-batching.md). Blocks of one size in slabs
// of their own leave no such holes, and need no malloc header each.
//
// A slab is kSlabBytes of anonymous memory aligned to its size, so a block's
// slab is found from its address. A slab whose blocks are all free goes back
// to the system unless it is the pool's only slab with room.

#ifndef REDLOCK_SRC_ENGINE_BLOCK_POOL_H_
#define REDLOCK_SRC_ENGINE_BLOCK_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

namespace redlock::internal {

class BlockPool {
 public:
  static constexpr size_t kSlabBytes = size_t{64} << 10;

  // Blocks of at least `block_size` bytes, aligned to `alignment` (a power
  // of two, at most 64). Larger blocks than a slab can hold a few of are not
  // for this pool: block_size must be at most kSlabBytes / 8.
  BlockPool(size_t block_size, size_t alignment);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  // Unmaps every slab. Every block must have been freed.
  ~BlockPool();

  // A block of block_size() bytes, not initialised; nullptr if the system
  // has no memory for a new slab. From any thread.
  void* Allocate();
  // Gives back a block this pool's Allocate() returned. From any thread.
  void Free(void* block);

  size_t block_size() const { return block_size_; }
  // Blocks one slab holds.
  size_t blocks_per_slab() const { return capacity_; }
  // Slabs mapped now.
  size_t slabs() const;
  // Bytes of slabs every pool of the process has mapped now: memory that
  // malloc's statistics do not count.
  static size_t MappedBytes() {
    return mapped_bytes_.load(std::memory_order_relaxed);
  }

  // The process's pool for blocks of Size bytes aligned to Align: made on
  // first use and never destroyed, since a block may be freed while the
  // process exits, after static objects are gone.
  template <size_t Size, size_t Align>
  static BlockPool& Shared() {
    static BlockPool* const pool = new BlockPool(Size, Align);
    return *pool;
  }

 private:
  struct Slab;

  // These three with mu_ held.
  Slab* NewSlab();
  void Unlist(Slab* slab);
  void ListFirst(Slab* slab);
  static void Unmap(Slab* slab);

  const size_t block_size_;
  const size_t first_offset_;  // Of the first block in a slab.
  const size_t capacity_;      // Blocks per slab.
  // A std::mutex, not an absl::Mutex: ThreadSanitizer sees what the
  // C++ library's mutex orders, not what Debian's uninstrumented Abseil does
  // (as for EventLoop).
  mutable std::mutex mu_;
  // Slabs with a free block, the one to allocate from first. Guarded by mu_,
  // as are the slabs' headers and free lists.
  Slab* with_room_ = nullptr;
  size_t listed_ = 0;  // Guarded by mu_.
  size_t slabs_ = 0;   // Guarded by mu_.
  static std::atomic<size_t> mapped_bytes_;
};

// An allocator for std::allocate_shared that takes single objects from
// BlockPool::Shared<sizeof(U), alignof(U)>() for whatever type U the
// standard library rebinds it to (the object with its control block);
// arrays come from operator new.
template <typename T>
class PoolAllocator {
 public:
  using value_type = T;

  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding.

  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    void* block = BlockPool::Shared<sizeof(T), alignof(T)>().Allocate();
    if (block == nullptr) throw std::bad_alloc();
    return static_cast<T*>(block);
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) {
      ::operator delete(p);
      return;
    }
    BlockPool::Shared<sizeof(T), alignof(T)>().Free(p);
  }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }
};

// Maps a slab now for the pool std::allocate_shared<T>(PoolAllocator<T>())
// takes its blocks from, unless it has one with room already: the first
// lock granted then makes no mmap()/munmap() at that moment (with other
// threads about, each munmap() is also a TLB shoot-down). A stand-in of T's
// size and alignment is made and dropped: its block (the object with its
// control block) has the size and alignment of T's, so it comes from the
// same pool, and the slab stays, as a pool's only slab with room does.
template <typename T>
void ReservePoolFor() {
  struct alignas(T) StandIn {
    unsigned char bytes[sizeof(T)];
  };
  std::allocate_shared<StandIn>(PoolAllocator<StandIn>());
}

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_BLOCK_POOL_H_
