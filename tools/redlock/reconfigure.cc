// Copyright 2026 The redlock Authors.

#include "tools/redlock/reconfigure.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/keys.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"
#include "tools/redlock/direct.h"

namespace redlock::cli {
namespace {

using internal::Membership;

// One server of --masters or --to, as read.
struct Server {
  MasterAddress address;
  std::string name;  // MasterAddress::MemberName().
  bool in_masters = false;
  bool in_to = false;

  bool reachable = false;
  absl::Status error;  // Why not reachable.
  std::string run_id;
  int64_t time_us = 0;  // Its TIME when read.
  std::optional<std::string> marker;
  int64_t max_ttl_ms = 0;  // The marker's own part, 4th field.
  std::string marker_run_id;  // Its 3rd field: the process it was written to.
  bool has_record = false;
  absl::Status record_error;  // A record that does not parse.
  std::string member;         // The record's member=.
  Membership record;

  // "a:1" or "a (127.0.0.1:1)".
  std::string Label() const {
    const std::string address_name = address.Name();
    return name == address_name ? name
                                : absl::StrCat(name, " (", address_name, ")");
  }
  // What it carries now: "" for no record.
  std::string RecordNow() const {
    return has_record ? internal::RecordText(record) : "";
  }
};

void Print(absl::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void Line(absl::string_view text) { Print(absl::StrCat(text, "\n")); }

// "epoch 3 steady a,b,c" or "epoch 4 joint a,b,c -> a,b,d".
std::string Describe(const Membership& m) {
  if (!m.joint()) {
    return absl::StrCat("epoch ", m.epoch, " steady ",
                        internal::JoinMembers(m.members));
  }
  return absl::StrCat("epoch ", m.epoch, " joint ",
                      internal::JoinMembers(m.members), " -> ",
                      internal::JoinMembers(m.next));
}

std::string DescribeNow(const Server& s) {
  if (!s.marker.has_value()) return "no marker";
  if (!s.has_record) return "marker without a membership record";
  return Describe(s.record);
}

// Reads one server: INFO server (run_id), GET marker, TIME.
void Read(const Timeouts& timeouts, const std::string& marker_key, Server* s) {
  absl::StatusOr<std::unique_ptr<Connection>> opened =
      Connection::Open(s->address, timeouts);
  if (!opened.ok()) {
    s->error = opened.status();
    return;
  }
  Connection& c = **opened;
  auto run = [&](const std::vector<std::string>& args) -> std::optional<Reply> {
    absl::StatusOr<Reply> reply = c.Command(args);
    if (!reply.ok()) {
      s->error = reply.status();
      return std::nullopt;
    }
    if (reply->is_error()) {
      s->error = absl::UnavailableError(
          absl::StrCat(args[0], " failed: ", reply->str));
      return std::nullopt;
    }
    return *std::move(reply);
  };
  std::optional<Reply> info = run({"INFO", "server"});
  if (!info.has_value()) return;
  if (info->is_string()) {
    s->run_id = std::string(internal::InfoField(info->str, "run_id"));
  }
  std::optional<Reply> marker = run({"GET", marker_key});
  if (!marker.has_value()) return;
  if (marker->is_string()) s->marker = marker->str;
  std::optional<Reply> time = run({"TIME"});
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
  s->time_us = sec * 1000000 + usec;
  s->reachable = true;
  if (!s->marker.has_value()) return;
  std::string state;
  int64_t time_us = 0;
  std::optional<std::string> record;
  internal::ParseMarker(*s->marker, &state, &time_us, &s->marker_run_id,
                        &s->max_ttl_ms, &record);
  if (!record.has_value()) return;
  s->record_error =
      internal::ParseMarkerRecord(*record, &s->member, &s->record);
  s->has_record = s->record_error.ok();
}

void ReadAll(const Config& config, std::vector<Server>* servers) {
  const std::string marker_key = DeploymentMarkerKey(config.options);
  for (Server& s : *servers) {
    Server fresh;
    fresh.address = s.address;
    fresh.name = s.name;
    fresh.in_masters = s.in_masters;
    fresh.in_to = s.in_to;
    s = std::move(fresh);
  }
  ForEachInParallel(servers->size(), [&](size_t i) {
    Read(TimeoutsOf(config), marker_key, &(*servers)[i]);
  });
}

// The deployment's record as the servers show it: the highest epoch, if
// they agree, and whether it is known to be current.
struct Judged {
  Membership record;
  // OK if a quorum of the record's members carries it kept
  // (internal::CurrentOnQuorum()); otherwise why not, as a client says it.
  absl::Status current;
};

// Judges what the servers carry. Otherwise the refusal, naming both sides.
absl::StatusOr<Judged> Judge(const Config& config,
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
  if (newest->record.quorum != config.options.quorum) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the deployment's quorum rule is ", QuorumName(newest->record.quorum),
        ", --quorum is ", QuorumName(config.options.quorum)));
  }
  Membership current = newest->record;
  current.since_us = 0;
  current.holder.clear();
  // As a client (JudgeMembership()): the newest record heard is taken for
  // the deployment's only if a quorum of its members carries it kept. The
  // tool cannot see a server's persistence, so a record counts only in the
  // process it was written to (a client writes it again after a restart).
  const std::string text = internal::RecordText(current);
  std::vector<std::string> names;
  std::vector<bool> carries, kept;
  for (const Server& s : servers) {
    names.push_back(s.name);
    const bool has = s.reachable && s.has_record &&
                     internal::RecordText(s.record) == text;
    carries.push_back(has);
    kept.push_back(has && internal::RecordKept(s.record, s.marker_run_id,
                                               s.run_id, /*durable=*/false));
  }
  Judged out;
  out.record = current;
  out.current = internal::CurrentOnQuorum(current, names, carries, kept);
  return out;
}

