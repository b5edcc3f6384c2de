// Copyright 2026 The redlock Authors.

#include "tests/support/redis_client.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace redlock::testing {
namespace {

// hiredis 0.14 writes with write(2), so writing to a connection the server
// has reset raises SIGPIPE, which would kill the test binary. Blocking it for
// the duration of one call and discarding the one it raised keeps the test
// alive without ignoring SIGPIPE process-wide, which would hide a library
// that forgets to handle it.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
  }
  ~ScopedSigpipeBlock() {
    const int saved_errno = errno;
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&sigpipe_, nullptr, &zero) == -1 &&
               errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    errno = saved_errno;
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t sigpipe_;
  sigset_t old_mask_;
  bool was_pending_ = false;
};

Reply ConvertReply(const redisReply& r) {
  Reply reply;
  switch (r.type) {
    case REDIS_REPLY_STATUS:
      reply.type = Reply::Type::kStatus;
      reply.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      reply.type = Reply::Type::kError;
      reply.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STRING:
      reply.type = Reply::Type::kString;
      reply.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      reply.type = Reply::Type::kInteger;
      reply.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      reply.type = Reply::Type::kArray;
      reply.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) {
        reply.elements.push_back(ConvertReply(*r.element[i]));
      }
      break;
    case REDIS_REPLY_NIL:
    default:
      reply.type = Reply::Type::kNil;
      break;
  }
  return reply;
}

// Maps an I/O error recorded by hiredis; `saved_errno` is errno right after
// the failing call.
absl::Status StatusFromContext(const redisContext& c, int saved_errno,
                               absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", c.errstr);
  if (c.err == REDIS_ERR_IO &&
      (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK ||
       saved_errno == ETIMEDOUT)) {
    return absl::DeadlineExceededError(message);
  }
  return absl::UnavailableError(message);
}

absl::Status UnexpectedReply(absl::string_view command, const Reply& reply) {
  return absl::UnknownError(
      absl::StrCat(command, " replied ", reply.DebugString()));
}

}  // namespace

absl::string_view ReplyTypeName(Reply::Type type) {
  switch (type) {
    case Reply::Type::kStatus:
      return "status";
    case Reply::Type::kError:
      return "error";
    case Reply::Type::kInteger:
      return "integer";
    case Reply::Type::kString:
      return "string";
    case Reply::Type::kNil:
      return "nil";
    case Reply::Type::kArray:
      return "array";
  }
  return "unknown";
}

