// Copyright 2026 The redlock Authors.
//
// redlock: flock(1) across machines. Takes a Redlock on a named resource
// across N independent Redis masters and runs a command while holding it, or
// acquires, extends and releases it for scripts, or shows what the masters
// hold. `redlock --help` and docs/cli.md describe every subcommand, option
// and exit code.
//
//   redlock run --ttl 10m recalc-ratings -- /usr/local/bin/recalc-ratings

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "redlock/keys.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tools/redlock/args.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/commands.h"
#include "tools/redlock/run.h"
#include "tools/redlock/signals.h"

// Every option of every subcommand; which applies where is in
// kSubcommands below. Help text is in kHelp.
ABSL_FLAG(std::string, masters, "",
          "Comma-separated redis:// URIs; default $REDLOCK_MASTERS.");
ABSL_FLAG(std::string, password_file, "",
          "File holding the password for masters whose URI has none.");
ABSL_FLAG(absl::Duration, request_timeout, absl::Milliseconds(50),
          "How long each master may take to answer.");
ABSL_FLAG(std::string, key_prefix, "redlock:", "Prefix of every Redis key.");
ABSL_FLAG(std::string, quorum, "majority", "majority or unanimous.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(30),
          "Lock lifetime on the masters.");
ABSL_FLAG(absl::Duration, wait, absl::ZeroDuration(),
          "How long to keep trying while the lock is held elsewhere.");
ABSL_FLAG(absl::Duration, grace, absl::Seconds(10),
          "After a lost lock: SIGTERM, then SIGKILL this much later.");
ABSL_FLAG(int, conflict_exit_code, redlock::cli::kExitConflict,
          "Exit code when the lock is held elsewhere.");
ABSL_FLAG(bool, fencing, false, "Issue a fencing token with the lock.");
ABSL_FLAG(bool, json, false, "Print JSON instead of key=value lines.");
ABSL_FLAG(bool, quiet, false, "No messages except errors.");
ABSL_FLAG(bool, verbose, false, "Say what happens, with every master's vote.");

