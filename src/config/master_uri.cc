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

constexpr absl::string_view kScheme = "redis://";
constexpr absl::string_view kTlsScheme = "rediss://";
constexpr absl::string_view kUnixScheme = "unix://";
constexpr absl::string_view kQueryKeys[] = {"member", "db", "tls_name"};
constexpr absl::string_view kLocalhostAddress = "127.0.0.1";
constexpr int64_t kMaxPort = 65535;
// Redis takes any non-negative int for `databases`, so only the type bounds db.
constexpr int64_t kMaxDb = 2147483647;
constexpr size_t kMaxHostNameLength = 253;

// RFC 3986 unreserved characters: the only ones PercentEncode() leaves as-is.
bool IsUnreserved(char c) {
  return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// What a user name or password may hold without percent-encoding: RFC 3986
// userinfo, i.e. unreserved, sub-delims and ':'.
bool IsUserinfoChar(char c) {
  return IsUnreserved(c) ||
         absl::string_view("!$&'()*+,;=:").find(c) != absl::string_view::npos;
}

bool IsSchemeChar(char c) {
  return absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.';
}

// The URI as it may appear in an error message. The user info is split the
// way ParseMasterUri() splits it (up to the last '@', password after the
// first ':'), and a lone user name is hidden too, since it is often a
// password written without its colon. Works on malformed URIs as well: those
// are the ones that get reported.
std::string RedactUri(absl::string_view uri) {
  const size_t at = uri.rfind('@');
  if (at == absl::string_view::npos) return std::string(uri);
  size_t userinfo_start = uri.find("://");
  userinfo_start =
      userinfo_start == absl::string_view::npos || userinfo_start > at
          ? 0
          : userinfo_start + 3;
  const size_t colon = uri.substr(0, at).find(':', userinfo_start);
  const size_t secret_start =
      colon == absl::string_view::npos ? userinfo_start : colon + 1;
  return absl::StrCat(uri.substr(0, secret_start), "***", uri.substr(at));
}

absl::Status UriError(absl::string_view uri, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("master URI ", QuotedUri(uri), ": ", problem));
}

// A non-empty run of decimal digits no greater than `max`. Stricter than
// absl::SimpleAtoi, which also takes signs and surrounding spaces.
std::optional<int64_t> ParseDecimal(absl::string_view text, int64_t max) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > max) return std::nullopt;
  }
  return value;
}

int HexValue(char c) {
  if (absl::ascii_isdigit(c)) return c - '0';
  return absl::ascii_tolower(c) - 'a' + 10;
}

// Decodes the %XX escapes in a user name or password. The error names only
// the component (`what`), never its text, which may be a secret.
absl::StatusOr<std::string> PercentDecode(absl::string_view text,
                                          absl::string_view what) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (text.size() - i < 3 || !absl::ascii_isxdigit(text[i + 1]) ||
          !absl::ascii_isxdigit(text[i + 2])) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " has a bad percent escape; write %XX with two hex digits"));
      }
      decoded.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 +
                                          HexValue(text[i + 2])));
      i += 2;
    } else if (IsUserinfoChar(c)) {
      decoded.push_back(c);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          what,
          " has a character that must be percent-encoded (only letters, "
          "digits and -._~!$&'()*+,;=: may appear as they are)"));
    }
  }
  return decoded;
}

