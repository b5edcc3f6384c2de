// Copyright 2026 The redlock Authors.

#include "bench/e2e/node_redlock_peer.h"

#include <unistd.h>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/e2e/common.h"

ABSL_FLAG(std::string, node_redlock_dir, "",
          "Contention-peer and contended-handover phases: a directory with "
          "node-redlock's contender.js and threads.js and their node_modules "
          "(scripts/bench.sh installs one). Empty: the node-redlock blocks "
          "are not run.");
ABSL_FLAG(std::string, node_binary, "node",
          "Contention-peer and contended-handover phases: the node "
          "executable (looked up in PATH without a '/').");

namespace redlock::bench {

std::vector<std::string> NodeRedlockSettings::Args() const {
  return {absl::StrCat("--retry_count=", retry_count),
          absl::StrCat("--retry_delay_ms=", retry_delay_ms),
          absl::StrCat("--retry_jitter_ms=", retry_jitter_ms),
          absl::StrCat("--drift_factor=", drift_factor)};
}

void NodeRedlockSettings::AddSettings(absl::string_view prefix,
                                      Json& settings) const {
  settings[absl::StrCat(prefix, "node_retry_count")] = retry_count;
  settings[absl::StrCat(prefix, "node_retry_delay_ms")] = retry_delay_ms;
  settings[absl::StrCat(prefix, "node_retry_jitter_ms")] = retry_jitter_ms;
  settings[absl::StrCat(prefix, "node_drift_factor")] = Num(drift_factor);
}

NodeRedlockPeer FindNodeRedlock(absl::string_view script) {
  NodeRedlockPeer peer;
  const std::string dir = absl::GetFlag(FLAGS_node_redlock_dir);
  peer.binary = FindOnPath(absl::GetFlag(FLAGS_node_binary));
  peer.script = absl::StrCat(dir, "/", script);
  if (dir.empty()) {
    peer.skipped = "no --node_redlock_dir (scripts/bench.sh installs one)";
  } else if (peer.binary.empty()) {
    peer.skipped = absl::StrCat("no ", absl::GetFlag(FLAGS_node_binary));
  } else if (access(peer.script.c_str(), R_OK) != 0 ||
             access(absl::StrCat(dir, "/node_modules/redlock").c_str(), R_OK) !=
                 0) {
    peer.skipped =
        absl::StrCat("no ", script, " or node_modules/redlock in ", dir);
  }
  return peer;
}

}  // namespace redlock::bench
