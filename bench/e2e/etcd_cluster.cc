// Copyright 2026 The redlock Authors.

#include "bench/e2e/etcd_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/redis_server.h"

namespace redlock::bench {
namespace {

// Starts `argv` with stdout and stderr to `log`; -1 if fork failed.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> cargv;
  for (const std::string& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(126);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const int in = open("/dev/null", O_RDONLY);
  if (out >= 0) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
  }
  if (in >= 0) dup2(in, STDIN_FILENO);
  execv(cargv[0], cargv.data());
  _exit(127);
}

// Runs `argv` to the end, its output to `log`; its exit status, or -1.
int RunToEnd(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = Spawn(argv, log);
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool Exited(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(
    const std::string& etcd, const std::string& etcdctl, const std::string& dir,
    int members) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  std::vector<int> client_ports, peer_ports;
  std::vector<std::string> initial, clients;
  for (int i = 0; i < members; ++i) {
    const absl::StatusOr<int> client = testing::PickFreePort();
    const absl::StatusOr<int> peer = testing::PickFreePort();
    if (!client.ok() || !peer.ok() || *client == *peer) {
      return absl::UnavailableError("no free loopback port for etcd");
    }
    client_ports.push_back(*client);
    peer_ports.push_back(*peer);
    initial.push_back(absl::StrCat("m", i, "=http://127.0.0.1:", *peer));
    clients.push_back(absl::StrCat("http://127.0.0.1:", *client));
  }
  cluster->endpoints_ = absl::StrJoin(clients, ",");
  const std::string log = absl::StrCat(dir, "/etcd.log");
  for (int i = 0; i < members; ++i) {
    const std::string peer = absl::StrCat("http://127.0.0.1:", peer_ports[i]);
    const pid_t pid =
        Spawn({etcd, absl::StrCat("--name=m", i),
               absl::StrCat("--data-dir=", dir, "/etcd-m", i),
               absl::StrCat("--listen-client-urls=", clients[i]),
               absl::StrCat("--advertise-client-urls=", clients[i]),
               absl::StrCat("--listen-peer-urls=", peer),
               absl::StrCat("--initial-advertise-peer-urls=", peer),
               absl::StrCat("--initial-cluster=", absl::StrJoin(initial, ",")),
               "--initial-cluster-state=new",
               absl::StrCat("--initial-cluster-token=redlock-bench-", getpid()),
               "--log-level=error"},
              log);
    if (pid < 0) return absl::UnavailableError("fork of etcd failed");
    cluster->pids_.push_back(pid);
  }
  for (int attempt = 0; attempt < 60; ++attempt) {
    for (pid_t pid : cluster->pids_) {
      if (Exited(pid)) {
        return absl::UnavailableError(
            absl::StrCat("an etcd member exited at start (see ", log, ")"));
      }
    }
    if (RunToEnd({etcdctl, absl::StrCat("--endpoints=", cluster->endpoints_),
                  "--dial-timeout=1s", "endpoint", "health"},
                 absl::StrCat(dir, "/etcd-health.log")) == 0) {
      return cluster;
    }
    const timespec half{0, 500000000};
    nanosleep(&half, nullptr);
  }
  return absl::UnavailableError(absl::StrCat(
      "the etcd cluster was not healthy within 30 s (see ", log, ")"));
}

EtcdCluster::~EtcdCluster() { Stop(); }

void EtcdCluster::Stop() {
  for (pid_t pid : pids_) kill(pid, SIGTERM);
  for (pid_t pid : pids_) {
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = Exited(pid);
      if (!gone) {
        const timespec tick{0, 50000000};
        nanosleep(&tick, nullptr);
      }
    }
    if (!gone) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  pids_.clear();
}

}  // namespace redlock::bench
