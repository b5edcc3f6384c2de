// Copyright 2026 The redlock Authors.
//
// The fencing counters across a change: read on every server, the highest
// raised on every member before a finish.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "src/admin/reconfigure.h"
#include "src/admin/reconfigure_internal.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"

namespace redlock::admin {

using internal::Membership;
using internal::RedisReply;
using Code = Outcome::Code;

namespace detail {
namespace {

// "redlock:" -> "redlock:" with every glob character escaped.
std::string GlobEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

// SCAN for the counter keys, then GET each. Empty, or why not read.
std::string ReadCountersOn(ServerIo& io, int i, const std::string& pattern,
                           std::map<std::string, uint64_t>* values) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    absl::StatusOr<RedisReply> reply =
        io.Call(i, {"SCAN", cursor, "MATCH", pattern, "COUNT", "100"});
    if (!reply.ok() || IsError(*reply)) {
      return reply.ok() ? reply->str : reply.status().ToString();
    }
    if (reply->elements.size() != 2) return "unexpected SCAN reply";
    cursor = reply->elements[0].str;
    for (const RedisReply& key : reply->elements[1].elements) {
      keys.push_back(key.str);
    }
  } while (cursor != "0");
  for (const std::string& key : keys) {
    absl::StatusOr<RedisReply> value = io.Call(i, {"GET", key});
    if (!value.ok()) return value.status().ToString();
    uint64_t n = 0;
    if (IsString(*value) && absl::SimpleAtoi(value->str, &n)) {
      (*values)[key] = n;
    }
  }
  return "";
}

}  // namespace

Counters ReadCounters(const Request& request, ServerIo& io,
                      const std::vector<Server>& servers) {
  // The counter prefix starts every counter key.
  const std::string pattern =
      absl::StrCat(GlobEscape(request.counter_prefix), "*");
  std::vector<std::map<std::string, uint64_t>> per_server(servers.size());
  std::vector<std::string> errors(servers.size());
  io.ForEach(servers.size(), [&](size_t i) {
    if (!servers[i].reachable) return;
    errors[i] =
        ReadCountersOn(io, static_cast<int>(i), pattern, &per_server[i]);
  });
  Counters out;
  for (size_t i = 0; i < servers.size(); ++i) {
    if (!errors[i].empty()) out.error[servers[i].name] = errors[i];
    for (const auto& [key, value] : per_server[i]) {
      out.highest[key] = std::max(out.highest[key], value);
    }
  }
  return out;
}

// Raises every counter in `counters` on server `i` (FenceWriteCommand never
// lowers one). OK when every counter there is now at least the highest.
absl::Status RaiseCounters(ServerIo& io, int i, const Counters& counters) {
  for (const auto& [key, value] : counters.highest) {
    absl::StatusOr<RedisReply> reply = io.Call(
        i, internal::CommandArgv(internal::FenceWriteCommand(key, value),
                                 /*eval=*/true));
    if (!reply.ok()) return reply.status();
    if (IsError(*reply)) {
      return absl::UnavailableError(
          absl::StrCat("raising ", key, ": ", reply->str));
    }
    // 0: it already held as much or more; 1: raised. Both leave it at least
    // at `value`.
  }
  return absl::OkStatus();
}

