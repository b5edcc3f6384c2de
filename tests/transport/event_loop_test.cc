// Copyright 2026 The redlock Authors.
//
// The blocking client's loop (src/transport/event_loop.h): a caller turns it
// itself while nobody else does, the background thread turns it when nobody
// calls, and every piece of work runs once, on whichever thread turns.

#include "src/transport/event_loop.h"

#include <event2/event.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace redlock::internal {
namespace {

std::unique_ptr<EventLoop> StartLoop() {
  absl::StatusOr<std::unique_ptr<EventLoop>> loop = EventLoop::Start();
  EXPECT_TRUE(loop.ok()) << loop.status();
  return loop.ok() ? *std::move(loop) : nullptr;
}

// A flag another thread sets, waited for with a generous bound.
class Flag {
 public:
  void Set() {
    std::lock_guard<std::mutex> lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  bool WaitFor(std::chrono::milliseconds bound) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, bound, [this] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;
};

// Finishes `done` on a later turn of the loop, as a reply would.
void FinishOnALaterTurn(EventLoop& loop, EventLoop::Completion* done,
                        std::atomic<int>* finishes) {
  const timeval now{0, 0};
  event_base_once(
      loop.base(), -1, EV_TIMEOUT,
      [](int, short, void* arg) {
        auto* pair = static_cast<
            std::pair<EventLoop::Completion*, std::atomic<int>*>*>(arg);
        pair->second->fetch_add(1);
        EventLoop::Completion* done = pair->first;
        delete pair;
        done->Finish();
      },
      new std::pair<EventLoop::Completion*, std::atomic<int>*>(done, finishes),
      &now);
}

TEST(EventLoopTest, ACallerWhoFindsNobodyTurningRunsTheLoopOnItsOwnThread) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  loop->RunAndWait([] {});  // The background thread gives the lease back.
  int inline_runs = 0;
  for (int i = 0; i < 200; ++i) {
    EventLoop::Completion done;
    std::atomic<int> finishes{0};
    std::thread::id ran_on;
    loop->Run(
        [&] {
          ran_on = std::this_thread::get_id();
          FinishOnALaterTurn(*loop, &done, &finishes);
        },
        done);
    EXPECT_EQ(finishes.load(), 1);
    if (ran_on == std::this_thread::get_id()) ++inline_runs;
  }
  // Back-to-back calls come well inside the grace; a preempted caller may
  // lose a few to the background thread, never all.
  EXPECT_GT(inline_runs, 0);
}

TEST(EventLoopTest, WorkFromManyThreadsFinishesEachCallExactlyOnce) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  constexpr int kThreads = 8;
  constexpr int kCalls = 400;
  std::atomic<int> finishes{0};
  std::atomic<int> returned_early{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        EventLoop::Completion done;
        std::atomic<int> mine{0};
        loop->Run([&] { FinishOnALaterTurn(*loop, &done, &mine); }, done);
        // Run() returns only after its own work finished, exactly once.
        if (mine.load() != 1) returned_early.fetch_add(1);
        finishes.fetch_add(mine.load());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(returned_early.load(), 0);
  EXPECT_EQ(finishes.load(), kThreads * kCalls);
}

TEST(EventLoopTest, WorkPostedByAThreadThatNeverTurnsStillRuns) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  loop->RunAndWait([] {});  // The lease is free again afterwards.
  Flag ran;
  loop->Post([&] { ran.Set(); });
  EXPECT_TRUE(ran.WaitFor(std::chrono::seconds(10)));
}

TEST(EventLoopTest, ATimerFiresWhileNoCallerTurnsTheLoop) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  Flag fired;
  loop->RunAndWait([&] {
    const timeval in_20ms{0, 20000};
    event_base_once(
        loop->base(), -1, EV_TIMEOUT,
        [](int, short, void* arg) { static_cast<Flag*>(arg)->Set(); }, &fired,
        &in_20ms);
  });
  // Nobody calls again: the background thread must take the loop.
  EXPECT_TRUE(fired.WaitFor(std::chrono::seconds(10)));
}

