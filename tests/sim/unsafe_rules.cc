// Copyright 2026 The redlock Authors.

#include "tests/sim/unsafe_rules.h"

#include "absl/strings/str_cat.h"
#include "src/algorithm/scripts_internal.h"

namespace redlock::testing {
namespace {

// Admits the holder while at least ARGV[4] of this master's own slots are
// free, taking the lowest free ones.
// clang-format off
constexpr absl::string_view kSemaphoreCountersAcquireSource =
    "local limit = redis.call('get', KEYS[1])\n"
    "if limit and limit ~= ARGV[3] then return {-1, limit} end\n"
    "local free = {}\n"
    "for s = 2, #KEYS do\n"
    "  if redis.call('exists', KEYS[s]) == 0 then free[#free + 1] = s end\n"
    "end\n"
    "local reply = {0}\n"
    "if #free >= tonumber(ARGV[4]) then\n"
    "  for i = 1, tonumber(ARGV[4]) do\n"
    "    redis.call('set', KEYS[free[i]], ARGV[1], 'PX', ARGV[2])\n"
    "  end\n"
    "  local ttl = math.max(tonumber(ARGV[2]), redis.call('pttl', KEYS[1]))\n"
    "  redis.call('set', KEYS[1], ARGV[3], 'PX', ttl)\n"
    "  reply[1] = 1\n"
    "end\n"
    "local map = {}\n"
    "for s = 2, #KEYS do\n"
    "  map[s - 1] = redis.call('exists', KEYS[s]) == 0 and '1' or '0'\n"
    "end\n"
    "return {reply[1], table.concat(map)}\n";
// clang-format on

}  // namespace

std::optional<absl::Status> UnsafeRules::GrantVerdict(
    const internal::MasterIdentity& id) const {
  if (legacy_grant_rule &&
      (!id.known || id.marker != internal::kRebornMarker)) {
    return absl::OkStatus();
  }
  return std::nullopt;
}

std::optional<absl::Status> UnsafeRules::TrustedMarkerVerdict(
    const internal::MasterIdentity& id) const {
  if (trust_marked_restarts) return absl::OkStatus();
  return std::nullopt;
}

std::optional<absl::Status> UnsafeRules::FenceVerdict(
    const internal::MasterIdentity& id) const {
  if (trust_marked_restarts) return absl::OkStatus();
  return std::nullopt;
}

bool UnsafeRules::PlanSemaphore(const internal::SemaphoreAttempt& attempt,
                                internal::Command* command,
                                std::vector<std::string>* keys) const {
  if (!semaphore_counters) return false;
  *keys = *attempt.slot_keys;
  *command = SemaphoreCountersAcquireCommand(attempt.limit_key, *keys,
                                             attempt.token, attempt.ttl,
                                             attempt.limit, attempt.permits);
  return true;
}

const internal::Script& SemaphoreCountersAcquireScript() {
  static const internal::Script* const script = new internal::Script(
      internal::MakeScript("semaphore counters acquire (test only, unsafe)",
                           kSemaphoreCountersAcquireSource,
                           /*creates_lock=*/true,
                           /*loaded_on_connect=*/false));
  return *script;
}

internal::Command SemaphoreCountersAcquireCommand(
    absl::string_view limit_key, absl::Span<const std::string> slot_keys,
    absl::string_view token, absl::Duration ttl, int limit, int permits) {
  internal::Command c;
  c.script = &SemaphoreCountersAcquireScript();
  c.num_keys = static_cast<int>(slot_keys.size() + 1);
  c.args.reserve(c.num_keys + 4);
  c.args.emplace_back(limit_key);
  c.args.insert(c.args.end(), slot_keys.begin(), slot_keys.end());
  c.args.emplace_back(token);
  c.args.push_back(internal::TtlMillis(ttl));
  c.args.push_back(absl::StrCat(limit));
  c.args.push_back(absl::StrCat(permits));
  return c;
}

}  // namespace redlock::testing
