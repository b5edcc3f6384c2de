// Copyright 2026 The redlock Authors.
//
// Blocking connections from the operator's side to masters, for what the
// library does not do itself: look at what the masters hold
// (src/admin/probe.h: `redlock status` and the progress display) and change
// the deployment's members (src/admin/reconfigure.h). They run on the
// library's transport (src/transport/sync_connection.h: TCP, TLS, Unix
// sockets), so a master the library reaches is reached here the same way.
//
// Part of the administration API that tools/ uses in place of the
// library's internals (docs/design.md, "The parts"). Not installed.

#ifndef REDLOCK_SRC_ADMIN_CONNECTION_H_
#define REDLOCK_SRC_ADMIN_CONNECTION_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/admin/reconfigure.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {
class SyncConnection;
}  // namespace redlock::internal

namespace redlock::admin {

// One reply: its type, text, integer and elements (CONFIG GET's name/value
// pairs, SCAN's cursor and keys, a script's {1, value}).
using Reply = internal::RedisReply;

struct Timeouts {
  absl::Duration connect;
  absl::Duration command;
  // For TLS masters. Each connection makes its own OpenSSL context from
  // these: the tool probes masters from several threads at once, and one
  // SSL_CTX shared between them raced inside libcrypto (ThreadSanitizer saw
  // certificate fields written under its lock and read without it).
  TlsOptions tls;
};

// `uris` as the library reaches them: host names resolved (blocking on
// DNS), the name as written kept as the member name and TLS name,
// `options.tls` applied. kInvalidArgument naming the bad URI.
absl::StatusOr<std::vector<MasterAddress>> ResolveMasters(
    const Options& options, std::vector<std::string> uris);

// OK if `tls` can make a TLS context (its files load); else
// kInvalidArgument naming the file and what is wrong with it.
absl::Status CheckTls(const TlsOptions& tls);

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

// Reads that may be large, in pieces, so that no reply comes near the
// client's reply bound (src/transport/reply_reader.h: 64 KiB, each element
// charged its bytes and 72 more) whatever the number of keys or members:
// 1,024 semaphore slots or readers, thousands of fencing counters.
// kInternal with the server's text for an error reply, kInternal for a
// reply of the wrong shape, the connection's status if it failed.
//
// The value of each of `keys` (MGET, kGetManyBatch keys at a time): nullopt
// for a key that does not exist or holds no string.
inline constexpr size_t kGetManyBatch = 256;
absl::StatusOr<std::vector<std::optional<std::string>>> GetMany(
    Connection& connection, const std::vector<std::string>& keys);
// Every member of the set at `key` (SSCAN to the end, COUNT
// kScanBatch), sorted, each once.
inline constexpr size_t kScanBatch = 100;
absl::StatusOr<std::vector<std::string>> SetMembers(Connection& connection,
                                                    const std::string& key);

// Runs fn(i) for every i < n, each on its own thread, and waits for all.
void ForEachInParallel(size_t n, const std::function<void(size_t)>& fn);

// A reconfiguration pass's servers (reconfigure.h) over these connections,
// each server's calls on its own thread: one connection per server, opened
// at its first call and again after one failed, closed with the object (one
// pass). `addresses` must outlive it.
class ConnectionIo final : public ServerIo {
 public:
  ConnectionIo(const std::vector<MasterAddress>& addresses,
               const Timeouts& timeouts);
  ~ConnectionIo() override;

  absl::StatusOr<internal::RedisReply> Call(
      int server, const std::vector<std::string>& argv) override;
  void ForEach(size_t n, const std::function<void(size_t)>& fn) override;

 private:
  const std::vector<MasterAddress>& addresses_;
  const Timeouts timeouts_;
  // By server; each touched only by the thread running that server's calls.
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace redlock::admin

#endif  // REDLOCK_SRC_ADMIN_CONNECTION_H_
