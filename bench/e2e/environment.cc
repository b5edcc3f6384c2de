// Copyright 2026 The redlock Authors.

#include "bench/e2e/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/base/config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/sync_client.h"

namespace redlock::bench {
namespace {

std::string CommandOutputLine(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof(buf), p) != nullptr) out = buf;
    pclose(p);
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

}  // namespace

Environment CollectEnvironment(const std::vector<Master>& masters, bool own,
                               const std::string& redis_benchmark) {
  Environment env;
  env.date_utc = absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(),
                                  absl::UTCTimeZone());
  env.redis_version = InfoField(masters[0].address, "redis_version");
  env.redis_benchmark_version =
      CommandOutputLine(absl::StrCat(redis_benchmark, " --version 2>&1"));
#ifdef ABSL_LTS_RELEASE_VERSION
  env.abseil_version = absl::StrCat(ABSL_LTS_RELEASE_VERSION);
#endif
#if defined(__clang__)
  env.compiler = absl::StrCat("clang ", __clang_version__);
#elif defined(__GNUC__)
  env.compiler = absl::StrCat("gcc ", __VERSION__);
#endif
#ifdef __OPTIMIZE__
  env.optimized = true;
#endif
  utsname u{};
  if (uname(&u) == 0) {
    env.kernel = absl::StrCat(u.sysname, " ", u.release, " ", u.machine);
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (absl::StartsWith(line, "model name")) {
      env.cpu_model = std::string(
          absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
      break;
    }
  }
  env.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  env.own_masters = own;
  env.masters = static_cast<int>(masters.size());
  return env;
}

}  // namespace redlock::bench