std::string PercentEncode(absl::string_view text) {
  std::string encoded;
  for (char c : text) {
    if (IsUnreserved(c)) {
      encoded.push_back(c);
    } else {
      absl::StrAppendFormat(&encoded, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return encoded;
}

// Checks a host written without brackets: a dotted-quad IPv4 address or a
// host name. Returns the problem, or an empty string.
std::string HostNameProblem(absl::string_view host) {
  if (host.empty()) return "host is empty";
  const std::string quoted = absl::StrCat("\"", absl::CHexEscape(host), "\"");
  // No top-level domain is all digits, so this can only be a mistyped IPv4
  // address; better said now than as a failed lookup later.
  if (host.find_first_not_of("0123456789.") == absl::string_view::npos) {
    if (IsIpv4(host)) return "";
    return absl::StrCat("host ", quoted, " is not a valid IPv4 address");
  }
  if (host.size() > kMaxHostNameLength) {
    return absl::StrCat("host name is longer than ", kMaxHostNameLength,
                        " characters");
  }
  for (char c : host) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-') {
      return absl::StrCat(
          "host ", quoted,
          " is not a host name (letters, digits, '.' and '-'), an IPv4 "
          "address or a bracketed IPv6 address");
    }
  }
  // A trailing dot (fully qualified) is fine; an empty label is a typo.
  absl::string_view labels = host;
  absl::ConsumeSuffix(&labels, ".");
  if (labels.empty() || absl::StartsWith(labels, ".") ||
      absl::StrContains(labels, "..") || absl::EndsWith(labels, ".")) {
    return absl::StrCat("host ", quoted, " has an empty label");
  }
  return "";
}

// Where the query part of a URI's `rest` begins: the first '?' after the
// user info (a password may hold '?' and even "?member="; an '@' in a member
// name must be written %40) followed by a known parameter name and '=', or
// npos.
size_t QueryStart(absl::string_view rest) {
  const size_t at = rest.rfind('@');
  for (size_t q = rest.find('?', at == absl::string_view::npos ? 0 : at);
       q != absl::string_view::npos; q = rest.find('?', q + 1)) {
    for (absl::string_view key : kQueryKeys) {
      if (absl::StartsWith(rest.substr(q + 1), absl::StrCat(key, "="))) {
        return q;
      }
    }
  }
  return absl::string_view::npos;
}

// Query parameters: member=<name>&db=<n>&tls_name=<name>.
absl::Status ParseQuery(absl::string_view query, MasterAddress& address,
                        std::optional<int64_t>* db) {
  std::vector<std::string> seen;
  for (absl::string_view param : absl::StrSplit(query, '&')) {
    const size_t eq = param.find('=');
    const absl::string_view key = param.substr(0, eq);
    if (std::find(std::begin(kQueryKeys), std::end(kQueryKeys), key) ==
            std::end(kQueryKeys) ||
        eq == absl::string_view::npos) {
      // Named only if it looks like a parameter's name: anything else may
      // be a piece of a password.
      const bool plain_name = !key.empty() && key.size() <= 16 &&
                              std::all_of(key.begin(), key.end(), [](char c) {
                                return absl::ascii_isalnum(c) || c == '_';
                              });
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown query parameter",
          plain_name ? absl::StrCat(" \"", key, "\"") : std::string(),
          "; the parameters are member=, db= and tls_name="));
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", key, "= appears twice"));
    }
    seen.emplace_back(key);
    absl::StatusOr<std::string> value =
        PercentDecode(param.substr(eq + 1), std::string(key));
    if (!value.ok()) return value.status();
    if (key == "member") {
      if (absl::Status s = internal::CheckMemberName(*value); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("?member=: ", s.message()));
      }
      address.member = *std::move(value);
    } else if (key == "db") {
      *db = ParseDecimal(*value, kMaxDb);
      if (!db->has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("db must be a decimal number 0-", kMaxDb));
      }
    } else {
      if (address.transport == MasterAddress::Transport::kUnix) {
        return absl::InvalidArgumentError(
            "tls_name= does not apply to a Unix socket");
      }
      if (std::string problem = HostNameProblem(*value);
          !problem.empty() && !IsIpv6(*value)) {
        return absl::InvalidArgumentError(absl::StrCat("tls_name=: ", problem));
      }
      address.tls_name = *std::move(value);
    }
  }
  return absl::OkStatus();
}

// ParseMasterUri() after the scheme, with errors that do not name the URI
// yet; `rest` is everything after "redis://", "rediss://" or "unix://".
// ParseAfterScheme()'s parts. The user info (before '@'): user:password@
// or :password@.
absl::Status ParseUserinfo(absl::string_view userinfo, MasterAddress& address) {
  const size_t colon = userinfo.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "user info has no password; a user needs one: write "
        "user:password@, or :password@ for a password alone");
  }
  absl::StatusOr<std::string> user =
      PercentDecode(userinfo.substr(0, colon), "user");
  if (!user.ok()) return user.status();
  absl::StatusOr<std::string> password =
      PercentDecode(userinfo.substr(colon + 1), "password");
  if (!password.ok()) return password.status();
  // "Empty password" means "no AUTH" in MasterAddress; an explicit empty
  // one is more likely a mistake than a wish to skip AUTH.
  if (password->empty()) {
    return absl::InvalidArgumentError(
        "password is empty; leave out the user info to connect without "
        "AUTH");
  }
  address.user = *std::move(user);
  address.password = *std::move(password);
  address.has_password = true;
  return absl::OkStatus();
}

