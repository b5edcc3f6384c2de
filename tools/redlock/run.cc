// Copyright 2026 The redlock Authors.

#include "tools/redlock/run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "src/admin/lock_lost.h"
#include "tools/redlock/attempts.h"
#include "tools/redlock/progress.h"

extern char** environ;

namespace redlock::cli {
namespace {

// The child's view of the lock. Inherited values of these are dropped first,
// so a nested `redlock run` never shows its child the outer lock's fence.
constexpr absl::string_view kEnvToken = "REDLOCK_TOKEN";
constexpr absl::string_view kEnvResource = "REDLOCK_RESOURCE";
// Every resource of the lock, one per line (several with `run A B -- ...`).
constexpr absl::string_view kEnvResources = "REDLOCK_RESOURCES";

// The lock's resources, for messages: "a" or "a + b".
std::string Names(const Config& config) {
  return absl::StrJoin(config.resources, " + ");
}
constexpr absl::string_view kEnvValidMs = "REDLOCK_VALID_UNTIL_MS";
constexpr absl::string_view kEnvFence = "REDLOCK_FENCE";

// The descriptors the tool was started with, sorted (RecordInheritedFds()).
std::vector<int>* inherited_fds = nullptr;

std::vector<int> OpenFds() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    int fd = 0;
    if (absl::SimpleAtoi(entry->d_name, &fd) && fd != own) fds.push_back(fd);
  }
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

// Whether this kernel marks descriptors close-on-exec by range
// (close_range(2) with CLOSE_RANGE_CLOEXEC, Linux 5.11): the child then
// does it itself (MarkOwnFdsCloseOnExec()); else the tool does it before the
// child starts (KeepOwnFdsFromChild()). An empty range past every
// descriptor is accepted where the flag is known.
bool CloseOnExecByRange() {
  static const bool known = close_range(~0U, ~0U, CLOSE_RANGE_CLOEXEC) == 0;
  return known;
}

// Marks every descriptor the tool opened itself close-on-exec (the
// library's sockets may not be), so the child gets only what the tool got:
// one fcntl() per open descriptor, after a scan of /proc/self/fd. Where
// CloseOnExecByRange(), the child does this itself instead, off the
// hand-off's path.
void KeepOwnFdsFromChild() {
  if (inherited_fds == nullptr) return;
  for (int fd : OpenFds()) {
    if (std::binary_search(inherited_fds->begin(), inherited_fds->end(), fd)) {
      continue;
    }
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) {
      fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
}

// KeepOwnFdsFromChild() in the child of vfork(), where CloseOnExecByRange():
// every descriptor from 3 up that the tool was not started with is marked
// close-on-exec in the child's own descriptor table (vfork() shares memory,
// not descriptors), a range per gap between inherited ones. System calls
// and reads of inherited_fds only. Should a call fail after all, the child
// keeps what the library opened close-on-exec already (every socket,
// eventfd and epoll descriptor is), nothing else.
void MarkOwnFdsCloseOnExec() {
  // As KeepOwnFdsFromChild(): nothing without the list of inherited ones.
  if (inherited_fds == nullptr) return;
  unsigned int next = 3;
  for (int fd : *inherited_fds) {
    if (fd < static_cast<int>(next)) continue;
    if (static_cast<unsigned int>(fd) > next) {
      close_range(next, static_cast<unsigned int>(fd) - 1, CLOSE_RANGE_CLOEXEC);
    }
    next = static_cast<unsigned int>(fd) + 1;
  }
  close_range(next, ~0U, CLOSE_RANGE_CLOEXEC);
}

std::string SignalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", signo);
}

// "KEY=value" strings for execve: our environment without the REDLOCK_*
// variables that describe a lock and without REDLOCK_PASSWORD, then this
// lock's.
std::vector<std::string> ChildEnvironment(const Config& config,
                                          const Lock& lock) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    if (name == kEnvToken || name == kEnvResource || name == kEnvResources ||
        name == kEnvValidMs || name == kEnvFence) {
      continue;
    }
    // The masters' password is ours, not the command's.
    if (name == "REDLOCK_PASSWORD") continue;
    env.emplace_back(entry);
  }
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

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// The child of vfork() until it execs: it runs on the calling thread's stack
// in the tool's memory, with that thread suspended and the tool's other
// threads running, so only system calls (no allocation, no stdio, nothing
// that writes the tool's data) and it never returns: it execs or _exits.
// vfork() rather than fork(): nothing of the tool's address space is copied
// for a child that execs at once (docs/perf-notes/cli-handoff.md).
[[noreturn]] void ExecChild(const char* path, char* const argv[],
                            char* const envp[], const sigset_t& mask,
                            bool take_terminal, pid_t parent,
                            bool mark_own_fds) {
  // Should the tool die without a chance to stop the command (SIGKILL, OOM),
  // nobody extends the lock any more: the command gets SIGTERM rather than
  // run on after the lock expires.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(kExitSignalBase + SIGTERM);
  setpgid(0, 0);
  // SIGTTOU is still blocked here, so a background group may take it.
  if (take_terminal) tcsetpgrp(STDIN_FILENO, getpid());
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  if (mark_own_fds) MarkOwnFdsCloseOnExec();
  execve(path, argv, envp);
  const int err = errno;
  const char* parts[] = {"redlock: cannot run ", argv[0], ": ",
                         strerrordesc_np(err), "\n"};
  for (const char* part : parts) {
    if (part != nullptr) {
      ssize_t ignored = write(STDERR_FILENO, part, strlen(part));
      (void)ignored;
    }
  }
  _exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
}

