// Copyright 2026 The redlock Authors.
//
// RedisServer: one real redis-server process owned by a test, on a free
// loopback port in its own temporary directory, with the faults that happen
// to masters in production: SIGKILL, SIGSTOP/SIGCONT, restart with and without
// persistence, graceful shutdown.
//
//   auto server = RedisServer::Start({});
//   ASSERT_TRUE(server.ok()) << server.status();
//   options.masters = {(*server)->Uri()};
//   ...
//   ASSERT_TRUE((*server)->Stop().ok());  // Frozen: requests time out.
//
// With Config::tls it serves TLS (certificates from TestCerts,
// tests/support/test_certs.h) and with Config::unixsocket a Unix socket in
// its directory; TlsUri() and UnixUri() name them for Options::masters.
//
// RedisCluster: N such servers, independent of each other, as Redlock wants
// its masters.
//
// A server is stopped and its directory removed when its RedisServer is
// destroyed. Should the test binary end any other way, they go too:
// std::atexit and SIGABRT/SIGSEGV/SIGTERM/SIGINT handlers SIGKILL every
// server the process started and remove the directories; each child runs
// with prctl(PR_SET_PDEATHSIG, SIGKILL) for when no handler runs (SIGKILL, a
// sanitizer's _exit()), and a small /bin/sh "janitor" child removes the
// directories once the test process is gone. Because PR_SET_PDEATHSIG follows
// the *thread* that forked, start servers from a thread that outlives them
// (the test's main thread).
//
// Only processes started here are ever signalled, always by PID.
//
// Not thread-safe: use one RedisServer from one thread at a time.

#ifndef REDLOCK_TESTS_SUPPORT_REDIS_SERVER_H_
#define REDLOCK_TESTS_SUPPORT_REDIS_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/support/redis_client.h"

namespace redlock::testing {

// A TCP port on 127.0.0.1 that nobody listens on right now (the kernel's
// pick). Another process may take it before the caller binds it; a server
// started on it must be ready to try another (RedisServer::Start() does).
// kInternal if no socket could be bound.
absl::StatusOr<int> PickFreePort();

class RedisServer {
 public:
  enum class Persistence {
    // --save "" --appendonly no: a restart loses every key.
    kNone,
    // --appendonly yes --appendfsync always --save "": every acknowledged
    // write survives a SIGKILL and restart.
    kAofAlways,
    // --appendonly no, RDB snapshots only when the test takes one (SAVE):
    // a crash and restart bring back the last snapshot, as Redis's default
    // `save` schedule does, without what came after it.
    kRdbSnapshots,
    // --appendonly yes --appendfsync everysec --save "": a crash (or power
    // cut) may lose the last second of acknowledged writes; a test cuts the
    // AOF's tail itself to model that (IncrementalAofPath()).
    kAofEverysec,
  };

  struct Config {
    // Default: kNone.
    Persistence persistence = Persistence::kNone;
    // If set, --requirepass; Uri() then carries the password. Default: unset.
    std::optional<std::string> requirepass;
    // Appended to the command line after everything else, so they win.
    // Default: none.
    std::vector<std::string> extra_args;
    // NAME=VALUE entries added to the server's environment (replacing
    // inherited ones of the same name), e.g. SkewedClock::ServerEnv().
    // Default: none.
    std::vector<std::string> env;
    // 0: a free loopback port, picked anew (up to 5 times) if another
    // process takes it before redis-server binds it. Default: 0.
    int port = 0;
    // How long Start() and Restart() wait for the server to answer.
    // Default: 5s.
    absl::Duration start_timeout = absl::Seconds(5);

