// Copyright 2026 The redlock Authors.
//
// The masters a run uses: parsing --masters, the loopback check, and the
// client options every phase builds from them.

#ifndef REDLOCK_BENCH_E2E_MASTERS_H_
#define REDLOCK_BENCH_E2E_MASTERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"

namespace redlock::bench {

struct Master {
  std::string uri;
  MasterAddress address;
};

bool IsLoopback(absl::string_view host);

// Replaces host:port in a redis:// URI, keeping credentials and db.
std::string WithHostPort(absl::string_view uri, absl::string_view host_port);

// The URIs of the first `n` masters.
std::vector<std::string> UrisOf(const std::vector<Master>& masters, int n);

// Comma-separated redis:// URIs.
absl::StatusOr<std::vector<Master>> ParseMasters(absl::string_view list);

// InvalidArgument for a master off loopback unless `allow_remote`.
absl::Status CheckMasters(const std::vector<Master>& masters,
                          bool allow_remote);

// Options of a client of `uris`, under a key prefix of its own per master
// count. `relaxed`: long timeouts, for runs under valgrind.
redlock::Options ClientOptions(std::vector<std::string> uris, bool relaxed);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_MASTERS_H_
