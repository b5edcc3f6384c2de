// Copyright 2026 The redlock Authors.

#include "bench/e2e/floor_runner.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/e2e/common.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/token.h"

namespace redlock::bench {

absl::StatusOr<std::unique_ptr<FloorRunner>> FloorRunner::Create(
    const MasterAddress& address, absl::Duration ttl) {
  absl::StatusOr<ContextPtr> c = ConnectSync(address);
  if (!c.ok()) return c.status();
  if (absl::Status s = LoadReleaseScript(c->get()); !s.ok()) return s;
  return std::unique_ptr<FloorRunner>(
      new FloorRunner(*std::move(c), TtlMillis(ttl)));
}

FloorRunner::FloorRunner(ContextPtr c, std::string ttl_ms)
    : c_(std::move(c)),
      key_(absl::StrCat(kKeyPrefix, "floor")),
      ttl_ms_(std::move(ttl_ms)) {}

absl::Status FloorRunner::Cycle(CycleSample* sample) {
  const SteadyTime t0 = Now();
  absl::StatusOr<std::string> token = internal::NewToken();
  if (!token.ok()) return token.status();
  const char* set_argv[] = {"SET", key_.data(), token->data(),
                            "NX",  "PX",        ttl_ms_.data()};
  const size_t set_lens[] = {3, key_.size(), token->size(),
                             2, 2,           ttl_ms_.size()};
  ReplyPtr set(static_cast<redisReply*>(
      redisCommandArgv(c_.get(), 6, set_argv, set_lens)));
  if (set == nullptr || set->type != REDIS_REPLY_STATUS ||
      std::strcmp(set->str, "OK") != 0) {
    return absl::InternalError(
        absl::StrCat("floor SET: ",
                     set ? DescribeReply(set.get()) : std::string(c_->errstr)));
  }
  const SteadyTime t1 = Now();
  const std::string& sha = internal::ReleaseScript().sha1;
  const char* del_argv[] = {"EVALSHA", sha.data(), "1", key_.data(),
                            token->data()};
  const size_t del_lens[] = {7, sha.size(), 1, key_.size(), token->size()};
  ReplyPtr del(static_cast<redisReply*>(
      redisCommandArgv(c_.get(), 5, del_argv, del_lens)));
  if (del == nullptr || del->type != REDIS_REPLY_INTEGER || del->integer != 1) {
    return absl::InternalError(
        absl::StrCat("floor EVALSHA: ",
                     del ? DescribeReply(del.get()) : std::string(c_->errstr)));
  }
  const SteadyTime t2 = Now();
  sample->acquire_us = MicrosBetween(t0, t1);
  sample->cycle_us = MicrosBetween(t0, t2);
  return absl::OkStatus();
}

}  // namespace redlock::bench
