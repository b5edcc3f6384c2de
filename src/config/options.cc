// Copyright 2026 The redlock Authors.

#include "redlock/options.h"

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
#include "src/algorithm/membership.h"
#include "src/config/options_internal.h"

namespace redlock {
namespace {

constexpr absl::string_view kScheme = "redis://";
constexpr absl::string_view kTlsScheme = "rediss://";
constexpr absl::string_view kUnixScheme = "unix://";
constexpr absl::string_view kQueryKeys[] = {"member", "db", "tls_name"};
constexpr absl::string_view kLocalhostAddress = "127.0.0.1";
constexpr int64_t kMaxPort = 65535;
// Redis takes any non-negative int for `databases`, so only the type bounds db.
constexpr int64_t kMaxDb = 2147483647;
constexpr size_t kMaxHostNameLength = 253;
constexpr size_t kMaxKeyPrefixBytes = 1024;
constexpr absl::Duration kMaxMaxTtl = absl::Hours(24);

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

std::string QuotedUri(absl::string_view uri) {
  return absl::StrCat("\"", absl::CHexEscape(RedactUri(uri)), "\"");
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
    const absl::string_view userinfo = rest.substr(0, at);
    rest.remove_prefix(at + 1);
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
  }

  if (address.transport == MasterAddress::Transport::kUnix) {
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
  if (absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("IPv6 address has no closing ']'");
    }
    host = rest.substr(0, close);
    rest.remove_prefix(close + 1);
    if (!IsIpv6(host)) {
      return absl::InvalidArgumentError(
          absl::StrCat("host \"[", absl::CHexEscape(host),
                       "]\" is not a valid IPv6 address"));
    }
    if (!rest.empty()) {
      if (!absl::ConsumePrefix(&rest, ":")) {
        return absl::InvalidArgumentError(
            "unexpected text after the IPv6 address; expected ':port'");
      }
      port_text = rest;
    }
  } else {
    const size_t colon = rest.find(':');
    host = rest.substr(0, colon);
    if (colon != absl::string_view::npos) {
      port_text = rest.substr(colon + 1);
      if (port_text->find(':') != absl::string_view::npos) {
        return absl::InvalidArgumentError(
            "an IPv6 address must be in brackets, e.g. redis://[::1]:6379");
      }
    }
    if (std::string problem = HostNameProblem(host); !problem.empty()) {
      return absl::InvalidArgumentError(problem);
    }
  }
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

bool IsFinite(absl::Duration d) {
  return d != absl::InfiniteDuration() && d != -absl::InfiniteDuration();
}

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", problem));
}

// The checks shared by every duration field; `positive` excludes zero.
absl::Status CheckDuration(absl::string_view field, absl::Duration value,
                           bool positive) {
  if (!IsFinite(value)) return FieldError(field, "must be finite");
  if (positive ? value <= absl::ZeroDuration() : value < absl::ZeroDuration()) {
    return FieldError(field,
                      absl::StrCat(positive ? "must be positive, got "
                                            : "must not be negative, got ",
                                   absl::FormatDuration(value)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Quorum> ParseQuorum(absl::string_view text) {
  if (text == "majority") return Quorum::kMajority;
  if (text == "unanimous") return Quorum::kUnanimous;
  return absl::InvalidArgumentError(
      absl::StrCat("quorum \"", absl::CHexEscape(text),
                   "\" is not valid; expected \"majority\" or \"unanimous\""));
}

absl::string_view QuorumName(Quorum quorum) {
  switch (quorum) {
    case Quorum::kMajority:
      return "majority";
    case Quorum::kUnanimous:
      return "unanimous";
  }
  return "unknown";
}

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

absl::Status ValidateOptions(const Options& options) {
  if (absl::StatusOr<std::vector<MasterAddress>> masters =
          internal::ParseMasters(options, /*require_numeric_hosts=*/false);
      !masters.ok()) {
    return masters.status();
  }

  if (absl::Status s = CheckDuration("default_ttl", options.default_ttl,
                                     /*positive=*/true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckDuration("max_ttl", options.max_ttl, /*positive=*/true);
      !s.ok()) {
    return s;
  }
  if (options.max_ttl > kMaxMaxTtl) {
    return FieldError("max_ttl",
                      absl::StrCat("must be at most 24h, got ",
                                   absl::FormatDuration(options.max_ttl)));
  }
  if (options.default_ttl > options.max_ttl) {
    return FieldError(
        "default_ttl",
        absl::StrCat("(", absl::FormatDuration(options.default_ttl),
                     ") must not exceed max_ttl (",
                     absl::FormatDuration(options.max_ttl), ")"));
  }

  // Written so that NaN fails too.
  if (!(options.drift_factor >= 0 && options.drift_factor < 0.5)) {
    return FieldError("drift_factor", absl::StrCat("must be in [0, 0.5), got ",
                                                   options.drift_factor));
  }
  if (absl::Status s = CheckDuration("min_validity", options.min_validity,
                                     /*positive=*/false);
      !s.ok()) {
    return s;
  }

  // A master that may take as long as the TTL to answer could grant a lock
  // that has already expired by the time the grant is counted.
  struct Timeout {
    absl::string_view field;
    absl::Duration value;
  };
  for (const Timeout& timeout :
       {Timeout{"request_timeout", options.request_timeout},
        Timeout{"connect_timeout", options.connect_timeout}}) {
    if (absl::Status s = CheckDuration(timeout.field, timeout.value,
                                       /*positive=*/true);
        !s.ok()) {
      return s;
    }
    if (timeout.value >= options.default_ttl) {
      return FieldError(
          timeout.field,
          absl::StrCat("(", absl::FormatDuration(timeout.value),
                       ") must be shorter than default_ttl (",
                       absl::FormatDuration(options.default_ttl),
                       "): timeouts must be shorter than the TTL"));
    }
  }
  if (absl::Status s =
          CheckDuration("stalled_connection_timeout",
                        options.stalled_connection_timeout, /*positive=*/true);
      !s.ok()) {
    return s;
  }
  if (options.stalled_connection_timeout < options.request_timeout) {
    return FieldError(
        "stalled_connection_timeout",
        absl::StrCat("(",
                     absl::FormatDuration(options.stalled_connection_timeout),
                     ") must be at least request_timeout (",
                     absl::FormatDuration(options.request_timeout), ")"));
  }

  if (options.quorum != Quorum::kMajority &&
      options.quorum != Quorum::kUnanimous) {
    return FieldError("quorum", "is not a known Quorum value");
  }
  if (options.key_prefix.size() > kMaxKeyPrefixBytes) {
    return FieldError(
        "key_prefix",
        absl::StrCat("is ", options.key_prefix.size(), " bytes; at most ",
                     kMaxKeyPrefixBytes, " are allowed"));
  }

  if (absl::Status s = CheckDuration("retry.min_delay", options.retry.min_delay,
                                     /*positive=*/false);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDuration("retry.max_delay", options.retry.max_delay,
                                     /*positive=*/false);
      !s.ok()) {
    return s;
  }
  if (options.retry.max_delay < options.retry.min_delay) {
    return FieldError(
        "retry.max_delay",
        absl::StrCat("(", absl::FormatDuration(options.retry.max_delay),
                     ") must be at least retry.min_delay (",
                     absl::FormatDuration(options.retry.min_delay), ")"));
  }
  if (absl::Status s =
          CheckDuration("retry.wake_jitter", options.retry.wake_jitter,
                        /*positive=*/false);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckDuration("retry.successor_grace", options.retry.successor_grace,
                        /*positive=*/false);
      !s.ok()) {
    return s;
  }
  if (options.retry.max_attempts < 0) {
    return FieldError("retry.max_attempts",
                      absl::StrCat("must not be negative (0 means no limit), "
                                   "got ",
                                   options.retry.max_attempts));
  }

  if (absl::Status s = CheckDuration(
          "reconnect.initial", options.reconnect.initial, /*positive=*/true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDuration("reconnect.max", options.reconnect.max,
                                     /*positive=*/true);
      !s.ok()) {
    return s;
  }
  if (options.reconnect.max < options.reconnect.initial) {
    return FieldError(
        "reconnect.max",
        absl::StrCat("(", absl::FormatDuration(options.reconnect.max),
                     ") must be at least reconnect.initial (",
                     absl::FormatDuration(options.reconnect.initial), ")"));
  }
  if (!(options.reconnect.multiplier >= 1) ||
      !std::isfinite(options.reconnect.multiplier)) {
    return FieldError("reconnect.multiplier",
                      absl::StrCat("must be finite and at least 1, got ",
                                   options.reconnect.multiplier));
  }
  return absl::OkStatus();
}

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
