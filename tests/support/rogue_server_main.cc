// Copyright 2026 The redlock Authors.
//
// redlock-rogue-server: a RogueServer (rogue_server.h) as a process, for
// scripts/hostile-soak.sh. Fronts the redis-server on 127.0.0.1:UPSTREAM and,
// on lock connections, sends an endless bulk string once a connection has
// been idle MS milliseconds after it was accepted. Prints its port on stdout,
// then runs until SIGINT or SIGTERM.
//
//   redlock-rogue-server UPSTREAM_PORT [ENDLESS_AFTER_MS [BYTES_PER_SECOND]]

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "tests/support/rogue_server.h"

int main(int argc, char** argv) {
  int upstream = 0;
  int after_ms = 300;
  int64_t rate = 8 << 20;
  if (argc < 2 || !absl::SimpleAtoi(argv[1], &upstream) ||
      (argc > 2 && !absl::SimpleAtoi(argv[2], &after_ms)) ||
      (argc > 3 && !absl::SimpleAtoi(argv[3], &rate))) {
    std::fprintf(stderr,
                 "usage: %s UPSTREAM_PORT [ENDLESS_AFTER_MS "
                 "[BYTES_PER_SECOND]]\n",
                 argv[0]);
    return 64;
  }
  // Block the signals before any thread starts, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto rogue =
      redlock::testing::RogueServer::Start({.upstream_port = upstream});
  if (!rogue.ok()) {
    std::fprintf(stderr, "%s\n", rogue.status().ToString().c_str());
    return 69;
  }
  redlock::testing::RogueServer::Behaviour behaviour;
  behaviour.role = redlock::testing::RogueServer::Role::kLock;
  behaviour.endless_bulk_after = absl::Milliseconds(after_ms);
  behaviour.endless_bulk_rate = rate;
  (*rogue)->SetBehaviour(behaviour);
  std::printf("%d\n", (*rogue)->port());
  std::fflush(stdout);

  int signo = 0;
  sigwait(&stop, &signo);
  const auto c = (*rogue)->counters();
  std::fprintf(stderr,
               "rogue: %lld connections accepted, %lld MiB of endless bulk "
               "sent\n",
               static_cast<long long>(c.accepted),
               static_cast<long long>(c.endless_bytes >> 20));
  return 0;
}
