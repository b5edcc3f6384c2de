// Copyright 2026 The redlock Authors.

#include "bench/e2e/postgres_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/e2e/common.h"
#include "tests/support/after_fork.h"
#include "tests/support/redis_server.h"

namespace redlock::bench {
namespace {

// A process we started and have not reaped, and how it ended.
struct Finished {
  int status = -1;  // Exit status; -1 if killed, timed out or not started.
  double cpu_s = 0;
};

void SleepMs(int ms) {
  const timespec t{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

// Runs `argv` in `cwd` with stdout and stderr appended to `log` and stdin
// from /dev/null, to its end or until `timeout` (then SIGKILLed, by PID).
Finished RunToEnd(const std::vector<std::string>& argv, const std::string& cwd,
                  const std::string& log, absl::Duration timeout) {
  // Everything the child needs is built before fork(): after it, in a
  // process with threads, only async-signal-safe calls.
  std::vector<char*> cargv;
  for (const std::string& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const int out =
      open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  Finished f;
  if (out < 0 || in < 0) {
    if (out >= 0) close(out);
    if (in >= 0) close(in);
    return f;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    testing::BelongToParentAfterFork(parent);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    dup2(in, STDIN_FILENO);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(out);
  close(in);
  if (pid < 0) return f;
  const SteadyTime deadline = Now() + absl::ToChronoNanoseconds(timeout);
  int status = 0;
  rusage ru{};
  for (;;) {
    const pid_t r = wait4(pid, &status, WNOHANG, &ru);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return f;
    if (Now() >= deadline) {
      kill(pid, SIGKILL);
      while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
      }
      return f;
    }
    SleepMs(5);
  }
  f.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return f;
}

bool IsExecutable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value after `label` on the first line of `text` that starts with
// it (after leading spaces), up to the next space.
bool FieldAfter(absl::string_view text, absl::string_view label,
                double* value) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, label)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    return absl::SimpleAtod(line.substr(0, line.find(' ')), value);
  }
  return false;
}

}  // namespace

absl::StatusOr<PostgresBinaries> FindPostgresBinaries() {
  // Debian's layout first, newest major version first.
  std::vector<std::pair<int, std::string>> versions;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    int version = 0;
    if (absl::SimpleAtoi(entry.path().filename().string(), &version)) {
      versions.push_back({version, entry.path().string() + "/bin"});
    }
  }
  std::sort(versions.rbegin(), versions.rend());
  for (const auto& [version, bin] : versions) {
    PostgresBinaries b{bin + "/initdb", bin + "/pg_ctl", bin + "/postgres",
                       bin + "/pgbench"};
    if (IsExecutable(b.initdb) && IsExecutable(b.pg_ctl) &&
        IsExecutable(b.postgres) && IsExecutable(b.pgbench)) {
      return b;
    }
  }
  PostgresBinaries b{FindOnPath("initdb"), FindOnPath("pg_ctl"),
                     FindOnPath("postgres"), FindOnPath("pgbench")};
  std::vector<std::string> missing;
  if (b.initdb.empty()) missing.push_back("initdb");
  if (b.pg_ctl.empty()) missing.push_back("pg_ctl");
  if (b.postgres.empty()) missing.push_back("postgres");
  if (b.pgbench.empty()) missing.push_back("pgbench");
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no ", absl::StrJoin(missing, ", "),
        " in /usr/lib/postgresql/*/bin or on PATH (Debian: postgresql-15)"));
  }
  return b;
}

