// Copyright 2026 The redlock Authors.

#include "src/algorithm/membership.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/algorithm/sha1.h"

namespace redlock::internal {
namespace {

constexpr size_t kMaxMemberName = 255;
// More members than any deployment has; a record naming more is refused.
constexpr size_t kMaxMembers = 64;

absl::StatusOr<std::vector<std::string>> ParseList(absl::string_view field,
                                                   absl::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    if (absl::Status s = CheckMemberName(name); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("membership record: ", field, ": ", s.message()));
    }
    out.emplace_back(name);
  }
  if (out.size() > kMaxMembers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "membership record: ", field, " names ", out.size(), " members"));
  }
  // Only what the library writes: sorted, no repeats.
  if (!std::is_sorted(out.begin(), out.end()) ||
      std::adjacent_find(out.begin(), out.end()) != out.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "membership record: ", field, " is not sorted and distinct"));
  }
  return out;
}

std::vector<std::string> Difference(const std::vector<std::string>& a,
                                    const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(),
                      std::back_inserter(out));
  return out;
}

bool Contains(const std::vector<std::string>& sorted, absl::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

absl::Status Refuse(absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("membership: ", why));
}

}  // namespace

std::string RecordText(const Membership& record) {
  return absl::StrCat("deployment=", record.deployment, ";epoch=", record.epoch,
                      ";members=", absl::StrJoin(record.members, ","),
                      ";next=", absl::StrJoin(record.next, ","),
                      ";quorum=", QuorumName(record.quorum));
}

std::string MarkerSuffix(absl::string_view member, const Membership& record,
                         absl::string_view holder) {
  if (holder.empty()) {
    return absl::StrCat(";member=", member, ";", RecordText(record));
  }
  // Before "deployment=": the reconfigure script reads the record as the
  // text from "deployment=" to ";since=".
  return absl::StrCat(";member=", member, ";holder=", holder, ";",
                      RecordText(record));
}

bool RecordKept(const Membership& record, absl::string_view marker_run_id,
                absl::string_view run_id, bool durable) {
  if (durable) return true;
  if (run_id.empty()) return false;
  return record.holder.empty() ? marker_run_id == run_id
                               : record.holder == run_id;
}

absl::Status CurrentOnQuorum(const Membership& record,
                             const std::vector<std::string>& names,
                             const std::vector<bool>& carries,
                             const std::vector<bool>& kept) {
  const std::vector<std::string>* groups[] = {&record.members, &record.next};
  for (const std::vector<std::string>* group : groups) {
    if (group->empty()) continue;
    std::vector<std::string> counted, not_kept;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!carries[i] || !Contains(*group, names[i])) continue;
      (kept[i] ? counted : not_kept).push_back(names[i]);
    }
    counted = Canonical(std::move(counted));
    const int size = static_cast<int>(group->size());
    const int needed = QuorumOf(size, record.quorum);
    if (static_cast<int>(counted.size()) >= needed) continue;
    not_kept = Difference(Canonical(std::move(not_kept)), counted);
    return Refuse(absl::StrCat(
        "the newest record heard (epoch ", record.epoch, ", members ",
        JoinMembers(record.members),
        record.joint() ? absl::StrCat(" -> ", JoinMembers(record.next)) : "",
        ") is carried by ", counted.size(), " of ", size, " of ",
        group == &record.next ? "its new members" : "its members", " (",
        JoinMembers(counted), "), and ", needed,
        " are needed to know it is current",
        not_kept.empty()
            ? ""
            : absl::StrCat("; ", JoinMembers(not_kept),
                           " restarted since it was written to them and may "
                           "have come back with an older record"),
        ": no grant counts and no record is written until a quorum of its "
        "members answer with it (or `redlock reconfigure` writes it again)"));
  }
  return absl::OkStatus();
}

