// Copyright 2026 The redlock Authors.

#include "src/transport/libevent_runtime.h"

#include <event2/event.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/algorithm/token.h"
#include "src/transport/wire.h"

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

}  // namespace

std::unique_ptr<Timer> LibeventRuntime::NewTimer(
    absl::AnyInvocable<void()> fn) {
  return std::make_unique<LibeventTimer>(base_, this, std::move(fn));
}

absl::StatusOr<std::unique_ptr<Connection>> LibeventRuntime::Connect(
    const MasterAddress& address, ConnectionObserver* observer,
    ConnectionMode mode) {
  return OpenWireConnection(base_, address, tls_, observer, mode);
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
