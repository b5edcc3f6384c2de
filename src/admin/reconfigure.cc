// Copyright 2026 The redlock Authors.

#include "src/admin/reconfigure.h"

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
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"

namespace redlock::admin {

using internal::Membership;
using internal::RedisReply;
using Code = Outcome::Code;

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

namespace {

bool IsString(const RedisReply& r) {
  return r.type == RedisReply::Type::kString;
}
bool IsError(const RedisReply& r) { return r.type == RedisReply::Type::kError; }

std::string DescribeNow(const Server& s) {
  if (!s.marker.has_value()) return "no marker";
  if (!s.has_record) return "marker without a membership record";
  return Describe(s.record);
}

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
                        &s->marker_run_id,
                        &s->max_ttl_ms, &record);
  if (!record.has_value()) return;
  s->record_error =
      internal::ParseMarkerRecord(*record, &s->member, &s->record);
  s->has_record = s->record_error.ok();
}

bool Contains(const std::vector<std::string>& sorted, const std::string& name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

// A write to one server: `target` over what it holds now.
struct Write {
  Server* server = nullptr;
  int index = 0;         // The server's, for ServerIo::Call().
  std::string expected;  // Its record text now ("" for none).
  Membership target;
  // The marker's state for a server that has none.
  absl::string_view state = internal::kTrustedMarker;
  // Outcome.
  bool done = false;
  bool refused = false;
  std::string detail;
};

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

// The wait of `joint` on the servers of its old members: how long each has
// still to wait (infinite: it does not carry `joint`), and how long until
// enough of them (|O| - quorum(O) + 1) have: then no quorum of O is left
// that granted under the epoch before.
struct WaitState {
  absl::Duration wait;
  std::map<std::string, absl::Duration> left;  // By member name.
  absl::Duration overall;  // <= 0: over. Infinite: cannot be over yet.
};

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

// The fencing counters: the highest value of each on any reachable server.
struct Counters {
  std::map<std::string, uint64_t> highest;   // Key -> value.
  std::map<std::string, std::string> error;  // Server name -> why unread.
};

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
        io.Call(i, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
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

// What every step of one pass shares.
struct PassState {
  const Request& request;
  ServerIo& io;
  Output& out;
  std::vector<Server>& servers;
  Membership current;  // The judged record.
  Membership target;   // What the step writes.
  absl::Duration max_ttl;

  const std::vector<std::string>& O() const { return request.masters; }
  const std::vector<std::string>& N() const { return request.to; }
  bool dry_run() const { return request.dry_run; }
};

Outcome Finished(Code code, Step step) {
  Outcome o;
  o.code = code;
  o.step = step;
  return o;
}

Outcome Again(Step step) {
  Outcome o = Finished(Code::kOk, step);
  o.again = true;
  return o;
}

Outcome Refuse(Output& out, absl::string_view why, Step step = Step::kNone) {
  out.Error(absl::StrCat("reconfigure: ", why));
  return Finished(Code::kRefused, step);
}

// Carries out `writes` (or, with dry_run, only prints them). Refused
// writes: kRefused.
Code Apply(PassState& p, std::vector<Write>& writes, const Membership& target,
           const std::vector<std::string>& skipped) {
  if (!p.dry_run()) SendWrites(p.request, p.io, &writes, p.max_ttl);
  PrintServerLines(p.out, p.servers, writes, target, skipped, p.dry_run(),
                   /*sent=*/!p.dry_run());
  for (const Write& w : writes) {
    if (w.refused) {
      p.out.Error(absl::StrCat(
          "reconfigure: ", w.server->Label(),
          "'s record changed while reconfiguring (another reconfigure at "
          "once?); run it again to see the new state: ",
          w.detail));
      return Code::kRefused;
    }
  }
  return Code::kOk;
}

// Chooses the step for O -> N over `current`, and sets p.target; otherwise
// the refusal.
absl::StatusOr<Step> ChooseStep(PassState& p, const std::string& says) {
  const Membership& current = p.current;
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  const std::string asked =
      absl::StrCat("asked: --masters ", internal::JoinMembers(O), " --to ",
                   internal::JoinMembers(N));
  Membership& target = p.target;
  target = current;
  target.since_us = 0;
  if (!current.joint()) {
    if (current.members == N) return Step::kSteady;
    if (current.members == O) {
      target.epoch = current.epoch + 1;
      target.next = N;
      return Step::kBegin;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked, ": --masters must name the current members (",
        internal::JoinMembers(current.members), ")"));
  }
  const std::vector<std::string> both =
      internal::Union(current.members, current.next);
  if (O != current.members && O != current.next && O != both) {
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked,
        ": during a change --masters must name the old members, the new "
        "ones or both"));
  }
  Step step;
  if (N == current.next) {
    step = Step::kFinish;
  } else if (N == current.members) {
    step = Step::kAbort;
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked, ": --to must be the new members (",
        internal::JoinMembers(current.next), ") to finish, or the old (",
        internal::JoinMembers(current.members), ") to abort"));
  }
  target.epoch = current.epoch + 1;
  target.members = N;
  target.next.clear();
  return step;
}

