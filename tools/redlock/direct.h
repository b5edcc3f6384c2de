// Copyright 2026 The redlock Authors.
//
// The `redlock` tool talking to masters itself, with blocking hiredis, for
// what the library's clients cannot do from a fresh process:
//
//   - release and extend a lock by its token, acquired by an earlier process
//     (the library's Release/Extend take a Lock won by the same client);
//   - look at what the masters hold (status, and the progress display while
//     waiting).
//
// Every master is asked on its own thread, so one slow or dead master costs
// one timeout, not one per master. Each connection is bounded by
// `connect_timeout` and each command by `command_timeout`.

#ifndef REDLOCK_TOOLS_REDLOCK_DIRECT_H_
#define REDLOCK_TOOLS_REDLOCK_DIRECT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "redlock/options.h"

namespace redlock::cli {

struct Timeouts {
  absl::Duration connect;
  absl::Duration command;
};

// The outcome of a token-checked script (release or extend) on every master,
// counted the way the library counts votes: 1 is granted, 0 denied, anything
// else (no connection, timeout, error reply) failed.
struct TokenOutcome {
  enum class Result {
    kOk,           // granted >= quorum.
    kLost,         // denied > N - quorum: even the failed masters could not
                   // make a quorum, so the token is not held (expired,
                   // released or taken).
    kUnavailable,  // Too many masters failed to tell.
  };
  Result result = Result::kUnavailable;
  int granted = 0;
  int denied = 0;
  int failed = 0;
  int quorum = 0;
  std::vector<MasterVote> votes;  // One per master, in order.
  // From before the first command was sent until the last answer.
  absl::Duration elapsed;
  // extend only: ttl - elapsed - drift, as the library computes validity;
  // not positive means the quorum came too late.
  absl::Duration validity;
};

absl::string_view TokenResultName(TokenOutcome::Result result);

// The release script on every master: deletes `key` where it holds `token`.
TokenOutcome ReleaseToken(const std::vector<MasterAddress>& masters, int quorum,
                          const Timeouts& timeouts, const std::string& key,
                          const std::string& token);

// The extend script on every master: sets the TTL of `key` to `ttl` where it
// holds `token`; never creates the key. TokenOutcome::validity is measured
// from before the first command with `drift_factor` (Options::drift_factor).
TokenOutcome ExtendToken(const std::vector<MasterAddress>& masters, int quorum,
                         const Timeouts& timeouts, const std::string& key,
                         const std::string& token, absl::Duration ttl,
                         double drift_factor);

// What one master holds for one resource.
struct MasterStatus {
  std::string master;  // MasterAddress::Name().
  bool reachable = false;
  absl::Status error;      // Why not reachable, or the first failed command.
  absl::Duration latency;  // PING round trip.
  std::optional<std::string> token;   // GET lock key; nullopt: not held.
  int64_t pttl_ms = -2;               // PTTL lock key (-2: no key).
  std::optional<std::string> fence;   // GET fence counter key.
  std::string run_id;                 // INFO server; empty if unknown.
  std::optional<int64_t> uptime_s;    // INFO server.
  std::optional<std::string> marker;  // GET deployment marker key.
  std::string maxmemory_policy;       // INFO memory; empty if unknown.
  // The index of an earlier master with the same run_id (one server under
  // two addresses: it casts one vote), or -1.
  int same_server_as = -1;
};

struct StatusKeys {
  std::string lock;    // LockKey().
  std::string fence;   // FenceCounterKey().
  std::string marker;  // DeploymentMarkerKey().
};

// Asks every master, in parallel. With `full` false only PING, GET and PTTL
// of the lock key are sent (the progress display).
std::vector<MasterStatus> ProbeMasters(
    const std::vector<MasterAddress>& masters, const Timeouts& timeouts,
    const StatusKeys& keys, bool full);

// Who holds the lock, as far as the probes show.
struct HolderSummary {
  std::string token;  // The token most masters hold; empty if none.
  int holders = 0;    // Masters holding it.
  int reachable = 0;
  // When fewer than a quorum will still hold `token`, from the PTTLs (the
  // quorum-th longest); zero if fewer than a quorum hold it now.
  absl::Duration expires_in;
};

HolderSummary Summarize(const std::vector<MasterStatus>& statuses, int quorum);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_DIRECT_H_
