// Copyright 2026 The redlock Authors.

#include "tests/support/redis_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tests/support/after_fork.h"

namespace redlock::testing {
namespace {

constexpr char kLoopback[] = "127.0.0.1";
constexpr int kPortAttempts = 5;
constexpr absl::Duration kShutdownTimeout = absl::Seconds(10);
constexpr absl::Duration kReadyPollInterval = absl::Milliseconds(10);
constexpr absl::Duration kReadyProbeTimeout = absl::Milliseconds(250);

std::string ErrnoText(absl::string_view what, int err) {
  return absl::StrCat(what, ": ", std::strerror(err));
}

// ---------------------------------------------------------------------------
// Emergency clean-up. The PIDs of live children and the temporary directories
// are kept where a signal handler can read them: fixed tables of atomics and
// plain char arrays, no locks, no allocation.

constexpr int kMaxChildren = 1024;
std::atomic<pid_t> g_children[kMaxChildren];  // 0: a free slot.

constexpr int kMaxDirs = 1024;
constexpr size_t kMaxDirLength = 256;
struct DirSlot {
  enum : int { kFree = 0, kBusy = 1, kUsed = 2 };
  std::atomic<int> state;
  char path[kMaxDirLength];
};
DirSlot g_dirs[kMaxDirs];

// The process that installed the handlers. A fork of it (a gtest death test)
// inherits the tables and the handlers, and must not kill its parent's
// servers.
std::atomic<pid_t> g_owner{0};
constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGTERM, SIGINT};
struct sigaction g_previous_actions[NSIG];

// The janitor: a /bin/sh child that removes our directories once this
// process is gone, however it went. SIGKILL (a harness timeout) and _exit()
// (a sanitizer halting on error) run none of our handlers; PR_SET_PDEATHSIG
// takes the servers down, and the janitor their directories. It reads one
// directory per line from a socket and, at EOF (every copy of our end is
// closed: we have exited), removes them. In its own session and ignoring the
// usual signals, so the Ctrl-C or group kill that ends us does not end it.
constexpr char kJanitorScript[] =
    "trap '' HUP INT QUIT TERM; "
    "while IFS= read -r dir; do set -- \"$@\" \"$dir\"; done; "
    "[ $# -eq 0 ] && exit 0; "
    "for try in 1 2 3 4 5; do "
    "rm -rf -- \"$@\" 2>/dev/null && exit 0; sleep 0.1; done";
std::atomic<int> g_janitor_fd{-1};

void StartJanitor() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  std::string script = kJanitorScript;
  char shell[] = "/bin/sh";
  char dash_c[] = "-c";
  char name[] = "redlock-test-janitor";
  char* argv[] = {shell, dash_c, script.data(), name, nullptr};
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    dup2(fds[1], STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(shell, argv);
    _exit(127);
  }
  close(fds[1]);
  close(null_fd);
  if (pid < 0) {
    close(fds[0]);
    return;
  }
  g_janitor_fd.store(fds[0]);
}

void TellJanitor(const std::string& dir) {
  const int fd = g_janitor_fd.load();
  if (fd < 0 || dir.find('\n') != std::string::npos) return;
  const std::string line = dir + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n =
        send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // The janitor is gone; our handlers remain.
    sent += static_cast<size_t>(n);
  }
}

void RegisterChild(pid_t pid) {
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
  // Table full: this child still dies with its RedisServer or by
  // PR_SET_PDEATHSIG.
}

