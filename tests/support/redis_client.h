// Copyright 2026 The redlock Authors.
//
// RedisClient: a tiny blocking Redis client for tests, to look at a master
// directly (what key is there, with what TTL) without going through the
// library under test.
//
//   auto client = RedisClient::Connect("127.0.0.1", server->port());
//   ASSERT_TRUE(client.ok()) << client.status();
//   absl::StatusOr<std::optional<std::string>> value =
//       (*client)->Get("redlock:recalc-ratings");
//
// Every call is bounded by the timeout given to Connect(): a stopped or
// blackholed server makes a call fail with kDeadlineExceeded instead of
// hanging the test. After any I/O error (timeout, reset, EOF) the connection
// is unusable and every later call fails; Connect() again.
//
// Not thread-safe: use one client from one thread at a time.

#ifndef REDLOCK_TESTS_SUPPORT_REDIS_CLIENT_H_
#define REDLOCK_TESTS_SUPPORT_REDIS_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct redisContext;

namespace redlock::testing {

// One Redis reply, copied out of hiredis.
struct Reply {
  enum class Type { kStatus, kError, kInteger, kString, kNil, kArray };

  Type type = Type::kNil;
  std::string str;              // kStatus, kError and kString.
  int64_t integer = 0;          // kInteger.
  std::vector<Reply> elements;  // kArray.

  bool is_error() const { return type == Type::kError; }
  // "+OK", "-ERR ...", "(integer) 3", "\"value\"", "(nil)", "[...]": for
  // assertion messages.
  std::string DebugString() const;
};

absl::string_view ReplyTypeName(Reply::Type type);

class RedisClient {
 public:
  // Connects to host:port within `timeout`, which then also bounds every
  // call. If `password` is not empty, sends AUTH first. Errors:
  //   kUnavailable       refused, reset, or no server there.
  //   kDeadlineExceeded  no connection or no answer to AUTH within `timeout`.
  //   kUnauthenticated   the server rejected the password.
  static absl::StatusOr<std::unique_ptr<RedisClient>> Connect(
      const std::string& host, int port,
      absl::Duration timeout = absl::Seconds(2), std::string password = "");
  // The same over the Unix domain socket at `path` (a server's
  // --unixsocket). Errors as Connect().
  static absl::StatusOr<std::unique_ptr<RedisClient>> ConnectUnix(
      const std::string& path, absl::Duration timeout = absl::Seconds(2),
      std::string password = "");

  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends one command and waits for its reply. A Redis error reply is OK with
  // type kError, so tests can assert on it. Non-OK means the connection
  // failed: kDeadlineExceeded (no reply within the timeout), kUnavailable
  // (reset, EOF, or an earlier error broke the connection), kInvalidArgument
  // (empty argv).
  absl::StatusOr<Reply> Command(std::vector<std::string> argv);

  // Waits for the next reply the server sends without a command of ours
  // waiting for it: a pub/sub message ["message", channel, payload] on a
  // subscribed connection, or the second and later replies of a SUBSCRIBE
  // or UNSUBSCRIBE of several channels. Errors as Command(); a timeout
  // leaves the connection unusable, so to show that nothing came, send a
  // PING (["pong", ""] when subscribed) and read its reply instead.
  absl::StatusOr<Reply> ReadReply();

  // Convenience wrappers. A Redis error reply, or a reply of an unexpected
  // type, becomes kUnknown with the reply in the message.
  absl::Status Ping();
  // The value, or nullopt if the key does not exist.
  absl::StatusOr<std::optional<std::string>> Get(const std::string& key);
  // PTTL: milliseconds left, -1 for a key without TTL, -2 for no key.
  absl::StatusOr<int64_t> Pttl(const std::string& key);
  absl::StatusOr<int64_t> Dbsize();
  // SET key value, with PX ttl if ttl > 0 (rounded down to whole
  // milliseconds, at least 1ms).
  absl::Status Set(const std::string& key, const std::string& value,
                   absl::Duration ttl = absl::ZeroDuration());

 private:
  RedisClient(redisContext* context, absl::Duration timeout);
  // Connect() and ConnectUnix() after the connection attempt: checks it,
  // sets the timeout, sends AUTH. Takes `context`.
  static absl::StatusOr<std::unique_ptr<RedisClient>> Finish(
      redisContext* context, int saved_errno, const std::string& where,
      absl::Duration timeout, const std::string& password);

  redisContext* context_;  // Owned.
  absl::Duration timeout_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_REDIS_CLIENT_H_