enum class Step { kBegin, kFinish, kAbort, kSteady };

absl::string_view StepName(Step step) {
  switch (step) {
    case Step::kBegin:
      return "begin";
    case Step::kFinish:
      return "finish";
    case Step::kAbort:
      return "abort";
    case Step::kSteady:
      return "steady";
  }
  return "?";
}

// A write to one server: `target` over what it holds now.
struct Write {
  Server* server = nullptr;
  std::string expected;  // Its record text now ("" for none).
  Membership target;
  // The marker's state for a server that has none.
  absl::string_view state = internal::kTrustedMarker;
  // Outcome.
  bool done = false;
  bool refused = false;
  std::string detail;
};

// Sends every write, each server on its own thread.
void SendWrites(const Config& config, std::vector<Write>* writes,
                absl::Duration max_ttl) {
  const std::string marker_key = DeploymentMarkerKey(config.options);
  ForEachInParallel(writes->size(), [&](size_t i) {
    Write& w = (*writes)[i];
    absl::StatusOr<std::unique_ptr<Connection>> opened =
        Connection::Open(w.server->address, TimeoutsOf(config));
    if (!opened.ok()) {
      w.detail = opened.status().ToString();
      return;
    }
    const internal::Command command = internal::ReconfigureCommand(
        marker_key, w.expected,
        internal::MarkerSuffix(w.server->name, w.target, w.server->run_id),
        w.state, w.server->run_id, max_ttl);
    absl::StatusOr<Reply> reply =
        (*opened)->Command(internal::CommandArgv(command, /*eval=*/true));
    if (!reply.ok()) {
      w.detail = reply.status().ToString();
      return;
    }
    if (reply->is_error()) {
      w.detail = absl::StrCat("error reply: ", reply->str);
      return;
    }
    if (reply->elements.size() != 2 || !reply->elements[0].is_integer()) {
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
    if (!s.marker.has_value() &&
        !std::binary_search(fresh_ok.begin(), fresh_ok.end(), s.name)) {
      skipped->push_back(s.name);
      continue;
    }
    Write w;
    w.server = &s;
    w.expected = s.RecordNow();
    w.target = target;
    writes.push_back(std::move(w));
  }
  return writes;
}

bool Contains(const std::vector<std::string>& sorted, const std::string& name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
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
void PrintServerLines(const std::vector<Server>& servers,
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
    Line(line);
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

Counters ReadCounters(const Config& config,
                      const std::vector<Server>& servers) {
  // FenceCounterKey(options, "") is the prefix of every counter key.
  const std::string pattern =
      absl::StrCat(GlobEscape(FenceCounterKey(config.options, "")), "*");
  std::vector<std::map<std::string, uint64_t>> per_server(servers.size());
  std::vector<std::string> errors(servers.size());
  ForEachInParallel(servers.size(), [&](size_t i) {
    if (!servers[i].reachable) return;
    absl::StatusOr<std::unique_ptr<Connection>> opened =
        Connection::Open(servers[i].address, TimeoutsOf(config));
    if (!opened.ok()) {
      errors[i] = opened.status().ToString();
      return;
    }
    Connection& c = **opened;
    std::vector<std::string> keys;
    std::string cursor = "0";
    do {
      absl::StatusOr<Reply> reply =
          c.Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      if (!reply.ok() || reply->is_error()) {
        errors[i] = reply.ok() ? reply->str : reply.status().ToString();
        return;
      }
      if (reply->elements.size() != 2) {
        errors[i] = "unexpected SCAN reply";
        return;
      }
      cursor = reply->elements[0].str;
      for (const Reply& key : reply->elements[1].elements) {
        keys.push_back(key.str);
      }
    } while (cursor != "0");
    for (const std::string& key : keys) {
      absl::StatusOr<Reply> value = c.Command({"GET", key});
      if (!value.ok()) {
        errors[i] = value.status().ToString();
        return;
      }
      uint64_t n = 0;
      if (value->is_string() && absl::SimpleAtoi(value->str, &n)) {
        per_server[i][key] = n;
      }
    }
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

// Raises every counter in `counters` on `s` (FenceWriteCommand never
// lowers one). OK when every counter there is now at least the highest.
absl::Status RaiseCounters(const Config& config, const Server& s,
                           const Counters& counters) {
  absl::StatusOr<std::unique_ptr<Connection>> opened =
      Connection::Open(s.address, TimeoutsOf(config));
  if (!opened.ok()) return opened.status();
  for (const auto& [key, value] : counters.highest) {
    absl::StatusOr<Reply> reply = (*opened)->Command(internal::CommandArgv(
        internal::FenceWriteCommand(key, value), /*eval=*/true));
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      return absl::UnavailableError(
          absl::StrCat("raising ", key, ": ", reply->str));
    }
    // 0: it already held as much or more; 1: raised. Both leave it at least
    // at `value`.
  }
  return absl::OkStatus();
}

std::string Left(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "not at this epoch yet";
  if (d <= absl::ZeroDuration()) return "wait over";
  return absl::StrCat(Pretty(d), " left");
}

// The outcome of one pass.
struct Outcome {
  int code = kExitOk;
  // The wait is not over: sleep this long and try again (with --wait).
  absl::Duration retry_after = absl::ZeroDuration();
  // Servers were caught up: read them all again and plan anew.
  bool again = false;
};

Outcome Refuse(absl::string_view why) {
  PrintError(absl::StrCat("reconfigure: ", why));
  return Outcome{kExitRefused};
}

// Carries out `writes` (or, with --dry-run, only prints them). Refused
// writes: kExitRefused.
int Apply(const Config& config, std::vector<Server>& servers,
          std::vector<Write>& writes, const Membership& target,
          const std::vector<std::string>& skipped, absl::Duration max_ttl) {
  if (!config.dry_run) SendWrites(config, &writes, max_ttl);
  PrintServerLines(servers, writes, target, skipped, config.dry_run,
                   /*sent=*/!config.dry_run);
  for (const Write& w : writes) {
    if (w.refused) {
      PrintError(absl::StrCat(
          "reconfigure: ", w.server->Label(),
          "'s record changed while reconfiguring (another reconfigure at "
          "once?); run it again to see the new state: ",
          w.detail));
      return kExitRefused;
    }
  }
  return kExitOk;
}

Outcome Pass(const Config& config, std::vector<Server>& servers,
             const std::vector<std::string>& masters_names,
             const std::vector<std::string>& to_names) {
  ReadAll(config, &servers);
  absl::StatusOr<Judged> judged = Judge(config, servers);
  if (absl::IsUnavailable(judged.status())) {
    PrintError(absl::StrCat("reconfigure: ", judged.status().message()));
    return Outcome{kExitUnavailable};
  }
  if (!judged.ok()) return Refuse(judged.status().message());
  const Membership current = judged->record;
  absl::Duration max_ttl = config.options.max_ttl;
  for (const Server& s : servers) {
    max_ttl = std::max(max_ttl, absl::Milliseconds(s.max_ttl_ms));
  }
  const std::vector<std::string>& O = masters_names;
  const std::vector<std::string>& N = to_names;
  const std::string asked =
      absl::StrCat("asked: --masters ", internal::JoinMembers(O), " --to ",
                   internal::JoinMembers(N));
  const std::string says =
      absl::StrCat("the servers say deployment ", current.deployment, " ",
                   Describe(current));

  Step step;
  Membership target = current;
  target.since_us = 0;
  if (!current.joint()) {
    if (current.members == N) {
      step = Step::kSteady;
    } else if (current.members == O) {
      step = Step::kBegin;
      target.epoch = current.epoch + 1;
      target.next = N;
    } else {
      return Refuse(absl::StrCat(says, "; ", asked,
                                 ": --masters must name the current members (",
                                 internal::JoinMembers(current.members), ")"));
    }
  } else {
    const std::vector<std::string> both =
        internal::Union(current.members, current.next);
    if (O != current.members && O != current.next && O != both) {
      return Refuse(absl::StrCat(
          says, "; ", asked,
          ": during a change --masters must name the old members, the new "
          "ones or both"));
    }
    if (N == current.next) {
      step = Step::kFinish;
    } else if (N == current.members) {
      step = Step::kAbort;
    } else {
      return Refuse(absl::StrCat(
          says, "; ", asked, ": --to must be the new members (",
          internal::JoinMembers(current.next), ") to finish, or the old (",
          internal::JoinMembers(current.members), ") to abort"));
    }
    target.epoch = current.epoch + 1;
    target.members = N;
    target.next.clear();
  }

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
      PrintError(absl::StrCat(
          "reconfigure: ", judged->current.message(), "; ", s.Label(),
          " did not answer (", s.error.ToString(),
          "): run it again when the servers answer", hint));
      return Outcome{kExitUnavailable};
    }
    if (step != Step::kSteady || O != N) {
      return Refuse(absl::StrCat(judged->current.message(), hint));
    }
  }
  Line(absl::StrCat(config.dry_run ? "dry run: " : "", says, "; max_ttl ",
                    Pretty(max_ttl), "; ", reachable, "/", servers.size(),
                    " servers reachable"));

  if (!judged->current.ok()) {
    // The operator's restore: every member without the record kept gets
    // it, naming its process; one without a marker gets a `reborn` one
    // (it lost its data: the clients' restart guard holds it back for
    // max_ttl).
    std::vector<Write> writes;
    const std::string text = internal::RecordText(current);
    for (Server& s : servers) {
      if (!Contains(current.members, s.name)) continue;
      if (s.has_record && internal::RecordText(s.record) == text &&
          internal::RecordKept(s.record, s.marker_run_id, s.run_id,
                               /*durable=*/false)) {
        continue;
      }
      Write w;
      w.server = &s;
      w.expected = s.RecordNow();
      w.target = current;
      if (!s.marker.has_value()) w.state = internal::kRebornMarker;
      writes.push_back(std::move(w));
    }
    Line(absl::StrCat("step: restore: ", Describe(current),
                      " on every member that lost it (",
                      judged->current.message(), ")"));
    const int code = Apply(config, servers, writes, current, {}, max_ttl);
    if (code != kExitOk || config.dry_run) return Outcome{code};
    Outcome again;
    again.again = true;
    return again;
  }

  // At a begin, joining servers with no marker get a trusted one: no record
  // has named them a member yet, so no grant of theirs has counted. Every
  // other server without a marker (an old member, or a joining one once the
  // joint record exists: it may have granted under it and restarted empty
  // since) is left to the clients' restart guard.
  const std::vector<std::string> fresh_at_begin = [&] {
    std::vector<std::string> out;
    if (step != Step::kBegin) return out;
    for (const std::string& n : N) {
      if (!Contains(current.members, n)) out.push_back(n);
    }
    return out;
  }();
  const std::vector<std::string> none;

  if (step == Step::kSteady) {
    // Nothing to change; servers left behind by an earlier run (down then)
    // get the record.
    std::vector<std::string> skipped;
    std::vector<Write> writes = PlanWrites(servers, current, none, &skipped);
    if (writes.empty()) {
      Line(absl::StrCat("nothing to do: the deployment's members are ",
                        internal::JoinMembers(N)));
      PrintServerLines(servers, writes, current, skipped, config.dry_run,
                       false);
      return Outcome{kExitOk};
    }
    Line(absl::StrCat("step: catch up: ", Describe(current),
                      " on the servers an earlier run missed"));
    return Outcome{Apply(config, servers, writes, current, skipped, max_ttl)};
  }

  if (step == Step::kBegin) {
    Line(absl::StrCat("step: begin: ", Describe(target)));
    std::vector<std::string> skipped;
    std::vector<Write> writes =
        PlanWrites(servers, target, fresh_at_begin, &skipped);
    // Enough old members must take the joint record that no quorum of them
    // is left at the old epoch; when too few answer, write nothing.
    const int old_size = static_cast<int>(O.size());
    const int needed =
        old_size - internal::QuorumOf(old_size, target.quorum) + 1;
    int old_writable = 0;
    for (const Server& s : servers) {
      if (Contains(O, s.name) && s.reachable && s.marker.has_value()) {
        ++old_writable;
      }
    }
    if (old_writable < needed) {
      PrintServerLines(servers, writes, target, skipped, config.dry_run,
                       /*sent=*/false);
      PrintError(absl::StrCat(
          "reconfigure: begin needs ", needed, " of the ", old_size,
          " old members (so that no quorum of them is left at epoch ",
          current.epoch, "); ", old_writable,
          " answered with a marker; nothing written"));
      return Outcome{kExitUnavailable};
    }
    if (const int code =
            Apply(config, servers, writes, target, skipped, max_ttl);
        code != kExitOk) {
      return Outcome{code};
    }
    const std::string text = internal::RecordText(target);
    const int on_old = Carrying(servers, O, text, writes);
    int new_reachable = 0;
    for (const Server& s : servers) {
      if (Contains(N, s.name) && s.reachable) ++new_reachable;
    }
    const int on_new = Carrying(servers, N, text, writes);
    const WaitState wait = WaitLeft(servers, target, max_ttl);
    if (config.dry_run) {
      Line(absl::StrCat("then: wait ", Pretty(wait.wait),
                        " (max_ttl*1.01 + 2s + 1s) on the old members' "
                        "clocks, and run again to finish"));
      return Outcome{kExitOk};
    }
    if (on_old < needed || on_new < new_reachable) {
      PrintError(absl::StrCat(
          "reconfigure: begin reached ", on_old, " of ", old_size,
          " old members (", needed,
          " needed, so that no quorum of them is "
          "left at epoch ",
          current.epoch, ") and ", on_new, " of the ", new_reachable,
          " reachable new members (all needed); run it again when they "
          "answer"));
      return Outcome{kExitUnavailable};
    }
    Line(absl::StrCat("begun: ", Describe(target), " on ", on_old, "/",
                      old_size, " old and ", on_new, "/", N.size(),
                      " new members; run the same command again in ",
                      Pretty(wait.wait),
                      " to finish (--wait sleeps until "
                      "then)"));
    return Outcome{kExitOk};
  }

  // finish or abort: first bring servers still before the joint epoch to
  // it (an earlier begin that missed them).
  std::vector<std::string> skipped;
  std::vector<Write> catch_up = PlanWrites(servers, current, none, &skipped);
  if (!catch_up.empty()) {
    Line(absl::StrCat("step: catch up: ", Describe(current),
                      " on the servers begin missed"));
    if (const int code =
            Apply(config, servers, catch_up, current, skipped, max_ttl);
        code != kExitOk) {
      return Outcome{code};
    }
    if (!config.dry_run) {
      // Their `since` is the servers' now; read them again.
      Outcome again;
      again.again = true;
      return again;
    }
  }

  if (step == Step::kFinish) {
    const WaitState wait = WaitLeft(servers, current, max_ttl);
    Line(absl::StrCat("step: finish: ", Describe(target), " (wait ",
                      Pretty(wait.wait),
                      " = max_ttl*1.01 + 2s + 1s since each old member got "
                      "epoch ",
                      current.epoch, ")"));
    for (const auto& [member, left] : wait.left) {
      Line(absl::StrCat("  wait on ", member, ": ", Left(left)));
    }
    if (wait.overall > absl::ZeroDuration()) {
      if (wait.overall == absl::InfiniteDuration()) {
        PrintError(absl::StrCat(
            "reconfigure: too few old members carry ", Describe(current),
            " for the wait to end; run it again when they answer"));
        return Outcome{kExitUnavailable};
      }
      // Bounded by the wait itself, whatever the clocks say.
      return Outcome{kExitConflict, std::min(wait.overall, wait.wait)};
    }
    // The counters: tokens after the change must exceed every token before.
    // Every token was written to a quorum of the old members, and the wait
    // being over means at least |O| - quorum(O) + 1 of them answered just
    // now; a server whose counters cannot be read stops the finish, so the
    // read covers one member of every old quorum.
    const Counters counters = ReadCounters(config, servers);
    const int new_size = static_cast<int>(N.size());
    const int needed =
        new_size - internal::QuorumOf(new_size, target.quorum) + 1;
    int raised = 0;
    std::vector<absl::Status> copy(servers.size(), absl::OkStatus());
    if (!config.dry_run) {
      ForEachInParallel(servers.size(), [&](size_t i) {
        const Server& s = servers[i];
        if (!s.reachable || !Contains(N, s.name)) return;
        copy[i] = RaiseCounters(config, s, counters);
      });
    }
    Line(absl::StrCat("  fencing counters: ", counters.highest.size(),
                      " found; each raised to the highest any server holds "
                      "on every new member"));
    for (const auto& [name, error] : counters.error) {
      Line(absl::StrCat("  ", name, ": counters not read: ", error));
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      const Server& s = servers[i];
      if (!Contains(N, s.name)) continue;
      if (!s.reachable) {
        Line(absl::StrCat("  ", s.Label(),
                          ": counters not raised "
                          "(unreachable)"));
      } else if (config.dry_run) {
        Line(absl::StrCat("  ", s.Label(), ": would raise ",
                          counters.highest.size(), " counters"));
      } else if (copy[i].ok()) {
        ++raised;
        Line(absl::StrCat("  ", s.Label(), ": counters raised"));
      } else {
        Line(absl::StrCat("  ", s.Label(),
                          ": counters NOT raised: ", copy[i].ToString()));
      }
    }
    if (!config.dry_run && (raised < needed || !counters.error.empty())) {
      PrintError(absl::StrCat(
          "reconfigure: the fencing counters reached ", raised, " of ",
          new_size, " new members (", needed, " needed)",
          counters.error.empty() ? ""
                                 : ", and some servers' counters were not "
                                   "read",
          "; nothing finished; run it again when they answer"));
      return Outcome{kExitUnavailable};
    }
  } else {
    Line(absl::StrCat("step: abort: ", Describe(target),
                      " (no wait: every quorum of the joint phase holds a "
                      "quorum of the old members)"));
  }

  skipped.clear();
  std::vector<Write> writes = PlanWrites(servers, target, none, &skipped);
  if (const int code = Apply(config, servers, writes, target, skipped, max_ttl);
      code != kExitOk) {
    return Outcome{code};
  }
  if (config.dry_run) return Outcome{kExitOk};
  const int on_target =
      Carrying(servers, target.members, internal::RecordText(target), writes);
  const int target_size = static_cast<int>(target.members.size());
  if (on_target < internal::QuorumOf(target_size, target.quorum)) {
    PrintError(absl::StrCat("reconfigure: ", StepName(step), " reached ",
                            on_target, " of ", target_size,
                            " members; run it again when they answer"));
    return Outcome{kExitUnavailable};
  }
  Line(absl::StrCat(
      step == Step::kFinish ? "finished: " : "aborted: ", Describe(target),
      " on ", on_target, "/", target_size, " members"));
  return Outcome{kExitOk};
}

}  // namespace

int ReconfigureCommand(const Config& config) {
  // The servers of --masters and --to, one per member name.
  std::vector<Server> servers;
  std::vector<std::string> masters_names, to_names;
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
      auto it = std::find_if(servers.begin(), servers.end(),
                             [&](const Server& s) { return s.name == name; });
      if (it == servers.end()) {
        Server s;
        s.address = address;
        s.name = name;
        servers.push_back(std::move(s));
        it = servers.end() - 1;
      }
      (to ? it->in_to : it->in_masters) = true;
    }
    return true;
  };
  if (!add(config.masters, false, &masters_names) ||
      !add(config.to, true, &to_names)) {
    return kExitUsage;
  }
  masters_names = internal::Canonical(masters_names);
  to_names = internal::Canonical(to_names);

  // With --wait, sleep through the wait (at most --wait) and look again;
  // each look is a full read, so what changed meanwhile is judged afresh.
  // Bounded: a pass that asks to retry has found a finite wait no longer
  // than the wait itself, or caught servers up.
  absl::Duration slept = absl::ZeroDuration();
  for (int pass = 0; pass < 8; ++pass) {
    const Outcome outcome = Pass(config, servers, masters_names, to_names);
    if (outcome.again) continue;
    if (outcome.code != kExitConflict || config.dry_run) {
      if (outcome.code == kExitConflict) {
        PrintError(absl::StrCat("reconfigure: the wait is not over: ",
                                Pretty(outcome.retry_after), " left"));
      }
      return outcome.code;
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