    // TLS (redis-server's --tls-port and --tls-* options), e.g. with the
    // files of a TestCerts (tests/support/test_certs.h), which must outlive
    // the server: a restart reads them again.
    struct Tls {
      // Serve TLS on tls_port(). Default: false.
      bool enabled = false;
      // Also serve plain TCP on port(); false gives --port 0, and then the
      // fixture talks to the server (readiness, Client()) over its Unix
      // socket, which is enabled for that. Default: false.
      bool plain_port_too = false;
      // 0: a free loopback port, picked like `port`. Default: 0.
      int port = 0;
      // --tls-cert-file, --tls-key-file, --tls-ca-cert-file (the CA client
      // certificates must chain to; redis-server requires one).
      std::string cert_file;
      std::string key_file;
      std::string ca_file;
      // --tls-auth-clients: whether a client must present a certificate.
      enum class ClientAuth { kNo, kYes, kOptional };
      // Default: kNo (redis-server's own default is yes).
      ClientAuth client_auth = ClientAuth::kNo;
    };
    Tls tls;

    // Also listen on a Unix domain socket, <dir>/redis.sock, mode 700
    // (--unixsocket, --unixsocketperm). Implied by TLS without a plain
    // port. Default: false.
    bool unixsocket = false;
  };

  // Creates a temporary directory (under $TMPDIR or /tmp), starts
  // redis-server (from PATH, else /usr/bin) there on 127.0.0.1 and waits until
  // it answers PING, has finished loading and reports our child's PID. Errors
  // (each with the tail of the server's log when there is one):
  //   kNotFound          no redis-server binary.
  //   kDeadlineExceeded  no answer within start_timeout (the child is killed).
  //   kUnavailable       the server exited during start-up, e.g. its port
  //                      was taken; or no free port after 5 tries.
  //   kInternal          mkdtemp, fork, exec or similar failed.
  // Nothing is left behind on error.
  static absl::StatusOr<std::unique_ptr<RedisServer>> Start(Config config);

  // SIGCONT if stopped, then SIGKILL and reap; removes the directory.
  ~RedisServer();

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // The PID of the current process, or of the last one after Kill() or
  // Shutdown().
  pid_t pid() const { return pid_; }
  // The plain TCP port; 0 for a TLS server without plain_port_too.
  int port() const { return port_; }
  // The TLS port; 0 without TLS.
  int tls_port() const { return tls_port_; }
  // The Unix socket's path; empty if it has none.
  std::string unix_socket_path() const;
  // The temporary directory: redis.log, redis.stdout, the AOF.
  const std::string& dir() const { return dir_; }
  const Config& config() const { return config_; }
  // "redis://127.0.0.1:PORT", or "redis://:PASSWORD@127.0.0.1:PORT" with
  // requirepass (the password percent-encoded). A TLS server without a
  // plain port: TlsUri().
  std::string Uri() const;
  // "127.0.0.1:PORT", as MasterAddress::Name() spells it, for Uri().
  std::string Address() const;
  // "rediss://127.0.0.1:TLS_PORT" (with the password as in Uri()); empty
  // without TLS.
  std::string TlsUri() const;
  // "127.0.0.1:TLS_PORT"; empty without TLS.
  std::string TlsAddress() const;
  // "unix:///path/redis.sock" (with the password as in Uri()); empty
  // without a Unix socket.
  std::string UnixUri() const;
  // "unix:/path/redis.sock", as MasterAddress::Name() spells it; empty
  // without a Unix socket.
  std::string UnixAddress() const;

  // True from a successful Start() or Restart() until Kill(), Shutdown() or
  // an unexpected exit is seen. A stopped (SIGSTOP) server is running.
  bool running() const { return running_; }
  bool stopped() const { return stopped_; }

