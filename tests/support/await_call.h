// Copyright 2026 The redlock Authors.
//
// AwaitCall: starts one AsyncRedlock call on a LoopRunner and turns the loop
// until its callback ran, checking the callback contract on the way (never
// before the call returns, never twice).
//
//   absl::StatusOr<Lock> lock = AwaitCall<absl::StatusOr<Lock>>(
//       loop, [&](auto done) {
//         return engine.AcquireAsync("res", ttl, wait, std::move(done));
//       });
//
// AwaitAcquire, AwaitExtend and AwaitRelease are that for the three calls.

#ifndef REDLOCK_TESTS_SUPPORT_AWAIT_CALL_H_
#define REDLOCK_TESTS_SUPPORT_AWAIT_CALL_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "tests/support/loop_runner.h"

namespace redlock::testing {

// `start(done)` makes the call and returns its immediate status; a non-OK
// one is the result. T is the callback's argument type.
template <typename T, typename Start>
T AwaitCall(LoopRunner& loop, Start start,
            absl::Duration timeout = absl::Seconds(30)) {
  std::optional<T> result;
  absl::Status call = start([&](T value) {
    EXPECT_FALSE(result.has_value()) << "callback ran twice";
    result.emplace(std::move(value));
  });
  if (!call.ok()) return T(call);
  EXPECT_FALSE(result.has_value()) << "callback ran before the call returned";
  EXPECT_TRUE(loop.RunUntil([&] { return result.has_value(); }, timeout));
  if (!result.has_value()) return T(absl::InternalError("no answer"));
  return *std::move(result);
}

inline absl::StatusOr<Lock> AwaitAcquire(LoopRunner& loop, AsyncRedlock& engine,
                                         const std::string& resource,
                                         absl::Duration ttl,
                                         absl::Duration wait) {
  return AwaitCall<absl::StatusOr<Lock>>(loop, [&](auto done) {
    return engine.AcquireAsync(resource, ttl, wait, std::move(done));
  });
}

inline absl::Status AwaitExtend(LoopRunner& loop, AsyncRedlock& engine,
                                const Lock& lock, absl::Duration ttl) {
  return AwaitCall<absl::Status>(loop, [&](auto done) {
    return engine.ExtendAsync(lock, ttl, std::move(done));
  });
}

inline absl::StatusOr<ReleaseReport> AwaitRelease(
    LoopRunner& loop, AsyncRedlock& engine, const Lock& lock,
    const ReleaseOptions& options = {}) {
  return AwaitCall<absl::StatusOr<ReleaseReport>>(loop, [&](auto done) {
    return engine.ReleaseAsync(lock, options, std::move(done));
  });
}

// A keep-alive of `lock` (TTL `ttl`, an extension every `extend_every`)
// and its lost signal, awaited with AwaitLoss().
struct KeptAlive {
  absl::StatusOr<KeepAliveHandle> keeper;
  std::shared_ptr<std::optional<absl::Status>> lost =
      std::make_shared<std::optional<absl::Status>>();
};
inline KeptAlive StartKeepAlive(AsyncRedlock& engine, const Lock& lock,
                                absl::Duration ttl,
                                absl::Duration extend_every) {
  KeptAlive kept;
  HoldOptions hold;
  hold.extend_every = extend_every;
  hold.on_lost = [lost = kept.lost](const absl::Status& reason) {
    *lost = reason;
  };
  kept.keeper = engine.KeepAlive(lock, ttl, std::move(hold));
  return kept;
}
// Turns the loop until the lost signal, at most `timeout`: its reason, or
// nullopt if the lock was still held then.
inline std::optional<absl::Status> AwaitLoss(
    LoopRunner& loop, const KeptAlive& kept,
    absl::Duration timeout = absl::Seconds(10)) {
  loop.RunUntil([&] { return kept.lost->has_value(); }, timeout);
  return *kept.lost;
}

// A release whose report waits for every master: for tests that assert what
// each master did.
inline ReleaseOptions WholeReport() {
  ReleaseOptions options;
  options.wait_for_all_masters = true;
  return options;
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_AWAIT_CALL_H_