int PostgresServer::RunAsServerUser(std::vector<std::string> argv,
                                    const std::string& log,
                                    absl::Duration timeout) const {
  if (!run_as_.empty()) {
    std::string runuser = FindOnPath("runuser");
    for (const char* fallback : {"/usr/sbin/runuser", "/sbin/runuser"}) {
      if (runuser.empty() && IsExecutable(fallback)) runuser = fallback;
    }
    if (runuser.empty()) return -1;
    argv.insert(argv.begin(), {runuser, "-u", run_as_, "--"});
  }
  return RunToEnd(argv, dir_, log, timeout).status;
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    const PostgresBinaries& bin, const std::string& dir) {
  std::unique_ptr<PostgresServer> server(new PostgresServer(bin, dir));
  if (geteuid() == 0) {
    // initdb and postgres refuse root; Debian's package creates "postgres".
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) pw = getpwnam("nobody");
    if (pw == nullptr) {
      return absl::UnavailableError(
          "running as root, and there is no user postgres or nobody to run "
          "PostgreSQL as");
    }
    server->run_as_ = pw->pw_name;
    if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::UnavailableError(
          absl::StrCat("chown ", dir, " to ", server->run_as_, " failed"));
    }
  }
  const std::string log = absl::StrCat(dir, "/setup.log");
  const std::string data = absl::StrCat(dir, "/data");
  if (server->RunAsServerUser(
          {bin.initdb, "-D", data, "-U", "bench", "--auth=trust", "--no-sync",
           "-E", "UTF8", "--locale=C"},
          log, absl::Seconds(120)) != 0) {
    return absl::UnavailableError(
        absl::StrCat("initdb failed (see ", log, ")"));
  }
  absl::StatusOr<int> port = testing::PickFreePort();
  if (!port.ok()) return port.status();
  server->port_ = *port;
  server->started_ = true;  // From here on the destructor stops it.
  const std::string options = absl::StrCat(
      "-p ", server->port_, " -k ", dir,
      " -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200");
  if (server->RunAsServerUser(
          {bin.pg_ctl, "start", "-w", "-t", "60", "-D", data, "-l",
           absl::StrCat(dir, "/server.log"), "-o", options},
          log, absl::Seconds(75)) != 0) {
    return absl::UnavailableError(absl::StrCat("pg_ctl start failed (see ", log,
                                               " and ", dir, "/server.log)"));
  }
  return server;
}

PostgresServer::~PostgresServer() { Stop(); }

void PostgresServer::Stop() {
  if (!started_) return;
  started_ = false;
  const std::string data = absl::StrCat(dir_, "/data");
  const std::string pid_file = absl::StrCat(data, "/postmaster.pid");
  // The postmaster's PID, read before pg_ctl removes the file.
  int pid = 0;
  {
    const std::string text = ReadFile(pid_file);
    if (!absl::SimpleAtoi(text.substr(0, text.find('\n')), &pid)) pid = 0;
  }
  if (pid <= 0) return;  // Never came up (or already gone).
  // Its exit status does not matter: whether the postmaster is gone does.
  RunAsServerUser(
      {bin_.pg_ctl, "stop", "-w", "-t", "20", "-m", "fast", "-D", data},
      absl::StrCat(dir_, "/setup.log"), absl::Seconds(30));
  // Only our postmaster: the PID from our data directory, and still a
  // "postgres" process (a PID reused by anything else is left alone).
  for (int i = 0; i < 100; ++i) {
    const std::string comm = std::string(absl::StripTrailingAsciiWhitespace(
        ReadFile(absl::StrCat("/proc/", pid, "/comm"))));
    if (comm != "postgres") return;
    if (i == 40) kill(pid, SIGKILL);  // pg_ctl stop did not stop it in 2 s.
    SleepMs(50);
  }
}

absl::StatusOr<PgbenchResult> PostgresServer::RunPgbench(
    int clients, absl::Duration block, absl::Duration hold) const {
  const std::string script =
      absl::StrCat(dir_, "/advisory-", clients, "-",
                   absl::ToInt64Microseconds(hold), ".sql");
  {
    std::ofstream out(script);
    out << "SELECT pg_advisory_lock(1);\n";
    if (hold > absl::ZeroDuration()) {
      out << "\\sleep " << absl::ToInt64Microseconds(hold) << " us\n";
    }
    out << "SELECT pg_advisory_unlock(1);\n";
    if (!out)
      return absl::UnavailableError(absl::StrCat("cannot write ", script));
  }
  const int64_t seconds = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(block))));
  const std::string log =
      absl::StrCat(dir_, "/pgbench-", clients, "-",
                   Now().time_since_epoch().count(), ".log");
  const Finished f = RunToEnd(
      {bin_.pgbench, "-h", "127.0.0.1", "-p", absl::StrCat(port_), "-U",
       "bench", "-n", "-c", absl::StrCat(clients), "-j", absl::StrCat(clients),
       "-T", absl::StrCat(seconds), "-f", script, "postgres"},
      dir_, log, absl::Seconds(seconds + 60));
  const std::string text = ReadFile(log);
  PgbenchResult r;
  double transactions = 0;
  if (f.status != 0 ||
      !FieldAfter(
          text, "number of transactions actually processed:", &transactions) ||
      !FieldAfter(text, "tps =", &r.tps)) {
    std::string tail =
        text.size() > 400 ? text.substr(text.size() - 400) : text;
    return absl::UnavailableError(
        absl::StrCat("pgbench exited with ", f.status, ": ", tail));
  }
  r.transactions = static_cast<int64_t>(transactions);
  FieldAfter(text, "latency average =", &r.latency_ms);
  r.cpu_s = f.cpu_s;
  return r;
}

}  // namespace redlock::bench
