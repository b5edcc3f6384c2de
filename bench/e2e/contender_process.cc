// Copyright 2026 The redlock Authors.

#include "bench/e2e/contender_process.h"

#include <signal.h>

#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "redlock/health.h"

namespace redlock::bench {

absl::StatusOr<std::vector<std::string>> ReadMasters() {
  signal(SIGPIPE, SIG_IGN);
  std::string line;
  if (!std::getline(std::cin, line)) {
    return absl::NotFoundError("end of file before the masters");
  }
  absl::string_view list = line;
  if (!absl::ConsumePrefix(&list, "masters ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected \"masters ...\", got \"", line, "\""));
  }
  return std::vector<std::string>(absl::StrSplit(list, ',', absl::SkipEmpty()));
}

absl::Status WarmUpClient(Redlock& client, absl::Duration budget,
                          absl::FunctionRef<absl::Status()> cycle) {
  const absl::Time deadline = absl::Now() + budget;
  absl::Status last = absl::UnavailableError("not tried");
  bool cycled = false;
  while (absl::Now() < deadline) {
    if (!cycled) {
      absl::Status s = cycle();
      cycled = s.ok();
      if (!s.ok()) last = std::move(s);
    }
    bool all = cycled;
    for (const MasterHealth& h : client.Health()) {
      if (!h.connected || !h.grants_count.ok()) {
        all = false;
        last = absl::UnavailableError(
            absl::StrCat(h.master, " not ready: ", h.last_error.ToString(),
                         " / ", h.grants_count.ToString()));
      }
    }
    if (all) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(5));
  }
  return last;
}

}  // namespace redlock::bench
