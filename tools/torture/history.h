// Copyright 2026 The redlock Authors.
//
// The torture tool's history files and their checker. Every client process
// appends one line per event to its own file (client-<id>.log) with plain
// write(2); the orchestrator writes nemesis.log (the run's parameters, every
// fault, the moment everything was healed, the leftover-key check). Each line
// is a kind followed by key=value fields; every time is CLOCK_MONOTONIC in
// nanoseconds, the clock all processes of the machine share:
//
//   ACQ     c s res token fence start ret vu   a lock was won (and votes)
//   ACQFAIL c res start ret code                an acquisition failed
//   WS/WE   c s t                               work started / ended
//   FW      c s res fence send ans result       fenced write (accepted,
//                                               rejected, error)
//   UW      c s res send ans result value       unfenced INCR
//   REL     c s t result                        release
//   RUN     t0 end heal ttl_ms retry_max_ms ... (nemesis.log)
//   FAULT   kind targets start end              (nemesis.log)
//   HEAL    t                                   (nemesis.log)
//   LEFTCHECK masters ok / LEFTOVER master key  (nemesis.log)
//
// CheckHistory() reads only these files: it does not trust the library.

#ifndef REDLOCK_TOOLS_TORTURE_HISTORY_H_
#define REDLOCK_TOOLS_TORTURE_HISTORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace redlock::torture {

// Monotonic now, in ns.
int64_t NowNs();

// Appends one line (a trailing newline is added) with a single write(2).
void AppendLine(int fd, const std::string& line);

struct FencedWrite {
  int64_t fence = 0;
  int64_t send = 0;
  int64_t ans = 0;
  std::string result;  // accepted, rejected, error
};

struct Section {
  int client = -1;
  int64_t seq = -1;
  std::string resource;
  std::string token;
  int64_t fence = 0;
  // The library's own account of the winning attempt, one letter per
  // master: g granted, d denied, f failed, p pending. Informational.
  std::string votes;
  int64_t start = 0, ret = 0, valid_until = 0;
  int64_t work_start = 0, work_end = 0;  // 0: not recorded
  std::vector<FencedWrite> fenced;
  int unfenced = 0, unfenced_late = 0;
  std::string release;
  // End of the interval during which it may count as the holder.
  int64_t HoldEnd() const;
};

struct Fault {
  std::string kind;
  std::string targets;
  int64_t start = 0, end = 0;
};

struct Summary {
  int64_t t0 = 0, end = 0, heal = 0;
  int64_t ttl_ns = 0, retry_max_ns = 0;
  int64_t acquisitions = 0, acquire_failures = 0;
  int64_t fenced_writes = 0, fenced_accepted = 0, fenced_rejected = 0,
          fenced_errors = 0, unfenced_writes = 0;
  std::map<std::string, int64_t> faults_by_kind;
  std::map<std::string, int64_t> acquire_failures_by_code;
  // Violations.
  int64_t mutual_exclusion = 0;
  int64_t stale_fenced_accepted = 0;
  // Sections whose acquisition started after another section of the same
  // resource had returned, yet got a fence token no larger than it: one per
  // such later section, however many earlier ones it fails to exceed.
  int64_t fence_order = 0;
  // Sections that got a fence token another section of the same resource
  // had already got: k sections sharing a token count k - 1.
  int64_t fence_duplicate = 0;
  int64_t liveness = 0;
  int64_t leftovers = 0;
  bool leftover_check_ran = false;
  // Informational.
  int64_t late_holders = 0;          // work ended past valid_until
  int64_t late_fenced_writes = 0;    // sent past valid_until
  int64_t late_fenced_rejected = 0;  // of those, rejected by the storage
  int64_t late_fenced_accepted_superseded = 0;  // accepted though a higher
                                                // token was accepted before
  int64_t late_unfenced_writes = 0;
  int64_t max_gap_after_heal_ns = 0;
  std::vector<std::string> details;  // One line per violation (capped).
  // Every violation, for the timeline: its kind ("mutual exclusion", "stale
  // fenced write", "fence order", "fence duplicate", "liveness"), resource
  // and time span.
  struct Mark {
    std::string kind;
    std::string resource;
    int64_t start = 0, end = 0;
  };
  std::vector<Mark> marks;

  int64_t violations() const {
    return mutual_exclusion + stale_fenced_accepted + fence_order +
           fence_duplicate + liveness + leftovers;
  }
};

struct History {
  std::vector<Section> sections;
  std::vector<Fault> faults;
  std::vector<std::string> resources;
  Summary summary;
};

// Reads every *.log in `dir` and checks it.
absl::StatusOr<History> CheckHistory(const std::string& dir);

// The fence tokens the sections got, judged from their ACQ records alone
// (CheckHistory() calls it; separate so it can be tested without files).
// Per resource, among sections with a token (fence > 0):
//   order      a section whose acquisition started after another's returned
//              (start > other's ret) must have a strictly larger token: the
//              storage cannot tell a stale holder from the current one
//              otherwise. Sections whose acquisitions overlap in time are
//              not ordered, so their tokens may come in either order.
//   duplicate  no token is given out twice.
// Adds to s->fence_order and s->fence_duplicate, and appends to s->marks and
// s->details (times relative to s->t0). O(n log n) in the sections.
void CheckFenceTokens(const std::vector<Section>& sections, Summary* s);

// The summary table, for stdout.
std::string FormatSummary(const Summary& s);
// history.json and timeline.svg into `out_dir`.
absl::Status WriteJson(const History& h, const std::string& path);
// The timeline shows the run from `from_s` to `to_s` seconds after its
// start; to_s <= from_s means up to the end.
absl::Status WriteSvg(const History& h, const std::string& path,
                      double from_s = 0, double to_s = 0);

}  // namespace redlock::torture

#endif  // REDLOCK_TOOLS_TORTURE_HISTORY_H_
