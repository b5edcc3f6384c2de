// Copyright 2026 The redlock Authors.
//
// The production Runtime (src/transport/runtime.h): libevent timers,
// MonotonicClock (CLOCK_BOOTTIME, which counts a suspension of the machine),
// the library's own connections (src/transport/wire.h: TCP, TLS, Unix sockets),
// the kernel's CSPRNG for tokens. Loop thread only.

#ifndef REDLOCK_SRC_TRANSPORT_LIBEVENT_RUNTIME_H_
#define REDLOCK_SRC_TRANSPORT_LIBEVENT_RUNTIME_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "src/transport/runtime.h"
#include "src/transport/tls.h"

struct event_base;
struct event;

namespace redlock::internal {

class LibeventRuntime final : public Runtime {
 public:
  // `base` must outlive the runtime and everything it made. `tls`: for
  // masters reached over TLS (null if there are none).
  explicit LibeventRuntime(event_base* base,
                           std::shared_ptr<const TlsContext> tls = nullptr)
      : base_(base), tls_(std::move(tls)) {}
  // Closes the mailbox (later posts are dropped) and its pipe.
  ~LibeventRuntime() override;

  event_base* base() const { return base_; }

  MonotonicTime Now() override { return MonotonicClock::now(); }
  // Due on Now()'s clock: a timer runs no earlier than `after` on it, and one
  // that fell due while the machine was suspended (libevent's own timers run
  // on CLOCK_MONOTONIC, which stops) runs within a second of the resume.
  std::unique_ptr<Timer> NewTimer(absl::AnyInvocable<void()> fn) override;
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const MasterAddress& address, ConnectionObserver* observer,
      ConnectionMode mode) override;
  uint64_t RandomBits() override { return absl::Uniform<uint64_t>(bitgen_); }
  absl::StatusOr<std::string> NewToken() override;
  // A pipe watched by the loop: a post writes one byte to wake it.
  absl::StatusOr<std::shared_ptr<Mailbox>> GetMailbox() override;

 private:
  class PipeMailbox;
  static void OnMailbox(int fd, short events, void* arg);

  event_base* const base_;
  const std::shared_ptr<const TlsContext> tls_;
  std::shared_ptr<PipeMailbox> mailbox_;
  event* mailbox_event_ = nullptr;
  int mailbox_read_fd_ = -1;
  absl::BitGen bitgen_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_LIBEVENT_RUNTIME_H_
