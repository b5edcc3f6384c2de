// Copyright 2026 The redlock Authors.

#include "bench/e2e/contender_block.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/e2e/child_processes.h"
#include "bench/e2e/handoff_protocol.h"

namespace redlock::bench {

absl::StatusOr<MasterCounters> ReadAllMasterCounters(
    std::vector<ContextPtr>& info) {
  MasterCounters sum;
  for (ContextPtr& c : info) {
    absl::StatusOr<MasterCounters> one = ReadMasterCounters(c.get());
    if (!one.ok()) return one.status();
    sum += *one;
  }
  return sum;
}

absl::StatusOr<ContenderBlock> RunContenderBlock(
    const ContenderBlockSpec& spec, std::vector<ContextPtr>& info) {
  absl::StatusOr<std::unique_ptr<ChildProcesses>> children =
      ChildProcesses::Start(spec.binary, spec.args);
  if (!children.ok()) return children.status();
  ChildProcesses& procs = **children;
  if (absl::Status s = procs.WriteToEach(
          absl::StrCat("masters ", absl::StrJoin(spec.masters, ","), "\n"));
      !s.ok()) {
    return s;
  }
  if (absl::StatusOr<std::vector<std::string>> ready = procs.ReadUntilLine(
          kHandoffReady, Now() + std::chrono::seconds(30));
      !ready.ok()) {
    return ready.status();
  }
  absl::StatusOr<MasterCounters> before = ReadAllMasterCounters(info);
  if (!before.ok()) return before.status();
  ContenderBlock block;
  block.start = Now() + absl::ToChronoNanoseconds(spec.go_delay);
  block.end = block.start + absl::ToChronoNanoseconds(spec.block);
  if (absl::Status s = procs.WriteToEach(
          EncodeGo(SteadyNanos(block.start), SteadyNanos(block.end)));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<std::string>> reports = procs.ReadUntilLine(
      kHandoffDone, block.end + absl::ToChronoNanoseconds(spec.report_grace));
  if (!reports.ok()) return reports.status();
  absl::StatusOr<MasterCounters> after = ReadAllMasterCounters(info);
  if (!after.ok()) return after.status();
  if (absl::Status s = procs.Finish(Now() + std::chrono::seconds(10));
      !s.ok()) {
    return s;
  }
  block.reports = *std::move(reports);
  block.masters = *after - *before;
  // The `before` reading, on each master.
  block.masters.RemoveInfo(static_cast<int>(info.size()));
  return block;
}

}  // namespace redlock::bench
