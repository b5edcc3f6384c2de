// Copyright 2026 The redlock Authors.
//
// PostgresServer: a throw-away PostgreSQL server on 127.0.0.1, for tests
// that check fencing where the data lives (examples/postgres) and for the
// benchmark's advisory-lock floor (bench/e2e/postgres_server.h, which adds
// pgbench). Debian's postgresql-15 ships initdb, pg_ctl and postgres in
// /usr/lib/postgresql/15/bin (not on PATH); they are looked up there first
// (newest version first), then on PATH.
//
//   absl::StatusOr<PostgresBinaries> bin = FindPostgresBinaries();
//   if (!bin.ok()) GTEST_SKIP() << bin.status();
//   auto server = PostgresServer::Start(*bin);
//   ASSERT_TRUE(server.ok()) << server.status();
//   PGconn* db = PQconnectdb((*server)->ConnInfo().c_str());
//
// initdb refuses to run as root: as root, initdb, pg_ctl and the server run
// as the user "postgres" (the Debian package creates it) or, without one,
// "nobody", through runuser(1), and the directory is handed to that user.
// The server runs with fsync=off (tests and the floor measure no disk),
// listens on 127.0.0.1 and on a socket in its directory only, with trust
// authentication, and is stopped with `pg_ctl stop -m fast` by the
// destructor; if that does not stop it, the postmaster named by the data
// directory's postmaster.pid is SIGKILLed (only if that PID is a "postgres"
// process). pg_ctl detaches the postmaster, so a test binary that is
// SIGKILLed leaves it running: one server in a temporary directory, on a
// free port, which nothing else will use.
//
// Every command runs with a deadline and is SIGKILLed past it. Not
// thread-safe.

#ifndef REDLOCK_TESTS_SUPPORT_POSTGRES_SERVER_H_
#define REDLOCK_TESTS_SUPPORT_POSTGRES_SERVER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace redlock::testing {

struct PostgresBinaries {
  std::string initdb;
  std::string pg_ctl;
  std::string postgres;
  // Client programs, from the same directory as the server's when there,
  // else from PATH; "" if missing (psql: Debian's postgresql-client-15).
  std::string psql;
  std::string pgbench;
};

// kNotFound, naming what is missing, unless initdb, pg_ctl and postgres are
// found (in one /usr/lib/postgresql/VERSION/bin, or else each on PATH).
absl::StatusOr<PostgresBinaries> FindPostgresBinaries();

// How a client program run by PostgresServer::RunClient() ended.
struct ClientRun {
  int status = -1;   // Exit status; -1 if killed, timed out or not started.
  double cpu_s = 0;  // Its own CPU time, user + system (wait4).
};

class PostgresServer {
 public:
  struct Config {
    // The superuser initdb creates; every connection may use it without a
    // password (trust). Default: "postgres".
    std::string superuser = "postgres";
    // Where the server lives: an existing, empty directory of the caller's,
    // left in place by the destructor. "": a new temporary directory (under
    // $TMPDIR or /tmp), removed by the destructor. Default: "".
    std::string dir;
  };

  // initdb into dir()/data, then `pg_ctl start` on a free loopback port,
  // waiting (pg_ctl -w, at most 60 s) until it accepts connections. As
  // root, the directory is chown'ed to the user the server runs as.
  //   kNotFound     config.dir does not exist.
  //   kUnavailable  a step failed (the reason and the log's path); a
  //                 server that did start is stopped again.
  //   kInternal     no temporary directory or free port.
  // Nothing it made is left behind on error.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      const PostgresBinaries& bin, Config config);
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      const PostgresBinaries& bin) {
    return Start(bin, Config());
  }

  // Stops the server (see the file comment) and removes a directory of its
  // own making.
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  const std::string& superuser() const { return config_.superuser; }
  // "host=127.0.0.1 port=PORT user=SUPERUSER dbname=DBNAME": a libpq
  // connection string (PQconnectdb, `psql -d`).
  std::string ConnInfo(absl::string_view dbname = "postgres") const;

  // Runs a client program (psql, pgbench) as the calling user, in dir(),
  // with stdin from /dev/null and stdout and stderr appended to `log`;
  // SIGKILLed (by PID) past `timeout`.
  ClientRun RunClient(const std::vector<std::string>& argv,
                      const std::string& log, absl::Duration timeout) const;

 private:
  PostgresServer(PostgresBinaries bin, Config config, std::string dir,
                 bool own_dir)
      : bin_(std::move(bin)),
        config_(std::move(config)),
        dir_(std::move(dir)),
        own_dir_(own_dir) {}

  void Stop();

  // `argv` as the server's user (through runuser as root), with cwd `dir_`
  // and output appended to `log`; its exit status, or -1 if it could not be
  // started, was killed or ran past `timeout`.
  int RunAsServerUser(std::vector<std::string> argv, const std::string& log,
                      absl::Duration timeout) const;

  const PostgresBinaries bin_;
  const Config config_;
  const std::string dir_;
  const bool own_dir_;  // dir_ is a temporary directory of ours.
  std::string run_as_;  // The user through runuser; "" when not root.
  int port_ = 0;
  bool started_ = false;  // pg_ctl start was run: Stop() has work to do.
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_POSTGRES_SERVER_H_
