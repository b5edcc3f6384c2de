// Copyright 2026 The redlock Authors.
//
// ChildProcesses: helper processes this harness starts (the handoff phase's
// contenders), each with one socket as its stdin and stdout and our stderr,
// spoken to one line at a time.
//
//   auto children = ChildProcesses::Start(binary, {args0, args1});
//   children->WriteToEach("masters ...\n");
//   auto ready = children->ReadUntilLine("ready", deadline);
//
// No child outlives the set: destroying it SIGKILLs (by PID) and reaps
// every child that has not exited yet, and each child runs with
// prctl(PR_SET_PDEATHSIG, SIGKILL) for when this process dies without
// running destructors. PR_SET_PDEATHSIG follows the thread that forked, so
// start children from a thread that outlives them (main's).
//
// Not thread-safe.

#ifndef REDLOCK_BENCH_E2E_CHILD_PROCESSES_H_
#define REDLOCK_BENCH_E2E_CHILD_PROCESSES_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

class ChildProcesses {
 public:
  // Starts `binary` once per element of `args` (argv[1..] of that child).
  // kNotFound if `binary` is not executable; kInternal if a socket or fork
  // failed (the children already started are killed).
  static absl::StatusOr<std::unique_ptr<ChildProcesses>> Start(
      const std::string& binary,
      const std::vector<std::vector<std::string>>& args);

  // SIGKILLs and reaps every child that has not been reaped.
  ~ChildProcesses();

  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  int size() const { return static_cast<int>(children_.size()); }

  // Writes `text` to every child's stdin. kUnavailable if a child is gone.
  absl::Status WriteToEach(absl::string_view text);

  // Reads from every child until each has written a line equal to `line`,
  // and returns, per child, what it wrote before that line (the line itself
  // and anything after it are consumed / kept for the next read).
  // kDeadlineExceeded past `deadline`; kUnavailable if a child closed its
  // stdout (exited) first.
  absl::StatusOr<std::vector<std::string>> ReadUntilLine(absl::string_view line,
                                                         SteadyTime deadline);

  // Closes every child's stdin and waits until `deadline` for each to exit;
  // the ones still running then are SIGKILLed. Every child is reaped. OK if
  // all exited with status 0; otherwise kInternal naming the first that did
  // not.
  absl::Status Finish(SteadyTime deadline);

 private:
  struct Child {
    pid_t pid = -1;        // -1 once reaped.
    int fd = -1;           // Our end of its stdin/stdout socket.
    std::string buffered;  // Read, not yet returned.
  };

  ChildProcesses() = default;
  void KillAndReapAll();

  std::vector<Child> children_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_CHILD_PROCESSES_H_