namespace redlock::cli {
namespace {

constexpr absl::string_view kHelp =
    R"(redlock: flock(1) across machines, on a Redlock over N independent Redis masters

Usage:
  redlock run [options] RESOURCE -- COMMAND [ARGS...]
  redlock acquire [options] RESOURCE
  redlock extend [options] RESOURCE TOKEN
  redlock release [options] RESOURCE TOKEN
  redlock status [options] RESOURCE
  redlock help

Subcommands:
  run       Acquire RESOURCE, run COMMAND as a child while the lock is extended
            every ttl/3, release it when the command exits. The command's exit
            code becomes redlock's (128+N if signal N killed it). Everything
            after "--" goes to the command untouched. The command sees
            REDLOCK_TOKEN, REDLOCK_RESOURCE, REDLOCK_VALID_UNTIL_MS (ms of
            validity left when it started) and, with --fencing, REDLOCK_FENCE.
            It runs in its own process group; SIGINT, SIGTERM, SIGHUP and
            SIGQUIT sent to redlock are forwarded to that group. If the lock
            is lost (extensions fail), the group gets SIGTERM, then SIGKILL
            after --grace, and redlock exits 76.
  acquire   Acquire RESOURCE and print key=value lines on stdout (resource,
            key, token, ttl_ms, valid_ms, and fence with --fencing). The lock
            lives --ttl unless extended or released.
  extend    Set the TTL of RESOURCE to --ttl on every master that still holds
            TOKEN; a quorum must. Prints result, counts and valid_ms.
  release   Delete RESOURCE on every master that still holds TOKEN.
            extend and release are quorum operations on a token: they work
            from any process, and report each master's answer.
  status    Per master: reachable, PING latency, holder (token prefix), PTTL,
            fencing counter, run_id, uptime and restart-guard marker.
            Exits 0 if a quorum of masters answered, else 69.

Options (value as --name=VALUE or --name VALUE; durations like 250ms, 30s,
10m, 1h; --wait and --grace also take "inf"):
  --masters URIS            redis://[[user]:password@]host[:port][/db],...
                            Default: $REDLOCK_MASTERS.
  --password-file FILE      Password for every master URI without one (the
                            file's content without trailing newlines).
                            Default: $REDLOCK_PASSWORD. Keeps the password
                            out of argv (visible in ps).
  --request-timeout D       How long each master may take to answer. Default
                            50ms.
  --key-prefix P            Prefix of every Redis key. Default "redlock:".
  --quorum Q                majority (N/2+1) or unanimous. Default majority.
  --ttl D                   run, acquire, extend: lock lifetime on the
                            masters, at most 1h. Default 30s.
  --wait D                  run, acquire: keep retrying this long while the
                            lock is held elsewhere. Default 0 (one attempt).
  --conflict-exit-code N    run, acquire: exit code when the lock is held
                            elsewhere (like flock -E). Default 75.
  --fencing                 run, acquire: also issue a fencing token.
  --grace D                 run: after a lost lock, SIGKILL this long after
                            SIGTERM. Default 10s.
  --json                    acquire, extend, release, status: JSON output.
  -q, --quiet               No messages on stderr except errors.
  -v, --verbose             Say what happens, with every master's vote.
  -h, --help                This text.

Environment:
  REDLOCK_MASTERS   masters, when --masters is not given.
  REDLOCK_PASSWORD  password, when --password-file is not given.

Exit codes:
  0      done (run: the command exited 0)
  1-125  run: the command's own exit code
  64     usage error: bad option, argument, duration, URI, no masters
  69     too few masters answered in time (no quorum either way)
  70     internal error
  75     held by another owner (run, acquire; see --conflict-exit-code)
  76     the lock was lost: run stopped the command; extend/release found the
         token on too few masters (expired, released or taken)
  126    run: COMMAND cannot be executed
  127    run: COMMAND not found
  128+N  run: the command died of signal N, or redlock was interrupted by it
         while waiting

Examples:
  # The nightly job on every replica; exactly one runs it:
  0 3 * * * REDLOCK_MASTERS=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379 redlock run --ttl 10m recalc-ratings -- /usr/local/bin/recalc-ratings

  # A script that manages the lock itself:
  token=$(redlock acquire --ttl 5m backup | sed -n 's/^token=//p') || exit
  ...; redlock extend --ttl 5m backup "$token"; ...
  redlock release backup "$token"

  redlock status --json recalc-ratings

See docs/cli.md for details.
)";

struct SubcommandSpec {
  Subcommand subcommand;
  int tokens;  // Positional arguments after the subcommand.
  std::vector<std::string> flags;
};

const std::vector<std::string>& CommonFlags() {
  static const auto* const flags = new std::vector<std::string>{
      "masters", "password_file", "request_timeout", "key_prefix",
      "quorum",  "quiet",         "verbose"};
  return *flags;
}

const absl::flat_hash_map<std::string, SubcommandSpec>& Subcommands() {
  static const auto* const specs =
      new absl::flat_hash_map<std::string, SubcommandSpec>{
          {"run",
           {Subcommand::kRun,
            1,
            {"ttl", "wait", "grace", "conflict_exit_code", "fencing"}}},
          {"acquire",
           {Subcommand::kAcquire,
            1,
            {"ttl", "wait", "conflict_exit_code", "fencing", "json"}}},
          {"release", {Subcommand::kRelease, 2, {"json"}}},
          {"extend", {Subcommand::kExtend, 2, {"ttl", "json"}}},
          {"status", {Subcommand::kStatus, 1, {"json"}}},
      };
  return *specs;
}

absl::flat_hash_set<std::string> AllFlags() {
  absl::flat_hash_set<std::string> all(CommonFlags().begin(),
                                       CommonFlags().end());
  for (const auto& [name, spec] : Subcommands()) {
    all.insert(spec.flags.begin(), spec.flags.end());
  }
  return all;
}

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return absl::StrCat("--", name);
}

absl::Status Usage(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// The masters with passwords applied, from --masters or REDLOCK_MASTERS and
// --password-file or REDLOCK_PASSWORD.
absl::StatusOr<std::vector<std::string>> MasterUris() {
  std::string list = absl::GetFlag(FLAGS_masters);
  if (list.empty()) {
    const char* env = std::getenv("REDLOCK_MASTERS");
    if (env != nullptr) list = env;
  }
  std::vector<std::string> uris = SplitMasterList(list);
  if (uris.empty()) {
    return Usage("no masters: pass --masters or set REDLOCK_MASTERS");
  }
  std::string password;
  if (const std::string file = absl::GetFlag(FLAGS_password_file);
      !file.empty()) {
    absl::StatusOr<std::string> read = ReadPasswordFile(file);
    if (!read.ok()) return read.status();
    password = *std::move(read);
  } else if (const char* env = std::getenv("REDLOCK_PASSWORD");
             env != nullptr) {
    password = env;
  }
  return ApplyPassword(uris, password);
}

// Everything from the command line, checked; kInvalidArgument with a
// one-line message otherwise. Sets *help instead for -h/--help/help.
absl::StatusOr<Config> ParseCommandLine(int argc, char** argv, bool* help) {
  const SplitArgs split = SplitAtSeparator(argc, argv);
  absl::StatusOr<ParsedOptions> parsed =
      ParseOptions(split.options, AllFlags());
  if (!parsed.ok()) return parsed.status();
  if (parsed->help ||
      (!parsed->positional.empty() && parsed->positional[0] == "help")) {
    *help = true;
    return Config();
  }
  if (parsed->positional.empty()) {
    return Usage(
        "missing subcommand: run, acquire, extend, release or status (see "
        "redlock --help)");
  }
  const std::string& name = parsed->positional[0];
  const auto spec_it = Subcommands().find(name);
  if (spec_it == Subcommands().end()) {
    return Usage(absl::StrCat("unknown subcommand \"", absl::CHexEscape(name),
                              "\" (see redlock --help)"));
  }
  const SubcommandSpec& spec = spec_it->second;
  Config config;
  config.subcommand = spec.subcommand;

  for (const std::string& flag : parsed->flags_set) {
    if (std::find(CommonFlags().begin(), CommonFlags().end(), flag) ==
            CommonFlags().end() &&
        std::find(spec.flags.begin(), spec.flags.end(), flag) ==
            spec.flags.end()) {
      return Usage(
          absl::StrCat("option ", Dashed(flag), " does not apply to ", name));
    }
  }

  // Positional arguments and the command.
  const std::vector<std::string> args(parsed->positional.begin() + 1,
                                      parsed->positional.end());
  if (args.empty()) {
    return Usage(absl::StrCat(name, ": missing RESOURCE",
                              spec.tokens == 2 ? " and TOKEN" : ""));
  }
  if (static_cast<int>(args.size()) < spec.tokens) {
    return Usage(absl::StrCat(name, ": missing TOKEN"));
  }
  if (static_cast<int>(args.size()) > spec.tokens) {
    return Usage(absl::StrCat(name, ": unexpected argument \"",
                              absl::CHexEscape(args[spec.tokens]), "\"",
                              spec.subcommand == Subcommand::kRun
                                  ? " (put the command after --)"
                                  : ""));
  }
  config.resource = args[0];
  if (spec.tokens == 2) config.token = args[1];
  if (spec.subcommand == Subcommand::kRun) {
    if (!split.has_separator) {
      return Usage("run: missing -- COMMAND [ARGS...]");
    }
    if (split.command.empty()) {
      return Usage("run: missing COMMAND after --");
    }
    config.command = split.command;
  } else if (split.has_separator) {
    return Usage(
        absl::StrCat(name, " takes no command (only run does, after --)"));
  }
  if (config.resource.empty()) return Usage("RESOURCE is empty");
  if (absl::StartsWith(config.resource, kReservedResourcePrefix)) {
    return Usage(absl::StrCat("RESOURCE must not start with \"",
                              kReservedResourcePrefix,
                              "\" (reserved for the library's own keys)"));
  }
  if (spec.tokens == 2 && config.token.empty()) return Usage("TOKEN is empty");

  // Plain values.
  config.ttl = absl::GetFlag(FLAGS_ttl);
  config.wait = absl::GetFlag(FLAGS_wait);
  config.grace = absl::GetFlag(FLAGS_grace);
  config.fencing = absl::GetFlag(FLAGS_fencing);
  config.json = absl::GetFlag(FLAGS_json);
  config.conflict_exit_code = absl::GetFlag(FLAGS_conflict_exit_code);
  if (absl::GetFlag(FLAGS_quiet) && absl::GetFlag(FLAGS_verbose)) {
    return Usage("--quiet and --verbose exclude each other");
  }
  config.verbosity = absl::GetFlag(FLAGS_quiet)     ? Verbosity::kQuiet
                     : absl::GetFlag(FLAGS_verbose) ? Verbosity::kVerbose
                                                    : Verbosity::kNormal;
  if (config.conflict_exit_code < 0 || config.conflict_exit_code > 255) {
    return Usage("--conflict-exit-code must be in 0..255");
  }

  // Options for the library and the direct commands.
  Options& options = config.options;
  const absl::Duration request_timeout = absl::GetFlag(FLAGS_request_timeout);
  if (request_timeout <= absl::ZeroDuration() ||
      request_timeout == absl::InfiniteDuration()) {
    return Usage("--request-timeout must be positive and finite");
  }
  options.request_timeout = request_timeout;
  // The library requires connect_timeout > 0 and stalled >= request timeout.
  options.connect_timeout = std::max(options.connect_timeout, request_timeout);
  options.stalled_connection_timeout =
      std::max(options.stalled_connection_timeout, request_timeout);
  options.key_prefix = absl::GetFlag(FLAGS_key_prefix);
  absl::StatusOr<Quorum> quorum = ParseQuorum(absl::GetFlag(FLAGS_quorum));
  if (!quorum.ok()) {
    return Usage(absl::StrCat("--quorum: ", quorum.status().message()));
  }
  options.quorum = *quorum;

  if (config.ttl < absl::ZeroDuration()) {
    return Usage("--ttl must not be negative");
  }
  if (config.wait < absl::ZeroDuration()) {
    return Usage("--wait must not be negative");
  }
  if (config.grace < absl::ZeroDuration()) {
    return Usage("--grace must not be negative");
  }
  if (config.ttl <= request_timeout) {
    return Usage(absl::StrCat("--ttl must be longer than --request-timeout (",
                              Pretty(request_timeout), ")"));
  }
  if (config.ttl > options.max_ttl) {
    return Usage(
        absl::StrCat("--ttl must be at most ", Pretty(options.max_ttl),
                     " (run extends the lock while the command runs, so a "
                     "short TTL is fine for a long job)"));
  }
  options.default_ttl = config.ttl;

  absl::StatusOr<std::vector<std::string>> uris = MasterUris();
  if (!uris.ok()) return uris.status();
  options.masters = *std::move(uris);
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) {
    return Usage(valid.message());
  }
  for (const std::string& uri : options.masters) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return Usage(address.status().message());
    config.masters.push_back(*std::move(address));
  }
  config.quorum =
      QuorumSize(options.quorum, static_cast<int>(config.masters.size()));
  return config;
}

