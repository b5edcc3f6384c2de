// Copyright 2026 The redlock Authors.
//
// BlockPool and PoolAllocator (issue 25, target 4): the blocks a held lock
// keeps come from slabs of their own, are never handed out twice at once,
// and a slab whose blocks are all free goes back to the system.

#include "src/engine/block_pool.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "gtest/gtest.h"
#include "src/engine/lock_state.h"

namespace redlock::internal {
namespace {

TEST(BlockPoolTest, BlocksAreDistinctAlignedAndWholeUntilFreed) {
  BlockPool pool(200, 8);
  EXPECT_EQ(pool.block_size(), 200u);
  const size_t n = 3 * pool.blocks_per_slab() + 7;
  std::vector<unsigned char*> blocks;
  for (size_t i = 0; i < n; ++i) {
    auto* b = static_cast<unsigned char*>(pool.Allocate());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    std::memset(b, static_cast<int>(i & 0xff), pool.block_size());
    blocks.push_back(b);
  }
  EXPECT_EQ(pool.slabs(), 4u);
  // No two blocks overlap: each still holds the bytes written into it.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < pool.block_size(); ++j) {
      ASSERT_EQ(blocks[i][j], static_cast<unsigned char>(i & 0xff))
          << "block " << i << " byte " << j;
    }
  }
  std::set<unsigned char*> distinct(blocks.begin(), blocks.end());
  EXPECT_EQ(distinct.size(), n);
  for (unsigned char* b : blocks) pool.Free(b);
}

TEST(BlockPoolTest, AFreedBlockIsHandedOutAgainBeforeANewSlab) {
  BlockPool pool(128, 16);
  std::vector<void*> blocks;
  for (size_t i = 0; i < pool.blocks_per_slab(); ++i) {
    blocks.push_back(pool.Allocate());
  }
  EXPECT_EQ(pool.slabs(), 1u);
  void* freed = blocks[blocks.size() / 2];
  pool.Free(freed);
  EXPECT_EQ(pool.Allocate(), freed);
  EXPECT_EQ(pool.slabs(), 1u);
  // Full again: the next block needs a second slab.
  void* more = pool.Allocate();
  EXPECT_EQ(pool.slabs(), 2u);
  pool.Free(more);
  for (void* b : blocks) pool.Free(b);
}

TEST(BlockPoolTest, EmptySlabsGoBackToTheSystemButOneWithRoomStays) {
  BlockPool pool(144, 8);
  const size_t before = BlockPool::MappedBytes();
  std::vector<void*> blocks;
  for (size_t i = 0; i < 10 * pool.blocks_per_slab(); ++i) {
    blocks.push_back(pool.Allocate());
  }
  EXPECT_EQ(pool.slabs(), 10u);
  EXPECT_EQ(BlockPool::MappedBytes() - before, 10 * BlockPool::kSlabBytes);
  // Every other block freed: no slab is empty, none goes.
  for (size_t i = 0; i < blocks.size(); i += 2) pool.Free(blocks[i]);
  EXPECT_EQ(pool.slabs(), 10u);
  for (size_t i = 1; i < blocks.size(); i += 2) pool.Free(blocks[i]);
  EXPECT_EQ(pool.slabs(), 1u);
  EXPECT_EQ(BlockPool::MappedBytes() - before, BlockPool::kSlabBytes);
  // The one kept is used again.
  void* again = pool.Allocate();
  EXPECT_EQ(pool.slabs(), 1u);
  pool.Free(again);
}

TEST(BlockPoolTest, ManyThreadsAllocatingAndFreeingNeverShareABlock) {
  BlockPool pool(200, 8);
  constexpr int kThreads = 6;
  constexpr int kRounds = 3000;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      absl::BitGen gen;
      std::vector<std::pair<uint64_t*, uint64_t>> held;
      for (int r = 0; r < kRounds; ++r) {
        if (held.empty() || absl::Bernoulli(gen, 0.55)) {
          auto* b = static_cast<uint64_t*>(pool.Allocate());
          const uint64_t mark = (uint64_t{static_cast<uint32_t>(t)} << 32) | r;
          for (size_t i = 0; i < pool.block_size() / 8; ++i) b[i] = mark;
          held.emplace_back(b, mark);
        } else {
          const size_t k = absl::Uniform<size_t>(gen, 0, held.size());
          auto [b, mark] = held[k];
          for (size_t i = 0; i < pool.block_size() / 8; ++i) {
            if (b[i] != mark) ++failures[t];
          }
          pool.Free(b);
          held[k] = held.back();
          held.pop_back();
        }
      }
      for (auto [b, mark] : held) {
        for (size_t i = 0; i < pool.block_size() / 8; ++i) {
          if (b[i] != mark) ++failures[t];
        }
        pool.Free(b);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t << " found its block changed";
  }
  EXPECT_LE(pool.slabs(), 1u);
}

TEST(BlockPoolTest,
     ALockStateFromThePoolKeepsItsNamesAndItsSlabGoesWhenDropped) {
  using Pool = BlockPool;
  const size_t before = Pool::MappedBytes();
  std::vector<std::shared_ptr<LockState>> states;
  for (int i = 0; i < 1000; ++i) {
    auto state = std::allocate_shared<LockState>(PoolAllocator<LockState>());
    state->SetNames({"r" + std::to_string(i)},
                    {"redlock:r" + std::to_string(i)});
    states.push_back(std::move(state));
  }
  EXPECT_GT(Pool::MappedBytes(), before);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(states[i]->names[0], "r" + std::to_string(i));
  }
  // Dropped on another thread, as a caller's last handle may be.
  std::thread([&states] { states.clear(); }).join();
  // At most the one slab with room stays mapped.
  EXPECT_LE(Pool::MappedBytes() - before, BlockPool::kSlabBytes);
}

// A type of a size no other test's pool has, so that its pool starts empty.
struct alignas(32) Reserved {
  unsigned char bytes[1000];
};

TEST(BlockPoolTest, AReservedPoolMapsNothingForTheFirstObjectsOfItsType) {
  ReservePoolFor<Reserved>();
  const size_t mapped = BlockPool::MappedBytes();
  std::vector<std::shared_ptr<Reserved>> objects;
  // All of one slab's room is there already.
  for (int i = 0; i < 8; ++i) {
    objects.push_back(
        std::allocate_shared<Reserved>(PoolAllocator<Reserved>()));
  }
  EXPECT_EQ(BlockPool::MappedBytes(), mapped);
  // The pool is the one allocate_shared uses: a second reserve maps nothing
  // while the slab still has room.
  ReservePoolFor<Reserved>();
  EXPECT_EQ(BlockPool::MappedBytes(), mapped);
}

TEST(BlockPoolTest, AReservedLockStatePoolMapsNothingAtTheFirstGrant) {
  ReservePoolFor<LockState>();
  const size_t mapped = BlockPool::MappedBytes();
  std::shared_ptr<LockState> state = MakeLockState();
  EXPECT_EQ(BlockPool::MappedBytes(), mapped);
}

}  // namespace
}  // namespace redlock::internal
