// Copyright 2026 The redlock Authors.
//
// redlock: flock(1) across machines. Takes a Redlock on a named resource
// across N independent Redis masters and runs a command while holding it, or
// acquires, extends and releases it for scripts, runs a command while this
// process leads an election, or shows what the masters hold. `redlock --help`
// and docs/cli.md describe every subcommand, option and exit code.
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "redlock/election.h"
#include "redlock/keys.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "redlock/version.h"
#include "src/admin/connection.h"
#include "tools/redlock/args.h"
#include "tools/redlock/child.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/commands.h"
#include "tools/redlock/elect.h"
#include "tools/redlock/reconfigure.h"
#include "tools/redlock/run.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {
namespace {

absl::Status Usage(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// The password from --password-file or REDLOCK_PASSWORD; empty if neither.
absl::StatusOr<std::string> Password(const CommandLine& line) {
  if (!line.password_file.empty()) return ReadPasswordFile(line.password_file);
  const char* env = std::getenv("REDLOCK_PASSWORD");
  return env == nullptr ? std::string() : std::string(env);
}

// The masters with passwords applied, from --masters or REDLOCK_MASTERS and
// --password-file or REDLOCK_PASSWORD.
absl::StatusOr<std::vector<std::string>> MasterUris(const CommandLine& line) {
  std::string list = line.masters;
  if (list.empty()) {
    // CLI11 reads $REDLOCK_MASTERS only when --masters is not given at all;
    // an empty --masters= (an unset variable in a script) falls back too.
    const char* env = std::getenv("REDLOCK_MASTERS");
    if (env != nullptr) list = env;
  }
  std::vector<std::string> uris = SplitMasterList(list);
  if (uris.empty()) {
    return Usage("no masters: pass --masters or set REDLOCK_MASTERS");
  }
  absl::StatusOr<std::string> password = Password(line);
  if (!password.ok()) return password.status();
  return ApplyPassword(uris, *password, line.user);
}

// reconfigure's --to, with the password applied as to --masters.
absl::StatusOr<std::vector<std::string>> TargetUris(const CommandLine& line) {
  const std::vector<std::string> uris = SplitMasterList(line.to);
  if (uris.empty()) {
    return Usage(
        "reconfigure: missing --to (the masters the deployment "
        "should have)");
  }
  absl::StatusOr<std::string> password = Password(line);
  if (!password.ok()) return password.status();
  absl::StatusOr<std::vector<std::string>> with_password =
      ApplyPassword(uris, *password, line.user);
  if (!with_password.ok()) return Usage(with_password.status().message());
  return with_password;
}

// Whether the option named `name` ("wait") was given.
bool Given(const CommandLine& line, absl::string_view name) {
  return std::find(line.given.begin(), line.given.end(), name) !=
         line.given.end();
}

// The library's rule for an election's name, checked here too so that
// `status --election` (which reads the masters without the library) refuses
// what a campaign would: not empty, no space or control character.
absl::Status CheckElectionName(absl::string_view name) {
  if (name.empty()) return Usage("NAME is empty");
  for (const char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f) {
      return Usage(absl::StrCat("NAME \"", absl::CHexEscape(name),
                                "\" has a space or a control character"));
    }
  }
  return absl::OkStatus();
}

// elect's three modes: campaign (with or without a COMMAND), --listen and
// --leader. Options of one mode given for another are refused rather than
// ignored.
absl::Status CheckElectModes(const CommandLine& line) {
  if (line.listen && line.leader) {
    return Usage("--listen and --leader exclude each other");
  }
  if (!line.listen && !line.leader) {
    if (line.json && !line.command.empty()) {
      return Usage(
          "elect: --json is for the line printed without a COMMAND (the "
          "command's output is its own)");
    }
    return absl::OkStatus();
  }
  const char* mode = line.listen ? "--listen" : "--leader";
  if (!line.command.empty()) {
    return Usage(absl::StrCat("elect ", mode, " takes no COMMAND"));
  }
  for (const char* campaign_only :
       {"value", "ttl", "wait", "grace", "conflict-exit-code"}) {
    if (Given(line, campaign_only)) {
      return Usage(absl::StrCat("elect ", mode, " takes no --", campaign_only,
                                " (it only watches)"));
    }
  }
  return absl::OkStatus();
}

// elect's default --value: where the candidate runs.
std::string DefaultElectionValue() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(host[0] != '\0' ? host : "localhost", ":", getpid());
}