// The operator's restore: every member without the record kept gets it,
// naming its process; one without a marker gets a `reborn` one (it lost its
// data: the clients' restart guard holds it back for max_ttl).
Outcome Restore(PassState& p, const absl::Status& why) {
  const Membership& current = p.current;
  std::vector<Write> writes;
  const std::string text = internal::RecordText(current);
  for (Server& s : p.servers) {
    if (!Contains(current.members, s.name)) continue;
    if (s.has_record && internal::RecordText(s.record) == text &&
        internal::RecordKept(s.record, s.marker_run_id, s.run_id,
                             /*durable=*/false)) {
      continue;
    }
    Write w = WriteTo(p.servers, s, current);
    if (!s.marker.has_value()) w.state = internal::kRebornMarker;
    writes.push_back(std::move(w));
  }
  p.out.Line(absl::StrCat("step: restore: ", Describe(current),
                          " on every member that lost it (", why.message(),
                          ")"));
  const Code code = Apply(p, writes, current, {});
  if (code != Code::kOk || p.dry_run()) return Finished(code, Step::kRestore);
  return Again(Step::kRestore);
}

// Nothing to change; servers left behind by an earlier run (down then) get
// the record.
Outcome Steady(PassState& p) {
  std::vector<std::string> skipped;
  std::vector<Write> writes = PlanWrites(p.servers, p.current, {}, &skipped);
  if (writes.empty()) {
    p.out.Line(absl::StrCat("nothing to do: the deployment's members are ",
                            internal::JoinMembers(p.N())));
    PrintServerLines(p.out, p.servers, writes, p.current, skipped, p.dry_run(),
                     false);
    return Finished(Code::kOk, Step::kSteady);
  }
  p.out.Line(absl::StrCat("step: catch up: ", Describe(p.current),
                          " on the servers an earlier run missed"));
  return Finished(Apply(p, writes, p.current, skipped), Step::kSteady);
}