void UnregisterChild(pid_t pid) {
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void RegisterDir(const std::string& dir) {
  TellJanitor(dir);
  if (dir.size() >= kMaxDirLength) return;  // Not for the signal handler.
  for (DirSlot& slot : g_dirs) {
    int expected = DirSlot::kFree;
    if (slot.state.compare_exchange_strong(expected, DirSlot::kBusy)) {
      std::memcpy(slot.path, dir.c_str(), dir.size() + 1);
      slot.state.store(DirSlot::kUsed);
      return;
    }
  }
}

void UnregisterDir(const std::string& dir) {
  for (DirSlot& slot : g_dirs) {
    int expected = DirSlot::kUsed;
    if (slot.state.load() == DirSlot::kUsed && dir == slot.path &&
        slot.state.compare_exchange_strong(expected, DirSlot::kBusy)) {
      slot.path[0] = '\0';
      slot.state.store(DirSlot::kFree);
      return;
    }
  }
}

// rm -rf `name` (relative to the directory `parent`, or absolute with
// AT_FDCWD) with system calls only, so that a signal handler may use it.
void RemoveTree(int parent, const char* name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
  if (depth > 8) return;
  const int fd =
      openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  // Deleting while reading may make getdents skip entries: read again from
  // the start until a pass finds nothing to delete.
  for (int pass = 0; pass < 16; ++pass) {
    lseek(fd, 0, SEEK_SET);
    bool removed_any = false;
    alignas(struct dirent64) char buffer[4096];
    ssize_t n;
    while ((n = getdents64(fd, buffer, sizeof(buffer))) > 0) {
      for (ssize_t offset = 0; offset < n;) {
        const auto* entry =
            reinterpret_cast<const struct dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        if (std::strcmp(entry->d_name, ".") == 0 ||
            std::strcmp(entry->d_name, "..") == 0) {
          continue;
        }
        RemoveTree(fd, entry->d_name, depth + 1);
        removed_any = true;
      }
    }
    if (!removed_any) break;
  }
  close(fd);
  unlinkat(parent, name, AT_REMOVEDIR);
}

// Async-signal-safe. SIGKILLs every child and waits until it is dead (so it
// writes no more files) without reaping it: as a zombie its PID cannot be
// reused, so a RedisServer destroyed later still signals and reaps only its
// own child. Then removes every directory.
void KillChildrenAndRemoveDirs() {
  if (getpid() != g_owner.load()) return;
  for (std::atomic<pid_t>& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) kill(pid, SIGKILL);
  }
  for (std::atomic<pid_t>& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid <= 0) continue;
    siginfo_t info;
    while (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) == -1 &&
           errno == EINTR) {
    }
  }
  for (DirSlot& slot : g_dirs) {
    if (slot.state.load() == DirSlot::kUsed) RemoveTree(AT_FDCWD, slot.path, 0);
  }
}

void OnFatalSignal(int sig) {
  const int saved_errno = errno;
  KillChildrenAndRemoveDirs();
  // Re-raise with whatever was installed before us (normally the default
  // action); the signal is blocked in this handler, so it is delivered when
  // the handler returns.
  sigaction(sig, &g_previous_actions[sig], nullptr);
  raise(sig);
  errno = saved_errno;
}

void OnExit() { KillChildrenAndRemoveDirs(); }

void InstallEmergencyHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_owner.store(getpid());
    StartJanitor();
    std::atexit(OnExit);
    for (int sig : kFatalSignals) {
      struct sigaction previous;
      if (sigaction(sig, nullptr, &previous) != 0) continue;
      // A signal the test binary ignores (SIGINT in a background job) stays
      // ignored.
      if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) {
        continue;
      }
      g_previous_actions[sig] = previous;
      struct sigaction action = {};
      action.sa_handler = OnFatalSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_ONSTACK;
      sigaction(sig, &action, nullptr);
    }
  });
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::string> FindRedisServer() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/redis-server");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  if (access("/usr/bin/redis-server", X_OK) == 0) {
    return std::string("/usr/bin/redis-server");
  }
  return absl::NotFoundError(
      "redis-server not found on PATH or in /usr/bin; install the Debian "
      "package redis-server");
}

absl::StatusOr<std::string> MakeTempDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/redlock-redis-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        ErrnoText(absl::StrCat("mkdtemp ", pattern), errno));
  }
  return pattern;
}

// The value of `field` in an INFO reply, or "".
std::string InfoField(absl::string_view info, absl::string_view field) {
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, field) && absl::ConsumePrefix(&line, ":")) {
      return std::string(line);
    }
  }
  return "";
}

std::string PercentEncode(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(
          &out, "%",
          absl::AsciiStrToUpper(absl::StrCat(absl::Hex(c, absl::kZeroPad2))));
    }
  }
  return out;
}

