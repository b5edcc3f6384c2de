// Copyright 2026 The redlock Authors.

#include "tools/redlock/commands.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "redlock/async_redlock.h"
#include "redlock/keys.h"
#include "redlock/lock.h"
#include "src/master.h"
#include "tools/redlock/attempts.h"
#include "tools/redlock/direct.h"
#include "tools/redlock/progress.h"
#include "tools/redlock/run.h"

namespace redlock::cli {
namespace {

// --json output is built with nlohmann::ordered_json: keys come out in the
// order they are set (the order they have always had; scripts may rely on
// it), integers stay integers, and the library escapes the strings.
using Json = nlohmann::ordered_json;

// One object on one line, as before: no spaces, then a newline. Bytes that
// are not UTF-8 (a foreign value under the lock key, a server's error text)
// become U+FFFD rather than making the line invalid JSON.
std::string JsonLine(const Json& json) {
  return json.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                   Json::error_handler_t::replace) +
         "\n";
}

Json StringOrNull(const std::optional<std::string>& text) {
  return text.has_value() ? Json(*text) : Json(nullptr);
}

// A fence counter as a JSON number when it is one (it always should be).
Json Counter(const std::optional<std::string>& value) {
  uint64_t n = 0;
  if (value.has_value() && absl::SimpleAtoi(*value, &n)) return n;
  return StringOrNull(value);
}

// Milliseconds to the microsecond, as a JSON number: rounded by printf as
// before (so the value does not change), printed without trailing zeros
// (0.21, 1.0, 12.345).
double Millis(absl::Duration d) {
  double ms = 0;
  (void)absl::SimpleAtod(absl::StrFormat("%.3f", absl::ToDoubleMilliseconds(d)),
                         &ms);
  return ms;
}

void Print(absl::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

Timeouts TimeoutsOf(const Config& config) {
  return Timeouts{config.options.connect_timeout,
                  config.options.request_timeout};
}

// --- release and extend ----------------------------------------------------

struct TokenWords {
  absl::string_view op;       // "release"
  absl::string_view granted;  // "released"
};

absl::string_view VoteWord(const TokenWords& words, MasterVote::Kind kind) {
  switch (kind) {
    case MasterVote::Kind::kGranted:
      return words.granted;
    case MasterVote::Kind::kDenied:
      return "not_held";
    default:
      return "failed";
  }
}

// Prints the outcome (stdout) and says what went wrong (stderr); returns the
// exit code.
int ReportTokenOutcome(const Config& config, const TokenWords& words,
                       const TokenOutcome& outcome, bool extend) {
  const bool too_late = extend && outcome.result == TokenOutcome::Result::kOk &&
                        outcome.validity <= absl::ZeroDuration();
  std::string result;
  switch (outcome.result) {
    case TokenOutcome::Result::kOk:
      result = too_late ? "too_late" : std::string(words.granted);
      break;
    case TokenOutcome::Result::kLost:
      result = "lost";
      break;
    case TokenOutcome::Result::kUnavailable:
      result = "unavailable";
      break;
  }
  const int n = static_cast<int>(outcome.votes.size());
  // Validity only counts when a quorum extended the lock in time.
  const int64_t valid_ms =
      outcome.result == TokenOutcome::Result::kOk && !too_late
          ? absl::ToInt64Milliseconds(outcome.validity)
          : 0;
  if (config.json) {
    Json json;
    json["resource"] = config.resource;
    json["result"] = result;
    json[std::string(words.granted)] = outcome.granted;
    json["not_held"] = outcome.denied;
    json["failed"] = outcome.failed;
    json["quorum"] = outcome.quorum;
    json["masters_total"] = n;
    if (extend) {
      json["ttl_ms"] = absl::ToInt64Milliseconds(config.ttl);
      json["valid_ms"] = valid_ms;
    }
    Json masters = Json::array();
    for (const MasterVote& v : outcome.votes) {
      Json m;
      m["master"] = v.master;
      m["result"] = std::string(VoteWord(words, v.kind));
      m["latency_ms"] = Millis(v.latency);
      if (!v.error.ok()) m["error"] = v.error.ToString();
      masters.push_back(std::move(m));
    }
    json["masters"] = std::move(masters);
    Print(JsonLine(json));
  } else {
    std::string text =
        absl::StrCat("resource=", config.resource, "\nresult=", result, "\n",
                     words.granted, "=", outcome.granted,
                     "\nnot_held=", outcome.denied, "\nfailed=", outcome.failed,
                     "\nquorum=", outcome.quorum, "\nmasters=", n, "\n");
    if (extend) {
      absl::StrAppend(&text, "ttl_ms=", absl::ToInt64Milliseconds(config.ttl),
                      "\nvalid_ms=", valid_ms, "\n");
    }
    for (const MasterVote& v : outcome.votes) {
      absl::StrAppend(&text, "master.", v.master, "=", VoteWord(words, v.kind),
                      "\n");
    }
    Print(text);
  }

  std::vector<std::string> per_master;
  for (const MasterVote& v : outcome.votes) {
    per_master.push_back(
        absl::StrCat(v.master, " ", VoteWord(words, v.kind), " (",
                     v.error.ok() ? Pretty(v.latency, absl::Microseconds(10))
                                  : v.error.ToString(),
                     ")"));
  }
  const std::string counts = absl::StrCat(
      outcome.granted, " ", words.granted, ", ", outcome.denied, " not held, ",
      outcome.failed, " failed (quorum ", outcome.quorum, " of ", n,
      "): ", absl::StrJoin(per_master, ", "));
  if (too_late) {
    PrintError(absl::StrCat(words.op, " ", config.resource,
                            ": the quorum came too late to leave validity (",
                            Pretty(outcome.elapsed), " for a ",
                            Pretty(config.ttl), " TTL); ", counts));
    return kExitUnavailable;
  }
  switch (outcome.result) {
    case TokenOutcome::Result::kOk:
      PrintDebug(config.verbosity,
                 absl::StrCat(words.op, " ", config.resource, ": ", counts));
      return kExitOk;
    case TokenOutcome::Result::kLost:
      PrintError(absl::StrCat(
          words.op, " ", config.resource,
          ": the token is not held on a quorum (expired, released or taken); ",
          counts));
      return kExitLost;
    case TokenOutcome::Result::kUnavailable:
      PrintError(absl::StrCat(words.op, " ", config.resource,
                              ": too few masters answered; ", counts));
      return kExitUnavailable;
  }
  return kExitSoftware;
}

// --- status ----------------------------------------------------------------

Json JsonMasterStatus(const MasterStatus& s) {
  Json json;
  json["master"] = s.master;
  json["reachable"] = s.reachable;
  if (!s.reachable) {
    json["error"] = s.error.ToString();
    return json;
  }
  const bool held = s.token.has_value();
  json["latency_ms"] = Millis(s.latency);
  json["held"] = held;
  json["token_prefix"] = held ? Json(TokenPrefix(*s.token)) : Json(nullptr);
  json["pttl_ms"] = held && s.pttl_ms >= -1 ? Json(s.pttl_ms) : Json(nullptr);
  json["fence"] = Counter(s.fence);
  json["run_id"] = s.run_id.empty() ? Json(nullptr) : Json(s.run_id);
  json["uptime_s"] = s.uptime_s.has_value() ? Json(*s.uptime_s) : Json(nullptr);
  json["marker"] = StringOrNull(s.marker);
  json["maxmemory_policy"] =
      s.maxmemory_policy.empty() ? Json(nullptr) : Json(s.maxmemory_policy);
  json["same_server_as"] =
      s.same_server_as < 0 ? Json(nullptr) : Json(s.same_server_as + 1);
  json["error"] = s.error.ok() ? Json(nullptr) : Json(s.error.ToString());
  return json;
}

// What an operator must know about one reachable master beyond the columns:
// the first failed command, a second address of one server, an eviction
// policy that can evict the lock's keys.
std::string StatusNote(const std::vector<MasterStatus>& statuses,
                       const MasterStatus& s) {
  std::vector<std::string> notes;
  if (!s.error.ok()) notes.push_back(s.error.ToString());
  if (s.same_server_as >= 0) {
    notes.push_back(
        absl::StrCat("same server as ", statuses[s.same_server_as].master,
                     " (same run_id): one server casts one vote; not counted"));
  }
  if (absl::Status risk = internal::EvictionRisk(s.maxmemory_policy);
      !risk.ok()) {
    notes.push_back(std::string(risk.message()));
  }
  return absl::StrJoin(notes, "; ");
}

// Left-aligned columns, two spaces apart.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) {
        line.append(widths[i] - row[i].size() + 2, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string HumanStatus(const Config& config, const StatusKeys& keys,
                        const std::vector<MasterStatus>& statuses,
                        const HolderSummary& summary) {
  const int n = static_cast<int>(statuses.size());
  std::vector<std::vector<std::string>> rows = {
      {"MASTER", "STATE", "LATENCY", "HOLDER", "PTTL", "FENCE", "RUN_ID",
       "UPTIME", "MARKER", "NOTE"}};
  for (const MasterStatus& s : statuses) {
    if (!s.reachable) {
      rows.push_back({s.master, "down", "-", "-", "-", "-", "-", "-", "-",
                      s.error.ToString()});
      continue;
    }
    const bool held = s.token.has_value();
    rows.push_back({
        s.master,
        "up",
        Pretty(s.latency, absl::Microseconds(10)),
        held ? TokenPrefix(*s.token) : "-",
        !held             ? "-"
        : s.pttl_ms == -1 ? "no TTL"
                          : Pretty(absl::Milliseconds(s.pttl_ms)),
        s.fence.value_or("-"),
        s.run_id.empty() ? "-" : TokenPrefix(s.run_id),
        s.uptime_s.has_value() ? Pretty(absl::Seconds(*s.uptime_s)) : "-",
        s.marker.value_or("-"),
        StatusNote(statuses, s),
    });
  }
  std::string out =
      absl::StrCat("resource ", config.resource, " (key ", keys.lock, "), ", n,
                   " masters, quorum ", config.quorum, "\n");
  absl::StrAppend(&out, Table(rows));
  if (summary.holders >= config.quorum) {
    absl::StrAppend(&out, "held by ", TokenPrefix(summary.token), " on ",
                    summary.holders, "/", n, " masters, expires in ~",
                    Pretty(summary.expires_in), "\n");
  } else if (summary.holders > 0) {
    absl::StrAppend(&out, "not held by a quorum: ", TokenPrefix(summary.token),
                    " on ", summary.holders, "/", n, " masters\n");
  } else {
    absl::StrAppend(&out, "not held\n");
  }
  if (summary.reachable < config.quorum) {
    absl::StrAppend(&out, "only ", summary.reachable, "/", n,
                    " masters reachable: no lock can be acquired (quorum ",
                    config.quorum, ")\n");
  }
  return out;
}

}  // namespace

int AcquireCommand(const Config& config, Redlock& client,
                   SignalWatch& signals) {
  ProgressDisplay progress(config, TimeoutsOf(config), MonotonicClock::now());
  std::optional<Lock> lock;
  const AttemptsResult attempts =
      RetryAttempts(config, signals, progress, [&]() -> AttemptResult {
        AcquireOptions acquire;
        acquire.ttl = config.ttl;
        acquire.wait = absl::ZeroDuration();
        acquire.fencing = config.fencing;
        absl::StatusOr<Lock> acquired =
            client.Acquire(config.resource, acquire);
        if (acquired.ok()) {
          lock = *std::move(acquired);
          return {absl::OkStatus(), false};
        }
        const absl::Status& s = acquired.status();
        return {s, absl::IsAborted(s) || absl::IsDeadlineExceeded(s)};
      });
  int signo = attempts.signal;
  if (lock.has_value()) {
    // Interrupted during the winning attempt: nobody will get the token.
    for (int s : signals.Drain()) {
      if (SignalWatch::IsTermination(s)) signo = s;
    }
    if (signo != 0) (void)client.Release(*lock);
  }
  if (signo != 0) {
    PrintInfo(config.verbosity,
              absl::StrCat("interrupted while acquiring ", config.resource));
    return kExitSignalBase + signo;
  }
  if (!lock.has_value()) {
    return AcquireFailure(config, attempts.status, "not acquired");
  }
  const int64_t valid_ms = absl::ToInt64Milliseconds(lock->remaining());
  const int64_t ttl_ms = absl::ToInt64Milliseconds(config.ttl);
  if (config.json) {
    Json json;
    json["resource"] = config.resource;
    json["key"] = lock->key();
    json["token"] = lock->token();
    json["ttl_ms"] = ttl_ms;
    json["valid_ms"] = valid_ms;
    if (config.fencing) json["fence"] = lock->fence();
    Print(JsonLine(json));
  } else {
    std::string text =
        absl::StrCat("resource=", config.resource, "\nkey=", lock->key(),
                     "\ntoken=", lock->token(), "\nttl_ms=", ttl_ms,
                     "\nvalid_ms=", valid_ms, "\n");
    if (config.fencing) absl::StrAppend(&text, "fence=", lock->fence(), "\n");
    Print(text);
  }
  PrintDebug(
      config.verbosity,
      absl::StrCat("acquired ", config.resource, " after ", attempts.attempts,
                   " attempt(s); votes: ", DescribeVotes(lock->votes())));
  return kExitOk;
}

int ReleaseCommand(const Config& config) {
  const TokenOutcome outcome =
      ReleaseToken(config.masters, config.quorum, TimeoutsOf(config),
                   LockKey(config.options, config.resource), config.token);
  return ReportTokenOutcome(config, {"release", "released"}, outcome,
                            /*extend=*/false);
}

int ExtendCommand(const Config& config) {
  const TokenOutcome outcome =
      ExtendToken(config.masters, config.quorum, TimeoutsOf(config),
                  LockKey(config.options, config.resource), config.token,
                  config.ttl, config.options.drift_factor);
  return ReportTokenOutcome(config, {"extend", "extended"}, outcome,
                            /*extend=*/true);
}

int StatusCommand(const Config& config) {
  const StatusKeys keys{LockKey(config.options, config.resource),
                        FenceCounterKey(config.options, config.resource),
                        DeploymentMarkerKey(config.options)};
  const std::vector<MasterStatus> statuses =
      ProbeMasters(config.masters, TimeoutsOf(config), keys, /*full=*/true);
  const HolderSummary summary = Summarize(statuses, config.quorum);
  if (config.json) {
    const bool held = summary.holders >= config.quorum;
    Json json;
    json["resource"] = config.resource;
    json["key"] = keys.lock;
    json["quorum"] = config.quorum;
    json["reachable"] = summary.reachable;
    json["held"] = held;
    json["holder"] =
        summary.holders > 0 ? Json(TokenPrefix(summary.token)) : Json(nullptr);
    json["holders"] = summary.holders;
    json["expires_in_ms"] =
        held && summary.expires_in != absl::InfiniteDuration()
            ? Json(absl::ToInt64Milliseconds(summary.expires_in))
            : Json(nullptr);
    Json masters = Json::array();
    for (const MasterStatus& s : statuses)
      masters.push_back(JsonMasterStatus(s));
    json["masters"] = std::move(masters);
    Print(JsonLine(json));
  } else {
    Print(HumanStatus(config, keys, statuses, summary));
  }
  return summary.reachable >= config.quorum ? kExitOk : kExitUnavailable;
}

}  // namespace redlock::cli
