// Copyright 2026 The redlock Authors.
//
// One Redis master: a connection from the Runtime (hiredis in production, a
// simulated network in tests/sim), its handshake (AUTH, SELECT, SCRIPT LOAD,
// INFO, TIME, the deployment marker), its own request timers, and
// reconnection with backoff. Loop thread only.
//
// Timeouts. A request with no reply within request_timeout is answered
// kDeadlineExceeded at once, but the connection stays open: commands queued
// behind it (a release behind a late SET) must still reach the master in
// order. Only when the oldest request has waited stalled_connection_timeout is
// the connection closed and reconnected; before closing, whatever is still in
// the output buffer is handed to the network, so a release queued behind a
// stuck request is not lost.

#ifndef REDLOCK_SRC_ENGINE_MASTER_H_
#define REDLOCK_SRC_ENGINE_MASTER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/persistence.h"
#include "src/algorithm/redis_reply.h"
#include "src/engine/master_identity.h"
#include "src/engine/master_link.h"
#include "src/transport/deferred.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

struct MasterConfig {
  MasterAddress address;  // Host must be numeric.
  absl::Duration request_timeout = absl::Milliseconds(50);
  absl::Duration connect_timeout = absl::Milliseconds(250);
  absl::Duration stalled_timeout = absl::Seconds(1);
  ReconnectBackoff backoff;
  // If set, the handshake also reads INFO server and this key (the
  // deployment marker), for MasterIdentity.
  std::string marker_key;
};

// AUTH [user] password for `address`; empty if it has no password. Pure.
std::vector<std::string> AuthArgv(const MasterAddress& address);
// The reconnect delay after `current` under `backoff`. Pure.
absl::Duration NextBackoff(const ReconnectBackoff& backoff,
                           absl::Duration current);

struct MasterCounters {
  int64_t sent = 0;
  int64_t replies = 0;
  int64_t error_replies = 0;
  int64_t timeouts = 0;
  int64_t connection_failures = 0;
  int64_t connects = 0;
  int64_t noscript_fallbacks = 0;
};

class Master final : public MasterLink, private ConnectionObserver {
 public:
  // Starts connecting at once. `runtime` must outlive the master.
  Master(Runtime* runtime, MasterConfig config);
  // Answers every outstanding request with kCancelled, then closes.
  ~Master() override;

  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  const std::string& name() const override { return name_; }
  const MasterConfig& config() const { return config_; }
  void Send(const Command& command, ReplyCallback done) override;
  // Kept (at most kMaxHeldCleanups, the oldest dropped first) while its
  // connection fails or closes before it is answered.
  void SendCleanup(const Command& command, absl::Duration keep_for) override;
  static constexpr size_t kMaxHeldCleanups = 1024;
  void Send(std::shared_ptr<const Command> command,
            ReplyCallback done) override;

  // Connected and handshake answered. A reply to a command sent through
  // Send() arrives only while ready() (the handshake is queued first), so
  // identity() then describes the server that sent the reply.
  bool ready() const { return state_ == State::kConnected && handshake_ok_; }
  const MasterCounters& counters() const { return counters_; }
  const MasterIdentity& identity() const { return identity_; }
  // The engine's view of the marker, once it has written one.
  // A read of the marker found it absent, or unchanged, at this moment.
  void set_marker_read_at(MonotonicTime at) { identity_.marker_read_at = at; }
  void set_marker(absl::string_view value, MonotonicTime at) {
    ReadMarkerValue(value, &identity_);
    identity_.marker_read_at = at;
  }
  // Called on the loop thread after every handshake that completes and after
  // every failed connection attempt. It may Send(); it must not destroy the
  // master.
  void set_on_state_change(std::function<void()> fn) {
    on_state_change_ = std::move(fn);
  }
  // A connection attempt failed at least once since the master was made.
  bool ever_failed() const { return ever_failed_; }
  // Why the last connection failed or closed; OK if none did.
  const absl::Status& last_error() const { return last_error_; }
  // The TLS protocol and cipher of the current connection, once connected
  // ("TLSv1.3 TLS_AES_256_GCM_SHA384"); empty for other transports.
  const std::string& tls_description() const { return tls_description_; }

