// Copyright 2026 The redlock Authors.

#include "tools/redlock/child.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace redlock::cli {
namespace {

// Every variable a child learns its lock or leadership from: never
// inherited.
constexpr absl::string_view kLockVariables[] = {
    kEnvToken, kEnvResource, kEnvResources, kEnvValidMs,
    kEnvFence, kEnvEpoch,    kEnvElection};

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

}  // namespace

std::vector<std::string> ChildEnvironment(std::vector<std::string> own) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    if (std::find(std::begin(kLockVariables), std::end(kLockVariables), name) !=
        std::end(kLockVariables)) {
      continue;
    }
    // The masters' password is ours, not the command's.
    if (name == "REDLOCK_PASSWORD") continue;
    env.emplace_back(entry);
  }
  for (std::string& variable : own) env.push_back(std::move(variable));
  return env;
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

Supervisor::Supervisor(const Config& config, SignalWatch& signals,
                       EventNotice& lost,
                       absl::AnyInvocable<std::string()> describe_loss)
    : config_(config),
      signals_(signals),
      lost_(lost),
      describe_loss_(std::move(describe_loss)) {}

absl::StatusOr<int> Supervisor::Run(const std::string& path,
                                    std::vector<std::string> env) {
  std::vector<std::string> argv_strings = config_.command;
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env);
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
    ExecChild(path.c_str(), argv.data(), envp.data(), signals_.original_mask(),
              foreground_, parent, child_marks_fds);
  }
  // Also here, so that neither kill(-child_) nor tcsetpgrp() can come
  // before the child's own setpgid(). EACCES once it has exec'd is fine.
  setpgid(child_, child_);
  if (foreground_) tcsetpgrp(STDIN_FILENO, child_);
  Supervise();
  if (foreground_) TakeTerminalBack();
  if (lost_reported_) WaitForGroupToGo();
  return *exit_code_;
}

void Supervisor::Supervise() {
  while (!exit_code_.has_value()) {
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
        PrintDebug(
            config_.verbosity,
            absl::StrCat("forwarding ", SignalName(signo), " to the command"));
        SignalGroup(signo);
      }
    }
    if (kill_at_.has_value() && MonotonicClock::now() >= *kill_at_ &&
        !exit_code_.has_value()) {
      kill_at_.reset();
      PrintError(absl::StrCat("the command did not stop within ",
                              Pretty(config_.grace), "; sending SIGKILL"));
      SignalGroup(SIGKILL);
    }
  }
}

void Supervisor::OnLost() {
  lost_.Clear();
  if (lost_reported_) return;
  lost_reported_ = true;
  PrintError(absl::StrCat(
      describe_loss_(), "; stopping it: SIGTERM now",
      config_.grace == absl::InfiniteDuration()
          ? ""
          : absl::StrCat(", SIGKILL after ", Pretty(config_.grace))));
  SignalGroup(SIGTERM);
  if (config_.grace != absl::InfiniteDuration()) {
    kill_at_ = MonotonicClock::now() + absl::ToChronoNanoseconds(config_.grace);
  }
}

void Supervisor::Reap() {
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
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    Mark(Milestone::kReaped);
    exit_code_ = kExitSignalBase + WTERMSIG(status);
  }
}

// Ctrl-Z on the terminal stopped the child's group: stop too, so the shell
// sees the job stopped, and resume the child when the shell resumes us.
// While stopped the lock is not extended and is likely lost on resume.
void Supervisor::OnChildStopped() {
  TakeTerminalBack();
  kill(getpid(), SIGTSTP);
  // Continues here after SIGCONT.
  tcsetpgrp(STDIN_FILENO, child_);
  SignalGroup(SIGCONT);
}

void Supervisor::TakeTerminalBack() {
  if (tcgetpgrp(STDIN_FILENO) == child_) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
}

void Supervisor::SignalGroup(int signo) {
  if (kill(-child_, signo) != 0) kill(child_, signo);
}

// After a loss the child has exited, but processes it started in its group
// may not have: they get the rest of the grace period, then SIGKILL, so no
// part of the job outlives the lock by more than --grace.
void Supervisor::WaitForGroupToGo() {
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

}  // namespace redlock::cli
