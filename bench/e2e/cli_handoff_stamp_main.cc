// Copyright 2026 The redlock Authors.
//
// redlock-e2e-stamp LOG S|E ID: appends "S|E ID NANOSECONDS\n" to LOG, the
// time read on CLOCK_MONOTONIC, in one write(2) with O_APPEND. The
// cli_handoff phase's critical sections run it first and last
// (bench/e2e/phases/cli_handoff.cc). libc only, so that its own start-up
// adds as little as a program can to the hand-offs it measures.

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (argc != 4) {
    std::fputs("usage: redlock-e2e-stamp LOG S|E ID\n", stderr);
    return 2;
  }
  char line[256];
  const int n = std::snprintf(
      line, sizeof(line), "%s %s %lld\n", argv[2], argv[3],
      static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
  if (n <= 0 || n >= static_cast<int>(sizeof(line))) return 2;
  const int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  const bool written = write(fd, line, static_cast<size_t>(n)) == n;
  close(fd);
  return written ? 0 : 1;
}
