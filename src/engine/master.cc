// Copyright 2026 The redlock Authors.

#include "src/engine/master.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/vote.h"

namespace redlock::internal {
namespace {

MonotonicClock::duration Chrono(absl::Duration d) {
  return std::chrono::duration_cast<MonotonicClock::duration>(
      absl::ToChronoNanoseconds(d));
}

}  // namespace

absl::string_view Master::ExpectedType(Kind kind, const RedisReply& reply) {
  using Type = RedisReply::Type;
  auto is = [&](Type a, Type b) { return reply.type == a || reply.type == b; };
  switch (kind) {
    case Kind::kAuth:
    case Kind::kSelect:
      return is(Type::kStatus, Type::kStatus) ? "" : "a status";
    case Kind::kScriptLoad:
    case Kind::kInfo:
    case Kind::kInfoMemory:
    case Kind::kInfoPersistence:
      return is(Type::kString, Type::kString) ? "" : "a bulk string";
    case Kind::kConfig:
      // An error is an answer too: unknown persistence (an ACL without
      // +config|get, a proxy), which the restart guard takes as not durable.
      return is(Type::kArray, Type::kError) ? "" : "an array or an error";
    case Kind::kTime:
      return is(Type::kArray, Type::kArray) ? "" : "an array";
    case Kind::kMarker:
      return is(Type::kString, Type::kNil) ? "" : "a bulk string or nil";
    case Kind::kUser:
      break;
  }
  return "";
}

Master::Master(Runtime* runtime, MasterConfig config)
    : runtime_(runtime),
      config_(std::move(config)),
      name_(config_.address.Name()),
      next_backoff_(config_.backoff.initial),
      deferred_(runtime),
      request_timer_(runtime->NewTimer([this] { OnRequestTimer(); })),
      connect_timer_(runtime->NewTimer([this] { OnConnectTimeout(); })),
      reconnect_timer_(runtime->NewTimer([this] { Connect(); })) {
  Connect();
}

Master::~Master() {
  shutting_down_ = true;
  reconnect_timer_->Cancel();
  connect_timer_->Cancel();
  request_timer_->Cancel();
  Close(absl::CancelledError("the client was shut down"));
  // Answers queued for later (sends while disconnected) still run once.
  deferred_.RunAll();
}

void Master::Send(const Command& command, ReplyCallback done) {
  Send(command.script != nullptr ? std::make_shared<const Command>(command)
                                 : nullptr,
       command, std::move(done));
}

void Master::Send(std::shared_ptr<const Command> command, ReplyCallback done) {
  const Command& c = *command;
  Send(c.script != nullptr ? std::move(command) : nullptr, c, std::move(done));
}

void Master::Send(std::shared_ptr<const Command> kept, const Command& command,
                  ReplyCallback done) {
  if (state_ == State::kDisconnected || connection_ == nullptr) {
    FailLater(std::move(done),
              absl::UnavailableError(absl::StrCat(
                  "not connected",
                  last_error_.ok()
                      ? ""
                      : absl::StrCat(" (", last_error_.message(), ")"))));
    return;
  }
  Pending pending;
  pending.sent_at = Now();
  pending.done = std::move(done);
  if (command.script != nullptr) {
    pending.script_call = std::move(kept);
    const Script* script = command.script;
    if (!script->loaded_on_connect &&
        std::find(loaded_on_demand_.begin(), loaded_on_demand_.end(), script) ==
            loaded_on_demand_.end()) {
      // Its first call on this connection: loaded right ahead of it, so the
      // EVALSHA behind finds it (Redis runs one connection's commands in
      // order). A failed load closes the connection, as in the handshake.
      Pending load;
      load.sent_at = pending.sent_at;
      load.kind = Kind::kScriptLoad;
      const absl::string_view load_argv[] = {"SCRIPT", "LOAD", script->source};
      Write(load_argv, std::move(load));
      loaded_on_demand_.push_back(script);
    }
  }
  if (!command.encoded.empty()) {
    // Its RESP text is made already: the connection copies it as it is.
    Write({}, std::move(pending), command.encoded);
    return;
  }
  // Views, not copies: the arguments are copied once, into the wire.
  CommandViews views;
  CommandArgvViews(command, /*eval=*/false, &views);
  Write(views.argv, std::move(pending));
}

void Master::Write(absl::Span<const absl::string_view> argv, Pending pending,
                   absl::string_view encoded) {
  if (connection_ == nullptr || !connection_->SendEncoded(argv, encoded)) {
    if (pending.done) {
      FailLater(std::move(pending.done),
                absl::UnavailableError("connection is closing"));
    }
    return;
  }
  ++counters_.sent;
  const bool has_deadline = static_cast<bool>(pending.done);
  const MonotonicTime deadline = std::max(pending.sent_at, connected_at_) +
                                 Chrono(config_.request_timeout);
  pending_.push_back(std::move(pending));
  // The timer may be set for a later moment (only handshake steps, which
  // have no deadline of their own, were pending): bring it forward.
  if (state_ == State::kConnected &&
      (!request_timer_->armed() || (has_deadline && deadline < timer_wake_))) {
    ArmRequestTimer();
  }
}

void Master::FailLater(ReplyCallback done, absl::Status status) {
  if (!done) return;
  deferred_.Post(
      [done = std::move(done), status = std::move(status)]() mutable {
        done(std::move(status));
      });
}

void Master::Connect() {
  if (shutting_down_ || connection_ != nullptr) return;
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      runtime_->Connect(config_.address, this, ConnectionMode::kReplies);
  if (!connection.ok()) {
    last_error_ = connection.status();
    ++counters_.connection_failures;
    ScheduleReconnect();
    return;
  }
  connection_ = *std::move(connection);
  state_ = State::kConnecting;
  handshake_ok_ = false;
  loaded_on_demand_.clear();
  connect_timer_->Arm(config_.connect_timeout);
  QueueHandshake();
  // Held clean-ups go right behind the handshake, ahead of anything the
  // engine sends on this connection: an attempt of the same token that wins
  // here later is never undone by an older one's clean-up.
  std::deque<HeldCleanup> held = std::move(held_cleanups_);
  held_cleanups_.clear();
  for (HeldCleanup& h : held) {
    if (Now() < h.until) SendHeld(std::move(h));
  }
}

void Master::SendCleanup(const Command& command, absl::Duration keep_for) {
  SendHeld(
      {std::make_shared<const Command>(command), Now() + Chrono(keep_for)});
}

void Master::SendHeld(HeldCleanup held) {
  std::shared_ptr<const Command> command = held.command;
  Send(std::move(command), [this, held = std::move(held)](
                               absl::StatusOr<RedisReply> reply) mutable {
    // Answered (an error reply is a reply: the master ran it or refused
    // it), or the client is going away: done with it. Any other outcome is
    // no reply (the connection failed, was closed for a reply it refused,
    // or the reply came too late): not known to have run, so kept for the
    // next connection. A token-checked release may run twice.
    if (shutting_down_ || reply.ok()) return;
    if (held_cleanups_.size() >= kMaxHeldCleanups) held_cleanups_.pop_front();
    held_cleanups_.push_back(std::move(held));
  });
}

void Master::QueueHandshake() {
  struct Step {
    Kind kind;
    std::vector<std::string> argv;
  };
  std::vector<Step> steps;
  const MasterAddress& address = config_.address;
  if (std::vector<std::string> auth = AuthArgv(address); !auth.empty()) {
    steps.push_back({Kind::kAuth, std::move(auth)});
  }
  if (address.db != 0) {
    steps.push_back({Kind::kSelect, {"SELECT", absl::StrCat(address.db)}});
  }
  for (const Script* script : AllScripts()) {
    if (!script->loaded_on_connect) continue;
    steps.push_back(
        {Kind::kScriptLoad, {"SCRIPT", "LOAD", std::string(script->source)}});
  }
  if (!config_.marker_key.empty()) {
    steps.push_back({Kind::kInfo, {"INFO", "server"}});
    steps.push_back({Kind::kInfoMemory, {"INFO", "memory"}});
    for (absl::string_view name : kPersistenceConfigNames) {
      steps.push_back({Kind::kConfig, {"CONFIG", "GET", std::string(name)}});
    }
    steps.push_back({Kind::kInfoPersistence, {"INFO", "persistence"}});
    steps.push_back({Kind::kTime, {"TIME"}});
    steps.push_back({Kind::kMarker, {"GET", config_.marker_key}});
  }
  pending_identity_ = MasterIdentity();
  config_replies_ = RedisReply::Array({});
  config_replies_seen_ = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Pending pending;
    pending.sent_at = Now();
    pending.kind = steps[i].kind;
    pending.last_handshake_step = i + 1 == steps.size();
    Write(steps[i].argv, std::move(pending));
  }
}

