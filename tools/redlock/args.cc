// Copyright 2026 The redlock Authors.

#include "tools/redlock/args.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "redlock/options.h"

namespace redlock::cli {
namespace {

// What each subcommand takes besides the options every subcommand takes
// (those listed under none of them: --masters, --quiet, ...). The help's
// "run, acquire: ..." in front of an option's description comes from here,
// and so does "option --grace does not apply to status".
struct SubcommandSpec {
  const char* name;
  Subcommand subcommand;
  std::vector<const char*> positionals;
  const char* usage_tail;            // After the positionals in the usage.
  std::vector<const char*> options;  // Long names, as spelled in the help.
  const char* description;
};

const std::vector<SubcommandSpec>& Specs() {
  static const auto* const specs = new std::vector<SubcommandSpec>{
      {"run",
       Subcommand::kRun,
       {"RESOURCE"},
       " [RESOURCE...] -- COMMAND [ARGS...]",
       {"ttl", "wait", "conflict-exit-code", "fencing", "hand-off", "shared",
        "limit", "permits", "grace"},
       "Acquire RESOURCE, run COMMAND as a child while the lock is extended "
       "every ttl/3, release it when the command exits. Several RESOURCEs "
       "are taken as one lock, all or none (REDLOCK_RESOURCES lists them, "
       "one per line). The command's exit "
       "code becomes redlock's (128+N if signal N killed it). Everything after "
       "\"--\" goes to the command untouched. The command sees REDLOCK_TOKEN, "
       "REDLOCK_RESOURCE, REDLOCK_VALID_UNTIL_MS (ms of validity left when it "
       "started) and, with --fencing, REDLOCK_FENCE. It runs in its own "
       "process group; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to redlock are "
       "forwarded to that group. If the lock is lost (extensions fail), the "
       "group gets SIGTERM, then SIGKILL after --grace, and redlock exits 76."},
      {"acquire",
       Subcommand::kAcquire,
       {"RESOURCE"},
       "",
       {"ttl", "wait", "conflict-exit-code", "fencing", "hand-off", "shared",
        "limit", "permits", "json"},
       "Acquire RESOURCE and print key=value lines on stdout (resource, key, "
       "token, ttl_ms, valid_ms, fence with --fencing, shared=true with "
       "--shared, limit and slots with --limit). The lock lives --ttl unless "
       "extended or released."},
      {"extend",
       Subcommand::kExtend,
       {"RESOURCE", "TOKEN"},
       "",
       {"ttl", "shared", "limit", "json"},
       "Set the TTL of RESOURCE to --ttl on every master that still holds "
       "TOKEN; a quorum must. Prints result and valid_ms, and on success "
       "each master's answer (pending: not in yet at the quorum). A reader's "
       "token needs --shared; a semaphore's permits need --limit L (their "
       "slots are the ones that hold TOKEN on any master)."},
      {"release",
       Subcommand::kRelease,
       {"RESOURCE", "TOKEN"},
       "",
       {"shared", "limit", "json"},
       "Delete RESOURCE on every master that still holds TOKEN, waiting "
       "for every master's answer, and report each. extend and release are "
       "quorum operations on a token: they work from any process. A "
       "reader's token needs --shared, a semaphore's permits --limit L, as "
       "for extend."},
      {"elect",
       Subcommand::kElect,
       {"NAME"},
       " [-- COMMAND [ARGS...] | --listen | --leader]",
       {"value", "ttl", "wait", "conflict-exit-code", "grace", "listen",
        "leader", "json"},
       "Campaign for leadership of the election NAME with --value (a fenced "
       "lease, kept alive every ttl/3; --wait defaults to inf), then run "
       "COMMAND as run does while this process leads: REDLOCK_EPOCH and "
       "REDLOCK_FENCE (the leader's epoch, larger than every earlier "
       "leader's), REDLOCK_TOKEN and REDLOCK_ELECTION in its environment, "
       "signals forwarded, resign when it exits and exit with its code. If "
       "the leadership is lost the group gets SIGTERM, then SIGKILL after "
       "--grace, and redlock exits 76. Without COMMAND: print name=, epoch=, "
       "revision= and value= on one line, lead until SIGINT or SIGTERM, "
       "resign, exit 0. --listen: print the leader and every new one, a "
       "line each, until SIGINT or SIGTERM. --leader: print the leader once "
       "(79: no leader; 69: unknown)."},
      {"status",
       Subcommand::kStatus,
       {"RESOURCE"},
       "",
       {"limit", "json", "prometheus", "election"},
       "Per master: member name, reachable, PING latency, holder (token "
       "prefix), PTTL, fencing counter, run_id, uptime, restart-guard marker "
       "and membership record (epoch, members). Exits 0 if "
       "a quorum of masters answered, else 69. With --prometheus: the same "
       "as gauges in Prometheus text format (node_exporter's textfile "
       "collector), exit 0 whenever they were printed. A read-write lock "
       "shared by readers shows \"shared by N readers\" per master. With "
       "--limit L (or when a master holds RESOURCE's semaphore limit): the "
       "holders per slot and \"permits used U of L\" per master. With "
       "--election, RESOURCE is an election's NAME: its lease, epoch counter "
       "and, per master, the leader's record and whether it matches the "
       "lease."},
      {"reconfigure",
       Subcommand::kReconfigure,
       {},
       " --to=URIS [--dry-run] [--wait[=D]]",
       {"to", "dry-run", "wait"},
       "Change the deployment's members from --masters (the current list) "
       "to --to, one step per run, through a joint phase that needs a "
       "quorum of both: begin (write the joint record), then, once every "
       "grant made under the old members has expired (max_ttl*1.01 + 3s on "
       "the servers' clocks), finish (copy the fencing counters to the new "
       "members, write the new record); --to=<old list> during the joint "
       "phase aborts. Prints one line per server. Exits 75 while the wait "
       "is not over (--wait sleeps through it, at most D), 65 if the "
       "servers' records do not allow the change, 69 if too few servers "
       "answered. --dry-run prints the plan and writes nothing."},
  };
  return *specs;
}

const SubcommandSpec* FindSpec(absl::string_view name) {
  for (const SubcommandSpec& spec : Specs()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

// Subcommands that `option` (a long name) applies to; empty: all of them.
std::vector<std::string> AppliesTo(absl::string_view option) {
  std::vector<std::string> names;
  for (const SubcommandSpec& spec : Specs()) {
    for (const char* name : spec.options) {
      if (option == name) names.push_back(spec.name);
    }
  }
  return names;
}

constexpr size_t kHelpWidth = 79;  // Lines of at most 79 characters.
constexpr size_t kOptionColumn = 28;
constexpr size_t kSubcommandColumn = 12;

constexpr char kDescription[] =
    "redlock: flock(1) across machines, on a Redlock over N independent "
    "Redis masters";

// The options' heading in the help (CLI11's group is just "Options").
constexpr char kOptionsHeading[] =
    "Options (value as --name=VALUE or --name VALUE; durations like 250ms, "
    "30s, 10m, 1h; --wait and --grace also take \"inf\"; booleans also as "
    "--no-NAME)";

constexpr char kFooter[] =
    R"(Environment:
  REDLOCK_MASTERS   masters, when --masters is not given.
  REDLOCK_PASSWORD  password, when --password-file is not given (never
                    passed on to run's command).
  REDLOCK_USER      --user.
  REDLOCK_TLS, REDLOCK_TLS_CACERT, REDLOCK_TLS_CACERTDIR, REDLOCK_TLS_CERT,
  REDLOCK_TLS_KEY, REDLOCK_TLS_SNI, REDLOCK_TLS_INSECURE
                    --tls, --cacert, --cacertdir, --cert, --key, --sni,
                    --insecure.
  REDLOCK_ACCEPT_NON_DURABLE
                    --accept-non-durable.

Exit codes:
  0      done (run, elect: the command exited 0)
  1-125  run, elect: the command's own exit code
  64     usage error: bad option, argument, duration, URI, no masters
  69     too few masters answered in time (no quorum either way)
  70     internal error
  65     reconfigure: the servers' records do not allow the change; run,
         acquire with --limit: the masters hold another limit for RESOURCE
  75     held by another owner (run, acquire; see --conflict-exit-code): a
         writer holds it (--shared), no permit free (--limit), readers or a
         writer hold it (plain); elect: another candidate led until --wait
         ran out
  76     the lock was lost: run stopped the command; extend/release found the
         token on too few masters (expired, released or taken); elect: the
         leadership was lost
  79     elect --leader: the election has no leader
  126    run, elect: COMMAND cannot be executed
  127    run, elect: COMMAND not found
  128+N  run, elect: the command died of signal N, or redlock was interrupted
         by it while waiting

Examples:
  # The nightly job on every replica; exactly one runs it:
  0 3 * * * REDLOCK_MASTERS=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379 redlock run --ttl 10m recalc-ratings -- /usr/local/bin/recalc-ratings

  # A script that manages the lock itself:
  token=$(redlock acquire --ttl 5m backup | sed -n 's/^token=//p') || exit
  ...; redlock extend --ttl 5m backup "$token"; ...
  redlock release backup "$token"

  redlock status --json recalc-ratings

  # One scheduler among the replicas; the others wait to take over:
  redlock elect --ttl 10s scheduler -- /usr/local/bin/scheduler

See docs/cli.md for details.)";

// `text` on lines of at most `width` characters (a longer word gets a line
// of its own).
std::string Wrap(absl::string_view text, size_t width) {
  std::string out;
  size_t line = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line > 0 && line + 1 + word.size() > width) {
      out.push_back('\n');
      line = 0;
    } else if (line > 0) {
      out.push_back(' ');
      ++line;
    }
    absl::StrAppend(&out, word);
    line += word.size();
  }
  return out;
}

// CLI11's help in the layout redlock's help always had: usage lines per
// subcommand, the subcommands, the options with their value, then the
// footer; descriptions wrapped to 79 columns; an option shown by its short
// name and first long name only (not the --no-NAME and --with_underscore
// spellings, which the options header mentions or nobody needs to see).
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(kOptionColumn); }

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    return absl::StrCat(make_description(app), make_usage(app, name),
                        make_subcommands(app, mode), make_groups(app, mode),
                        "\n", make_footer(app));
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string out = "\nUsage:\n";
    for (const CLI::App* sub : app->get_subcommands({})) {
      absl::StrAppend(&out, "  ", name, " ", sub->get_name());
      const SubcommandSpec* spec = FindSpec(sub->get_name());
      if (spec != nullptr) absl::StrAppend(&out, " [options]");
      for (const CLI::Option* positional : sub->get_options(
               [](const CLI::Option* o) { return o->get_positional(); })) {
        absl::StrAppend(&out, " ", positional->get_name(true));
      }
      if (spec != nullptr) absl::StrAppend(&out, spec->usage_tail);
      out.push_back('\n');
    }
    return out;
  }

  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override {
    std::string out = absl::StrCat(
        "\n", is_positional ? group : Wrap(kOptionsHeading, kHelpWidth - 1),
        ":\n");
    for (const CLI::Option* opt : opts) {
      absl::StrAppend(&out, make_option(opt, is_positional));
    }
    return out;
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(
        out, sub->get_name(),
        Wrap(sub->get_description(), kHelpWidth - kSubcommandColumn),
        kSubcommandColumn);
    return out.str();
  }

  std::string make_option_name(const CLI::Option* opt,
                               bool is_positional) const override {
    if (is_positional) return opt->get_name(true);
    std::vector<std::string> names;
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    if (!opt->get_lnames().empty()) {
      names.push_back("--" + opt->get_lnames().front());
    }
    return absl::StrJoin(names, ", ");
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    return Wrap(opt->get_description(), kHelpWidth - kOptionColumn);
  }
};