 private:
  enum class State { kDisconnected, kConnecting, kConnected };
  enum class Kind {
    kUser,
    kAuth,
    kSelect,
    kScriptLoad,
    kInfo,
    kInfoMemory,
    kConfig,
    kInfoPersistence,
    kTime,
    kMarker
  };

  struct Pending {
    MonotonicTime sent_at;
    Kind kind = Kind::kUser;
    // Empty once answered (by a timeout); the reply is then dropped.
    ReplyCallback done;
    // Script calls sent with EVALSHA keep the command to resend as EVAL.
    std::shared_ptr<const Command> script_call;
    bool last_handshake_step = false;
  };

  // Send() with the command to keep for an EVAL resend (`kept`, null for a
  // plain command): `command` is *kept when kept is not null.
  void Send(std::shared_ptr<const Command> kept, const Command& command,
            ReplyCallback done);
  void Connect();
  // A clean-up not yet known to have reached the master, and until when it
  // is worth sending.
  struct HeldCleanup {
    std::shared_ptr<const Command> command;
    MonotonicTime until;
  };
  // Sends `held`; keeps it again if the connection fails first.
  void SendHeld(HeldCleanup held);
  // Closes the connection (flushing what it can) and answers every pending
  // request with `reason`; reconnects later.
  void Close(absl::Status reason);
  // The connection is gone or going: from now on sends fail, and every
  // pending request is answered with `reason`, in order.
  void ForgetConnection(absl::Status reason);
  void ScheduleReconnect();
  void QueueHandshake();
  // Writes argv to the connection and queues `pending`; answers it later with
  // an error if the connection refuses the command. `encoded`: empty, or
  // argv's RESP text (Command::encoded).
  void Write(absl::Span<const absl::string_view> argv, Pending pending,
             absl::string_view encoded = {});
  void Write(const std::vector<std::string>& argv, Pending pending) {
    absl::InlinedVector<absl::string_view, 8> views(argv.begin(), argv.end());
    Write(views, std::move(pending));
  }
  void FailLater(ReplyCallback done, absl::Status status);
  void ArmRequestTimer();

  // ConnectionObserver.
  void OnConnect(absl::Status status) override;
  void OnReply(RedisReply reply) override;
  void OnLost(absl::Status why) override;

  void OnHandshakeReply(const Pending& pending, const RedisReply& reply);
  // The type the reply to handshake step `kind` must have; "" if it has it.
  static absl::string_view ExpectedType(Kind kind, const RedisReply& reply);
  // The handshake step `kind` names, for messages ("INFO", "CONFIG GET").
  static absl::string_view StepName(Kind kind);
  // Takes what a handshake reply of `kind` tells into pending_identity_;
  // false if the reply closed the connection (an unknown script SHA-1, a
  // TIME that is not one).
  bool RecordHandshakeReply(Kind kind, const RedisReply& reply);
  void OnRequestTimer();
  void OnConnectTimeout();
  MonotonicTime Now() { return runtime_->Now(); }

  Runtime* const runtime_;
  MasterConfig config_;
  std::string name_;

  State state_ = State::kDisconnected;
  std::unique_ptr<Connection> connection_;
  MonotonicTime connected_at_;
  // When request_timer_ fires, while it is pending.
  MonotonicTime timer_wake_;
  bool handshake_ok_ = false;
  bool shutting_down_ = false;
  absl::Status last_error_;
  std::string tls_description_;
  absl::Duration next_backoff_;

  std::deque<Pending> pending_;
  Deferred deferred_;
  std::unique_ptr<Timer> request_timer_;
  std::unique_ptr<Timer> connect_timer_;
  std::unique_ptr<Timer> reconnect_timer_;
  MasterCounters counters_;
  MasterIdentity identity_;
  MasterIdentity pending_identity_;  // Filled by the handshake in progress.
  // The handshake's CONFIG GET replies so far (kPersistenceConfigNames):
  // their name, value pairs in one array, or the first error.
  RedisReply config_replies_;
  size_t config_replies_seen_ = 0;
  // Scripts not loaded by the handshake that this connection has been sent
  // SCRIPT LOAD for (Script::loaded_on_connect); emptied on every connect.
  std::vector<const Script*> loaded_on_demand_;
  // Clean-ups to send on the next connection (SendCleanup()).
  std::deque<HeldCleanup> held_cleanups_;
  std::function<void()> on_state_change_;
  bool ever_failed_ = false;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_MASTER_H_