void Master::Close(absl::Status reason) {
  if (connection_ == nullptr) {
    connect_timer_->Cancel();
    request_timer_->Cancel();
    return;
  }
  // Write what is still buffered (a release queued behind a stuck request)
  // before closing.
  if (state_ == State::kConnected) connection_->FlushBeforeClose();
  ForgetConnection(std::move(reason));
  ScheduleReconnect();
}

void Master::ForgetConnection(absl::Status reason) {
  connection_.reset();
  state_ = State::kDisconnected;
  handshake_ok_ = false;
  last_error_ = reason;
  connect_timer_->Cancel();
  request_timer_->Cancel();
  // Answered in order; an answer may send again (and fail later, being
  // disconnected), so the queue is taken first.
  std::deque<Pending> pending = std::move(pending_);
  pending_.clear();
  for (Pending& p : pending) {
    if (p.done) p.done(reason);
  }
}

void Master::ScheduleReconnect() {
  ever_failed_ = true;
  if (on_state_change_ && !shutting_down_) on_state_change_();
  if (shutting_down_ || reconnect_timer_->armed()) return;
  reconnect_timer_->Arm(next_backoff_);
  next_backoff_ = NextBackoff(config_.backoff, next_backoff_);
}

std::vector<std::string> AuthArgv(const MasterAddress& address) {
  if (!address.has_password) return {};
  if (address.user.empty()) return {"AUTH", address.password};
  return {"AUTH", address.user, address.password};
}

