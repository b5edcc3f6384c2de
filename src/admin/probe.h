// Copyright 2026 The redlock Authors.
//
// What the masters hold, read directly (`redlock status`, and the progress
// display while waiting), and the library's rules applied to what was read:
// who holds a lock, whether a master's grants count, what its persistence
// risks. Lock keys are only read here; every acquire, extend and release
// goes through the library.
//
// Every master is asked on its own thread (connection.h), so one slow or
// dead master costs one timeout, not one per master. Each connection is
// bounded by Timeouts::connect and each command by Timeouts::command.

#ifndef REDLOCK_SRC_ADMIN_PROBE_H_
#define REDLOCK_SRC_ADMIN_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/admin/connection.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/persistence.h"

namespace redlock::admin {

// What one master holds for one resource.
struct MasterStatus {
  std::string master;     // MasterAddress::Name().
  std::string member;     // MasterAddress::MemberName().
  std::string transport;  // "tcp", "unix" or "tls".
  std::string tls;        // "TLSv1.3 TLS_AES_256_GCM_SHA384"; "" if not TLS.
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
  internal::Persistence persistence;  // CONFIG GET append*.
  // A read-write lock shared by readers (token == kSharedLockValue): the
  // tokens in the readers' index whose own key still lives.
  std::vector<std::string> readers;
  // A semaphore: the limit key's value (nullopt: no such key), the limit
  // the slots were read for (StatusKeys::limit, else the stored one; 0: not
  // read) and each slot's token (nullopt: free).
  std::optional<std::string> stored_limit;
  int limit = 0;
  std::vector<std::optional<std::string>> slots;
  // The index of an earlier master with the same run_id (one server under
  // two addresses: it casts one vote), or -1.
  int same_server_as = -1;
};

struct StatusKeys {
  std::string lock;    // LockKey().
  std::string fence;   // FenceCounterKey().
  std::string marker;  // DeploymentMarkerKey().
  // Read with `full` only:
  std::string readers;      // SharedHoldersKey().
  std::string reader_base;  // SharedHolderKey() without the token.
  std::string limit_key;    // SemaphoreLimitKey().
  std::string slot_base;    // SemaphoreSlotKey() without the slot number.
  // The semaphore's limit (--limit); 0: the one the limit key holds, if any.
  int limit = 0;
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

// --- What the library's rules make of one master's status. ---------------

// The membership record a master's deployment marker carries.
struct MarkerRecord {
  bool present = false;  // The marker has a record (text after ';').
  absl::Status error;    // It does not parse.
  std::string member;    // Its member=.
  internal::Membership record;
};
MarkerRecord RecordOf(const MasterStatus& s);

// "epoch 2 steady a,b,c", "epoch 3 joint a,b,c -> a,b,d", "-" without a
// record; a member name other than the configured one is shown.
std::string MembershipText(const MasterStatus& s);

// The deployment marker's state ("trusted", "reborn"; its value is
// "<state>:<time>:<run_id>"), or "none" without one.
std::string MarkerState(const MasterStatus& s);

// Whether a client would count this master's grants now, as far as the
// probe can tell: the restart guard's rule (docs/failure-behaviour.md) on
// what it read — reachable, not a second address of a listed server, marked
// trusted and not restarted since it was marked (or durable), else up for at
// least max_ttl. An unmarked master counts for no client until one marks it.
bool GrantsCount(const MasterStatus& s, absl::Duration max_ttl);

// "aof always", "rdb", "unknown", ... as the library's warning names it.
std::string PersistenceText(const MasterStatus& s);

// Whether a crash keeps every acknowledged write (AOF with fsync always).
bool Durable(const MasterStatus& s);

// Whether its maxmemory-policy may evict lock keys (read from INFO memory;
// false when unknown).
bool EvictionRisk(const MasterStatus& s);

// The library's one-line warnings for this master's eviction policy and
// persistence, in that order; empty when neither is a risk.
std::vector<std::string> RiskNotes(const MasterStatus& s);

}  // namespace redlock::admin

#endif  // REDLOCK_SRC_ADMIN_PROBE_H_
