// Copyright 2026 The redlock Authors.

#include "src/master.h"

#include <event2/event.h>
#include <fcntl.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/event_adapter.h"
#include "src/redis_reply.h"
#include "src/vote.h"

namespace redlock::internal {
namespace {

timeval TimevalOf(absl::Duration d) {
  return absl::ToTimeval(std::max(d, absl::ZeroDuration()));
}

MonotonicTime Now() { return MonotonicClock::now(); }

MonotonicClock::duration Chrono(absl::Duration d) {
  return std::chrono::duration_cast<MonotonicClock::duration>(
      absl::ToChronoNanoseconds(d));
}

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

}  // namespace

Master::Master(event_base* base, MasterConfig config)
    : base_(base),
      config_(std::move(config)),
      name_(config_.address.Name()),
      next_backoff_(config_.backoff.initial),
      deferred_(base),
      request_timer_(evtimer_new(base, &Master::RequestTimerThunk, this)),
      connect_timer_(evtimer_new(base, &Master::ConnectTimerThunk, this)),
      reconnect_timer_(evtimer_new(base, &Master::ReconnectTimerThunk, this)) {
  Connect();
}

Master::~Master() {
  shutting_down_ = true;
  evtimer_del(reconnect_timer_);
  evtimer_del(connect_timer_);
  evtimer_del(request_timer_);
  Close(absl::CancelledError("the client was shut down"));
  // Answers queued for later (sends while disconnected) still run once.
  deferred_.RunAll();
  event_free(reconnect_timer_);
  event_free(connect_timer_);
  event_free(request_timer_);
}

void Master::Send(const Command& command, ReplyCallback done) {
  if (state_ == State::kDisconnected || ac_ == nullptr) {
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
  if (command.script != nullptr) pending.script_call = command;
  Write(CommandArgv(command, /*eval=*/false), std::move(pending));
}

void Master::Write(const std::vector<std::string>& argv, Pending pending) {
  int rc = REDIS_ERR;
  if (ac_ != nullptr) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const std::string& arg : argv) {
      ptrs.push_back(arg.data());
      lens.push_back(arg.size());
    }
    rc = redisAsyncCommandArgv(ac_, &Master::ReplyThunk, this,
                               static_cast<int>(argv.size()), ptrs.data(),
                               lens.data());
  }
  if (rc != REDIS_OK) {
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
      (!evtimer_pending(request_timer_, nullptr) ||
       (has_deadline && deadline < timer_wake_))) {
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
  if (shutting_down_ || ac_ != nullptr) return;
  const MasterAddress& address = config_.address;
  redisAsyncContext* ac = redisAsyncConnect(address.host.c_str(), address.port);
  if (ac == nullptr) {
    last_error_ = absl::UnavailableError("cannot allocate a connection");
    ++counters_.connection_failures;
    ScheduleReconnect();
    return;
  }
  if (ac->err != 0) {
    last_error_ =
        absl::UnavailableError(absl::StrCat("connect failed: ", ErrorText(ac)));
    redisAsyncFree(ac);  // Not attached yet: ours to free.
    ++counters_.connection_failures;
    ScheduleReconnect();
    return;
  }
  // hiredis 0.14 opens sockets without SOCK_CLOEXEC: a process that forks
  // (the CLI runs a child) must not hand its lock connections down.
  if (int flags = fcntl(ac->c.fd, F_GETFD); flags >= 0) {
    fcntl(ac->c.fd, F_SETFD, flags | FD_CLOEXEC);
  }
  // A reply declaring millions of elements closes the connection instead of
  // making hiredis allocate them (src/redis_reply.h).
  BoundReplyReader(ac->c.reader);
  ac->data = this;
  if (AttachToEventLoop(ac, base_) != REDIS_OK) {
    last_error_ = absl::InternalError("cannot attach to the event loop");
    redisAsyncFree(ac);
    ScheduleReconnect();
    return;
  }
  redisAsyncSetConnectCallback(ac, &Master::ConnectThunk);
  redisAsyncSetDisconnectCallback(ac, &Master::DisconnectThunk);
  ac_ = ac;
  state_ = State::kConnecting;
  handshake_ok_ = false;
  close_reason_ = absl::OkStatus();
  timeval tv = TimevalOf(config_.connect_timeout);
  evtimer_add(connect_timer_, &tv);
  QueueHandshake();
}

void Master::QueueHandshake() {
  struct Step {
    Kind kind;
    std::vector<std::string> argv;
  };
  std::vector<Step> steps;
  const MasterAddress& address = config_.address;
  if (address.has_password) {
    if (address.user.empty()) {
      steps.push_back({Kind::kAuth, {"AUTH", address.password}});
    } else {
      steps.push_back({Kind::kAuth, {"AUTH", address.user, address.password}});
    }
  }
  if (address.db != 0) {
    steps.push_back({Kind::kSelect, {"SELECT", absl::StrCat(address.db)}});
  }
  for (const Script* script : AllScripts()) {
    steps.push_back(
        {Kind::kScriptLoad, {"SCRIPT", "LOAD", std::string(script->source)}});
  }
  if (!config_.marker_key.empty()) {
    steps.push_back({Kind::kInfo, {"INFO", "server"}});
    steps.push_back({Kind::kInfoMemory, {"INFO", "memory"}});
    steps.push_back({Kind::kTime, {"TIME"}});
    steps.push_back({Kind::kMarker, {"GET", config_.marker_key}});
  }
  pending_identity_ = MasterIdentity();
  for (size_t i = 0; i < steps.size(); ++i) {
    Pending pending;
    pending.sent_at = Now();
    pending.kind = steps[i].kind;
    pending.last_handshake_step = i + 1 == steps.size();
    Write(steps[i].argv, std::move(pending));
  }
}

void Master::Close(absl::Status reason) {
  if (ac_ == nullptr) {
    evtimer_del(connect_timer_);
    evtimer_del(request_timer_);
    return;
  }
  redisAsyncContext* ac = ac_;
  const bool was_connected = state_ == State::kConnected;
  ForgetContext(std::move(reason));
  if (was_connected && in_reply_callback_ == 0) {
    // Write what is still buffered (a release queued behind a stuck request)
    // before closing. On a write error hiredis frees the context itself and
    // reports it through OnDisconnect, which clears closing_ac_.
    closing_ac_ = ac;
    redisAsyncHandleWrite(ac);
    ac = closing_ac_;
    closing_ac_ = nullptr;
  }
  // Pending callbacks run now with a NULL reply (or, inside a reply callback,
  // as soon as it returns), and are answered with close_reason_.
  if (ac != nullptr) redisAsyncFree(ac);
  ScheduleReconnect();
}

void Master::ForgetContext(absl::Status reason) {
  ac_ = nullptr;
  state_ = State::kDisconnected;
  handshake_ok_ = false;
  close_reason_ = reason;
  last_error_ = std::move(reason);
  evtimer_del(connect_timer_);
  evtimer_del(request_timer_);
}

absl::string_view InfoField(absl::string_view info, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, name) && absl::ConsumePrefix(&line, ":")) {
      return line;
    }
  }
  return "";
}

