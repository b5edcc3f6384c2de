// Copyright 2026 The redlock Authors.

#include "src/libevent_runtime.h"

#include <event2/event.h>
#include <fcntl.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/event_adapter.h"
#include "src/token.h"

namespace redlock::internal {
namespace {

// libevent's timers run on CLOCK_MONOTONIC, which stops while the machine is
// suspended; the engine's times are on MonotonicClock (CLOCK_BOOTTIME), which
// does not. A timer is therefore due at a MonotonicClock time: it sleeps on
// libevent at most kTimerSlice at a time and, on waking, re-reads the clock,
// running its callback only once that time has come. A timer never runs
// early on MonotonicClock, and one that fell due during a suspension runs
// within kTimerSlice of the resume rather than after the rest of its
// CLOCK_MONOTONIC delay.
constexpr absl::Duration kTimerSlice = absl::Seconds(1);

class LibeventTimer final : public Timer {
 public:
  LibeventTimer(event_base* base, Clock* clock, absl::AnyInvocable<void()> fn)
      : clock_(clock),
        fn_(std::move(fn)),
        event_(evtimer_new(base, &LibeventTimer::Fire, this)) {}
  ~LibeventTimer() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
    event_free(event_);
  }

  void Arm(absl::Duration after) override {
    if (after <= absl::ZeroDuration()) {
      // Drops a pending timeout, then runs on the loop's next pass.
      evtimer_del(event_);
      due_ = MonotonicTime::min();
      event_active(event_, EV_TIMEOUT, 0);
      return;
    }
    const MonotonicTime now = clock_->Now();
    // Saturates instead of overflowing (an infinite `after`: never due).
    due_ = after < ToDuration(MonotonicTime::max() - now)
               ? now + ToChrono(after)
               : MonotonicTime::max();
    Sleep(after);
  }
  void Cancel() override { evtimer_del(event_); }
  bool armed() const override {
    return event_pending(event_, EV_TIMEOUT, nullptr) != 0;
  }

 private:
  void Sleep(absl::Duration left) {
    timeval tv = absl::ToTimeval(std::min(left, kTimerSlice));
    evtimer_add(event_, &tv);
  }

  static void Fire(int, short, void* arg) {
    auto* self = static_cast<LibeventTimer*>(arg);
    const MonotonicTime now = self->clock_->Now();
    if (now < self->due_) {
      self->Sleep(ToDuration(self->due_ - now));
      return;
    }
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

  Clock* const clock_;
  absl::AnyInvocable<void()> fn_;
  event* const event_;
  MonotonicTime due_;  // When the armed callback is to run.
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
  return std::make_unique<LibeventTimer>(base_, this, std::move(fn));
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

class LibeventRuntime::PipeMailbox final : public Mailbox {
 public:
  explicit PipeMailbox(int write_fd) : write_fd_(write_fd) {}
  ~PipeMailbox() override { Close(); }

  void Post(absl::AnyInvocable<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (write_fd_ < 0) return;  // The runtime is gone; `fn` is dropped.
    const bool wake = posted_.empty();
    posted_.push_back(std::move(fn));
    if (!wake) return;  // A byte is already on its way.
    const char byte = 0;
    // Non-blocking: a full pipe already wakes the loop.
    while (write(write_fd_, &byte, 1) < 0 && errno == EINTR) {
    }
  }

  // Loop thread.
  std::vector<absl::AnyInvocable<void()>> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(posted_);
  }

  // Later posts are dropped; what was posted is destroyed unrun.
  void Close() {
    std::vector<absl::AnyInvocable<void()>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    if (write_fd_ >= 0) close(write_fd_);
    write_fd_ = -1;
    dropped.swap(posted_);
  }

 private:
  std::mutex mu_;
  int write_fd_;                                    // Guarded by mu_.
  std::vector<absl::AnyInvocable<void()>> posted_;  // Guarded by mu_.
};

absl::StatusOr<std::shared_ptr<Mailbox>> LibeventRuntime::GetMailbox() {
  if (mailbox_ != nullptr) return mailbox_;
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot make the mailbox's pipe: errno ", errno));
  }
  mailbox_event_ = event_new(base_, fds[0], EV_READ | EV_PERSIST,
                             &LibeventRuntime::OnMailbox, this);
  if (mailbox_event_ == nullptr || event_add(mailbox_event_, nullptr) != 0) {
    if (mailbox_event_ != nullptr) event_free(mailbox_event_);
    mailbox_event_ = nullptr;
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError("cannot watch the mailbox's pipe");
  }
  mailbox_read_fd_ = fds[0];
  mailbox_ = std::make_shared<PipeMailbox>(fds[1]);
  return mailbox_;
}

void LibeventRuntime::OnMailbox(int fd, short, void* arg) {
  char buffer[64];
  while (read(fd, buffer, sizeof(buffer)) > 0) {
  }
  auto* self = static_cast<LibeventRuntime*>(arg);
  for (auto& fn : self->mailbox_->Take()) fn();
}

LibeventRuntime::~LibeventRuntime() {
  if (mailbox_ == nullptr) return;
  mailbox_->Close();
  event_free(mailbox_event_);
  close(mailbox_read_fd_);
}

}  // namespace redlock::internal
