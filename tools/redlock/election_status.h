// Copyright 2026 The redlock Authors.
//
// `redlock status --election NAME`: what each master holds for an election,
// read directly like the rest of status (src/admin/probe.h). The lease is a
// lock on ElectionResource(NAME), so status's own table shows its holder,
// PTTL and epoch counter (the FENCE column); this file adds the leader's
// record (ElectionRecordKey(): "<epoch> <revision> <token> <value>") per
// master, whether it matches the lease there, and the leader they make.
// Bytes from a master are untrusted: a record that does not parse is shown
// as such, never guessed at.

#ifndef REDLOCK_TOOLS_REDLOCK_ELECTION_STATUS_H_
#define REDLOCK_TOOLS_REDLOCK_ELECTION_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "src/admin/probe.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/output.h"

namespace redlock::cli {

// `config` (elect, status --election) with the election's lease as its
// resource: ElectionResource(config.resource), a lock like any other for
// status's table and the progress display.
Config LeaseOf(const Config& config);

// One master's election record, as read.
struct ElectionRecord {
  bool answered = false;  // The GET was answered; else `error` says why.
  absl::Status error;
  std::optional<std::string> raw;  // nullopt: no record.
  // `raw` as "<epoch> <revision> <token> <value>"; `parsed` false for a
  // record of any other shape (shown as unreadable).
  bool parsed = false;
  uint64_t epoch = 0;
  uint64_t revision = 0;
  std::string token;
  std::string value;
};

// The record of election config.resource on every master, in the order of
// config.masters, each asked on its own thread within the tool's timeouts.
std::vector<ElectionRecord> ReadElectionRecords(const Config& config);

// Parses a record's bytes; `parsed` false if they are not a record.
ElectionRecord ParseElectionRecord(std::string raw);

// The lines status prints under its table of the lease: one per master
// (its record and whether it matches the lease there), then the leader the
// quorum's lease and records make, or why there is none.
std::string HumanElection(const Config& config,
                          const std::vector<admin::MasterStatus>& lease,
                          const std::vector<ElectionRecord>& records,
                          const admin::HolderSummary& summary);

// status --json: adds "election" (name, record key, leader or null) to
// `json` and "record" and "record_matches_lease" to each master's object in
// json["masters"].
void AddJsonElection(const Config& config,
                     const std::vector<admin::MasterStatus>& lease,
                     const std::vector<ElectionRecord>& records,
                     const admin::HolderSummary& summary, Json& json);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_ELECTION_STATUS_H_
