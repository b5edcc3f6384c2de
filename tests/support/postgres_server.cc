// Copyright 2026 The redlock Authors.

#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/support/after_fork.h"
#include "tests/support/redis_server.h"
#include "tests/support/text_files.h"

namespace redlock::testing {
namespace {

void SleepMs(int ms) {
  const timespec t{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

// Runs `argv` in `cwd` with stdout and stderr appended to `log` and stdin
// from /dev/null, to its end or until `timeout` (then SIGKILLed, by PID).
ClientRun RunToEnd(const std::vector<std::string>& argv, const std::string& cwd,
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
  ClientRun run;
  if (out < 0 || in < 0) {
    if (out >= 0) close(out);
    if (in >= 0) close(in);
    return run;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    BelongToParentAfterFork(parent);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    dup2(in, STDIN_FILENO);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(out);
  close(in);
  if (pid < 0) return run;
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  int status = 0;
  rusage ru{};
  for (;;) {
    const pid_t r = wait4(pid, &status, WNOHANG, &ru);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return run;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
      }
      return run;
    }
    SleepMs(5);
  }
  run.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
              ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

bool IsExecutable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// `dir`/`name` if executable (with a non-empty `dir`), else, if `or_on_path`
// or `dir` is empty, the first `name` on PATH; else "".
std::string FindTool(const std::string& dir, absl::string_view name,
                     bool or_on_path) {
  std::vector<std::string> dirs;
  if (!dir.empty()) dirs.push_back(dir);
  if (or_on_path || dir.empty()) {
    const char* path = std::getenv("PATH");
    for (absl::string_view d :
         absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty())) {
      dirs.emplace_back(d);
    }
  }
  for (const std::string& d : dirs) {
    std::string candidate = absl::StrCat(d, "/", name);
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

absl::StatusOr<std::string> MakeTempDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/redlock-postgres-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, " failed"));
  }
  return pattern;
}

}  // namespace

absl::StatusOr<PostgresBinaries> FindPostgresBinaries() {
  // Debian's layout first, newest major version first; "" is PATH alone.
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
  versions.push_back({0, ""});
  for (const auto& [version, bin] : versions) {
    // The server's programs from one place, the clients from there or PATH.
    PostgresBinaries b{
        FindTool(bin, "initdb", false), FindTool(bin, "pg_ctl", false),
        FindTool(bin, "postgres", false), FindTool(bin, "psql", true),
        FindTool(bin, "pgbench", true)};
    std::vector<std::string> missing;
    if (b.initdb.empty()) missing.push_back("initdb");
    if (b.pg_ctl.empty()) missing.push_back("pg_ctl");
    if (b.postgres.empty()) missing.push_back("postgres");
    if (missing.empty()) return b;
    if (bin.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "no ", absl::StrJoin(missing, ", "),
          " in /usr/lib/postgresql/*/bin or on PATH (Debian: postgresql-15)"));
    }
  }
  return absl::NotFoundError("unreachable");
}

int PostgresServer::RunAsServerUser(std::vector<std::string> argv,
                                    const std::string& log,
                                    absl::Duration timeout) const {
  if (!run_as_.empty()) {
    std::string runuser = FindTool("", "runuser", true);
    for (const char* sbin : {"/usr/sbin", "/sbin"}) {
      if (runuser.empty()) runuser = FindTool(sbin, "runuser", false);
    }
    if (runuser.empty()) return -1;
    argv.insert(argv.begin(), {runuser, "-u", run_as_, "--"});
  }
  return RunToEnd(argv, dir_, log, timeout).status;
}

ClientRun PostgresServer::RunClient(const std::vector<std::string>& argv,
                                    const std::string& log,
                                    absl::Duration timeout) const {
  return RunToEnd(argv, dir_, log, timeout);
}

std::string PostgresServer::ConnInfo(absl::string_view dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_,
                      " user=", config_.superuser, " dbname=", dbname);
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    const PostgresBinaries& bin, Config config) {
  std::string dir = config.dir;
  const bool own_dir = dir.empty();
  if (own_dir) {
    absl::StatusOr<std::string> made = MakeTempDir();
    if (!made.ok()) return made.status();
    dir = *std::move(made);
  } else if (!std::filesystem::is_directory(dir)) {
    return absl::NotFoundError(absl::StrCat("no directory ", dir));
  }
  // From here on the destructor cleans up whatever was made.
  std::unique_ptr<PostgresServer> server(
      new PostgresServer(bin, std::move(config), dir, own_dir));
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
          {bin.initdb, "-D", data, "-U", server->superuser(), "--auth=trust",
           "--no-sync", "-E", "UTF8", "--locale=C"},
          log, absl::Seconds(120)) != 0) {
    return absl::UnavailableError(
        absl::StrCat("initdb failed (see ", log, ")"));
  }
  absl::StatusOr<int> port = PickFreePort();
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

PostgresServer::~PostgresServer() {
  Stop();
  if (own_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

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

}  // namespace redlock::testing
