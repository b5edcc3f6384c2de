// Copyright 2026 The redlock Authors.
//
// Everything the engine takes from the world outside its own logic: the
// monotonic clock, timers, "later on this loop", connections to masters,
// randomness for retry jitter and lock tokens. Production runs it on libevent
// with the library's own connections (LibeventRuntime,
// src/transport/libevent_runtime.h; src/transport/wire.h); the deterministic
// simulation (tests/sim) runs the very same engine on a discrete-event loop
// with simulated masters and a simulated network. There is no second
// implementation of the algorithm and no #ifdef: only this seam.
//
// Single-threaded: every call, and every callback a runtime makes, happens on
// the one loop thread that owns the engine — except Mailbox::Post().

#ifndef REDLOCK_SRC_TRANSPORT_RUNTIME_H_
#define REDLOCK_SRC_TRANSPORT_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {

// A one-shot timer made by Runtime::NewTimer(). Its callback runs on the
// loop, never inside Arm(). Destroying it cancels it.
class Timer {
 public:
  virtual ~Timer() = default;
  // Runs the callback once, `after` from now; zero or negative: on a later
  // turn of the loop, after what is already due. Re-arming an armed timer
  // moves it.
  virtual void Arm(absl::Duration after) = 0;
  virtual void Cancel() = 0;
  // Armed and not yet run.
  virtual bool armed() const = 0;
};

// What a Connection reports. Calls come from the loop, never from inside a
// Connection method; the observer may destroy the connection inside any of
// them, and then gets no further call.
class ConnectionObserver {
 public:
  virtual ~ConnectionObserver() = default;
  // Once. OK: connected, commands flow. An error: the attempt failed and the
  // connection is dead (no further call).
  virtual void OnConnect(absl::Status status) = 0;
  // ConnectionMode::kReplies: the reply to the oldest command not yet
  // answered, in the order sent. A reply, or a byte, that arrives while no
  // command awaits one is not passed on: the connection is lost (OnLost)
  // instead, since the stream can no longer be matched to commands.
  virtual void OnReply(RedisReply reply) = 0;
  // ConnectionMode::kPushes: every message the server sends, in order
  // (pub/sub pushes and the replies to commands alike; the observer matches
  // them). Never called in kReplies mode.
  virtual void OnPush(RedisReply message) {}
  // Once, after OnConnect(OK): the connection is gone (reset, closed by the
  // server, bytes the reader refused, a reply nobody asked for). Commands not
  // yet answered never will be; no further call.
  virtual void OnLost(absl::Status why) = 0;
};

// What a connection carries. kReplies: a request/response stream, every
// reply matched to the oldest command awaiting one. kPushes: a pub/sub
// stream, whose messages arrive unasked.
enum class ConnectionMode { kReplies, kPushes };

// One connection to one Redis server, made by Runtime::Connect(). Commands
// reach the server in the order of Send() calls. Destroying it closes it at
// once without a further observer call; commands already handed to the
// network may still reach the server (as with TCP).
class Connection {
 public:
  virtual ~Connection() = default;
  // Queues `argv` for the server (may be called while connecting). False if
  // the connection cannot take it (closing or gone). The bytes are copied
  // before it returns: `argv` need not outlive the call.
  virtual bool SendArgs(absl::Span<const absl::string_view> argv) = 0;
  // The same, where `encoded` is empty or exactly the RESP text of the
  // command (AppendRespCommand()): then `argv` is that command's arguments or
  // empty (a command made as its text alone), and a connection may copy
  // those bytes instead of encoding `argv`. This default, for a connection
  // that takes arguments, reads them back out of `encoded`.
  virtual bool SendEncoded(absl::Span<const absl::string_view> argv,
                           absl::string_view encoded) {
    if (encoded.empty() || !argv.empty()) return SendArgs(argv);
    std::vector<absl::string_view> views;
    if (!SplitRespCommand(encoded, &views)) return false;
    return SendArgs(views);
  }
  // The same, for an argv of strings.
  bool Send(const std::vector<std::string>& argv) {
    absl::InlinedVector<absl::string_view, 8> views(argv.begin(), argv.end());
    return SendArgs(views);
  }
  // Before closing: hands whatever is still buffered to the network if that
  // can be done without blocking, so a release queued behind a stuck request
  // is not lost. Makes no observer call. Does nothing from inside an
  // observer call.
  virtual void FlushBeforeClose() = 0;
  // For a TLS connection once connected: the protocol version and cipher,
  // e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384". Empty otherwise.
  virtual std::string TlsDescription() const { return std::string(); }
  // While connecting: how far it got, for a connect timeout's message, e.g.
  // "TCP connected; the server did not answer the TLS handshake". Empty if
  // there is nothing to add.
  virtual std::string ConnectProgress() const { return std::string(); }
};

// The one way into the loop from other threads (a Cancellation cancelled
// elsewhere). Thread-safe, unlike everything else here.
class Mailbox {
 public:
  virtual ~Mailbox() = default;
  // Runs `fn` on the loop soon. Once the runtime that made the mailbox is
  // gone, `fn` is destroyed without running.
  virtual void Post(absl::AnyInvocable<void()> fn) = 0;
};

// Clock::Now() is the monotonic clock behind every safety decision.
class Runtime : public Clock {
 public:
  // The runtime's mailbox, made on first use; it may outlive the runtime.
  // kInternal if it cannot be made (out of file descriptors).
  virtual absl::StatusOr<std::shared_ptr<Mailbox>> GetMailbox() = 0;

  // A timer that runs `fn` on the loop.
  virtual std::unique_ptr<Timer> NewTimer(absl::AnyInvocable<void()> fn) = 0;

  // Starts connecting to `address` (numeric host, or a Unix socket), over
  // TLS for Transport::kTls; `observer` must outlive the connection. For
  // TLS, OnConnect(OK) comes once the handshake has completed. An error if
  // the attempt failed at once (then no observer call is made).
  virtual absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const MasterAddress& address, ConnectionObserver* observer,
      ConnectionMode mode) = 0;

  // Uniform random bits, for retry jitter.
  virtual uint64_t RandomBits() = 0;

  // A new lock token: 32 lowercase hex digits, never repeated. Production
  // reads the kernel's CSPRNG (src/algorithm/token.h); kInternal if it cannot.
  virtual absl::StatusOr<std::string> NewToken() = 0;

  // The clock Lock::remaining() reads, from any thread and for as long as
  // any Lock exists (it may outlive the engine). Default: Clock::Real(), the
  // same clock as Now() in production.
  virtual Clock* LockClock() { return Clock::Real(); }
};

// absl::BitGenRef-compatible view of Runtime::RandomBits().
class RuntimeBits {
 public:
  using result_type = uint64_t;
  explicit RuntimeBits(Runtime* runtime) : runtime_(runtime) {}
  static constexpr result_type(min)() { return 0; }
  static constexpr result_type(max)() { return ~result_type{0}; }
  result_type operator()() { return runtime_->RandomBits(); }

 private:
  Runtime* runtime_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_RUNTIME_H_