// The command line, checked; kInvalidArgument with a one-line message
// otherwise. ParseCommandLine() (args.h) has checked the syntax; here the
// values are checked for what they mean.
absl::StatusOr<Config> MakeConfig(const CommandLine& line) {
  Config config;
  config.subcommand = line.subcommand;
  config.resource = line.resource;
  config.resources = line.resources;
  config.token = line.token;
  config.command = line.command;
  const bool has_token = config.subcommand == Subcommand::kExtend ||
                         config.subcommand == Subcommand::kRelease;
  const bool reconfigure = config.subcommand == Subcommand::kReconfigure;
  const bool elect = config.subcommand == Subcommand::kElect;
  config.election = line.election;
  if (config.resources.empty() && !reconfigure) {
    config.resources = {config.resource};
  }
  if (elect || config.election) {
    // An election's lease is a lock on "__elect__:NAME", so NAME itself may
    // start with "__".
    if (absl::Status name = CheckElectionName(config.resource); !name.ok()) {
      return name;
    }
  } else {
    for (const std::string& resource : config.resources) {
      if (resource.empty()) return Usage("RESOURCE is empty");
      if (absl::StartsWith(resource, kReservedResourcePrefix)) {
        return Usage(absl::StrCat("RESOURCE must not start with \"",
                                  kReservedResourcePrefix,
                                  "\" (reserved for the library's own keys)"));
      }
    }
  }
  if (has_token && config.token.empty()) return Usage("TOKEN is empty");
  if (elect) {
    if (absl::Status modes = CheckElectModes(line); !modes.ok()) return modes;
    config.listen = line.listen;
    config.leader = line.leader;
    config.value = Given(line, "value") ? line.value : DefaultElectionValue();
    if (config.value.size() > kMaxElectionValueSize) {
      return Usage(absl::StrCat("--value is ", config.value.size(),
                                " bytes; at most ", kMaxElectionValueSize));
    }
  }
  if (config.election && line.limit != -1) {
    return Usage("--election and --limit exclude each other");
  }

  // Plain values.
  config.ttl = line.ttl;
  // A candidate campaigns until elected unless told otherwise, as etcdctl
  // elect does; a lock is tried once.
  config.wait =
      elect && !Given(line, "wait") ? absl::InfiniteDuration() : line.wait;
  config.grace = line.grace;
  config.fencing = line.fencing;
  config.json = line.json;
  config.prometheus = line.prometheus;
  if (config.json && config.prometheus) {
    return Usage("--json and --prometheus exclude each other");
  }
  // Readers and semaphores: which kind of lock RESOURCE is.
  config.shared = line.shared;
  const bool has_limit = line.limit != -1;
  const bool has_permits = line.permits != -1;
  config.limit = has_limit ? line.limit : 0;
  config.permits = has_permits ? line.permits : 1;
  if (config.shared && has_limit) {
    return Usage(
        "--shared and --limit exclude each other (a semaphore's permits are "
        "never shared)");
  }
  if (has_permits && !has_limit) return Usage("--permits needs --limit");
  if (has_limit && (line.limit < 1 || line.limit > 1024)) {
    return Usage(
        absl::StrCat("--limit must be in 1..1024 (got ", line.limit, ")"));
  }
  if (has_permits && (line.permits < 1 || line.permits > line.limit)) {
    return Usage(absl::StrCat("--permits must be in 1..--limit (", line.limit,
                              "; got ", line.permits, ")"));
  }
  if (config.fencing && (config.shared || config.limit != 0)) {
    return Usage(absl::StrCat("--fencing and ",
                              config.shared ? "--shared" : "--limit",
                              " exclude each other (no fencing tokens for ",
                              config.shared ? "readers" : "semaphores", ")"));
  }
  if ((config.shared || config.limit != 0) && config.resources.size() > 1) {
    return Usage(absl::StrCat(config.shared ? "--shared" : "--limit",
                              " takes one RESOURCE"));
  }
  config.conflict_exit_code = line.conflict_exit_code;
  if (line.quiet && line.verbose) {
    return Usage("--quiet and --verbose exclude each other");
  }
  config.verbosity = line.quiet     ? Verbosity::kQuiet
                     : line.verbose ? Verbosity::kVerbose
                                    : Verbosity::kNormal;
  if (config.conflict_exit_code < 0 || config.conflict_exit_code > 255) {
    return Usage("--conflict-exit-code must be in 0..255");
  }

  // Options for the library and the direct commands.
  Options& options = config.options;
  const absl::Duration request_timeout = line.request_timeout;
  if (request_timeout <= absl::ZeroDuration() ||
      request_timeout == absl::InfiniteDuration()) {
    return Usage("--request-timeout must be positive and finite");
  }
  options.request_timeout = request_timeout;
  // The library requires connect_timeout > 0 and stalled >= request timeout.
  options.connect_timeout = std::max(options.connect_timeout, request_timeout);
  options.stalled_connection_timeout =
      std::max(options.stalled_connection_timeout, request_timeout);
  options.key_prefix = line.key_prefix;
  options.quorum = line.quorum;
  if (line.max_ttl <= absl::ZeroDuration() || line.max_ttl > absl::Hours(24)) {
    return Usage("--max-ttl must be positive and at most 24h");
  }
  options.max_ttl = line.max_ttl;
  options.tls.enable = line.tls;
  options.tls.ca_file = line.cacert;
  options.tls.ca_dir = line.cacertdir;
  options.tls.cert_file = line.cert;
  options.tls.key_file = line.key;
  options.tls.server_name = line.sni;
  options.tls.insecure = line.insecure;
  options.accept_non_durable_masters = line.accept_non_durable;
  // --quiet: no messages but errors, so the library's warnings (a master
  // that may evict lock keys or lose them in a crash) are dropped; status
  // still shows them.
  if (config.verbosity == Verbosity::kQuiet) {
    options.on_warning = [](absl::string_view) {};
  }

  config.dry_run = line.dry_run;
  // release, status and reconfigure take no --ttl: its default must not
  // stand in the way of a short --max-ttl.
  const bool takes_ttl = config.subcommand == Subcommand::kRun ||
                         config.subcommand == Subcommand::kAcquire ||
                         config.subcommand == Subcommand::kExtend || elect;
  if (!takes_ttl) config.ttl = std::min(config.ttl, options.max_ttl);
  absl::StatusOr<std::vector<std::string>> to_uris;
  if (reconfigure) {
    to_uris = TargetUris(line);
    if (!to_uris.ok()) return to_uris.status();
  }
  if (config.ttl < absl::ZeroDuration()) {
    return Usage("--ttl must not be negative");
  }
  if (config.wait < absl::ZeroDuration()) {
    return Usage("--wait must not be negative");
  }
  if (config.grace < absl::ZeroDuration()) {
    return Usage("--grace must not be negative");
  }
  if (config.ttl <= request_timeout && takes_ttl) {
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
  // A waiter retries the moment it hears a release, without the library's
  // wake jitter (RetryPolicy::wake_jitter, 4ms by default). The jitter
  // spreads the many waiters of one client over the masters; the tool's
  // waiters are processes of their own, woken one by one by the kernel, and
  // any jitter of a few hundred microseconds or more left the lock free for
  // 2.5-3ms per hand-off between 8 jobs (docs/perf-notes/cli-handoff.md;
  // the price: every waiter retries on every release, so with 23 waiting
  // jobs the masters did 2.2 times the work). Whether an attempt counts is
  // unchanged: every one is a full quorum round.
  options.retry.wake_jitter = absl::ZeroDuration();
  // A waiter is handed the lock by the release itself (RetryPolicy::
  // hand_off): one round trip from the release to the next job instead of
  // two (docs/perf-notes/cli-handoff.md).
  options.retry.hand_off = line.hand_off;
  // Only a plain lock of one resource is handed over (not with --fencing,
  // --shared or --limit).
  // (An election's lease is a fenced lock.)
  if (line.hand_off && !config.fencing && !config.shared && config.limit == 0 &&
      config.resources.size() == 1 && !elect) {
    // Handed the lock by the release, a waiter polls only to refresh its
    // entries and to find a lock that expired without a release: every
    // 100-200ms instead of 20-60ms (its entries live 600ms). With 8 jobs
    // the waiters' polls were a quarter of the masters' commands and took
    // the 2 cores from the job that had just been handed the lock: 0.7ms
    // of its hand-off (docs/perf-notes/cli-handoff.md).
    options.retry.min_delay = absl::Milliseconds(100);
    options.retry.max_delay = absl::Milliseconds(200);
  }

  absl::StatusOr<std::vector<std::string>> uris = MasterUris(line);
  if (!uris.ok()) return uris.status();
  options.masters = *std::move(uris);
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) {
    return Usage(valid.message());
  }
  absl::StatusOr<std::vector<MasterAddress>> masters =
      admin::ResolveMasters(options, options.masters);
  if (!masters.ok()) return Usage(masters.status().message());
  config.masters = *std::move(masters);
  if (reconfigure) {
    absl::StatusOr<std::vector<MasterAddress>> to =
        admin::ResolveMasters(options, *std::move(to_uris));
    if (!to.ok()) return Usage(absl::StrCat("--to: ", to.status().message()));
    config.to = *std::move(to);
  }
  config.quorum =
      QuorumSize(options.quorum, static_cast<int>(config.masters.size()));
  // The direct commands (status, reconfigure, the progress display) reach
  // TLS masters with the same settings as the library; bad files are a usage
  // error here, before anything is sent.
  auto is_tls = [](const MasterAddress& a) {
    return a.transport == MasterAddress::Transport::kTls;
  };
  if (std::any_of(config.masters.begin(), config.masters.end(), is_tls) ||
      std::any_of(config.to.begin(), config.to.end(), is_tls)) {
    absl::Status tls = admin::CheckTls(options.tls);
    if (!tls.ok()) return Usage(tls.message());
  }
  return config;
}