absl::Duration NextBackoff(const ReconnectBackoff& backoff,
                           absl::Duration current) {
  return std::min(current * backoff.multiplier, backoff.max);
}

void Master::ArmRequestTimer() {
  if (state_ != State::kConnected || pending_.empty()) {
    request_timer_->Cancel();
    return;
  }
  // Time spent connecting does not count against a request.
  auto started = [this](const Pending& p) {
    return std::max(p.sent_at, connected_at_);
  };
  MonotonicTime wake =
      started(pending_.front()) + Chrono(config_.stalled_timeout);
  for (const Pending& p : pending_) {
    if (p.done) {
      wake = std::min(wake, started(p) + Chrono(config_.request_timeout));
    }
  }
  timer_wake_ = wake;
  request_timer_->Arm(absl::FromChrono(wake - Now()));
}

void Master::OnRequestTimer() {
  const MonotonicTime now = Now();
  const auto timeout = Chrono(config_.request_timeout);
  // Index loop: answering may queue more commands at the back.
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (!p.done || std::max(p.sent_at, connected_at_) + timeout > now) {
      continue;
    }
    ReplyCallback done = std::move(p.done);
    p.done = nullptr;
    ++counters_.timeouts;
    done(absl::DeadlineExceededError(absl::StrCat(
        "no reply within ", absl::FormatDuration(config_.request_timeout))));
  }
  if (state_ == State::kConnected && !pending_.empty() &&
      std::max(pending_.front().sent_at, connected_at_) +
              Chrono(config_.stalled_timeout) <=
          now) {
    ++counters_.connection_failures;
    Close(absl::UnavailableError(absl::StrCat(
        "no reply for ", absl::FormatDuration(config_.stalled_timeout),
        "; connection closed")));
    return;
  }
  ArmRequestTimer();
}

void Master::OnConnect(absl::Status status) {
  connect_timer_->Cancel();
  if (!status.ok()) {
    // The connection is dead: every pending request gets the reason.
    ++counters_.connection_failures;
    ForgetConnection(std::move(status));
    ScheduleReconnect();
    return;
  }
  state_ = State::kConnected;
  connected_at_ = Now();
  ++counters_.connects;
  tls_description_ = connection_->TlsDescription();
  ArmRequestTimer();
}

void Master::OnLost(absl::Status why) {
  ++counters_.connection_failures;
  ForgetConnection(std::move(why));
  ScheduleReconnect();
}

void Master::OnReply(RedisReply reply) {
  if (pending_.empty()) return;
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  ++counters_.replies;
  RedisReply& converted = reply;
  if (p.kind != Kind::kUser) {
    OnHandshakeReply(p, converted);
    return;
  }
  if (converted.type == RedisReply::Type::kError) ++counters_.error_replies;
  if (p.script_call != nullptr && IsNoScript(converted)) {
    // The script cache was flushed since we loaded it. EVAL runs (and caches)
    // it, but the resend queues behind whatever was sent after this call. A
    // script that creates the lock key must not run after those: a round
    // that lost sends its clean-up release right behind the acquire, and an
    // acquire re-sent behind that release would leave its key for a whole
    // TTL. Such a call is re-sent only when nothing was sent after it;
    // otherwise it fails (a failed vote), and the script is loaded again for
    // the next attempt. The other scripts are safe in any order.
    if (p.script_call->script->creates_lock && !pending_.empty()) {
      Pending reload;
      reload.sent_at = Now();
      reload.kind = Kind::kScriptLoad;
      const absl::string_view load_argv[] = {"SCRIPT", "LOAD",
                                             p.script_call->script->source};
      Write(load_argv, std::move(reload));
      if (p.done) {
        p.done(absl::NotFoundError(absl::StrCat(
            converted.str,
            " (not re-sent: commands sent after it would run first)")));
      }
      return;
    }
    ++counters_.noscript_fallbacks;
    Pending retry;
    retry.sent_at = p.sent_at;
    retry.done = std::move(p.done);
    if (p.script_call->args.empty() && !p.script_call->encoded.empty()) {
      // Made as its text alone: the EVAL call is made from that text.
      Write({}, std::move(retry), EvalText(*p.script_call));
      return;
    }
    CommandViews views;
    CommandArgvViews(*p.script_call, /*eval=*/true, &views);
    Write(views.argv, std::move(retry));
    return;
  }
  if (p.done) p.done(std::move(converted));
}

