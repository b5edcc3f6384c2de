// Copyright 2026 The redlock Authors.
//
// Reading and writing the servers of a change: what each says, the writes that
// move a record, how long the joint record's wait has left.

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

// Reads server `i`: INFO server (run_id), GET marker, TIME, and CONFIG GET
// of the persistence (a refusal leaves it unknown, which the finish takes
// as not durable).
void Read(ServerIo& io, int i, const std::string& marker_key, Server* s) {
  auto run =
      [&](const std::vector<std::string>& args) -> std::optional<RedisReply> {
    absl::StatusOr<RedisReply> reply = io.Call(i, args);
    if (!reply.ok()) {
      s->error = reply.status();
      return std::nullopt;
    }
    if (IsError(*reply)) {
      s->error = absl::UnavailableError(
          absl::StrCat(args[0], " failed: ", reply->str));
      return std::nullopt;
    }
    return *std::move(reply);
  };
  std::optional<RedisReply> info = run({"INFO", "server"});
  if (!info.has_value()) return;
  if (IsString(*info)) {
    s->run_id = std::string(internal::InfoField(info->str, "run_id"));
  }
  std::optional<RedisReply> marker = run({"GET", marker_key});
  if (!marker.has_value()) return;
  if (IsString(*marker)) s->marker = marker->str;
  std::optional<RedisReply> time = run({"TIME"});
  if (!time.has_value()) return;
  int64_t sec = 0, usec = 0;
  if (time->elements.size() != 2 ||
      !absl::SimpleAtoi(time->elements[0].str, &sec) ||
      !absl::SimpleAtoi(time->elements[1].str, &usec)) {
    s->error = absl::UnavailableError("TIME gave no time");
    return;
  }
  if (s->run_id.empty()) {
    s->error = absl::UnavailableError("INFO server gave no run_id");
    return;
  }
  RedisReply config;
  config.type = RedisReply::Type::kArray;
  for (absl::string_view name : internal::kPersistenceConfigNames) {
    absl::StatusOr<RedisReply> reply =
        io.Call(i, {"CONFIG", "GET", std::string(name)});
    if (!reply.ok()) {
      s->error = reply.status();
      return;
    }
    internal::AddConfigReply(*reply, &config);
  }
  internal::ParseConfigPersistence(config, &s->persistence);
  s->time_us = sec * 1000000 + usec;
  s->reachable = true;
  if (!s->marker.has_value()) return;
  int64_t time_us = 0;
  std::optional<std::string> record;
  internal::ParseMarker(*s->marker, &s->marker_state, &time_us,
                        &s->marker_run_id, &s->max_ttl_ms, &record);
  if (!record.has_value()) return;
  s->record_error =
      internal::ParseMarkerRecord(*record, &s->member, &s->record);
  s->has_record = s->record_error.ok();
}

}  // namespace

bool IsString(const RedisReply& r) {
  return r.type == RedisReply::Type::kString;
}

bool IsError(const RedisReply& r) { return r.type == RedisReply::Type::kError; }

std::string DescribeNow(const Server& s) {
  if (!s.marker.has_value()) return "no marker";
  if (!s.has_record) return "marker without a membership record";
  return Describe(s.record);
}