  // SIGKILL and reap. kFailedPrecondition if not running.
  absl::Status Kill();
  // SIGSTOP, and waits until the process is stopped: from then on it
  // accepts connections (the kernel does) but answers nothing.
  // kFailedPrecondition if not running or already stopped.
  absl::Status Stop();
  // SIGCONT, and waits until the process runs again. kFailedPrecondition if
  // not stopped.
  absl::Status Continue();
  // Kills the process if running (a crash, not a shutdown), then starts it
  // again on the same port, directory and config and waits as Start() does.
  // With kNone every key is gone; with kAofAlways every acknowledged write is
  // back. Errors as Start().
  absl::Status Restart();
  // SIGTERM (a graceful shutdown: redis fsyncs the AOF) and waits up to 10s,
  // then SIGKILL. kDeadlineExceeded if it had to be killed;
  // kFailedPrecondition if not running.
  absl::Status Shutdown();

  // The AOF file that takes new writes (Redis 7's multi-part AOF: the
  // *.incr.aof named in the manifest under appendonlydir/), or kNotFound.
  absl::StatusOr<std::string> IncrementalAofPath() const;

  // The last `lines` lines of redis.log and of the process's stdout/stderr.
  std::string LogTail(int lines = 20) const;

  // A blocking client to this server (with the password, if any): over the
  // plain port, else over the Unix socket (a TLS-only server).
  absl::StatusOr<std::unique_ptr<RedisClient>> Client(
      absl::Duration timeout = absl::Seconds(2)) const;

  // REDLOCK_TEST_MASTERS (comma-separated redis:// URIs) asks the suites to
  // use those masters instead of starting their own.
  static bool UsingExternalMasters();
  // The URIs in REDLOCK_TEST_MASTERS, trimmed; empty if unset.
  static std::vector<std::string> ExternalMasters();

 private:
  RedisServer(Config config, std::string binary, std::string dir);

  // Forks and execs redis-server on `port` (plain; 0 for none) and
  // `tls_port` (0 for none) and waits until it is ready. On error no child
  // is left. Sets `*port_taken` if a port was in use.
  absl::Status Launch(int port, int tls_port, bool* port_taken);
  // Whether the fixture talks to the server over its Unix socket.
  bool ControlOverUnixSocket() const;
  bool HasUnixSocket() const;
  // ":PASSWORD@" (percent-encoded) with requirepass, else "".
  std::string Credentials() const;
  // A client for readiness checks and Client().
  absl::StatusOr<std::unique_ptr<RedisClient>> ControlClient(
      absl::Duration timeout) const;
  absl::Status WaitUntilReady(bool* port_taken);
  // Reaps the child if it has exited; true if it had.
  bool ReapIfExited();
  // SIGKILL (after SIGCONT if stopped) and reap. Requires running_.
  void KillAndReap();
  // Unregisters and reaps the child, which must have exited or be exiting.
  void Reap();

  const Config config_;
  const std::string binary_;
  const std::string dir_;
  int port_ = 0;
  int tls_port_ = 0;
  pid_t pid_ = -1;
  bool running_ = false;
  bool stopped_ = false;
};

// N independent redis-server processes (no replication between them): the
// masters of a Redlock deployment. Not thread-safe.
class RedisCluster {
 public:
  // Starts `n` servers with `config`; if config.port is not 0, server i uses
  // config.port + i. Errors as RedisServer::Start(), kInvalidArgument for
  // n < 1. On error the servers already started are stopped.
  static absl::StatusOr<std::unique_ptr<RedisCluster>> Start(
      int n, RedisServer::Config config = {});

  int size() const { return static_cast<int>(servers_.size()); }
  // 0 <= i < size().
  RedisServer& server(int i) { return *servers_.at(i); }
  const RedisServer& server(int i) const { return *servers_.at(i); }
  // Every server's Uri(), in order: ready for Options::masters.
  std::vector<std::string> Uris() const;
  // A blocking client to server i.
  absl::StatusOr<std::unique_ptr<RedisClient>> Client(
      int i, absl::Duration timeout = absl::Seconds(2)) const;

 private:
  explicit RedisCluster(std::vector<std::unique_ptr<RedisServer>> servers)
      : servers_(std::move(servers)) {}

  std::vector<std::unique_ptr<RedisServer>> servers_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_REDIS_SERVER_H_
