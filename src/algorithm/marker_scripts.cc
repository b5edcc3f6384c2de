// Copyright 2026 The redlock Authors.
//
// The deployment marker's scripts and commands: the marker written with its
// membership record, the reconfiguration's compare-and-set, and the marker's
// parser.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/scripts_internal.h"

namespace redlock::internal {
namespace {

// One Lua line per C++ line (scripts/mutants.txt finds them).
// clang-format off
// MarkerScript(). KEYS: the deployment marker. ARGV: state, run_id,
// max_ttl in ms, the membership suffix (MarkerSuffix(), or empty).
// Writes "<state>:<TIME>:<run_id>:<max_ttl><suffix>;since=<TIME>" (TIME the
// server's, in microseconds; ";since=" only with a suffix) unless a marker
// is there; a marker from before membership records (no ';') gets the
// suffix appended, its own part kept. Returns the marker now stored (ours or
// the one that was there).
constexpr absl::string_view kMarkerSource =
    "local current = redis.call('get', KEYS[1])\n"
    "local now = redis.call('time')\n"
    "local stamp = now[1] .. string.sub('000000' .. now[2], -6)\n"
    "local suffix = ''\n"
    "if ARGV[4] ~= '' then suffix = ARGV[4] .. ';since=' .. stamp end\n"
    "if current then\n"
    "  if suffix == '' or string.find(current, ';', 1, true) then\n"
    "    return current\n"
    "  end\n"
    "  current = current .. suffix\n"
    "  redis.call('set', KEYS[1], current)\n"
    "  return current\n"
    "end\n"
    "local value = ARGV[1] .. ':' .. stamp .. ':' .. ARGV[2] .. ':' ..\n"
    "    ARGV[3] .. suffix\n"
    "redis.call('set', KEYS[1], value)\n"
    "return value\n";

// ReconfigureScript(): a change of the deployment's members
// (`redlock reconfigure`). KEYS: the deployment marker. ARGV: the record
// expected there now (RecordText(), or '' for none), the new suffix
// (MarkerSuffix()), and for a server that carries no marker its state,
// run_id and max_ttl.
// Writes the new record only over the expected one, keeping the marker's own
// part, and refuses a server whose marker names it as another member; a
// server with no marker gets "<state>:<TIME>:<run_id>:<max_ttl>" first.
// Returns {1, the marker now} if it wrote, {0, the marker now (or "")} if
// not (another record, or another member name).
constexpr absl::string_view kReconfigureSource =
    "local current = redis.call('get', KEYS[1])\n"
    "local now = redis.call('time')\n"
    "local stamp = now[1] .. string.sub('000000' .. now[2], -6)\n"
    "local suffix = ARGV[2] .. ';since=' .. stamp\n"
    "if not current then\n"
    "  if ARGV[1] ~= '' then return {0, ''} end\n"
    "  local value = ARGV[3] .. ':' .. stamp .. ':' .. ARGV[4] .. ':' ..\n"
    "      ARGV[5] .. suffix\n"
    "  redis.call('set', KEYS[1], value)\n"
    "  return {1, value}\n"
    "end\n"
    "local cut = string.find(current, ';', 1, true)\n"
    "local own = current\n"
    "local record = ''\n"
    "if cut then\n"
    "  own = string.sub(current, 1, cut - 1)\n"
    "  local rest = string.sub(current, cut)\n"
    "  local member = string.match(rest, ';member=([^;]*)')\n"
    "  local wanted = string.match(ARGV[2], ';member=([^;]*)')\n"
    "  if member ~= wanted then return {0, current} end\n"
    "  record = string.match(rest, ';(deployment=.*);since=') or\n"
    "      string.match(rest, ';(deployment=.*)$') or ''\n"
    "end\n"
    "if record ~= ARGV[1] then return {0, current} end\n"
    "local value = own .. suffix\n"
    "redis.call('set', KEYS[1], value)\n"
    "return {1, value}\n";

// clang-format on

}  // namespace

const Script& ReconfigureScript() {
  static const Script* const script =
      new Script(MakeScript("reconfigure", kReconfigureSource));
  return *script;
}

const Script& MarkerScript() {
  static const Script* const script =
      new Script(MakeScript("marker", kMarkerSource));
  return *script;
}

Command MarkerCommand(absl::string_view marker_key, absl::string_view state,
                      absl::string_view run_id, absl::Duration max_ttl,
                      absl::string_view suffix) {
  Command c;
  c.script = &MarkerScript();
  c.num_keys = 1;
  c.args = {std::string(marker_key), std::string(state), std::string(run_id),
            absl::StrCat(absl::ToInt64Milliseconds(max_ttl)),
            std::string(suffix)};
  return c;
}

Command ReconfigureCommand(absl::string_view marker_key,
                           absl::string_view expected_record,
                           absl::string_view suffix, absl::string_view state,
                           absl::string_view run_id, absl::Duration max_ttl) {
  Command c;
  c.script = &ReconfigureScript();
  c.num_keys = 1;
  c.args = {std::string(marker_key),
            std::string(expected_record),
            std::string(suffix),
            std::string(state),
            std::string(run_id),
            absl::StrCat(absl::ToInt64Milliseconds(max_ttl))};
  return c;
}

void ParseMarker(absl::string_view value, std::string* state, int64_t* time_us,
                 std::string* run_id, int64_t* max_ttl_ms,
                 std::optional<std::string>* record) {
  // The membership record follows the first ';' (member names hold ':').
  const size_t cut = value.find(';');
  if (record != nullptr) {
    if (cut == absl::string_view::npos) {
      record->reset();
    } else {
      *record = std::string(value.substr(cut + 1));
    }
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(value.substr(0, cut), ':');
  *state = std::string(fields[0]);
  *time_us = 0;
  if (run_id != nullptr) run_id->clear();
  if (max_ttl_ms != nullptr) *max_ttl_ms = 0;
  int64_t t = 0;
  if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &t) && t > 0) {
    *time_us = t;
  }
  if (fields.size() > 2 && run_id != nullptr) *run_id = std::string(fields[2]);
  if (fields.size() > 3 && max_ttl_ms != nullptr &&
      absl::SimpleAtoi(fields[3], &t) && t > 0) {
    *max_ttl_ms = t;
  }
}

}  // namespace redlock::internal