// The lost-lock notice, written on the library's loop thread (on_lost must
// not block) and read by the supervising thread. Shared so that it stays
// open as long as a callback may still hold it.
class LostNotice {
 public:
  LostNotice() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~LostNotice() {
    if (fd_ >= 0) close(fd_);
  }
  LostNotice(const LostNotice&) = delete;
  LostNotice& operator=(const LostNotice&) = delete;

  int fd() const { return fd_; }
  void Notify() {
    const uint64_t one = 1;
    ssize_t ignored = write(fd_, &one, sizeof(one));
    (void)ignored;
  }
  void Clear() {
    uint64_t value = 0;
    ssize_t ignored = read(fd_, &value, sizeof(value));
    (void)ignored;
  }

 private:
  int fd_;
};

// Everything one `redlock run` learns while its lock is held.
struct RunState {
  bool work_ran = false;
  Lock lock;
  int signal_before_start = 0;
  std::optional<int> exit_code;  // The child's, once it is reaped.
  bool lost_reported = false;
};

class Supervisor {
 public:
  Supervisor(const Config& config, SignalWatch& signals, LostNotice& lost,
             RunState& state)
      : config_(config), signals_(signals), lost_(lost), state_(state) {}

  // Starts the child and waits for it; OK once it has been reaped.
  absl::Status Run(const std::string& path, const Lock& lock) {
    std::vector<std::string> argv_strings = config_.command;
    std::vector<char*> argv = CStrings(argv_strings);
    std::vector<std::string> env_strings = ChildEnvironment(config_, lock);
    std::vector<char*> envp = CStrings(env_strings);
    foreground_ = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
    const bool child_marks_fds = CloseOnExecByRange();
    if (!child_marks_fds) KeepOwnFdsFromChild();

    const pid_t parent = getpid();
    Mark(Milestone::kSpawning);
    // NOLINTNEXTLINE: vfork is intended, see ExecChild().
    child_ = vfork();
    if (child_ > 0) Mark(Milestone::kForked);
    if (child_ < 0) {
      return absl::InternalError(
          absl::StrCat("fork failed: ", strerrordesc_np(errno)));
    }
    if (child_ == 0) {
      ExecChild(path.c_str(), argv.data(), envp.data(),
                signals_.original_mask(), foreground_, parent, child_marks_fds);
    }
    // Also here, so that neither kill(-child_) nor tcsetpgrp() can come
    // before the child's own setpgid(). EACCES once it has exec'd is fine.
    setpgid(child_, child_);
    if (foreground_) tcsetpgrp(STDIN_FILENO, child_);
    Supervise();
    if (foreground_) TakeTerminalBack();
    if (state_.lost_reported) WaitForGroupToGo();
    return absl::OkStatus();
  }

