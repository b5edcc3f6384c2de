// Copyright 2026 The redlock Authors.

#include "tools/redlock/commands.h"

#include <algorithm>
#include <cstdint>
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
#include "src/admin/probe.h"
#include "tools/redlock/attempts.h"
#include "tools/redlock/election_status.h"
#include "tools/redlock/exposition.h"
#include "tools/redlock/output.h"
#include "tools/redlock/progress.h"
#include "tools/redlock/run.h"

namespace redlock::cli {
namespace {

using admin::Connection;
using admin::ForEachInParallel;
using admin::HolderSummary;
using admin::MasterStatus;
using admin::ProbeMasters;
using admin::Reply;
using admin::StatusKeys;
using admin::Summarize;

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

// --- release and extend ----------------------------------------------------

// How a token operation went, in the words of the output.
struct TokenOutcome {
  absl::string_view op;       // "release"
  absl::string_view granted;  // "released"
  // released | extended | lost | unavailable | too_late, or error when the
  // library failed in a way none of these describes (kCancelled, ...).
  std::string result;
  // Each master's vote: the release's report, or the successful
  // extension's votes. A failed extension tells only its status (whose
  // message lists every vote), so it has none.
  bool has_votes = false;
  std::vector<MasterVote> votes;
  absl::Status error;       // The library's status when not OK.
  absl::Duration validity;  // extend: lock.remaining() after it succeeded.
};

absl::string_view VoteWord(const TokenOutcome& outcome, MasterVote::Kind kind) {
  switch (kind) {
    case MasterVote::Kind::kGranted:
      return outcome.granted;
    case MasterVote::Kind::kDenied:
      return "not_held";
    case MasterVote::Kind::kFailed:
      return "failed";
    case MasterVote::Kind::kPending:
      return "pending";
  }
  return "failed";
}

int CountVotes(const std::vector<MasterVote>& votes, MasterVote::Kind kind) {
  return static_cast<int>(
      std::count_if(votes.begin(), votes.end(),
                    [kind](const MasterVote& v) { return v.kind == kind; }));
}

// Prints the outcome (stdout); returns the exit code, after saying on
// stderr what went wrong.
int ReportTokenOutcome(const Config& config, const TokenOutcome& outcome,
                       bool extend) {
  const int n = static_cast<int>(config.masters.size());
  const int granted = CountVotes(outcome.votes, MasterVote::Kind::kGranted);
  const int denied = CountVotes(outcome.votes, MasterVote::Kind::kDenied);
  const int failed = CountVotes(outcome.votes, MasterVote::Kind::kFailed);
  const int pending = CountVotes(outcome.votes, MasterVote::Kind::kPending);
  const bool ok = outcome.result == outcome.granted;
  // Validity only counts when a quorum extended the lock in time.
  const int64_t valid_ms = ok ? absl::ToInt64Milliseconds(outcome.validity) : 0;
  if (config.json) {
    Json json;
    json["resource"] = config.resource;
    json["result"] = outcome.result;
    if (outcome.has_votes) {
      json[std::string(outcome.granted)] = granted;
      json["not_held"] = denied;
      json["failed"] = failed;
      json["pending"] = pending;
    }
    json["quorum"] = config.quorum;
    json["masters_total"] = n;
    if (extend) {
      json["ttl_ms"] = absl::ToInt64Milliseconds(config.ttl);
      json["valid_ms"] = valid_ms;
    }
    if (outcome.has_votes) {
      Json masters = Json::array();
      for (const MasterVote& v : outcome.votes) {
        Json m;
        m["master"] = v.master;
        m["result"] = std::string(VoteWord(outcome, v.kind));
        m["latency_ms"] = Millis(v.latency);
        if (!v.error.ok()) m["error"] = v.error.ToString();
        masters.push_back(std::move(m));
      }
      json["masters"] = std::move(masters);
    }
    if (!outcome.error.ok()) json["error"] = outcome.error.ToString();
    Print(JsonLine(json));
  } else {
    std::string text = absl::StrCat("resource=", config.resource,
                                    "\nresult=", outcome.result, "\n");
    if (outcome.has_votes) {
      absl::StrAppend(&text, outcome.granted, "=", granted,
                      "\nnot_held=", denied, "\nfailed=", failed,
                      "\npending=", pending, "\n");
    }
    absl::StrAppend(&text, "quorum=", config.quorum, "\nmasters=", n, "\n");
    if (extend) {
      absl::StrAppend(&text, "ttl_ms=", absl::ToInt64Milliseconds(config.ttl),
                      "\nvalid_ms=", valid_ms, "\n");
    }
    for (const MasterVote& v : outcome.votes) {
      absl::StrAppend(&text, "master.", v.master, "=",
                      VoteWord(outcome, v.kind), "\n");
    }
    Print(text);
  }

  // Why, on stderr: the votes as counted here, or the library's message,
  // which lists them.
  std::string why;
  if (outcome.has_votes) {
    std::vector<std::string> per_master;
    for (const MasterVote& v : outcome.votes) {
      per_master.push_back(absl::StrCat(
          v.master, " ", VoteWord(outcome, v.kind), " (",
          v.kind == MasterVote::Kind::kPending ? "no reply yet"
          : v.error.ok() ? Pretty(v.latency, absl::Microseconds(10))
                         : v.error.ToString(),
          ")"));
    }
    why = absl::StrCat(granted, " ", outcome.granted, ", ", denied,
                       " not held, ", failed, " failed, ", pending,
                       " no reply yet (quorum ", config.quorum, " of ", n,
                       "): ", absl::StrJoin(per_master, ", "));
  } else {
    why = std::string(outcome.error.message());
  }
  const std::string what = absl::StrCat(outcome.op, " ", config.resource);
  if (ok) {
    PrintDebug(config.verbosity, absl::StrCat(what, ": ", why));
    return kExitOk;
  }
  if (outcome.result == "lost") {
    PrintError(absl::StrCat(
        what, ": the token is not held on a quorum (expired, released or ",
        "taken); ", why));
    return kExitLost;
  }
  if (outcome.result == "unavailable") {
    PrintError(absl::StrCat(what, ": too few masters answered; ", why));
    return kExitUnavailable;
  }
  if (outcome.result == "too_late") {
    PrintError(absl::StrCat(what,
                            ": the quorum came too late to leave validity (a ",
                            Pretty(config.ttl), " TTL); ", why));
    return kExitUnavailable;
  }
  PrintError(absl::StrCat(what, ": ", outcome.error.ToString()));
  return kExitSoftware;
}

// The slots of semaphore config.resource (limit config.limit) that hold
// config.token on any master that answers (MGET of every slot key, in
// pieces: admin::GetMany).
// kNotFound if none does, kUnavailable if fewer than a quorum answered.
absl::StatusOr<std::vector<int>> SlotsHolding(const Config& config) {
  std::vector<std::string> slot_keys;
  for (int i = 0; i < config.limit; ++i) {
    slot_keys.push_back(SemaphoreSlotKey(config.options, config.resource, i));
  }
  std::vector<std::optional<std::vector<bool>>> held(config.masters.size());
  ForEachInParallel(config.masters.size(), [&](size_t m) {
    absl::StatusOr<std::unique_ptr<Connection>> connection =
        Connection::Open(config.masters[m], TimeoutsOf(config));
    if (!connection.ok()) return;
    absl::StatusOr<std::vector<std::optional<std::string>>> values =
        admin::GetMany(**connection, slot_keys);
    if (!values.ok()) return;
    std::vector<bool> mine;
    for (const std::optional<std::string>& v : *values) {
      mine.push_back(v == config.token);
    }
    held[m] = std::move(mine);
  });
  int answered = 0;
  std::vector<int> slots;
  for (int i = 0; i < config.limit; ++i) {
    bool any = false;
    for (const auto& h : held) any = any || (h.has_value() && (*h)[i]);
    if (any) slots.push_back(i);
  }
  for (const auto& h : held) answered += h.has_value();
  if (answered < config.quorum) {
    return absl::UnavailableError(absl::StrCat(
        "too few masters answered to find the slots holding the token (",
        answered, " of ", config.masters.size(), ", quorum ", config.quorum,
        ")"));
  }
  if (slots.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no slot of semaphore ", config.resource, " (limit ", config.limit,
        ") holds the token on any master that answered (expired, released "
        "or never taken; is --limit right?)"));
  }
  return slots;
}

// The lock `config.token` names, for this client to extend or release;
// nullopt after printing why not (the exit code goes to `exit_code`).
//
// The library's Adopt() makes a writer's lock, a reader (--shared), or a
// permit set (--limit) of the slots that hold TOKEN on the masters, so that
// Extend() and Release() send the reader's or the semaphore's scripts.
std::optional<Lock> AdoptToken(const Config& config, Redlock& client,
                               absl::string_view op, int* exit_code) {
  AdoptOptions adopt;
  adopt.shared = config.shared;
  if (config.limit > 0) {
    // The token and resource are checked before the masters are asked
    // which slots hold the token.
    if (absl::StatusOr<Lock> checked =
            client.Adopt(config.resource, config.token);
        !checked.ok()) {
      PrintError(checked.status().message());
      *exit_code = absl::IsInvalidArgument(checked.status()) ? kExitUsage
                                                             : kExitSoftware;
      return std::nullopt;
    }
    absl::StatusOr<std::vector<int>> slots = SlotsHolding(config);
    if (!slots.ok()) {
      PrintError(absl::StrCat(op, " ", config.resource, ": ",
                              slots.status().message()));
      *exit_code =
          absl::IsNotFound(slots.status()) ? kExitLost : kExitUnavailable;
      return std::nullopt;
    }
    adopt.limit = config.limit;
    adopt.slots = *std::move(slots);
  }
  absl::StatusOr<Lock> lock =
      client.Adopt(config.resource, config.token, adopt);
  if (!lock.ok()) {
    // A token or resource the library would never have issued: bad input.
    PrintError(lock.status().message());
    *exit_code =
        absl::IsInvalidArgument(lock.status()) ? kExitUsage : kExitSoftware;
    return std::nullopt;
  }
  return *std::move(lock);
}

// --- status ----------------------------------------------------------------

Json JsonMembership(const MasterStatus& s) {
  const admin::MarkerRecord r = admin::RecordOf(s);
  if (!r.present) return nullptr;
  Json json;
  if (!r.error.ok()) {
    json["error"] = std::string(r.error.message());
    return json;
  }
  json["member"] = r.member;
  json["deployment"] = r.record.deployment;
  json["epoch"] = r.record.epoch;
  json["members"] = r.record.members;
  json["next"] = r.record.next;
  json["quorum"] = std::string(QuorumName(r.record.quorum));
  json["since_us"] = r.record.since_us;
  return json;
}

// The marker's own part (the restart guard's), without the record.
std::string MarkerOwnPart(const std::string& marker) {
  return marker.substr(0, marker.find(';'));
}

bool SharedByReaders(const MasterStatus& s) {
  return s.token == kSharedLockValue;
}

// The holder column: a token's prefix, or "shared by N readers" ("1
// reader").
std::string HolderText(const MasterStatus& s) {
  if (!s.token.has_value()) return "-";
  if (SharedByReaders(s)) {
    return absl::StrCat("shared by ", s.readers.size(),
                        s.readers.size() == 1 ? " reader" : " readers");
  }
  return TokenPrefix(*s.token);
}

int PermitsUsed(const MasterStatus& s) {
  return static_cast<int>(std::count_if(
      s.slots.begin(), s.slots.end(),
      [](const std::optional<std::string>& t) { return t.has_value(); }));
}

// The limit status reports for: --limit, else the largest one a master's
// limit key holds (0: not a semaphore).
int SemaphoreLimit(const std::vector<MasterStatus>& statuses) {
  int limit = 0;
  for (const MasterStatus& s : statuses) limit = std::max(limit, s.limit);
  return limit;
}

Json JsonMasterStatus(const MasterStatus& s) {
  Json json;
  json["master"] = s.master;
  json["member"] = s.member;
  json["transport"] = s.transport;
  json["tls"] = s.tls;
  json["reachable"] = s.reachable;
  if (!s.reachable) {
    json["error"] = s.error.ToString();
    return json;
  }
  const bool held = s.token.has_value();
  json["latency_ms"] = Millis(s.latency);
  json["held"] = held;
  json["token_prefix"] = held ? Json(TokenPrefix(*s.token)) : Json(nullptr);
  if (SharedByReaders(s)) {
    json["shared_by"] = s.readers.size();
    Json readers = Json::array();
    for (const std::string& r : s.readers) readers.push_back(TokenPrefix(r));
    json["readers"] = std::move(readers);
  }
  if (s.limit > 0) {
    json["limit"] = s.limit;
    json["stored_limit"] = StringOrNull(s.stored_limit);
    json["permits_used"] = PermitsUsed(s);
    Json slots = Json::array();
    for (const std::optional<std::string>& t : s.slots) {
      slots.push_back(t.has_value() ? Json(TokenPrefix(*t)) : Json(nullptr));
    }
    json["slots"] = std::move(slots);
  }
  json["pttl_ms"] = held && s.pttl_ms >= -1 ? Json(s.pttl_ms) : Json(nullptr);
  json["fence"] = Counter(s.fence);
  json["run_id"] = s.run_id.empty() ? Json(nullptr) : Json(s.run_id);
  json["uptime_s"] = s.uptime_s.has_value() ? Json(*s.uptime_s) : Json(nullptr);
  json["marker"] = StringOrNull(s.marker);
  json["membership"] = JsonMembership(s);
  json["maxmemory_policy"] =
      s.maxmemory_policy.empty() ? Json(nullptr) : Json(s.maxmemory_policy);
  json["persistence"] = admin::PersistenceText(s);
  json["durable"] = admin::Durable(s);
  json["same_server_as"] =
      s.same_server_as < 0 ? Json(nullptr) : Json(s.same_server_as + 1);
  json["error"] = s.error.ok() ? Json(nullptr) : Json(s.error.ToString());
  return json;
}

// What an operator must know about one reachable master beyond the columns:
// the first failed command, a second address of one server, an eviction
// policy that can evict the lock's keys, persistence that can lose them.
std::string StatusNote(const std::vector<MasterStatus>& statuses,
                       const MasterStatus& s) {
  std::vector<std::string> notes;
  if (!s.error.ok()) notes.push_back(s.error.ToString());
  if (s.same_server_as >= 0) {
    notes.push_back(
        absl::StrCat("same server as ", statuses[s.same_server_as].master,
                     " (same run_id): one server casts one vote; not counted"));
  }
  for (std::string& risk : admin::RiskNotes(s)) {
    notes.push_back(std::move(risk));
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
      {"MASTER", "MEMBER", "TRANSPORT", "STATE", "LATENCY", "HOLDER", "PTTL",
       "FENCE", "RUN_ID", "UPTIME", "MARKER", "MEMBERSHIP", "NOTE"}};
  for (const MasterStatus& s : statuses) {
    // "tcp", "unix", or the TLS protocol and cipher once connected.
    const std::string transport = s.tls.empty() ? s.transport : s.tls;
    if (!s.reachable) {
      rows.push_back({s.master, s.member, transport, "down", "-", "-", "-", "-",
                      "-", "-", "-", "-", s.error.ToString()});
      continue;
    }
    const bool held = s.token.has_value();
    rows.push_back({
        s.master,
        s.member,
        transport,
        "up",
        Pretty(s.latency, absl::Microseconds(10)),
        HolderText(s),
        !held             ? "-"
        : s.pttl_ms == -1 ? "no TTL"
                          : Pretty(absl::Milliseconds(s.pttl_ms)),
        s.fence.value_or("-"),
        s.run_id.empty() ? "-" : TokenPrefix(s.run_id),
        s.uptime_s.has_value() ? Pretty(absl::Seconds(*s.uptime_s)) : "-",
        s.marker.has_value() ? MarkerOwnPart(*s.marker) : "-",
        admin::MembershipText(s),
        StatusNote(statuses, s),
    });
  }
  std::string out =
      absl::StrCat("resource ", config.resource, " (key ", keys.lock, "), ", n,
                   " masters, quorum ", config.quorum, "\n");
  absl::StrAppend(&out, Table(rows));
  if (summary.holders >= config.quorum && summary.token == kSharedLockValue) {
    absl::StrAppend(&out, "shared by readers on ", summary.holders, "/", n,
                    " masters, expires in ~", Pretty(summary.expires_in), "\n");
  } else if (summary.holders >= config.quorum) {
    absl::StrAppend(&out, "held by ", TokenPrefix(summary.token), " on ",
                    summary.holders, "/", n, " masters, expires in ~",
                    Pretty(summary.expires_in), "\n");
  } else if (summary.holders > 0) {
    absl::StrAppend(&out, "not held by a quorum: ", TokenPrefix(summary.token),
                    " on ", summary.holders, "/", n, " masters\n");
  } else {
    absl::StrAppend(&out, "not held\n");
  }
  if (const int limit = SemaphoreLimit(statuses); limit > 0) {
    absl::StrAppend(&out, "semaphore ", config.resource, " (limit key ",
                    keys.limit_key, "):\n");
    for (const MasterStatus& s : statuses) {
      if (!s.reachable) continue;
      std::vector<std::string> slots;
      for (size_t i = 0; i < s.slots.size(); ++i) {
        slots.push_back(absl::StrCat(
            i, "=", s.slots[i].has_value() ? TokenPrefix(*s.slots[i]) : "-"));
      }
      absl::StrAppend(&out, "  ", s.master, ": permits used ", PermitsUsed(s),
                      " of ", s.limit, ", limit key ",
                      s.stored_limit.value_or("-"), ", slots ",
                      slots.empty() ? "-" : absl::StrJoin(slots, " "), "\n");
    }
  }
  if (summary.reachable < config.quorum) {
    absl::StrAppend(&out, "only ", summary.reachable, "/", n,
                    " masters reachable: no lock can be acquired (quorum ",
                    config.quorum, ")\n");
  }
  return out;
}

// --- status --prometheus ----------------------------------------------------

// The status as gauges in the Prometheus text format, for node_exporter's
// textfile collector. Every series carries the resource, so that the files
// of several resources (one `status` run each) never repeat a series.
std::string PrometheusStatus(const Config& config,
                             const std::vector<MasterStatus>& statuses,
                             const HolderSummary& summary) {
  using Labels = Exposition::Labels;
  const std::string& resource = config.resource;
  const bool held = summary.holders >= config.quorum;
  auto of = [&](const MasterStatus& s) -> Labels {
    return {{"resource", resource}, {"master", s.master}};
  };
  Exposition out;

  out.Gauge("redlock_master_connected",
            "1 if the master answered PING (with AUTH and SELECT), else 0.");
  for (const MasterStatus& s : statuses) out.Sample(of(s), s.reachable);

  out.Gauge("redlock_master_grants_counted",
            "1 if a client would count the master's grants now, from what "
            "the probe read: reachable, not a second address of a listed "
            "server, marked trusted (or reborn and up for max_ttl), else 0.");
  for (const MasterStatus& s : statuses) {
    out.Sample(of(s), admin::GrantsCount(s, config.options.max_ttl));
  }

  out.Gauge("redlock_master_ping_seconds", "PING round trip.");
  for (const MasterStatus& s : statuses) {
    if (s.reachable) out.Sample(of(s), absl::ToDoubleSeconds(s.latency));
  }

  out.Gauge("redlock_master_uptime_seconds",
            "uptime_in_seconds from INFO server.");
  for (const MasterStatus& s : statuses) {
    if (s.reachable && s.uptime_s.has_value()) {
      out.Sample(of(s), static_cast<double>(*s.uptime_s));
    }
  }

  out.Gauge("redlock_master_deployment_marker",
            "1 for the restart guard's marker the master carries: trusted, "
            "reborn (it restarted without its data) or none.");
  for (const MasterStatus& s : statuses) {
    if (!s.reachable) continue;
    Labels labels = of(s);
    labels.emplace_back("marker", admin::MarkerState(s));
    out.Sample(labels, 1);
  }

  out.Gauge("redlock_master_eviction_risk",
            "1 if the master's maxmemory-policy may evict lock keys (anything "
            "but noeviction), else 0; policy as read from INFO memory.");
  for (const MasterStatus& s : statuses) {
    if (!s.reachable || s.maxmemory_policy.empty()) continue;
    Labels labels = of(s);
    labels.emplace_back("policy", s.maxmemory_policy);
    out.Sample(labels, admin::EvictionRisk(s));
  }

  out.Gauge("redlock_master_persistence_risk",
            "1 if a crash may bring the master back with part of its data "
            "(no AOF, appendfsync other than always, or persistence unknown "
            "because CONFIG GET was refused), else 0: after a restart its "
            "grants count only once it has been up for max_ttl.");
  for (const MasterStatus& s : statuses) {
    if (!s.reachable) continue;
    Labels labels = of(s);
    labels.emplace_back("persistence", admin::PersistenceText(s));
    out.Sample(labels, !admin::Durable(s));
  }

  out.Gauge("redlock_master_lock_held",
            "1 if the master holds the resource's lock key (any token), "
            "else 0.");
  for (const MasterStatus& s : statuses) {
    if (s.reachable) out.Sample(of(s), s.token.has_value());
  }

  out.Gauge("redlock_master_lock_ttl_seconds",
            "PTTL of the lock key on the master, while it holds one with a "
            "TTL.");
  for (const MasterStatus& s : statuses) {
    if (s.reachable && s.token.has_value() && s.pttl_ms >= 0) {
      out.Sample(of(s), static_cast<double>(s.pttl_ms) / 1000);
    }
  }

  out.Gauge("redlock_master_fence",
            "The resource's fencing counter on the master.");
  for (const MasterStatus& s : statuses) {
    uint64_t fence = 0;
    if (s.reachable && s.fence.has_value() &&
        absl::SimpleAtoi(*s.fence, &fence)) {
      out.Sample(of(s), static_cast<double>(fence));
    }
  }

  const Labels labels = {{"resource", resource}};
  out.Gauge("redlock_lock_held",
            "1 if a quorum of masters holds one token of the resource, else "
            "0.");
  out.Sample(labels, held);
  out.Gauge("redlock_lock_holder",
            "1, labelled with the holder's token prefix, while a quorum "
            "holds the resource.");
  if (held) {
    out.Sample({{"resource", resource}, {"holder", TokenPrefix(summary.token)}},
               1);
  }
  out.Gauge("redlock_lock_holders",
            "Masters holding the most widely held token of the resource.");
  out.Sample(labels, summary.holders);
  out.Gauge("redlock_lock_expires_in_seconds",
            "While a quorum holds the resource: how long until fewer than a "
            "quorum will (from the PTTLs).");
  if (held && summary.expires_in != absl::InfiniteDuration()) {
    out.Sample(labels, absl::ToDoubleSeconds(summary.expires_in));
  }
  out.Gauge("redlock_masters_reachable",
            "Masters that answered, a second address of one server counted "
            "once.");
  out.Sample(labels, summary.reachable);
  out.Gauge("redlock_masters", "Masters configured.");
  out.Sample(labels, static_cast<double>(statuses.size()));
  out.Gauge("redlock_quorum", "Masters that make a quorum.");
  out.Sample(labels, config.quorum);
  return out.Text();
}

}  // namespace

