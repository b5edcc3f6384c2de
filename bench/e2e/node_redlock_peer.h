// Copyright 2026 The redlock Authors.
//
// node-redlock as a peer of our contenders, the contention_peer and
// contended_handover phases' shared steps: finding node and a script of
// bench/peers/node-redlock/ in --node_redlock_dir (scripts/bench.sh installs
// one, with its node_modules), and the retry settings both scripts take and
// results.json records. The flags --node_redlock_dir and --node_binary are
// defined here.

#ifndef REDLOCK_BENCH_E2E_NODE_REDLOCK_PEER_H_
#define REDLOCK_BENCH_E2E_NODE_REDLOCK_PEER_H_

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/strings/string_view.h"
#include "bench/e2e/json.h"

ABSL_DECLARE_FLAG(std::string, node_redlock_dir);
ABSL_DECLARE_FLAG(std::string, node_binary);

namespace redlock::bench {

// node-redlock's retry settings and drift factor, as a phase runs it.
struct NodeRedlockSettings {
  int retry_count = 0;
  int retry_delay_ms = 0;
  int retry_jitter_ms = 0;
  double drift_factor = 0;

  // The scripts' flags for these, in this order: --retry_count=,
  // --retry_delay_ms=, --retry_jitter_ms=, --drift_factor=.
  std::vector<std::string> Args() const;
  // Adds PREFIX "node_retry_count", PREFIX "node_retry_delay_ms", PREFIX
  // "node_retry_jitter_ms" and PREFIX "node_drift_factor" to `settings`, in
  // this order.
  void AddSettings(absl::string_view prefix, Json& settings) const;
};

// node and one script of node-redlock's, as found from the flags.
struct NodeRedlockPeer {
  std::string binary;   // --node_binary on PATH; "" if not found.
  std::string script;   // --node_redlock_dir/`script`.
  std::string skipped;  // Why the peer cannot run; "" when it can.
};

// Looks for --node_binary (FindOnPath) and for `script` and
// node_modules/redlock in --node_redlock_dir. `skipped` names the first
// thing missing: no --node_redlock_dir, no node, or no script or package.
NodeRedlockPeer FindNodeRedlock(absl::string_view script);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_NODE_REDLOCK_PEER_H_