// Every subcommand but status goes through the library.
int WithClient(const Config& config) {
  // elect --leader asks once, like extend.
  const bool waits =
      config.subcommand == Subcommand::kRun ||
      config.subcommand == Subcommand::kAcquire ||
      (config.subcommand == Subcommand::kElect && !config.leader);
  std::string path;
  if (!config.command.empty()) {
    if (const int code = CheckCommand(config, &path); code != kExitOk) {
      return code;
    }
  }
  // run, acquire and elect read their signals from a signalfd: one ends a
  // wait, run and elect forward them to the command, and elect without one
  // resigns or stops listening on them. Created before any thread exists,
  // so that every thread inherits the mask. extend, release and elect
  // --leader keep the default actions: a signal just ends them.
  std::unique_ptr<SignalWatch> signals;
  if (waits) {
    absl::StatusOr<std::unique_ptr<SignalWatch>> created =
        SignalWatch::Create();
    if (!created.ok()) {
      PrintError(created.status().ToString());
      return kExitSoftware;
    }
    signals = *std::move(created);
  }
  absl::StatusOr<std::unique_ptr<Redlock>> client =
      Redlock::Create(config.options);
  Mark(Milestone::kClient);
  if (!client.ok()) {
    PrintError(client.status().message());
    return absl::IsInvalidArgument(client.status()) ? kExitUsage
                                                    : kExitSoftware;
  }
  switch (config.subcommand) {
    case Subcommand::kRun:
      return RunCommand(config, path, **client, *signals);
    case Subcommand::kAcquire:
      return AcquireCommand(config, **client, *signals);
    case Subcommand::kExtend:
      return ExtendCommand(config, **client);
    case Subcommand::kRelease:
      return ReleaseCommand(config, **client);
    case Subcommand::kElect:
      return ElectCommand(config, path, **client, signals.get());
    case Subcommand::kStatus:
    case Subcommand::kReconfigure:
      break;
  }
  return kExitSoftware;
}

