// Copyright 2026 The redlock Authors.
//
// What every subcommand of the `redlock` tool shares: the parsed command
// line (Config), the exit codes and how messages reach stderr. The flags
// themselves live in main.cc; everything here is plain data.

#ifndef REDLOCK_TOOLS_REDLOCK_CLI_H_
#define REDLOCK_TOOLS_REDLOCK_CLI_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/admin/connection.h"

namespace redlock::cli {

// Exit codes (docs/cli.md). The child's own code passes through `run`
// unchanged, so these sit where sysexits(3) puts them, away from the codes
// commands commonly use.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 64;        // EX_USAGE: bad command line.
inline constexpr int kExitRefused = 65;      // EX_DATAERR: reconfigure:
                                             // the servers' records do not
                                             // allow the change asked for;
                                             // a semaphore: the masters hold
                                             // another --limit.
inline constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE: no quorum.
inline constexpr int kExitSoftware = 70;     // EX_SOFTWARE: internal error.
inline constexpr int kExitConflict = 75;     // EX_TEMPFAIL: held elsewhere;
                                             // reconfigure: wait not over.
inline constexpr int kExitLost = 76;         // The lock (or, elect, the
                                             // leadership) was lost.
inline constexpr int kExitNoLeader = 79;     // elect --leader: no leader.
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;
// A child killed by signal N, or the tool interrupted by it, exits 128 + N.
inline constexpr int kExitSignalBase = 128;

enum class Verbosity { kQuiet, kNormal, kVerbose };

enum class Subcommand {
  kRun,
  kAcquire,
  kRelease,
  kExtend,
  kStatus,
  kReconfigure,
  kElect
};

// The command line after parsing and checking. Built by main.cc.
struct Config {
  Subcommand subcommand = Subcommand::kRun;
  // Validated; masters carry the password from REDLOCK_PASSWORD or
  // --password-file where their URI had none.
  Options options;
  // options.masters, parsed, in the same order.
  std::vector<MasterAddress> masters;
  // How many masters make a quorum (from options.quorum).
  int quorum = 1;

  // The first of `resources`; elect and status --election: the election's
  // NAME.
  std::string resource;
  std::vector<std::string> resources;  // run: every RESOURCE; else one.
  std::string token;                   // release, extend.
  absl::Duration ttl = absl::Seconds(30);
  absl::Duration wait = absl::ZeroDuration();  // May be infinite.
  absl::Duration grace = absl::Seconds(10);    // May be infinite.
  int conflict_exit_code = kExitConflict;
  bool fencing = false;
  // --shared: a reader of a read-write lock (run, acquire, extend, release).
  bool shared = false;
  // --limit L (0: not a semaphore) and --permits K: K permits of the
  // semaphore RESOURCE of limit L (run, acquire; extend, release and status
  // take --limit alone).
  int limit = 0;
  int permits = 1;
  bool json = false;
  // status: the Prometheus text exposition format instead of the table.
  bool prometheus = false;
  Verbosity verbosity = Verbosity::kNormal;
  // run, elect: the command and its arguments, exactly as given after "--"
  // (elect: may be empty).
  std::vector<std::string> command;

  // elect: the value to campaign with (--value, else "<hostname>:<pid>");
  // --listen: print every new leader until a signal; --leader: print the
  // current leader once. Neither: campaign.
  std::string value;
  bool listen = false;
  bool leader = false;
  // status --election: `resource` is an election's NAME; status shows its
  // lease, record and epoch counter.
  bool election = false;

  // reconfigure: the target list (--to), parsed and with passwords applied
  // as `masters`; --dry-run; and how long it may sleep for the wait before
  // finishing (`wait` above: zero without --wait, infinite for a bare
  // --wait).
  std::vector<MasterAddress> to;
  bool dry_run = false;
};

// The library's connect and request timeouts and the TLS settings, for the
// tool's own connections to the masters (src/admin/connection.h).
admin::Timeouts TimeoutsOf(const Config& config);

// N/2 + 1, or N for Quorum::kUnanimous.
int QuorumSize(Quorum quorum, int masters);

// Writes "redlock: <message>\n" to stderr in one write, with any newline in
// `message` replaced by a space: every message is one line.
void PrintError(absl::string_view message);

// PrintError() unless `verbosity` is kQuiet.
void PrintInfo(Verbosity verbosity, absl::string_view message);

// PrintError() only with kVerbose.
void PrintDebug(Verbosity verbosity, absl::string_view message);

// "1.25s", "340ms", "0s": a duration for people, rounded to `precision`.
std::string Pretty(absl::Duration d,
                   absl::Duration precision = absl::Milliseconds(1));

// The first 8 characters of a token: enough to tell owners apart.
std::string TokenPrefix(absl::string_view token);

// Milestones of one run of the tool, for the hand-off benchmark
// (bench/e2e/phases/cli_handoff.cc) and for finding where its time goes.
// Only with REDLOCK_TIMING_FILE set: then WriteTimings() appends one line to
// that file, "timing PID" and each milestone as NAME=NANOSECONDS on
// CLOCK_MONOTONIC (milestones not reached are left out). Costs nothing when
// the variable is unset.
enum class Milestone {
  kMain,        // main() entered.
  kConfigured,  // Command line parsed and checked.
  kClient,      // Redlock::Create() returned (connections started).
  kAcquired,    // run: the lock is held, before the command starts.
  kSpawning,    // run: the command's argv and environment ready, vfork() next.
  kForked,      // run: vfork() returned in the tool (the command exec'd).
  kReaped,      // run: the command's exit status was read.
  kReleased,    // run: the release answered (or failed).
  kExit,        // About to exit.
  kCount,
};
void Mark(Milestone milestone);
// Appends the line if REDLOCK_TIMING_FILE is set; one write(2), O_APPEND.
void WriteTimings();

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_CLI_H_