std::string Reply::DebugString() const {
  switch (type) {
    case Type::kStatus:
      return absl::StrCat("+", str);
    case Type::kError:
      return absl::StrCat("-", str);
    case Type::kInteger:
      return absl::StrCat("(integer) ", integer);
    case Type::kString:
      return absl::StrCat("\"", str, "\"");
    case Type::kNil:
      return "(nil)";
    case Type::kArray:
      return absl::StrCat(
          "[",
          absl::StrJoin(elements, ", ",
                        [](std::string* out, const Reply& element) {
                          out->append(element.DebugString());
                        }),
          "]");
  }
  return "(unknown)";
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Connect(
    const std::string& host, int port, absl::Duration timeout,
    std::string password) {
  const std::string where = absl::StrCat(host, ":", port);
  if (timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout must be positive");
  }
  const struct timeval tv = absl::ToTimeval(timeout);
  redisContext* context = nullptr;
  int saved_errno = 0;
  {
    ScopedSigpipeBlock block_sigpipe;
    context = redisConnectWithTimeout(host.c_str(), port, tv);
    saved_errno = errno;
  }
  return Finish(context, saved_errno, where, timeout, password);
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::ConnectUnix(
    const std::string& path, absl::Duration timeout, std::string password) {
  const std::string where = absl::StrCat("unix:", path);
  if (timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout must be positive");
  }
  const struct timeval tv = absl::ToTimeval(timeout);
  redisContext* context = nullptr;
  int saved_errno = 0;
  {
    ScopedSigpipeBlock block_sigpipe;
    context = redisConnectUnixWithTimeout(path.c_str(), tv);
    saved_errno = errno;
  }
  return Finish(context, saved_errno, where, timeout, password);
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Finish(
    redisContext* context, int saved_errno, const std::string& where,
    absl::Duration timeout, const std::string& password) {
  const struct timeval tv = absl::ToTimeval(timeout);
  if (context == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("connect to ", where, ": cannot allocate a context"));
  }
  if (context->err != 0) {
    absl::Status status = StatusFromContext(*context, saved_errno,
                                            absl::StrCat("connect to ", where));
    redisFree(context);
    return status;
  }
  if (redisSetTimeout(context, tv) != REDIS_OK) {
    absl::Status status =
        StatusFromContext(*context, errno, absl::StrCat("timeout on ", where));
    redisFree(context);
    return status;
  }
  std::unique_ptr<RedisClient> client(new RedisClient(context, timeout));
  if (!password.empty()) {
    absl::StatusOr<Reply> reply = client->Command({"AUTH", password});
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      return absl::UnauthenticatedError(
          absl::StrCat("AUTH on ", where, ": ", reply->str));
    }
  }
  return client;
}

RedisClient::RedisClient(redisContext* context, absl::Duration timeout)
    : context_(context), timeout_(timeout) {}

RedisClient::~RedisClient() { redisFree(context_); }

absl::StatusOr<Reply> RedisClient::Command(std::vector<std::string> argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  if (context_->err != 0) {
    return absl::UnavailableError(absl::StrCat(
        "connection broken by an earlier error: ", context_->errstr));
  }
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  void* raw = nullptr;
  int saved_errno = 0;
  {
    ScopedSigpipeBlock block_sigpipe;
    raw = redisCommandArgv(context_, static_cast<int>(args.size()), args.data(),
                           lengths.data());
    saved_errno = errno;
  }
  if (raw == nullptr) {
    return StatusFromContext(*context_, saved_errno,
                             absl::StrCat(argv[0], " (timeout ",
                                          absl::FormatDuration(timeout_), ")"));
  }
  auto* reply = static_cast<redisReply*>(raw);
  Reply converted = ConvertReply(*reply);
  freeReplyObject(reply);
  return converted;
}

absl::StatusOr<Reply> RedisClient::ReadReply() {
  if (context_->err != 0) {
    return absl::UnavailableError(absl::StrCat(
        "connection broken by an earlier error: ", context_->errstr));
  }
  void* raw = nullptr;
  int status = REDIS_OK;
  int saved_errno = 0;
  {
    ScopedSigpipeBlock block_sigpipe;
    status = redisGetReply(context_, &raw);
    saved_errno = errno;
  }
  if (status != REDIS_OK || raw == nullptr) {
    return StatusFromContext(
        *context_, saved_errno,
        absl::StrCat("read (timeout ", absl::FormatDuration(timeout_), ")"));
  }
  auto* reply = static_cast<redisReply*>(raw);
  Reply converted = ConvertReply(*reply);
  freeReplyObject(reply);
  return converted;
}

absl::Status RedisClient::Ping() {
  absl::StatusOr<Reply> reply = Command({"PING"});
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kStatus || reply->str != "PONG") {
    return UnexpectedReply("PING", *reply);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> RedisClient::Get(
    const std::string& key) {
  absl::StatusOr<Reply> reply = Command({"GET", key});
  if (!reply.ok()) return reply.status();
  switch (reply->type) {
    case Reply::Type::kString:
      return std::optional<std::string>(std::move(reply->str));
    case Reply::Type::kNil:
      return std::optional<std::string>();
    default:
      return UnexpectedReply("GET", *reply);
  }
}

absl::StatusOr<int64_t> RedisClient::Pttl(const std::string& key) {
  absl::StatusOr<Reply> reply = Command({"PTTL", key});
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("PTTL", *reply);
  }
  return reply->integer;
}

absl::StatusOr<int64_t> RedisClient::Dbsize() {
  absl::StatusOr<Reply> reply = Command({"DBSIZE"});
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kInteger) {
    return UnexpectedReply("DBSIZE", *reply);
  }
  return reply->integer;
}

absl::Status RedisClient::Set(const std::string& key, const std::string& value,
                              absl::Duration ttl) {
  std::vector<std::string> argv = {"SET", key, value};
  if (ttl > absl::ZeroDuration()) {
    const int64_t ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl));
    argv.push_back("PX");
    argv.push_back(absl::StrCat(ms));
  }
  absl::StatusOr<Reply> reply = Command(std::move(argv));
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::Type::kStatus || reply->str != "OK") {
    return UnexpectedReply("SET", *reply);
  }
  return absl::OkStatus();
}

}  // namespace redlock::testing
