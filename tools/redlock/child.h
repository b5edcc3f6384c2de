// Copyright 2026 The redlock Authors.
//
// The command that `redlock run` and `redlock elect` run as their child,
// while a lock or a leadership lasts: found the way a shell finds it before
// anything is taken, started in its own process group (which gets the
// terminal when the tool is in its foreground), sent every terminating
// signal the tool gets, and stopped when what it ran under is lost: SIGTERM
// to its group at once, SIGKILL after --grace. Whatever happens, the tool
// waits for the child before it releases or resigns.
//
//   Supervisor supervisor(config, signals, *lost, [&] { return why; });
//   absl::StatusOr<int> code = supervisor.Run(path, ChildEnvironment(own));

#ifndef REDLOCK_TOOLS_REDLOCK_CHILD_H_
#define REDLOCK_TOOLS_REDLOCK_CHILD_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "redlock/lock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

// What the child learns of the lock or leadership it runs under (docs/cli.md).
// ChildEnvironment() drops inherited values of every one of them, so a
// nested `redlock run` or `elect` never shows its child the outer one's.
inline constexpr absl::string_view kEnvToken = "REDLOCK_TOKEN";
inline constexpr absl::string_view kEnvResource = "REDLOCK_RESOURCE";
// Every resource of the lock, one per line (several with `run A B -- ...`).
inline constexpr absl::string_view kEnvResources = "REDLOCK_RESOURCES";
inline constexpr absl::string_view kEnvValidMs = "REDLOCK_VALID_UNTIL_MS";
inline constexpr absl::string_view kEnvFence = "REDLOCK_FENCE";
// elect: the leader's epoch (also in REDLOCK_FENCE) and the election's name.
inline constexpr absl::string_view kEnvEpoch = "REDLOCK_EPOCH";
inline constexpr absl::string_view kEnvElection = "REDLOCK_ELECTION";

// Notes which file descriptors the tool inherited, so that everything it
// opens later (the library's connections) can be kept from the child. Call
// first thing in main().
void RecordInheritedFds();

// Finds config.command[0] the way a shell would (PATH unless it has a '/').
// Returns 0, or kExitNotFound / kExitCannotExecute after printing why.
int CheckCommand(const Config& config, std::string* path);

// "KEY=value" strings for execve: the tool's environment without
// REDLOCK_PASSWORD (the masters' password is the tool's, not the
// command's) and without any of the kEnv* variables above, then `own` (this
// lock's or leadership's, "KEY=value" each).
std::vector<std::string> ChildEnvironment(std::vector<std::string> own);

// Starts config.command as the child and supervises it until it is reaped.
// The loss is signalled through `lost` (notified from any thread, typically
// the library's on_lost); `describe_loss` is called once then, on the
// calling thread, for the first part of the one-line message ("lost the
// lock on job while the command ran (...)"), to which the supervisor adds
// what it does about it. Not thread-safe: one thread calls Run().
class Supervisor {
 public:
  // Every argument must outlive the supervisor.
  Supervisor(const Config& config, SignalWatch& signals, EventNotice& lost,
             absl::AnyInvocable<std::string()> describe_loss);

  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts the command at `path` with `env` and returns once it has been
  // reaped: its exit code, or kExitSignalBase + N if signal N killed it.
  // After a loss, also waits (up to the rest of --grace) for processes it
  // left in its group, then kills them. kInternal if it could not be
  // started (nothing ran). Call once.
  absl::StatusOr<int> Run(const std::string& path,
                          std::vector<std::string> env);

  // Whether a loss was noticed, reported and acted on while the child ran.
  bool lost_reported() const { return lost_reported_; }

 private:
  void Supervise();
  void OnLost();
  void Reap();
  void OnChildStopped();
  void TakeTerminalBack();
  void SignalGroup(int signo);
  void WaitForGroupToGo();

  const Config& config_;
  SignalWatch& signals_;
  EventNotice& lost_;
  absl::AnyInvocable<std::string()> describe_loss_;
  pid_t child_ = -1;
  bool foreground_ = false;
  bool lost_reported_ = false;
  std::optional<int> exit_code_;  // Once the child is reaped.
  std::optional<MonotonicTime> kill_at_;
};

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_CHILD_H_
