// Copyright 2026 The redlock Authors.
//
// The `redlock` tool talking to masters itself, with blocking connections on
// the library's transport (src/transport/sync_connection.h: TCP, TLS, Unix
// sockets), for what the library does not do: look at what the masters hold
// (`status`, and the progress display while waiting), and change the
// deployment's members
// (`reconfigure`, reconfigure.h). Lock keys are only read here; every
// acquire, extend and release goes through the library.
//
// Every master is asked on its own thread, so one slow or dead master costs
// one timeout, not one per master. Each connection is bounded by
// `connect_timeout` and each command by `command_timeout`.

#ifndef REDLOCK_TOOLS_REDLOCK_DIRECT_H_
#define REDLOCK_TOOLS_REDLOCK_DIRECT_H_

#include <hiredis/hiredis.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/engine/master.h"
#include "src/transport/sync_connection.h"
#include "src/transport/tls.h"
#include "tools/redlock/cli.h"

namespace redlock::cli {

struct Timeouts {
  absl::Duration connect;
  absl::Duration command;
  // For TLS masters. Each connection makes its own OpenSSL context from
  // these: the tool probes masters from several threads at once, and one
  // SSL_CTX shared between them raced inside libcrypto (ThreadSanitizer saw
  // certificate fields written under its lock and read without it).
  TlsOptions tls;
};

// The library's connect and request timeouts, and the tool's TLS settings.
Timeouts TimeoutsOf(const Config& config);

// One reply, with its elements (CONFIG GET's
// name/value pairs, SCAN's cursor and keys, a script's {1, value}).
struct Reply {
  int type = REDIS_REPLY_NIL;
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_error() const { return type == REDIS_REPLY_ERROR; }
  bool is_string() const { return type == REDIS_REPLY_STRING; }
  bool is_integer() const { return type == REDIS_REPLY_INTEGER; }
};

// One blocking connection to one master: connected within
// `timeouts.connect`, AUTH and SELECT done, every command bounded by
// `timeouts.command`. Not thread-safe; each thread opens its own.
class Connection {
 public:
  // kUnavailable / kDeadlineExceeded when the master cannot be reached,
  // kUnauthenticated when AUTH is refused, kFailedPrecondition when SELECT
  // is.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(
      const MasterAddress& address, const Timeouts& timeouts);

  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Non-OK only when the connection failed (then every later call fails
  // too); an error reply is a Reply.
  absl::StatusOr<Reply> Command(const std::vector<std::string>& args);

  // The TLS protocol and cipher; empty if not TLS.
  std::string TlsDescription() const;

 private:
  Connection(std::unique_ptr<internal::SyncConnection> connection,
             const Timeouts& timeouts);

  std::unique_ptr<internal::SyncConnection> connection_;
  Timeouts timeouts_;
};

// Runs fn(i) for every i < n, each on its own thread, and waits for all.
void ForEachInParallel(size_t n, const std::function<void(size_t)>& fn);

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

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_DIRECT_H_
