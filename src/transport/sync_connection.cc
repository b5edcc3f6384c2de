// Copyright 2026 The redlock Authors.

#include "src/transport/sync_connection.h"

#include <event2/event.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/transport/wire.h"

namespace redlock::internal {

SyncConnection::SyncConnection() : base_(event_base_new()) {}

SyncConnection::~SyncConnection() {
  connection_.reset();  // Its events belong to base_.
  if (base_ != nullptr) event_base_free(base_);
}

absl::StatusOr<std::unique_ptr<SyncConnection>> SyncConnection::Open(
    const MasterAddress& address, std::shared_ptr<const TlsContext> tls,
    absl::Duration timeout) {
  std::unique_ptr<SyncConnection> self(new SyncConnection());
  if (self->base_ == nullptr) {
    return absl::InternalError("cannot make an event loop");
  }
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      OpenWireConnection(self->base_, address, std::move(tls), self.get(),
                         ConnectionMode::kReplies);
  if (!connection.ok()) return connection.status();
  self->connection_ = *std::move(connection);
  if (!self->RunUntil([&] { return self->connected_.has_value(); }, timeout)) {
    const std::string progress = self->connection_->ConnectProgress();
    return absl::DeadlineExceededError(absl::StrCat(
        "connect timed out after ", absl::FormatDuration(timeout),
        progress.empty() ? "" : absl::StrCat(" (", progress, ")")));
  }
  if (!self->connected_->ok()) return *self->connected_;
  return self;
}

template <typename Done>
bool SyncConnection::RunUntil(Done done, absl::Duration timeout) {
  bool timed_out = false;
  event* timer = evtimer_new(
      base_, [](int, short, void* arg) { *static_cast<bool*>(arg) = true; },
      &timed_out);
  if (timer == nullptr) return false;
  timeval tv = absl::ToTimeval(timeout);
  evtimer_add(timer, &tv);
  while (!done() && !timed_out) event_base_loop(base_, EVLOOP_ONCE);
  event_free(timer);
  return done();
}

absl::StatusOr<RedisReply> SyncConnection::Command(
    const std::vector<std::string>& argv, absl::Duration timeout) {
  if (!broken_.ok()) return broken_;
  if (!connection_->Send(argv)) {
    // The reason comes from the loop.
    RunUntil([&] { return !broken_.ok(); }, absl::Milliseconds(10));
    if (broken_.ok()) broken_ = absl::UnavailableError("connection closed");
    return broken_;
  }
  if (!RunUntil([&] { return !replies_.empty() || !broken_.ok(); }, timeout)) {
    broken_ = absl::DeadlineExceededError(
        absl::StrCat("no reply within ", absl::FormatDuration(timeout)));
    return broken_;
  }
  if (replies_.empty()) return broken_;
  RedisReply reply = std::move(replies_.front());
  replies_.pop_front();
  return reply;
}

std::string SyncConnection::TlsDescription() const {
  return connection_ == nullptr ? "" : connection_->TlsDescription();
}

void SyncConnection::OnConnect(absl::Status status) {
  connected_ = status;
  if (!status.ok()) broken_ = std::move(status);
}

void SyncConnection::OnReply(RedisReply reply) {
  replies_.push_back(std::move(reply));
}

void SyncConnection::OnLost(absl::Status why) { broken_ = std::move(why); }

}  // namespace redlock::internal
