// Copyright 2026 The redlock Authors.

#include "src/algorithm/vote.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {
namespace {

absl::Status Unexpected(absl::string_view what, const RedisReply& reply) {
  std::string shown;
  switch (reply.type) {
    case RedisReply::Type::kStatus:
      shown = absl::StrCat("status \"", reply.str, "\"");
      break;
    case RedisReply::Type::kString:
      shown = absl::StrCat("string \"", reply.str.substr(0, 64), "\"");
      break;
    case RedisReply::Type::kInteger:
      shown = absl::StrCat("integer ", reply.integer);
      break;
    case RedisReply::Type::kNil:
      shown = "nil";
      break;
    case RedisReply::Type::kArray:
      shown = absl::StrCat("array of ", reply.elements.size());
      break;
    case RedisReply::Type::kError:
      shown = reply.str;
      break;
  }
  return absl::InternalError(
      absl::StrCat("unexpected reply to ", what, ": ", shown));
}

}  // namespace

absl::Status ErrorReplyStatus(absl::string_view message) {
  // The first word of a Redis error is its code.
  absl::string_view code = message.substr(0, message.find(' '));
  if (code == "OOM") return absl::ResourceExhaustedError(message);
  if (code == "READONLY" || code == "MASTERDOWN" || code == "LOADING" ||
      code == "BUSY" || code == "MISCONF" || code == "NOREPLICAS") {
    return absl::FailedPreconditionError(message);
  }
  if (code == "NOAUTH" || code == "WRONGPASS") {
    return absl::UnauthenticatedError(message);
  }
  if (code == "NOPERM") return absl::PermissionDeniedError(message);
  if (code == "NOSCRIPT") return absl::NotFoundError(message);
  return absl::InternalError(message);
}

bool IsNoScript(const RedisReply& reply) {
  return reply.type == RedisReply::Type::kError &&
         absl::StartsWith(reply.str, "NOSCRIPT");
}

absl::StatusOr<Vote> AcquireVote(const RedisReply& reply) {
  switch (reply.type) {
    case RedisReply::Type::kStatus:
      if (reply.str == "OK") return Vote::kGranted;
      break;
    case RedisReply::Type::kNil:
      return Vote::kDenied;
    case RedisReply::Type::kError:
      return ErrorReplyStatus(reply.str);
    default:
      break;
  }
  return Unexpected("SET NX", reply);
}

absl::StatusOr<Vote> FencedAcquireVote(const RedisReply& reply) {
  if (reply.type == RedisReply::Type::kError) {
    return ErrorReplyStatus(reply.str);
  }
  // {set, a counter per resource, marker}: at least one resource.
  if (reply.type == RedisReply::Type::kArray && reply.elements.size() >= 3 &&
      reply.elements[0].type == RedisReply::Type::kInteger) {
    if (reply.elements[0].integer == 1) return Vote::kGranted;
    if (reply.elements[0].integer == 0) return Vote::kDenied;
  }
  return Unexpected("fenced acquire", reply);
}

absl::StatusOr<SemaphoreReply> ParseSemaphoreReply(const RedisReply& reply,
                                                   int limit) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.empty() ||
      reply.elements[0].type != RedisReply::Type::kInteger) {
    return Unexpected("semaphore acquire", reply);
  }
  SemaphoreReply parsed;
  const int64_t head = reply.elements[0].integer;
  if (head == -1 && reply.elements.size() == 2 &&
      reply.elements[1].type == RedisReply::Type::kString) {
    parsed.kind = SemaphoreReply::Kind::kLimitMismatch;
    parsed.stored_limit = reply.elements[1].str.substr(0, 32);
    return parsed;
  }
  // {1 or 0, the free-slot map}: one '0' or '1' per slot, `limit` of them
  // (any number when the limit is not known).
  if ((head != 0 && head != 1) || reply.elements.size() != 2 ||
      reply.elements[1].type != RedisReply::Type::kString) {
    return Unexpected("semaphore acquire", reply);
  }
  const std::string& map = reply.elements[1].str;
  if (limit != kUnknownLimit && map.size() != static_cast<size_t>(limit)) {
    return Unexpected("semaphore acquire", reply);
  }
  parsed.kind = head == 1 ? SemaphoreReply::Kind::kGranted
                          : SemaphoreReply::Kind::kDenied;
  for (size_t slot = 0; slot < map.size(); ++slot) {
    if (map[slot] == '1') {
      parsed.free_slots.push_back(static_cast<int>(slot));
    } else if (map[slot] != '0') {
      return Unexpected("semaphore acquire", reply);
    }
  }
  return parsed;
}

absl::StatusOr<Vote> SemaphoreAcquireVote(const RedisReply& reply) {
  if (reply.type == RedisReply::Type::kError) {
    return ErrorReplyStatus(reply.str);
  }
  // The limit is not known here; the map is checked against it where it is
  // used (ParseSemaphoreReply with the limit).
  absl::StatusOr<SemaphoreReply> parsed =
      ParseSemaphoreReply(reply, kUnknownLimit);
  if (!parsed.ok()) return parsed.status();
  switch (parsed->kind) {
    case SemaphoreReply::Kind::kGranted:
      return Vote::kGranted;
    case SemaphoreReply::Kind::kDenied:
      return Vote::kDenied;
    case SemaphoreReply::Kind::kLimitMismatch:
      break;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("semaphore limit mismatch: this master has limit ",
                   parsed->stored_limit));
}