void ParseInfoServer(absl::string_view info, std::string* run_id,
                     int64_t* uptime_s) {
  *run_id = std::string(InfoField(info, "run_id"));
  int64_t value = 0;
  if (absl::SimpleAtoi(InfoField(info, "uptime_in_seconds"), &value)) {
    *uptime_s = value;
  }
}

absl::Status EvictionRisk(absl::string_view maxmemory_policy) {
  if (maxmemory_policy.empty() || maxmemory_policy == "noeviction") {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "maxmemory-policy is ", maxmemory_policy,
      absl::StartsWith(maxmemory_policy, "volatile")
          ? ": under memory pressure it may evict lock keys (they have a TTL)"
          : ": under memory pressure it may evict lock keys, fencing "
            "counters and the deployment marker",
      ", which lets a second owner in; set maxmemory-policy noeviction"));
}

void Master::ScheduleReconnect() {
  ever_failed_ = true;
  if (on_state_change_ && !shutting_down_) on_state_change_();
  if (shutting_down_ || evtimer_pending(reconnect_timer_, nullptr)) return;
  timeval tv = TimevalOf(next_backoff_);
  evtimer_add(reconnect_timer_, &tv);
  next_backoff_ =
      std::min(next_backoff_ * config_.backoff.multiplier, config_.backoff.max);
}

