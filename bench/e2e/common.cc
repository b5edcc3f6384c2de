// Copyright 2026 The redlock Authors.

#include "bench/e2e/common.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace redlock::bench {

void Log(const std::string& line) {
  std::fprintf(stderr, "[e2e] %s\n", line.c_str());
  std::fflush(stderr);
}

Cpu CpuNow(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
          ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
          static_cast<double>(ru.ru_nvcsw + ru.ru_nivcsw)};
}

int64_t ProcStatusKb(absl::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, absl::StrCat(field, ":"))) {
      int64_t kb = -1;
      std::vector<absl::string_view> parts =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb;
    }
  }
  return -1;
}

}  // namespace redlock::bench