absl::StatusOr<Vote> ReaderAcquireVote(const RedisReply& reply) {
  if (reply.type == RedisReply::Type::kError) {
    return ErrorReplyStatus(reply.str);
  }
  if (reply.type == RedisReply::Type::kArray && !reply.elements.empty() &&
      reply.elements[0].type == RedisReply::Type::kInteger) {
    if (reply.elements[0].integer == 1 && reply.elements.size() == 1) {
      return Vote::kGranted;
    }
    if (reply.elements[0].integer == 0 && reply.elements.size() == 2 &&
        reply.elements[1].type == RedisReply::Type::kString) {
      return Vote::kDenied;
    }
  }
  return Unexpected("reader acquire", reply);
}

std::string ReaderRefusal(const RedisReply& reply) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != 2 ||
      reply.elements[0].type != RedisReply::Type::kInteger ||
      reply.elements[0].integer != 0 ||
      reply.elements[1].type != RedisReply::Type::kString) {
    return "";
  }
  return reply.elements[1].str.substr(0, 32);
}

absl::StatusOr<FenceRead> ParseFenceRead(const RedisReply& reply) {
  if (!FencedAcquireVote(reply).ok()) {
    return Unexpected("fenced acquire", reply);
  }
  const RedisReply& marker = reply.elements.back();
  if (marker.type != RedisReply::Type::kString) {
    return Unexpected("fenced acquire", reply);
  }
  FenceRead read;
  int64_t marker_time_us = 0;
  ParseMarker(marker.str, &read.marker, &marker_time_us);
  // One counter per resource: the read is the highest, and present only if
  // every one is.
  read.counter_present = true;
  for (size_t i = 1; i + 1 < reply.elements.size(); ++i) {
    const RedisReply& counter = reply.elements[i];
    if (counter.type != RedisReply::Type::kString) {
      return Unexpected("fenced acquire", reply);
    }
    if (counter.str.empty()) {
      read.counter_present = false;
      continue;
    }
    // Only what INCR stores: plain decimal digits (SimpleAtoi alone would
    // also take " 42" and "+42").
    uint64_t value = 0;
    const bool digits =
        std::all_of(counter.str.begin(), counter.str.end(),
                    [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || !absl::SimpleAtoi(counter.str, &value)) {
      return absl::InternalError(
          absl::StrCat("fencing counter is not a number: \"",
                       counter.str.substr(0, 32), "\""));
    }
    read.counter = std::max(read.counter, value);
  }
  return read;
}

int CountTrustedFenceReads(
    const std::vector<std::optional<RedisReply>>& replies,
    const std::function<absl::Status(int)>& veto,
    const std::function<absl::string_view(int)>& domain, uint64_t* highest,
    std::string* untrusted, std::vector<bool>* trusted_masters) {
  int trusted = 0;
  if (trusted_masters != nullptr)
    trusted_masters->assign(replies.size(), false);
  std::vector<int> counted;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i].has_value()) continue;
    absl::StatusOr<FenceRead> read = ParseFenceRead(*replies[i]);
    if (!read.ok()) continue;
    const int master = static_cast<int>(i);
    absl::Status why = veto(master);
    const absl::string_view d = domain(master);
    for (int j : counted) {
      if (why.ok() && !d.empty() && domain(j) == d) {
        why = absl::FailedPreconditionError(
            absl::StrCat("same server as master ", j + 1));
      }
    }
    if (why.ok() && read->marker != kTrustedMarker &&
        !(read->marker == kRebornMarker && read->counter_present)) {
      why = absl::FailedPreconditionError(
          read->marker.empty() ? "no marker"
                               : absl::StrCat(read->marker, ", no counter"));
    }
    if (why.ok()) {
      ++trusted;
      counted.push_back(master);
      if (trusted_masters != nullptr) (*trusted_masters)[i] = true;
      if (highest != nullptr) *highest = std::max(*highest, read->counter);
    } else if (untrusted != nullptr) {
      absl::StrAppend(untrusted, untrusted->empty() ? "" : ", ", "master ",
                      i + 1, " (", why.message(), ")");
    }
  }
  return trusted;
}

absl::StatusOr<std::vector<RedisReply>> SplitBatchExtendReply(RedisReply reply,
                                                              size_t locks) {
  if (reply.type == RedisReply::Type::kError) {
    return ErrorReplyStatus(reply.str);
  }
  if (reply.type != RedisReply::Type::kArray ||
      reply.elements.size() != locks) {
    return absl::InternalError(
        absl::StrCat("unexpected reply to batch extend: ",
                     reply.type == RedisReply::Type::kArray
                         ? absl::StrCat(reply.elements.size(), " entries for ",
                                        locks, " locks")
                         : std::string("not an array")));
  }
  for (RedisReply& entry : reply.elements) {
    if (entry.type == RedisReply::Type::kInteger && entry.integer == -1) {
      entry = RedisReply::Error(
          "SEMLIMIT this master's limit key holds another limit than the "
          "holder's");
    }
  }
  return std::move(reply.elements);
}

absl::StatusOr<Vote> ScriptVote(const RedisReply& reply) {
  switch (reply.type) {
    case RedisReply::Type::kInteger:
      if (reply.integer == 1) return Vote::kGranted;
      if (reply.integer == 0) return Vote::kDenied;
      break;
    case RedisReply::Type::kError:
      return ErrorReplyStatus(reply.str);
    default:
      break;
  }
  return Unexpected("token-checked script", reply);
}

}  // namespace redlock::internal
