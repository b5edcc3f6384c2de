// Copyright 2026 The redlock Authors.
//
// RogueServer: a real TCP server on 127.0.0.1 that plays a misbehaving Redis
// master, for the robustness tests (issue 23 item 4). Not a mock of the
// library: the client under test talks to it over a socket like to any
// master.
//
// Two kinds:
//   - fronting a real redis-server (Config::upstream_port): every command a
//     client sends is forwarded over a connection of its own to the upstream
//     and every reply relayed back, except where the Behaviour says
//     otherwise (a reply replaced, bytes injected, replies dripped, the
//     client's writes no longer read, an endless bulk string);
//   - standalone (Config::standalone != kNone): no upstream; every command
//     is answered with the same bytes (an HTTP response, a reply nested 16
//     deep, a 1 MiB bulk string or status line).
//
//   auto rogue = RogueServer::Start({.upstream_port = server->port()});
//   RogueServer::Behaviour b;
//   b.role = RogueServer::Role::kLock;
//   b.inject = ":1\r\n";
//   b.inject_after = absl::Seconds(1);  // A reply nobody asked for.
//   (*rogue)->SetBehaviour(b);
//   options.masters = {..., (*rogue)->Uri("password")};
//
// A connection's role is decided by its first command other than AUTH:
// SUBSCRIBE makes it a subscriber connection, anything else a lock
// connection. One thread per connection (at most kMaxConnections at once;
// more are closed at once), blocking sockets polled in 50ms steps so that
// every wait ends soon after the destructor asks. Thread-safe.

#ifndef REDLOCK_TESTS_SUPPORT_ROGUE_SERVER_H_
#define REDLOCK_TESTS_SUPPORT_ROGUE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace redlock::testing {

class RogueServer {
 public:
  static constexpr int kMaxConnections = 32;

  enum class Role { kAny, kLock, kSubscriber };

  enum class Standalone {
    kNone,         // Front the upstream.
    kHttp,         // "HTTP/1.1 400 Bad Request ..." to every command.
    kDeepNesting,  // "*1\r\n" 16 times, then ":1\r\n", to every command.
    kLongBulk,     // "$1048576\r\n" + 1 MiB of 'x' + "\r\n".
    kLongStatus,   // "+" + 1 MiB of 'x' + "\r\n".
  };

  struct Config {
    // The redis-server to front, on 127.0.0.1. Required unless standalone.
    int upstream_port = 0;
    Standalone standalone = Standalone::kNone;
    // SO_RCVBUF of accepted connections, 0 for the kernel's default. A small
    // one keeps what a client writes to a server that stops reading in the
    // client's own buffers rather than in ours. Default: 0.
    int receive_buffer = 0;
  };

  // What the server does wrong, on the connections of `role` accepted after
  // SetBehaviour(). Default: nothing (a faithful relay).
  struct Behaviour {
    Role role = Role::kAny;
    // The reply to every command whose label (its name in upper case, a
    // space and its first argument, e.g. "INFO memory", "GET
    // redlock:__deployment__") starts with the first string (compared
    // without case) is replaced with the second.
    std::vector<std::pair<std::string, std::string>> replace;
    // Bytes sent to the client, unasked: once, `inject_after` after the
    // connection was accepted, when no command is awaiting its reply (and
    // the role is known); and/or appended to the reply that is the
    // `inject_after_reply`th (from 1) to commands whose label starts with
    // `inject_after_command` (empty: every command).
    std::string inject;
    absl::Duration inject_after = absl::InfiniteDuration();
    int inject_after_reply = 0;
    std::string inject_after_command;
    // Every reply is written one byte per second.
    bool drip = false;
    // Once the reply to the first command whose label starts with this was
    // relayed, the client's connection is never read again (kept open).
    std::string stop_reading_after;
    // From `endless_bulk_after` after the connection was accepted, at the
    // first moment no command is awaiting its reply: "$1000000000\r\n", then
    // 'x' at `endless_bulk_rate` bytes a second for as long as the client
    // stays; the client's commands are read and dropped from then on.
    absl::Duration endless_bulk_after = absl::InfiniteDuration();
    int64_t endless_bulk_rate = 8 << 20;
  };

  struct Counters {
    int64_t accepted = 0;
    int64_t lock_connections = 0;        // Whose role turned out kLock.
    int64_t subscriber_connections = 0;  // Whose role turned out kSubscriber.
    // Connections the client closed (EOF or reset on its side), by role.
    int64_t lock_closed_by_client = 0;
    int64_t subscriber_closed_by_client = 0;
    int64_t commands = 0;         // Commands read from clients.
    int64_t replaced = 0;         // Replies replaced.
    int64_t injected = 0;         // Injections sent (idle or appended).
    int64_t endless_bytes = 0;    // Bytes of endless bulk strings sent.
    // Endless bulk strings begun (their header sent); a client that drops
    // the connection at the header may take none of the bytes after it.
    int64_t endless_started = 0;
    int64_t stopped_reading = 0;  // Connections no longer read.
  };

  // Listens on a free port of 127.0.0.1. kInvalidArgument without an
  // upstream port when not standalone; kUnavailable if it cannot listen.
  static absl::StatusOr<std::unique_ptr<RogueServer>> Start(Config config);

  // Stops accepting, closes every connection and joins every thread.
  ~RogueServer();

  RogueServer(const RogueServer&) = delete;
  RogueServer& operator=(const RogueServer&) = delete;

  int port() const;
  // "redis://[:PASSWORD@]127.0.0.1:PORT[/DB]".
  std::string Uri(absl::string_view password = "", int db = 0) const;

  void SetBehaviour(Behaviour behaviour);
  Counters counters() const;

 private:
  class Impl;
  explicit RogueServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_ROGUE_SERVER_H_
