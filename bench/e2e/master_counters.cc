// Copyright 2026 The redlock Authors.

#include "bench/e2e/master_counters.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/e2e/sync_client.h"

namespace redlock::bench {

MasterCounters& MasterCounters::operator+=(const MasterCounters& o) {
  commands += o.commands;
  for (const auto& [name, n] : o.calls) calls[name] += n;
  for (const auto& [name, n] : o.usec) usec[name] += n;
  cpu += o.cpu;
  return *this;
}

MasterCounters MasterCounters::operator-(const MasterCounters& o) const {
  MasterCounters d = *this;
  d.commands -= o.commands;
  for (const auto& [name, n] : o.calls) d.calls[name] -= n;
  for (const auto& [name, n] : o.usec) d.usec[name] -= n;
  d.cpu = cpu - o.cpu;
  for (auto it = d.calls.begin(); it != d.calls.end();) {
    it = it->second == 0 ? d.calls.erase(it) : std::next(it);
  }
  for (auto it = d.usec.begin(); it != d.usec.end();) {
    it = d.calls.count(it->first) == 0 ? d.usec.erase(it) : std::next(it);
  }
  return d;
}

void MasterCounters::RemoveInfo(int64_t readings) {
  commands -= readings * kInfoCommandsPerReading;
  auto it = calls.find("info");
  if (it == calls.end()) return;
  it->second -= readings * kInfoCommandsPerReading;
  if (it->second == 0) calls.erase(it);
}

MasterCounters ParseMasterCounters(absl::string_view info) {
  MasterCounters c;
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "total_commands_processed:")) {
      (void)absl::SimpleAtoi(line, &c.commands);
    } else if (absl::ConsumePrefix(&line, "used_cpu_user:")) {
      (void)absl::SimpleAtod(line, &c.cpu.user);
    } else if (absl::ConsumePrefix(&line, "used_cpu_sys:")) {
      (void)absl::SimpleAtod(line, &c.cpu.sys);
    } else if (absl::ConsumePrefix(&line, "cmdstat_")) {
      // cmdstat_NAME:calls=N,usec=...
      const std::vector<absl::string_view> parts =
          absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (parts.size() != 2) continue;
      for (absl::string_view field : absl::StrSplit(parts[1], ',')) {
        int64_t n = 0;
        if (absl::ConsumePrefix(&field, "calls=") &&
            absl::SimpleAtoi(field, &n)) {
          c.calls[std::string(parts[0])] = n;
        } else if (absl::ConsumePrefix(&field, "usec=") &&
                   absl::SimpleAtoi(field, &n)) {
          c.usec[std::string(parts[0])] = n;
        }
      }
    }
  }
  return c;
}

absl::StatusOr<MasterCounters> ReadMasterCounters(redisContext* c) {
  absl::StatusOr<ReplyPtr> r = SyncCommand(c, {"INFO", "all"});
  if (!r.ok()) return r.status();
  if ((*r)->type != REDIS_REPLY_STRING) {
    return absl::InternalError(
        absl::StrCat("INFO all returned ", DescribeReply(r->get())));
  }
  return ParseMasterCounters(absl::string_view((*r)->str, (*r)->len));
}

}  // namespace redlock::bench
