// Copyright 2026 The redlock Authors.
//
// What a client says about its masters: Health() for the caller and
// `redlock status`, the observer's events when a master connects, drops or
// changes verdict, and the one warning line per kind of risk. Reads the
// masters and the restart guard; changes neither. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_MASTER_REPORTS_H_
#define REDLOCK_SRC_ENGINE_MASTER_REPORTS_H_

#include <array>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "redlock/health.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "src/engine/master.h"
#include "src/engine/restart_guard.h"
#include "src/engine/wakeups.h"

namespace redlock::internal {

class MasterReports {
 public:
  // `options`, `masters` and `guard` must outlive it.
  MasterReports(const Options& options,
                const std::vector<std::unique_ptr<Master>>& masters,
                const RestartGuard& guard);

  // AsyncRedlock::Health(); `wakeups` (null if none made) adds the
  // subscribers' figures.
  std::vector<MasterHealth> Health(const Wakeups* wakeups) const;
  // Tells the observer (Options::observer, if any) of each master whose
  // connection or verdict changed since it was last told.
  void ReportChanges();
  // Warns (Options::on_warning, else stderr) about masters that can evict
  // the library's keys, (with the restart guard, unless
  // Options::accept_non_durable_masters) whose persistence can lose
  // acknowledged writes, and whose TLS is not verified: once every master
  // answered or failed, one line per kind of risk counting the masters
  // with it, at most once per client — and, on stderr, per process. A
  // master that shows a risk only later is in Health() and `redlock status`.
  void WarnAboutRisks();

 private:
  const Options& options_;
  const std::vector<std::unique_ptr<Master>>& masters_;
  const RestartGuard& guard_;
  Observer* const observer_;
  // Per kind of risk (WarnAboutRisks()): its line was given.
  std::array<bool, 3> risks_warned_ = {};
  // Per master, as the observer was last told: connected, and the verdict.
  std::vector<bool> reported_ready_;
  std::vector<absl::Status> reported_verdict_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_MASTER_REPORTS_H_
