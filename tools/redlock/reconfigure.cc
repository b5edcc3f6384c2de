// Copyright 2026 The redlock Authors.

#include "tools/redlock/reconfigure.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/keys.h"
#include "src/admin/connection.h"
#include "src/admin/reconfigure.h"

namespace redlock::cli {
namespace {

// Lines to stdout, errors to stderr after "redlock: ".
class StdOutput final : public admin::Output {
 public:
  void Line(absl::string_view text) override {
    const std::string line = absl::StrCat(text, "\n");
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }
  void Error(absl::string_view text) override { PrintError(text); }
};

int ExitCode(admin::Outcome::Code code) {
  switch (code) {
    case admin::Outcome::Code::kOk:
      return kExitOk;
    case admin::Outcome::Code::kConflict:
      return kExitConflict;
    case admin::Outcome::Code::kRefused:
      return kExitRefused;
    case admin::Outcome::Code::kUnavailable:
      return kExitUnavailable;
  }
  return kExitSoftware;
}

// The servers of --masters and --to, one per member name, and their
// addresses in the same order; false (after saying why) if a list names
// one member twice.
bool ListServers(const Config& config, std::vector<admin::Server>* servers,
                 std::vector<MasterAddress>* addresses,
                 admin::Request* request) {
  auto add = [&](const std::vector<MasterAddress>& list, bool to,
                 std::vector<std::string>* names) -> bool {
    for (const MasterAddress& address : list) {
      const std::string name = address.MemberName();
      if (std::find(names->begin(), names->end(), name) != names->end()) {
        PrintError(absl::StrCat("reconfigure: ", to ? "--to" : "--masters",
                                " names member ", name, " twice"));
        return false;
      }
      names->push_back(name);
      auto it =
          std::find_if(servers->begin(), servers->end(),
                       [&](const admin::Server& s) { return s.name == name; });
      if (it == servers->end()) {
        admin::Server s;
        s.name = name;
        s.address = address.Name();
        servers->push_back(std::move(s));
        addresses->push_back(address);
        it = servers->end() - 1;
      }
      (to ? it->in_to : it->in_masters) = true;
    }
    return true;
  };
  if (!add(config.masters, false, &request->masters) ||
      !add(config.to, true, &request->to)) {
    return false;
  }
  request->masters = admin::CanonicalMembers(request->masters);
  request->to = admin::CanonicalMembers(request->to);
  return true;
}

}  // namespace

int ReconfigureCommand(const Config& config) {
  std::vector<admin::Server> servers;
  std::vector<MasterAddress> addresses;
  admin::Request request;
  if (!ListServers(config, &servers, &addresses, &request)) return kExitUsage;
  request.marker_key = DeploymentMarkerKey(config.options);
  request.counter_prefix = FenceCounterKey(config.options, "");
  request.quorum = config.options.quorum;
  request.max_ttl = config.options.max_ttl;
  request.dry_run = config.dry_run;
  StdOutput out;

  // With --wait, sleep through the wait (at most --wait) and look again;
  // each look is a full read, so what changed meanwhile is judged afresh.
  // Bounded: a pass that asks to retry has found a finite wait no longer
  // than the wait itself, or caught servers up.
  absl::Duration slept = absl::ZeroDuration();
  for (int pass = 0; pass < 8; ++pass) {
    admin::ConnectionIo io(addresses, TimeoutsOf(config));
    const admin::Outcome outcome = admin::Pass(request, io, out, &servers);
    if (outcome.again) continue;
    const int code = ExitCode(outcome.code);
    if (code != kExitConflict || config.dry_run) {
      if (code == kExitConflict) {
        PrintError(absl::StrCat("reconfigure: the wait is not over: ",
                                Pretty(outcome.retry_after), " left"));
      }
      return code;
    }
    const absl::Duration sleep = outcome.retry_after + absl::Milliseconds(50);
    if (slept + sleep > config.wait) {
      PrintError(absl::StrCat(
          "reconfigure: not finished: the wait is not over (",
          Pretty(outcome.retry_after),
          " left); run the same command again then, or add --wait"));
      return kExitConflict;
    }
    PrintInfo(config.verbosity,
              absl::StrCat("reconfigure: waiting ", Pretty(sleep),
                           " for the wait to end"));
    absl::SleepFor(sleep);
    slept += sleep;
  }
  PrintError("reconfigure: the wait did not end after 8 looks; run it again");
  return kExitConflict;
}

}  // namespace redlock::cli