// run and acquire go through the library.
int WithClient(const Config& config) {
  std::string path;
  if (config.subcommand == Subcommand::kRun) {
    if (const int code = CheckCommand(config, &path); code != kExitOk) {
      return code;
    }
  }
  // Before any thread exists, so that every thread inherits the mask.
  absl::StatusOr<std::unique_ptr<SignalWatch>> signals = SignalWatch::Create();
  if (!signals.ok()) {
    PrintError(signals.status().ToString());
    return kExitSoftware;
  }
  absl::StatusOr<std::unique_ptr<Redlock>> client =
      Redlock::Create(config.options);
  if (!client.ok()) {
    PrintError(client.status().message());
    return absl::IsInvalidArgument(client.status()) ? kExitUsage
                                                    : kExitSoftware;
  }
  if (config.subcommand == Subcommand::kRun) {
    return RunCommand(config, path, **client, **signals);
  }
  return AcquireCommand(config, **client, **signals);
}

int Main(int argc, char** argv) {
  RecordInheritedFds();
  bool help = false;
  absl::StatusOr<Config> config = ParseCommandLine(argc, argv, &help);
  if (help) {
    std::fwrite(kHelp.data(), 1, kHelp.size(), stdout);
    return kExitOk;
  }
  if (!config.ok()) {
    PrintError(config.status().message());
    return kExitUsage;
  }
  switch (config->subcommand) {
    case Subcommand::kRun:
    case Subcommand::kAcquire:
      return WithClient(*config);
    case Subcommand::kRelease:
      return ReleaseCommand(*config);
    case Subcommand::kExtend:
      return ExtendCommand(*config);
    case Subcommand::kStatus:
      return StatusCommand(*config);
  }
  return kExitSoftware;
}

}  // namespace
}  // namespace redlock::cli

int main(int argc, char** argv) { return redlock::cli::Main(argc, argv); }
