// Copyright 2026 The redlock Authors.
//
// EtcdCluster: a throw-away etcd cluster on loopback for the cli_handoff
// phase's `etcdctl lock` row and the election phase's etcd rows (Debian's
// etcd-server and etcd-client): each
// member its own process, data directory under `dir`, and free 127.0.0.1
// ports for clients and peers; fsync left on, as etcd ships.
//
//   absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd =
//       EtcdCluster::Start("/usr/bin/etcd", "/usr/bin/etcdctl", tmp, 3);
//   (*etcd)->endpoints();  // "http://127.0.0.1:P1,http://127.0.0.1:P2,..."
//
// Only the members it started are stopped, by PID: SIGTERM, then SIGKILL
// after 5 s; each member also runs with PR_SET_PDEATHSIG(SIGKILL) for when
// this process dies without running destructors (start it from a thread
// that outlives it, main's).

#ifndef REDLOCK_BENCH_E2E_ETCD_CLUSTER_H_
#define REDLOCK_BENCH_E2E_ETCD_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace redlock::bench {

class EtcdCluster {
 public:
  // Starts `members` etcd processes forming one new cluster and waits (up
  // to 30 s) until `etcdctl endpoint health` says every one is healthy.
  // kUnavailable, with the reason, if a member did not start or the cluster
  // did not become healthy in time (the members started are stopped).
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(
      const std::string& etcd, const std::string& etcdctl,
      const std::string& dir, int members);

  // Stops every member it started (SIGTERM, then SIGKILL) and reaps it.
  ~EtcdCluster();

  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // The client URLs, comma-separated, for etcdctl's --endpoints.
  const std::string& endpoints() const { return endpoints_; }

 private:
  EtcdCluster() = default;
  void Stop();

  std::vector<pid_t> pids_;
  std::string endpoints_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_ETCD_CLUSTER_H_