Outcome Begin(PassState& p, const std::vector<std::string>& fresh_at_begin) {
  const Membership& current = p.current;
  const Membership& target = p.target;
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  p.out.Line(absl::StrCat("step: begin: ", Describe(target)));
  std::vector<std::string> skipped;
  std::vector<Write> writes =
      PlanWrites(p.servers, target, fresh_at_begin, &skipped);
  // Enough old members must take the joint record that no quorum of them
  // is left at the old epoch; when too few answer, write nothing.
  const int old_size = static_cast<int>(O.size());
  const int needed = old_size - internal::QuorumOf(old_size, target.quorum) + 1;
  int old_writable = 0;
  for (const Server& s : p.servers) {
    if (Contains(O, s.name) && s.reachable && s.marker.has_value()) {
      ++old_writable;
    }
  }
  if (old_writable < needed) {
    PrintServerLines(p.out, p.servers, writes, target, skipped, p.dry_run(),
                     /*sent=*/false);
    p.out.Error(absl::StrCat(
        "reconfigure: begin needs ", needed, " of the ", old_size,
        " old members (so that no quorum of them is left at epoch ",
        current.epoch, "); ", old_writable,
        " answered with a marker; nothing written"));
    return Finished(Code::kUnavailable, Step::kBegin);
  }
  if (const Code code = Apply(p, writes, target, skipped); code != Code::kOk) {
    return Finished(code, Step::kBegin);
  }
  const std::string text = internal::RecordText(target);
  const int on_old = Carrying(p.servers, O, text, writes);
  int new_reachable = 0;
  for (const Server& s : p.servers) {
    if (Contains(N, s.name) && s.reachable) ++new_reachable;
  }
  const int on_new = Carrying(p.servers, N, text, writes);
  const WaitState wait = WaitLeft(p.servers, target, p.max_ttl);
  if (p.dry_run()) {
    p.out.Line(absl::StrCat("then: wait ", Pretty(wait.wait),
                            " (max_ttl*1.01 + 2s + 1s) on the old members' "
                            "clocks, and run again to finish"));
    return Finished(Code::kOk, Step::kBegin);
  }
  if (on_old < needed || on_new < new_reachable) {
    p.out.Error(absl::StrCat(
        "reconfigure: begin reached ", on_old, " of ", old_size,
        " old members (", needed,
        " needed, so that no quorum of them is "
        "left at epoch ",
        current.epoch, ") and ", on_new, " of the ", new_reachable,
        " reachable new members (all needed); run it again when they "
        "answer"));
    return Finished(Code::kUnavailable, Step::kBegin);
  }
  p.out.Line(absl::StrCat("begun: ", Describe(target), " on ", on_old, "/",
                          old_size, " old and ", on_new, "/", N.size(),
                          " new members; run the same command again in ",
                          Pretty(wait.wait),
                          " to finish (--wait sleeps until "
                          "then)"));
  return Finished(Code::kOk, Step::kBegin);
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
        old_size, " old members are known to hold every token written to "
        "them (", old_needed,
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
    p.out.Error(absl::StrCat(
        "reconfigure: the fencing counters reached ", raised, " of ", new_size,
        " new members (", needed, " needed)",
        counters.error.empty() ? ""
                               : ", and some servers' counters were not "
                                 "read",
        "; nothing finished; run it again when they answer"));
    return Code::kUnavailable;
  }
  return Code::kOk;
}

// The finish's wait, and its counters once it is over.
Outcome WaitAndRaise(PassState& p) {
  const WaitState wait = WaitLeft(p.servers, p.current, p.max_ttl);
  p.out.Line(absl::StrCat("step: finish: ", Describe(p.target), " (wait ",
                          Pretty(wait.wait),
                          " = max_ttl*1.01 + 2s + 1s since each old member "
                          "got epoch ",
                          p.current.epoch, ")"));
  for (const auto& [member, left] : wait.left) {
    p.out.Line(absl::StrCat("  wait on ", member, ": ", Left(left)));
  }
  if (wait.overall > absl::ZeroDuration()) {
    if (wait.overall == absl::InfiniteDuration()) {
      p.out.Error(absl::StrCat(
          "reconfigure: too few old members carry ", Describe(p.current),
          " for the wait to end; run it again when they answer"));
      return Finished(Code::kUnavailable, Step::kFinish);
    }
    // Bounded by the wait itself, whatever the clocks say.
    Outcome o = Finished(Code::kConflict, Step::kFinish);
    o.retry_after = std::min(wait.overall, wait.wait);
    return o;
  }
  return Finished(RaiseEveryCounter(p), Step::kFinish);
}

// finish or abort: first bring servers still before the joint epoch to it
// (an earlier begin that missed them).
Outcome FinishOrAbort(PassState& p, Step step) {
  std::vector<std::string> skipped;
  std::vector<Write> catch_up = PlanWrites(p.servers, p.current, {}, &skipped);
  if (p.request.unsafe_trust_joining_after_begin) {
    // Unsafe, test only (see the field): the joining servers as fresh.
    std::vector<std::string> joining;
    for (const std::string& n : p.current.next) {
      if (!Contains(p.current.members, n)) joining.push_back(n);
    }
    skipped.clear();
    catch_up = PlanWrites(p.servers, p.current, joining, &skipped);
  }
  if (!catch_up.empty()) {
    p.out.Line(absl::StrCat("step: catch up: ", Describe(p.current),
                            " on the servers begin missed"));
    if (const Code code = Apply(p, catch_up, p.current, skipped);
        code != Code::kOk) {
      return Finished(code, step);
    }
    // Their `since` is the servers' now; read them again.
    if (!p.dry_run()) return Again(step);
  }

  if (step == Step::kFinish) {
    const Outcome waited = WaitAndRaise(p);
    if (waited.code != Code::kOk) return waited;
  } else {
    p.out.Line(absl::StrCat("step: abort: ", Describe(p.target),
                            " (no wait: every quorum of the joint phase "
                            "holds a quorum of the old members)"));
  }

  const Membership& target = p.target;
  skipped.clear();
  std::vector<Write> writes = PlanWrites(p.servers, target, {}, &skipped);
  if (const Code code = Apply(p, writes, target, skipped); code != Code::kOk) {
    return Finished(code, step);
  }
  if (p.dry_run()) return Finished(Code::kOk, step);
  const int on_target =
      Carrying(p.servers, target.members, internal::RecordText(target), writes);
  const int target_size = static_cast<int>(target.members.size());
  if (on_target < internal::QuorumOf(target_size, target.quorum)) {
    p.out.Error(absl::StrCat("reconfigure: ", StepName(step), " reached ",
                             on_target, " of ", target_size,
                             " members; run it again when they answer"));
    return Finished(Code::kUnavailable, step);
  }
  p.out.Line(absl::StrCat(
      step == Step::kFinish ? "finished: " : "aborted: ", Describe(target),
      " on ", on_target, "/", target_size, " members"));
  return Finished(Code::kOk, step);
}

}  // namespace

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