// A Unix socket's path (unix://), percent-decoded segment by segment.
absl::Status ParseUnixPath(absl::string_view rest,
                           std::optional<int64_t> query_db,
                           MasterAddress& address) {
  if (rest.find('#') != absl::string_view::npos ||
      rest.find('?') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "a Unix socket path with '?' or '#' must percent-encode it; the "
        "query parameters are member=, db= and tls_name=");
  }
  if (!absl::StartsWith(rest, "/") || rest.size() < 2) {
    return absl::InvalidArgumentError(
        "a Unix socket needs an absolute path: unix:///path/to/redis.sock");
  }
  // Decoded segment by segment: '/' separates them as written.
  std::vector<std::string> segments;
  for (absl::string_view segment : absl::StrSplit(rest, '/')) {
    absl::StatusOr<std::string> decoded = PercentDecode(segment, "path");
    if (!decoded.ok()) return decoded.status();
    if (decoded->find('/') != std::string::npos) {
      return absl::InvalidArgumentError("path holds an encoded '/' (%2F)");
    }
    segments.push_back(*std::move(decoded));
  }
  absl::StatusOr<std::string> path = absl::StrJoin(segments, "/");
  for (char c : *path) {
    if (absl::ascii_iscntrl(c)) {
      return absl::InvalidArgumentError("path contains a control character");
    }
  }
  if (path->size() > 107) {
    return absl::InvalidArgumentError(
        "a Unix socket path may be at most 107 bytes");
  }
  address.path = *std::move(path);
  address.host.clear();
  address.port = 0;
  if (query_db.has_value()) address.db = static_cast<int>(*query_db);
  if (address.member.empty()) {
    if (absl::Status s = internal::CheckMemberName(address.Name()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the path cannot name the master in the deployment's membership (",
          s.message(), "): give it a name with ?member=<name>"));
    }
  }
  return absl::OkStatus();
}

// The host (a name, an IPv4 address, or an IPv6 address in brackets) and
// the port's text, if any, of `rest` (host[:port]).
absl::Status ParseHost(absl::string_view rest, absl::string_view* host,
                       std::optional<absl::string_view>* port_text) {
  if (absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("IPv6 address has no closing ']'");
    }
    *host = rest.substr(0, close);
    rest.remove_prefix(close + 1);
    if (!IsIpv6(*host)) {
      return absl::InvalidArgumentError(
          absl::StrCat("host \"[", absl::CHexEscape(*host),
                       "]\" is not a valid IPv6 address"));
    }
    if (!rest.empty()) {
      if (!absl::ConsumePrefix(&rest, ":")) {
        return absl::InvalidArgumentError(
            "unexpected text after the IPv6 address; expected ':port'");
      }
      *port_text = rest;
    }
  } else {
    const size_t colon = rest.find(':');
    *host = rest.substr(0, colon);
    if (colon != absl::string_view::npos) {
      *port_text = rest.substr(colon + 1);
      if ((*port_text)->find(':') != absl::string_view::npos) {
        return absl::InvalidArgumentError(
            "an IPv6 address must be in brackets, e.g. redis://[::1]:6379");
      }
    }
    if (std::string problem = HostNameProblem(*host); !problem.empty()) {
      return absl::InvalidArgumentError(problem);
    }
  }
  return absl::OkStatus();
}

// A TCP or TLS master's host, port and /db.
absl::Status ParseHostPort(absl::string_view rest,
                           std::optional<int64_t> query_db,
                           MasterAddress& address) {
  if (rest.find('#') != absl::string_view::npos) {
    return absl::InvalidArgumentError("fragments ('#') are not supported");
  }
  if (rest.find('?') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "unknown query; the parameters are ?member=<name>, db=<n> and "
        "tls_name=<name>, '&'-separated");
  }
  for (char c : rest) {
    if (absl::ascii_isspace(c) || absl::ascii_iscntrl(c)) {
      return absl::InvalidArgumentError(
          "contains a space or control character");
    }
  }

  std::optional<absl::string_view> db_text;
  if (const size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    db_text = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }

  absl::string_view host;
  std::optional<absl::string_view> port_text;
  if (absl::Status s = ParseHost(rest, &host, &port_text); !s.ok()) return s;
  address.host = std::string(host);

  if (port_text.has_value()) {
    const std::optional<int64_t> port = ParseDecimal(*port_text, kMaxPort);
    if (!port.has_value() || *port == 0) {
      return absl::InvalidArgumentError("port must be 1-65535");
    }
    address.port = static_cast<int>(*port);
  }
  if (db_text.has_value() && query_db.has_value()) {
    return absl::InvalidArgumentError("db is given twice (/db and ?db=)");
  }
  if (query_db.has_value()) address.db = static_cast<int>(*query_db);
  if (db_text.has_value()) {
    const std::optional<int64_t> db = ParseDecimal(*db_text, kMaxDb);
    if (!db.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("db must be a decimal number 0-", kMaxDb));
    }
    address.db = static_cast<int>(*db);
  }
  return absl::OkStatus();
}

