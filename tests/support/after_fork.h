// Copyright 2026 The redlock Authors.
//
// What a child started by a test or benchmark does between fork() and exec()
// to belong to its parent and to nothing else: it dies with the thread that
// forked it (even if that one is SIGKILLed), and it does not inherit the
// parent's signal handlers' dispositions, ignored signals or signal mask.
// Only async-signal-safe calls: the parent has threads.

#ifndef REDLOCK_TESTS_SUPPORT_AFTER_FORK_H_
#define REDLOCK_TESTS_SUPPORT_AFTER_FORK_H_

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace redlock::testing {

// Call in the child, first thing after fork(); `parent` is getpid() read
// before fork(). Exits 127 if the parent is already gone.
inline void BelongToParentAfterFork(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_AFTER_FORK_H_