std::string BadValue(absl::string_view value, absl::string_view expected) {
  return absl::StrCat("bad value \"", absl::CHexEscape(value), "\"; expected ",
                      expected);
}

// A check: `parses` says whether the value is good; the message (CLI11 puts
// the option's name in front) says what would be.
CLI::Validator Expect(absl::string_view expected,
                      std::function<bool(const std::string&)> parses) {
  return CLI::Validator(
      [expected = std::string(expected),
       parses = std::move(parses)](std::string& value) {
        return parses(value) ? std::string() : BadValue(value, expected);
      },
      "");
}

// "--request-timeout,--request_timeout": the tool has always taken both.
std::string LongNames(absl::string_view name) {
  std::string names = absl::StrCat("--", name);
  if (absl::StrContains(name, '-')) {
    absl::StrAppend(&names, ",--", absl::StrReplaceAll(name, {{"-", "_"}}));
  }
  return names;
}

// An option with a value. `parse` reads a value the check accepted.
template <typename T>
CLI::Option* AddValue(CLI::App& app, absl::string_view name,
                      absl::string_view value_name, absl::string_view help,
                      T* out, CLI::Validator check,
                      std::function<void(const std::string&, T*)> parse) {
  return app
      .add_option_function<std::string>(
          LongNames(name),
          [out, parse = std::move(parse)](const std::string& value) {
            parse(value, out);
          },
          std::string(help))
      ->check(std::move(check))
      ->option_text(std::string(value_name));
}