int Main(int argc, char** argv) {
  Mark(Milestone::kMain);
  RecordInheritedFds();
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv);
  if (line.ok() && line->help) {
    const std::string help = HelpText();
    std::fwrite(help.data(), 1, help.size(), stdout);
    return kExitOk;
  }
  if (line.ok() && line->version) {
    // The tool's own version, the library's it runs on (the shared library
    // may be newer), and the library's dependencies.
    const DependencyVersions deps = GetDependencyVersions();
    std::printf("redlock %s (library %s)\n%s\n%s\n%s\n", REDLOCK_VERSION_STRING,
                RuntimeVersion(), deps.hiredis.c_str(), deps.libevent.c_str(),
                deps.openssl.c_str());
    return kExitOk;
  }
  absl::StatusOr<Config> config =
      line.ok() ? MakeConfig(*line) : absl::StatusOr<Config>(line.status());
  if (!config.ok()) {
    PrintError(config.status().message());
    return kExitUsage;
  }
  Mark(Milestone::kConfigured);
  switch (config->subcommand) {
    case Subcommand::kRun:
    case Subcommand::kAcquire:
    case Subcommand::kExtend:
    case Subcommand::kRelease:
    case Subcommand::kElect:
      return WithClient(*config);
    case Subcommand::kStatus:
      return StatusCommand(*config);
    case Subcommand::kReconfigure:
      return ReconfigureCommand(*config);
  }
  return kExitSoftware;
}

}  // namespace
}  // namespace redlock::cli

int main(int argc, char** argv) {
  const int code = redlock::cli::Main(argc, argv);
  redlock::cli::Mark(redlock::cli::Milestone::kExit);
  redlock::cli::WriteTimings();
  return code;
}