void Master::ArmRequestTimer() {
  if (state_ != State::kConnected || pending_.empty()) {
    evtimer_del(request_timer_);
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
  timeval tv = TimevalOf(absl::FromChrono(wake - Now()));
  evtimer_add(request_timer_, &tv);
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

void Master::OnConnect(redisAsyncContext* ac, int status) {
  if (ac != ac_) return;
  evtimer_del(connect_timer_);
  if (status != REDIS_OK) {
    // hiredis frees the context after this returns, answering every pending
    // callback with a NULL reply first: they get close_reason_.
    ++counters_.connection_failures;
    ForgetContext(absl::UnavailableError(
        absl::StrCat("connect failed: ", ErrorText(ac))));
    ScheduleReconnect();
    return;
  }
  state_ = State::kConnected;
  connected_at_ = Now();
  ++counters_.connects;
  ArmRequestTimer();
}

void Master::OnDisconnect(redisAsyncContext* ac, int status) {
  if (ac == closing_ac_) closing_ac_ = nullptr;
  if (ac == ac_) {
    ++counters_.connection_failures;
    ForgetContext(absl::UnavailableError(
        absl::StrCat("connection lost: ", ErrorText(ac))));
  }
  ScheduleReconnect();
}

void Master::OnReply(redisAsyncContext* ac, redisReply* reply) {
  if (pending_.empty()) return;
  if (reply == nullptr) {
    // hiredis is tearing the connection down.
    if (ac == ac_) {
      ++counters_.connection_failures;
      ForgetContext(absl::UnavailableError(
          absl::StrCat("connection lost: ", ErrorText(ac))));
    }
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    if (p.done) p.done(close_reason_);
    return;
  }

  Pending p = std::move(pending_.front());
  pending_.pop_front();
  ++counters_.replies;
  RedisReply converted = FromHiredis(reply);
  if (p.kind != Kind::kUser) {
    OnHandshakeReply(p, converted);
    return;
  }
  if (converted.type == RedisReply::Type::kError) ++counters_.error_replies;
  if (p.script_call.has_value() && IsNoScript(converted)) {
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
      Write({"SCRIPT", "LOAD", std::string(p.script_call->script->source)},
            std::move(reload));
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
    Write(CommandArgv(*p.script_call, /*eval=*/true), std::move(retry));
    return;
  }
  if (p.done) p.done(std::move(converted));
}

void Master::OnHandshakeReply(const Pending& pending, const RedisReply& reply) {
  absl::string_view step;
  switch (pending.kind) {
    case Kind::kAuth:
      step = "AUTH";
      break;
    case Kind::kSelect:
      step = "SELECT";
      break;
    case Kind::kInfo:
      step = "INFO";
      break;
    case Kind::kInfoMemory:
      step = "INFO memory";
      break;
    case Kind::kMarker:
      step = "GET marker";
      break;
    case Kind::kTime:
      step = "TIME";
      break;
    default:
      step = "SCRIPT LOAD";
      break;
  }
  if (reply.type == RedisReply::Type::kError) {
    absl::Status error = ErrorReplyStatus(reply.str);
    Close(
        absl::Status(error.code(), absl::StrCat(step, " failed: ", reply.str)));
    return;
  }
  if (pending.kind == Kind::kScriptLoad) {
    bool known = false;
    for (const Script* script : AllScripts()) {
      known = known || (reply.type == RedisReply::Type::kString &&
                        reply.str == script->sha1);
    }
    if (!known) {
      Close(absl::InternalError(absl::StrCat(
          "SCRIPT LOAD returned an unexpected SHA-1: ", reply.str)));
      return;
    }
  }
  if (pending.kind == Kind::kTime && reply.elements.size() == 2) {
    int64_t seconds = 0, micros = 0;
    if (absl::SimpleAtoi(reply.elements[0].str, &seconds) &&
        absl::SimpleAtoi(reply.elements[1].str, &micros)) {
      pending_identity_.server_time_us = seconds * 1000000 + micros;
      pending_identity_.seen_at = Now();
    }
  }
  if (pending.kind == Kind::kInfo) {
    ParseInfoServer(reply.str, &pending_identity_.run_id,
                    &pending_identity_.uptime_s);
    pending_identity_.seen_at = Now();
  }
  if (pending.kind == Kind::kInfoMemory) {
    pending_identity_.maxmemory_policy =
        std::string(InfoField(reply.str, "maxmemory_policy"));
  }
  if (pending.kind == Kind::kMarker) {
    ParseMarker(reply.type == RedisReply::Type::kString ? reply.str : "",
                &pending_identity_.marker, &pending_identity_.marker_time_us);
  }
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

void Master::ConnectThunk(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<Master*>(ac->data);
  self->OnConnect(const_cast<redisAsyncContext*>(ac), status);
}

void Master::DisconnectThunk(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<Master*>(ac->data);
  self->OnDisconnect(const_cast<redisAsyncContext*>(ac), status);
}

void Master::ReplyThunk(redisAsyncContext* ac, void* reply, void* privdata) {
  auto* self = static_cast<Master*>(privdata);
  ++self->in_reply_callback_;
  self->OnReply(ac, static_cast<redisReply*>(reply));
  --self->in_reply_callback_;
}

void Master::RequestTimerThunk(int, short, void* arg) {
  static_cast<Master*>(arg)->OnRequestTimer();
}

void Master::ConnectTimerThunk(int, short, void* arg) {
  auto* self = static_cast<Master*>(arg);
  ++self->counters_.connection_failures;
  self->Close(absl::UnavailableError(
      absl::StrCat("connect timed out after ",
                   absl::FormatDuration(self->config_.connect_timeout))));
}

void Master::ReconnectTimerThunk(int, short, void* arg) {
  static_cast<Master*>(arg)->Connect();
}

}  // namespace redlock::internal