// The last `lines` lines of a file, or "" if it is missing or empty.
std::string FileTail(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) return "";
  std::string content((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  std::vector<absl::string_view> all =
      absl::StrSplit(content, '\n', absl::SkipEmpty());
  const size_t keep = std::min(all.size(), static_cast<size_t>(lines));
  return absl::StrJoin(all.end() - keep, all.end(), "\n");
}

// waitid(2) on one child, retried on EINTR.
int WaitId(pid_t pid, int options, siginfo_t* info) {
  *info = {};
  int rc;
  do {
    rc = waitid(P_PID, pid, info, options);
  } while (rc == -1 && errno == EINTR);
  return rc;
}

using SteadyClock = std::chrono::steady_clock;

SteadyClock::time_point SteadyDeadline(absl::Duration timeout) {
  return SteadyClock::now() + absl::ToChronoNanoseconds(timeout);
}

}  // namespace

absl::StatusOr<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(ErrnoText("socket", errno));
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(ErrnoText("bind 127.0.0.1:0", err));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(Config config) {
  if (config.port < 0 || config.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", config.port, " out of range"));
  }
  if (config.tls.enabled) {
    if (config.tls.port < 0 || config.tls.port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("TLS port ", config.tls.port, " out of range"));
    }
    if (config.tls.cert_file.empty() || config.tls.key_file.empty() ||
        config.tls.ca_file.empty()) {
      return absl::InvalidArgumentError(
          "TLS needs cert_file, key_file and ca_file (see TestCerts)");
    }
  }
  absl::StatusOr<std::string> binary = FindRedisServer();
  if (!binary.ok()) return binary.status();
  absl::StatusOr<std::string> dir = MakeTempDir();
  if (!dir.ok()) return dir.status();
  InstallEmergencyHandlersOnce();
  RegisterDir(*dir);
  // From here the destructor removes the directory on every error path.
  std::unique_ptr<RedisServer> server(
      new RedisServer(std::move(config), *std::move(binary), *std::move(dir)));
  if (server->HasUnixSocket() &&
      server->unix_socket_path().size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Unix socket path too long for sockaddr_un: ",
                     server->unix_socket_path(), " (set a shorter TMPDIR)"));
  }

  const Config& c = server->config_;
  const bool plain = !c.tls.enabled || c.tls.plain_port_too;
  const bool pick_plain = plain && c.port == 0;
  const bool pick_tls = c.tls.enabled && c.tls.port == 0;
  absl::Status status;
  for (int attempt = 0; attempt < (pick_plain || pick_tls ? kPortAttempts : 1);
       ++attempt) {
    int port = plain ? c.port : 0;
    int tls_port = c.tls.enabled ? c.tls.port : 0;
    if (pick_plain) {
      absl::StatusOr<int> picked = PickFreePort();
      if (!picked.ok()) return picked.status();
      port = *picked;
    }
    if (pick_tls) {
      absl::StatusOr<int> picked = PickFreePort();
      if (picked.ok() && *picked == port) picked = PickFreePort();
      if (!picked.ok()) return picked.status();
      tls_port = *picked;
    }
    if (port != 0 && port == tls_port) {
      return absl::InvalidArgumentError(
          absl::StrCat("plain and TLS port are both ", port));
    }
    bool port_taken = false;
    status = server->Launch(port, tls_port, &port_taken);
    if (status.ok()) return server;
    if (!port_taken) break;
  }
  return status;
}

RedisServer::RedisServer(Config config, std::string binary, std::string dir)
    : config_(std::move(config)),
      binary_(std::move(binary)),
      dir_(std::move(dir)) {}

RedisServer::~RedisServer() {
  if (running_) KillAndReap();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  UnregisterDir(dir_);
}

std::string RedisServer::Uri() const {
  if (port_ == 0 && tls_port_ != 0) return TlsUri();
  return absl::StrCat("redis://", Credentials(), Address());
}

std::string RedisServer::Address() const {
  if (port_ == 0 && tls_port_ != 0) return TlsAddress();
  return absl::StrCat(kLoopback, ":", port_);
}

std::string RedisServer::TlsUri() const {
  if (tls_port_ == 0) return "";
  return absl::StrCat("rediss://", Credentials(), TlsAddress());
}

std::string RedisServer::TlsAddress() const {
  if (tls_port_ == 0) return "";
  return absl::StrCat(kLoopback, ":", tls_port_);
}

std::string RedisServer::UnixUri() const {
  if (!HasUnixSocket()) return "";
  return absl::StrCat("unix://", Credentials(), unix_socket_path());
}

