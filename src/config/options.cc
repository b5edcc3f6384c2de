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

constexpr size_t kMaxKeyPrefixBytes = 1024;
constexpr absl::Duration kMaxMaxTtl = absl::Hours(24);

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

// ValidateOptions()'s parts. The TTLs, drift and minimum validity.
absl::Status ValidateTtls(const Options& options) {
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
  return absl::OkStatus();
}

// The timeouts: each shorter than the TTL.
absl::Status ValidateTimeouts(const Options& options) {
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
  return absl::OkStatus();
}

// The quorum rule and the key prefix.
absl::Status ValidateQuorumAndPrefix(const Options& options) {
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
  return absl::OkStatus();
}

// The retry policy.
absl::Status ValidateRetry(const Options& options) {
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
  return absl::OkStatus();
}

// The reconnect backoff.
absl::Status ValidateReconnect(const Options& options) {
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

absl::Status ValidateOptions(const Options& options) {
  if (absl::StatusOr<std::vector<MasterAddress>> masters =
          internal::ParseMasters(options, /*require_numeric_hosts=*/false);
      !masters.ok()) {
    return masters.status();
  }

  for (absl::Status (*check)(const Options&) :
       {&ValidateTtls, &ValidateTimeouts, &ValidateQuorumAndPrefix,
        &ValidateRetry, &ValidateReconnect}) {
    if (absl::Status s = check(options); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace redlock
