// Copyright 2026 The redlock Authors.
//
// Observer: what a client does, as it happens, for metrics and logs. Set
// Options::observer; every method has an empty default, so an observer
// overrides only what it needs. With no observer set the client does no work
// for it (no event is built).
//
//   class LostLocksToLog : public redlock::Observer {
//    public:
//     void OnLost(const redlock::LostEvent& e) override {
//       LOG(WARNING) << "lost " << e.resource << ": " << e.reason;
//     }
//   };
//   options.observer = std::make_shared<LostLocksToLog>();
//
// Every call is made on the client's loop thread (for a blocking Redlock:
// its own background thread, or a thread waiting in one of its calls, which
// turns the loop itself meanwhile), after the state it reports
// changed and before the caller's callback (if any) runs. A method must be
// quick and must not block or call the client's blocking API (it runs on the
// thread that would have to answer). Events refer to data that lives only for
// the call: copy what you keep. redlock::prometheus (redlock/prometheus.h)
// (the class redlock::PrometheusObserver, library target redlock::prometheus)
// is an observer that keeps Prometheus metrics.

#ifndef REDLOCK_OBSERVER_H_
#define REDLOCK_OBSERVER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/lock.h"

namespace redlock {

// One acquisition attempt (one quorum round) was decided.
struct AttemptEvent {
  absl::string_view resource;
  int attempt = 0;  // 1 for the first attempt of an acquisition.
  // OK: won (the acquisition then succeeds, unless fencing fails); otherwise
  // why it lost: kAborted, kUnavailable or kDeadlineExceeded.
  absl::Status outcome;
  // From sending the attempt's commands to the decision.
  absl::Duration elapsed;
  // Each master's vote with its latency (pending: not answered in time).
  const std::vector<MasterVote>* votes = nullptr;
};

// An acquisition completed with a lock.
struct AcquiredEvent {
  absl::string_view resource;
  int attempts = 0;
  // From the call to the lock being granted (the retries' waits included).
  absl::Duration wait;
  uint64_t fence = 0;  // 0 unless fencing was asked for.
  // Won by a release's hand-off (RetryPolicy::hand_off), not by an
  // attempt of its own.
  bool handed_over = false;
};

// An acquisition completed without a lock.
struct AcquireFailedEvent {
  absl::string_view resource;
  // kAborted, kUnavailable, kDeadlineExceeded, kCancelled (cancelled by the
  // caller or the client shut down), or kInternal.
  absl::Status status;
  int attempts = 0;
  absl::Duration wait;  // From the call to the failure.
};

// An extension (ExtendAsync, or a keep-alive's) was decided.
struct ExtendedEvent {
  absl::string_view resource;
  absl::Status status;  // OK, or why it failed (see ExtendAsync).
  absl::Duration elapsed;
  const std::vector<MasterVote>* votes = nullptr;
  bool keep_alive = false;  // Made by a keep-alive.
};

// A kept-alive lock was declared lost (Lock::lost()).
struct LostEvent {
  absl::string_view resource;
  absl::Status reason;
};

// A release was decided (delivered to the caller, or, for a release nobody
// waits for — a keep-alive's or a ScopedLock's — at the same point).
struct ReleasedEvent {
  absl::string_view resource;
  const ReleaseReport* report = nullptr;
  // From acquired_at() to the release being sent.
  absl::Duration held_for;
};

// A master's connection or the restart guard's view of it changed.
struct MasterEvent {
  enum class Kind {
    kConnected,     // A handshake completed on a new connection.
    kDisconnected,  // The connection failed or closed; `status` says why.
    kJudged,        // Whether its grants count changed; `status` is the new
                    // verdict (OK: they count; else why not, as in
                    // MasterHealth::grants_count).
  };
  Kind kind = Kind::kConnected;
  absl::string_view master;  // "host:port[/db]".
  int index = 0;             // Its position in Options::masters.
  absl::Status status;
};

class Observer {
 public:
  virtual ~Observer() = default;

  virtual void OnAttempt(const AttemptEvent& /*event*/) {}
  virtual void OnAcquired(const AcquiredEvent& /*event*/) {}
  virtual void OnAcquireFailed(const AcquireFailedEvent& /*event*/) {}
  virtual void OnExtended(const ExtendedEvent& /*event*/) {}
  virtual void OnLost(const LostEvent& /*event*/) {}
  virtual void OnReleased(const ReleasedEvent& /*event*/) {}
  virtual void OnMaster(const MasterEvent& /*event*/) {}
};

}  // namespace redlock

#endif  // REDLOCK_OBSERVER_H_