std::string RedisServer::UnixAddress() const {
  if (!HasUnixSocket()) return "";
  return absl::StrCat("unix:", unix_socket_path());
}

std::string RedisServer::unix_socket_path() const {
  if (!HasUnixSocket()) return "";
  return absl::StrCat(dir_, "/redis.sock");
}

bool RedisServer::HasUnixSocket() const {
  return config_.unixsocket || ControlOverUnixSocket();
}

bool RedisServer::ControlOverUnixSocket() const {
  return config_.tls.enabled && !config_.tls.plain_port_too;
}

std::string RedisServer::Credentials() const {
  if (!config_.requirepass.has_value()) return "";
  return absl::StrCat(":", PercentEncode(*config_.requirepass), "@");
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisServer::ControlClient(
    absl::Duration timeout) const {
  if (ControlOverUnixSocket()) {
    return RedisClient::ConnectUnix(unix_socket_path(), timeout,
                                    config_.requirepass.value_or(""));
  }
  return RedisClient::Connect(kLoopback, port_, timeout,
                              config_.requirepass.value_or(""));
}

absl::Status RedisServer::Launch(int port, int tls_port, bool* port_taken) {
  *port_taken = false;
  port_ = port;
  tls_port_ = tls_port;

  // Everything the child needs is prepared before fork(): between fork() and
  // exec() only async-signal-safe calls are allowed.
  std::vector<std::string> args = {binary_,
                                   "--port",
                                   absl::StrCat(port),
                                   "--bind",
                                   kLoopback,
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--enable-debug-command",
                                   "local",
                                   "--logfile",
                                   absl::StrCat(dir_, "/redis.log"),
                                   "--protected-mode",
                                   "no"};
  switch (config_.persistence) {
    case Persistence::kNone:
      args.insert(args.end(), {"--save", "", "--appendonly", "no"});
      break;
    case Persistence::kAofAlways:
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always",
                               "--save", ""});
      break;
    case Persistence::kRdbSnapshots:
      args.insert(args.end(), {"--save", "", "--appendonly", "no",
                               "--dbfilename", "dump.rdb"});
      break;
    case Persistence::kAofEverysec:
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync",
                               "everysec", "--save", ""});
      break;
  }
  if (config_.requirepass.has_value()) {
    args.insert(args.end(), {"--requirepass", *config_.requirepass});
  }
  if (config_.tls.enabled) {
    const char* auth = "no";
    switch (config_.tls.client_auth) {
      case Config::Tls::ClientAuth::kNo:
        auth = "no";
        break;
      case Config::Tls::ClientAuth::kYes:
        auth = "yes";
        break;
      case Config::Tls::ClientAuth::kOptional:
        auth = "optional";
        break;
    }
    args.insert(args.end(),
                {"--tls-port", absl::StrCat(tls_port), "--tls-cert-file",
                 config_.tls.cert_file, "--tls-key-file", config_.tls.key_file,
                 "--tls-ca-cert-file", config_.tls.ca_file,
                 "--tls-auth-clients", auth});
  }
  if (HasUnixSocket()) {
    args.insert(args.end(), {"--unixsocket", unix_socket_path(),
                             "--unixsocketperm", "700"});
  }
  args.insert(args.end(), config_.extra_args.begin(), config_.extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // The environment: ours, with config_.env added over it.
  std::vector<std::string> env_entries = config_.env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(
        config_.env.begin(), config_.env.end(), [name](const std::string& x) {
          return absl::StartsWith(x, absl::StrCat(name, "="));
        });
    if (!replaced) env_entries.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& entry : env_entries) envp.push_back(entry.data());
  envp.push_back(nullptr);

  const std::string stdout_path = absl::StrCat(dir_, "/redis.stdout");
  const int out_fd = open(stdout_path.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0) {
    return absl::InternalError(
        ErrnoText(absl::StrCat("open ", stdout_path), errno));
  }
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    const int err = errno;
    close(out_fd);
    return absl::InternalError(ErrnoText("open /dev/null", err));
  }
  // The child reports a failed exec() through this pipe; a successful exec()
  // closes it (O_CLOEXEC), so the parent reads EOF.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(out_fd);
    close(null_fd);
    return absl::InternalError(ErrnoText("pipe2", err));
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Child.
    BelongToParentAfterFork(parent);
    dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof(err));
    _exit(127);
  }
  const int fork_errno = errno;
  close(exec_pipe[1]);
  close(out_fd);
  close(null_fd);
  if (pid < 0) {
    close(exec_pipe[0]);
    return absl::InternalError(ErrnoText("fork", fork_errno));
  }
  RegisterChild(pid);
  pid_ = pid;
  running_ = true;
  stopped_ = false;

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n == -1 && errno == EINTR);
  close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    Reap();
    return absl::InternalError(
        ErrnoText(absl::StrCat("exec ", binary_), exec_errno));
  }
  return WaitUntilReady(port_taken);
}

