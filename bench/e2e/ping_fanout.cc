// Copyright 2026 The redlock Authors.

#include "bench/e2e/ping_fanout.h"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

absl::StatusOr<std::unique_ptr<PingFanout>> PingFanout::Create(
    const std::vector<Master>& masters, int n) {
  std::vector<ContextPtr> cs;
  for (int i = 0; i < n && i < static_cast<int>(masters.size()); ++i) {
    absl::StatusOr<ContextPtr> c = ConnectSync(masters[i].address);
    if (!c.ok()) return c.status();
    cs.push_back(*std::move(c));
  }
  return std::unique_ptr<PingFanout>(new PingFanout(std::move(cs)));
}

absl::StatusOr<double> PingFanout::RoundTripUs() {
  const SteadyTime start = Now();
  const SteadyTime deadline = start + std::chrono::seconds(2);
  for (ContextPtr& c : cs_) {
    redisAppendCommand(c.get(), "PING");
    int done = 0;
    while (!done) {
      if (redisBufferWrite(c.get(), &done) != REDIS_OK) {
        return absl::UnavailableError(absl::StrCat("ping: ", c->errstr));
      }
    }
  }
  std::vector<bool> answered(cs_.size(), false);
  size_t left = cs_.size();
  std::vector<pollfd> fds;
  std::vector<size_t> index;
  while (left > 0) {
    fds.clear();
    index.clear();
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (!answered[i]) {
        fds.push_back({cs_[i]->fd, POLLIN, 0});
        index.push_back(i);
      }
    }
    if (Now() >= deadline) return absl::DeadlineExceededError("ping: no reply");
    const int rc = poll(fds.data(), fds.size(), 2000);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return absl::DeadlineExceededError("ping: poll");
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      redisContext* c = cs_[index[k]].get();
      if (redisBufferRead(c) != REDIS_OK) {
        return absl::UnavailableError(absl::StrCat("ping: ", c->errstr));
      }
      void* raw = nullptr;
      if (redisGetReplyFromReader(c, &raw) != REDIS_OK) {
        return absl::InternalError("ping: protocol error");
      }
      if (raw == nullptr) continue;  // Not all of it yet.
      ReplyPtr reply(static_cast<redisReply*>(raw));
      if (reply->type != REDIS_REPLY_STATUS ||
          std::strcmp(reply->str, "PONG") != 0) {
        return absl::InternalError(
            absl::StrCat("ping: ", DescribeReply(reply.get())));
      }
      answered[index[k]] = true;
      --left;
    }
  }
  return MicrosBetween(start, Now());
}

}  // namespace redlock::bench
