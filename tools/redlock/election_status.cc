// Copyright 2026 The redlock Authors.

#include "tools/redlock/election_status.h"

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "redlock/election.h"
#include "redlock/keys.h"
#include "src/admin/connection.h"

namespace redlock::cli {
namespace {

// Longer than any token the library issues; a longer one is not a record.
constexpr size_t kMaxRecordToken = 256;

bool Matches(const admin::MasterStatus& s, const ElectionRecord& r) {
  return s.reachable && r.parsed && s.token.has_value() && *s.token == r.token;
}

// The leader a quorum's lease and records make: the record with the highest
// (epoch, revision) among the masters where the quorum's lease token holds
// and the record names it. nullopt if the lease is not held by a quorum or
// no such record exists.
struct StatusLeader {
  const ElectionRecord* record = nullptr;
  int matching = 0;  // Masters whose record names the lease's token.
};
std::optional<StatusLeader> FindLeader(
    const Config& config, const std::vector<admin::MasterStatus>& lease,
    const std::vector<ElectionRecord>& records,
    const admin::HolderSummary& summary) {
  if (summary.holders < config.quorum) return std::nullopt;
  StatusLeader leader;
  for (size_t i = 0; i < lease.size() && i < records.size(); ++i) {
    const ElectionRecord& r = records[i];
    if (!Matches(lease[i], r) || r.token != summary.token) continue;
    ++leader.matching;
    if (leader.record == nullptr ||
        std::tie(r.epoch, r.revision) >
            std::tie(leader.record->epoch, leader.record->revision)) {
      leader.record = &r;
    }
  }
  if (leader.record == nullptr) return std::nullopt;
  return leader;
}

std::string Quoted(absl::string_view value) {
  return absl::StrCat("\"", absl::CHexEscape(value), "\"");
}

std::string RecordText(const ElectionRecord& r) {
  return absl::StrCat("record epoch ", r.epoch, " revision ", r.revision,
                      " token ", TokenPrefix(r.token), " value ",
                      Quoted(r.value));
}

// One master's line: its record and how it stands to the lease there.
std::string MasterLine(const admin::MasterStatus& s, const ElectionRecord& r) {
  std::string line = absl::StrCat("  ", s.master, ": ");
  if (!s.reachable) return absl::StrCat(line, "down\n");
  if (!r.answered) {
    return absl::StrCat(line, "record not read: ", r.error.ToString(), "\n");
  }
  if (!r.raw.has_value()) {
    return absl::StrCat(line, "no record",
                        s.token.has_value() ? " (the lease is held there)" : "",
                        "\n");
  }
  if (!r.parsed) {
    return absl::StrCat(line, "unreadable record ", Quoted(*r.raw), "\n");
  }
  absl::StrAppend(&line, RecordText(r), ": ");
  if (Matches(s, r)) return absl::StrCat(line, "matches the lease\n");
  if (!s.token.has_value()) return absl::StrCat(line, "stale (no lease)\n");
  return absl::StrCat(line, "stale (the lease is ", TokenPrefix(*s.token),
                      "'s)\n");
}

Json JsonRecord(const ElectionRecord& r) {
  if (!r.answered || !r.raw.has_value()) return nullptr;
  Json json;
  if (!r.parsed) {
    json["error"] = "unreadable";
    json["raw"] = *r.raw;
    return json;
  }
  json["epoch"] = r.epoch;
  json["revision"] = r.revision;
  json["token_prefix"] = TokenPrefix(r.token);
  json["value"] = r.value;
  return json;
}

}  // namespace

Config LeaseOf(const Config& config) {
  Config lease = config;
  lease.resource = ElectionResource(config.resource);
  lease.resources = {lease.resource};
  return lease;
}

ElectionRecord ParseElectionRecord(std::string raw) {
  ElectionRecord r;
  r.answered = true;
  const std::vector<absl::string_view> parts =
      absl::StrSplit(raw, absl::MaxSplits(' ', 3));
  r.parsed = parts.size() == 4 && absl::SimpleAtoi(parts[0], &r.epoch) &&
             absl::SimpleAtoi(parts[1], &r.revision) && !parts[2].empty() &&
             parts[2].size() <= kMaxRecordToken &&
             parts[3].size() <= kMaxElectionValueSize;
  if (r.parsed) {
    r.token = std::string(parts[2]);
    r.value = std::string(parts[3]);
  }
  r.raw = std::move(raw);
  return r;
}

std::vector<ElectionRecord> ReadElectionRecords(const Config& config) {
  const std::string key = ElectionRecordKey(config.options, config.resource);
  std::vector<ElectionRecord> records(config.masters.size());
  admin::ForEachInParallel(config.masters.size(), [&](size_t m) {
    ElectionRecord& r = records[m];
    absl::StatusOr<std::unique_ptr<admin::Connection>> connection =
        admin::Connection::Open(config.masters[m], TimeoutsOf(config));
    if (!connection.ok()) {
      r.error = connection.status();
      return;
    }
    absl::StatusOr<std::vector<std::optional<std::string>>> values =
        admin::GetMany(**connection, {key});
    if (!values.ok() || values->size() != 1) {
      r.error = values.ok() ? absl::InternalError("MGET: wrong reply")
                            : values.status();
      return;
    }
    if ((*values)[0].has_value()) {
      r = ParseElectionRecord(*std::move((*values)[0]));
    } else {
      r.answered = true;
    }
  });
  return records;
}

std::string HumanElection(const Config& config,
                          const std::vector<admin::MasterStatus>& lease,
                          const std::vector<ElectionRecord>& records,
                          const admin::HolderSummary& summary) {
  std::string out =
      absl::StrCat("election ", config.resource, " (record key ",
                   ElectionRecordKey(config.options, config.resource),
                   "; the epoch counter is FENCE above):\n");
  for (size_t i = 0; i < lease.size() && i < records.size(); ++i) {
    absl::StrAppend(&out, MasterLine(lease[i], records[i]));
  }
  const int n = static_cast<int>(lease.size());
  if (const std::optional<StatusLeader> leader =
          FindLeader(config, lease, records, summary);
      leader.has_value()) {
    const ElectionRecord& r = *leader->record;
    absl::StrAppend(&out, "leader: epoch ", r.epoch, " revision ", r.revision,
                    " value ", Quoted(r.value), " (lease ",
                    TokenPrefix(summary.token), " on ", summary.holders, "/", n,
                    " masters, its record on ", leader->matching, ")\n");
  } else if (summary.holders >= config.quorum) {
    absl::StrAppend(&out, "no leader's record yet: the lease ",
                    TokenPrefix(summary.token), " is on ", summary.holders, "/",
                    n,
                    " masters but no master holds its record (a campaign "
                    "in flight?)\n");
  } else {
    absl::StrAppend(&out, "no leader: the lease is not held by a quorum\n");
  }
  return out;
}

void AddJsonElection(const Config& config,
                     const std::vector<admin::MasterStatus>& lease,
                     const std::vector<ElectionRecord>& records,
                     const admin::HolderSummary& summary, Json& json) {
  Json election;
  election["name"] = config.resource;
  election["record_key"] = ElectionRecordKey(config.options, config.resource);
  const std::optional<StatusLeader> leader =
      FindLeader(config, lease, records, summary);
  if (leader.has_value()) {
    Json l;
    l["epoch"] = leader->record->epoch;
    l["revision"] = leader->record->revision;
    l["value"] = leader->record->value;
    l["records"] = leader->matching;
    election["leader"] = std::move(l);
  } else {
    election["leader"] = nullptr;
  }
  json["election"] = std::move(election);
  Json& masters = json["masters"];
  for (size_t i = 0; i < lease.size() && i < records.size(); ++i) {
    if (!lease[i].reachable) continue;
    masters[i]["record"] = JsonRecord(records[i]);
    masters[i]["record_matches_lease"] =
        records[i].answered ? Json(Matches(lease[i], records[i]))
                            : Json(nullptr);
  }
}

}  // namespace redlock::cli
