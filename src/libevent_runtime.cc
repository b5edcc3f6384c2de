// Copyright 2026 The redlock Authors.

#include "src/libevent_runtime.h"

#include <event2/event.h>
#include <fcntl.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/event_adapter.h"
#include "src/token.h"

namespace redlock::internal {
namespace {

class LibeventTimer final : public Timer {
 public:
  LibeventTimer(event_base* base, absl::AnyInvocable<void()> fn)
      : fn_(std::move(fn)),
        event_(evtimer_new(base, &LibeventTimer::Fire, this)) {}
  ~LibeventTimer() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
    event_free(event_);
  }

  void Arm(absl::Duration after) override {
    if (after <= absl::ZeroDuration()) {
      // Drops a pending timeout, then runs on the loop's next pass.
      evtimer_del(event_);
      event_active(event_, EV_TIMEOUT, 0);
      return;
    }
    timeval tv = absl::ToTimeval(after);
    evtimer_add(event_, &tv);
  }
  void Cancel() override { evtimer_del(event_); }
  bool armed() const override {
    return event_pending(event_, EV_TIMEOUT, nullptr) != 0;
  }

 private:
  static void Fire(int, short, void* arg) {
    auto* self = static_cast<LibeventTimer*>(arg);
    // The callback may destroy this timer (its owner finishing): keep the
    // callable alive on the stack while it runs.
    absl::AnyInvocable<void()> fn = std::move(self->fn_);
    bool destroyed = false;
    self->destroyed_ = &destroyed;
    fn();
    if (destroyed) return;
    self->destroyed_ = nullptr;
    self->fn_ = std::move(fn);
  }

  absl::AnyInvocable<void()> fn_;
  event* const event_;
  bool* destroyed_ = nullptr;
};

std::string ErrorText(const redisAsyncContext* ac) {
  if (ac != nullptr && ac->err == REDIS_ERR_OOM) {
    // Also what BoundReplyReader's refusal looks like.
    return RefusedReplyText();
  }
  if (ac != nullptr && ac->errstr != nullptr && ac->errstr[0] != '\0') {
    return ac->errstr;
  }
  return "connection closed";
}

// One hiredis async context. The context finds this object through
// ac->data, which is cleared when this object goes: every hiredis callback
// after that (the NULL replies and the disconnect of a context being freed)
// is ignored.
class HiredisConnection final : public Connection {
 public:
  HiredisConnection(redisAsyncContext* ac, ConnectionObserver* observer)
      : ac_(ac), observer_(observer) {
    ac_->data = this;
  }

  ~HiredisConnection() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
    if (ac_ == nullptr) return;
    ac_->data = nullptr;
    // Inside a reply callback hiredis defers the free until it returns.
    redisAsyncFree(ac_);
  }

  bool Send(const std::vector<std::string>& argv) override {
    if (ac_ == nullptr) return false;
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const std::string& arg : argv) {
      ptrs.push_back(arg.data());
      lens.push_back(arg.size());
    }
    return redisAsyncCommandArgv(ac_, &HiredisConnection::ReplyThunk, nullptr,
                                 static_cast<int>(argv.size()), ptrs.data(),
                                 lens.data()) == REDIS_OK;
  }

  void FlushBeforeClose() override {
    if (ac_ == nullptr || !connected_ || in_reply_ > 0) return;
    // On a write error hiredis frees the context right here and reports it
    // through DisconnectThunk, which forgets it without telling the observer.
    quiet_ = true;
    redisAsyncHandleWrite(ac_);
    quiet_ = false;
  }

  static void ConnectThunk(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<HiredisConnection*>(ac->data);
    if (self == nullptr) return;
    if (status != REDIS_OK) {
      // hiredis frees the context once this returns.
      self->ac_->data = nullptr;
      self->ac_ = nullptr;
      self->observer_->OnConnect(absl::UnavailableError(
          absl::StrCat("connect failed: ", ErrorText(ac))));
      return;
    }
    self->connected_ = true;
    self->observer_->OnConnect(absl::OkStatus());
  }

  static void DisconnectThunk(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<HiredisConnection*>(ac->data);
    if (self == nullptr) return;
    // hiredis is freeing the context: it is not ours any more.
    self->ac_->data = nullptr;
    self->ac_ = nullptr;
    if (self->quiet_) return;
    self->observer_->OnLost(absl::UnavailableError(
        absl::StrCat("connection lost: ", ErrorText(ac))));
  }

  static void ReplyThunk(redisAsyncContext* ac, void* reply, void*) {
    auto* self = static_cast<HiredisConnection*>(ac->data);
    // NULL: hiredis is tearing the connection down; OnLost() follows.
    if (self == nullptr || reply == nullptr) return;
    RedisReply converted = FromHiredis(static_cast<redisReply*>(reply));
    bool destroyed = false;
    self->destroyed_ = &destroyed;
    ++self->in_reply_;
    self->observer_->OnReply(std::move(converted));
    if (destroyed) return;
    --self->in_reply_;
    self->destroyed_ = nullptr;
  }

 private:
  redisAsyncContext* ac_;
  ConnectionObserver* const observer_;
  bool connected_ = false;
  bool quiet_ = false;
  int in_reply_ = 0;
  bool* destroyed_ = nullptr;
};

}  // namespace

std::unique_ptr<Timer> LibeventRuntime::NewTimer(
    absl::AnyInvocable<void()> fn) {
  return std::make_unique<LibeventTimer>(base_, std::move(fn));
}

absl::StatusOr<std::unique_ptr<Connection>> LibeventRuntime::Connect(
    const MasterAddress& address, ConnectionObserver* observer) {
  redisAsyncContext* ac = redisAsyncConnect(address.host.c_str(), address.port);
  if (ac == nullptr) {
    return absl::UnavailableError("cannot allocate a connection");
  }
  if (ac->err != 0) {
    absl::Status error =
        absl::UnavailableError(absl::StrCat("connect failed: ", ErrorText(ac)));
    redisAsyncFree(ac);  // Not attached yet: ours to free.
    return error;
  }
  // hiredis 0.14 opens sockets without SOCK_CLOEXEC: a process that forks
  // (the CLI runs a child) must not hand its lock connections down.
  if (int flags = fcntl(ac->c.fd, F_GETFD); flags >= 0) {
    fcntl(ac->c.fd, F_SETFD, flags | FD_CLOEXEC);
  }
  // A reply declaring millions of elements closes the connection instead of
  // making hiredis allocate them (src/redis_reply.h).
  BoundReplyReader(ac->c.reader);
  if (AttachToEventLoop(ac, base_) != REDIS_OK) {
    redisAsyncFree(ac);
    return absl::InternalError("cannot attach to the event loop");
  }
  redisAsyncSetConnectCallback(ac, &HiredisConnection::ConnectThunk);
  redisAsyncSetDisconnectCallback(ac, &HiredisConnection::DisconnectThunk);
  return std::make_unique<HiredisConnection>(ac, observer);
}

absl::StatusOr<std::string> LibeventRuntime::NewToken() {
  return internal::NewToken();
}

}  // namespace redlock::internal