CLI::Option* AddDuration(CLI::App& app, absl::string_view name,
                         absl::string_view help, absl::Duration* out) {
  return AddValue<absl::Duration>(
      app, name, "D", help, out,
      Expect("a duration like 250ms, 30s or 10m",
             [](const std::string& value) {
               absl::Duration d;
               return absl::ParseDuration(value, &d);
             }),
      [](const std::string& value, absl::Duration* d) {
        absl::ParseDuration(value, d);
      });
}

CLI::Option* AddString(CLI::App& app, absl::string_view name,
                       absl::string_view value_name, absl::string_view help,
                       std::string* out) {
  return app.add_option(LongNames(name), *out, std::string(help))
      ->option_text(std::string(value_name));
}

// A boolean: -x, --name, --name=true|false, and --noname, --no-name,
// --no_name for false.
CLI::Option* AddBool(CLI::App& app, absl::string_view short_name,
                     absl::string_view name, absl::string_view help,
                     bool* out) {
  std::string names =
      short_name.empty() ? "" : absl::StrCat("-", short_name, ",");
  absl::StrAppend(&names, "--", name, ",!--no", name, ",!--no-", name,
                  ",!--no_", name);
  return app.add_flag(names, *out, std::string(help))
      ->check(Expect("true or false", [](const std::string& value) {
        bool b;
        return CLI::detail::lexical_cast(value, b);
      }));
}