bool Contains(const std::vector<std::string>& sorted, const std::string& name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

Write WriteTo(std::vector<Server>& servers, Server& s,
              const Membership& target) {
  Write w;
  w.server = &s;
  w.index = static_cast<int>(&s - servers.data());
  w.expected = s.RecordNow();
  w.target = target;
  return w;
}

// Sends every write, in parallel.
void SendWrites(const Request& request, ServerIo& io,
                std::vector<Write>* writes, absl::Duration max_ttl) {
  io.ForEach(writes->size(), [&](size_t i) {
    Write& w = (*writes)[i];
    const internal::Command command = internal::ReconfigureCommand(
        request.marker_key, w.expected,
        internal::MarkerSuffix(w.server->name, w.target, w.server->run_id),
        w.state, w.server->run_id, max_ttl);
    absl::StatusOr<RedisReply> reply =
        io.Call(w.index, internal::CommandArgv(command, /*eval=*/true));
    if (!reply.ok()) {
      w.detail = reply.status().ToString();
      return;
    }
    if (IsError(*reply)) {
      w.detail = absl::StrCat("error reply: ", reply->str);
      return;
    }
    if (reply->elements.size() != 2 ||
        reply->elements[0].type != RedisReply::Type::kInteger) {
      w.detail = "unexpected reply to the reconfigure script";
      return;
    }
    if (reply->elements[0].integer == 1) {
      w.done = true;
      return;
    }
    w.refused = true;
    w.detail = absl::StrCat("refused: the server now holds \"",
                            reply->elements[1].str, "\"");
  });
}

// Plans writes of `target` to every reachable server whose record is older.
// A server without a marker is left to the clients' restart guard (it may
// have restarted without its data, and granted under a record before that),
// except the servers of `fresh_ok`: the joining servers at a begin, while
// the deployment is steady and no record has named them a member, so none
// of their grants has ever counted. From the begin on, a joining server
// without its marker is a restarted member like any other.
std::vector<Write> PlanWrites(std::vector<Server>& servers,
                              const Membership& target,
                              const std::vector<std::string>& fresh_ok,
                              std::vector<std::string>* skipped) {
  std::vector<Write> writes;
  for (Server& s : servers) {
    if (!s.reachable) continue;
    if (s.has_record && s.record.epoch >= target.epoch) continue;
    if (!s.marker.has_value() && !Contains(fresh_ok, s.name)) {
      skipped->push_back(s.name);
      continue;
    }
    writes.push_back(WriteTo(servers, s, target));
  }
  return writes;
}

// How many servers of `group` carry `text` (after the writes).
int Carrying(const std::vector<Server>& servers,
             const std::vector<std::string>& group, const std::string& text,
             const std::vector<Write>& writes) {
  int n = 0;
  for (const Server& s : servers) {
    if (!Contains(group, s.name)) continue;
    bool carries = s.has_record && internal::RecordText(s.record) == text;
    for (const Write& w : writes) {
      if (w.server == &s && w.done) carries = true;
    }
    n += carries ? 1 : 0;
  }
  return n;
}

// Prints one line per server for `writes`, and one per reachable server
// that needs none, and one per unreachable server.
void PrintServerLines(Output& out, const std::vector<Server>& servers,
                      const std::vector<Write>& writes,
                      const Membership& target,
                      const std::vector<std::string>& skipped, bool dry_run,
                      bool sent) {
  for (const Server& s : servers) {
    const Write* w = nullptr;
    for (const Write& x : writes) {
      if (x.server == &s) w = &x;
    }
    std::string line = absl::StrCat("  ", s.Label(), ": ");
    if (!s.reachable) {
      absl::StrAppend(&line, "unreachable (", s.error.ToString(),
                      "): not written");
    } else if (w != nullptr) {
      absl::StrAppend(&line, DescribeNow(s), " -> ", Describe(target),
                      s.marker.has_value()
                          ? ""
                          : absl::StrCat(" (new ", w->state, " marker)"),
                      ": ",
                      dry_run   ? "would write"
                      : !sent   ? "not written"
                      : w->done ? "written"
                                : absl::StrCat("NOT written: ", w->detail));
    } else if (Contains(skipped, s.name)) {
      absl::StrAppend(&line,
                      "no marker: left to the clients (it may have restarted "
                      "without its data; a client's restart guard judges it)");
    } else {
      absl::StrAppend(&line, DescribeNow(s), ": nothing to write");
    }
    out.Line(line);
  }
}

WaitState WaitLeft(const std::vector<Server>& servers, const Membership& joint,
                   absl::Duration max_ttl) {
  WaitState out;
  out.wait = max_ttl * 1.01 + internal::kMembershipStale + absl::Seconds(1);
  const std::string text = internal::RecordText(joint);
  std::vector<absl::Duration> lefts;
  for (const std::string& member : joint.members) {
    absl::Duration left = absl::InfiniteDuration();
    for (const Server& s : servers) {
      if (s.name != member || !s.reachable || !s.has_record ||
          internal::RecordText(s.record) != text || s.record.since_us <= 0) {
        continue;
      }
      left = out.wait - absl::Microseconds(s.time_us - s.record.since_us);
    }
    out.left[member] = left;
    lefts.push_back(left);
  }
  std::sort(lefts.begin(), lefts.end());
  const int size = static_cast<int>(joint.members.size());
  const int needed = size - internal::QuorumOf(size, joint.quorum) + 1;
  out.overall = lefts[needed - 1];
  return out;
}

std::string Left(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "not at this epoch yet";
  if (d <= absl::ZeroDuration()) return "wait over";
  return absl::StrCat(Pretty(d), " left");
}

}  // namespace detail

using namespace detail;  // NOLINT: this file's own helpers.

ServerIo::~ServerIo() = default;

void ServerIo::ForEach(size_t n, const std::function<void(size_t)>& fn) {
  for (size_t i = 0; i < n; ++i) fn(i);
}

Output::~Output() = default;

std::string Server::Label() const {
  return name == address ? name : absl::StrCat(name, " (", address, ")");
}

