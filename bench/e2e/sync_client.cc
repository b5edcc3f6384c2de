// Copyright 2026 The redlock Authors.

#include "bench/e2e/sync_client.h"

#include <sys/time.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/algorithm/scripts.h"

namespace redlock::bench {

std::string DescribeReply(const redisReply* r) {
  if (r == nullptr) return "no reply";
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return absl::StrCat("+", r->str);
    case REDIS_REPLY_ERROR:
      return absl::StrCat("-", r->str);
    case REDIS_REPLY_INTEGER:
      return absl::StrCat(":", r->integer);
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STRING:
      return absl::StrCat("\"", absl::string_view(r->str, r->len), "\"");
    default:
      return "array";
  }
}

absl::StatusOr<ReplyPtr> SyncCommand(redisContext* c,
                                     const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(
      c, static_cast<int>(argv.size()), ptrs.data(), lens.data())));
  if (reply == nullptr) {
    return absl::UnavailableError(absl::StrCat(argv[0], ": ", c->errstr));
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(
        absl::StrCat(argv[0], ": ", DescribeReply(reply.get())));
  }
  return reply;
}

absl::StatusOr<ContextPtr> ConnectSync(const MasterAddress& address) {
  const timeval tv = {2, 0};
  ContextPtr c(redisConnectWithTimeout(address.host.c_str(), address.port, tv));
  if (c == nullptr) return absl::InternalError("cannot allocate a context");
  if (c->err != 0) {
    return absl::UnavailableError(
        absl::StrCat("connect to ", address.Name(), ": ", c->errstr));
  }
  redisSetTimeout(c.get(), tv);
  if (address.has_password) {
    std::vector<std::string> auth = {"AUTH"};
    if (!address.user.empty()) auth.push_back(address.user);
    auth.push_back(address.password);
    absl::StatusOr<ReplyPtr> r = SyncCommand(c.get(), auth);
    if (!r.ok()) return r.status();
  }
  if (address.db != 0) {
    absl::StatusOr<ReplyPtr> r =
        SyncCommand(c.get(), {"SELECT", absl::StrCat(address.db)});
    if (!r.ok()) return r.status();
  }
  return c;
}

absl::Status LoadReleaseScript(redisContext* c) {
  const internal::Script& script = internal::ReleaseScript();
  absl::StatusOr<ReplyPtr> r =
      SyncCommand(c, {"SCRIPT", "LOAD", std::string(script.source)});
  if (!r.ok()) return r.status();
  if ((*r)->type != REDIS_REPLY_STRING || (*r)->str != script.sha1) {
    return absl::InternalError(absl::StrCat("SCRIPT LOAD returned ",
                                            DescribeReply(r->get()),
                                            ", expected ", script.sha1));
  }
  return absl::OkStatus();
}

std::string InfoField(const MasterAddress& address, absl::string_view field) {
  absl::StatusOr<ContextPtr> c = ConnectSync(address);
  if (!c.ok()) return "";
  absl::StatusOr<ReplyPtr> r = SyncCommand(c->get(), {"INFO", "server"});
  if (!r.ok() || (*r)->type != REDIS_REPLY_STRING) return "";
  for (absl::string_view line :
       absl::StrSplit(absl::string_view((*r)->str, (*r)->len), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, absl::StrCat(field, ":"))) {
      return std::string(line);
    }
  }
  return "";
}

}  // namespace redlock::bench
