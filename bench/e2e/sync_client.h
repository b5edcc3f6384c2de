// Copyright 2026 The redlock Authors.
//
// A synchronous hiredis client: connect (AUTH, SELECT), one command, the
// release script, one INFO field.

#ifndef REDLOCK_BENCH_E2E_SYNC_CLIENT_H_
#define REDLOCK_BENCH_E2E_SYNC_CLIENT_H_

#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"

namespace redlock::bench {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// "+OK", "-ERR ...", ":1", "nil", "\"...\"", "array", or "no reply".
std::string DescribeReply(const redisReply* r);

// One command; an error reply is an error.
absl::StatusOr<ReplyPtr> SyncCommand(redisContext* c,
                                     const std::vector<std::string>& argv);

// Connects with a 2 s timeout, then AUTH and SELECT as the address asks.
absl::StatusOr<ContextPtr> ConnectSync(const MasterAddress& address);

// SCRIPT LOAD of the release script, checking the SHA1 it returns.
absl::Status LoadReleaseScript(redisContext* c);

// "INFO server" field of one master, e.g. redis_version; "" if unknown.
std::string InfoField(const MasterAddress& address, absl::string_view field);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_SYNC_CLIENT_H_