// The whole command line, bound to `out`. `before_subcommand` is set to the
// number of unrecognised arguments seen before the subcommand's name.
std::unique_ptr<CLI::App> MakeApp(CommandLine* out, size_t* before_subcommand) {
  auto app = std::make_unique<CLI::App>(kDescription, "redlock");
  app->formatter(std::make_shared<HelpFormatter>());
  app->footer(kFooter);
  // Unknown options and stray arguments are ours to report, in one line.
  app->allow_extras();
  app->require_subcommand(0, 1);
  app->option_defaults()->group("Options")->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);

  // Every option is the main app's, so that it may come before or after the
  // subcommand; which subcommands take it is checked after parsing.
  AddString(*app, "masters", "URIS",
            "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) "
            "or unix:///path/to/redis.sock[?db=N],... Default: "
            "$REDLOCK_MASTERS.",
            &out->masters)
      ->envname("REDLOCK_MASTERS");
  AddString(*app, "password-file", "FILE",
            "Password for every master URI without one (the file's content "
            "without trailing newlines). Default: $REDLOCK_PASSWORD. Keeps "
            "the password out of argv (visible in ps).",
            &out->password_file);
  AddString(*app, "user", "NAME",
            "ACL user for every master URI without credentials, with the "
            "password of --password-file. Default: $REDLOCK_USER.",
            &out->user)
      ->envname("REDLOCK_USER");
  AddBool(*app, "", "tls",
          "TLS to every redis:// master too, as if written rediss://. "
          "Default: $REDLOCK_TLS.",
          &out->tls)
      ->envname("REDLOCK_TLS");
  AddString(*app, "cacert", "FILE",
            "TLS: PEM file of the CAs a master's certificate must chain to. "
            "Default: $REDLOCK_TLS_CACERT, else the system's store.",
            &out->cacert)
      ->envname("REDLOCK_TLS_CACERT");
  AddString(*app, "cacertdir", "DIR",
            "TLS: directory of trusted CA certificates (c_rehash layout). "
            "Default: $REDLOCK_TLS_CACERTDIR.",
            &out->cacertdir)
      ->envname("REDLOCK_TLS_CACERTDIR");
  AddString(*app, "cert", "FILE",
            "TLS: client certificate (PEM), for masters that ask for one. "
            "Default: $REDLOCK_TLS_CERT.",
            &out->cert)
      ->envname("REDLOCK_TLS_CERT");
  AddString(*app, "key", "FILE",
            "TLS: the client certificate's private key (PEM). Default: "
            "$REDLOCK_TLS_KEY.",
            &out->key)
      ->envname("REDLOCK_TLS_KEY");
  AddString(*app, "sni", "NAME",
            "TLS: the name sent as SNI and checked against every master's "
            "certificate. Default: $REDLOCK_TLS_SNI, else each master's "
            "host as written.",
            &out->sni)
      ->envname("REDLOCK_TLS_SNI");
  AddBool(*app, "", "insecure",
          "TLS: do not verify the masters' certificates (anyone on the path "
          "can then read and change the traffic). Default: "
          "$REDLOCK_TLS_INSECURE.",
          &out->insecure)
      ->envname("REDLOCK_TLS_INSECURE");
  AddDuration(*app, "request-timeout",
              "How long each master may take to answer. Default 50ms.",
              &out->request_timeout);
  AddDuration(*app, "max-ttl",
              "The longest TTL any client of these masters uses: --ttl may "
              "not exceed it, and the restart guard keeps a master that "
              "restarted without its data (or, without AOF appendfsync "
              "always, with part of it) out for this long. Must be the same "
              "for every client of a deployment. Default 1h.",
              &out->max_ttl);
  AddBool(*app, "", "accept-non-durable",
          "The masters may lose acknowledged writes in a crash (no AOF with "
          "appendfsync always), and that is accepted: no warning about it. "
          "A restarted master still casts no grant for --max-ttl. Default: "
          "$REDLOCK_ACCEPT_NON_DURABLE.",
          &out->accept_non_durable)
      ->envname("REDLOCK_ACCEPT_NON_DURABLE");
  AddString(*app, "key-prefix", "P",
            "Prefix of every Redis key. Default \"redlock:\".",
            &out->key_prefix);
  AddValue<Quorum>(
      *app, "quorum", "Q", "majority (N/2+1) or unanimous. Default majority.",
      &out->quorum,
      CLI::Validator(
          [](std::string& value) {
            const absl::StatusOr<Quorum> quorum = ParseQuorum(value);
            return quorum.ok() ? std::string()
                               : std::string(quorum.status().message());
          },
          ""),
      [](const std::string& value, Quorum* quorum) {
        *quorum = ParseQuorum(value).value_or(Quorum::kMajority);
      });
  AddDuration(*app, "ttl",
              "lock lifetime on the masters, at most 1h. Default 30s.",
              &out->ttl);
  AddDuration(*app, "wait",
              "keep retrying this long while the lock is held elsewhere "
              "(elect: while another candidate leads; reconfigure: sleep up "
              "to this long for the wait before finishing; --wait alone: as "
              "long as the wait takes). Default 0 (one attempt); elect: inf.",
              &out->wait);
  AddValue<int>(
      *app, "conflict-exit-code", "N",
      "exit code when the lock is held elsewhere (elect: another candidate "
      "led until --wait ran out), like flock -E. Default 75.",
      &out->conflict_exit_code,
      Expect("an integer",
             [](const std::string& value) {
               int n;
               return absl::SimpleAtoi(value, &n);
             }),
      [](const std::string& value, int* n) {
        (void)absl::SimpleAtoi(value, n);
      });
  AddBool(*app, "", "fencing", "also issue a fencing token.", &out->fencing);
  AddBool(*app, "", "hand-off",
          "while waiting, ask to be handed the lock by its release, in one "
          "round trip (default; not with --fencing, --shared, --limit or "
          "several resources). A waiter "
          "killed with SIGKILL just before a release may be handed the lock "
          "and hold it, unused, for its --ttl; --no-hand-off: try after "
          "each release instead.",
          &out->hand_off);
  AddBool(*app, "", "shared",
          "a reader of RESOURCE's read-write lock (like flock -s): readers "
          "share it, a plain run/acquire (the writer) excludes them all.",
          &out->shared);
  auto add_int = [&](absl::string_view name, absl::string_view help,
                     int* value) {
    AddValue<int>(
        *app, name, "N", help, value,
        Expect("an integer",
               [](const std::string& v) {
                 int n;
                 return absl::SimpleAtoi(v, &n);
               }),
        [](const std::string& v, int* n) { (void)absl::SimpleAtoi(v, n); });
  };
  add_int("limit",
          "RESOURCE is a counting semaphore of N permits (1..1024; like GNU "
          "parallel's sem): at most N holders at once across machines. "
          "Every client of RESOURCE must give the same N.",
          &out->limit);
  add_int("permits",
          "with --limit: take N permits at once (1..limit). Default 1.",
          &out->permits);
  AddDuration(*app, "grace",
              "after a lost lock (elect: leadership), SIGKILL this long after "
              "SIGTERM. Default 10s.",
              &out->grace);
  AddString(*app, "value", "V",
            "what others see of this candidate once it leads (any bytes, "
            "at most 4096). Default \"<hostname>:<pid>\".",
            &out->value);
  AddBool(*app, "", "listen",
          "print the current leader, then every new one (or new value), a "
          "line each, until SIGINT or SIGTERM.",
          &out->listen);
  AddBool(*app, "", "leader",
          "print the current leader once (exit 79 if there is none).",
          &out->leader);
  AddBool(*app, "", "election",
          "RESOURCE is an election's NAME: show its lease, epoch counter "
          "and the leader's record on every master.",
          &out->election);
  AddString(*app, "to", "URIS",
            "the masters the deployment should have, as --masters.", &out->to);
  AddBool(*app, "", "dry-run", "print the plan; write nothing.", &out->dry_run);
  AddBool(*app, "", "json", "JSON output.", &out->json);
  AddBool(*app, "", "prometheus",
          "Prometheus text format (gauges, every series labelled with the "
          "resource).",
          &out->prometheus);
  AddBool(*app, "q", "quiet", "No messages on stderr except errors.",
          &out->quiet);
  AddBool(*app, "v", "verbose", "Say what happens, with every master's vote.",
          &out->verbose);
  app->add_flag("-V,--version", out->version,
                "Print the version of redlock and of the libraries it runs "
                "on, and exit.");
  // Last in the list; --helpfull is what Abseil's tools answer to.
  app->set_help_flag("-h,--help,--helpfull", "This text.");

  // "run, acquire: keep retrying ..." for options only some subcommands take.
  for (CLI::Option* opt : app->get_options({})) {
    if (opt->get_lnames().empty()) continue;
    const std::vector<std::string> subs = AppliesTo(opt->get_lnames().front());
    if (!subs.empty()) {
      opt->description(absl::StrCat(absl::StrJoin(subs, ", "), ": ",
                                    opt->get_description()));
    }
  }

  for (const SubcommandSpec& spec : Specs()) {
    CLI::App* sub = app->add_subcommand(spec.name, spec.description);
    sub->set_help_flag();  // -h after the subcommand is the main -h.
    sub->fallthrough();    // Options after the subcommand are the main app's.
    std::string* slots[] = {&out->resource, &out->token};
    for (size_t i = 0; i < spec.positionals.size(); ++i) {
      if (spec.subcommand == Subcommand::kRun) {
        // run: one or more resources, all before "--".
        sub->add_option(spec.positionals[i], out->resources)->expected(1, 64);
      } else {
        sub->add_option(spec.positionals[i], *slots[i]);
      }
    }
    sub->preparse_callback([app = app.get(), before_subcommand](size_t) {
      *before_subcommand = app->remaining_size();
    });
  }
  CLI::App* help = app->add_subcommand("help", "This text.");
  help->group("");  // Listed in the usage only.
  help->set_help_flag();
  help->fallthrough();
  return app;
}

