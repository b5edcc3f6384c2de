// Copyright 2026 The redlock Authors.

#include "bench/e2e/masters.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

bool IsLoopback(absl::string_view host) {
  return absl::StartsWith(host, "127.") || host == "::1" || host == "localhost";
}

std::string WithHostPort(absl::string_view uri, absl::string_view host_port) {
  size_t start = uri.find("://");
  start = start == absl::string_view::npos ? 0 : start + 3;
  size_t end = uri.find('/', start);
  if (end == absl::string_view::npos) end = uri.size();
  size_t at = uri.substr(0, end).rfind('@');
  if (at != absl::string_view::npos && at >= start) start = at + 1;
  return absl::StrCat(uri.substr(0, start), host_port, uri.substr(end));
}

std::vector<std::string> UrisOf(const std::vector<Master>& masters, int n) {
  std::vector<std::string> uris;
  for (int i = 0; i < n; ++i) uris.push_back(masters[i].uri);
  return uris;
}

absl::StatusOr<std::vector<Master>> ParseMasters(absl::string_view list) {
  std::vector<Master> masters;
  for (absl::string_view uri : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    uri = absl::StripAsciiWhitespace(uri);
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return address.status();
    masters.push_back({std::string(uri), *std::move(address)});
  }
  if (masters.empty()) return absl::InvalidArgumentError("no masters given");
  return masters;
}

absl::Status CheckMasters(const std::vector<Master>& masters,
                          bool allow_remote) {
  for (const Master& m : masters) {
    if (!allow_remote && !IsLoopback(m.address.host)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "master ", m.address.Name(),
          " is not on a loopback address; pass --allow_remote to benchmark "
          "against it"));
    }
  }
  return absl::OkStatus();
}

redlock::Options ClientOptions(std::vector<std::string> uris, bool relaxed) {
  redlock::Options options;
  // One key prefix per master count: each N is its own deployment. The
  // restart guard writes a deployment marker under the prefix, and a client
  // of N=3 must not take masters 2 and 3 for reborn because a client of N=1
  // marked only master 1.
  options.key_prefix = absl::StrCat(kKeyPrefix, "n", uris.size(), ":");
  options.masters = std::move(uris);
  if (relaxed) {
    // Under valgrind everything on the client side is ~50x slower; the
    // instructions of a cycle do not depend on these.
    options.request_timeout = absl::Seconds(2);
    options.connect_timeout = absl::Seconds(5);
    options.stalled_connection_timeout = absl::Seconds(5);
  }
  return options;
}

}  // namespace redlock::bench
