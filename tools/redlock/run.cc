// Copyright 2026 The redlock Authors.

#include "tools/redlock/run.h"

#include <string.h>

#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "src/admin/lock_lost.h"
#include "tools/redlock/attempts.h"
#include "tools/redlock/child.h"
#include "tools/redlock/progress.h"

namespace redlock::cli {
namespace {

// The lock's resources, for messages: "a" or "a + b".
std::string Names(const Config& config) {
  return absl::StrJoin(config.resources, " + ");
}

// What the command learns of its lock (docs/cli.md).
std::vector<std::string> LockVariables(const Config& config, const Lock& lock) {
  std::vector<std::string> env;
  env.push_back(absl::StrCat(kEnvToken, "=", lock.token()));
  // As the lock holds them: sorted, the first in REDLOCK_RESOURCE.
  env.push_back(absl::StrCat(kEnvResource, "=", lock.resource()));
  env.push_back(
      absl::StrCat(kEnvResources, "=", absl::StrJoin(lock.resources(), "\n")));
  env.push_back(absl::StrCat(kEnvValidMs, "=",
                             absl::ToInt64Milliseconds(lock.remaining())));
  if (config.fencing) {
    env.push_back(absl::StrCat(kEnvFence, "=", lock.fence()));
  }
  return env;
}

// Everything one `redlock run` learns while its lock is held.
struct RunState {
  bool work_ran = false;
  Lock lock;
  int signal_before_start = 0;
  std::optional<int> exit_code;  // The child's, once it is reaped.
  bool lost_reported = false;
};

// The library's default keep-alive margin: ttl/10, at least twice the
// request timeout.
absl::Duration KeeperMargin(const Config& config) {
  return std::max(config.ttl / 10, 2 * config.options.request_timeout);
}

// Keeps a semaphore's permit set alive while the command runs: the blocking
// client has no keep-alive for permit sets (WithLock takes resources only),
// so this thread extends it every ttl/3 with Redlock::Extend(), by the
// library's keep-alive rule: a failed extension, or validity that fell below
// the safety margin (KeeperMargin()) before the next extension succeeded,
// marks the lock lost (Lock::lost()) and notifies `lost`.
class PermitKeeper {
 public:
  PermitKeeper(const Config& config, Redlock& client, Lock lock,
               std::shared_ptr<EventNotice> lost)
      : config_(config),
        client_(client),
        lock_(std::move(lock)),
        lost_(std::move(lost)),
        thread_(&PermitKeeper::Keep, this) {}
  ~PermitKeeper() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  PermitKeeper(const PermitKeeper&) = delete;
  PermitKeeper& operator=(const PermitKeeper&) = delete;

 private:
  void Keep() {
    const absl::Duration margin = KeeperMargin(config_);
    std::unique_lock<std::mutex> guard(mu_);
    while (true) {
      // When validity runs below the margin unless an extension succeeds.
      const MonotonicTime margin_at =
          lock_.valid_until() - absl::ToChronoNanoseconds(margin);
      const bool stopped =
          wake_.wait_for(guard, absl::ToChronoNanoseconds(config_.ttl / 3),
                         [this] { return stop_; });
      if (stopped) return;
      guard.unlock();
      absl::Status status = client_.Extend(lock_, config_.ttl);
      if (status.ok() && MonotonicClock::now() > margin_at) {
        status = absl::DeadlineExceededError(
            absl::StrCat("less than the safety margin of validity left (",
                         Pretty(margin), ") before an extension succeeded"));
      }
      guard.lock();
      if (!status.ok()) {
        if (admin::MarkLost(lock_, status)) lost_->Notify();
        return;
      }
    }
  }

  const Config& config_;
  Redlock& client_;
  Lock lock_;
  std::shared_ptr<EventNotice> lost_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// Redlock::WithLock() for a semaphore's permits: acquire, run `work` while
// a PermitKeeper extends them, release. The same results as WithLock().
absl::Status WithPermits(const Config& config, Redlock& client,
                         const AcquireOptions& acquire,
                         absl::AnyInvocable<absl::Status(const Lock&)> work,
                         std::shared_ptr<EventNotice> lost) {
  // As the library's keep-alive refuses it, before anything is taken.
  if (config.ttl / 3 >= config.ttl - KeeperMargin(config)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keep-alive: --ttl ", Pretty(config.ttl),
        " leaves no room to extend every ttl/3 before the safety margin (",
        Pretty(KeeperMargin(config)), ", at least twice --request-timeout)"));
  }
  absl::StatusOr<Lock> lock =
      client.AcquirePermits(config.resource, SemaphoreOf(config), acquire);
  if (!lock.ok()) return lock.status();
  absl::Status result;
  {
    PermitKeeper keeper(config, client, *lock, std::move(lost));
    result = work(*lock);
  }
  (void)client.Release(*lock);
  if (lock->lost()) {
    const absl::Status reason = lock->lost_reason();
    return absl::Status(reason.code(),
                        absl::StrCat("the permits were lost while the work "
                                     "ran: ",
                                     reason.message()));
  }
  return result;
}

}  // namespace

SemaphoreOptions SemaphoreOf(const Config& config) {
  SemaphoreOptions sem;
  sem.limit = config.limit;
  sem.permits = config.permits;
  return sem;
}

