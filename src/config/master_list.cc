// Copyright 2026 The redlock Authors.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/algorithm/membership.h"
#include "src/config/options_internal.h"

namespace redlock {
namespace {

using internal::IsIpv4;
using internal::IsIpv6;
using internal::IsLocalhost;
using internal::QuotedUri;

constexpr absl::string_view kLocalhostAddress = "127.0.0.1";

// The first address the system resolver gives for `host`, in numeric form.
absl::StatusOr<std::string> ResolveHost(const std::string& host) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  const int error = getaddrinfo(host.c_str(), nullptr, &hints, &results);
  if (error != 0) {
    return absl::InvalidArgumentError(
        error == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(error));
  }
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = nullptr;
  if (results->ai_family == AF_INET) {
    raw = &reinterpret_cast<const sockaddr_in*>(results->ai_addr)->sin_addr;
  } else if (results->ai_family == AF_INET6) {
    raw = &reinterpret_cast<const sockaddr_in6*>(results->ai_addr)->sin6_addr;
  }
  const bool ok = raw != nullptr && inet_ntop(results->ai_family, raw, text,
                                              sizeof(text)) != nullptr;
  freeaddrinfo(results);
  if (!ok) {
    return absl::InvalidArgumentError("resolved to an unsupported address");
  }
  return std::string(text);
}

// One spelling per master, for duplicate detection: IPv6 in its canonical
// text form, host names in lower case without a trailing dot.
std::string CanonicalHost(absl::string_view host) {
  in6_addr v6;
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1 &&
      inet_ntop(AF_INET6, &v6, text, sizeof(text)) != nullptr) {
    return text;
  }
  absl::ConsumeSuffix(&host, ".");
  return absl::AsciiStrToLower(host);
}

}  // namespace

absl::Status ResolveMasterHosts(Options& options) {
  // Built aside so that `options` stays unchanged on error.
  std::vector<std::string> resolved = options.masters;
  for (size_t i = 0; i < resolved.size(); ++i) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(resolved[i]);
    if (!address.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("masters[", i, "]: ", address.status().message()));
    }
    if (address->transport == MasterAddress::Transport::kUnix ||
        internal::IsNumericHost(address->host)) {
      continue;
    }
    // A TLS master's certificate is checked against the name as written.
    internal::ApplyTls(options.tls, *address);
    if (address->transport == MasterAddress::Transport::kTls &&
        address->tls_name.empty()) {
      address->tls_name = address->host;
    }
    if (IsLocalhost(address->host)) {
      address->host = std::string(kLocalhostAddress);
    } else {
      // The name as written stays the master's name in the deployment's
      // membership, whatever address it resolves to today.
      if (address->member.empty()) address->member = address->Name();
      absl::StatusOr<std::string> numeric = ResolveHost(address->host);
      if (!numeric.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("masters[", i, "]: master URI ",
                         QuotedUri(resolved[i]), ": host \"", address->host,
                         "\" does not resolve: ", numeric.status().message()));
      }
      address->host = *std::move(numeric);
    }
    resolved[i] = address->Uri();
  }
  options.masters = std::move(resolved);
  return absl::OkStatus();
}

namespace internal {

absl::StatusOr<std::vector<MasterAddress>> ParseMasters(
    const Options& options, bool require_numeric_hosts) {
  if (options.masters.empty()) {
    return absl::InvalidArgumentError(
        "masters: at least one master URI is required");
  }
  std::vector<MasterAddress> addresses;
  std::vector<std::string> canonical_hosts;
  addresses.reserve(options.masters.size());
  for (size_t i = 0; i < options.masters.size(); ++i) {
    const std::string& uri = options.masters[i];
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("masters[", i, "]: ", address.status().message()));
    }
    ApplyTls(options.tls, *address);
    const bool unix_socket =
        address->transport == MasterAddress::Transport::kUnix;
    if (!unix_socket && IsLocalhost(address->host)) {
      if (address->transport == MasterAddress::Transport::kTls &&
          address->tls_name.empty()) {
        address->tls_name = address->host;
      }
      address->host = std::string(kLocalhostAddress);
    } else if (!unix_socket && require_numeric_hosts &&
               !IsNumericHost(address->host)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "masters[", i, "]: master URI ", QuotedUri(uri), ": host \"",
          address->host,
          "\" is not a numeric address; the engine never resolves names on "
          "its loop thread, so resolve it first (ResolveMasterHosts)"));
    }
    // The server an address reaches, as far as it can be told from the
    // address: a socket path, or a host and port.
    std::string canonical =
        unix_socket
            ? absl::StrCat("unix:", address->path)
            : absl::StrCat(CanonicalHost(address->host), "|", address->port);
    for (size_t j = 0; j < addresses.size(); ++j) {
      // Two databases of one server are one failure domain: counting both
      // would let a single server grant a majority on its own.
      if (canonical_hosts[j] == canonical) {
        return absl::InvalidArgumentError(absl::StrCat(
            "masters[", j, "] and masters[", i, "] are the same master ",
            unix_socket ? address->Name()
                        : absl::StrCat(address->host, ":", address->port),
            addresses[j].db == address->db
                ? ""
                : " (different databases of one server are not independent "
                  "masters)"));
      }
    }
    for (size_t j = 0; j < addresses.size(); ++j) {
      if (addresses[j].MemberName() == address->MemberName()) {
        return absl::InvalidArgumentError(
            absl::StrCat("masters[", j, "] and masters[", i,
                         "] have one member name \"", address->MemberName(),
                         "\": each master is one member of the deployment"));
      }
    }
    canonical_hosts.push_back(std::move(canonical));
    addresses.push_back(*std::move(address));
  }
  return addresses;
}

bool IsNumericHost(absl::string_view host) {
  return IsIpv4(host) || IsIpv6(host);
}

void ApplyTls(const TlsOptions& tls, MasterAddress& address) {
  if (tls.enable && address.transport == MasterAddress::Transport::kTcp) {
    address.transport = MasterAddress::Transport::kTls;
  }
}

}  // namespace internal
}  // namespace redlock