absl::Status ParseMarkerRecord(absl::string_view suffix, std::string* member,
                               Membership* record) {
  *record = Membership();
  member->clear();
  bool saw_member = false, saw_deployment = false, saw_epoch = false,
       saw_members = false, saw_next = false, saw_quorum = false;
  for (absl::string_view field : absl::StrSplit(suffix, ';')) {
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          "membership record: a field without '='");
    }
    const absl::string_view key = field.substr(0, eq);
    const absl::string_view value = field.substr(eq + 1);
    if (key == "member") {
      if (absl::Status s = CheckMemberName(value); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("membership record: member: ", s.message()));
      }
      *member = std::string(value);
      saw_member = true;
    } else if (key == "deployment") {
      if (value.empty() || value.size() > 64 ||
          !std::all_of(value.begin(), value.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
          })) {
        return absl::InvalidArgumentError(
            "membership record: deployment is not a hex id");
      }
      record->deployment = std::string(value);
      saw_deployment = true;
    } else if (key == "epoch") {
      if (!absl::SimpleAtoi(value, &record->epoch) || record->epoch < 1 ||
          value[0] == '+' || value[0] == ' ') {
        return absl::InvalidArgumentError(
            "membership record: epoch is not a positive number");
      }
      saw_epoch = true;
    } else if (key == "members" || key == "next") {
      absl::StatusOr<std::vector<std::string>> list = ParseList(key, value);
      if (!list.ok()) return list.status();
      (key == "members" ? record->members : record->next) = *std::move(list);
      (key == "members" ? saw_members : saw_next) = true;
    } else if (key == "quorum") {
      absl::StatusOr<Quorum> quorum = ParseQuorum(value);
      if (!quorum.ok()) {
        return absl::InvalidArgumentError(
            "membership record: quorum is not majority or all");
      }
      record->quorum = *quorum;
      saw_quorum = true;
    } else if (key == "holder") {
      // Untrusted: compared with run_ids only, so any text is harmless, but
      // not a long one.
      if (value.size() <= 64) record->holder = std::string(value);
    } else if (key == "since") {
      int64_t since = 0;
      if (absl::SimpleAtoi(value, &since) && since > 0) {
        record->since_us = since;
      }
    }
  }
  if (!saw_member || !saw_deployment || !saw_epoch || !saw_members ||
      !saw_next || !saw_quorum) {
    return absl::InvalidArgumentError(
        "membership record: a required field (member, deployment, epoch, "
        "members, next, quorum) is missing");
  }
  if (record->members.empty()) {
    return absl::InvalidArgumentError("membership record: members is empty");
  }
  return absl::OkStatus();
}

absl::Status CheckMemberName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("member name is empty");
  if (name.size() > kMaxMemberName) {
    return absl::InvalidArgumentError(
        absl::StrCat("member name is ", name.size(), " bytes; at most ",
                     kMaxMemberName, " allowed"));
  }
  for (char c : name) {
    if (c <= 0x20 || c >= 0x7f || c == ';' || c == ',' || c == '=' ||
        c == '|') {
      return absl::InvalidArgumentError(
          "member name may hold printable ASCII only, without space ; , = |");
    }
  }
  return absl::OkStatus();
}

int QuorumOf(int size, Quorum quorum) {
  return quorum == Quorum::kUnanimous ? size : size / 2 + 1;
}

std::string JoinMembers(const std::vector<std::string>& members) {
  return members.empty() ? "(none)" : absl::StrJoin(members, ",");
}

std::vector<std::string> Canonical(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> Union(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(),
                 std::back_inserter(out));
  return out;
}

std::string NewDeploymentId(const std::vector<std::string>& members,
                            Quorum quorum) {
  return Sha1Hex(
             absl::StrCat(absl::StrJoin(members, ","), ";", QuorumName(quorum)))
      .substr(0, 16);
}

absl::Status CheckList(const Membership& record,
                       const std::vector<std::string>& list, int unknown) {
  // `list` may lack up to `unknown` entries: masters not heard from yet,
  // whose names are not known. Any name it has must be in the set.
  auto fits = [&list, unknown](const std::vector<std::string>& set) {
    return Difference(list, set).empty() &&
           static_cast<int>(Difference(set, list).size()) <= unknown;
  };
  if (!record.joint()) {
    if (fits(record.members)) return absl::OkStatus();
    const std::vector<std::string> extra = Difference(list, record.members);
    const std::vector<std::string> missing = Difference(record.members, list);
    return Refuse(absl::StrCat(
        "this client's masters are ", JoinMembers(list),
        unknown > 0 ? absl::StrCat(" and ", unknown, " not heard from yet")
                    : "",
        "; the deployment's members are ", JoinMembers(record.members),
        " (epoch ", record.epoch, ")",
        extra.empty() ? ""
                      : absl::StrCat("; not members: ", JoinMembers(extra)),
        missing.empty() ? ""
                        : absl::StrCat("; missing: ", JoinMembers(missing)),
        ". Configure the deployment's members, or change them with `redlock "
        "reconfigure` (docs/failure-behaviour.md, \"Changing the masters\")"));
  }
  if (fits(record.members) || fits(record.next) ||
      fits(Union(record.members, record.next))) {
    return absl::OkStatus();
  }
  return Refuse(absl::StrCat(
      "this client's masters are ", JoinMembers(list),
      unknown > 0 ? absl::StrCat(" and ", unknown, " not heard from yet") : "",
      "; the deployment is changing from ", JoinMembers(record.members), " to ",
      JoinMembers(record.next), " (epoch ", record.epoch,
      "), and a client may use the old list, the new one or both"));
}

