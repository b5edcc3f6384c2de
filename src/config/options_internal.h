// Copyright 2026 The redlock Authors.
//
// Pieces of option handling shared by ValidateOptions() and the engine, which
// needs the parsed masters and, unlike ValidateOptions(), numeric hosts.

#ifndef REDLOCK_SRC_CONFIG_OPTIONS_INTERNAL_H_
#define REDLOCK_SRC_CONFIG_OPTIONS_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"

namespace redlock::internal {

// Parses every URI in `options.masters`, in order. "localhost" (in any case)
// becomes "127.0.0.1". kInvalidArgument, naming the entry as "masters[i]",
// if there are no masters, a URI does not parse, two entries name the same
// host, port and db, or `require_numeric_hosts` is set and a host is a name:
// the engine never resolves names on its loop thread.
absl::StatusOr<std::vector<MasterAddress>> ParseMasters(
    const Options& options, bool require_numeric_hosts);

// True if `host` (without brackets) is a numeric IPv4 or IPv6 address.
bool IsNumericHost(absl::string_view host);

// A redis:// master goes over TLS when `tls.enable` says so; every other
// address is left as it is. The one place that rule is applied.
void ApplyTls(const TlsOptions& tls, MasterAddress& address);

// Shared by the URI parser (master_uri.cc) and the list of masters
// (master_list.cc). A master URI quoted for a message, its password
// redacted.
std::string QuotedUri(absl::string_view uri);
// `host` is a numeric IPv4 / IPv6 address (without brackets).
bool IsIpv4(absl::string_view host);
bool IsIpv6(absl::string_view host);
// "localhost", in any case.
bool IsLocalhost(absl::string_view host);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_CONFIG_OPTIONS_INTERNAL_H_