absl::Status RedisServer::WaitUntilReady(bool* port_taken) {
  const auto deadline = SteadyDeadline(config_.start_timeout);
  const std::string our_pid = absl::StrCat(pid_);
  std::string last_problem = "no answer yet";
  while (true) {
    if (ReapIfExited()) {
      const std::string tail = LogTail();
      *port_taken = absl::StrContains(tail, "Address already in use");
      return absl::UnavailableError(absl::StrCat(
          "redis-server on port ", port_, " exited during start-up\n", tail));
    }
    absl::StatusOr<std::unique_ptr<RedisClient>> client =
        ControlClient(kReadyProbeTimeout);
    if (client.ok()) {
      absl::StatusOr<Reply> info = (*client)->Command({"INFO"});
      if (info.ok() && info->type == Reply::Type::kString) {
        const std::string their_pid = InfoField(info->str, "process_id");
        if (their_pid != our_pid) {
          // Another process's server answers on "our" port; ours cannot bind.
          *port_taken = true;
          KillAndReap();
          return absl::UnavailableError(absl::StrCat(
              "port ", port_, " is taken by another redis-server (pid ",
              their_pid, ")"));
        }
        if (InfoField(info->str, "loading") == "0") return absl::OkStatus();
        last_problem = "still loading its data";
      } else {
        last_problem =
            info.ok() ? info->DebugString() : info.status().ToString();
      }
    } else {
      last_problem = client.status().ToString();
    }
    if (SteadyClock::now() >= deadline) {
      KillAndReap();
      return absl::DeadlineExceededError(
          absl::StrCat("redis-server on port ", port_, " was not ready within ",
                       absl::FormatDuration(config_.start_timeout), " (",
                       last_problem, ")\n", LogTail()));
    }
    absl::SleepFor(kReadyPollInterval);
  }
}

bool RedisServer::ReapIfExited() {
  siginfo_t info;
  if (WaitId(pid_, WEXITED | WNOHANG | WNOWAIT, &info) != 0) return false;
  if (info.si_pid != pid_) return false;  // Still running.
  Reap();
  return true;
}

void RedisServer::KillAndReap() {
  if (stopped_) kill(pid_, SIGCONT);
  kill(pid_, SIGKILL);
  Reap();
}

void RedisServer::Reap() {
  // Unregister before reaping: once reaped, the PID may belong to someone
  // else, and the signal handler must never kill it.
  UnregisterChild(pid_);
  int status;
  while (waitpid(pid_, &status, 0) == -1 && errno == EINTR) {
  }
  running_ = false;
  stopped_ = false;
}

absl::Status RedisServer::Kill() {
  if (!running_) return absl::FailedPreconditionError("not running");
  KillAndReap();
  return absl::OkStatus();
}

absl::Status RedisServer::Stop() {
  if (!running_) return absl::FailedPreconditionError("not running");
  if (stopped_) return absl::FailedPreconditionError("already stopped");
  if (kill(pid_, SIGSTOP) != 0) {
    return absl::InternalError(ErrnoText("kill SIGSTOP", errno));
  }
  // kill() returns before the process has stopped; wait until it has.
  siginfo_t info;
  if (WaitId(pid_, WSTOPPED | WEXITED | WNOWAIT, &info) != 0) {
    return absl::InternalError(ErrnoText("waitid", errno));
  }
  if (info.si_code != CLD_STOPPED) {
    Reap();
    return absl::UnavailableError("redis-server exited instead of stopping");
  }
  WaitId(pid_, WSTOPPED, &info);  // Consume the notification.
  stopped_ = true;
  return absl::OkStatus();
}