 private:
  void Supervise() {
    while (!state_.exit_code.has_value()) {
      pollfd fds[2] = {{signals_.fd(), POLLIN, 0}, {lost_.fd(), POLLIN, 0}};
      const absl::Duration until_kill =
          kill_at_.has_value()
              ? absl::FromChrono(*kill_at_ - MonotonicClock::now())
              : absl::InfiniteDuration();
      const int ready = poll(fds, 2, PollTimeoutMs(until_kill));
      if (ready < 0 && errno != EINTR) {
        // Cannot happen with valid descriptors; do not spin.
        absl::SleepFor(absl::Milliseconds(10));
      }
      if (fds[1].revents & POLLIN) OnLost();
      for (int signo : signals_.Drain()) {
        if (signo == SIGCHLD) {
          Reap();
        } else if (SignalWatch::IsTermination(signo)) {
          PrintDebug(config_.verbosity,
                     absl::StrCat("forwarding ", SignalName(signo),
                                  " to the command"));
          SignalGroup(signo);
        }
      }
      if (kill_at_.has_value() && MonotonicClock::now() >= *kill_at_ &&
          !state_.exit_code.has_value()) {
        kill_at_.reset();
        PrintError(absl::StrCat("the command did not stop within ",
                                Pretty(config_.grace), "; sending SIGKILL"));
        SignalGroup(SIGKILL);
      }
    }
  }

  void OnLost() {
    lost_.Clear();
    if (state_.lost_reported) return;
    state_.lost_reported = true;
    PrintError(absl::StrCat(
        "lost the lock on ", Names(config_), " while the command ran (",
        state_.lock.lost_reason().ToString(), "); stopping it: SIGTERM now",
        config_.grace == absl::InfiniteDuration()
            ? ""
            : absl::StrCat(", SIGKILL after ", Pretty(config_.grace))));
    SignalGroup(SIGTERM);
    if (config_.grace != absl::InfiniteDuration()) {
      kill_at_ =
          MonotonicClock::now() + absl::ToChronoNanoseconds(config_.grace);
    }
  }

  void Reap() {
    int status = 0;
    while (true) {
      const pid_t r =
          waitpid(child_, &status, (foreground_ ? WUNTRACED : 0) | WNOHANG);
      if (r < 0 && errno == EINTR) continue;
      if (r != child_) return;
      break;
    }
    if (WIFSTOPPED(status)) {
      OnChildStopped();
    } else if (WIFEXITED(status)) {
      Mark(Milestone::kReaped);
      state_.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      Mark(Milestone::kReaped);
      state_.exit_code = kExitSignalBase + WTERMSIG(status);
    }
  }

  // Ctrl-Z on the terminal stopped the child's group: stop too, so the shell
  // sees the job stopped, and resume the child when the shell resumes us.
  // While stopped the lock is not extended and is likely lost on resume.
  void OnChildStopped() {
    TakeTerminalBack();
    kill(getpid(), SIGTSTP);
    // Continues here after SIGCONT.
    tcsetpgrp(STDIN_FILENO, child_);
    SignalGroup(SIGCONT);
  }

  void TakeTerminalBack() {
    if (tcgetpgrp(STDIN_FILENO) == child_) {
      tcsetpgrp(STDIN_FILENO, getpgrp());
    }
  }

