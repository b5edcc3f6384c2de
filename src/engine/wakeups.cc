// Copyright 2026 The redlock Authors.

#include "src/engine/wakeups.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "redlock/keys.h"

namespace redlock::internal {
Subscriber::Subscriber(Runtime* runtime, MasterConfig config, int master,
                       Listener* listener)
    : runtime_(runtime),
      config_(std::move(config)),
      master_(master),
      listener_(listener),
      next_backoff_(config_.backoff.initial),
      timer_(runtime->NewTimer([this] { OnTimer(); })),
      reconnect_timer_(runtime->NewTimer([this] {
        if (!wanted_.empty()) Connect();
      })),
      settle_timer_(
          runtime->NewTimer([this] { listener_->OnSettled(false); })) {}

Subscriber::~Subscriber() = default;

void Subscriber::Add(const std::string& channel) {
  if (!wanted_.insert(channel).second) return;
  switch (state_) {
    case State::kConnected:
      Subscribe(channel);
      break;
    case State::kConnecting:
      break;  // Subscribed once connected, with the others.
    case State::kIdle:
      // Backing off after a failure: the channel is settled (unavailable)
      // until the reconnect subscribes it.
      if (!reconnect_timer_->armed()) Connect();
      break;
  }
}

void Subscriber::Remove(const std::string& channel) {
  if (wanted_.erase(channel) == 0) return;
  confirmed_.erase(channel);
  if (state_ != State::kConnected) return;
  // Its confirmation is awaited like a SUBSCRIBE's: a channel added again
  // before it arrives is settled only by the confirmation of the last
  // command sent for it, which the server answers last.
  Awaiting& awaiting = awaiting_[channel];
  if (awaiting.count++ == 0) awaiting.since = runtime_->Now();
  Send({"UNSUBSCRIBE", channel});
}

bool Subscriber::Settled(const std::string& channel) const {
  switch (state_) {
    case State::kIdle:
      return true;
    case State::kConnecting:
      return false;
    case State::kConnected:
      return !auth_pending_ && !info_pending_ && confirmed_.contains(channel) &&
             !awaiting_.contains(channel);
  }
  return true;
}

void Subscriber::Connect() {
  if (connection_ != nullptr) return;
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      runtime_->Connect(config_.address, this, ConnectionMode::kPushes);
  if (!connection.ok()) {
    Close(connection.status());
    return;
  }
  connection_ = *std::move(connection);
  state_ = State::kConnecting;
  connect_started_ = runtime_->Now();
  ArmTimer();
}

void Subscriber::OnConnect(absl::Status status) {
  if (!status.ok()) {
    Close(std::move(status));
    return;
  }
  state_ = State::kConnected;
  run_id_.clear();
  if (std::vector<std::string> auth = AuthArgv(config_.address);
      !auth.empty()) {
    auth_pending_ = true;
    auth_sent_at_ = runtime_->Now();
    Send(std::move(auth));
  }
  // Which server run this connection reaches, before any message can come
  // (a hand-off heard here counts only from the run the master's command
  // connection judged: Wakeups::RunId()).
  info_pending_ = true;
  info_sent_at_ = runtime_->Now();
  Send({"INFO", "server"});
  // SUBSCRIBE is not per database: no SELECT.
  std::vector<std::string> channels(wanted_.begin(), wanted_.end());
  std::sort(channels.begin(), channels.end());
  for (const std::string& channel : channels) {
    if (connection_ == nullptr) return;  // A send failed and closed it.
    Subscribe(channel);
  }
  if (connection_ != nullptr) ArmTimer();
}

void Subscriber::Subscribe(const std::string& channel) {
  Awaiting& awaiting = awaiting_[channel];
  if (awaiting.count++ == 0) awaiting.since = runtime_->Now();
  Send({"SUBSCRIBE", channel});
  if (connection_ != nullptr && !timer_->armed()) ArmTimer();
}

void Subscriber::Send(std::vector<std::string> argv) {
  if (connection_ == nullptr) return;
  ++sent_;
  if (!connection_->Send(argv)) {
    Close(absl::UnavailableError("the subscriber connection is closing"));
  }
}

void Subscriber::OnPush(RedisReply reply) {
  if (reply.type != RedisReply::Type::kArray) {
    // AUTH's answer, or an error for a command (NOAUTH, a closed server).
    if (auth_pending_ && reply.type == RedisReply::Type::kStatus) {
      auth_pending_ = false;
      MaybeSettled();
      return;
    }
    // INFO's, after AUTH's: a server run's id, or none (an unknown run,
    // whose hand-offs never count).
    if (!auth_pending_ && info_pending_ &&
        reply.type == RedisReply::Type::kString) {
      info_pending_ = false;
      run_id_ = std::string(InfoField(reply.str, "run_id"));
      MaybeSettled();
      return;
    }
    Close(absl::UnavailableError(
        absl::StrCat("subscriber: ", reply.type == RedisReply::Type::kError
                                         ? reply.str
                                         : "a reply nobody asked for")));
    return;
  }
  const std::vector<RedisReply>& e = reply.elements;
  if (e.size() != 3 || e[0].type != RedisReply::Type::kString ||
      e[1].type != RedisReply::Type::kString) {
    Close(absl::DataLossError(
        "subscriber: a malformed pub/sub message (not [kind, channel, x])"));
    return;
  }
  const std::string& kind = e[0].str;
  const std::string& channel = e[1].str;
  if (kind == "message") {
    if (e[2].type != RedisReply::Type::kString) {
      Close(absl::DataLossError(
          "subscriber: a malformed pub/sub message (payload not a string)"));
      return;
    }
    ++messages_;
    listener_->OnMessage(master_, channel, e[2].str);
    return;
  }
  if (kind != "subscribe" && kind != "unsubscribe") {
    Close(absl::DataLossError(
        absl::StrCat("subscriber: a malformed pub/sub message (kind \"",
                     absl::CHexEscape(kind.substr(0, 32)), "\")")));
    return;
  }
  auto it = awaiting_.find(channel);
  if (it == awaiting_.end()) return;  // Not one we wait on.
  if (--it->second.count > 0) return;
  awaiting_.erase(it);
  // The last command sent for the channel is answered: it is subscribed
  // now if it is wanted (that command was a SUBSCRIBE), else not.
  if (kind == "subscribe" && wanted_.contains(channel)) {
    confirmed_.insert(channel);
  } else {
    confirmed_.erase(channel);
  }
  MaybeSettled();
}

void Subscriber::MaybeSettled() {
  ArmTimer();
  if (auth_pending_ || info_pending_ || !awaiting_.empty()) return;
  next_backoff_ = config_.backoff.initial;
  last_error_ = absl::OkStatus();
  listener_->OnSettled(std::exchange(lost_, false));
}

void Subscriber::OnLost(absl::Status why) { Close(std::move(why)); }

void Subscriber::Close(absl::Status why) {
  // Wake-ups fall back to polling; the reason is kept for Health and tests.
  last_error_ = std::move(why);
  connection_.reset();
  state_ = State::kIdle;
  confirmed_.clear();
  awaiting_.clear();
  auth_pending_ = false;
  info_pending_ = false;
  run_id_.clear();
  lost_ = true;
  timer_->Cancel();
  if (!wanted_.empty()) {
    reconnect_timer_->Arm(next_backoff_);
    next_backoff_ = NextBackoff(config_.backoff, next_backoff_);
  }
  // Every channel is settled now (unavailable): waiters go on polling. Told
  // on a later turn: Close() may run inside Add().
  settle_timer_->Arm(absl::ZeroDuration());
}

std::optional<MonotonicTime> Subscriber::Deadline() const {
  if (state_ == State::kConnecting) {
    return connect_started_ + ToChrono(config_.connect_timeout);
  }
  std::optional<MonotonicTime> oldest;
  if (state_ == State::kConnected) {
    if (auth_pending_) oldest = auth_sent_at_;
    if (info_pending_ && (!oldest.has_value() || info_sent_at_ < *oldest)) {
      oldest = info_sent_at_;
    }
    for (const auto& [channel, awaiting] : awaiting_) {
      if (!oldest.has_value() || awaiting.since < *oldest) {
        oldest = awaiting.since;
      }
    }
  }
  if (!oldest.has_value()) return std::nullopt;
  return *oldest + ToChrono(config_.request_timeout);
}

void Subscriber::ArmTimer() {
  if (std::optional<MonotonicTime> deadline = Deadline()) {
    timer_->Arm(std::max(ToDuration(*deadline - runtime_->Now()),
                         absl::ZeroDuration()));
  } else {
    timer_->Cancel();
  }
}

void Subscriber::OnTimer() {
  std::optional<MonotonicTime> deadline = Deadline();
  if (deadline.has_value() && *deadline <= runtime_->Now()) {
    Close(absl::DeadlineExceededError(
        state_ == State::kConnecting
            ? "subscriber: connect timed out"
            : "subscriber: no confirmation within the request timeout"));
    return;
  }
  ArmTimer();
}

Wakeups::Wakeups(Runtime* runtime, const std::vector<MasterConfig>& masters)
    : runtime_(runtime), sweep_timer_(runtime->NewTimer([this] { Sweep(); })) {
  for (const MasterConfig& config : masters) {
    Subscriber::Listener* listener = this;
    const int master = static_cast<int>(subscribers_.size());
    subscribers_.push_back(
        std::make_unique<Subscriber>(runtime, config, master, listener));
  }
}

Wakeups::~Wakeups() = default;

bool Wakeups::Watch(Waiter* waiter, absl::Span<const std::string> channels) {
  bool fresh = false;
  for (const std::string& name : channels) {
    auto [it, added] = channels_.try_emplace(name);
    Channel& channel = it->second;
    if (added) {
      fresh = true;
      for (auto& subscriber : subscribers_) subscriber->Add(name);
    }
    channel.waiters.push_back(waiter);
    ++registered_[waiter];
  }
  return fresh;
}

void Wakeups::Unwatch(Waiter* waiter, absl::Span<const std::string> channels) {
  for (const std::string& name : channels) {
    auto it = channels_.find(name);
    if (it == channels_.end()) continue;
    std::vector<Waiter*>& waiters = it->second.waiters;
    auto found = std::find(waiters.begin(), waiters.end(), waiter);
    if (found == waiters.end()) continue;
    waiters.erase(found);
    if (--registered_[waiter] == 0) registered_.erase(waiter);
    if (waiters.empty()) {
      it->second.idle_since = runtime_->Now();
      if (!sweep_timer_->armed()) sweep_timer_->Arm(kLinger);
    }
  }
}

bool Wakeups::Settled(absl::Span<const std::string> channels) const {
  for (const auto& subscriber : subscribers_) {
    for (const std::string& channel : channels) {
      if (!subscriber->Settled(channel)) return false;
    }
  }
  return true;
}

absl::string_view Wakeups::RunId(int master) const {
  if (master < 0 || master >= static_cast<int>(subscribers_.size())) {
    return {};
  }
  return subscribers_[master]->run_id();
}

bool Wakeups::Contended(absl::Span<const std::string> channels) const {
  for (const std::string& channel : channels) {
    if (channels_.contains(channel)) return true;
  }
  return false;
}

void Wakeups::NoteReleased(absl::Span<const std::string> channels) {
  for (const std::string& name : channels) {
    auto it = channels_.find(name);
    if (it != channels_.end()) it->second.released_at = runtime_->Now();
  }
}

bool Wakeups::ReleasedWithin(absl::Span<const std::string> channels,
                             absl::Duration within) const {
  const MonotonicTime now = runtime_->Now();
  for (const std::string& name : channels) {
    auto it = channels_.find(name);
    if (it == channels_.end() || !it->second.released_at.has_value()) continue;
    if (ToDuration(now - *it->second.released_at) < within) return true;
  }
  return false;
}

std::string Wakeups::TakeIdleWaiterId(absl::string_view prefix) {
  auto it = idle_ids_.find(prefix);
  if (it == idle_ids_.end()) return {};
  std::vector<std::string>& ids = it->second;
  std::string found;
  while (found.empty() && !ids.empty()) {
    std::string id = std::move(ids.back());
    ids.pop_back();
    auto channel = channels_.find(absl::StrCat(prefix, id));
    // Swept meanwhile, or taken by a waiter that did not get it from here.
    if (channel != channels_.end() && channel->second.waiters.empty()) {
      found = std::move(id);
    }
  }
  if (ids.empty()) idle_ids_.erase(it);
  return found;
}

void Wakeups::LeaveIdleWaiterId(absl::string_view prefix, std::string id) {
  std::vector<std::string>& ids = idle_ids_[prefix];
  // Bounded by the waiters one client ran at once on one resource, which
  // the channels themselves already cost; the sweep forgets the rest.
  ids.push_back(std::move(id));
}

void Wakeups::OnMessage(int master, absl::string_view channel,
                        absl::string_view payload) {
  Event event;
  absl::string_view successor;
  if (payload == kReleasedMessage) {
    event = Event::kReleased;
  } else if (absl::ConsumePrefix(&payload, kReleasedMessage) &&
             absl::ConsumePrefix(&payload, " ")) {
    // "released <id>": the waiter queued longest on that master. Any bytes
    // at all: the name is only compared with the waiters' own ids.
    event = Event::kReleased;
    successor = payload;
  } else if (payload == kTakenMessage) {
    event = Event::kTaken;
  } else if (absl::ConsumePrefix(&payload, kGrantedMessage) &&
             absl::ConsumePrefix(&payload, " ")) {
    // "granted <proof>": handed to the waiter whose proof it is; taken, to
    // any other. Any bytes: only compared with the waiters' own proofs.
    event = Event::kGranted;
    successor = payload;
  } else {
    return;
  }
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  Tell(it->second.waiters, event, master, successor);
}

void Wakeups::OnSettled(bool after_loss) {
  std::vector<Waiter*> waiters;
  waiters.reserve(registered_.size());
  for (const auto& [waiter, count] : registered_) waiters.push_back(waiter);
  // A release while the subscriber was deaf would have gone unheard.
  if (after_loss) Tell(waiters, Event::kReleased);
  Tell(waiters, Event::kSettled);
}

void Wakeups::Tell(std::vector<Waiter*> waiters, Event event, int master,
                   absl::string_view successor) {
  for (Waiter* waiter : waiters) {
    // An earlier waiter's wake-up may have finished this one.
    if (registered_.contains(waiter)) waiter->Wake(event, master, successor);
  }
}

void Wakeups::Sweep() {
  const MonotonicTime now = runtime_->Now();
  bool idle_left = false;
  for (auto it = channels_.begin(); it != channels_.end();) {
    Channel& channel = it->second;
    if (!channel.waiters.empty()) {
      ++it;
      continue;
    }
    if (ToDuration(now - channel.idle_since) < kLinger) {
      idle_left = true;
      ++it;
      continue;
    }
    for (auto& subscriber : subscribers_) subscriber->Remove(it->first);
    channels_.erase(it++);
  }
  // Ids whose channel is gone are no use to TakeIdleWaiterId().
  for (auto it = idle_ids_.begin(); it != idle_ids_.end();) {
    std::vector<std::string>& ids = it->second;
    const std::string& prefix = it->first;
    ids.erase(
        std::remove_if(ids.begin(), ids.end(),
                       [&](const std::string& id) {
                         return !channels_.contains(absl::StrCat(prefix, id));
                       }),
        ids.end());
    if (ids.empty()) {
      idle_ids_.erase(it++);
    } else {
      ++it;
    }
  }
  if (idle_left) sweep_timer_->Arm(kLinger);
}

}  // namespace redlock::internal