int AcquireFailure(const Config& config, const absl::Status& status,
                   absl::string_view what) {
  const bool elect = config.subcommand == Subcommand::kElect;
  // "cannot lock job", "cannot campaign for election scheduler".
  const std::string cannot =
      elect ? absl::StrCat("cannot campaign for election ", config.resource)
            : absl::StrCat("cannot lock ", Names(config));
  switch (status.code()) {
    case absl::StatusCode::kAborted:
      PrintInfo(
          config.verbosity,
          absl::StrCat(elect ? absl::StrCat("election ", config.resource,
                                            " has another leader; ")
                             : absl::StrCat(Names(config),
                                            " is held by another owner; "),
                       what,
                       config.verbosity == Verbosity::kVerbose
                           ? absl::StrCat(" (", status.message(), ")")
                           : ""));
      return config.conflict_exit_code;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      PrintError(absl::StrCat(cannot, ": too few masters answered in time; ",
                              what, " (", status.ToString(), ")"));
      return kExitUnavailable;
    case absl::StatusCode::kInvalidArgument:
      PrintError(status.message());
      return kExitUsage;
    case absl::StatusCode::kFailedPrecondition:
      if (config.limit > 0) {
        // Another --limit for the same semaphore: the masters' message
        // names both limits and the master.
        PrintError(
            absl::StrCat("limit mismatch: ", status.message(), "; ", what));
        return kExitRefused;
      }
      PrintError(absl::StrCat(cannot, ": ", status.ToString()));
      return kExitSoftware;
    default:
      PrintError(absl::StrCat(cannot, ": ", status.ToString()));
      return kExitSoftware;
  }
}

int RunCommand(const Config& config, const std::string& path, Redlock& client,
               SignalWatch& signals) {
  auto lost = std::make_shared<EventNotice>();
  if (lost->fd() < 0) {
    PrintError(absl::StrCat("eventfd failed: ", strerrordesc_np(errno)));
    return kExitSoftware;
  }
  RunState state;
  ProgressDisplay progress(config, TimeoutsOf(config), MonotonicClock::now());
  WaitInterrupter interrupter(config, signals, progress);

  auto work = [&](const Lock& lock) -> absl::Status {
    Mark(Milestone::kAcquired);
    state.work_ran = true;
    state.lock = lock;
    // From here on the supervisor reads the signals.
    state.signal_before_start = interrupter.Finish();
    // A signal that came while the lock was being acquired: the user wanted
    // out before the command started, so it never starts.
    for (int signo : signals.Drain()) {
      if (SignalWatch::IsTermination(signo)) state.signal_before_start = signo;
    }
    if (state.signal_before_start != 0) {
      return absl::CancelledError("interrupted before the command started");
    }
    // Lost between the grant and now (a slow start): never start.
    if (lock.lost()) return lock.lost_reason();
    PrintDebug(
        config.verbosity,
        absl::StrCat(
            "acquired ", Names(config), " (token ", TokenPrefix(lock.token()),
            config.fencing ? absl::StrCat(", fence ", lock.fence()) : "",
            "), valid for ", Pretty(lock.remaining()),
            "; votes: ", DescribeVotes(lock.votes())));
    Supervisor supervisor(config, signals, *lost, [&] {
      return absl::StrCat("lost the lock on ", Names(config),
                          " while the command ran (",
                          lock.lost_reason().ToString(), ")");
    });
    absl::StatusOr<int> exit_code =
        supervisor.Run(path, ChildEnvironment(LockVariables(config, lock)));
    state.lost_reported = supervisor.lost_reported();
    if (!exit_code.ok()) return exit_code.status();
    state.exit_code = *exit_code;
    return absl::OkStatus();
  };

  // One call: the library retries while the lock is held elsewhere, and a
  // signal cancels the wait through the interrupter.
  AcquireOptions acquire;
  acquire.ttl = config.ttl;
  acquire.wait = config.wait;
  acquire.cancel = interrupter.cancel();
  acquire.fencing = config.fencing;
  acquire.shared = config.shared;
  HoldOptions hold;
  hold.on_lost = [lost](const absl::Status&) { lost->Notify(); };
  PrintWaiting(config);
  const absl::Status status =
      config.limit > 0
          ? WithPermits(config, client, acquire, work, lost)
          : client.WithLock(config.resources, acquire, work, std::move(hold));
  if (state.work_ran) Mark(Milestone::kReleased);
  if (!state.work_ran) {
    // A signal ended the wait (the call returned kCancelled), or came as
    // it ended otherwise: either way the user wanted out.
    if (const int signo = interrupter.Finish(); signo != 0) {
      PrintInfo(config.verbosity,
                absl::StrCat("interrupted by ", SignalName(signo),
                             " while waiting for ", Names(config)));
      return kExitSignalBase + signo;
    }
    return AcquireFailure(config, status, "not running the command");
  }
  if (state.lock.lost()) {
    if (!state.lost_reported) {
      PrintError(absl::StrCat("lost the lock on ", Names(config),
                              " while the command ran (",
                              state.lock.lost_reason().ToString(), ")"));
    }
    return kExitLost;
  }
  if (state.signal_before_start != 0) {
    PrintInfo(config.verbosity,
              absl::StrCat("interrupted by ",
                           SignalName(state.signal_before_start), "; released ",
                           Names(config), " without running the command"));
    return kExitSignalBase + state.signal_before_start;
  }
  if (!status.ok() || !state.exit_code.has_value()) {
    PrintError(absl::StrCat("running the command under ", Names(config),
                            " failed: ", status.ToString()));
    return kExitSoftware;
  }
  PrintDebug(config.verbosity,
             absl::StrCat("the command exited with ", *state.exit_code,
                          "; released ", Names(config)));
  return *state.exit_code;
}

}  // namespace redlock::cli