absl::string_view Master::StepName(Kind kind) {
  switch (kind) {
    case Kind::kAuth:
      return "AUTH";
    case Kind::kSelect:
      return "SELECT";
    case Kind::kInfo:
      return "INFO";
    case Kind::kInfoMemory:
      return "INFO memory";
    case Kind::kInfoPersistence:
      return "INFO persistence";
    case Kind::kMarker:
      return "GET marker";
    case Kind::kConfig:
      return "CONFIG GET";
    case Kind::kTime:
      return "TIME";
    default:
      return "SCRIPT LOAD";
  }
}

bool Master::RecordHandshakeReply(Kind kind, const RedisReply& reply) {
  if (kind == Kind::kConfig) {
    // One name per call: the pairs are judged together, once all are in.
    AddConfigReply(reply, &config_replies_);
    if (++config_replies_seen_ == std::size(kPersistenceConfigNames)) {
      ParseConfigPersistence(config_replies_, &pending_identity_.persistence);
    }
  }
  if (kind == Kind::kScriptLoad) {
    // One of the library's scripts, or one loaded on demand on this
    // connection (a test's own, rule_overrides.h, is only ever that).
    bool known = false;
    const std::vector<const Script*>* lists[] = {&AllScripts(),
                                                 &loaded_on_demand_};
    for (const std::vector<const Script*>* scripts : lists) {
      for (const Script* script : *scripts) {
        known = known || (reply.type == RedisReply::Type::kString &&
                          reply.str == script->sha1);
      }
    }
    if (!known) {
      Close(absl::InternalError(absl::StrCat(
          "SCRIPT LOAD returned an unexpected SHA-1: ", reply.str)));
      return false;
    }
  }
  if (kind == Kind::kTime) {
    std::optional<int64_t> micros = TimeReplyMicros(reply);
    if (!micros.has_value()) {
      Close(absl::DataLossError(
          "TIME answered with something other than two numbers "
          "(seconds >= 0, microseconds 0-999999)"));
      return false;
    }
    pending_identity_.server_time_us = *micros;
    pending_identity_.seen_at = Now();
  }
  if (kind == Kind::kInfo) {
    ParseInfoServer(reply.str, &pending_identity_.run_id,
                    &pending_identity_.uptime_s);
    pending_identity_.seen_at = Now();
  }
  if (kind == Kind::kInfoMemory) {
    pending_identity_.maxmemory_policy =
        std::string(InfoField(reply.str, "maxmemory_policy"));
  }
  if (kind == Kind::kInfoPersistence) {
    pending_identity_.rdb_keys_loaded = ParseRdbKeysLoaded(reply.str);
  }
  if (kind == Kind::kMarker) {
    pending_identity_.marker_read_at = Now();
    ReadMarkerValue(reply.type == RedisReply::Type::kString ? reply.str : "",
                    &pending_identity_);
  }
  return true;
}

void Master::OnHandshakeReply(const Pending& pending, const RedisReply& reply) {
  const absl::string_view step = StepName(pending.kind);
  if (reply.type == RedisReply::Type::kError && pending.kind != Kind::kConfig) {
    absl::Status error = ErrorReplyStatus(reply.str);
    Close(
        absl::Status(error.code(), absl::StrCat(step, " failed: ", reply.str)));
    return;
  }
  if (absl::string_view expected = ExpectedType(pending.kind, reply);
      !expected.empty()) {
    // What the server says here decides whether its votes count: a reply
    // of the wrong shape is a server that is not the Redis we know.
    Close(absl::DataLossError(absl::StrCat(step, " answered with ",
                                           TypeName(reply.type), ", expected ",
                                           expected)));
    return;
  }
  if (!RecordHandshakeReply(pending.kind, reply)) return;
  if (pending.last_handshake_step) {
    handshake_ok_ = true;
    last_error_ = absl::OkStatus();
    next_backoff_ = config_.backoff.initial;
    if (!config_.marker_key.empty()) {
      identity_ = pending_identity_;
      identity_.known = true;
    }
    if (on_state_change_) on_state_change_();
  }
}

void Master::OnConnectTimeout() {
  ++counters_.connection_failures;
  const std::string progress =
      connection_ != nullptr ? connection_->ConnectProgress() : std::string();
  Close(absl::UnavailableError(absl::StrCat(
      "connect timed out after ", absl::FormatDuration(config_.connect_timeout),
      progress.empty() ? "" : absl::StrCat(" (", progress, ")"))));
}

}  // namespace redlock::internal