int AcquireCommand(const Config& config, Redlock& client,
                   SignalWatch& signals) {
  ProgressDisplay progress(config, TimeoutsOf(config), MonotonicClock::now());
  WaitInterrupter interrupter(config, signals, progress);
  AcquireOptions acquire;
  acquire.ttl = config.ttl;
  acquire.wait = config.wait;
  acquire.cancel = interrupter.cancel();
  acquire.fencing = config.fencing;
  acquire.shared = config.shared;
  PrintWaiting(config);
  absl::StatusOr<Lock> lock =
      config.limit > 0
          ? client.AcquirePermits(config.resource, SemaphoreOf(config), acquire)
          : client.Acquire(config.resource, acquire);
  int signo = interrupter.Finish();
  if (lock.ok()) {
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
  if (!lock.ok()) {
    return AcquireFailure(config, lock.status(), "not acquired");
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
    if (lock->shared()) json["shared"] = true;
    if (config.limit > 0) {
      json["limit"] = config.limit;
      json["slots"] = lock->slots();
    }
    Print(JsonLine(json));
  } else {
    std::string text =
        absl::StrCat("resource=", config.resource, "\nkey=", lock->key(),
                     "\ntoken=", lock->token(), "\nttl_ms=", ttl_ms,
                     "\nvalid_ms=", valid_ms, "\n");
    if (config.fencing) absl::StrAppend(&text, "fence=", lock->fence(), "\n");
    if (lock->shared()) absl::StrAppend(&text, "shared=true\n");
    if (config.limit > 0) {
      absl::StrAppend(&text, "limit=", config.limit,
                      "\nslots=", absl::StrJoin(lock->slots(), ","), "\n");
    }
    Print(text);
  }
  PrintDebug(config.verbosity,
             absl::StrCat("acquired ", config.resource,
                          "; votes: ", DescribeVotes(lock->votes())));
  return kExitOk;
}

int ReleaseCommand(const Config& config, Redlock& client) {
  int exit_code = kExitSoftware;
  std::optional<Lock> lock = AdoptToken(config, client, "release", &exit_code);
  if (!lock.has_value()) return exit_code;
  // Every master's answer (or timeout: --request-timeout once connected,
  // after up to the connect timeout for a master still connecting): the
  // report is complete, no master is left "pending", and a quorum of them
  // must say they deleted the token, as before the tool used the library.
  ReleaseOptions options;
  options.wait_for_all_masters = true;
  absl::StatusOr<ReleaseReport> report = client.Release(*lock, options);
  TokenOutcome outcome;
  outcome.op = "release";
  outcome.granted = "released";
  if (!report.ok()) {
    outcome.result = "error";
    outcome.error = report.status();
  } else {
    const int n = static_cast<int>(config.masters.size());
    outcome.has_votes = true;
    outcome.votes = report->votes;
    outcome.result = report->released >= config.quorum      ? "released"
                     : report->not_held > n - config.quorum ? "lost"
                                                            : "unavailable";
  }
  return ReportTokenOutcome(config, outcome, /*extend=*/false);
}

int ExtendCommand(const Config& config, Redlock& client) {
  int exit_code = kExitSoftware;
  std::optional<Lock> lock = AdoptToken(config, client, "extend", &exit_code);
  if (!lock.has_value()) return exit_code;
  const absl::Status status = client.Extend(*lock, config.ttl);
  TokenOutcome outcome;
  outcome.op = "extend";
  outcome.granted = "extended";
  outcome.error = status;
  switch (status.code()) {
    case absl::StatusCode::kOk:
      outcome.result = "extended";
      outcome.has_votes = true;
      outcome.votes = lock->votes();
      outcome.validity = lock->remaining();
      break;
    case absl::StatusCode::kAborted:
      outcome.result = "lost";
      break;
    case absl::StatusCode::kUnavailable:
      outcome.result = "unavailable";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      outcome.result = "too_late";
      break;
    case absl::StatusCode::kInvalidArgument:
      PrintError(status.message());
      return kExitUsage;
    default:
      outcome.result = "error";
      break;
  }
  return ReportTokenOutcome(config, outcome, /*extend=*/true);
}

namespace {

// status of config.resource's lock; with `election`, the lock is that
// election's lease, and the election's records are shown below it.
int LockStatus(const Config& config, const Config* election) {
  StatusKeys keys;
  keys.lock = LockKey(config.options, config.resource);
  keys.fence = FenceCounterKey(config.options, config.resource);
  keys.marker = DeploymentMarkerKey(config.options);
  keys.readers = SharedHoldersKey(config.options, config.resource);
  keys.reader_base = SharedHolderKey(config.options, config.resource, "");
  keys.limit_key = SemaphoreLimitKey(config.options, config.resource);
  keys.slot_base = SemaphoreSlotKey(config.options, config.resource, 0);
  keys.slot_base.pop_back();  // The "0".
  keys.limit = config.limit;
  const std::vector<MasterStatus> statuses =
      ProbeMasters(config.masters, TimeoutsOf(config), keys, /*full=*/true);
  const HolderSummary summary = Summarize(statuses, config.quorum);
  if (config.prometheus) {
    // Exit 0 whenever the metrics were written: an outage is in the numbers
    // (redlock_masters_reachable < redlock_quorum), and a textfile written
    // with `... > f.tmp && mv f.tmp f.prom` must be published then too.
    Print(PrometheusStatus(config, statuses, summary));
    return kExitOk;
  }
  const std::vector<ElectionRecord> records =
      election != nullptr ? ReadElectionRecords(*election)
                          : std::vector<ElectionRecord>();
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
    json["shared"] = held && summary.token == kSharedLockValue;
    const int limit = SemaphoreLimit(statuses);
    json["limit"] = limit > 0 ? Json(limit) : Json(nullptr);
    json["expires_in_ms"] =
        held && summary.expires_in != absl::InfiniteDuration()
            ? Json(absl::ToInt64Milliseconds(summary.expires_in))
            : Json(nullptr);
    Json masters = Json::array();
    for (const MasterStatus& s : statuses)
      masters.push_back(JsonMasterStatus(s));
    json["masters"] = std::move(masters);
    if (election != nullptr) {
      AddJsonElection(*election, statuses, records, summary, json);
    }
    Print(JsonLine(json));
  } else {
    std::string text = HumanStatus(config, keys, statuses, summary);
    if (election != nullptr) {
      absl::StrAppend(&text,
                      HumanElection(*election, statuses, records, summary));
    }
    Print(text);
  }
  return summary.reachable >= config.quorum ? kExitOk : kExitUnavailable;
}

}  // namespace

int StatusCommand(const Config& config) {
  if (!config.election) return LockStatus(config, nullptr);
  // An election's lease is a lock on ElectionResource(NAME), shown as any
  // lock is (its fencing counter is the election's epoch counter).
  return LockStatus(LeaseOf(config), &config);
}

}  // namespace redlock::cli
