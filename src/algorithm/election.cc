// Copyright 2026 The redlock Authors.

#include "src/algorithm/election.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/algorithm/scripts_internal.h"

namespace redlock::internal {
namespace {

// One Lua line per C++ line (scripts/mutants.txt finds them).
// clang-format off
constexpr absl::string_view kProclaimSource =
    "if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end\n"
    "local old = redis.call('get', KEYS[2])\n"
    "if old then\n"
    "  local e, r, t = string.match(old, '^(%d+) (%d+) (%S+) ')\n"
    "  if t == ARGV[1] and tonumber(r) >= tonumber(ARGV[3]) then return 1 end\n"
    "end\n"
    "redis.call('set', KEYS[2], ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[1] .. ' ' .. ARGV[4])\n"
    "redis.call('publish', KEYS[1], 'taken')\n"
    "return 1\n";
// clang-format on

// A positive decimal without sign or leading zero that fits 64 bits.
bool ParsePositive(absl::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20 || text[0] == '0') return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, out) && *out > 0;
}

absl::Status Malformed(absl::string_view what, absl::string_view text) {
  return absl::InternalError(absl::StrCat("a malformed election ", what, " \"",
                                          absl::CHexEscape(text.substr(0, 64)),
                                          "\""));
}

}  // namespace

std::string FormatLeaderRecord(const LeaderRecord& record) {
  return absl::StrCat(record.epoch, " ", record.revision, " ", record.token,
                      " ", record.value);
}

absl::StatusOr<LeaderRecord> ParseLeaderRecord(absl::string_view text) {
  LeaderRecord record;
  absl::string_view rest = text;
  auto field = [&rest](absl::string_view* out) {
    const size_t space = rest.find(' ');
    if (space == absl::string_view::npos) return false;
    *out = rest.substr(0, space);
    rest.remove_prefix(space + 1);
    return true;
  };
  absl::string_view epoch, revision, token;
  if (!field(&epoch) || !field(&revision) || !field(&token) || token.empty() ||
      !ParsePositive(epoch, &record.epoch) ||
      !ParsePositive(revision, &record.revision)) {
    return Malformed("record", text);
  }
  record.token = std::string(token);
  record.value = std::string(rest);
  return record;
}

absl::StatusOr<LeaderReading> ParseLeaderReading(const RedisReply& reply) {
  if (reply.is_error()) return ErrorReplyStatus(reply.str);
  if (!reply.is_array() || reply.elements.size() != 2) {
    return absl::InternalError("an election read's reply is not two values");
  }
  const RedisReply& lease = reply.elements[0];
  const RedisReply& stored = reply.elements[1];
  auto value_or_nil = [](const RedisReply& r) {
    return r.is_string() || r.type == RedisReply::Type::kNil;
  };
  if (!value_or_nil(lease) || !value_or_nil(stored)) {
    return absl::InternalError("an election read's reply holds a non-string");
  }
  LeaderReading reading;
  if (!lease.is_string()) return reading;  // kVacant.
  reading.kind = LeaderReading::Kind::kHeld;
  if (!stored.is_string()) return reading;
  absl::StatusOr<LeaderRecord> record = ParseLeaderRecord(stored.str);
  if (!record.ok()) return record.status();
  if (record->token != lease.str) return reading;
  reading.kind = LeaderReading::Kind::kLeading;
  reading.record = *std::move(record);
  return reading;
}

absl::StatusOr<Vote> LeaderReadVote(const RedisReply& reply) {
  absl::StatusOr<LeaderReading> reading = ParseLeaderReading(reply);
  if (!reading.ok()) return reading.status();
  return reading->kind == LeaderReading::Kind::kLeading ? Vote::kGranted
                                                        : Vote::kDenied;
}

const Script& ProclaimScript() {
  static const Script* const script =
      new Script(MakeScript("proclaim", kProclaimSource,
                            /*creates_lock=*/false,
                            /*loaded_on_connect=*/false));
  return *script;
}

Command ProclaimCommand(absl::string_view lease_key,
                        absl::string_view record_key,
                        const LeaderRecord& record) {
  const std::string keys[] = {std::string(lease_key), std::string(record_key)};
  return KeysCommand(ProclaimScript(), keys,
                     {record.token, absl::StrCat(record.epoch),
                      absl::StrCat(record.revision), record.value});
}

Command LeaderReadCommand(absl::string_view lease_key,
                          absl::string_view record_key) {
  Command c;
  c.args = {"MGET", std::string(lease_key), std::string(record_key)};
  return c;
}

}  // namespace redlock::internal
