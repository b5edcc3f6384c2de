// Copyright 2026 The redlock Authors.

#include "bench/e2e/common.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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

std::string SelfDirectory() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  std::string p(path, static_cast<size_t>(n));
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? name : "";
  }
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
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
