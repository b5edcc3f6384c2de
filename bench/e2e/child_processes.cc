// Copyright 2026 The redlock Authors.

#include "bench/e2e/child_processes.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/support/after_fork.h"

namespace redlock::bench {
namespace {

std::string ErrnoText(absl::string_view what, int err) {
  return absl::StrCat(what, ": ", std::strerror(err));
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status))
    return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  return absl::StrCat("wait status ", status);
}

// Removes and returns what `buffered` holds before a line equal to `line`
// (dropping that line too), if it holds one.
std::optional<std::string> TakeUntilLine(std::string& buffered,
                                         absl::string_view line) {
  size_t pos = 0;
  for (size_t nl; (nl = buffered.find('\n', pos)) != std::string::npos;
       pos = nl + 1) {
    if (absl::string_view(buffered).substr(pos, nl - pos) == line) {
      std::string before = buffered.substr(0, pos);
      buffered.erase(0, nl + 1);
      return before;
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcesses>> ChildProcesses::Start(
    const std::string& binary,
    const std::vector<std::vector<std::string>>& args) {
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(ErrnoText(binary, errno));
  }
  std::unique_ptr<ChildProcesses> set(new ChildProcesses());
  const pid_t parent = getpid();
  for (const std::vector<std::string>& a : args) {
    // Everything the child needs is built before fork(): after it, in a
    // process with threads, only async-signal-safe calls are allowed.
    std::vector<std::string> strings = {binary};
    strings.insert(strings.end(), a.begin(), a.end());
    std::vector<char*> argv;
    for (std::string& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return absl::InternalError(ErrnoText("socketpair", errno));
    }
    const pid_t pid = fork();
    if (pid == 0) {
      testing::BelongToParentAfterFork(parent);
      if (dup2(sv[1], STDIN_FILENO) < 0 || dup2(sv[1], STDOUT_FILENO) < 0) {
        _exit(127);
      }
      // Not the masters' sockets or the other children's: only 0, 1, 2.
      close_range(3, ~0U, 0);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const int fork_errno = errno;
    close(sv[1]);
    if (pid < 0) {
      close(sv[0]);
      return absl::InternalError(ErrnoText("fork", fork_errno));
    }
    set->children_.push_back({pid, sv[0], ""});
  }
  return set;
}

ChildProcesses::~ChildProcesses() { KillAndReapAll(); }

void ChildProcesses::KillAndReapAll() {
  for (Child& c : children_) {
    if (c.pid > 0) {
      kill(c.pid, SIGKILL);
      while (waitpid(c.pid, nullptr, 0) == -1 && errno == EINTR) {
      }
      c.pid = -1;
    }
    if (c.fd >= 0) {
      close(c.fd);
      c.fd = -1;
    }
  }
}

absl::Status ChildProcesses::WriteToEach(absl::string_view text) {
  for (size_t i = 0; i < children_.size(); ++i) {
    absl::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n =
          send(children_[i].fd, rest.data(), rest.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::UnavailableError(
            ErrnoText(absl::StrCat("write to child ", i), errno));
      }
      rest.remove_prefix(static_cast<size_t>(n));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ChildProcesses::ReadUntilLine(
    absl::string_view line, SteadyTime deadline) {
  std::vector<std::optional<std::string>> got(children_.size());
  while (true) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (!got[i]) got[i] = TakeUntilLine(children_[i].buffered, line);
      if (!got[i]) {
        fds.push_back({children_[i].fd, POLLIN, 0});
        which.push_back(i);
      }
    }
    if (fds.empty()) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError(
          absl::StrCat("child ", which[0], " (pid ", children_[which[0]].pid,
                       ") did not say \"", line, "\" in time"));
    }
    const int ready =
        poll(fds.data(), fds.size(),
             static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(ErrnoText("poll", errno));
    }
    for (size_t k = 0; ready > 0 && k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Child& c = children_[which[k]];
      char buf[65536];
      const ssize_t n = read(c.fd, buf, sizeof(buf));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        return absl::UnavailableError(
            absl::StrCat("child ", which[k], " (pid ", c.pid,
                         ") closed its output before \"", line, "\""));
      }
      c.buffered.append(buf, static_cast<size_t>(n));
    }
  }
  std::vector<std::string> out;
  for (std::optional<std::string>& g : got) out.push_back(*std::move(g));
  return out;
}

absl::Status ChildProcesses::Finish(SteadyTime deadline) {
  for (Child& c : children_) {
    if (c.fd >= 0) shutdown(c.fd, SHUT_WR);
  }
  absl::Status first = absl::OkStatus();
  while (true) {
    bool running = false;
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& c = children_[i];
      if (c.pid <= 0) continue;
      int status = 0;
      const pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) {
        running = true;
        continue;
      }
      if (first.ok() &&
          (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        first = absl::InternalError(absl::StrCat(
            "child ", i, " (pid ", c.pid, ") ended with ",
            r < 0 ? ErrnoText("waitpid", errno) : DescribeExit(status)));
      }
      c.pid = -1;
    }
    if (!running) break;
    if (Now() >= deadline) {
      if (first.ok()) {
        first =
            absl::DeadlineExceededError("a child did not exit in time; killed");
      }
      break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  KillAndReapAll();
  return first;
}

}  // namespace redlock::bench