// The background thread, waking at the end of its grace, finds the lease
// held by a caller: it polls for a short turn and sleeps through a long one
// (EventLoop::kLongTurn). Either way, once that caller gives the lease back
// and nobody calls again, it must take the loop (it slept for good, and
// nobody turned the loop again, before this was pinned).
void ExpectATimerArmedInATurnOfToFireAfterwards(int turn_us) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  loop->RunAndWait([] {});  // The background thread gives the lease back.
  Flag fired;
  EventLoop::Completion done;
  loop->Run(
      [&] {
        const timeval in_50ms{0, 50000};  // Past this turn.
        event_base_once(
            loop->base(), -1, EV_TIMEOUT,
            [](int, short, void* arg) { static_cast<Flag*>(arg)->Set(); },
            &fired, &in_50ms);
        const timeval turn{0, turn_us};
        event_base_once(
            loop->base(), -1, EV_TIMEOUT,
            [](int, short, void* arg) {
              static_cast<EventLoop::Completion*>(arg)->Finish();
            },
            &done, &turn);
      },
      done);
  EXPECT_TRUE(fired.WaitFor(std::chrono::seconds(10))) << turn_us << " us";
}

TEST(EventLoopTest, ATimerArmedInACallersShortTurnFiresAfterTheCallerLeaves) {
  ExpectATimerArmedInATurnOfToFireAfterwards(
      static_cast<int>(EventLoop::kGrace.count() * 2));
}

TEST(EventLoopTest, ATimerArmedInACallersLongTurnFiresAfterTheCallerLeaves) {
  ExpectATimerArmedInATurnOfToFireAfterwards(
      static_cast<int>(EventLoop::kLongTurn.count() * 3));
}

TEST(EventLoopTest, InLoopThreadIsTrueOnlyInsideATurn) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  EXPECT_FALSE(loop->InLoopThread());
  bool inside = false;
  loop->RunAndWait([&] { inside = loop->InLoopThread(); });
  EXPECT_TRUE(inside);
  EXPECT_FALSE(loop->InLoopThread());
}

TEST(EventLoopTest, AnotherLoopTurnedInsideACallbackRestoresTheOuterTurn) {
  std::unique_ptr<EventLoop> outer = StartLoop();
  std::unique_ptr<EventLoop> inner = StartLoop();
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  bool inner_saw_itself = false, inner_saw_outer = true, outer_after = false;
  outer->RunAndWait([&] {
    inner->RunAndWait([&] {
      inner_saw_itself = inner->InLoopThread();
      inner_saw_outer = outer->InLoopThread();
    });
    outer_after = outer->InLoopThread();
  });
  EXPECT_TRUE(inner_saw_itself);
  EXPECT_FALSE(inner_saw_outer);
  EXPECT_TRUE(outer_after);
}

TEST(EventLoopTest, WhatWasPostedBeforeTheLoopIsDestroyedStillRuns) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) loop->Post([&] { ran.fetch_add(1); });
  loop.reset();
  EXPECT_EQ(ran.load(), 10);
}

TEST(EventLoopTest, WorkPostedWhileACallerTurnsRunsOnThatTurnOrTheNext) {
  std::unique_ptr<EventLoop> loop = StartLoop();
  ASSERT_NE(loop, nullptr);
  loop->RunAndWait([] {});
  // A caller holds the loop for a while; another thread posts meanwhile.
  EventLoop::Completion done;
  Flag posted_ran;
  std::thread poster;
  loop->Run(
      [&] {
        poster = std::thread([&] { loop->Post([&] { posted_ran.Set(); }); });
        const timeval in_50ms{0, 50000};
        event_base_once(
            loop->base(), -1, EV_TIMEOUT,
            [](int, short, void* arg) {
              static_cast<EventLoop::Completion*>(arg)->Finish();
            },
            &done, &in_50ms);
      },
      done);
  poster.join();
  EXPECT_TRUE(posted_ran.WaitFor(std::chrono::seconds(10)));
}

}  // namespace
}  // namespace redlock::internal