  void SignalGroup(int signo) {
    if (kill(-child_, signo) != 0) kill(child_, signo);
  }

  // After a lost lock the child has exited, but processes it started in its
  // group may not have: they get the rest of the grace period, then SIGKILL,
  // so no part of the job outlives the lock by more than --grace.
  void WaitForGroupToGo() {
    // Without a pending deadline SIGKILL went to the group already, or
    // --grace is infinite: nothing to wait for.
    if (!kill_at_.has_value()) return;
    while (kill(-child_, 0) == 0) {
      if (MonotonicClock::now() >= *kill_at_) {
        kill(-child_, SIGKILL);
        return;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  const Config& config_;
  SignalWatch& signals_;
  LostNotice& lost_;
  RunState& state_;
  pid_t child_ = -1;
  bool foreground_ = false;
  std::optional<MonotonicTime> kill_at_;
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
               std::shared_ptr<LostNotice> lost)
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
  std::shared_ptr<LostNotice> lost_;
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
                         std::shared_ptr<LostNotice> lost) {
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

void RecordInheritedFds() {
  inherited_fds = new std::vector<int>(OpenFds());
  // Asked now, at start-up, rather than as the command starts.
  CloseOnExecByRange();
}

int CheckCommand(const Config& config, std::string* path) {
  const std::string& name = config.command.front();
  auto usable = [](const std::string& candidate, int* error) {
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0) {
      *error = errno;
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      *error = EISDIR;
      return false;
    }
    if (access(candidate.c_str(), X_OK) != 0) {
      *error = errno;
      return false;
    }
    return true;
  };
  int error = ENOENT;
  if (absl::StrContains(name, '/')) {
    if (usable(name, &error)) {
      *path = name;
      return kExitOk;
    }
  } else if (!name.empty()) {
    const char* env_path = std::getenv("PATH");
    int found_error = ENOENT;
    for (absl::string_view dir : absl::StrSplit(
             env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin",
             ':')) {
      const std::string candidate =
          absl::StrCat(dir.empty() ? "." : dir, "/", name);
      int candidate_error = 0;
      if (usable(candidate, &candidate_error)) {
        *path = candidate;
        return kExitOk;
      }
      // A match that exists but cannot run beats "not found", as in sh.
      if (candidate_error != ENOENT && candidate_error != ENOTDIR) {
        found_error = candidate_error;
      }
    }
    error = found_error;
    if (error == ENOENT) {
      PrintError(absl::StrCat("cannot run ", name, ": command not found"));
      return kExitNotFound;
    }
  }
  PrintError(absl::StrCat("cannot run ", name, ": ", strerrordesc_np(error)));
  return error == ENOENT ? kExitNotFound : kExitCannotExecute;
}

int AcquireFailure(const Config& config, const absl::Status& status,
                   absl::string_view what) {
  switch (status.code()) {
    case absl::StatusCode::kAborted:
      PrintInfo(config.verbosity,
                absl::StrCat(Names(config), " is held by another owner; ", what,
                             config.verbosity == Verbosity::kVerbose
                                 ? absl::StrCat(" (", status.message(), ")")
                                 : ""));
      return config.conflict_exit_code;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      PrintError(absl::StrCat("cannot lock ", Names(config),
                              ": too few masters answered in time; ", what,
                              " (", status.ToString(), ")"));
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
      PrintError(
          absl::StrCat("cannot lock ", Names(config), ": ", status.ToString()));
      return kExitSoftware;
    default:
      PrintError(
          absl::StrCat("cannot lock ", Names(config), ": ", status.ToString()));
      return kExitSoftware;
  }
}

int RunCommand(const Config& config, const std::string& path, Redlock& client,
               SignalWatch& signals) {
  auto lost = std::make_shared<LostNotice>();
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
    Supervisor supervisor(config, signals, *lost, state);
    return supervisor.Run(path, lock);
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