absl::Status RedisServer::Continue() {
  if (!running_ || !stopped_) {
    return absl::FailedPreconditionError("not stopped");
  }
  if (kill(pid_, SIGCONT) != 0) {
    return absl::InternalError(ErrnoText("kill SIGCONT", errno));
  }
  siginfo_t info;
  if (WaitId(pid_, WCONTINUED | WEXITED | WNOWAIT, &info) != 0) {
    return absl::InternalError(ErrnoText("waitid", errno));
  }
  if (info.si_code != CLD_CONTINUED) {
    Reap();
    return absl::UnavailableError("redis-server exited instead of continuing");
  }
  WaitId(pid_, WCONTINUED, &info);  // Consume the notification.
  stopped_ = false;
  return absl::OkStatus();
}

absl::Status RedisServer::Restart() {
  if (running_) KillAndReap();
  bool port_taken = false;
  return Launch(port_, tls_port_, &port_taken);
}

absl::Status RedisServer::Shutdown() {
  if (!running_) return absl::FailedPreconditionError("not running");
  if (stopped_) {
    kill(pid_, SIGCONT);  // A stopped process would not act on SIGTERM.
    stopped_ = false;
  }
  kill(pid_, SIGTERM);
  const auto deadline = SteadyDeadline(kShutdownTimeout);
  while (!ReapIfExited()) {
    if (SteadyClock::now() >= deadline) {
      KillAndReap();
      return absl::DeadlineExceededError(absl::StrCat(
          "redis-server did not exit within ",
          absl::FormatDuration(kShutdownTimeout), " of SIGTERM; killed it"));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RedisServer::IncrementalAofPath() const {
  const std::filesystem::path dir =
      std::filesystem::path(dir_) / "appendonlydir";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, ".incr.aof")) return entry.path().string();
  }
  return absl::NotFoundError(
      absl::StrCat("no *.incr.aof under ", dir.string(),
                   error ? absl::StrCat(": ", error.message()) : ""));
}

std::string RedisServer::LogTail(int lines) const {
  std::string out;
  const std::string log = FileTail(absl::StrCat(dir_, "/redis.log"), lines);
  if (!log.empty()) absl::StrAppend(&out, "redis.log:\n", log, "\n");
  const std::string output =
      FileTail(absl::StrCat(dir_, "/redis.stdout"), lines);
  if (!output.empty()) absl::StrAppend(&out, "stdout/stderr:\n", output, "\n");
  if (out.empty()) out = "(redis-server wrote no log)\n";
  return out;
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisServer::Client(
    absl::Duration timeout) const {
  return ControlClient(timeout);
}

bool RedisServer::UsingExternalMasters() { return !ExternalMasters().empty(); }

std::vector<std::string> RedisServer::ExternalMasters() {
  std::vector<std::string> uris;
  const char* env = std::getenv("REDLOCK_TEST_MASTERS");
  if (env == nullptr) return uris;
  for (absl::string_view uri : absl::StrSplit(env, ',')) {
    uri = absl::StripAsciiWhitespace(uri);
    if (!uri.empty()) uris.emplace_back(uri);
  }
  return uris;
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<RedisCluster>> RedisCluster::Start(
    int n, RedisServer::Config config) {
  if (n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a cluster needs at least one server, not ", n));
  }
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (int i = 0; i < n; ++i) {
    RedisServer::Config server_config = config;
    if (config.port != 0) server_config.port = config.port + i;
    absl::StatusOr<std::unique_ptr<RedisServer>> server =
        RedisServer::Start(std::move(server_config));
    if (!server.ok()) {
      return absl::Status(server.status().code(),
                          absl::StrCat("server ", i + 1, " of ", n, ": ",
                                       server.status().message()));
    }
    servers.push_back(*std::move(server));
  }
  return std::unique_ptr<RedisCluster>(new RedisCluster(std::move(servers)));
}

std::vector<std::string> RedisCluster::Uris() const {
  std::vector<std::string> uris;
  uris.reserve(servers_.size());
  for (const auto& server : servers_) uris.push_back(server->Uri());
  return uris;
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisCluster::Client(
    int i, absl::Duration timeout) const {
  return server(i).Client(timeout);
}

}  // namespace redlock::testing