Outcome Pass(const Request& request, ServerIo& io, Output& out,
             std::vector<Server>* servers_in) {
  std::vector<Server>& servers = *servers_in;
  ReadServers(io, request.marker_key, &servers);
  absl::StatusOr<Judged> judged = Judge(request.quorum, servers);
  if (absl::IsUnavailable(judged.status())) {
    out.Error(absl::StrCat("reconfigure: ", judged.status().message()));
    return Finished(Code::kUnavailable, Step::kNone);
  }
  if (!judged.ok()) return Refuse(out, judged.status().message());
  PassState p{request, io, out, servers, judged->record, {}, request.max_ttl};
  const Membership& current = p.current;
  for (const Server& s : servers) {
    p.max_ttl = std::max(p.max_ttl, absl::Milliseconds(s.max_ttl_ms));
  }
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  const std::string says =
      absl::StrCat("the servers say deployment ", current.deployment, " ",
                   Describe(current));
  const absl::StatusOr<Step> chosen = ChooseStep(p, says);
  if (!chosen.ok()) return Refuse(out, chosen.status().message());
  const Step step = *chosen;

  int reachable = 0;
  for (const Server& s : servers) reachable += s.reachable ? 1 : 0;
  if (!judged->current.ok()) {
    // Not known to be current: the servers that carry it may have been
    // left behind by a change (down through it, or back from an older
    // snapshot). Nothing is written on its word, unless the operator names
    // it as the deployment's members both ways and every server answers.
    const std::string hint = absl::StrCat(
        "; if the deployment's members are ",
        internal::JoinMembers(current.members),
        " (no change of masters since these servers lost their records), "
        "`redlock reconfigure --masters=<them> --to=<them>` writes the record "
        "again on every member once all of them answer");
    for (const Server& s : servers) {
      if (s.reachable) continue;
      out.Error(absl::StrCat("reconfigure: ", judged->current.message(), "; ",
                             s.Label(), " did not answer (", s.error.ToString(),
                             "): run it again when the servers answer", hint));
      return Finished(Code::kUnavailable, Step::kNone);
    }
    if (step != Step::kSteady || O != N) {
      return Refuse(out, absl::StrCat(judged->current.message(), hint), step);
    }
  }
  out.Line(absl::StrCat(request.dry_run ? "dry run: " : "", says, "; max_ttl ",
                        Pretty(p.max_ttl), "; ", reachable, "/", servers.size(),
                        " servers reachable"));
  if (!judged->current.ok()) return Restore(p, judged->current);

  // At a begin, joining servers with no marker get a trusted one: no record
  // has named them a member yet, so no grant of theirs has counted. Every
  // other server without a marker (an old member, or a joining one once the
  // joint record exists: it may have granted under it and restarted empty
  // since) is left to the clients' restart guard.
  const std::vector<std::string> fresh_at_begin = [&] {
    std::vector<std::string> fresh;
    if (step != Step::kBegin) return fresh;
    for (const std::string& n : N) {
      if (!Contains(current.members, n)) fresh.push_back(n);
    }
    return fresh;
  }();

  switch (step) {
    case Step::kSteady:
      return Steady(p);
    case Step::kBegin:
      return Begin(p, fresh_at_begin);
    default:
      return FinishOrAbort(p, step);
  }
}

}  // namespace redlock::admin