// The finish's counters: tokens after the change must exceed every token
// before. Every token was written to a quorum of the old members, so the
// highest read covers them all only when the read reaches |O| - quorum(O) +
// 1 old members whose counters hold every token written to them
// (WhyCountersIncomplete()): one in every old quorum. A member that lost
// data in a restart may hold none of a token that the members it shared a
// quorum with still hold (found by the simulation, seed 415 of
// reconfigure-lossy at --ttl_ms=1500: fence 2 issued twice). A server whose
// counters cannot be read stops the finish. kOk when enough new members
// hold them raised.
Code RaiseEveryCounter(PassState& p) {
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  const int old_size = static_cast<int>(O.size());
  const int old_needed =
      old_size - internal::QuorumOf(old_size, p.target.quorum) + 1;
  int complete = 0;
  for (const Server& s : p.servers) {
    if (!Contains(O, s.name) || !s.reachable) continue;
    const std::string why = WhyCountersIncomplete(s);
    if (why.empty()) {
      ++complete;
    } else {
      p.out.Line(absl::StrCat("  ", s.Label(),
                              ": counters may be older than tokens already "
                              "issued: ",
                              why));
    }
  }
  if (complete < old_needed) {
    p.out.Error(absl::StrCat(
        "reconfigure: the fencing counters of only ", complete, " of the ",
        old_size,
        " old members are known to hold every token written to "
        "them (",
        old_needed,
        " needed, one in every quorum of them); nothing finished. Run it "
        "again when they answer; a member that restarted without its data "
        "needs an operator to raise its counters and re-mark it (docs/"
        "lifetime-and-fencing.md, \"Restoring fencing\")"));
    return Code::kUnavailable;
  }
  const Counters counters = ReadCounters(p.request, p.io, p.servers);
  const int new_size = static_cast<int>(N.size());
  const int needed =
      new_size - internal::QuorumOf(new_size, p.target.quorum) + 1;
  int raised = 0;
  std::vector<absl::Status> copy(p.servers.size(), absl::OkStatus());
  if (!p.dry_run()) {
    p.io.ForEach(p.servers.size(), [&](size_t i) {
      const Server& s = p.servers[i];
      if (!s.reachable || !Contains(N, s.name)) return;
      copy[i] = RaiseCounters(p.io, static_cast<int>(i), counters);
    });
  }
  p.out.Line(absl::StrCat("  fencing counters: ", counters.highest.size(),
                          " found; each raised to the highest any server "
                          "holds on every new member"));
  for (const auto& [name, error] : counters.error) {
    p.out.Line(absl::StrCat("  ", name, ": counters not read: ", error));
  }
  for (size_t i = 0; i < p.servers.size(); ++i) {
    const Server& s = p.servers[i];
    if (!Contains(N, s.name)) continue;
    if (!s.reachable) {
      p.out.Line(absl::StrCat("  ", s.Label(),
                              ": counters not raised "
                              "(unreachable)"));
    } else if (p.dry_run()) {
      p.out.Line(absl::StrCat("  ", s.Label(), ": would raise ",
                              counters.highest.size(), " counters"));
    } else if (copy[i].ok()) {
      ++raised;
      p.out.Line(absl::StrCat("  ", s.Label(), ": counters raised"));
    } else {
      p.out.Line(absl::StrCat("  ", s.Label(),
                              ": counters NOT raised: ", copy[i].ToString()));
    }
  }
  if (!p.dry_run() && (raised < needed || !counters.error.empty())) {
    // A user the documented rule made may not SCAN (docs/security.md): say
    // what to grant rather than to wait for an answer that will not change.
    // Redis names the command it refused: "NOPERM ... run the 'scan' ...".
    bool no_scan = false;
    for (const auto& [name, error] : counters.error) {
      no_scan = no_scan || (absl::StrContains(error, "NOPERM") &&
                            absl::StrContains(error, "'scan'"));
    }
    p.out.Error(absl::StrCat(
        "reconfigure: the fencing counters reached ", raised, " of ", new_size,
        " new members (", needed, " needed)",
        counters.error.empty() ? ""
                               : ", and some servers' counters were not "
                                 "read",
        "; nothing finished; ",
        no_scan ? "the user may not SCAN for them: give the operator's user "
                  "+scan (ACL SETUSER <user> +scan, docs/security.md) and run "
                  "it again"
                : "run it again when they answer"));
    return Code::kUnavailable;
  }
  return Code::kOk;
}

}  // namespace detail

using namespace detail;  // NOLINT: this file's own helpers.

std::string WhyCountersIncomplete(const Server& s) {
  if (!s.marker.has_value()) return "no marker";
  if (s.marker_state != internal::kTrustedMarker) {
    return absl::StrCat("marked ", s.marker_state,
                        " (it came back without its data)");
  }
  if (s.marker_run_id == s.run_id) return "";
  if (internal::Durable(s.persistence)) return "";
  return absl::StrCat("restarted since it was marked, with persistence ",
                      internal::DescribePersistence(s.persistence));
}

}  // namespace redlock::admin
