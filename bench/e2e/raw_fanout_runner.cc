// Copyright 2026 The redlock Authors.

#include "bench/e2e/raw_fanout_runner.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/e2e/common.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/token.h"

namespace redlock::bench {

absl::StatusOr<std::unique_ptr<RawFanoutRunner>> RawFanoutRunner::Create(
    const std::vector<Master>& masters, int n, absl::Duration ttl) {
  std::vector<ContextPtr> cs;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<ContextPtr> c = ConnectSync(masters[i].address);
    if (!c.ok()) return c.status();
    if (absl::Status s = LoadReleaseScript(c->get()); !s.ok()) return s;
    cs.push_back(*std::move(c));
  }
  return std::unique_ptr<RawFanoutRunner>(new RawFanoutRunner(
      std::move(cs), TtlMillis(ttl), absl::StrCat(kKeyPrefix, "raw-", n)));
}

RawFanoutRunner::RawFanoutRunner(std::vector<ContextPtr> cs, std::string ttl_ms,
                                 std::string key)
    : cs_(std::move(cs)),
      ttl_ms_(std::move(ttl_ms)),
      key_(std::move(key)),
      set_pending_(cs_.size(), 0),
      del_pending_(cs_.size(), 0) {}

absl::Status RawFanoutRunner::FlushAll() {
  for (ContextPtr& c : cs_) {
    int done = 0;
    while (!done) {
      if (redisBufferWrite(c.get(), &done) != REDIS_OK) {
        return absl::UnavailableError(c->errstr);
      }
    }
  }
  return absl::OkStatus();
}

template <typename OnReply, typename Done>
absl::Status RawFanoutRunner::Pump(OnReply on_reply, Done done) {
  const SteadyTime deadline = Now() + std::chrono::seconds(2);
  std::vector<pollfd> fds;
  std::vector<int> index;
  while (!done()) {
    fds.clear();
    index.clear();
    for (size_t i = 0; i < cs_.size(); ++i) {
      if (set_pending_[i] + del_pending_[i] > 0) {
        fds.push_back({cs_[i]->fd, POLLIN, 0});
        index.push_back(static_cast<int>(i));
      }
    }
    if (fds.empty()) return absl::InternalError("raw: nothing to wait for");
    if (Now() >= deadline) return absl::DeadlineExceededError("raw: no reply");
    int rc = poll(fds.data(), fds.size(), 2000);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return absl::DeadlineExceededError("raw: poll");
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      const int i = index[k];
      redisContext* c = cs_[i].get();
      if (redisBufferRead(c) != REDIS_OK) {
        return absl::UnavailableError(absl::StrCat("raw: ", c->errstr));
      }
      while (set_pending_[i] + del_pending_[i] > 0) {
        void* raw = nullptr;
        if (redisGetReplyFromReader(c, &raw) != REDIS_OK) {
          return absl::InternalError("raw: protocol error");
        }
        if (raw == nullptr) break;
        ReplyPtr reply(static_cast<redisReply*>(raw));
        if (set_pending_[i]) {
          set_pending_[i] = 0;
          // A SET reply owed from the acquire phase, read during release.
          if (del_pending_[i]) {
            if (reply->type != REDIS_REPLY_STATUS) {
              return absl::InternalError(
                  absl::StrCat("raw late SET: ", DescribeReply(reply.get())));
            }
            continue;
          }
        } else {
          del_pending_[i] = 0;
        }
        if (absl::Status s = on_reply(i, reply.get()); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status RawFanoutRunner::Cycle(CycleSample* sample) {
  const int n = static_cast<int>(cs_.size());
  const int quorum = n / 2 + 1;
  const SteadyTime t0 = Now();
  absl::StatusOr<std::string> token = internal::NewToken();
  if (!token.ok()) return token.status();
  const char* set_argv[] = {"SET", key_.data(), token->data(),
                            "NX",  "PX",        ttl_ms_.data()};
  const size_t set_lens[] = {3, key_.size(), token->size(),
                             2, 2,           ttl_ms_.size()};
  for (int i = 0; i < n; ++i) {
    redisAppendCommandArgv(cs_[i].get(), 6, set_argv, set_lens);
    set_pending_[i] = 1;
  }
  if (absl::Status s = FlushAll(); !s.ok()) return s;
  int granted = 0;
  absl::Status s = Pump(
      [&](int i, const redisReply* r) -> absl::Status {
        if (r->type != REDIS_REPLY_STATUS || std::strcmp(r->str, "OK") != 0) {
          return absl::InternalError(
              absl::StrCat("raw SET: ", DescribeReply(r)));
        }
        ++granted;
        return absl::OkStatus();
      },
      [&] { return granted >= quorum; });
  if (!s.ok()) return s;
  const SteadyTime t1 = Now();

  const std::string& sha = internal::ReleaseScript().sha1;
  const char* del_argv[] = {"EVALSHA", sha.data(), "1", key_.data(),
                            token->data()};
  const size_t del_lens[] = {7, sha.size(), 1, key_.size(), token->size()};
  for (int i = 0; i < n; ++i) {
    redisAppendCommandArgv(cs_[i].get(), 5, del_argv, del_lens);
    del_pending_[i] = 1;
  }
  if (s = FlushAll(); !s.ok()) return s;
  int released = 0;
  s = Pump(
      [&](int i, const redisReply* r) -> absl::Status {
        if (r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
          return absl::InternalError(
              absl::StrCat("raw EVALSHA: ", DescribeReply(r)));
        }
        ++released;
        return absl::OkStatus();
      },
      [&] { return released == n; });
  if (!s.ok()) return s;
  const SteadyTime t2 = Now();
  sample->acquire_us = MicrosBetween(t0, t1);
  sample->cycle_us = MicrosBetween(t0, t2);
  return absl::OkStatus();
}

}  // namespace redlock::bench