std::string Server::RecordNow() const {
  return has_record ? internal::RecordText(record) : "";
}

absl::string_view StepName(Step step) {
  switch (step) {
    case Step::kNone:
      return "none";
    case Step::kBegin:
      return "begin";
    case Step::kFinish:
      return "finish";
    case Step::kAbort:
      return "abort";
    case Step::kSteady:
      return "steady";
    case Step::kRestore:
      return "restore";
  }
  return "?";
}

std::string Describe(const Membership& m) {
  if (!m.joint()) {
    return absl::StrCat("epoch ", m.epoch, " steady ",
                        internal::JoinMembers(m.members));
  }
  return absl::StrCat("epoch ", m.epoch, " joint ",
                      internal::JoinMembers(m.members), " -> ",
                      internal::JoinMembers(m.next));
}

std::string Pretty(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "forever";
  d = absl::Trunc(d, absl::Milliseconds(1));
  return d == absl::ZeroDuration() ? "0s" : absl::FormatDuration(d);
}

void ReadServers(ServerIo& io, const std::string& marker_key,
                 std::vector<Server>* servers) {
  for (Server& s : *servers) {
    Server fresh;
    fresh.name = std::move(s.name);
    fresh.address = std::move(s.address);
    fresh.in_masters = s.in_masters;
    fresh.in_to = s.in_to;
    s = std::move(fresh);
  }
  io.ForEach(servers->size(), [&](size_t i) {
    Read(io, static_cast<int>(i), marker_key, &(*servers)[i]);
  });
}

absl::StatusOr<Judged> Judge(Quorum quorum,
                             const std::vector<Server>& servers) {
  const Server* newest = nullptr;
  for (const Server& s : servers) {
    if (!s.reachable || !s.marker.has_value()) continue;
    if (!s.record_error.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(s.Label(),
                       " carries a membership record that does not "
                       "parse (",
                       s.record_error.message(), "): ", *s.marker));
    }
    if (!s.has_record) continue;
    if (s.member != s.name) {
      return absl::FailedPreconditionError(
          absl::StrCat(s.Label(), " is member ", s.member,
                       " of the deployment, but the lists name it ", s.name,
                       " (give its URI ?member=", s.member, ")"));
    }
    if (newest == nullptr) {
      newest = &s;
      continue;
    }
    const Membership& a = newest->record;
    const Membership& b = s.record;
    if (a.deployment != b.deployment) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the servers belong to two deployments: ", newest->Label(),
          " to deployment ", a.deployment, " (", Describe(a), "), ", s.Label(),
          " to deployment ", b.deployment, " (", Describe(b),
          "); a server of another deployment cannot join this one"));
    }
    if (a.epoch == b.epoch &&
        internal::RecordText(a) != internal::RecordText(b)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "two configurations at epoch ", a.epoch, ": ", newest->Label(),
          " carries ", internal::RecordText(a), ", ", s.Label(), " carries ",
          internal::RecordText(b), " (two reconfigurations at once?)"));
    }
    if (b.epoch > a.epoch) newest = &s;
  }
  if (newest == nullptr) {
    for (const Server& s : servers) {
      if (!s.reachable) {
        return absl::UnavailableError(absl::StrCat(
            "no reachable server carries a membership record, and ", s.Label(),
            " did not answer (", s.error.ToString(),
            "); run it again when the servers answer"));
      }
    }
    return absl::FailedPreconditionError(
        "no server carries a membership record: run any client once first: "
        "a client records the deployment's members when it bootstraps it");
  }
  if (newest->record.quorum != quorum) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the deployment's quorum rule is ", QuorumName(newest->record.quorum),
        ", --quorum is ", QuorumName(quorum)));
  }
  Membership current = newest->record;
  current.since_us = 0;
  current.holder.clear();
  // As a client (JudgeMembership()): the newest record heard is taken for
  // the deployment's only if a quorum of its members carries it kept. A
  // pass cannot see a server's persistence, so a record counts only in the
  // process it was written to (a client writes it again after a restart).
  const std::string text = internal::RecordText(current);
  std::vector<std::string> names;
  std::vector<bool> carries, kept;
  for (const Server& s : servers) {
    names.push_back(s.name);
    const bool has =
        s.reachable && s.has_record && internal::RecordText(s.record) == text;
    carries.push_back(has);
    kept.push_back(has && internal::RecordKept(s.record, s.marker_run_id,
                                               s.run_id, /*durable=*/false));
  }
  Judged out;
  out.record = current;
  out.current = internal::CurrentOnQuorum(current, names, carries, kept);
  return out;
}

}  // namespace redlock::admin