bool LooksLikeOption(absl::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-';
}

absl::Status Usage(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// "--ttl" for "--ttl=", else "".
std::string EmptyValueOption(absl::string_view arg) {
  if (!absl::StartsWith(arg, "--") || arg.find('=') != arg.size() - 1) {
    return "";
  }
  return std::string(arg.substr(0, arg.size() - 1));
}

// Whether `name` ("--ttl") is an option that takes a value.
bool TakesValue(const CLI::App& app, const std::string& name) {
  if (name.empty()) return false;
  const CLI::Option* opt = app.get_option_no_throw(name);
  return opt != nullptr && opt->get_type_size() != 0;
}

absl::Status UnknownOption(absl::string_view arg) {
  return Usage(absl::StrCat("unknown option ", arg.substr(0, arg.find('=')),
                            " (see redlock --help)"));
}

}  // namespace

std::string HelpText() {
  CommandLine unused;
  size_t before = 0;
  std::unique_ptr<CLI::App> app = MakeApp(&unused, &before);
  return app->help();
}

absl::StatusOr<CommandLine> ParseCommandLine(int argc,
                                             const char* const* argv) {
  CommandLine out;
  size_t before_subcommand = 0;
  std::unique_ptr<CLI::App> app = MakeApp(&out, &before_subcommand);

  // Everything after the first "--" is the command, untouched; CLI11 sees
  // only what comes before.
  std::vector<std::string> args;
  bool has_separator = false;
  // reconfigure's --wait may stand alone: as long as the wait takes.
  bool reconfigure = false;
  for (int i = 1; i < argc && absl::string_view(argv[i]) != "--"; ++i) {
    if (absl::string_view(argv[i]) == "reconfigure") reconfigure = true;
  }
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (has_separator) {
      out.command.emplace_back(arg);
    } else if (arg == "--") {
      has_separator = true;
    } else if (reconfigure && arg == "--wait" &&
               (i + 1 == argc || LooksLikeOption(argv[i + 1]))) {
      args.emplace_back("--wait=inf");
    } else if (TakesValue(*app, EmptyValueOption(arg))) {
      // "--ttl=" is an empty value (an unset variable in a script), as it
      // always was; CLI11 would take the next argument as the value.
      args.push_back(EmptyValueOption(arg));
      args.emplace_back();
    } else {
      args.emplace_back(arg);
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first.

  try {
    app->parse(args);
  } catch (const CLI::CallForHelp&) {
    out.help = true;
    return out;
  } catch (const CLI::ArgumentMismatch& e) {
    // "--ttl: 1 required D missing": the last argument had no value.
    const absl::string_view what = e.what();
    if (absl::StartsWith(what, "--") && absl::StrContains(what, ": ")) {
      return Usage(absl::StrCat("option ", what.substr(0, what.find(": ")),
                                " needs a value"));
    }
    return Usage(what);
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }
  if (app->got_subcommand("help")) {
    out.help = true;
    return out;
  }
  if (out.version) return out;  // Whatever else was given.

  const std::vector<std::string> extras = app->remaining();
  for (const std::string& extra : extras) {
    if (LooksLikeOption(extra)) return UnknownOption(extra);
  }
  const std::vector<CLI::App*> subs = app->get_subcommands();
  if (subs.empty() || before_subcommand > 0) {
    if (!extras.empty()) {
      return Usage(absl::StrCat("unknown subcommand \"",
                                absl::CHexEscape(extras.front()),
                                "\" (see redlock --help)"));
    }
    return Usage(
        "missing subcommand: run, acquire, extend, release, elect, status "
        "or reconfigure (see redlock --help)");
  }
  const CLI::App& sub = *subs.front();
  const SubcommandSpec& spec = *FindSpec(sub.get_name());
  out.subcommand = spec.subcommand;

  for (const CLI::Option* opt : app->parse_order()) {
    const std::string& name = opt->get_lnames().front();
    out.given.push_back(name);
    const std::vector<std::string> takers = AppliesTo(name);
    if (!takers.empty() &&
        std::find(takers.begin(), takers.end(), spec.name) == takers.end()) {
      return Usage(
          absl::StrCat("option --", name, " does not apply to ", spec.name));
    }
  }

  size_t given = 0;
  for (const CLI::Option* positional : sub.get_options(
           [](const CLI::Option* o) { return o->get_positional(); })) {
    if (positional->count() == 0) break;
    // CLI11 reads "-1" as a value; it was always an unknown option.
    for (const std::string& value : positional->results()) {
      if (LooksLikeOption(value)) return UnknownOption(value);
    }
    ++given;
  }
  if (spec.subcommand == Subcommand::kRun) {
    if (!out.resources.empty()) out.resource = out.resources.front();
  } else if (!out.resource.empty()) {
    out.resources = {out.resource};
  }
  if (given < spec.positionals.size()) {
    return Usage(absl::StrCat(spec.name, ": missing ",
                              absl::StrJoin(spec.positionals.begin() + given,
                                            spec.positionals.end(), " and ")));
  }
  if (!extras.empty()) {
    return Usage(absl::StrCat(spec.name, ": unexpected argument \"",
                              absl::CHexEscape(extras.front()), "\"",
                              spec.subcommand == Subcommand::kRun ||
                                      spec.subcommand == Subcommand::kElect
                                  ? " (put the command after --)"
                                  : ""));
  }
  if (spec.subcommand == Subcommand::kRun) {
    if (!has_separator) return Usage("run: missing -- COMMAND [ARGS...]");
    if (out.command.empty()) return Usage("run: missing COMMAND after --");
  } else if (spec.subcommand == Subcommand::kElect) {
    // The command is optional; "--" with nothing after it is a mistake.
    if (has_separator && out.command.empty()) {
      return Usage("elect: missing COMMAND after --");
    }
  } else if (has_separator) {
    return Usage(absl::StrCat(
        spec.name, " takes no command (only run and elect do, after --)"));
  }
  return out;
}

std::vector<std::string> SplitMasterList(absl::string_view list) {
  std::vector<std::string> uris;
  for (absl::string_view uri : absl::StrSplit(list, ',')) {
    uri = absl::StripAsciiWhitespace(uri);
    if (!uri.empty()) uris.emplace_back(uri);
  }
  return uris;
}

absl::StatusOr<std::vector<std::string>> ApplyPassword(
    const std::vector<std::string>& uris, absl::string_view password,
    absl::string_view user) {
  if (!user.empty() && password.empty()) {
    return absl::InvalidArgumentError(
        "--user needs a password: --password-file or REDLOCK_PASSWORD");
  }
  std::vector<std::string> result;
  for (const std::string& uri : uris) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return address.status();
    if (password.empty() || address->has_password) {
      result.push_back(uri);
      continue;
    }
    address->user = std::string(user);
    address->password = std::string(password);
    address->has_password = true;
    result.push_back(address->Uri());
  }
  return result;
}

absl::StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--password-file ", path, ": cannot read it: ", std::strerror(errno)));
  }
  std::stringstream contents;
  contents << file.rdbuf();
  std::string password = contents.str();
  while (!password.empty() &&
         (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--password-file ", path, ": the file is empty"));
  }
  return password;
}

}  // namespace redlock::cli