namespace {

// JudgeMembership()'s parts. The index of the master carrying the highest
// epoch (-1 if none carries a record), or kFailedPrecondition if the records
// cannot all be true: two deployments, two configurations at one epoch, a
// record that does not parse.
absl::StatusOr<int> NewestRecord(const std::vector<MemberView>& views) {
  int newest = -1;
  for (size_t i = 0; i < views.size(); ++i) {
    const MemberView& v = views[i];
    if (!v.known || !v.marked) continue;
    if (!v.record_error.ok()) {
      return Refuse(absl::StrCat(
          "master ", i + 1, " carries a record that does not parse (",
          v.record_error.message(), "): fix or remove its marker"));
    }
    if (!v.has_record) continue;
    if (newest < 0) {
      newest = static_cast<int>(i);
      continue;
    }
    const Membership& a = views[newest].record;
    const Membership& b = v.record;
    if (a.deployment != b.deployment) {
      return Refuse(absl::StrCat(
          "this client's masters belong to two deployments: master ",
          newest + 1, " to ", a.deployment, " (members ",
          JoinMembers(a.members), "), master ", i + 1, " to ", b.deployment,
          " (members ", JoinMembers(b.members), ")"));
    }
    if (a.epoch == b.epoch && RecordText(a) != RecordText(b)) {
      return Refuse(absl::StrCat("masters ", newest + 1, " and ", i + 1,
                                 " carry two configurations at epoch ", a.epoch,
                                 " (two reconfigurations at once?): ",
                                 RecordText(a), " and ", RecordText(b)));
    }
    if (b.epoch > a.epoch) newest = static_cast<int>(i);
  }
  return newest;
}

// OK if `adopted` is known to be current (CurrentOnQuorum()) from what
// `views` carry.
absl::Status AdoptedIsCurrent(const Membership& adopted,
                              const std::vector<MemberView>& views,
                              const std::vector<std::string>& names) {
  const size_t n = views.size();
  const std::string text = RecordText(adopted);
  std::vector<bool> carries(n), kept(n);
  for (size_t i = 0; i < n; ++i) {
    const MemberView& v = views[i];
    carries[i] = v.known && v.has_record && v.member == names[i] &&
                 RecordText(v.record) == text;
    kept[i] = v.kept;
  }
  return CurrentOnQuorum(adopted, names, carries, kept);
}

// Master `v`'s standing under `adopted` (whose members and joining members
// are `all`), given whether the record is known `current`; sets
// `needs_record` if the record is to be written to it.
absl::Status StandingOf(const MemberView& v, const std::string& name,
                        const Membership& adopted,
                        const std::vector<std::string>& all,
                        const absl::Status& current, bool guard_judges_unmarked,
                        bool* needs_record) {
  if (!v.known) return Refuse("not yet judged (no handshake)");
  if (v.has_record && v.member != name) {
    return Refuse(
        absl::StrCat("this server is member ", v.member,
                     " of the deployment; this client's list calls it ", name));
  }
  if (!Contains(all, name)) {
    return Refuse(absl::StrCat(
        name, " is not a member of the deployment (members ",
        JoinMembers(adopted.members),
        adopted.joint() ? absl::StrCat(", joining ", JoinMembers(adopted.next))
                        : "",
        "); a master is added with `redlock reconfigure` "
        "(docs/failure-behaviour.md, \"Changing the masters\")"));
  }
  if (!v.kept && !current.ok()) {
    return Refuse(absl::StrCat(
        v.marked ? "its marker and record may be older than it was given "
                   "(it restarted since they were written)"
                 : "it carries no membership record",
        ", and the record to give it is not known to be current: ",
        absl::StripPrefix(current.message(), "membership: ")));
  }
  if (v.has_record && !v.holder_current) {
    // Restarted since its record was written (an RDB snapshot, a lost AOF
    // tail, or durably): the current record, known from the others, is
    // written over it, naming the process that carries it now. Its grants
    // count as the restart guard judges it meanwhile.
    *needs_record = true;
    return absl::OkStatus();
  }
  if (!v.has_record) {
    *needs_record = true;
    // A marked member without a record (a marker from before records, an
    // operator's hand mark) counts while the record is written back: the
    // restart guard judges it as any marked master, and the record names
    // it a member. An unmarked one gets the record with its marker; until
    // then the restart guard refuses it, or (without the guard) this.
    if (!v.marked && !guard_judges_unmarked) {
      return Refuse(
          "not yet judged (no membership record while other masters carry "
          "one; it is being written)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

MembershipJudgement JudgeMembership(const std::vector<MemberView>& views,
                                    const std::vector<std::string>& names,
                                    const std::vector<std::string>& list,
                                    Quorum quorum, int unknown,
                                    bool guard_judges_unmarked,
                                    bool trust_unknown_records) {
  const size_t n = views.size();
  MembershipJudgement out;
  out.standing.assign(n, absl::OkStatus());
  out.needs_record.assign(n, false);
  auto refuse_all = [&out](const absl::Status& why) {
    for (absl::Status& s : out.standing) s = why;
    out.adopted.reset();
    std::fill(out.needs_record.begin(), out.needs_record.end(), false);
    return out;
  };
  // The highest epoch carried; every record must be of one deployment, and
  // one epoch means one configuration.
  absl::StatusOr<int> newest = NewestRecord(views);
  if (!newest.ok()) return refuse_all(newest.status());
  if (*newest < 0) return out;  // No record anywhere: the legacy rules judge.
  const Membership& adopted = views[*newest].record;
  // The quorum rule needs no agreement: a client counting every member
  // and one counting a majority intersect as two majorities do. Each counts
  // under its own (QuorumGroups()).
  (void)quorum;
  if (absl::Status s = CheckList(adopted, list, unknown); !s.ok()) {
    return refuse_all(s);
  }
  // Whether the highest record heard is known to be current: a quorum of its
  // members carries it kept. A client that hears only servers left behind by
  // a change (down through it, or restarted from an older snapshot) must not
  // take their record for the deployment's: it writes it nowhere, and a
  // member whose own record is missing or not kept (it restarted) casts no
  // grant meanwhile. Members that carry a kept record count as before: a
  // quorum of them all carrying records no newer than this one cannot be
  // left behind by a finished change (docs/design.md).
  absl::Status current = AdoptedIsCurrent(adopted, views, names);
  // Unsafe, test only (see the parameter): the record taken as current.
  if (trust_unknown_records) current = absl::OkStatus();
  out.adopted = adopted;
  const std::vector<std::string> all = Union(adopted.members, adopted.next);
  for (size_t i = 0; i < n; ++i) {
    bool needs_record = false;
    out.standing[i] = StandingOf(views[i], names[i], adopted, all, current,
                                 guard_judges_unmarked, &needs_record);
    out.needs_record[i] = needs_record;
  }
  return out;
}

std::vector<QuorumGroup> QuorumGroups(const Membership& record,
                                      const std::vector<std::string>& names,
                                      std::optional<Quorum> rule) {
  std::vector<QuorumGroup> groups;
  for (const std::vector<std::string>* set : {&record.members, &record.next}) {
    if (set->empty()) continue;
    QuorumGroup g;
    g.size = static_cast<int>(set->size());
    g.quorum = QuorumOf(g.size, rule.value_or(record.quorum));
    g.in.assign(names.size(), false);
    for (size_t i = 0; i < names.size(); ++i) {
      g.in[i] = Contains(*set, names[i]);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

bool SameGroups(const std::vector<QuorumGroup>& a,
                const std::vector<QuorumGroup>& b) {
  if (a.size() != b.size()) return false;
  for (size_t g = 0; g < a.size(); ++g) {
    if (a[g].in != b[g].in || a[g].size != b[g].size ||
        a[g].quorum != b[g].quorum) {
      return false;
    }
  }
  return true;
}

bool QuorumOfEvery(const std::vector<QuorumGroup>& groups,
                   const std::vector<bool>& granted) {
  for (const QuorumGroup& g : groups) {
    int count = 0;
    for (size_t i = 0; i < granted.size() && i < g.in.size(); ++i) {
      count += (granted[i] && g.in[i]) ? 1 : 0;
    }
    if (count < g.quorum) return false;
  }
  return true;
}

}  // namespace redlock::internal