absl::Status ParseAfterScheme(absl::string_view rest, MasterAddress& address) {
  // Query parameters, last, after the user info.
  std::optional<int64_t> query_db;
  if (const size_t q = QueryStart(rest); q != absl::string_view::npos) {
    if (absl::Status s = ParseQuery(rest.substr(q + 1), address, &query_db);
        !s.ok()) {
      return s;
    }
    rest = rest.substr(0, q);
  }
  // '@' cannot appear after the user info, so the last one ends it, and an
  // unencoded '@' in a password is reported as such rather than as a strange
  // host.
  const size_t at = rest.rfind('@');
  if (at != absl::string_view::npos) {
    if (absl::Status s = ParseUserinfo(rest.substr(0, at), address); !s.ok()) {
      return s;
    }
    rest.remove_prefix(at + 1);
  }
  if (address.transport == MasterAddress::Transport::kUnix) {
    return ParseUnixPath(rest, query_db, address);
  }
  return ParseHostPort(rest, query_db, address);
}

}  // namespace

std::string MasterAddress::Name() const {
  std::string name;
  if (transport == Transport::kUnix) {
    name = absl::StrCat("unix:", path);
  } else {
    name = host.find(':') == std::string::npos
               ? absl::StrCat(host, ":", port)
               : absl::StrCat("[", host, "]:", port);
  }
  if (db != 0) absl::StrAppend(&name, "/", db);
  return name;
}

std::string MasterAddress::TlsName() const {
  return tls_name.empty() ? host : tls_name;
}

std::string MasterAddress::Uri() const {
  std::string uri(transport == Transport::kTls    ? kTlsScheme
                  : transport == Transport::kUnix ? kUnixScheme
                                                  : kScheme);
  if (has_password) {
    absl::StrAppend(&uri, PercentEncode(user), ":", PercentEncode(password),
                    "@");
  }
  std::vector<std::string> query;
  if (transport == Transport::kUnix) {
    absl::StrAppend(&uri,
                    absl::StrReplaceAll(PercentEncode(path), {{"%2F", "/"}}));
    if (db != 0) query.push_back(absl::StrCat("db=", db));
  } else {
    absl::StrAppend(&uri, Name());
  }
  if (!member.empty()) {
    query.push_back(absl::StrCat("member=", PercentEncode(member)));
  }
  if (!tls_name.empty()) {
    query.push_back(absl::StrCat("tls_name=", PercentEncode(tls_name)));
  }
  if (!query.empty()) absl::StrAppend(&uri, "?", absl::StrJoin(query, "&"));
  return uri;
}

std::string MasterAddress::MemberName() const {
  return member.empty() ? Name() : member;
}

absl::StatusOr<MasterAddress> ParseMasterUri(absl::string_view uri) {
  if (uri.empty()) return UriError(uri, "is empty");
  absl::string_view rest = uri;
  MasterAddress address;
  if (absl::ConsumePrefix(&rest, kScheme)) {
    address.transport = MasterAddress::Transport::kTcp;
  } else if (absl::ConsumePrefix(&rest, kTlsScheme)) {
    address.transport = MasterAddress::Transport::kTls;
    address.port = 6379;
  } else if (absl::ConsumePrefix(&rest, kUnixScheme)) {
    address.transport = MasterAddress::Transport::kUnix;
  } else {
    const size_t scheme_end = uri.find("://");
    const absl::string_view scheme = uri.substr(0, scheme_end);
    // Only quote what really is a scheme: anything else may hold a password.
    if (scheme_end != absl::string_view::npos && !scheme.empty() &&
        std::all_of(scheme.begin(), scheme.end(), IsSchemeChar)) {
      return UriError(uri, absl::StrCat("scheme \"", scheme,
                                        "://\" is not supported; use redis://, "
                                        "rediss:// (TLS) or unix://"));
    }
    return UriError(uri, "has no redis://, rediss:// or unix:// scheme");
  }
  if (absl::Status status = ParseAfterScheme(rest, address); !status.ok()) {
    return UriError(uri, status.message());
  }
  return address;
}

namespace internal {

std::string QuotedUri(absl::string_view uri) {
  return absl::StrCat("\"", absl::CHexEscape(RedactUri(uri)), "\"");
}

bool IsIpv4(absl::string_view host) {
  in_addr address;
  return inet_pton(AF_INET, std::string(host).c_str(), &address) == 1;
}

bool IsIpv6(absl::string_view host) {
  in6_addr address;
  return inet_pton(AF_INET6, std::string(host).c_str(), &address) == 1;
}

bool IsLocalhost(absl::string_view host) {
  return absl::EqualsIgnoreCase(host, "localhost");
}

}  // namespace internal
}  // namespace redlock
